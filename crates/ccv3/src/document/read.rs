//! Reading: the container sniffed from the bytes ([`read_bytes_with`]), files read whole, mapped,
//! streamed or by seeking ([`read_file_with`], [`read_seekable_with`]), with the limits of
//! [`ReadOptions`]; a CHARX's or PNG's files left in place for a later write ([`DeferredFiles`]).

use super::files::{BookFile, CardFile, Container, Document, EmbeddedFile};
use crate::charx::{self};
use crate::diag::Diagnostic;
use crate::error::{Error, Result};
use crate::lorebook::{self, BookFormat};
use crate::model::{Card, Lorebook, Raw};
use crate::posread::ReadScratch;
use crate::read_options::ReadOptions;
use crate::{json, legacy, png};
use serde_json::Value;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Reads a card or lorebook from bytes, sniffing the container.
///
/// ```
/// let doc = ccv3::read_bytes(br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#)?;
/// let ccv3::Document::Card(cf) = doc else { panic!() };
/// assert_eq!(cf.card.data.name, "A");
/// assert_eq!(cf.container, ccv3::Container::Json);
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn read_bytes(bytes: &[u8]) -> Result<Document> {
    read_bytes_with(bytes, &ReadOptions::default())
}

/// [`read_bytes`] with the limits of `opts` ([`ReadOptions::mmap`] and
/// [`ReadOptions::max_file_len`] do not apply to bytes already in memory). The picture of a PNG,
/// JPEG or WebP card is always kept in [`CardFile::image`].
///
/// ```
/// let mut opts = ccv3::ReadOptions::default();
/// opts.max_json_len = 10;
/// let err = ccv3::read_bytes_with(br#"{"spec":"chara_card_v3","data":{}}"#, &opts).unwrap_err();
/// assert!(err.to_string().contains("ReadOptions::max_json_len"));
/// ```
pub fn read_bytes_with(bytes: &[u8], opts: &ReadOptions) -> Result<Document> {
    if png::is_png(bytes) {
        let read = read_png(opts, |limits| {
            png::read_card_chunks(std::io::Cursor::new(bytes), limits).map(|c| (c, ()))
        });
        let mut cf = match read {
            Err(Error::Unrecognized(m)) if m == NO_CARD_CHUNK => {
                png_exif_card(std::io::Cursor::new(bytes), opts)?
            }
            other => other?.0,
        };
        cf.image = Some(bytes.to_vec());
        return Ok(Document::Card(cf));
    }
    if charx::looks_like_charx(bytes) {
        return read_zip(std::io::Cursor::new(bytes), opts).map(Document::Card);
    }
    if legacy::is_jpeg(bytes) {
        let text = legacy::read_jpeg_card(bytes)?;
        return card_from_image_json(&text, Container::Jpeg, bytes, opts).map(Document::Card);
    }
    if legacy::is_webp(bytes) {
        let text = legacy::read_webp_card(bytes)?;
        return card_from_image_json(&text, Container::Webp, bytes, opts).map(Document::Card);
    }
    if lorebook::risum::is_risum(bytes) {
        return read_risum_document(bytes, opts);
    }
    read_json_document(bytes, opts)
}

/// A RisuAI `.risum` module, read as its lorebook ([`lorebook::risum`]).
fn read_risum_document(bytes: &[u8], opts: &ReadOptions) -> Result<Document> {
    let table = opts.rpack.unwrap_or(lorebook::risum::RpackTable::RISUAI);
    let risum = lorebook::risum::read_risum(bytes, &table)?;
    let which = if opts.rpack.is_some() {
        "the RPack table given as ReadOptions::rpack"
    } else {
        "RisuAI's RPack table (ReadOptions::rpack gives another)"
    };
    let (v, mut diags) = json::parse_with(&risum.main, opts).map_err(|e| {
        Error::format(
            ".risum main block",
            format!("not JSON after decoding with {which}: {e}"),
        )
    })?;
    match &v {
        Value::Object(o) if lorebook::risu_module::is_risu_module(o) => {}
        _ => {
            return Err(Error::format(
                ".risum main block",
                "not a RisuAI module (no \"type\": \"risuModule\")",
            ))
        }
    }
    let (mut book, format) = lorebook::read_lorebook_value(v, &mut diags)?;
    if !risum.assets.is_empty() {
        if let Some(Value::Object(ns)) = book.extensions.get_mut(lorebook::risu::NAMESPACE) {
            ns.insert(
                "risum_assets".into(),
                lorebook::risum::assets_json(&risum.assets),
            );
        } else {
            book.extensions.insert(
                lorebook::risu::NAMESPACE.into(),
                serde_json::json!({"risum_assets": lorebook::risum::assets_json(&risum.assets)}),
            );
        }
    }
    diags.push(Diagnostic::info(
        "risum-read",
        "",
        format!(
            "read a RisuAI .risum module as its lorebook ({} entries; regex scripts, triggers \
             and {} asset(s) kept in extensions.risuai)",
            book.entries.len(),
            risum.assets.len()
        ),
    ));
    Ok(Document::Lorebook(BookFile {
        book,
        format,
        diagnostics: diags,
    }))
}

