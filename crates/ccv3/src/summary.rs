//! A card's summary for a library's character list ([`CardSummary`]): name, nickname, creator,
//! tags, version, container and counts, read without building the card (issue 29).
//!
//! [`read_summary_bytes`], [`read_summary_file`] and [`read_summary_seekable`] sniff the
//! container as the full readers do and find the card text the same way (a PNG's `ccv3`
//! chunk, else its `chara` chunk, the picture seeked past; a CHARX's `card.json`, the assets
//! neither decompressed nor checked; a JPEG's or WebP's EXIF; a JSON file), then read only the
//! listed fields from it: the entries, assets and greetings are counted, not built, and no other
//! text is copied. Whenever the card text is not plainly a wrapped V2/V3 card whose listed
//! fields have their spec types (a V1 card, a field of the wrong type, a hybrid card, a V2 card
//! with a V3 stash, another application's format, a BYAF or Voxta package, anything over a
//! limit), the full reader reads the file and the summary is taken from its card
//! ([`CardSummary::from_card`]): the summary always agrees with the full read, and has its
//! errors (except for a CHARX's damaged assets, which the summary does not read).

use crate::document::CardFile;
use crate::error::{Error, Result};
use crate::{charx, legacy, png, Card, Container, Document, ReadOptions};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use text::Text;

mod permanent;
mod text;
use permanent::Permanent;
pub use permanent::{permanent_tokens, PERMANENT_FIELDS};

/// A token counter for the permanent fields, when the caller asked for their count.
type Counter<'a> = Option<&'a dyn Fn(&str) -> usize>;

/// What a character list shows of a card: [`read_summary_bytes`] and [`read_summary_file`]
/// read it without building the card; [`CardSummary::from_card`] takes it from a card read in
/// full (the two agree).
///
/// Serialized with these field names (`ccv3 inspect --summary --json`, npm `readCardSummary`,
/// Python `read_card_summary`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CardSummary {
    /// `data.name`.
    pub name: String,
    /// `data.nickname` (V3), `None` when absent or `null`.
    pub nickname: Option<String>,
    /// `data.creator`.
    pub creator: String,
    /// `data.tags`, as read.
    pub tags: Vec<String>,
    /// The version the card was written in: `V1`, `V2` or `V3` ([`crate::SpecVersion::label`]).
    pub spec: String,
    /// `spec_version` as the full reader gives it ([`Card::spec_version`]).
    pub spec_version: String,
    /// The container: `JSON`, `PNG`, `CHARX`, `WebP`, `JPEG`, `BYAF` or `Voxta`
    /// ([`Container::label`]).
    pub container: String,
    /// Greetings a chat can open with: `first_mes` (1 when not empty) plus every
    /// `alternate_greetings` item (`group_only_greetings` are not counted), as `ccv3 index`
    /// counts them.
    pub greetings: usize,
    /// Entries of the embedded lorebook (`data.character_book.entries`), 0 without one.
    pub entries: usize,
    /// Items of `data.assets`, 0 when it is absent (not the spec's default list of one icon).
    pub assets: usize,
    /// The tokens of the permanent fields ([`PERMANENT_FIELDS`]) when they were asked for (the
    /// `count` of [`read_summary_bytes`] and its siblings); `None` (and not serialized) otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permanent_tokens: Option<usize>,
}

impl CardSummary {
    /// The summary of a card read in full from `container`.
    pub fn from_card(card: &Card, container: Container) -> CardSummary {
        let d = &card.data;
        CardSummary {
            name: d.name.clone(),
            nickname: d.nickname.clone(),
            creator: d.creator.clone(),
            tags: d.tags.clone(),
            spec: card
                .origin
                .map_or("V3", crate::SpecVersion::label)
                .to_string(),
            spec_version: card.spec_version.clone(),
            container: container.label().to_string(),
            greetings: usize::from(!d.first_mes.is_empty()) + d.alternate_greetings.len(),
            entries: d.character_book.as_ref().map_or(0, |b| b.entries.len()),
            assets: d.assets.as_ref().map_or(0, Vec::len),
            permanent_tokens: None,
        }
    }

