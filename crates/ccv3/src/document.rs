//! Reading any card or lorebook file, and writing cards to every container.
//!
//! [`read_bytes`] sniffs the container from the bytes, never from a file name: PNG/APNG (by
//! signature), CHARX (a zip, possibly behind a JPEG or self-extracting stub), TavernAI-era JPEG and
//! WebP (EXIF), else JSON (a card, or a lorebook in any supported format).
//!
//! # Assets across containers
//! Embedded assets move with the card and their URIs are rewritten to the target's scheme:
//! - to CHARX, every asset with bytes (`embeded://` files, `__asset:` chunks, `data:` URLs, and
//!   the PNG image itself for a `ccdefault:` icon) is stored at the spec's
//!   `assets/{type}/{images|audio|...}/` path and its URI becomes `embeded://PATH`; other archive
//!   files (RisuAI's `module.risum`, `x_meta/`) are kept at their paths;
//! - to PNG, the main icon becomes the image (its URI `ccdefault:`) when it is a PNG, and other
//!   embedded assets become `chara-ext-asset_:N` chunks with URIs `__asset:N`;
//! - to JSON, embedded assets become `data:` URLs, so nothing is lost.
//!
//! `http(s)` URLs and `ccdefault:` are never fetched or changed.

use crate::backfill::BackfillOptions;
use crate::charx::{self, CharxFile};
use crate::diag::Diagnostic;
use crate::error::{Error, Result};
use crate::lorebook::{self, BookFormat};
use crate::model::{Asset, AssetUri, Card, Lorebook, Raw};
use crate::{json, legacy, png};
use serde_json::Value;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The container a card was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Container {
    /// A JSON file.
    Json,
    /// A PNG or APNG image with card text chunks.
    Png,
    /// A CHARX zip archive.
    Charx,
    /// A TavernAI-era WebP image (EXIF).
    Webp,
    /// A TavernAI-era JPEG image (EXIF).
    Jpeg,
}

impl Container {
    /// `JSON`, `PNG`, `CHARX`, `WebP` or `JPEG`.
    pub fn label(self) -> &'static str {
        match self {
            Container::Json => "JSON",
            Container::Png => "PNG",
            Container::Charx => "CHARX",
            Container::Webp => "WebP",
            Container::Jpeg => "JPEG",
        }
    }
}

/// A file stored beside the card: a CHARX entry or a PNG `chara-ext-asset_:` chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedFile {
    /// The path inside the CHARX, or the PATH of `chara-ext-asset_:PATH`.
    pub path: String,
    /// The file's bytes.
    pub data: Vec<u8>,
}

/// A card with everything read alongside it.
#[derive(Debug, Clone)]
pub struct CardFile {
    /// The card.
    pub card: Card,
    /// Where it was read from.
    pub container: Container,
    /// Embedded files (CHARX entries other than `card.json`, or PNG asset chunks).
    pub files: Vec<EmbeddedFile>,
    /// The picture the card was embedded in (PNG, JPEG or WebP bytes), when read from bytes.
    pub image: Option<Vec<u8>>,
    /// What the reader repaired or noticed.
    pub diagnostics: Vec<Diagnostic>,
}

/// A standalone lorebook with its format.
#[derive(Debug, Clone)]
pub struct BookFile {
    /// The book, in the V3 model.
    pub book: Lorebook,
    /// The format it was read from.
    pub format: BookFormat,
    /// What the reader repaired or noticed.
    pub diagnostics: Vec<Diagnostic>,
}

/// Whatever a file holds.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum Document {
    /// A character card.
    Card(CardFile),
    /// A standalone lorebook.
    Lorebook(BookFile),
}

impl Document {
    /// The diagnostics of either kind.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            Document::Card(c) => &c.diagnostics,
            Document::Lorebook(b) => &b.diagnostics,
        }
    }
}