/// Reads a card or lorebook file into memory (see [`read_file_with`]). PNG files are read with
/// seeks, so image data is never read; CHARX archives are streamed. Errors do not name the file:
/// callers add it.
///
/// ```
/// let path = std::env::temp_dir().join("ccv3-doc-read-file.json");
/// std::fs::write(&path, r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#)?;
/// let ccv3::Document::Card(cf) = ccv3::read_file(&path)? else { panic!() };
/// assert_eq!(cf.card.data.name, "A");
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn read_file(path: &Path) -> Result<Document> {
    read_file_with(path, &ReadOptions::default())
}

/// Reads a card or lorebook file as `opts` say. PNG files are read with seeks, so image data is
/// never read (unless [`ReadOptions::keep_image`] asks for the picture); CHARX archives are
/// streamed from the file, one entry at a time. Other files are read whole, up to
/// [`ReadOptions::max_file_len`]. Errors do not name the file: callers add it.
///
/// ```
/// let path = std::env::temp_dir().join("ccv3-doc-read-file-with.json");
/// std::fs::write(&path, r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#)?;
/// let mut opts = ccv3::ReadOptions::default();
/// opts.max_file_len = 16; // refuse anything longer than 16 bytes
/// assert!(matches!(ccv3::read_file_with(&path, &opts), Err(ccv3::Error::Limit(_))));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn read_file_with(path: &Path, opts: &ReadOptions) -> Result<Document> {
    read_file_impl(path, opts, false).map(|(doc, _)| doc)
}

/// [`read_file_with`] for a file the caller opened (read from its start, whatever its cursor):
/// the same reading, errors and limits. For callers that open files their own way, such as
/// relative to a folder's handle (issue 16: `ccv3 validate DIR` opens each file with `openat`,
/// which spares the kernel the lookup of the whole path).
///
/// ```no_run
/// let file = std::fs::File::open("card.png")?;
/// let doc = ccv3::read_open_file_with(file, &ccv3::ReadOptions::default())?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// As [`read_file_with`].
pub fn read_open_file_with(file: std::fs::File, opts: &ReadOptions) -> Result<Document> {
    read_open_file_reusing(file, None, opts, &mut ReadScratch::new())
}

/// [`read_open_file_with`] for callers that read many files one after another: the reads go
/// through `scratch`'s memory, kept from one file to the next (one [`ReadScratch`] per thread
/// that reads; the library keeps none of its own), and `len`, when the caller already has the
/// file's metadata (`ccv3 index` needs its size and time), is its length, so the file's
/// metadata is not asked for again (issue 16: one system call less per file). A wrong `len`
/// gives no wrong result beyond what a file changing while it is read gives: reads stop at the
/// real end of the file.
///
/// ```no_run
/// let mut scratch = ccv3::ReadScratch::new();
/// for path in ["a.png", "b.png"] {
///     let file = std::fs::File::open(path)?;
///     let doc = ccv3::read_open_file_reusing(file, None, &ccv3::ReadOptions::default(), &mut scratch)?;
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// As [`read_file_with`].
pub fn read_open_file_reusing(
    file: std::fs::File,
    len: Option<u64>,
    opts: &ReadOptions,
    scratch: &mut ReadScratch,
) -> Result<Document> {
    read_open_impl(file, len, opts, false, scratch).map(|(doc, _)| doc)
}

/// Where the embedded files of a card read by [`read_file_deferred`] are in the file it was read
/// from (CHARX entries, PNG asset chunks), so that each can be read again when it is written:
/// [`write_card_deferred`](crate::write_card_deferred) and [`charx_layout_deferred`](crate::charx_layout_deferred) hold one at a time (issue 12). It keeps
/// the file open.
#[derive(Debug)]
pub struct DeferredFiles {
    file: Option<std::fs::File>,
    places: Places,
}

#[derive(Debug)]
enum Places {
    None,
    Charx(charx::CharxPlaces),
    Png(png::AssetPlaces),
}

impl DeferredFiles {
    /// No file: for a card whose files are held in memory (JSON, WebP, JPEG).
    pub fn none() -> Self {
        DeferredFiles {
            file: None,
            places: Places::None,
        }
    }

    /// True when the card's files were left in the file (a CHARX or PNG read from disk); else
    /// the card holds them (any other container).
    pub(super) fn holds_files(&self) -> bool {
        self.file.is_some() && !matches!(self.places, Places::None)
    }

    /// The length of the `i`th embedded file.
    pub(super) fn size(&self, i: usize) -> u64 {
        match &self.places {
            Places::None => 0,
            Places::Charx(p) => p.size(i),
            Places::Png(p) => p.size(i),
        }
    }

    /// Reads the `i`th embedded file again.
    pub(super) fn load(&mut self, i: usize) -> Result<Vec<u8>> {
        let (Some(file), places) = (self.file.as_mut(), &self.places) else {
            return Err(Error::Parameter(format!("no embedded file number {i}")));
        };
        file.seek(SeekFrom::Start(0))?;
        let mut r = std::io::BufReader::with_capacity(64 * 1024, file);
        match places {
            Places::None => Err(Error::Parameter(format!("no embedded file number {i}"))),
            Places::Charx(p) => p.load(&mut r, i),
            Places::Png(p) => p.load(&mut r, i),
        }
    }
}

