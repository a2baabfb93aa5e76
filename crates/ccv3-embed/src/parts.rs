//! A card in two parts, for bindings that build a big book's entries only when they are first
//! used: the card without its book's entries, and the entries (their JSON text, or the card's
//! text to read them from later with [`card_entries_json`]).
//!
//! Reading a PNG card with a book, most of the time goes into the book's entries: building the
//! model of each and writing it back as JSON. [`read_card_parts`] checks the whole card text as
//! the reader's JSON parser would, finds where `data.character_book.entries` stands, and reads the
//! card with an empty array there ([`ccv3::entries_span`]); the entries are read from the same
//! text only when they are asked for. A small book (under 64 KiB of entries) goes that way only
//! when every entry stands as the model keeps it (issue 29: then the binding's own JSON parser
//! builds them all). Otherwise, and for anything unusual (a key of that path twice, a spelling
//! that differs only in case, text the check refuses, a card the reader refuses), the card takes
//! the plain path: read at once, so the parts always put together give
//! [`crate::read_card_json`]'s value.

use crate::cards::{card_json, card_of, split_decorators};
use crate::{EmbedError, ReadOptions};
use ccv3::{Card, Lorebook};
use std::io::{Read, Seek, SeekFrom};

/// Entries texts from this size on are handed out for later even when some entries must be read
/// through the model; a smaller book is handed out only when every entry stands as the model
/// keeps it (else the whole card is read at once: a second model read of a small card costs more
/// than it saves).
const LATER_FROM: usize = 64 * 1024;

/// A card as two parts ([`read_card_parts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardParts {
    /// The V3 card as JSON text, the same value as [`crate::read_card_json`] gives except that
    /// its `data.character_book.entries` (when the card has a book) is the empty array `[]`:
    /// compact, or the card's own text when it stands as the model keeps it (issue 29).
    pub card: String,
    /// The book's entries; `None` when the card has no book.
    pub entries: Option<PartEntries>,
}

/// The entries of a [`CardParts`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartEntries {
    /// The entries as a compact JSON array text, exactly the text [`crate::read_card_json`]
    /// writes for them.
    Json(String),
    /// Not read yet: the card's JSON text, from which [`card_entries_json`] reads them.
    Later(Vec<u8>),
    /// Not read yet, and most of them read as they stand: the card's JSON text (`text`), where
    /// the entries array stands in it (`range`, brackets included), and the places of the
    /// entries the model changes (`reread`, ascending). Parsing `text[range]` as plain JSON,
    /// adding `"decorators": []` at the end of each entry when decorators are split off, and
    /// putting in the entries at `reread` from [`card_entries_at_json`] gives the entries of
    /// [`crate::read_card_json`].
    AsIs {
        /// The card's JSON text.
        text: Vec<u8>,
        /// Where the entries array stands in `text`.
        range: std::ops::Range<usize>,
        /// The places of the entries to read through the model.
        reread: Vec<usize>,
        /// Every byte of `text[range]` is ASCII (`false` when not known): a binding may decode
        /// it as Latin-1, cheaper than UTF-8 (issue 29).
        ascii: bool,
    },
}

