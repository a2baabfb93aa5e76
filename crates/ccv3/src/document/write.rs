//! Writing a card to every container (JSON, PNG, CHARX) and a lorebook as `lorebook_v3`, the
//! assets moved with it and their URIs rewritten (module docs of [`crate::document`]).

use super::files::{CardFile, Container, EmbeddedFile};
use super::read::DeferredFiles;
use crate::backfill::BackfillOptions;
use crate::charx::{self, CharxFile};
use crate::error::{Error, Result};
use crate::model::{Asset, AssetUri, Card, Lorebook};
use crate::{json, legacy, png};
use serde_json::Value;
use std::io::{Seek, Write};

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
///
/// ```
/// let files = [ccv3::EmbeddedFile { path: "assets/icon/images/main.png".into(), data: vec![1, 2, 3] }];
/// assert_eq!(ccv3::asset_bytes("embeded://assets/icon/images/main.png", &files), Some(vec![1, 2, 3]));
/// assert_eq!(ccv3::asset_bytes("data:image/png;base64,AQID", &[]), Some(vec![1, 2, 3]));
/// assert_eq!(ccv3::asset_bytes("ccdefault:", &files), None);
/// ```
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
///
/// ```
/// assert_eq!(ccv3::media_type("PNG"), "image/png");
/// assert_eq!(ccv3::media_type("ogg"), "audio/ogg");
/// assert_eq!(ccv3::media_type("xyz"), "application/octet-stream");
/// ```
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

/// The embedded files of a card, found by path in one hash lookup (issue 12: a card with
/// 200,000 assets is written in linear time). Borrowed files are copied out; owned files are
/// moved out on their last use, so a consumed [`CardFile`] is never held twice; deferred files
/// are read from their file when asked for, so only one is held at a time.
struct Store<'a> {
    held: Held<'a>,
    /// The first file of each path (as a linear search would find it).
    index: std::collections::HashMap<String, usize>,
    /// How many more times each file will be asked for.
    uses: Vec<usize>,
    /// Bytes copied so far (a file used by several assets is copied for each but the last).
    copied: u64,
    /// A copy was refused: [`MAX_COPIED`] would have been passed.
    over: bool,
    /// The first error of reading a deferred file again.
    err: Option<Error>,
}

/// Most bytes the writers copy out of a card's files (and picture): a file named by many assets
/// is copied for each, so one 100 MiB file named by 100,000 assets would ask for 10 TB (issue
/// 12). A card read within the default limits never gets near it when every file is used once.
const MAX_COPIED: u64 = 256 << 20;

/// The error of a writer whose copies passed [`MAX_COPIED`].
fn too_many_copies() -> Error {
    Error::Limit(format!(
        "writing the card would copy more than {MAX_COPIED} bytes of its files (one file is \
         named by many assets)"
    ))
}