/// [`read_file_with`], leaving a card's embedded files (CHARX entries, PNG asset chunks) in the
/// file: each is read and checked as [`read_file_with`] reads it (the same errors and
/// diagnostics), then dropped, and the card's [`CardFile::files`] come back with their paths
/// and empty data. Write the card with [`write_card_deferred`](crate::write_card_deferred) or lay it out with
/// [`charx_layout_deferred`](crate::charx_layout_deferred), giving them the returned [`DeferredFiles`]: each file is read
/// again when it is written, so a card is written with one asset in memory at a time (issue 12:
/// `ccv3 extract` and `ccv3 convert`). Other containers are read as [`read_file_with`] reads them.
///
/// # Errors
///
/// As [`read_file_with`].
///
/// ```
/// // A CHARX with one asset, written to a file.
/// let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A",
///   "assets":[{"type":"icon","uri":"data:image/png;base64,AQID","name":"main","ext":"png"}]}}"#;
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(text)? else { panic!() };
/// let path = std::env::temp_dir().join("ccv3-doc-read-file-deferred.charx");
/// std::fs::write(&path, ccv3::write_charx(&cf)?)?;
/// // Read it, leaving the asset in the file.
/// let (doc, mut files) = ccv3::read_file_deferred(&path, &ccv3::ReadOptions::default())?;
/// let ccv3::Document::Card(cf) = doc else { panic!() };
/// assert!(cf.files.iter().all(|f| f.data.is_empty()));
/// // Written as JSON: the asset is read again from the file and becomes a `data:` URL.
/// let mut out = std::io::Cursor::new(Vec::new());
/// ccv3::write_card_deferred(cf, &mut files, ccv3::Container::Json, ccv3::CardVersion::V3, None, &mut out)?;
/// assert!(String::from_utf8(out.into_inner()).unwrap().contains("data:image/png;base64,AQID"));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn read_file_deferred(path: &Path, opts: &ReadOptions) -> Result<(Document, DeferredFiles)> {
    read_file_impl(path, opts, true)
}

fn read_file_impl(
    path: &Path,
    opts: &ReadOptions,
    defer: bool,
) -> Result<(Document, DeferredFiles)> {
    let file = std::fs::File::open(path)?;
    read_open_impl(file, None, opts, defer, &mut ReadScratch::new())
}

fn read_open_impl(
    mut file: std::fs::File,
    len: Option<u64>,
    opts: &ReadOptions,
    defer: bool,
    scratch: &mut ReadScratch,
) -> Result<(Document, DeferredFiles)> {
    let len = match len {
        Some(len) => len,
        None => file.metadata()?.len(),
    };
    // Positional reads through one small buffer: the PNG reader's seeks cost no system call,
    // and the file's own cursor stays at 0 for the other containers.
    let mut reader = crate::posread::PosReader::new(&file, len, scratch);
    let mut head = [0u8; 16];
    let n = read_up_to(&mut reader, &mut head)?;
    let too_big = || {
        Error::Limit(format!(
            "file of {len} bytes is over the limit of {} bytes for files read whole (the option \
             ReadOptions::max_file_len raises it)",
            opts.max_file_len
        ))
    };
    let head = head.get(..n).unwrap_or_default();
    if png::is_png(head) {
        let read = read_png(opts, |limits| {
            reader.seek(SeekFrom::Start(0))?;
            if defer {
                png::read_card_chunks_deferred(&mut reader, limits)
            } else {
                png::read_card_chunks_from(&mut reader, limits)
                    .map(|c| (c, png::AssetPlaces::default()))
            }
        });
        let (mut cf, places) = match read {
            Err(Error::Unrecognized(m)) if m == NO_CARD_CHUNK => {
                reader.seek(SeekFrom::Start(0))?;
                (
                    png_exif_card(&mut reader, opts)?,
                    png::AssetPlaces::default(),
                )
            }
            other => other?,
        };
        if opts.keep_image {
            if len > opts.max_file_len {
                return Err(too_big());
            }
            file.seek(SeekFrom::Start(0))?;
            let mut image = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
            Read::by_ref(&mut file)
                .take(opts.max_file_len)
                .read_to_end(&mut image)?;
            cf.image = Some(image);
        }
        let files = DeferredFiles {
            file: defer.then_some(file),
            places: Places::Png(places),
        };
        return Ok((Document::Card(cf), files));
    }
    // Positional reads move the cursor on some systems (Windows).
    file.seek(SeekFrom::Start(0))?;
    // A zip, or a JPEG with a CHARX behind it: streamed, never read whole (issue 12).
    if head.starts_with(b"PK\x03\x04")
        || (legacy::is_jpeg(head) && charx::reader_lists_card_json(&mut file))
    {
        file.seek(SeekFrom::Start(0))?;
        let reader = std::io::BufReader::with_capacity(64 * 1024, &mut file);
        if !defer {
            let cf = read_zip(reader, opts)?;
            return Ok((Document::Card(cf), DeferredFiles::none()));
        }
        match charx::read_charx_deferred(reader, &opts.charx) {
            Ok((archive, places)) => {
                let cf = card_from_charx(archive, opts)?;
                let files = DeferredFiles {
                    file: Some(file),
                    places: Places::Charx(places),
                };
                return Ok((Document::Card(cf), files));
            }
            // Not a CHARX (a Backyard AI archive, say): read as without deferring.
            Err(Error::Charx { entry, problem })
                if entry == "card.json" && problem.starts_with("no card.json") =>
            {
                file.seek(SeekFrom::Start(0))?;
                let reader = std::io::BufReader::with_capacity(64 * 1024, &mut file);
                let cf = read_zip(reader, opts)?;
                return Ok((Document::Card(cf), DeferredFiles::none()));
            }
            Err(e) => return Err(e),
        }
    }
    if len > opts.max_file_len {
        return Err(too_big());
    }
    file.seek(SeekFrom::Start(0))?;
    let bytes = crate::mapped::whole_file(&mut file, len, opts.max_file_len, opts.mmap)?;
    Ok((read_bytes_with(&bytes, opts)?, DeferredFiles::none()))
}

