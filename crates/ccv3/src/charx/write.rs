//! Writing: `card.json` first, then the files, deterministic bytes.

use std::collections::HashSet;
use std::io::{Cursor, Seek, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipWriter};

use super::archive::{CharxFile, CARD_JSON};
use super::paths::path_problem;
use crate::{Error, Result};

/// Extensions of formats that are already compressed: stored, not deflated again.
const STORED_EXTS: &[&str] = &[
    "png",
    "apng",
    "jpg",
    "jpeg",
    "jfif",
    "webp",
    "gif",
    "avif",
    "heic",
    "heif",
    "jxl",
    "mp3",
    "ogg",
    "oga",
    "opus",
    "m4a",
    "aac",
    "flac",
    "weba",
    "mp4",
    "m4v",
    "webm",
    "mov",
    "mkv",
    "avi",
    "ogv",
    "zip",
    "charx",
    "risum",
    "gz",
    "7z",
    "rar",
    "xz",
    "zst",
    "br",
    "woff",
    "woff2",
    "glb",
    "vrm",
    "safetensors",
    "gguf",
    "ckpt",
    "onnx",
    "pt",
    "pth",
];

fn method_for(path: &str) -> CompressionMethod {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    if STORED_EXTS.contains(&ext.as_str()) {
        CompressionMethod::Stored
    } else {
        CompressionMethod::Deflated
    }
}

/// Files bigger than this are probed before they are deflated.
const PROBE_FROM: usize = 64 * 1024;

/// True when deflating `data` is worth it: small files always; bigger ones when their first
/// 64 KiB shrink by a tenth at the fastest level. Incompressible data (random bytes, media with an
/// unknown extension) is then stored: deflating 256 MiB of it takes longer than the 10 seconds a
/// command may take (issue 12), for nothing. Deterministic: the same bytes give the same choice.
fn worth_deflating(data: &[u8]) -> bool {
    use std::io::Write as _;
    let Some(sample) = data.get(..PROBE_FROM) else {
        return true;
    };
    if data.len() <= PROBE_FROM {
        return true;
    }
    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    if enc.write_all(sample).is_err() {
        return true;
    }
    enc.finish()
        .map(|out| out.len() < sample.len() / 10 * 9)
        .unwrap_or(true)
}

fn zip_err(entry: &str, err: zip::result::ZipError) -> Error {
    match err {
        zip::result::ZipError::Io(e) => Error::Io(e),
        other => Error::Charx {
            entry: entry.to_string(),
            problem: other.to_string(),
        },
    }
}

/// Writes a CHARX: `card.json` first, then `files` in the order given.
///
/// Text-like files are deflated; already-compressed media (png, jpg, webp, mp3, mp4, zip, ...)
/// are stored, and so are files over 64 KiB whose first 64 KiB do not deflate by a tenth. Every entry gets the timestamp 1980-01-01 00:00 and Unix mode 0644, so the same
/// input always gives the same bytes. Entries over 4 GiB use zip64.
///
/// # Errors
///
/// [`Error::Charx`] naming the path when a path is unsafe (see the module's safety rules), is
/// a directory (ends in `/`), is `card.json`, or appears twice; [`Error::Io`] when writing fails.
///
/// # Example
///
/// ```
/// use ccv3::charx::{write_charx, CharxFile};
/// let mut out = std::io::Cursor::new(Vec::new());
/// write_charx(&mut out, b"{}", &[CharxFile { path: "module.risum".into(), data: vec![1, 2] }])?;
/// assert!(out.get_ref().starts_with(b"PK\x03\x04"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_charx<W: Write + Seek>(w: W, card_json: &[u8], files: &[CharxFile]) -> Result<()> {
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    write_charx_with(w, card_json, &paths, |i| {
        files
            .get(i)
            .map(|f| f.data.as_slice())
            .ok_or_else(|| Error::Parameter(format!("no CHARX file number {i}")))
    })
}

/// [`write_charx`] with the `i`th file's bytes asked of `data` only when that file is written,
/// so the files are never all held at once (issue 12). Every path is checked before anything
/// is written.
pub(crate) fn write_charx_with<W, P, D>(
    w: W,
    card_json: &[u8],
    paths: &[P],
    mut data: impl FnMut(usize) -> Result<D>,
) -> Result<()>
where
    W: Write + Seek,
    P: AsRef<str>,
    D: AsRef<[u8]>,
{
    let mut seen = HashSet::with_capacity(paths.len() + 1);
    seen.insert(CARD_JSON);
    for path in paths {
        let path = path.as_ref();
        let bad = |problem: String| Error::Charx {
            entry: path.to_string(),
            problem,
        };
        if let Some(problem) = path_problem(path) {
            return Err(bad(problem));
        }
        if path.ends_with('/') {
            return Err(bad("a file path cannot end in '/'".into()));
        }
        if path == CARD_JSON {
            return Err(bad(
                "card.json is written from the card, not from the file list".into(),
            ));
        }
        if !seen.insert(path) {
            return Err(bad("path appears twice in the file list".into()));
        }
    }
    let base = SimpleFileOptions::default()
        .last_modified_time(DateTime::DEFAULT)
        .unix_permissions(0o644)
        .system(zip::System::Unix);
    let mut zip = ZipWriter::new(w);
    let write_one = |zip: &mut ZipWriter<W>, path: &str, data: &[u8]| -> Result<()> {
        let mut method = method_for(path);
        if method == CompressionMethod::Deflated && !worth_deflating(data) {
            method = CompressionMethod::Stored;
        }
        let mut options = base
            .compression_method(method)
            .large_file(data.len() as u64 >= 0xFFFF_FFFF);
        if method == CompressionMethod::Deflated {
            options = options.compression_level(Some(6));
        }
        zip.start_file(path, options)
            .map_err(|e| zip_err(path, e))?;
        zip.write_all(data)?;
        Ok(())
    };
    write_one(&mut zip, CARD_JSON, card_json)?;
    for (i, path) in paths.iter().enumerate() {
        let bytes = data(i)?;
        write_one(&mut zip, path.as_ref(), bytes.as_ref())?;
    }
    zip.finish().map_err(|e| zip_err("", e))?;
    Ok(())
}

/// Writes a CHARX into a new `Vec`; see [`write_charx`].
///
/// # Errors
///
/// As [`write_charx`].
///
/// ```
/// use ccv3::charx::{read_charx_from_slice, write_charx_to_vec, CharxFile, Limits};
/// let files = [CharxFile { path: "assets/icon/images/main.png".into(), data: vec![1, 2, 3] }];
/// let zip = write_charx_to_vec(br#"{"spec":"chara_card_v3"}"#, &files)?;
/// let back = read_charx_from_slice(&zip, &Limits::default())?;
/// assert_eq!(back.card_json, br#"{"spec":"chara_card_v3"}"#);
/// assert_eq!(back.files, files);
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn write_charx_to_vec(card_json: &[u8], files: &[CharxFile]) -> Result<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    write_charx(&mut out, card_json, files)?;
    Ok(out.into_inner())
}