enum Held<'a> {
    Borrowed(&'a [EmbeddedFile]),
    Owned(Vec<EmbeddedFile>),
    /// The files' paths (their data empty) and where to read each.
    Deferred(Vec<EmbeddedFile>, &'a mut DeferredFiles),
}

/// A CHARX layout's files: each path and where its bytes are.
type Planned = Vec<(String, Src)>;

/// Bytes a writer puts out: at hand, or the `index`th file of the [`Store`], fetched only when
/// it is written (moved out when `moved`, else copied or read again).
enum Src {
    Bytes(Vec<u8>),
    File { index: usize, moved: bool },
}

impl<'a> Store<'a> {
    fn new(held: Held<'a>, assets: Option<&[Asset]>) -> Self {
        let files: &[EmbeddedFile] = match &held {
            Held::Borrowed(f) => f,
            Held::Owned(f) | Held::Deferred(f, _) => f,
        };
        let mut index = std::collections::HashMap::with_capacity(files.len());
        for (i, f) in files.iter().enumerate() {
            index.entry(f.path.clone()).or_insert(i);
        }
        let mut uses = vec![0usize; files.len()];
        for a in assets.into_iter().flatten() {
            if let AssetUri::Embedded(p) | AssetUri::PngChunk(p) = a.parsed_uri() {
                if let Some(&i) = index.get(p) {
                    if let Some(u) = uses.get_mut(i) {
                        *u += 1;
                    }
                }
            }
        }
        Store {
            held,
            index,
            uses,
            copied: 0,
            over: false,
            err: None,
        }
    }

    fn files(&self) -> &[EmbeddedFile] {
        match &self.held {
            Held::Borrowed(f) => f,
            Held::Owned(f) | Held::Deferred(f, _) => f,
        }
    }

    /// The length of the `i`th file.
    fn len_at(&self, i: usize) -> u64 {
        match &self.held {
            Held::Deferred(_, d) => d.size(i),
            _ => self.files().get(i).map_or(0, |f| f.data.len() as u64),
        }
    }

    /// Counts one use of the `i`th file: `None` when it is not there or the copy would pass
    /// [`MAX_COPIED`]. Its last use moves it (owned) or reads it a last time (deferred); every
    /// other use is a copy.
    fn claim(&mut self, i: usize) -> Option<Src> {
        let left = self.uses.get_mut(i)?;
        *left = left.saturating_sub(1);
        let last = *left == 0;
        let len = self.files().get(i).map(|_| self.len_at(i))?;
        let moved = last && !matches!(self.held, Held::Borrowed(_));
        if !moved && !self.charge(len) {
            return None;
        }
        Some(Src::File { index: i, moved })
    }

    /// The bytes of a claimed file.
    fn fetch(&mut self, index: usize, moved: bool) -> Result<Vec<u8>> {
        let missing = || Error::Parameter(format!("no embedded file number {index}"));
        match &mut self.held {
            Held::Borrowed(f) => f.get(index).map(|f| f.data.clone()).ok_or_else(missing),
            Held::Owned(f) => {
                let file = f.get_mut(index).ok_or_else(missing)?;
                Ok(if moved {
                    std::mem::take(&mut file.data)
                } else {
                    file.data.clone()
                })
            }
            Held::Deferred(_, d) => d.load(index),
        }
    }

    /// The bytes of `src`.
    fn bytes(&mut self, src: Src) -> Result<Vec<u8>> {
        match src {
            Src::Bytes(b) => Ok(b),
            Src::File { index, moved } => self.fetch(index, moved),
        }
    }

    /// The picture extension of `src` (`png`, `webp`, `jpeg`), if it is one (a deferred file is
    /// read to know; an error is kept for the writer to return).
    fn picture_ext(&mut self, src: &Src) -> Option<&'static str> {
        match (src, &mut self.held) {
            (Src::Bytes(b), _) => picture_ext(b),
            (Src::File { index, .. }, Held::Deferred(_, d)) => match d.load(*index) {
                Ok(b) => picture_ext(&b),
                Err(e) => {
                    self.err.get_or_insert(e);
                    None
                }
            },
            (Src::File { index, .. }, _) => {
                self.files().get(*index).and_then(|f| picture_ext(&f.data))
            }
        }
    }

    /// True when the copies the assets ask for would pass [`MAX_COPIED`]: known before any is
    /// made, so a strict writer refuses at once.
    fn copies_too_many(&self) -> bool {
        let owned = !matches!(self.held, Held::Borrowed(_));
        let total = (0..self.files().len())
            .zip(&self.uses)
            .map(|(i, &uses)| {
                let copies = if owned { uses.saturating_sub(1) } else { uses };
                (copies as u64).saturating_mul(self.len_at(i))
            })
            .fold(0u64, u64::saturating_add);
        total > MAX_COPIED
    }

    /// Counts a copy of `len` bytes against [`MAX_COPIED`]; false (and `over` set) past it.
    fn charge(&mut self, len: u64) -> bool {
        let total = self.copied.saturating_add(len);
        if total > MAX_COPIED {
            self.over = true;
            return false;
        }
        self.copied = total;
        true
    }

    /// One use of the file at `path` (see [`Store::claim`]).
    fn claim_path(&mut self, path: &str) -> Option<Src> {
        let i = *self.index.get(path)?;
        self.claim(i)
    }

    /// What an asset URI stands for: an embedded file, a PNG chunk or a `data:` URL.
    fn asset_src(&mut self, uri: &str) -> Option<Src> {
        match AssetUri::parse(uri) {
            AssetUri::Embedded(p) | AssetUri::PngChunk(p) => self.claim_path(p),
            AssetUri::Data { .. } => asset_bytes(uri, &[]).map(Src::Bytes),
            _ => None,
        }
    }

    /// The bytes an asset URI stands for, now.
    fn asset(&mut self, uri: &str) -> Option<Vec<u8>> {
        let src = self.asset_src(uri)?;
        match self.bytes(src) {
            Ok(b) => Some(b),
            Err(e) => {
                self.err.get_or_insert(e);
                None
            }
        }
    }

    /// The first read error, if any.
    fn check(&mut self) -> Result<()> {
        self.err.take().map_or(Ok(()), Err)
    }
}