/// The largest file [`read_file`] reads into memory (2 GiB); PNGs are never read whole.
pub const MAX_FILE_LEN: u64 = 2 << 30;

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
    if png::is_png(bytes) {
        let mut cf = read_png(|limits| png::read_card_chunks(std::io::Cursor::new(bytes), limits))?;
        cf.image = Some(bytes.to_vec());
        return Ok(Document::Card(cf));
    }
    if charx::looks_like_charx(bytes) {
        let archive = charx::read_charx_from_slice(bytes, &charx::Limits::default())?;
        return card_from_charx(archive).map(Document::Card);
    }
    if legacy::is_jpeg(bytes) {
        let text = legacy::read_jpeg_card(bytes)?;
        return card_from_image_json(&text, Container::Jpeg, bytes).map(Document::Card);
    }
    if legacy::is_webp(bytes) {
        let text = legacy::read_webp_card(bytes)?;
        return card_from_image_json(&text, Container::Webp, bytes).map(Document::Card);
    }
    read_json_document(bytes)
}

/// How [`read_file_with`] reads a file.
///
/// ```
/// let opts = ccv3::ReadOptions::default().mmap(true);
/// assert!(opts.mmap);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Map big files (1 MiB and more, not PNGs) read-only instead of reading them into memory
    /// (default `false`). Needs the crate's `mmap` feature; without it the file is read. A map
    /// saves a copy, but a file truncated by another process while it is being read ends the
    /// process with `SIGBUS`: ask for it only where that trade is acceptable (a command-line tool,
    /// say).
    pub mmap: bool,
}

impl ReadOptions {
    /// These options with [`ReadOptions::mmap`] set to `on`.
    pub fn mmap(mut self, on: bool) -> Self {
        self.mmap = on;
        self
    }
}

/// Reads a card or lorebook file into memory (see [`read_file_with`]). PNG files are read with
/// seeks, so image data is never read; CHARX archives are streamed. Errors do not name the file:
/// callers add it.
pub fn read_file(path: &Path) -> Result<Document> {
    read_file_with(path, &ReadOptions::default())
}

/// Reads a card or lorebook file as `opts` say. PNG files are read with seeks, so image data is
/// never read; CHARX archives are streamed. Errors do not name the file: callers add it.
pub fn read_file_with(path: &Path, opts: &ReadOptions) -> Result<Document> {
    let mut file = std::fs::File::open(path)?;
    let mut head = [0u8; 16];
    let n = read_up_to(&mut file, &mut head)?;
    file.seek(SeekFrom::Start(0))?;
    if png::is_png(&head[..n]) {
        return read_png(|limits| {
            file.seek(SeekFrom::Start(0))?;
            // A small buffer: every skipped chunk discards it, and card text is read in one large read.
            png::read_card_chunks(std::io::BufReader::with_capacity(512, &mut file), limits)
        })
        .map(Document::Card);
    }
    let len = file.metadata()?.len();
    if len > MAX_FILE_LEN {
        return Err(Error::Limit(format!(
            "file of {len} bytes is over the {MAX_FILE_LEN}-byte limit"
        )));
    }
    let bytes = crate::mapped::whole_file(&mut file, len, MAX_FILE_LEN, opts.mmap)?;
    read_bytes(&bytes)
}