/// Reads a card from a random-access source (see [`ccv3::read_seekable`]: a PNG's image data is
/// seeked past, never read) in two parts: the card without its book's entries, and the entries,
/// either as JSON text or, for a big book or a small one whose entries all stand as the model
/// keeps them, as the card text to read them from when they are wanted ([`card_entries_json`]). Putting the entries back into `data.character_book` gives the
/// value of [`crate::read_card_json`] for the same bytes; every error is found here, not later.
///
/// ```
/// use ccv3_embed::{card_entries_json, read_card_parts, PartEntries, ReadOptions};
/// let card = serde_json::json!({"spec": "chara_card_v3", "spec_version": "3.0",
///     "data": {"name": "Ember", "character_book": {"entries": [
///         {"keys": ["fire"], "content": "@@depth 2\nEmber is warm.", "enabled": true,
///          "insertion_order": 0}]}}});
/// let png = ccv3_embed::write_card(&card, "png", None)?;
/// let options = ReadOptions::default();
/// let parts = read_card_parts(std::io::Cursor::new(&png), &options)?;
/// let entries = match parts.entries.unwrap() {
///     PartEntries::Json(text) => text,
///     PartEntries::Later(card_text) => card_entries_json(&card_text, &options)?,
///     // For a big book: most entries parsed from `text[range]`, the others read by the model
///     // (`card_entries_at_json`); this one is small.
///     PartEntries::AsIs { .. } => unreachable!(),
/// };
/// let mut whole: serde_json::Value = serde_json::from_str(&parts.card).unwrap();
/// whole["data"]["character_book"]["entries"] = serde_json::from_str(&entries).unwrap();
/// assert_eq!(whole, ccv3_embed::read_card(&png, &options)?);
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
///
/// # Errors
/// As [`crate::read_card_json`]; `read-failed` also when the source fails.
pub fn read_card_parts<R: Read + Seek>(
    mut source: R,
    options: &ReadOptions,
) -> Result<CardParts, EmbedError> {
    let io = |e: std::io::Error| EmbedError::read_failed(e.to_string());
    let start = source.stream_position().map_err(io)?;
    if let Some(text) = png_card_text(&mut source) {
        if let Some(parts) = later_parts(text, options)? {
            return Ok(parts);
        }
    }
    source.seek(SeekFrom::Start(start)).map_err(io)?;
    let doc = ccv3::read_seekable_with(source, &crate::cards::library_options())
        .map_err(|e| EmbedError::from_read(&e))?;
    let mut card = card_of(doc)?.card;
    let Some(book) = card.data.character_book.as_mut() else {
        return Ok(CardParts {
            card: card_json(&card, 0)?,
            entries: None,
        });
    };
    if options.parse_decorators {
        split_decorators(&mut book.entries);
    }
    let entries = entries_text(book)?;
    // The rest of the card with an empty list where the entries go.
    let kept = std::mem::take(&mut book.entries);
    let head = card_json(&card, 0);
    if let Some(book) = card.data.character_book.as_mut() {
        book.entries = kept;
    }
    Ok(CardParts {
        card: head?,
        entries: Some(PartEntries::Json(entries)),
    })
}

/// Reads the entries of a card's book from the card's JSON text ([`PartEntries::Later`]) as a
/// compact JSON array text, decorators split off as `options` say.
///
/// # Errors
/// `read-failed` when the text is not a card with a book (never for the text that
/// [`read_card_parts`] handed out).
///
/// ```
/// let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Ember","character_book":{
///   "entries":[{"keys":["a"],"content":"@@depth 2\nx","enabled":true,"insertion_order":0}]}}}"#;
/// let entries = ccv3_embed::card_entries_json(text, &ccv3_embed::ReadOptions::default())?;
/// let entries: serde_json::Value = serde_json::from_str(&entries).unwrap();
/// assert_eq!(entries[0]["content"], "x");
/// assert_eq!(entries[0]["decorators"][0]["type"], "depth");
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn card_entries_json(card_text: &[u8], options: &ReadOptions) -> Result<String, EmbedError> {
    let mut card =
        Card::from_json_text(card_text, &mut Vec::new()).map_err(|e| EmbedError::from_read(&e))?;
    let book = card
        .data
        .character_book
        .as_mut()
        .ok_or_else(|| EmbedError::read_failed("the card has no lorebook"))?;
    if options.parse_decorators {
        split_decorators(&mut book.entries);
    }
    entries_text(book)
}

/// Reads the entries at the places `reread` (ascending) of a card's book from the card's JSON
/// text ([`PartEntries::AsIs`]), the array standing at `range`, as a compact JSON array text
/// of those entries only, decorators split off as `options` say.
///
/// # Errors
/// `read-failed` when `range` is not where an array stands, a place is past its end or out of
/// order, or the text is not a card with such a book (never for what [`read_card_parts`] handed
/// out).
///
/// ```
/// let text = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Ember","character_book":{"entries":[{"keys":["a"],"content":"x","enabled":true,"insertion_order":0},{"keys":"b","content":"y"}]}}}"#;
/// let span = ccv3::entries_span::character_book_entries(text).unwrap();
/// // Only the second entry needs the model (its keys are text, not a list): read it alone.
/// let reread = ccv3_embed::card_entries_at_json(text.as_bytes(), span.range, &[1], &ccv3_embed::ReadOptions::default())?;
/// let reread: serde_json::Value = serde_json::from_str(&reread).unwrap();
/// assert_eq!(reread.as_array().unwrap().len(), 1);
/// assert_eq!(reread[0]["content"], "y");
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn card_entries_at_json(
    card_text: &[u8],
    range: std::ops::Range<usize>,
    reread: &[usize],
    options: &ReadOptions,
) -> Result<String, EmbedError> {
    let bad = || EmbedError::read_failed("the entries to read are not in the card text");
    let (Some(before), Some(array), Some(after)) = (
        card_text.get(..range.start),
        card_text.get(range.clone()),
        card_text.get(range.end..),
    ) else {
        return Err(bad());
    };
    let items = item_ranges(array).ok_or_else(bad)?;
    let mut head = Vec::with_capacity(before.len() + after.len() + 1024);
    head.extend_from_slice(before);
    head.push(b'[');
    let mut previous = None;
    for (n, &at) in reread.iter().enumerate() {
        if previous.is_some_and(|p| p >= at) {
            return Err(bad());
        }
        previous = Some(at);
        let item = items
            .get(at)
            .and_then(|r| array.get(r.clone()))
            .ok_or_else(bad)?;
        if n > 0 {
            head.push(b',');
        }
        head.extend_from_slice(item);
    }
    head.push(b']');
    head.extend_from_slice(after);
    let text = card_entries_json(&head, options)?;
    Ok(text)
}