/// Writes a card as JSON (pretty), embedded assets turned into `data:` URLs. Copies of the
/// card's files past 256 MiB in all (one file named by very many assets) are not made: those
/// assets keep their URIs ([`write_card_to`] refuses such a card instead).
///
/// ```
/// let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#;
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(text)? else { panic!() };
/// let v2 = ccv3::write_json(&cf, ccv3::CardVersion::V2);
/// assert!(std::str::from_utf8(&v2).unwrap().contains("chara_card_v2"));
/// let ccv3::Document::Card(back) = ccv3::read_bytes(&v2)? else { panic!() };
/// assert_eq!(back.card.data.name, "A");
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn write_json(cf: &CardFile, version: CardVersion) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    let store = Store::new(Held::Borrowed(&cf.files), cf.card.data.assets.as_deref());
    // Writing to memory cannot fail, and copies past the bound are skipped, not refused.
    let _ = json_into(cf.card.clone(), store, version, false, &mut out);
    out
}

/// Writes the card as JSON into `out`; `strict` refuses a card whose copies passed
/// [`MAX_COPIED`] (else those assets keep their URIs).
fn json_into<W: Write>(
    mut card: Card,
    mut store: Store<'_>,
    version: CardVersion,
    strict: bool,
    mut out: W,
) -> Result<()> {
    if strict && store.copies_too_many() {
        return Err(too_many_copies());
    }
    if let Some(assets) = card.data.assets.as_mut() {
        for a in assets.iter_mut() {
            if matches!(
                a.parsed_uri(),
                AssetUri::Embedded(_) | AssetUri::PngChunk(_)
            ) {
                if let Some(bytes) = store.asset(&a.uri) {
                    a.uri = format!(
                        "data:{};base64,{}",
                        media_type(&a.ext),
                        base64_simd::STANDARD.encode_to_string(bytes)
                    );
                }
            }
        }
    }
    store.check()?;
    if strict && store.over {
        return Err(too_many_copies());
    }
    drop(store);
    match version {
        // Written straight from the model, without a tree.
        CardVersion::V3 => json::write(&mut out, &card.v3_arranged(), true)?,
        CardVersion::V2 => json::write(&mut out, &card_json(&card, version), true)?,
    }
    out.write_all(b"\n")?;
    Ok(())
}

/// The card as a JSON value of the given version.
///
/// ```
/// let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#;
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(text)? else { panic!() };
/// let v2 = ccv3::card_json(&cf.card, ccv3::CardVersion::V2);
/// assert_eq!(v2["spec"], "chara_card_v2");
/// assert_eq!(v2["data"]["name"], "A");
/// # Ok::<(), ccv3::Error>(())
/// ```
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
///
/// ```
/// let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#;
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(text)? else { panic!() };
/// // No picture given and none in the card: a plain generated image carries it.
/// let png = ccv3::write_png(&cf, None, ccv3::CardVersion::V3)?;
/// assert!(png.starts_with(b"\x89PNG"));
/// let ccv3::Document::Card(back) = ccv3::read_bytes(&png)? else { panic!() };
/// assert_eq!((back.container, back.card.data.name.as_str()), (ccv3::Container::Png, "A"));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn write_png(cf: &CardFile, image: Option<&[u8]>, version: CardVersion) -> Result<Vec<u8>> {
    let picture = match image {
        Some(b) => Picture::Given(b.to_vec()),
        None => Picture::Own(cf.image.clone()),
    };
    let store = Store::new(Held::Borrowed(&cf.files), cf.card.data.assets.as_deref());
    let mut out = Vec::new();
    png_into(cf.card.clone(), store, picture, version, &mut out)?;
    Ok(out)
}