/// Reads a card or lorebook from a random-access source (a file, a cursor over bytes, a buffer
/// that lives elsewhere, such as a JavaScript `Uint8Array` behind a binding), sniffing the
/// container from its first bytes.
///
/// A PNG is read as [`read_file`] reads one: only the chunk headers and the card text chunks are
/// read, image data is seeked past (so the source is never copied whole, and
/// [`CardFile::image`] is `None`). Any other container is read whole, up to
/// [`ReadOptions::max_file_len`] ([`MAX_FILE_LEN`](crate::MAX_FILE_LEN) by default), and then
/// read as [`read_bytes`] reads it. Reading starts at the source's current
/// position.
///
/// ```
/// let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#;
/// let doc = ccv3::read_seekable(std::io::Cursor::new(&text[..]))?;
/// let ccv3::Document::Card(cf) = doc else { panic!() };
/// assert_eq!(cf.card.data.name, "A");
/// # Ok::<(), ccv3::Error>(())
/// ```
///
/// # Errors
/// As [`read_bytes`]; [`Error::Limit`] for a source over the limit that is not a PNG, and [`Error::Io`] when the source fails.
pub fn read_seekable<R: Read + Seek>(r: R) -> Result<Document> {
    read_seekable_with(r, &ReadOptions::default())
}

/// Reads a card or lorebook from a random-access source as `opts` say (see [`read_seekable`];
/// [`ReadOptions::mmap`] does not apply).
///
/// # Errors
/// As [`read_seekable`]; the limits are the options'.
///
/// ```
/// let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#;
/// let mut opts = ccv3::ReadOptions::default();
/// opts.max_json_len = 10;
/// assert!(ccv3::read_seekable_with(std::io::Cursor::new(&text[..]), &opts).is_err());
/// let doc = ccv3::read_seekable_with(std::io::Cursor::new(&text[..]), &ccv3::ReadOptions::default())?;
/// assert!(matches!(doc, ccv3::Document::Card(_)));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn read_seekable_with<R: Read + Seek>(mut r: R, opts: &ReadOptions) -> Result<Document> {
    let start = r.stream_position()?;
    let mut head = [0u8; 16];
    let n = read_up_to(&mut r, &mut head)?;
    r.seek(SeekFrom::Start(start))?;
    if png::is_png(head.get(..n).unwrap_or_default()) {
        let read = read_png(opts, |limits| {
            r.seek(SeekFrom::Start(start))?;
            png::read_card_chunks(&mut r, limits).map(|c| (c, ()))
        });
        return match read {
            Err(Error::Unrecognized(m)) if m == NO_CARD_CHUNK => {
                r.seek(SeekFrom::Start(start))?;
                png_exif_card(&mut r, opts).map(Document::Card)
            }
            other => other.map(|(cf, ())| Document::Card(cf)),
        };
    }
    let max = opts.max_file_len;
    let len = r.seek(SeekFrom::End(0))?.saturating_sub(start);
    r.seek(SeekFrom::Start(start))?;
    if len > max {
        return Err(Error::Limit(format!(
            "input of {len} bytes is over the {max}-byte limit (the option \
             ReadOptions::max_file_len raises it)"
        )));
    }
    // The length is what the source says; read no more than the limit whatever it says.
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).min(1 << 26));
    r.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(Error::Limit(format!(
            "input is over the {max}-byte limit (the option ReadOptions::max_file_len raises it)"
        )));
    }
    read_bytes_with(&bytes, opts)
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Reads a PNG card with `read_chunks`, first seeking past the backfilled `chara` chunk; only
/// when there is no `ccv3` chunk, or it holds no readable card, is the file read again with
/// `chara` (a second walk over the chunk headers, which costs little).
fn read_png<T>(
    opts: &ReadOptions,
    mut read_chunks: impl FnMut(&png::Limits) -> Result<(png::CardChunks, T)>,
) -> Result<(CardFile, T)> {
    let fast = png::Limits {
        read_chara: false,
        ..opts.png
    };
    let all = png::Limits {
        read_chara: true,
        ..opts.png
    };
    let (chunks, extra) = match read_chunks(&fast) {
        Ok(read) => read,
        // A broken stream or card chunk: the `chara` chunk seeked past may still hold the card.
        Err(Error::Png { .. }) => {
            let (chunks, extra) = read_chunks(&all)?;
            return Ok((card_from_png_chunks(chunks, opts)?, extra));
        }
        Err(e) => return Err(e),
    };
    if !chunks.chara_skipped {
        return Ok((card_from_png_chunks(chunks, opts)?, extra));
    }
    if chunks.ccv3.is_some() {
        if let Ok(cf) = card_from_png_chunks(chunks, opts) {
            return Ok((cf, extra));
        }
    }
    let (chunks, extra) = read_chunks(&all)?;
    Ok((card_from_png_chunks(chunks, opts)?, extra))
}

