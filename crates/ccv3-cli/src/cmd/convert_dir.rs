//! `ccv3 convert DIR --out DIR [--to v3|v2] [--format png|charx|json] [--force]` (issue 16): a
//! whole folder on every core.
//!
//! Every card or lorebook file under DIR ([`crate::walk`]: recursively, hidden files and
//! folders skipped) is converted into the same relative place under `--out`, with the extension
//! of `--format` (default: the input's own container; lorebooks stay `.json`). A file that cannot
//! be read or converted is reported on stderr as it happens and the others are still converted;
//! an output file that exists is left alone unless `--force` is given (checked by the rename that
//! puts the output in place, so two inputs that map to one output never replace each other).
//! The end report on stdout counts what was done and lists the failures (at most
//! [`LISTED`], then a count). Exit 0 when every file was converted, 2 otherwise.

use super::convert::{convert_doc, read_picture, OutKind};
use crate::args::{OutFormat, Target};
use crate::error::{CliError, CmdResult};
use crate::shown::shown;
use crate::walk::Item;
use std::io::Write;
use std::path::{Path, PathBuf};

/// How many failures the end report lists by name.
pub const LISTED: usize = 50;

/// The arguments of a folder conversion.
pub struct Args {
    /// The input folder (or file).
    pub input: PathBuf,
    /// The output folder.
    pub out: PathBuf,
    /// The version or lorebook format.
    pub to: Option<Target>,
    /// The output container.
    pub format: Option<OutFormat>,
    /// The picture for PNG outputs of cards without one.
    pub image: Option<PathBuf>,
    /// Replace existing outputs.
    pub force: bool,
}

/// The outcome of one file.
struct Done {
    input: PathBuf,
    result: Result<PathBuf, String>,
}

/// Converts every file of the folder; see the module docs.
pub fn run(args: &Args) -> CmdResult {
    let picture = read_picture(args.image.as_deref())?;
    if std::fs::symlink_metadata(&args.out).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(CliError::file(
            &args.out,
            "is a symbolic link; give a folder that is not a link (nothing is written through links)",
        ));
    }
    let existed = args.out.exists();
    std::fs::create_dir_all(&args.out).map_err(|e| CliError::file(&args.out, e))?;
    // Outputs written inside the folder being walked would be walked too.
    if let (Ok(i), Ok(o)) = (args.input.canonicalize(), args.out.canonicalize()) {
        if i.is_dir() && o.starts_with(&i) {
            if !existed {
                let _ = std::fs::remove_dir(&args.out);
            }
            return Err(CliError::file(
                &args.out,
                "is inside the input folder: give an output folder outside it",
            ));
        }
    }
    let root: &Path = if args.input.is_dir() {
        &args.input
    } else {
        args.input.parent().unwrap_or(Path::new(""))
    };
    let bar = crate::pipeline::spinner("{spinner} {pos} files converted {elapsed}");
    let work = |_: &mut ccv3::ReadScratch, item: Item| match item {
        Item::File(input) | Item::InFolder(input, _) => {
            let result = convert_one(&input, root, args, picture.clone());
            Done { input, result }
        }
        Item::Error(input, e) => Done {
            input,
            result: Err(e.to_string()),
        },
    };
    let (mut total, mut converted) = (0usize, 0usize);
    let mut failed: Vec<String> = Vec::new();
    let mut failures = 0usize;
    let sink = |d: Done| -> Result<(), CliError> {
        total += 1;
        bar.inc(1);
        match d.result {
            Ok(_) => converted += 1,
            Err(msg) => {
                failures += 1;
                let line = format!("{}: {}", shown(&d.input.display().to_string()), shown(&msg));
                bar.suspend(|| eprintln!("ccv3: {line}"));
                if failed.len() < LISTED {
                    failed.push(line);
                }
            }
        }
        Ok(())
    };
    crate::pipeline::each_file(std::slice::from_ref(&args.input), work, sink)?;
    bar.finish_and_clear();
    let mut report = format!(
        "{}: {} converted into {}, {} failed\n",
        super::validate::plural(total, "file", "files"),
        converted,
        shown(&args.out.display().to_string()),
        failures
    );
    for line in &failed {
        report.push_str(&format!("  {line}\n"));
    }
    if failures > failed.len() {
        report.push_str(&format!("  ... and {} more\n", failures - failed.len()));
    }
    let mut out = std::io::stdout().lock();
    out.write_all(report.as_bytes())?;
    out.flush()?;
    Ok(if failures > 0 { 2 } else { 0 })
}

/// Converts one file into its place under `--out`; the output path, or why not.
fn convert_one(
    input: &Path,
    root: &Path,
    args: &Args,
    picture: Option<Vec<u8>>,
) -> Result<PathBuf, String> {
    let rel = input.strip_prefix(root).unwrap_or(input);
    let rel = match rel.file_name() {
        Some(_) => rel.to_path_buf(),
        None => PathBuf::from(input.file_name().unwrap_or_default()),
    };
    let place = |kind: OutKind| {
        let ext = match kind {
            OutKind::Json => "json",
            OutKind::Png => "png",
            OutKind::Charx => "charx",
        };
        args.out.join(&rel).with_extension(ext)
    };
    // With --format (and a card target) the output is known before reading: skip existing ones.
    let early = match (args.format, args.to) {
        (Some(_), Some(Target::LorebookV3 | Target::Worldinfo)) => Some(OutKind::Json),
        (Some(OutFormat::Png), _) => Some(OutKind::Png),
        (Some(OutFormat::Charx), _) => Some(OutKind::Charx),
        (Some(OutFormat::Json), _) => Some(OutKind::Json),
        (None, _) => None,
    };
    if let Some(k) = early {
        let o = place(k);
        if !args.force && std::fs::symlink_metadata(&o).is_ok() && has_card_ext(input) {
            return Err(format!(
                "{}: exists; not replaced (--force replaces it)",
                o.display()
            ));
        }
    }
    let doc = ccv3::read_file_with(input, &crate::load::folder_read_options().keep_image(true))
        .map_err(crate::load::with_hint)?;
    let kind = match (args.format, &doc) {
        (Some(OutFormat::Png), _) => OutKind::Png,
        (Some(OutFormat::Charx), _) => OutKind::Charx,
        (Some(OutFormat::Json), _) | (None, ccv3::Document::Lorebook(_)) => OutKind::Json,
        (None, ccv3::Document::Card(cf)) => match cf.container {
            ccv3::Container::Png => OutKind::Png,
            ccv3::Container::Charx => OutKind::Charx,
            _ => OutKind::Json,
        },
    };
    // Lorebooks are always written as JSON.
    let kind = match (&doc, args.to) {
        (ccv3::Document::Lorebook(_), _) | (_, Some(Target::LorebookV3 | Target::Worldinfo)) => {
            OutKind::Json
        }
        _ => kind,
    };
    let output = place(kind);
    if let Some(parent) = output.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    convert_doc(
        input, doc, None, kind, &output, args.to, picture, args.force,
    )
    .map_err(|e| {
        // The error names the output file when the output is the problem.
        let text = e.to_string();
        let prefix = format!("{}: ", input.display());
        text.strip_prefix(&prefix)
            .map_or(text.clone(), str::to_string)
    })?;
    Ok(output)
}

/// True for files read as cards (lorebooks are written as JSON whatever `--format` says, so
/// their output is only known after reading).
fn has_card_ext(input: &Path) -> bool {
    input
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| !e.eq_ignore_ascii_case("json") && !e.eq_ignore_ascii_case("lorebook"))
}