/// The picture a card's PNG is written into.
enum Picture {
    /// The caller's: written as given (a picture that cannot carry a card is an error).
    Given(Vec<u8>),
    /// The card's own, if any: kept when it can carry a card, else left out for the card's PNG
    /// main icon or the plain image.
    Own(Option<Vec<u8>>),
}

fn png_into<W: Write>(
    mut card: Card,
    mut store: Store<'_>,
    picture: Picture,
    version: CardVersion,
    out: W,
) -> Result<()> {
    // The card's own picture is walked once, here, and that walk is the one the writer uses.
    let (mut picture, carrier) = match picture {
        Picture::Given(b) => (Some(b), None),
        Picture::Own(own) => (None, own.and_then(|b| png::Carrier::new(b).ok())),
    };
    if store.copies_too_many() {
        return Err(too_many_copies());
    }
    // The asset chunks' values, fetched and encoded one at a time as they are written.
    let mut chunks: Vec<(String, Src)> = Vec::new();
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
            let Some(mut src) = store.asset_src(&a.uri) else {
                continue;
            };
            if Some(i) == main_icon && picture.is_none() && carrier.is_none() {
                let bytes = store.bytes(src)?;
                if png::is_png(&bytes) {
                    picture = Some(bytes);
                    a.uri = "ccdefault:".into();
                    continue;
                }
                src = Src::Bytes(bytes);
            }
            let key = n.to_string();
            n += 1;
            a.uri = format!("__asset:{key}");
            chunks.push((format!("chara-ext-asset_:{key}"), src));
        }
    }
    if store.over {
        return Err(too_many_copies());
    }
    let carrier = match carrier {
        Some(c) => c,
        None => png::Carrier::new(picture.unwrap_or_else(png::plain_image))?,
    };
    let mut text: Vec<(String, Src)> = Vec::new();
    // Each JSON text is dropped as soon as it is encoded.
    let encode = |v: Vec<u8>| png::encode_text_value(&String::from_utf8_lossy(&v));
    match version {
        CardVersion::V3 => {
            let v2 = encode(json::to_compact(
                &card.to_v2_json(&BackfillOptions::default()),
            ));
            text.push(("chara".into(), Src::Bytes(v2)));
            let v3 = encode(json::to_compact(&card.v3_arranged()));
            text.push(("ccv3".into(), Src::Bytes(v3)));
        }
        CardVersion::V2 => {
            let v2 = encode(json::to_compact(&card.to_v2_json(&BackfillOptions {
                warning: false,
                stash_v3: true,
            })));
            text.push(("chara".into(), Src::Bytes(v2)));
        }
    }
    drop(card);
    let cards = text.len();
    text.extend(chunks);
    let keywords: Vec<String> = text.iter().map(|(k, _)| k.clone()).collect();
    let mut values: Vec<Option<Src>> = text.into_iter().map(|(_, v)| Some(v)).collect();
    png::write_card_chunks_with(&carrier, &keywords, out, |i| {
        let src = values
            .get_mut(i)
            .and_then(Option::take)
            .ok_or_else(|| Error::Parameter(format!("no PNG text chunk number {i}")))?;
        let bytes = store.bytes(src)?;
        Ok(if i < cards {
            bytes
        } else {
            base64_simd::STANDARD.encode_to_string(bytes).into_bytes()
        })
    })
}
pub(super) fn main_icon_index(assets: &[Asset]) -> Option<usize> {
    assets
        .iter()
        .position(|a| a.kind == "icon" && a.name == "main")
        .or_else(|| assets.iter().position(|a| a.kind == "icon"))
}