    /// The summary of a card read in full, its permanent tokens counted when `count` is given.
    fn from_card_counted(card: &Card, container: Container, count: Counter<'_>) -> CardSummary {
        CardSummary {
            permanent_tokens: count.map(|c| permanent_tokens(card, c)),
            ..CardSummary::from_card(card, container)
        }
    }
}

/// The summary of a card in `bytes` (any container [`crate::read_bytes_with`] reads, with the
/// limits of `opts`). With `count` (a tokenizer's count of one text), the permanent fields'
/// tokens ([`PERMANENT_FIELDS`]) are counted into [`CardSummary::permanent_tokens`].
///
/// ```
/// let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","tags":["x"],
///   "first_mes":"Hi","alternate_greetings":["Yo"],"character_book":{"entries":[{},{}]}}}"#;
/// let s = ccv3::read_summary_bytes(text, &ccv3::ReadOptions::default(), None)?;
/// assert_eq!((s.name.as_str(), s.greetings, s.entries), ("A", 2, 2));
/// assert_eq!((s.container.as_str(), s.permanent_tokens), ("JSON", None));
/// // The permanent tokens, counted here in words.
/// let words = |t: &str| t.split_whitespace().count();
/// let s = ccv3::read_summary_bytes(text, &ccv3::ReadOptions::default(), Some(&words))?;
/// assert_eq!(s.permanent_tokens, Some(1));
/// # Ok::<(), ccv3::Error>(())
/// ```
///
/// # Errors
///
/// As [`crate::read_bytes_with`]; [`Error::Format`] for a lorebook.
pub fn read_summary_bytes(
    bytes: &[u8],
    opts: &ReadOptions,
    count: Option<&dyn Fn(&str) -> usize>,
) -> Result<CardSummary> {
    let fast = if png::is_png(bytes) {
        summary_of_png(&mut std::io::Cursor::new(bytes), opts, count)?
    } else {
        summary_of_loaded(bytes, opts, count)?
    };
    match fast {
        Some(s) => Ok(s),
        None => summary_of_document(crate::read_bytes_with(bytes, opts)?, count),
    }
}

/// The summary of the card in the file at `path` (any container [`crate::read_file_with`]
/// reads, with the limits of `opts`): a PNG's picture is seeked past, only a CHARX's
/// `card.json` is read. `count` as for [`read_summary_bytes`].
///
/// # Errors
///
/// As [`crate::read_file_with`]; [`Error::Format`] for a lorebook.
///
/// ```
/// let path = std::env::temp_dir().join("ccv3-doc-read-summary-file.json");
/// std::fs::write(&path, r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","creator":"me","tags":["x"],"scenario":"A forge."}}"#)?;
/// let s = ccv3::read_summary_file(&path, &ccv3::ReadOptions::default(), None)?;
/// assert_eq!((s.name.as_str(), s.creator.as_str(), s.tags.len()), ("A", "me", 1));
/// let words = |t: &str| t.split_whitespace().count();
/// let s = ccv3::read_summary_file(&path, &ccv3::ReadOptions::default(), Some(&words))?;
/// assert_eq!(s.permanent_tokens, Some(3));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn read_summary_file(
    path: &Path,
    opts: &ReadOptions,
    count: Option<&dyn Fn(&str) -> usize>,
) -> Result<CardSummary> {
    let file = std::fs::File::open(path)?;
    let mut r = std::io::BufReader::with_capacity(64 * 1024, file);
    match summary_of_source(&mut r, opts, count)? {
        Some(s) => Ok(s),
        None => summary_of_document(crate::read_file_with(path, opts)?, count),
    }
}