fn card_from_png_chunks(chunks: png::CardChunks, opts: &ReadOptions) -> Result<CardFile> {
    let mut diags = chunks.diagnostics;
    let files = chunks
        .assets
        .into_iter()
        .map(|(path, data)| EmbeddedFile { path, data })
        .collect();
    // `ccv3` wins over `chara` (SPEC_V3 "PNG/APNG"); a broken `ccv3` beside a good `chara` is a
    // warning, and the backfilled `chara` is otherwise ignored.
    let card = match (&chunks.ccv3, &chunks.chara) {
        (Some(text), chara) => match card_from_str(text, opts, &mut diags) {
            Ok(card) => card,
            Err(e) => match chara {
                Some(chara) => {
                    let at = chunks.ccv3_chunk.as_ref().map_or_else(String::new, |p| {
                        format!(" ({} at byte {})", p.kind, p.offset)
                    });
                    diags.push(Diagnostic::warning(
                        "png-ccv3-chunk-broken",
                        "",
                        format!("the ccv3 chunk{at} holds no readable card ({e}); read the chara chunk instead"),
                    ));
                    card_from_str(chara, opts, &mut diags)
                        .map_err(|e| png_err("chara", chunks.chara_chunk.as_ref(), e))?
                }
                None => return Err(png_err("ccv3", chunks.ccv3_chunk.as_ref(), e)),
            },
        },
        (None, Some(chara)) => {
            let mut card = card_from_str(chara, opts, &mut diags)
                .map_err(|e| png_err("chara", chunks.chara_chunk.as_ref(), e))?;
            trim_backfill_warning(&mut card, &mut diags);
            card
        }
        (None, None) => return Err(Error::Unrecognized(NO_CARD_CHUNK.into())),
    };
    Ok(CardFile {
        card,
        container: Container::Png,
        files,
        image: None,
        diagnostics: diags,
    })
}

/// The error of a PNG without a `ccv3` or `chara` chunk (before its EXIF is looked at).
const NO_CARD_CHUNK: &str = "the PNG has no ccv3 or chara text chunk";

/// A PNG without card text chunks: its card may be in its `eXIf` chunk's `UserComment`, as
/// Backyard AI's Faraday-era exports keep it ([`crate::faraday`]). `r` is at the PNG's start.
fn png_exif_card<R: Read + Seek>(r: R, opts: &ReadOptions) -> Result<CardFile> {
    let no_card = |why: String| Error::Unrecognized(format!("{NO_CARD_CHUNK}, {why}"));
    let Some(exif) = png::read_exif_chunk(r, opts.png.max_total_text)? else {
        return Err(no_card("and no eXIf chunk".into()));
    };
    let text = legacy::read_png_exif_card(&exif)
        .map_err(|e| no_card(format!("and its eXIf chunk holds no card ({e})")))?;
    let (v, mut diags) = json::parse_with(text.as_bytes(), opts)?;
    diags.push(Diagnostic::info(
        "png-exif-card",
        "",
        "the PNG has no card text chunk; read the card in its eXIf chunk (EXIF UserComment)",
    ));
    let card = if crate::faraday::is_faraday_character(&v) {
        crate::faraday::card_from_faraday(v, &mut diags)?
    } else {
        Card::from_json(v, &mut diags)?
    };
    Ok(CardFile {
        card,
        container: Container::Png,
        files: Vec::new(),
        image: None,
        diagnostics: diags,
    })
}

/// Removes the V2 backfill warning line from a card read from a `chara` chunk alone (SPEC_V3
/// "PNG/APNG": the backfilled chunk SHOULD be trimmed on import).
fn trim_backfill_warning(card: &mut Card, diags: &mut Vec<Diagnostic>) {
    let notes = &card.data.creator_notes;
    if let Some(rest) = notes.strip_prefix(crate::V2_BACKFILL_WARNING) {
        card.data.creator_notes = rest.trim_start_matches(['\n', '\r']).to_string();
        diags.push(Diagnostic::info(
            "backfill-warning-trimmed",
            "data.creator_notes",
            "removed the V3 backfill warning line from the creator notes",
        ));
    }
}

/// An error about the card in the `keyword` chunk found at `place` (issue 12: errors name the
/// chunk type and its byte offset).
fn png_err(keyword: &str, place: Option<&png::ChunkPlace>, e: Error) -> Error {
    let (kind, offset) = place.map_or(("tEXt", 0), |p| (p.kind.as_str(), p.offset));
    Error::Png {
        chunk: format!("{kind} {keyword}"),
        offset,
        problem: e.to_string(),
    }
}