/// Writes a card as CHARX: `card.json` plus every asset at the spec's folder, URIs rewritten.
///
/// ```
/// let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#;
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(text)? else { panic!() };
/// let zip = ccv3::write_charx(&cf)?;
/// let ccv3::Document::Card(back) = ccv3::read_bytes(&zip)? else { panic!() };
/// assert_eq!(back.container, ccv3::Container::Charx);
/// assert_eq!(back.card.data.name, "A");
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn write_charx(cf: &CardFile) -> Result<Vec<u8>> {
    let store = Store::new(Held::Borrowed(&cf.files), cf.card.data.assets.as_deref());
    let mut out = std::io::Cursor::new(Vec::new());
    charx_into(
        cf.card.clone(),
        cf.container,
        cf.image.as_deref(),
        store,
        &mut out,
    )?;
    Ok(out.into_inner())
}

/// Lays the card out as a CHARX and writes it, each file fetched only when it is written.
fn charx_into<W: Write + Seek>(
    card: Card,
    container: Container,
    image: Option<&[u8]>,
    mut store: Store<'_>,
    out: W,
) -> Result<()> {
    let (card_json, planned) = layout(card, container, image, &mut store)?;
    let mut srcs: Vec<Option<Src>> = Vec::with_capacity(planned.len());
    let mut names = Vec::with_capacity(planned.len());
    for (path, src) in planned {
        names.push(path);
        srcs.push(Some(src));
    }
    charx::write_charx_with(out, &card_json, &names, |i| {
        let src = srcs
            .get_mut(i)
            .and_then(Option::take)
            .ok_or_else(|| Error::Parameter(format!("no CHARX file number {i}")))?;
        store.bytes(src)
    })
}

/// Writes a card to `out` in the container `to` (JSON, PNG or CHARX), as [`write_json`],
/// [`write_png`] and [`write_charx`] do, but consuming the card: each embedded file is moved
/// into the output instead of copied, and the output is streamed to `out` instead of built in
/// memory, so a card is never held twice (issue 12). `image` is the picture of a PNG output
/// (else the card's own PNG, else its main icon when that is a PNG, else a plain image).
///
/// # Errors
///
/// [`Error::Parameter`] for a WebP or JPEG output or a V2 CHARX; the writers' errors; I/O errors.
///
/// ```
/// let doc = ccv3::read_bytes(br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#)?;
/// let ccv3::Document::Card(cf) = doc else { panic!() };
/// let expected = ccv3::write_json(&cf, ccv3::CardVersion::V3);
/// let mut out = std::io::Cursor::new(Vec::new());
/// ccv3::write_card_to(cf, ccv3::Container::Json, ccv3::CardVersion::V3, None, &mut out)?;
/// assert_eq!(out.into_inner(), expected);
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn write_card_to<W: Write + Seek>(
    cf: CardFile,
    to: Container,
    version: CardVersion,
    image: Option<Vec<u8>>,
    out: W,
) -> Result<()> {
    write_card_impl(cf, None, to, version, image, out)
}

/// [`write_card_to`] for a card read by [`read_file_deferred`](crate::read_file_deferred): each embedded file is read
/// from `files` when it is written and dropped once written, so the output is written with
/// one asset in memory at a time (a JSON output holds its `data:` URLs in the card text).
///
/// # Errors
///
/// As [`write_card_to`], and the errors of reading a file again ([`Error::Io`]; [`Error::Png`]
/// or [`Error::Charx`] when the file changed since it was read).
///
/// ```
/// // A CHARX with one asset, written to a file.
/// let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A",
///   "assets":[{"type":"icon","uri":"data:image/png;base64,AQID","name":"main","ext":"png"}]}}"#;
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(text)? else { panic!() };
/// let path = std::env::temp_dir().join("ccv3-doc-write-card-deferred.charx");
/// std::fs::write(&path, ccv3::write_charx(&cf)?)?;
/// // Read it, leaving the asset in the file.
/// let (doc, mut files) = ccv3::read_file_deferred(&path, &ccv3::ReadOptions::default())?;
/// let ccv3::Document::Card(cf) = doc else { panic!() };
/// assert!(cf.files.iter().all(|f| f.data.is_empty()));
/// let mut out = std::io::Cursor::new(Vec::new());
/// ccv3::write_card_deferred(cf, &mut files, ccv3::Container::Png, ccv3::CardVersion::V3, None, &mut out)?;
/// let ccv3::Document::Card(back) = ccv3::read_bytes(out.get_ref())? else { panic!() };
/// assert_eq!(back.files[0].data, [1, 2, 3]);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn write_card_deferred<W: Write + Seek>(
    cf: CardFile,
    files: &mut DeferredFiles,
    to: Container,
    version: CardVersion,
    image: Option<Vec<u8>>,
    out: W,
) -> Result<()> {
    write_card_impl(cf, Some(files), to, version, image, out)
}