/// The summary of the card in a random-access source (a JavaScript `Uint8Array` behind a
/// binding, say), read from its current position as [`crate::read_seekable_with`] reads it: a
/// PNG's picture is seeked past, never copied; of a CHARX only `card.json` is read; any other
/// container is read whole, up to [`ReadOptions::max_file_len`]. `count` as for
/// [`read_summary_bytes`].
///
/// # Errors
///
/// As [`crate::read_seekable_with`]; [`Error::Format`] for a lorebook.
///
/// ```
/// // A PNG card: its picture is seeked past, never read.
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","personality":"Warm."}}"#)? else { panic!() };
/// let png = ccv3::write_png(&cf, None, ccv3::CardVersion::V3)?;
/// let s = ccv3::read_summary_seekable(std::io::Cursor::new(&png), &ccv3::ReadOptions::default(), None)?;
/// assert_eq!((s.name.as_str(), s.container.as_str()), ("A", "PNG"));
/// let words = |t: &str| t.split_whitespace().count();
/// let s = ccv3::read_summary_seekable(std::io::Cursor::new(&png), &ccv3::ReadOptions::default(), Some(&words))?;
/// assert_eq!(s.permanent_tokens, Some(2));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn read_summary_seekable<R: Read + Seek>(
    mut r: R,
    opts: &ReadOptions,
    count: Option<&dyn Fn(&str) -> usize>,
) -> Result<CardSummary> {
    let start = r.stream_position()?;
    if let Some(s) = summary_of_source(&mut r, opts, count)? {
        return Ok(s);
    }
    r.seek(SeekFrom::Start(start))?;
    summary_of_document(crate::read_seekable_with(r, opts)?, count)
}