/// Reads a card from JSON text (the fast path: no `Value` tree for the known fields).
fn card_from_text(text: &[u8], opts: &ReadOptions, diags: &mut Vec<Diagnostic>) -> Result<Card> {
    crate::model::stream::with_raw(text, opts, false, |raw, d| {
        diags.extend(d);
        Card::from_raw(raw, diags)
    })
}

/// [`card_from_text`] of text already checked as UTF-8 (not checked again while parsed).
fn card_from_str(text: &str, opts: &ReadOptions, diags: &mut Vec<Diagnostic>) -> Result<Card> {
    crate::model::stream::with_raw_str(text, opts, false, |raw, d| {
        diags.extend(d);
        Card::from_raw(raw, diags)
    })
}

/// Reads a zip: a CHARX, or else a Backyard AI archive or a Voxta package (issue 13); any other
/// zip gets the CHARX reader's error about the missing `card.json`.
fn read_zip<R: Read + Seek>(mut r: R, opts: &ReadOptions) -> Result<CardFile> {
    let start = r.stream_position()?;
    match charx::read_charx(&mut r, &opts.charx) {
        Ok(archive) => card_from_charx(archive, opts),
        Err(Error::Charx { entry, problem })
            if entry == "card.json" && problem.starts_with("no card.json") =>
        {
            r.seek(SeekFrom::Start(start))?;
            let (files, info) = charx::read_zip_files(&mut r, &opts.charx)?;
            let mut diagnostics = info.diagnostics;
            let (container, (mut card, assets)) = if crate::byaf::is_byaf(&files) {
                (
                    Container::Byaf,
                    crate::byaf::card_from_byaf(&files, &mut diagnostics)?,
                )
            } else if crate::voxta::is_voxta(&files) {
                (
                    Container::Voxta,
                    crate::voxta::card_from_voxta(&files, &mut diagnostics)?,
                )
            } else {
                return Err(Error::Charx { entry, problem });
            };
            if !assets.is_empty() {
                card.data.assets = Some(assets);
            }
            Ok(CardFile {
                card,
                container,
                files: files
                    .into_iter()
                    .map(|f| EmbeddedFile {
                        path: f.path,
                        data: f.data,
                    })
                    .collect(),
                image: None,
                diagnostics,
            })
        }
        Err(e) => Err(e),
    }
}

fn card_from_charx(archive: charx::CharxArchive, opts: &ReadOptions) -> Result<CardFile> {
    let mut diags = archive.diagnostics;
    let card = card_from_text(&archive.card_json, opts, &mut diags).map_err(|e| Error::Charx {
        entry: "card.json".into(),
        problem: e.to_string(),
    })?;
    let files = archive
        .files
        .into_iter()
        .map(|f| EmbeddedFile {
            path: f.path,
            data: f.data,
        })
        .collect();
    Ok(CardFile {
        card,
        container: Container::Charx,
        files,
        image: None,
        diagnostics: diags,
    })
}

/// The card of a PNG chunk's or an EXIF's decoded text, as [`read_bytes_with`] reads it (for the
/// summary's fallback, which has the text already).
pub(crate) fn card_from_image_text(text: &str, opts: &ReadOptions) -> Result<Card> {
    card_from_str(text, opts, &mut Vec::new())
}

/// The card of a CHARX's `card.json`, as [`read_bytes_with`] reads it (for the summary's
/// fallback, which has the text already).
pub(crate) fn card_from_card_json(text: &[u8], opts: &ReadOptions) -> Result<Card> {
    card_from_text(text, opts, &mut Vec::new())
}

fn card_from_image_json(
    text: &str,
    container: Container,
    bytes: &[u8],
    opts: &ReadOptions,
) -> Result<CardFile> {
    let mut diags = Vec::new();
    let card = card_from_str(text, opts, &mut diags)?;
    Ok(CardFile {
        card,
        container,
        files: Vec::new(),
        image: Some(bytes.to_vec()),
        diagnostics: diags,
    })
}

