//! `ccv3 convert IN OUT [--to v3|v2|lorebook_v3|worldinfo] [--image PNG]`.

use crate::args::{OutFormat, Target};
use crate::error::{CliError, CmdResult};
use crate::load::load_deferred;
use crate::output::write_atomic_mode;
use ccv3::{CardFile, CardVersion, Container, Document, Lorebook};
use std::io::Write;
use std::path::Path;

/// Output containers, from the output file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutKind {
    /// `.json`
    Json,
    /// `.png` / `.apng`
    Png,
    /// `.charx`
    Charx,
}

/// The container an output path asks for.
pub fn out_kind(path: &Path) -> Result<OutKind, CliError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("json") => Ok(OutKind::Json),
        Some("png") | Some("apng") => Ok(OutKind::Png),
        Some("charx") => Ok(OutKind::Charx),
        _ => Err(CliError::file(
            crate::stdio::out_name(path),
            "unknown output extension: use .json, .png or .charx",
        )),
    }
}

/// The container of an output file: `--format` when given (it must agree with the file's
/// extension), else the extension; `-` (standard output) needs `--format`.
pub fn out_kind_for(path: &Path, format: Option<OutFormat>) -> Result<OutKind, CliError> {
    let given = format.map(|f| match f {
        OutFormat::Png => OutKind::Png,
        OutFormat::Charx => OutKind::Charx,
        OutFormat::Json => OutKind::Json,
    });
    if crate::stdio::is_dash(path) {
        return given.ok_or_else(|| {
            CliError::file(
                Path::new(crate::stdio::STDOUT),
                "standard output has no extension: give --format png, charx or json",
            )
        });
    }
    let ext = out_kind(path)?;
    match given {
        Some(kind) if kind != ext => Err(CliError::file(
            path,
            format!("the extension says {ext:?} but --format says {kind:?}: give one that agrees"),
        )),
        _ => Ok(ext),
    }
}

/// Converts `input` (`-`: standard input) to `output` (`-`: standard output) as `kind`.
pub fn run(
    input: &Path,
    output: &Path,
    kind: OutKind,
    to: Option<Target>,
    image: Option<&Path>,
) -> CmdResult {
    let (doc, mut deferred) = load_deferred(input, "IN")?;
    let picture = read_picture(image)?;
    convert_doc(
        input,
        doc,
        Some(&mut deferred),
        kind,
        output,
        to,
        picture,
        true,
    )?;
    Ok(0)
}

/// Reads `--image` (a PNG, within the input size limit; `-`: standard input).
pub fn read_picture(image: Option<&Path>) -> Result<Option<Vec<u8>>, CliError> {
    match image {
        Some(p) => {
            let bytes = crate::stdio::read_input(
                p,
                "--image",
                crate::load::max_input(),
                crate::load::RAISE_HINT,
            )?;
            if !ccv3::png::is_png(&bytes) {
                return Err(CliError::file(p, "--image must be a PNG file"));
            }
            Ok(Some(bytes))
        }
        None => Ok(None),
    }
}

/// Writes `doc` (read from `input`) to `output` as `kind` and `to`; an existing `output` is
/// replaced only when `replace` is set. `deferred` holds the input's embedded files when they
/// were left in the input ([`ccv3::read_file_deferred`]).
#[allow(clippy::too_many_arguments)]
pub fn convert_doc(
    input: &Path,
    doc: Document,
    deferred: Option<&mut ccv3::DeferredFiles>,
    kind: OutKind,
    output: &Path,
    to: Option<Target>,
    picture: Option<Vec<u8>>,
    replace: bool,
) -> Result<(), CliError> {
    let bytes = match doc {
        Document::Card(cf) => match to {
            None | Some(Target::V3) => {
                let v = CardVersion::V3;
                return write_card_mode(cf, deferred, kind, v, picture, output, replace);
            }
            Some(Target::V2) => {
                let v = CardVersion::V2;
                return write_card_mode(cf, deferred, kind, v, picture, output, replace);
            }
            Some(t @ (Target::LorebookV3 | Target::Worldinfo)) => {
                let book = cf.card.data.character_book.as_ref().ok_or_else(|| {
                    CliError::file(input, "the card has no character_book to convert")
                })?;
                write_book(book, t, kind, output)?
            }
        },
        Document::Lorebook(bf) => match to {
            None | Some(Target::LorebookV3) => {
                write_book(&bf.book, Target::LorebookV3, kind, output)?
            }
            Some(Target::Worldinfo) => write_book(&bf.book, Target::Worldinfo, kind, output)?,
            Some(Target::V3 | Target::V2) => {
                return Err(CliError::file(
                    input,
                    "is a lorebook, not a card: use --to lorebook_v3 or --to worldinfo",
                ))
            }
        },
    };
    write_output(output, replace, |f| f.write_all(&bytes))
        .map_err(|e| CliError::file(crate::stdio::out_name(output), e))
}