/// The summary read from a source's current position, or `None` when the full reader must
/// decide (the source is then anywhere). A PNG is read in place (its picture seeked past), of a
/// zip only the directory and `card.json`; anything else is read whole.
fn summary_of_source<R: Read + Seek>(
    r: &mut R,
    opts: &ReadOptions,
    count: Counter<'_>,
) -> Result<Option<CardSummary>> {
    let start = r.stream_position()?;
    let mut head = [0u8; 8];
    let mut n = 0;
    while n < head.len() {
        match r.read(&mut head[n..])? {
            0 => break,
            k => n += k,
        }
    }
    r.seek(SeekFrom::Start(start))?;
    let head = head.get(..n).unwrap_or_default();
    if png::is_png(head) {
        return summary_of_png(r, opts, count);
    }
    if head.starts_with(b"PK\x03\x04") {
        // A zip: only its directory and `card.json` are read, never the whole file.
        return Ok(charx::read_charx_card_json(&mut *r, &opts.charx)
            .ok()
            .and_then(|text| summary_of_card_json(&text, opts, count)));
    }
    let len = r.seek(SeekFrom::End(0))?.saturating_sub(start);
    r.seek(SeekFrom::Start(start))?;
    if len > opts.max_file_len {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    r.take(opts.max_file_len.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > opts.max_file_len {
        return Ok(None);
    }
    summary_of_loaded(&bytes, opts, count)
}

/// The summary of a PNG from its card chunks, as the full reader picks them (`ccv3` first,
/// then `chara`); `None` when the full reader must decide (a broken chunk, no card chunk, a
/// card text the summary does not read).
fn summary_of_png<R: Read + Seek>(
    r: &mut R,
    opts: &ReadOptions,
    count: Counter<'_>,
) -> Result<Option<CardSummary>> {
    let start = r.stream_position()?;
    let limits = png::Limits {
        read_chara: false,
        verify_crc: false,
        ..opts.png
    };
    let Ok(chunks) = png::read_card_chunks(&mut *r, &limits) else {
        return Ok(None);
    };
    if let Some(text) = &chunks.ccv3 {
        // A `ccv3` chunk that holds a card is the one the full reader reads.
        return Ok(summary_or_card(text, opts, Container::Png, count));
    }
    if !chunks.chara_skipped {
        return Ok(None);
    }
    r.seek(SeekFrom::Start(start))?;
    let limits = png::Limits {
        read_chara: true,
        ..limits
    };
    let Ok(chunks) = png::read_card_chunks(&mut *r, &limits) else {
        return Ok(None);
    };
    Ok(match (&chunks.ccv3, &chunks.chara) {
        (None, Some(text)) => summary_or_card(text, opts, Container::Png, count),
        _ => None,
    })
}

/// The summary of a whole file's bytes that are not a PNG: a zip after a prefix, a JPEG, a
/// WebP or JSON text; `None` when the full reader must decide.
fn summary_of_loaded(
    bytes: &[u8],
    opts: &ReadOptions,
    count: Counter<'_>,
) -> Result<Option<CardSummary>> {
    if png::is_png(bytes) {
        return Ok(None);
    }
    if charx::looks_like_charx(bytes) {
        // Only `card.json` is decompressed (a BYAF or Voxta package has none: the full
        // reader's). The reader's type is the full reader's, so that the zip code is shared.
        let mut cursor = std::io::Cursor::new(bytes);
        return Ok(charx::read_charx_card_json(&mut &mut cursor, &opts.charx)
            .ok()
            .and_then(|text| summary_of_card_json(&text, opts, count)));
    }
    let (text, container) = if legacy::is_jpeg(bytes) {
        (legacy::read_jpeg_card(bytes)?, Container::Jpeg)
    } else if legacy::is_webp(bytes) {
        (legacy::read_webp_card(bytes)?, Container::Webp)
    } else {
        return Ok(summarize_text(bytes, opts, Container::Json, count));
    };
    // The EXIF text is decoded once: read by the summary, or in full as the full reader does.
    match summarize_text(text.as_bytes(), opts, container, count) {
        Some(s) => Ok(Some(s)),
        None => Ok(Some(CardSummary::from_card_counted(
            &crate::document::card_from_image_text(&text, opts)?,
            container,
            count,
        ))),
    }
}

/// The summary of a CHARX's `card.json`, or of the card the full reader makes of it; `None`
/// when it holds no card (a BYAF or Voxta package has no `card.json`: the full reader's).
fn summary_of_card_json(
    text: &[u8],
    opts: &ReadOptions,
    count: Counter<'_>,
) -> Option<CardSummary> {
    summarize_text(text, opts, Container::Charx, count).or_else(|| {
        let card = crate::document::card_from_card_json(text, opts).ok()?;
        Some(CardSummary::from_card_counted(
            &card,
            Container::Charx,
            count,
        ))
    })
}

/// The summary of a card chunk's text, or the summary of the card the full reader makes of the
/// text (a V1 card, a repaired one) without walking the file again; `None` when the text holds
/// no card (the full reader then decides, and gives its error).
fn summary_or_card(
    text: &str,
    opts: &ReadOptions,
    container: Container,
    count: Counter<'_>,
) -> Option<CardSummary> {
    summarize_text(text.as_bytes(), opts, container, count).or_else(|| {
        let card = crate::document::card_from_image_text(text, opts).ok()?;
        Some(CardSummary::from_card_counted(&card, container, count))
    })
}

/// The summary of a document read in full; a lorebook is an error.
fn summary_of_document(doc: Document, count: Counter<'_>) -> Result<CardSummary> {
    match doc {
        Document::Card(CardFile {
            card, container, ..
        }) => Ok(CardSummary::from_card_counted(&card, container, count)),
        Document::Lorebook(_) => Err(Error::format(
            "",
            "a lorebook, not a character card: it has no card summary",
        )),
    }
}

/// The summary of card JSON text, when it is plainly a wrapped V2/V3 card within the limits of
/// `opts` (and, when counted, its permanent fields are strings); `None` sends the caller to the
/// full reader.
fn summarize_text(
    text: &[u8],
    opts: &ReadOptions,
    container: Container,
    count: Counter<'_>,
) -> Option<CardSummary> {
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    let len = text.len() as u64;
    // Within every limit the full reader checks, or the full reader gives its error.
    if len > opts.max_json_len || len / 2 > opts.max_json_values {
        return None;
    }
    // The permanent fields are read in the same pass, only when counted: the list without
    // counts copies none of them.
    let mut de = serde_json::Deserializer::from_slice(text);
    let top = TopSeed {
        counting: count.is_some(),
    }
    .deserialize(&mut de)
    .ok()?;
    de.end().ok()?;
    top.into_summary(container, count)
}

/// The `data` fields a hybrid card may take from the top level that the summary shows.
const SHOWN_FIELDS: [&str; 8] = [
    "name",
    "nickname",
    "creator",
    "tags",
    "first_mes",
    "alternate_greetings",
    "character_book",
    "assets",
];

/// The top-level object of a wrapped card, as the summary reads it.
struct Top<'a> {
    spec: Option<Text<'a>>,
    spec_version: Option<Option<Text<'a>>>,
    data: Option<Data<'a>>,
    /// Top-level keys named like a shown `data` field (a hybrid card's).
    top_fields: Vec<Cow<'a, str>>,
}

impl Top<'_> {
    /// The summary, its permanent tokens counted by `count` when given; `None` when the full
    /// reader must decide.
    fn into_summary(self, container: Container, count: Counter<'_>) -> Option<CardSummary> {
        let spec = match self.spec?.0.as_ref() {
            "chara_card_v3" => "V3",
            "chara_card_v2" => "V2",
            _ => return None,
        };
        let d = self.data?;
        if self
            .top_fields
            .iter()
            .any(|k| !d.seen.contains(&k.as_ref()))
        {
            return None;
        }
        // A V2 card may be a V3 card's backfill: the stash restores V3 fields.
        if spec == "V2" && d.has_stash {
            return None;
        }
        let spec_version = match self.spec_version.flatten() {
            Some(Text(v)) if !v.is_empty() => v.into_owned(),
            _ if spec == "V2" => "2.0".into(),
            _ => "3.0".into(),
        };
        let permanent_tokens = count.map(|c| d.permanent.count(d.name.as_ref(), c));
        Some(CardSummary {
            name: d.name.map(Text::owned).unwrap_or_default(),
            nickname: d.nickname.flatten().map(Text::owned),
            creator: d.creator.map(Text::owned).unwrap_or_default(),
            tags: d
                .tags
                .unwrap_or_default()
                .into_iter()
                .map(Text::owned)
                .collect(),
            spec: spec.into(),
            spec_version,
            container: container.label().into(),
            greetings: usize::from(d.first_mes.is_some_and(|s| s.0)) + d.alternate_greetings,
            entries: d.entries,
            assets: d.assets,
            permanent_tokens,
        })
    }
}