fn write_card_impl<W: Write + Seek>(
    cf: CardFile,
    deferred: Option<&mut DeferredFiles>,
    to: Container,
    version: CardVersion,
    image: Option<Vec<u8>>,
    out: W,
) -> Result<()> {
    let CardFile {
        card,
        container,
        files,
        image: own_image,
        ..
    } = cf;
    let held = match deferred {
        Some(d) if d.holds_files() => Held::Deferred(files, d),
        _ => Held::Owned(files),
    };
    match (to, version) {
        (Container::Json, _) => {
            let store = Store::new(held, card.data.assets.as_deref());
            json_into(card, store, version, true, std::io::BufWriter::new(out))
        }
        (Container::Png, _) => {
            let picture = match image {
                Some(b) => Picture::Given(b),
                None => Picture::Own(own_image),
            };
            let store = Store::new(held, card.data.assets.as_deref());
            png_into(card, store, picture, version, std::io::BufWriter::new(out))
        }
        (Container::Charx, CardVersion::V3) => {
            let store = Store::new(held, card.data.assets.as_deref());
            charx_into(card, container, own_image.as_deref(), store, out)
        }
        (Container::Charx, CardVersion::V2) => Err(Error::Parameter(
            "CHARX holds V3 cards only: write V2 cards as JSON or PNG".into(),
        )),
        (other, _) => Err(Error::Parameter(format!(
            "cards are written as JSON, PNG or CHARX, not {}",
            other.label()
        ))),
    }
}

/// The files of a card's CHARX form: `card.json` (pretty V3 JSON, asset URIs rewritten to
/// `embeded://`) and every other file with its path inside the archive. Copies of the card's
/// files past 256 MiB in all (one file named by very many assets) are left out, their assets'
/// URIs unchanged; [`write_charx`] and [`write_card_to`] refuse such a card instead.
///
/// ```
/// let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A",
///   "assets":[{"type":"icon","uri":"data:image/png;base64,AQID","name":"main","ext":"png"}]}}"#;
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(text)? else { panic!() };
/// let (card_json, files) = ccv3::charx_layout(&cf);
/// let card: serde_json::Value = serde_json::from_slice(&card_json).unwrap();
/// assert_eq!(card["data"]["assets"][0]["uri"], format!("embeded://{}", files[0].path));
/// assert_eq!(files[0].data, [1, 2, 3]);
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn charx_layout(cf: &CardFile) -> (Vec<u8>, Vec<CharxFile>) {
    let mut store = Store::new(Held::Borrowed(&cf.files), cf.card.data.assets.as_deref());
    let (card_json, planned) = layout_inner(
        cf.card.clone(),
        cf.container,
        cf.image.as_deref(),
        &mut store,
    );
    let mut files = Vec::with_capacity(planned.len());
    for (path, src) in planned {
        // Borrowed files are copied: this cannot fail.
        if let Ok(data) = store.bytes(src) {
            files.push(CharxFile { path, data });
        }
    }
    (card_json, files)
}