/// Writes one output file through `fill`: atomically into `output` ([`write_atomic_mode`]), or
/// for `-` into an unnamed temporary file first and then to standard output, so a failure never
/// sends half a card down a pipe.
pub fn write_output<E: From<std::io::Error>>(
    output: &Path,
    replace: bool,
    fill: impl FnOnce(&mut std::fs::File) -> Result<(), E>,
) -> Result<(), E> {
    if !crate::stdio::is_dash(output) {
        return write_atomic_mode(output, replace, fill);
    }
    use std::io::Seek;
    let mut tmp = tempfile::tempfile()?;
    fill(&mut tmp)?;
    tmp.rewind()?;
    let mut out = std::io::stdout().lock();
    std::io::copy(&mut tmp, &mut out)?;
    out.flush()?;
    Ok(())
}

/// Encodes a card for the output container, streamed into `output` (written atomically). The
/// card is consumed: its assets move into the output instead of being held twice, or, when
/// `deferred` holds them, are read from the input one at a time as they are written (issue 12).
/// What the output cannot carry is printed on stderr once it is written
/// ([`ccv3::conversion_notes`]).
pub fn write_card(
    cf: CardFile,
    deferred: Option<&mut ccv3::DeferredFiles>,
    kind: OutKind,
    version: CardVersion,
    picture: Option<Vec<u8>>,
    output: &Path,
) -> Result<(), CliError> {
    write_card_mode(cf, deferred, kind, version, picture, output, true)
}

/// [`write_card`]; an existing `output` is replaced only when `replace` is set.
pub fn write_card_mode(
    cf: CardFile,
    deferred: Option<&mut ccv3::DeferredFiles>,
    kind: OutKind,
    version: CardVersion,
    picture: Option<Vec<u8>>,
    output: &Path,
    replace: bool,
) -> Result<(), CliError> {
    let to = match kind {
        OutKind::Json => Container::Json,
        OutKind::Png => Container::Png,
        OutKind::Charx if version == CardVersion::V2 => {
            return Err(CliError::file(
                output,
                "CHARX holds V3 cards only: use .json or .png for --to v2",
            ))
        }
        OutKind::Charx => Container::Charx,
    };
    // What the output cannot carry (a portrait, files no asset points at) is said on stderr
    // once the card is written (issue 13); a failure stays one line.
    let (notes, deferred) = match deferred {
        Some(d) => (
            ccv3::conversion_notes_deferred(&cf, d, to, picture.as_deref()),
            Some(d),
        ),
        None => (ccv3::conversion_notes(&cf, to, picture.as_deref()), None),
    };
    write_output(output, replace, |file| match deferred {
        Some(d) => ccv3::write_card_deferred(cf, d, to, version, picture, file),
        None => ccv3::write_card_to(cf, to, version, picture, file),
    })
    .map_err(|e: ccv3::Error| match e {
        // A closed pipe is a quiet exit, as for every output.
        ccv3::Error::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe => CliError::from(io),
        e => CliError::file(crate::stdio::out_name(output), e),
    })?;
    crate::warnings::print_diagnostics(&notes);
    Ok(())
}

fn write_book(
    book: &Lorebook,
    to: Target,
    kind: OutKind,
    output: &Path,
) -> Result<Vec<u8>, CliError> {
    if kind != OutKind::Json {
        return Err(CliError::file(
            crate::stdio::out_name(output),
            "lorebooks are written as .json",
        ));
    }
    Ok(match to {
        Target::Worldinfo => ccv3::json::to_pretty(&ccv3::lorebook::to_worldinfo(book)),
        _ => ccv3::write_lorebook_v3(book),
    })
}
