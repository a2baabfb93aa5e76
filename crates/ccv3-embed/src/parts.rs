//! A card in two parts, for bindings that build a big book's entries only when they are first
//! used: the card without its book's entries, and the entries (their JSON text, or the card's
//! text to read them from later with [`card_entries_json`]).
//!
//! Reading a PNG card with a big book, most of the time goes into the book's entries: building
//! the model of each and writing it back as JSON. [`read_card_parts`] checks the whole card text
//! as the reader's JSON parser would, finds where `data.character_book.entries` stands, and
//! reads the card with an empty array there; the entries are read from the same text only when
//! they are asked for. Anything unusual (a key of that path twice, a spelling that differs only
//! in case, text the check refuses, a card the reader refuses) takes the plain path: the whole
//! card read at once, so the parts always put together give [`crate::read_card_json`]'s value.

use crate::cards::{card_json, card_of, split_decorators};
use crate::{EmbedError, ReadOptions};
use ccv3::{Card, Lorebook};
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

/// Entries texts shorter than this are read at once (the later path pays off for big books).
const LATER_FROM: usize = 64 * 1024;

/// A card as two parts ([`read_card_parts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardParts {
    /// The V3 card as compact JSON text, the same as [`crate::read_card_json`] gives except that
    /// its `data.character_book.entries` (when the card has a book) is the empty array `[]`.
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
}

/// Reads a card from a random-access source (see [`ccv3::read_seekable`]: a PNG's image data is
/// seeked past, never read) in two parts: the card without its book's entries, and the entries,
/// either as JSON text or, for a big book, as the card text to read them from when they are
/// wanted ([`card_entries_json`]). Putting the entries back into `data.character_book` gives the
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
        if let Some(parts) = later_parts(text)? {
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

/// The card of `text` without its entries, when its entries are big and everything is as usual.
fn later_parts(text: String) -> Result<Option<CardParts>, EmbedError> {
    let Some(range) = entries_range(&text) else {
        return Ok(None);
    };
    if range.len() < LATER_FROM {
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
    let Ok(card) = Card::from_json_text(&head, &mut Vec::new()) else {
        return Ok(None);
    };
    match &card.data.character_book {
        Some(book) if book.entries.is_empty() => {}
        _ => return Ok(None),
    }
    Ok(Some(CardParts {
        card: card_json(&card, head.len() + 1024)?,
        entries: Some(PartEntries::Later(text.into_bytes())),
    }))
}

/// Where `data.character_book.entries` (an array) stands in `text`, when the whole text passes
/// the reader's JSON parser's checks (syntax, strings, numbers, nesting limit) and each key of
/// that path occurs once, spelled exactly.
///
/// One pass: the array's start follows its key, and its end is found from the last string in
/// it (the parser hands out strings without escapes as slices of the text): past that string
/// there are only numbers, literals and punctuation, so counting brackets from there finds the
/// array's `]`. Arrays without such a string (no strings, or the last one escaped) are `None`.
fn entries_range(text: &str) -> Option<Range<usize>> {
    // From `str`: the text is UTF-8 already, so the parser does not check it again.
    let mut de = serde_json::Deserializer::from_str(text);
    let found = Path(0).deserialize(&mut de).ok()?;
    de.end().ok()?;
    let Found { key_end, last } = found?;
    let bytes = text.as_bytes();
    let base = text.as_ptr() as usize;
    // `"entries"`, then `:` between optional whitespace, then the array.
    let mut at = key_end.checked_sub(base)?;
    (bytes.get(at) == Some(&b'"')).then_some(())?;
    at += 1;
    let skip_ws = |mut i: usize| {
        while bytes.get(i).is_some_and(|b| b" \t\r\n".contains(b)) {
            i += 1;
        }
        i
    };
    at = skip_ws(at);
    (bytes.get(at) == Some(&b':')).then_some(())?;
    let start = skip_ws(at + 1);
    (bytes.get(start) == Some(&b'[')).then_some(())?;
    let (last_end, mut depth) = last?;
    let mut i = last_end.checked_sub(base)?;
    (i > start && bytes.get(i) == Some(&b'"')).then_some(())?;
    loop {
        i += 1;
        match bytes.get(i)? {
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(start..i + 1);
                }
            }
            b'"' => return None,
            _ => {}
        }
    }
}

/// What [`Path`] found: the address just past the `entries` key's text, and the address just
/// past the last string of the array with the number of containers open around it (the array
/// included), `None` when it has no string or its last one was escaped.
struct Found {
    key_end: usize,
    last: Option<(usize, usize)>,
}

/// Every value inside the `entries` array, checked as [`Walk`] checks it, noting its last string.
struct Track<'s> {
    last: &'s mut Option<(usize, usize)>,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Track<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Track<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<(), E> {
        *self.last = Some((s.as_ptr() as usize + s.len(), self.depth));
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        // Escaped: not a slice of the text, so where it ends is not known.
        *self.last = None;
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let depth = self.depth + 1;
        while seq
            .next_element_seed(Track {
                last: &mut *self.last,
                depth,
            })?
            .is_some()
        {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let depth = self.depth + 1;
        while map
            .next_key_seed(Track {
                last: &mut *self.last,
                depth,
            })?
            .is_some()
        {
            map.next_value_seed(Track {
                last: &mut *self.last,
                depth,
            })?;
        }
        Ok(())
    }
}

/// Every value, checked as `serde_json::Value` would be parsed, nothing kept.
struct Walk;

impl<'de> DeserializeSeed<'de> for Walk {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(Walk)
    }
}

impl<'de> Visitor<'de> for Walk {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Walk)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Walk)?.is_some() {
            map.next_value_seed(Walk)?;
        }
        Ok(())
    }
}

/// A key, borrowed when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V)
    }
}

/// The keys of the path, outermost first.
const PATH: [&str; 3] = ["data", "character_book", "entries"];

/// The object at depth `.0` of [`PATH`] (0: the document): every value checked as [`Walk`]
/// checks it, and where the `entries` array is.
struct Path(usize);

impl<'de> DeserializeSeed<'de> for Path {
    type Value = Option<Found>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Path {
    type Value = Option<Found>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let Some(&want) = PATH.get(self.0) else {
            return Err(A::Error::custom("too deep"));
        };
        let mut found = None;
        let mut seen = false;
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            if k == want {
                if seen {
                    return Err(A::Error::custom("a key of the path occurs twice"));
                }
                seen = true;
                found = if self.0 + 1 == PATH.len() {
                    let mut last = None;
                    map.next_value_seed(Track {
                        last: &mut last,
                        depth: 0,
                    })?;
                    match k {
                        Cow::Borrowed(key) => Some(Found {
                            key_end: key.as_ptr() as usize + key.len(),
                            last,
                        }),
                        // An escaped key: where it ends is not known.
                        Cow::Owned(_) => None,
                    }
                } else {
                    map.next_value_seed(Path(self.0 + 1))?
                };
            } else if PATH.iter().any(|p| k.eq_ignore_ascii_case(p)) {
                return Err(A::Error::custom("a key spelled like one of the path"));
            } else {
                map.next_value_seed(Walk)?;
            }
        }
        Ok(found)
    }
}