/// The byte ranges of the items of the JSON array `array` (brackets included), for text the
/// JSON parser accepted; `None` when it is not an array.
fn item_ranges(array: &[u8]) -> Option<Vec<std::ops::Range<usize>>> {
    if array.first() != Some(&b'[') {
        return None;
    }
    let mut items = Vec::new();
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    // Where the current item starts, and just past its last byte that is not whitespace.
    let (mut start, mut end) = (None, 0);
    for (i, &b) in array.iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
                end = i + 1;
            }
            continue;
        }
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => continue,
            b',' if depth == 1 => {
                items.push(start.take()?..end);
                continue;
            }
            b']' | b'}' if depth == 1 => {
                if let Some(s) = start.take() {
                    items.push(s..end);
                }
                return (i + 1 == array.len()).then_some(items);
            }
            _ => {}
        }
        if depth == 1 && start.is_none() {
            start = Some(i);
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.checked_sub(1)?,
            _ => {}
        }
        end = i + 1;
    }
    None
}

/// A book's entries as compact JSON text.
fn entries_text(book: &Lorebook) -> Result<String, EmbedError> {
    let mut out = Vec::with_capacity(1024 + book.entries.len() * 512);
    book.write_entries_json(&mut out)
        .map_err(|e| EmbedError::write_failed(e.to_string()))?;
    String::from_utf8(out).map_err(|e| EmbedError::write_failed(e.to_string()))
}

/// The text of a PNG's `ccv3` chunk, when the source is a PNG that has a decodable one (read
/// as [`ccv3::read_seekable`] reads it first: `chara` chunks seeked past).
fn png_card_text<R: Read + Seek>(source: &mut R) -> Option<String> {
    let start = source.stream_position().ok()?;
    let mut sig = [0u8; 8];
    source.read_exact(&mut sig).ok()?;
    source.seek(SeekFrom::Start(start)).ok()?;
    if sig != ccv3::png::SIGNATURE {
        return None;
    }
    // The diagnostics are dropped here, so the CRC (only ever a warning) is not checked.
    let limits = ccv3::png::Limits {
        read_chara: false,
        verify_crc: false,
        ..Default::default()
    };
    let chunks = ccv3::png::read_card_chunks(&mut *source, &limits).ok()?;
    chunks.ccv3
}

/// The card of `text` without its entries, when everything is as usual and its entries are big
/// or all stand as the model keeps them.
fn later_parts(text: String, options: &ReadOptions) -> Result<Option<CardParts>, EmbedError> {
    let Some(span) = ccv3::entries_span::character_book_entries(&text) else {
        return Ok(None);
    };
    let range = span.range.clone();
    let ascii = span.ascii;
    let reread = span.changed.map(|mut reread| {
        if options.parse_decorators {
            reread.extend(span.decorated);
            reread.sort_unstable();
        }
        reread
    });
    let all_as_is = reread.as_ref().is_some_and(Vec::is_empty);
    if range.len() < LATER_FROM && !all_as_is {
        return Ok(None);
    }
    let bytes = text.as_bytes();
    let (Some(before), Some(after)) = (bytes.get(..range.start), bytes.get(range.end..)) else {
        return Ok(None);
    };
    let mut head = Vec::with_capacity(before.len() + after.len() + 2);
    head.extend_from_slice(before);
    head.extend_from_slice(b"[]");
    head.extend_from_slice(after);
    let card = if span.card_as_is {
        // The model would write the same value back (issue 29): the text stands for itself.
        match String::from_utf8(head) {
            Ok(card) => card,
            Err(_) => return Ok(None),
        }
    } else {
        let Ok(card) = Card::from_json_text(&head, &mut Vec::new()) else {
            return Ok(None);
        };
        match &card.data.character_book {
            Some(book) if book.entries.is_empty() => {}
            _ => return Ok(None),
        }
        card_json(&card, head.len() + 1024)?
    };
    let text = text.into_bytes();
    let entries = match reread {
        // An item that is not an object: the reader drops it, so all are read through it.
        None => PartEntries::Later(text),
        Some(reread) => PartEntries::AsIs {
            text,
            range,
            reread,
            ascii,
        },
    };
    Ok(Some(CardParts {
        card,
        entries: Some(entries),
    }))
}