fn read_json_document(bytes: &[u8], opts: &ReadOptions) -> Result<Document> {
    if let Some(doc) = read_yaml_document(bytes, opts)? {
        return Ok(doc);
    }
    let not_json = |e: Error| match e {
        // Another application's file: say what it is (issue 13), not a parser message.
        Error::Json { .. } if describe_bytes(bytes).is_some() => {
            Error::Unrecognized(describe_bytes(bytes).unwrap_or_default())
        }
        Error::Json {
            line: 1, column: 1, ..
        } if bytes
            .first()
            .is_some_and(|b| !b"{[ \t\r\n\xEF\xFF\xFE".contains(b)) =>
        {
            Error::Unrecognized(format!("not JSON, PNG, CHARX, JPEG or WebP; {EXPECTED}"))
        }
        other => other,
    };
    // Cards, `lorebook_v3` files and bare `character_book`s take the fast path; the other
    // lorebook formats are parsed again as a `Value` for their readers.
    let fast = match fast_json_document(bytes, opts, true).map_err(not_json)? {
        // The bare-book guess did not hold: parse again without it.
        FastJson::Retry => fast_json_document(bytes, opts, false).map_err(not_json)?,
        other => other,
    };
    if let FastJson::Done(doc) = fast {
        return Ok(*doc);
    }
    let (v, mut diags) = json::parse_with(bytes, opts)?;
    if lorebook::looks_like_lorebook(&v) {
        let (book, format) = lorebook::read_lorebook_value(v, &mut diags)?;
        return Ok(Document::Lorebook(BookFile {
            book,
            format,
            diagnostics: diags,
        }));
    }
    let v = match v {
        Value::Object(o) if crate::agnai::is_agnai_character(&o) => {
            let card = crate::agnai::card_from_agnai(o, &mut diags)?;
            return Ok(Document::Card(CardFile::json(card, diags)));
        }
        Value::Object(o) if crate::textgen::is_textgen_character(&o) => {
            let card = crate::textgen::card_from_textgen(o, &mut diags)?;
            return Ok(Document::Card(CardFile::json(card, diags)));
        }
        Value::Object(o) if crate::wrapped::is_wrapped_card(&o) => {
            let card = crate::wrapped::card_from_wrapped(o, &mut diags)?;
            return Ok(Document::Card(CardFile::json(card, diags)));
        }
        other => other,
    };
    // Not a lorebook either: say what it is when another application's shape is known, else
    // the card reader's error says what a card needs.
    if let Some(what) = describe_value(&v) {
        return Err(Error::Unrecognized(what));
    }
    let keys: Vec<String> = v
        .as_object()
        .map(|o| o.keys().take(8).map(|k| format!("{k:?}")).collect())
        .unwrap_or_default();
    match Card::from_json(v, &mut diags) {
        Err(Error::Format { path, .. }) if path.is_empty() && !keys.is_empty() => {
            Err(Error::Unrecognized(format!(
                "a JSON object with the keys {}; {EXPECTED}",
                keys.join(", ")
            )))
        }
        Err(e) => Err(e),
        Ok(_) => Err(Error::Unrecognized(EXPECTED.into())),
    }
}

/// A YAML mapping (text-generation-webui's characters, [`crate::textgen`]) read with the bounded
/// loader [`crate::yaml`]; `None` when the text is not YAML-shaped (JSON, say).
fn read_yaml_document(bytes: &[u8], opts: &ReadOptions) -> Result<Option<Document>> {
    let head = bytes.get(..bytes.len().min(4096)).unwrap_or_default();
    let head = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) => {
            std::str::from_utf8(head.get(..e.valid_up_to()).unwrap_or_default()).unwrap_or_default()
        }
    };
    if !crate::textgen::looks_like_yaml_mapping(head) {
        return Ok(None);
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Err(Error::Unrecognized(format!(
            "YAML-shaped text that is not UTF-8; {EXPECTED}"
        )));
    };
    let limits = crate::yaml::Limits {
        max_len: usize::try_from(opts.max_json_len).unwrap_or(usize::MAX),
        ..crate::yaml::Limits::default()
    };
    let value = crate::yaml::from_str(text.trim_start_matches('\u{feff}'), &limits)?;
    let mut diags = Vec::new();
    match value {
        Value::Object(o) if crate::textgen::is_textgen_character(&o) => {
            let card = crate::textgen::card_from_textgen(o, &mut diags)?;
            Ok(Some(Document::Card(CardFile::json(card, diags))))
        }
        // Another mapping (a Pygmalion-style character in YAML, say): read as the same JSON.
        Value::Object(o) => {
            let json = serde_json::to_vec(&Value::Object(o))
                .map_err(|e| Error::format("", e.to_string()))?;
            let mut doc = read_json_document(&json, opts)?;
            let note =
                Diagnostic::info("yaml-document", "", "read a YAML file as the JSON it holds");
            match &mut doc {
                Document::Card(cf) => cf.diagnostics.insert(0, note),
                Document::Lorebook(bf) => bf.diagnostics.insert(0, note),
            }
            Ok(Some(doc))
        }
        _ => Ok(None),
    }
}

/// What ccv3 reads, for errors about files it does not.
const EXPECTED: &str = "expected a character card (JSON with `spec` and `data`, or V1 `name` \
     with `description`/`first_mes`; PNG, CHARX, BYAF, WebP, JPEG) or a lorebook (JSON with \
     `entries`)";

/// What a file that is not JSON is, when it is another application's known format (issue 13).
fn describe_bytes(bytes: &[u8]) -> Option<String> {
    let head = bytes.get(..bytes.len().min(64 * 1024)).unwrap_or_default();
    let text = std::str::from_utf8(head)
        .ok()
        .or_else(|| std::str::from_utf8(head.get(..head.len().saturating_sub(3))?).ok())?;
    let text = text.trim_start_matches('\u{feff}');
    // A SillyTavern chat: JSON lines, the first one the chat's header.
    if let Some(first) = text.lines().next() {
        if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(first) {
            if ["user_name", "character_name", "chat_metadata"]
                .iter()
                .any(|k| o.contains_key(*k))
            {
                return Some(format!(
                    "a SillyTavern chat (JSON lines), not a card; {EXPECTED}"
                ));
            }
        }
    }
    None
}