/// [`charx_layout`], consuming the card: its files are moved into the layout, not copied.
///
/// # Errors
///
/// [`Error::Limit`] when a file named by many assets would be copied past 256 MiB in all.
///
/// ```
/// let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A",
///   "assets":[{"type":"icon","uri":"data:image/png;base64,AQID","name":"main","ext":"png"}]}}"#;
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(text)? else { panic!() };
/// let (_card_json, files) = ccv3::into_charx_layout(cf)?;
/// assert_eq!(files.len(), 1);
/// assert_eq!(files[0].data, [1, 2, 3]);
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn into_charx_layout(cf: CardFile) -> Result<(Vec<u8>, Vec<CharxFile>)> {
    let mut files = Vec::new();
    let card_json = charx_layout_impl(cf, None, |f| {
        files.push(f);
        Ok(())
    })?;
    Ok((card_json, files))
}

/// [`into_charx_layout`] for a card read by [`read_file_deferred`](crate::read_file_deferred), handing each file to `each`
/// as soon as it is read (and dropping it after), so only one is held at a time (issue 12:
/// `ccv3 extract`). Returns `card.json`, whose URIs name the paths the files were given.
///
/// # Errors
///
/// As [`into_charx_layout`], the errors of reading a file again (see
/// [`write_card_deferred`]), and whatever `each` returns (which stops the walk).
///
/// ```
/// // A CHARX with one asset, written to a file.
/// let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A",
///   "assets":[{"type":"icon","uri":"data:image/png;base64,AQID","name":"main","ext":"png"}]}}"#;
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(text)? else { panic!() };
/// let path = std::env::temp_dir().join("ccv3-doc-charx-layout-deferred.charx");
/// std::fs::write(&path, ccv3::write_charx(&cf)?)?;
/// // Read it, leaving the asset in the file.
/// let (doc, mut files) = ccv3::read_file_deferred(&path, &ccv3::ReadOptions::default())?;
/// let ccv3::Document::Card(cf) = doc else { panic!() };
/// assert!(cf.files.iter().all(|f| f.data.is_empty()));
/// let mut written = Vec::new();
/// let card_json = ccv3::charx_layout_deferred(cf, &mut files, |f| {
///     written.push((f.path, f.data)); // one file in memory at a time
///     Ok(())
/// })?;
/// assert_eq!(written[0].1, [1, 2, 3]);
/// assert!(String::from_utf8(card_json).unwrap().contains(&format!("embeded://{}", written[0].0)));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn charx_layout_deferred(
    cf: CardFile,
    files: &mut DeferredFiles,
    each: impl FnMut(CharxFile) -> Result<()>,
) -> Result<Vec<u8>> {
    charx_layout_impl(cf, Some(files), each)
}

fn charx_layout_impl(
    cf: CardFile,
    deferred: Option<&mut DeferredFiles>,
    mut each: impl FnMut(CharxFile) -> Result<()>,
) -> Result<Vec<u8>> {
    let held = match deferred {
        Some(d) if d.holds_files() => Held::Deferred(cf.files, d),
        _ => Held::Owned(cf.files),
    };
    let mut store = Store::new(held, cf.card.data.assets.as_deref());
    let (card_json, planned) = layout(cf.card, cf.container, cf.image.as_deref(), &mut store)?;
    for (path, src) in planned {
        let data = store.bytes(src)?;
        each(CharxFile { path, data })?;
    }
    Ok(card_json)
}

/// [`layout_inner`], refusing a layout whose copies passed [`MAX_COPIED`] or whose files could
/// not be read again.
fn layout(
    card: Card,
    container: Container,
    image: Option<&[u8]>,
    store: &mut Store<'_>,
) -> Result<(Vec<u8>, Planned)> {
    if store.copies_too_many() {
        return Err(too_many_copies());
    }
    let out = layout_inner(card, container, image, store);
    store.check()?;
    if store.over {
        return Err(too_many_copies());
    }
    Ok(out)
}