/// A card whose JSON text stands as the model keeps it, its book's entries included
/// ([`read_card_as_is`]): a binding builds the card with its own JSON parser from `text`, with
/// no model read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsIsCard {
    /// The card's JSON text (a PNG's `ccv3` chunk, decoded).
    pub text: String,
    /// Where `data.character_book.entries` stands in `text` (brackets included).
    pub entries: std::ops::Range<usize>,
    /// Decorators are split off (none of the entries has any): each entry then ends with
    /// `"decorators": []`, added after its own fields.
    pub decorators: bool,
}

/// Reads a card from a random-access source as its own JSON text when the reader would give
/// back exactly that text's value (issue 29): a PNG whose `ccv3` chunk is a V3 card standing as
/// the model keeps it ([`ccv3::entries_span::EntriesSpan::card_as_is`]), with a book whose
/// entries all stand as they are (and, when `options` split decorators off, none has `@@` lines
/// or a `decorators` field). The JSON value of [`AsIsCard::text`], each entry given
/// `"decorators": []` when [`AsIsCard::decorators`] is set, is then [`crate::read_card_json`]'s
/// value for the same bytes, key order included. `None` for any other source, card or failure:
/// the caller reads it through the model ([`crate::read_card_model`]), which reports the errors.
///
/// ```
/// use ccv3_embed::{read_card_as_is, ReadOptions};
/// let card = serde_json::json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {
///     "name": "Ember", "description": "", "tags": [], "creator": "", "character_version": "",
///     "mes_example": "", "extensions": {}, "system_prompt": "", "post_history_instructions": "",
///     "first_mes": "", "alternate_greetings": [], "personality": "", "scenario": "",
///     "creator_notes": "", "group_only_greetings": [],
///     "character_book": {"extensions": {}, "entries": [{"keys": ["fire"], "content": "Warm.",
///         "extensions": {}, "enabled": true, "insertion_order": 0, "use_regex": false}]}}});
/// let png = ccv3_embed::write_card(&card, "png", None)?;
/// let options = ReadOptions::default();
/// let as_is = read_card_as_is(std::io::Cursor::new(&png), &options).expect("stands as it is");
/// let mut value: serde_json::Value = serde_json::from_str(&as_is.text).unwrap();
/// value["data"]["character_book"]["entries"][0]["decorators"] = serde_json::json!([]);
/// assert_eq!(value, ccv3_embed::read_card(&png, &options)?);
/// // A V2 card is upgraded by the reader: not as it stands.
/// let v2 = serde_json::json!({"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "A"}});
/// let png = ccv3_embed::write_card(&v2, "png", None)?;
/// assert!(read_card_as_is(std::io::Cursor::new(&png), &options).is_none());
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn read_card_as_is<R: Read + Seek>(mut source: R, options: &ReadOptions) -> Option<AsIsCard> {
    let text = png_card_text(&mut source)?;
    let span = ccv3::entries_span::character_book_entries(&text)?;
    let changed = span.changed?;
    let decorated = options.parse_decorators && !span.decorated.is_empty();
    if !span.card_as_is || !changed.is_empty() || decorated {
        return None;
    }
    Some(AsIsCard {
        text,
        entries: span.range,
        decorators: options.parse_decorators,
    })
}

/// [`read_card_as_is`] of the file at `path` (a PNG's image data seeked past, never read);
/// `None` also when the file cannot be opened ([`crate::read_card_path_model`] reports that).
///
/// ```
/// let path = std::env::temp_dir().join("ccv3-embed-doc-read-card-path-as-is.json");
/// std::fs::write(&path, r#"{"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Ember"}}"#).unwrap();
/// // Only PNG cards are read as they stand.
/// assert!(ccv3_embed::read_card_path_as_is(&path, &ccv3_embed::ReadOptions::default()).is_none());
/// # std::fs::remove_file(&path).unwrap();
/// ```
pub fn read_card_path_as_is(path: &std::path::Path, options: &ReadOptions) -> Option<AsIsCard> {
    let file = std::fs::File::open(path).ok()?;
    read_card_as_is(std::io::BufReader::new(file), options)
}