/// What a JSON value that is neither a card nor a lorebook is, when it is another application's
/// known shape (issue 13).
fn describe_value(v: &Value) -> Option<String> {
    let entry_like = |x: &Value| {
        x.as_object().is_some_and(|e| {
            ["keys", "key", "content", "keywords", "entry"]
                .iter()
                .any(|k| e.contains_key(*k))
        })
    };
    let message_like = |x: &Value| {
        x.as_object()
            .is_some_and(|m| m.contains_key("mes") || m.contains_key("is_user"))
    };
    let what = match v {
        Value::Array(items) if items.first().is_some_and(entry_like) => {
            "a JSON array of lorebook entries without a book around them (wrap them as \
             {\"entries\": [...]})"
        }
        Value::Array(items) if items.first().is_some_and(message_like) => "a chat (messages)",
        Value::Array(_) => "a JSON array",
        Value::Object(o) if o.contains_key("scenarioVersion") => {
            "a NovelAI scenario (its lorebook is the `lorebook` object inside: save that as its \
             own file to read it)"
        }
        Value::Object(o) if o.contains_key("chat_metadata") || o.contains_key("user_name") => {
            "a SillyTavern chat"
        }
        Value::Object(o)
            if o.contains_key("temperature")
                && ["prompts", "prompt_order", "openai_max_context", "genamt"]
                    .iter()
                    .any(|k| o.contains_key(*k)) =>
        {
            "a generation preset (sampler settings)"
        }
        Value::Object(o) if crate::textgen::is_textgen_instruction_template(o) => {
            "a text-generation-webui instruction template (prompt format), not a character"
        }
        Value::Object(o) if o.contains_key("gamestarted") || o.contains_key("authorsnote") => {
            "a KoboldAI story save without a `worldinfo` list (a save with one reads as its \
             lorebook)"
        }
        Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => "a bare JSON value",
        _ => return None,
    };
    Some(format!("{what}; {EXPECTED}"))
}

/// What the fast path made of a JSON document.
enum FastJson {
    /// A card, a `lorebook_v3` file or a bare `character_book`.
    Done(Box<Document>),
    /// Another lorebook format, or nothing: the slow path decides.
    Slow,
    /// The document's top-level `entries` were streamed as a character book's, and it is not one.
    Retry,
}

/// The fast path of [`read_json_document`].
fn fast_json_document(bytes: &[u8], opts: &ReadOptions, bare_books: bool) -> Result<FastJson> {
    crate::model::stream::with_raw(bytes, opts, bare_books, |raw, mut diags| {
        let card = crate::model::raw_is_card(&raw);
        let format = if card {
            None
        } else {
            lorebook::detect_format(&skeleton(&raw, 0))
        };
        if crate::model::stream::streamed_bare_entries(&raw)
            && (card || format != Some(BookFormat::CharacterBook))
        {
            return Ok(FastJson::Retry);
        }
        if card {
            let card = Card::from_raw(raw, &mut diags)?;
            return Ok(FastJson::Done(Box::new(Document::Card(CardFile::json(
                card, diags,
            )))));
        }
        let book = match (format, raw) {
            (Some(BookFormat::LorebookV3), Raw::Object(pairs))
                if pairs.len() == 2
                    && pairs.iter().any(|(k, v)| {
                        k == "spec" && matches!(v, Raw::String(s) if s == "lorebook_v3")
                    }) =>
            {
                let data = pairs.into_iter().find(|(k, _)| k == "data").map(|(_, v)| v);
                data.and_then(|d| Lorebook::from_raw(d, "data", true, &mut diags))
                    .map(|b| (b, BookFormat::LorebookV3))
            }
            (Some(BookFormat::CharacterBook), raw) => {
                Lorebook::from_raw(raw, "", false, &mut diags)
                    .map(|b| (b, BookFormat::CharacterBook))
            }
            _ => None,
        };
        Ok(match book {
            Some((book, format)) => FastJson::Done(Box::new(Document::Lorebook(BookFile {
                book,
                format,
                diagnostics: diags,
            }))),
            None => FastJson::Slow,
        })
    })
}

/// A small copy of a parsed JSON value for format detection: objects down to three levels, arrays
/// cut to their first item, long strings emptied.
fn skeleton(raw: &Raw, depth: usize) -> Value {
    match raw {
        Raw::Array(items) if depth < 3 => Value::Array(
            items
                .first()
                .map(|i| skeleton(i, depth + 1))
                .into_iter()
                .collect(),
        ),
        Raw::Object(pairs) if depth < 3 => Value::Object(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), skeleton(v, depth + 1)))
                .collect(),
        ),
        Raw::Array(_) => Value::Array(Vec::new()),
        Raw::Object(_) => Value::Object(serde_json::Map::new()),
        // Streamed only when the first item is a character book entry: an object without the
        // fields that mark other formats' entries.
        Raw::Entries(_) if depth < 3 => Value::Array(vec![Value::Object(serde_json::Map::new())]),
        Raw::Entries(_) => Value::Array(Vec::new()),
        // Markers (`spec`, `type`, `kind`) are short; long texts are not needed to detect.
        Raw::String(s) if s.len() > 64 => Value::String(String::new()),
        other => other.clone().into_value(),
    }
}