/// Lays the card out as a CHARX: `card.json` and each file's path with where its bytes are
/// (fetched only when written).
fn layout_inner(
    mut card: Card,
    container: Container,
    image: Option<&[u8]>,
    store: &mut Store<'_>,
) -> (Vec<u8>, Planned) {
    let mut out: Vec<(String, Src)> = Vec::new();
    let mut paths = charx::PathDeduper::new();
    let mut assets = card.data.assets.take();
    if assets.is_none() && image.is_some_and(|b| picture_ext(b).is_some()) {
        assets = Some(Asset::default_list());
    }
    // Files the assets point at move to the spec's folders; the others (RisuAI's module.risum,
    // x_meta/...) keep their paths, which are reserved first so no asset lands on them.
    let referenced: std::collections::HashSet<&str> = assets
        .iter()
        .flatten()
        .filter_map(|a| match a.parsed_uri() {
            AssetUri::Embedded(p) | AssetUri::PngChunk(p) => Some(p),
            _ => None,
        })
        .collect();
    let kept: Vec<usize> = if container == Container::Charx {
        store
            .files()
            .iter()
            .enumerate()
            .filter(|(_, f)| !referenced.contains(f.path.as_str()))
            .map(|(i, _)| i)
            .collect()
    } else {
        Vec::new()
    };
    drop(referenced);
    for &i in &kept {
        if let Some(f) = store.files().get(i) {
            let path = f.path.clone();
            paths.reserve(&path);
        }
    }
    if let Some(list) = assets.as_mut() {
        for a in list.iter_mut() {
            // An asset already in this CHARX keeps its path (RisuAI's x_meta/ files name them).
            if let AssetUri::Embedded(p) = a.parsed_uri() {
                if container == Container::Charx && paths.reserve(p) {
                    if let Some(src) = store.claim_path(p) {
                        out.push((p.to_string(), src));
                        continue;
                    }
                }
            }
            let src = match a.parsed_uri() {
                AssetUri::Embedded(_) | AssetUri::PngChunk(_) | AssetUri::Data { .. } => {
                    store.asset_src(&a.uri)
                }
                // The card's own picture: a PNG, or a TavernAI-era WebP/JPEG (issue 13).
                AssetUri::Default if a.kind == "icon" => image
                    .filter(|b| picture_ext(b).is_some() && store.charge(b.len() as u64))
                    .map(|b| Src::Bytes(b.to_vec())),
                _ => None,
            };
            let Some(src) = src else { continue };
            let is_default = matches!(a.parsed_uri(), AssetUri::Default);
            let ext = if a.ext.is_empty() || a.ext == "unknown" || is_default {
                match store.picture_ext(&src) {
                    Some(ext) => ext.to_string(),
                    None => a.ext.clone(),
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
            out.push((path, src));
        }
    }
    card.data.assets = assets;
    for i in kept {
        let path = store.files().get(i).map(|f| f.path.clone());
        // Kept files are asked for once each: moved when owned.
        if let Some(u) = store.uses.get_mut(i) {
            *u = 1;
        }
        if let (Some(path), Some(src)) = (path, store.claim(i)) {
            out.push((path, src));
        }
    }
    (json::to_pretty(&card.v3_arranged()), out)
}

/// Writes a lorebook as `lorebook_v3` JSON.
///
/// ```
/// let text = br#"{"spec":"lorebook_v3","data":{"name":"World","entries":[
///   {"keys":["dragon"],"content":"Dragons breathe fire.","enabled":true,"insertion_order":0,"use_regex":false,"extensions":{}}],
///   "extensions":{}}}"#;
/// let ccv3::Document::Lorebook(bf) = ccv3::read_bytes(text)? else { panic!() };
/// let out = ccv3::write_lorebook_v3(&bf.book);
/// let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
/// assert_eq!(v["spec"], "lorebook_v3");
/// assert_eq!(v["data"]["entries"][0]["keys"][0], "dragon");
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn write_lorebook_v3(book: &Lorebook) -> Vec<u8> {
    json::to_pretty(&book.standalone())
}

/// The file extension of a picture a card can be embedded in (`png`, `webp`, `jpeg`), sniffed
/// from its bytes.
pub(super) fn picture_ext(bytes: &[u8]) -> Option<&'static str> {
    if png::is_png(bytes) {
        Some("png")
    } else if legacy::is_webp(bytes) {
        Some("webp")
    } else if legacy::is_jpeg(bytes) {
        Some("jpeg")
    } else {
        None
    }
}