/// Reads the next value of a map, failing on a key seen before (the full reader's handling of
/// duplicates is left to it).
fn once<'de, T: Deserialize<'de>, A: MapAccess<'de>>(
    slot: &mut Option<T>,
    map: &mut A,
) -> std::result::Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::custom("duplicate key"));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

/// Reads a [`Top`], with the permanent fields of `data` when `counting`.
struct TopSeed {
    counting: bool,
}

impl<'de> DeserializeSeed<'de> for TopSeed {
    type Value = Top<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Top<'de>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TopSeed {
    type Value = Top<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a card object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Top<'de>, A::Error> {
        let mut top = Top {
            spec: None,
            spec_version: None,
            data: None,
            top_fields: Vec::new(),
        };
        while let Some(Text(k)) = map.next_key::<Text<'de>>()? {
            match k.as_ref() {
                "spec" => once(&mut top.spec, &mut map)?,
                "spec_version" => once(&mut top.spec_version, &mut map)?,
                "data" => {
                    if top.data.is_some() {
                        return Err(de::Error::custom("duplicate key"));
                    }
                    top.data = Some(map.next_value_seed(DataSeed {
                        counting: self.counting,
                    })?);
                }
                other => {
                    if SHOWN_FIELDS.contains(&other) {
                        top.top_fields.push(k);
                    }
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(top)
    }
}

/// The `data` object as the summary reads it: the shown fields with their spec types, the
/// rest skipped.
#[derive(Default)]
struct Data<'a> {
    name: Option<Text<'a>>,
    nickname: Option<Option<Text<'a>>>,
    creator: Option<Text<'a>>,
    tags: Option<Vec<Text<'a>>>,
    first_mes: Option<NonEmpty>,
    alternate_greetings: usize,
    entries: usize,
    assets: usize,
    /// A V3 stash in `extensions` ([`crate::backfill::STASH_KEY`]).
    has_stash: bool,
    /// The shown fields present.
    seen: Vec<&'static str>,
    /// The permanent fields besides the name, read only when counted.
    permanent: Permanent<'a>,
}

/// Reads a [`Data`], with its permanent fields when `counting`.
struct DataSeed {
    counting: bool,
}