/// Reads a card or lorebook from a random-access source (a file, a cursor over bytes, a buffer
/// that lives elsewhere, such as a JavaScript `Uint8Array` behind a binding), sniffing the
/// container from its first bytes.
///
/// A PNG is read as [`read_file`] reads one: only the chunk headers and the card text chunks are
/// read, image data is seeked past (so the source is never copied whole, and
/// [`CardFile::image`] is `None`). Any other container is read whole, up to 2 GiB, and then
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
/// As [`read_bytes`]; [`Error::Limit`] for a source longer than 2 GiB that is not a PNG, and [`Error::Io`] when the source fails.
pub fn read_seekable<R: Read + Seek>(mut r: R) -> Result<Document> {
    let start = r.stream_position()?;
    let mut head = [0u8; 16];
    let n = read_up_to(&mut r, &mut head)?;
    r.seek(SeekFrom::Start(start))?;
    if png::is_png(head.get(..n).unwrap_or_default()) {
        return read_png(|limits| {
            r.seek(SeekFrom::Start(start))?;
            png::read_card_chunks(&mut r, limits)
        })
        .map(Document::Card);
    }
    let len = r.seek(SeekFrom::End(0))?.saturating_sub(start);
    r.seek(SeekFrom::Start(start))?;
    if len > MAX_FILE_LEN {
        return Err(Error::Limit(format!(
            "input of {len} bytes is over the {MAX_FILE_LEN}-byte limit"
        )));
    }
    // The length is what the source says; read no more than the limit whatever it says.
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).min(1 << 26));
    r.take(MAX_FILE_LEN + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_LEN {
        return Err(Error::Limit(format!(
            "input is over the {MAX_FILE_LEN}-byte limit"
        )));
    }
    read_bytes(&bytes)
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
fn read_png(
    mut read_chunks: impl FnMut(&png::Limits) -> Result<png::CardChunks>,
) -> Result<CardFile> {
    let fast = png::Limits {
        read_chara: false,
        ..png::Limits::default()
    };
    let chunks = read_chunks(&fast)?;
    if !chunks.chara_skipped {
        return card_from_png_chunks(chunks);
    }
    if chunks.ccv3.is_some() {
        if let Ok(cf) = card_from_png_chunks(chunks) {
            return Ok(cf);
        }
    }
    card_from_png_chunks(read_chunks(&png::Limits::default())?)
}

fn card_from_png_chunks(chunks: png::CardChunks) -> Result<CardFile> {
    let mut diags = chunks.diagnostics;
    let files = chunks
        .assets
        .into_iter()
        .map(|(path, data)| EmbeddedFile { path, data })
        .collect();
    // `ccv3` wins over `chara` (SPEC_V3 "PNG/APNG"); a broken `ccv3` beside a good `chara` is a
    // warning, and the backfilled `chara` is otherwise ignored.
    let card = match (&chunks.ccv3, &chunks.chara) {
        (Some(text), chara) => match card_from_text(text.as_bytes(), &mut diags) {
            Ok(card) => card,
            Err(e) => match chara {
                Some(chara) => {
                    diags.push(Diagnostic::warning(
                        "png-ccv3-chunk-broken",
                        "",
                        format!("the ccv3 chunk holds no readable card ({e}); read the chara chunk instead"),
                    ));
                    card_from_text(chara.as_bytes(), &mut diags).map_err(|e| png_err("chara", e))?
                }
                None => return Err(png_err("ccv3", e)),
            },
        },
        (None, Some(chara)) => {
            let mut card =
                card_from_text(chara.as_bytes(), &mut diags).map_err(|e| png_err("chara", e))?;
            trim_backfill_warning(&mut card, &mut diags);
            card
        }
        (None, None) => {
            return Err(Error::Unrecognized(
                "the PNG has no ccv3 or chara text chunk".into(),
            ))
        }
    };
    Ok(CardFile {
        card,
        container: Container::Png,
        files,
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

fn png_err(keyword: &str, e: Error) -> Error {
    Error::Png {
        chunk: format!("tEXt {keyword}"),
        offset: 0,
        problem: e.to_string(),
    }
}

/// Reads a card from JSON text (the fast path: no `Value` tree for the known fields).
fn card_from_text(text: &[u8], diags: &mut Vec<Diagnostic>) -> Result<Card> {
    Card::from_json_text(text, diags)
}

fn card_from_charx(archive: charx::CharxArchive) -> Result<CardFile> {
    let mut diags = archive.diagnostics;
    let card = card_from_text(&archive.card_json, &mut diags).map_err(|e| Error::Charx {
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

fn card_from_image_json(text: &str, container: Container, bytes: &[u8]) -> Result<CardFile> {
    let mut diags = Vec::new();
    let card = card_from_text(text.as_bytes(), &mut diags)?;
    Ok(CardFile {
        card,
        container,
        files: Vec::new(),
        image: Some(bytes.to_vec()),
        diagnostics: diags,
    })
}

fn read_json_document(bytes: &[u8]) -> Result<Document> {
    let not_json = |e: Error| match e {
        Error::Json {
            line: 1, column: 1, ..
        } if bytes
            .first()
            .is_some_and(|b| !b"{[ \t\r\n\xEF\xFF\xFE".contains(b)) =>
        {
            Error::Unrecognized("not JSON, PNG, CHARX, JPEG or WebP".into())
        }
        other => other,
    };
    // Cards, `lorebook_v3` files and bare `character_book`s take the fast path; the other
    // lorebook formats are parsed again as a `Value` for their readers.
    let fast = match fast_json_document(bytes, true).map_err(not_json)? {
        // The bare-book guess did not hold: parse again without it.
        FastJson::Retry => fast_json_document(bytes, false).map_err(not_json)?,
        other => other,
    };
    if let FastJson::Done(doc) = fast {
        return Ok(*doc);
    }
    let (v, mut diags) = json::parse(bytes)?;
    if lorebook::looks_like_lorebook(&v) {
        let (book, format) = lorebook::read_lorebook_value(v, &mut diags)?;
        return Ok(Document::Lorebook(BookFile {
            book,
            format,
            diagnostics: diags,
        }));
    }
    // Not a lorebook either: the card reader's error says what a card needs.
    Card::from_json(v, &mut diags)?;
    Err(Error::Unrecognized(
        "not a character card or lorebook".into(),
    ))
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
fn fast_json_document(bytes: &[u8], bare_books: bool) -> Result<FastJson> {
    json::with_raw(bytes, bare_books, |raw, mut diags| {
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
            return Ok(FastJson::Done(Box::new(Document::Card(CardFile {
                card,
                container: Container::Json,
                files: Vec::new(),
                image: None,
                diagnostics: diags,
            }))));
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

/// Which card version to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CardVersion {
    /// V3 (for PNG: a `ccv3` chunk plus a backfilled V2 `chara` chunk).
    #[default]
    V3,
    /// V2 only (for PNG: a `chara` chunk alone, without the backfill warning).
    V2,
}

/// The bytes of an asset URI, when the card carries them (embedded file, PNG chunk, data URL).
pub fn asset_bytes(uri: &str, files: &[EmbeddedFile]) -> Option<Vec<u8>> {
    match AssetUri::parse(uri) {
        AssetUri::Embedded(p) | AssetUri::PngChunk(p) => {
            files.iter().find(|f| f.path == p).map(|f| f.data.clone())
        }
        AssetUri::Data { base64, .. } => base64_simd::STANDARD
            .decode_to_vec(base64.trim())
            .ok()
            .or_else(|| {
                base64_simd::STANDARD_NO_PAD
                    .decode_to_vec(base64.trim())
                    .ok()
            }),
        _ => None,
    }
}

/// The media type for a file extension (for `data:` URLs).
pub fn media_type(ext: &str) -> &'static str {
    match ext.to_ascii_lowercase().as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "webp" => "image/webp",
        "gif" => "image/gif",
        "avif" => "image/avif",
        "svg" => "image/svg+xml",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "ogg" => "audio/ogg",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "json" => "application/json",
        "ttf" => "font/ttf",
        "otf" => "font/otf",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// Writes a card as JSON (pretty), embedded assets turned into `data:` URLs.
pub fn write_json(cf: &CardFile, version: CardVersion) -> Vec<u8> {
    let mut card = cf.card.clone();
    if let Some(assets) = card.data.assets.as_mut() {
        for a in assets.iter_mut() {
            if matches!(
                a.parsed_uri(),
                AssetUri::Embedded(_) | AssetUri::PngChunk(_)
            ) {
                if let Some(bytes) = asset_bytes(&a.uri, &cf.files) {
                    a.uri = format!(
                        "data:{};base64,{}",
                        media_type(&a.ext),
                        base64_simd::STANDARD.encode_to_string(bytes)
                    );
                }
            }
        }
    }
    match version {
        // Written straight from the model, without a tree.
        CardVersion::V3 => json::to_pretty(&card.v3_arranged()),
        CardVersion::V2 => json::to_pretty(&card_json(&card, version)),
    }
}

/// The card as a JSON value of the given version.
pub fn card_json(card: &Card, version: CardVersion) -> Value {
    match version {
        CardVersion::V3 => card.to_v3_json(),
        CardVersion::V2 => card.to_v2_json(&BackfillOptions {
            warning: false,
            stash_v3: true,
        }),
    }
}

/// Writes a card as PNG. `image` is the picture to use (else the card's own PNG, else its main
/// icon asset when that is a PNG, else a plain generated image).
pub fn write_png(cf: &CardFile, image: Option<&[u8]>, version: CardVersion) -> Result<Vec<u8>> {
    let mut card = cf.card.clone();
    let mut picture: Option<Vec<u8>> = image.map(<[u8]>::to_vec);
    if picture.is_none() {
        picture = cf.image.clone().filter(|b| png::is_png(b));
    }
    let mut chunks: Vec<(String, Vec<u8>)> = Vec::new();
    if let Some(assets) = card.data.assets.as_mut() {
        let main_icon = main_icon_index(assets);
        let mut n = 0usize;
        for (i, a) in assets.iter_mut().enumerate() {
            let embedded = matches!(
                a.parsed_uri(),
                AssetUri::Embedded(_) | AssetUri::PngChunk(_)
            );
            if !embedded {
                continue;
            }
            let Some(bytes) = asset_bytes(&a.uri, &cf.files) else {
                continue;
            };
            if Some(i) == main_icon && picture.is_none() && png::is_png(&bytes) {
                picture = Some(bytes);
                a.uri = "ccdefault:".into();
                continue;
            }
            let key = n.to_string();
            n += 1;
            a.uri = format!("__asset:{key}");
            chunks.push((
                format!("chara-ext-asset_:{key}"),
                base64_simd::STANDARD.encode_to_string(bytes).into_bytes(),
            ));
        }
    }
    let picture = picture.unwrap_or_else(png::plain_image);
    let mut text: Vec<(String, Vec<u8>)> = Vec::new();
    match version {
        CardVersion::V3 => {
            let v3 = json::to_compact(&card.v3_arranged());
            let v2 = json::to_compact(&card.to_v2_json(&BackfillOptions::default()));
            text.push((
                "chara".into(),
                png::encode_text_value(&String::from_utf8_lossy(&v2)),
            ));
            text.push((
                "ccv3".into(),
                png::encode_text_value(&String::from_utf8_lossy(&v3)),
            ));
        }
        CardVersion::V2 => {
            let v2 = json::to_compact(&card.to_v2_json(&BackfillOptions {
                warning: false,
                stash_v3: true,
            }));
            text.push((
                "chara".into(),
                png::encode_text_value(&String::from_utf8_lossy(&v2)),
            ));
        }
    }
    text.extend(chunks);
    let refs: Vec<(&str, &[u8])> = text
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_slice()))
        .collect();
    png::write_card_chunks(&picture, &refs)
}

fn main_icon_index(assets: &[Asset]) -> Option<usize> {
    assets
        .iter()
        .position(|a| a.kind == "icon" && a.name == "main")
        .or_else(|| assets.iter().position(|a| a.kind == "icon"))
}

/// Writes a card as CHARX: `card.json` plus every asset at the spec's folder, URIs rewritten.
pub fn write_charx(cf: &CardFile) -> Result<Vec<u8>> {
    let (card_json, files) = charx_layout(cf);
    charx::write_charx_to_vec(&card_json, &files)
}

/// The files of a card's CHARX form: `card.json` (pretty V3 JSON, asset URIs rewritten to
/// `embeded://`) and every other file with its path inside the archive.
pub fn charx_layout(cf: &CardFile) -> (Vec<u8>, Vec<CharxFile>) {
    let mut card = cf.card.clone();
    let mut out: Vec<CharxFile> = Vec::new();
    let mut paths = charx::PathDeduper::new();
    let mut assets = card.data.assets.take();
    if assets.is_none() && cf.image.as_deref().is_some_and(png::is_png) {
        assets = Some(Asset::default_list());
    }
    // Files the assets point at move to the spec's folders; the others (RisuAI's module.risum,
    // x_meta/...) keep their paths, which are reserved first so no asset lands on them.
    let referenced: Vec<&str> = assets
        .iter()
        .flatten()
        .filter_map(|a| match a.parsed_uri() {
            AssetUri::Embedded(p) | AssetUri::PngChunk(p) => Some(p),
            _ => None,
        })
        .collect();
    let kept: Vec<&EmbeddedFile> = cf
        .files
        .iter()
        .filter(|f| cf.container == Container::Charx && !referenced.contains(&f.path.as_str()))
        .collect();
    for f in &kept {
        paths.reserve(&f.path);
    }
    if let Some(list) = assets.as_mut() {
        for a in list.iter_mut() {
            // An asset already in this CHARX keeps its path (RisuAI's x_meta/ files name them).
            if let AssetUri::Embedded(p) = a.parsed_uri() {
                if cf.container == Container::Charx && paths.reserve(p) {
                    if let Some(f) = cf.files.iter().find(|f| f.path == p) {
                        out.push(CharxFile {
                            path: f.path.clone(),
                            data: f.data.clone(),
                        });
                        continue;
                    }
                }
            }
            let bytes = match a.parsed_uri() {
                AssetUri::Embedded(_) | AssetUri::PngChunk(_) | AssetUri::Data { .. } => {
                    asset_bytes(&a.uri, &cf.files)
                }
                AssetUri::Default if a.kind == "icon" => {
                    cf.image.clone().filter(|b| png::is_png(b))
                }
                _ => None,
            };
            let Some(bytes) = bytes else { continue };
            let is_default = matches!(a.parsed_uri(), AssetUri::Default);
            let ext = if a.ext.is_empty() || a.ext == "unknown" || is_default {
                if png::is_png(&bytes) {
                    "png".to_string()
                } else {
                    a.ext.clone()
                }
            } else {
                a.ext.to_ascii_lowercase()
            };
            if is_default {
                a.ext = ext.clone();
            }
            let kind = if a.kind.is_empty() {
                "other"
            } else {
                a.kind.as_str()
            };
            let name = if a.name.is_empty() {
                "asset"
            } else {
                a.name.as_str()
            };
            let path = paths.asset_path(kind, name, &ext);
            a.uri = format!("embeded://{path}");
            out.push(CharxFile { path, data: bytes });
        }
    }
    card.data.assets = assets;
    out.extend(kept.into_iter().map(|f| CharxFile {
        path: f.path.clone(),
        data: f.data.clone(),
    }));
    (json::to_pretty(&card.v3_arranged()), out)
}

/// Writes a lorebook as `lorebook_v3` JSON.
pub fn write_lorebook_v3(book: &Lorebook) -> Vec<u8> {
    json::to_pretty(&book.standalone())
}

/// Every diagnostic for a document: what the reader repaired plus what validation finds.
///
/// ```
/// let doc = ccv3::read_bytes(br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A",
///   "assets":[{"type":"icon","uri":"https://example.com/a.png","name":"main","ext":".PNG"}]}}"#)?;
/// let diags = ccv3::check_document(&doc);
/// assert!(diags.iter().any(|d| d.path == "data.assets[0].ext"));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn check_document(doc: &Document) -> Vec<Diagnostic> {
    let mut out = doc.diagnostics().to_vec();
    match doc {
        Document::Card(cf) => {
            let paths = || cf.files.iter().map(|f| f.path.clone()).collect();
            let ctx = match cf.container {
                Container::Charx => crate::validate::ValidateContext::charx(paths()),
                Container::Png => crate::validate::ValidateContext::png(paths()),
                _ => crate::validate::ValidateContext::default(),
            };
            out.extend(crate::validate::validate_card(&cf.card, &ctx));
        }
        Document::Lorebook(bf) => out.extend(crate::validate::validate_lorebook(&bf.book, "data")),
    }
    out
}