impl<'de> DeserializeSeed<'de> for DataSeed {
    type Value = Data<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Data<'de>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for DataSeed {
    type Value = Data<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a data object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Data<'de>, A::Error> {
        let mut d = Data::default();
        let (mut greetings, mut book, mut assets, mut ext) = (None, None, None, None);
        let p = &mut d.permanent;
        while let Some(Text(k)) = map.next_key::<Text<'de>>()? {
            if let Some(shown) = SHOWN_FIELDS.iter().find(|f| **f == k.as_ref()) {
                d.seen.push(shown);
            }
            match k.as_ref() {
                "name" => once(&mut d.name, &mut map)?,
                "nickname" => once(&mut d.nickname, &mut map)?,
                "creator" => once(&mut d.creator, &mut map)?,
                "tags" => once(&mut d.tags, &mut map)?,
                "first_mes" => once(&mut d.first_mes, &mut map)?,
                "alternate_greetings" => once(&mut greetings, &mut map)?,
                "character_book" => once(&mut book, &mut map)?,
                "assets" => once(&mut assets, &mut map)?,
                "extensions" => {
                    if ext.is_some() {
                        return Err(de::Error::custom("duplicate key"));
                    }
                    ext = Some(map.next_value_seed(ExtensionsSeed {
                        counting: self.counting,
                    })?);
                }
                "description" if self.counting => once(&mut p.description, &mut map)?,
                "personality" if self.counting => once(&mut p.personality, &mut map)?,
                "scenario" if self.counting => once(&mut p.scenario, &mut map)?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let greetings: Option<Count<AnyString>> = greetings;
        d.alternate_greetings = greetings.map_or(0, |c| c.0);
        let book: Option<Option<Book>> = book;
        d.entries = book.flatten().map_or(0, |b| b.entries);
        let assets: Option<Option<Count<AnyObject>>> = assets;
        d.assets = assets.flatten().map_or(0, |c| c.0);
        if let Some(ext) = ext {
            d.has_stash = ext.has_stash;
            d.permanent.note = ext.note;
        }
        Ok(d)
    }
}

/// Whether a string is not empty, read without copying it.
struct NonEmpty(bool);

impl<'de> Deserialize<'de> for NonEmpty {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = NonEmpty;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<NonEmpty, E> {
                Ok(NonEmpty(!s.is_empty()))
            }
        }
        d.deserialize_str(V)
    }
}

/// A string, skipped.
struct AnyString;

impl<'de> Deserialize<'de> for AnyString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        NonEmpty::deserialize(d).map(|_| AnyString)
    }
}

/// An object, skipped (an entry or an asset: the full reader drops items that are not objects).
struct AnyObject;

impl<'de> Deserialize<'de> for AnyObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = AnyObject;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<AnyObject, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(AnyObject)
            }
        }
        d.deserialize_map(V)
    }
}

/// The number of items of an array of `T`, none kept.
struct Count<T>(usize, std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Count<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Count<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Count<T>, A::Error> {
                let mut n = 0;
                while seq.next_element::<T>()?.is_some() {
                    n += 1;
                }
                Ok(Count(n, std::marker::PhantomData))
            }
        }
        d.deserialize_seq(V(std::marker::PhantomData))
    }
}

/// A `character_book` object: its entries counted.
struct Book {
    entries: usize,
}

impl<'de> Deserialize<'de> for Book {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Book;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a lorebook object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Book, A::Error> {
                let mut entries: Option<Count<AnyObject>> = None;
                while let Some(Text(k)) = map.next_key::<Text<'de>>()? {
                    if k == "entries" {
                        once(&mut entries, &mut map)?;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Book {
                    entries: entries.map_or(0, |c| c.0),
                })
            }
        }
        d.deserialize_map(V)
    }
}

/// A `data.extensions` object: whether it holds a V3 stash, and the character's note when the
/// permanent fields are counted.
struct Extensions {
    has_stash: bool,
    /// `depth_prompt.prompt` when it is a string (read only when counted).
    note: Option<String>,
}

/// Reads an [`Extensions`], with its character's note when `counting`.
struct ExtensionsSeed {
    counting: bool,
}

impl<'de> DeserializeSeed<'de> for ExtensionsSeed {
    type Value = Extensions;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Extensions, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ExtensionsSeed {
    type Value = Extensions;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Extensions, A::Error> {
        let mut ext = Extensions {
            has_stash: false,
            note: None,
        };
        while let Some(Text(k)) = map.next_key::<Text<'de>>()? {
            ext.has_stash |= k == crate::backfill::STASH_KEY;
            if self.counting && k == "depth_prompt" {
                ext.note = permanent::depth_prompt_note(&map.next_value()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(ext)
    }
}
