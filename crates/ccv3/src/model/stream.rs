//! Parsing with a plan: a lorebook's `entries` become model entries while the rest of the text is
//! still being parsed.
//!
//! A card's lorebook is most of its text. Parsing all of it into a [`Raw`] tree and converting
//! the tree afterwards holds every entry's tree in memory at once and does the two steps one after
//! the other. Here the parse knows where a lorebook's `entries` array can stand, and parses that
//! array one entry at a time, straight into the entry's `(key, Value)` pairs (no plain tree).
//! When the reader asks for it ([`crate::ReadOptions::entry_thread`], with the `parallel`
//! feature), past the first 64 entries this thread only checks and cuts the rest of the array
//! into items and hands them over in batches to a second thread that parses and converts them as
//! they come; once the array is cut, this thread converts batches too. Each converted batch joins
//! the entries in array order as soon as the batches before it are in (into room reserved from
//! the first batch's size and the text left), so the book is never held twice. The array
//! becomes [`Raw::Entries`], which the lorebook reader takes as it is.
//!
//! Converting needs the strictness of the document (a V3 card's missing field is an error, a V2
//! card's a warning), so only arrays whose strictness is already known when they are met are
//! streamed:
//! - `data.character_book.entries` of a card whose first `spec` key, before `data`, says
//!   `chara_card_v3` or `chara_card_v2`;
//! - `data.entries` of a file whose first `spec`, before `data`, says `lorebook_v3`;
//! - the top-level `entries` of a bare `character_book` (no `spec` before it), when its first
//!   item is an object that is not shaped like a NovelAI or Agnai entry. The document may still
//!   turn out to be something else once all its keys are read (a V1 card with an `entries` field,
//!   say): [`streamed_bare_entries`] lets the reader notice and parse again without the plan.
//!
//! Everywhere else the plain tree is built, exactly as [`Raw`]'s own `Deserialize` does.

use super::book::{Entry, EntryReader};
use super::extensions::Extensions;
use super::fields::{Field, Idx, KeyOrder, Repairs};
use super::raw::{Key, Place, Raw, StreamedEntries};
use crate::diag::{Diagnostic, Severity};
use crate::json::{self, Text};
use serde::de::{
    Deserialize, DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor,
};
use serde_json::value::RawValue;
use std::fmt;

/// Entries parsed and converted one by one before the rest of a big book is cut into batches
/// that two threads convert (smaller books never start a thread; feature `parallel`, when
/// [`crate::ReadOptions::entry_thread`] asks).
#[cfg(feature = "parallel")]
const INLINE_ENTRIES: usize = 64;

/// Parses a whole JSON document into a [`Raw`] tree, streaming lorebook entries where the module
/// docs say. `bare_books` enables the guess for top-level `entries` arrays; `entry_thread` lets
/// a big book's entries be converted on a second thread too (feature `parallel`).
/// A `str` is parsed without checking its UTF-8 again.
pub(crate) fn parse(
    text: Text<'_>,
    bare_books: bool,
    entry_thread: bool,
) -> serde_json::Result<Raw<'_>> {
    match text {
        Text::Bytes(b) => parse_from(
            serde_json::Deserializer::from_slice(b),
            b,
            bare_books,
            entry_thread,
        ),
        Text::Str(s) => parse_from(
            serde_json::Deserializer::from_str(s),
            s.as_bytes(),
            bare_books,
            entry_thread,
        ),
    }
}

/// [`parse`] with the parser over `text`.
fn parse_from<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
    text: &'de [u8],
    bare_books: bool,
    entry_thread: bool,
) -> serde_json::Result<Raw<'de>> {
    let whole = Whole {
        text_end: text.as_ptr() as usize + text.len(),
        entry_thread,
    };
    let v = Plan(Ctx::Top { bare_books }, whole).deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// What every level of one document's parse shares.
#[derive(Clone, Copy)]
struct Whole {
    /// The address just past the document's last byte (to tell how much text is left after a
    /// place).
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    text_end: usize,
    /// True when a big book's entries may be converted on a second thread
    /// ([`crate::ReadOptions::entry_thread`]).
    #[cfg_attr(not(feature = "parallel"), allow(dead_code))]
    entry_thread: bool,
}

/// True when `raw` is an object with a top-level `entries` array streamed on the bare-book guess.
pub(crate) fn streamed_bare_entries(raw: &Raw) -> bool {
    match raw {
        Raw::Object(pairs) => pairs
            .iter()
            .any(|(_, v)| matches!(v, Raw::Entries(s) if s.place == Place::Bare)),
        _ => false,
    }
}

/// Where a value stands, as far as the plan cares.
#[derive(Clone, Copy)]
enum Ctx {
    /// The document itself.
    Top { bare_books: bool },
    /// The `data` of a card, with the card's strictness.
    CardData(Severity),
    /// A lorebook object at `path`.
    Book(&'static str, Severity, Place),
    /// An `entries` array at `path`.
    Entries(&'static str, Severity, Place),
    /// Anywhere else: the plain tree.
    Plain,
}

/// What the first `spec` key of the document said.
#[derive(Clone, Copy, PartialEq)]
enum Spec {
    Unseen,
    CardV3,
    CardV2,
    LorebookV3,
    Other,
}

/// Where a value stands, and what the whole parse shares.
struct Plan(Ctx, Whole);

impl<'de> DeserializeSeed<'de> for Plan {
    type Value = Raw<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Raw<'de>, D::Error> {
        match self.0 {
            Ctx::Plain => Raw::deserialize_plain(d),
            ctx => d.deserialize_any(PlanVisitor(ctx, self.1)),
        }
    }
}

struct PlanVisitor(Ctx, Whole);

impl<'de> Visitor<'de> for PlanVisitor {
    type Value = Raw<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Raw<'de>, E> {
        Ok(Raw::Null)
    }
    fn visit_none<E>(self) -> Result<Raw<'de>, E> {
        Ok(Raw::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Raw<'de>, E> {
        Ok(Raw::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Raw<'de>, E> {
        Ok(Raw::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Raw<'de>, E> {
        Ok(Raw::Number(n.into()))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Raw<'de>, E> {
        Ok(Raw::from_f64(n))
    }
    fn visit_str<E>(self, s: &str) -> Result<Raw<'de>, E> {
        Ok(Raw::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Raw<'de>, E> {
        Ok(Raw::String(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Raw<'de>, A::Error> {
        match self.0 {
            Ctx::Entries(path, must, place) => stream_entries(seq, path, must, place, self.1),
            _ => Raw::collect_seq(seq, Vec::new()),
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw<'de>, A::Error> {
        // `serde_json` gives no size hint: room for the keys a card's levels usually have.
        let usual = match self.0 {
            Ctx::CardData(_) => 24,
            Ctx::Top { .. } | Ctx::Book(..) => 8,
            _ => 0,
        };
        let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(0).clamp(usual, 64));
        let mut spec = Spec::Unseen;
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            let child = match (self.0, &*k) {
                (Ctx::Top { .. }, "data") => match spec {
                    Spec::CardV3 => Ctx::CardData(Severity::Error),
                    Spec::CardV2 => Ctx::CardData(Severity::Warning),
                    Spec::LorebookV3 => Ctx::Book("data", Severity::Error, Place::LorebookData),
                    _ => Ctx::Plain,
                },
                (Ctx::Top { bare_books: true }, "entries") if spec == Spec::Unseen => {
                    Ctx::Entries("entries", Severity::Warning, Place::Bare)
                }
                (Ctx::CardData(must), "character_book") => {
                    Ctx::Book("data.character_book", must, Place::CardBook)
                }
                (Ctx::Book(path, must, place), "entries") => {
                    Ctx::Entries(entries_path(path), must, place)
                }
                _ => Ctx::Plain,
            };
            let v = map.next_value_seed(Plan(child, self.1))?;
            if matches!(self.0, Ctx::Top { .. }) && k == "spec" && spec == Spec::Unseen {
                spec = match &v {
                    Raw::String(s) if s == "chara_card_v3" => Spec::CardV3,
                    Raw::String(s) if s == "chara_card_v2" => Spec::CardV2,
                    Raw::String(s) if s == "lorebook_v3" => Spec::LorebookV3,
                    _ => Spec::Other,
                };
            }
            pairs.push((k, v));
        }
        Ok(Raw::Object(pairs))
    }
}

/// The path of a book's `entries`, for diagnostics.
fn entries_path(book: &'static str) -> &'static str {
    match book {
        "data.character_book" => "data.character_book.entries",
        "data" => "data.entries",
        _ => "entries",
    }
}

/// A plain element parser (for `next_element_seed`).
struct PlainSeed;

impl<'de> DeserializeSeed<'de> for PlainSeed {
    type Value = Raw<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Raw<'de>, D::Error> {
        Raw::deserialize_plain(d)
    }
}

/// True when an entry object looks like an Agnai or NovelAI entry (the lorebook format detector's
/// rule for unmarked exports), so a bare `entries` array is not a character book's.
fn foreign_entry(pairs: &[(std::borrow::Cow<'_, str>, Raw<'_>)]) -> bool {
    let has = |key: &str| pairs.iter().any(|(k, _)| k == key);
    (has("entry") && has("keywords")) || (has("text") && !has("content"))
}

/// Parses an `entries` array, converting each item as it comes.
fn stream_entries<'de, A: SeqAccess<'de>>(
    mut seq: A,
    path: &'static str,
    must: Severity,
    place: Place,
    #[cfg_attr(not(feature = "parallel"), allow(unused_variables))] whole: Whole,
) -> Result<Raw<'de>, A::Error> {
    let mut out = StreamedEntries {
        // Room for a small book's entries (the vector would grow from 4 to 8 otherwise, each
        // entry moved again).
        entries: Vec::with_capacity(8),
        diags: Vec::new(),
        place,
    };
    let mut i = 0usize;
    if place == Place::Bare {
        // Only a character book's entries are streamed: look at the first item before deciding.
        match seq.next_element_seed(PlainSeed)? {
            None => return Ok(Raw::Entries(Box::new(out))),
            Some(first) => {
                let ours = matches!(&first, Raw::Object(pairs) if !foreign_entry(pairs));
                if !ours {
                    return Raw::collect_seq(seq, vec![first]);
                }
                convert(Item::Other(first), path, i, must, &mut out);
                i += 1;
            }
        }
    }
    // Unless a second thread was asked for (and the `parallel` feature is on), every entry is
    // converted as it is parsed, on this thread.
    loop {
        #[cfg(feature = "parallel")]
        if whole.entry_thread && i == INLINE_ENTRIES {
            return parallel::convert_rest(seq, path, must, i, out, whole.text_end);
        }
        let seed = ItemSeed {
            path,
            i,
            must,
            out: &mut out,
        };
        match seq.next_element_seed(seed)? {
            None => return Ok(Raw::Entries(Box::new(out))),
            Some(item) => {
                convert(item, path, i, must, &mut out);
                i += 1;
            }
        }
    }
}

/// The rest of a big book, cut on this thread and converted on two (feature `parallel`).
#[cfg(feature = "parallel")]
mod parallel {
    use super::*;

    /// Cuts the rest of an `entries` array (from item `i`) into batches, converts them on a
    /// second thread and this one, and adds them to `out` in array order.
    pub(super) fn convert_rest<'de, A: SeqAccess<'de>>(
        mut seq: A,
        path: &'static str,
        must: Severity,
        mut i: usize,
        out: StreamedEntries,
        text_end: usize,
    ) -> Result<Raw<'de>, A::Error> {
        // A big book: the rest of the array is only checked and cut into items here (a fraction of
        // the cost of parsing them) and handed over in batches; a second thread parses and converts
        // batches as they come, and this one joins it once the array is cut. Converted batches join
        // the entries in order as soon as the ones before them are in, so the book is never held
        // twice.
        let work = Work {
            queue: Default::default(),
            ready: Default::default(),
            done: std::sync::Mutex::new(Assembly {
                next: i,
                waiting: std::collections::BTreeMap::new(),
                out,
                failed: None,
            }),
        };
        let cut = std::thread::scope(|scope| {
            let work = &work;
            let worker = std::thread::Builder::new()
                .name("ccv3-entries".into())
                .spawn_scoped(scope, move || work.convert_batches(path, must))
                .ok();
            #[cfg(test)]
            if worker.is_some() {
                STARTED.with(|n| n.set(n.get() + 1));
            }
            let mut batch = Vec::with_capacity(BATCH);
            let mut batch_start = i;
            let mut sized = false;
            let cut = loop {
                match seq.next_element::<&'de RawValue>() {
                    Ok(Some(item)) => {
                        batch.push(item);
                        i += 1;
                        if batch.len() == BATCH {
                            if !sized {
                                sized = true;
                                work.reserve_for(&batch, text_end);
                            }
                            work.push(
                                batch_start,
                                std::mem::replace(&mut batch, Vec::with_capacity(BATCH)),
                            );
                            batch_start = i;
                        }
                    }
                    Ok(None) => break Ok(()),
                    Err(e) => break Err(e),
                }
            };
            if !batch.is_empty() {
                work.push(batch_start, batch);
            }
            work.close();
            // This thread converts what is left (all of it when no thread could be had).
            work.convert_batches(path, must);
            if let Some(worker) = worker {
                // Converting cannot panic on input; if it did, that bug surfaces here as it would
                // have on this thread.
                worker
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e));
            }
            cut
        });
        cut?;
        let done = work.done.into_inner().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = done.failed {
            return Err(serde::de::Error::custom(e));
        }
        Ok(Raw::Entries(Box::new(done.out)))
    }

    #[cfg(test)]
    thread_local! {
        /// Second threads started from this thread (tests: a thread only when asked for).
        pub(super) static STARTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// Items cut from an `entries` array per batch handed to the converting threads.
    const BATCH: usize = 32;

    /// Batches of cut items waiting to be converted, shared by the cutting thread and the converting
    /// ones (each batch with the index of its first item), and the entries converted so far.
    struct Work<'de> {
        queue: std::sync::Mutex<Queue<'de>>,
        ready: std::sync::Condvar,
        done: std::sync::Mutex<Assembly>,
    }

    /// The batches not yet taken, and whether the cutting is over.
    type Queue<'de> = (
        std::collections::VecDeque<(usize, Vec<&'de RawValue>)>,
        bool,
    );

    /// The converted entries in array order: `out` holds every batch before item `next`; batches
    /// converted ahead of their turn wait (by first item, with their item count).
    pub(super) struct Assembly {
        pub(super) next: usize,
        pub(super) waiting: std::collections::BTreeMap<usize, (usize, StreamedEntries)>,
        pub(super) out: StreamedEntries,
        pub(super) failed: Option<serde_json::Error>,
    }

    impl Assembly {
        /// Takes in a converted batch of `n` items from item `start`, and every waiting batch that
        /// can follow it.
        pub(super) fn add(&mut self, start: usize, n: usize, part: StreamedEntries) {
            if start != self.next {
                self.waiting.insert(start, (n, part));
                return;
            }
            let mut part = Some((n, part));
            while let Some((n, p)) = part.take() {
                self.out.entries.extend(p.entries);
                self.out.diags.extend(p.diags);
                self.next += n;
                part = self.waiting.remove(&self.next);
            }
        }
    }

    impl<'de> Work<'de> {
        fn push(&self, start: usize, items: Vec<&'de RawValue>) {
            let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            q.0.push_back((start, items));
            drop(q);
            self.ready.notify_one();
        }

        /// Reserves room for the entries still to come, estimated from the size of the first batch
        /// and the text left after it (what follows the array in a document is small).
        fn reserve_for(&self, batch: &[&'de RawValue], text_end: usize) {
            let (Some(first), bytes) = (
                batch.first(),
                batch.iter().map(|r| r.get().len() + 1).sum::<usize>(),
            ) else {
                return;
            };
            let left = text_end.saturating_sub(first.get().as_ptr() as usize);
            let items = left / bytes.max(1) * batch.len();
            let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
            // Never more than the text could hold (an entry takes at least two bytes).
            done.out.entries.reserve(items.min(left / 2) + items / 16);
        }

        /// No more batches will come.
        fn close(&self) {
            self.queue.lock().unwrap_or_else(|e| e.into_inner()).1 = true;
            self.ready.notify_all();
        }

        /// The next batch, waiting for one while the array is still being cut; `None` at the end.
        fn next(&self) -> Option<(usize, Vec<&'de RawValue>)> {
            let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(b) = q.0.pop_front() {
                    return Some(b);
                }
                if q.1 {
                    return None;
                }
                q = self.ready.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        }

        /// Converts batches until there are none left, adding each to the entries in order.
        fn convert_batches(&self, path: &'static str, must: Severity) {
            while let Some((start, items)) = self.next() {
                let mut part = StreamedEntries {
                    entries: Vec::with_capacity(items.len()),
                    diags: Vec::new(),
                    place: Place::Bare,
                };
                let converted = convert_all(&items, path, start, must, &mut part);
                let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
                match converted {
                    Ok(()) => done.add(start, items.len(), part),
                    Err(e) => {
                        done.failed.get_or_insert(e);
                    }
                }
            }
        }
    }

    /// Parses and converts items already checked by the first pass, numbering them from `first`.
    fn convert_all(
        items: &[&RawValue],
        path: &str,
        first: usize,
        must: Severity,
        out: &mut StreamedEntries,
    ) -> serde_json::Result<()> {
        for (k, item) in items.iter().enumerate() {
            // The text was checked as JSON by the first pass, so this parse does not fail.
            let mut de = serde_json::Deserializer::from_str(item.get());
            let seed = ItemSeed {
                path,
                i: first + k,
                must,
                out,
            };
            let parsed = seed.deserialize(&mut de)?;
            convert(parsed, path, first + k, must, out);
        }
        Ok(())
    }
}

/// One item of an `entries` array: an object read into its entry as it was parsed, or anything
/// else as a plain tree.
enum Item<'de> {
    /// An object, already read into the entries (with its diagnostics) by [`ItemSeed`].
    Object,
    /// Not an object.
    Other(Raw<'de>),
}

/// Parses item `i` of the `entries` array at `path`: an object straight into its [`Entry`]
/// (added to `out`, with its diagnostics), each field handed to an [`EntryReader`] as it is
/// parsed (no plain tree, no list of pairs); keys are borrowed from the text where it has no
/// escapes, and strings, booleans and arrays of strings are parsed straight into their typed
/// form ([`FieldSeed`]). Anything else comes back as a plain tree for [`convert`].
struct ItemSeed<'s> {
    path: &'s str,
    i: usize,
    must: Severity,
    out: &'s mut StreamedEntries,
}

impl<'de> DeserializeSeed<'de> for ItemSeed<'_> {
    type Value = Item<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Item<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ItemSeed<'_> {
    type Value = Item<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Item<'de>, E> {
        Ok(Item::Other(Raw::Null))
    }
    fn visit_none<E>(self) -> Result<Item<'de>, E> {
        Ok(Item::Other(Raw::Null))
    }
    fn visit_bool<E>(self, b: bool) -> Result<Item<'de>, E> {
        Ok(Item::Other(Raw::Bool(b)))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Item<'de>, E> {
        Ok(Item::Other(Raw::Number(n.into())))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Item<'de>, E> {
        Ok(Item::Other(Raw::Number(n.into())))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Item<'de>, E> {
        Ok(Item::Other(Raw::from_f64(n)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Item<'de>, E> {
        Ok(Item::Other(Raw::String(s.to_owned())))
    }
    fn visit_string<E>(self, s: String) -> Result<Item<'de>, E> {
        Ok(Item::Other(Raw::String(s)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Item<'de>, A::Error> {
        Raw::collect_seq(seq, Vec::new()).map(Item::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Item<'de>, A::Error> {
        let at = Idx(&self.path, self.i);
        let StreamedEntries { entries, diags, .. } = self.out;
        let mut r = Repairs {
            diags,
            must: self.must,
        };
        // Built where it is kept (an entry is a few hundred bytes), with room for the keys an
        // entry usually has (the spec's fifteen and a few more). Should the text turn out to
        // be broken, the parse fails and these entries are dropped with it.
        entries.push(Entry::default());
        let Some(slot) = entries.last_mut() else {
            return Err(A::Error::custom("no room for an entry"));
        };
        slot.order = KeyOrder::with_capacity(16);
        let mut entry = EntryReader::new(slot);
        let mut ext = None;
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            if k == "extensions" {
                // Kept as text when it is an object (most readers never look inside).
                let raw = map.next_value::<&'de RawValue>()?;
                ext = Extensions::from_json_text(raw.get());
                let v = match ext {
                    Some(_) => serde_json::Value::Null,
                    None => serde_json::from_str(raw.get()).map_err(A::Error::custom)?,
                };
                entry.add(k, Field::Json(v), &at, &mut r);
                continue;
            }
            let v = map.next_value_seed(FieldSeed)?;
            entry.add(k, v, &at, &mut r);
        }
        entry.finish(ext, &at, &mut r);
        Ok(Item::Object)
    }
}

/// Parses any JSON value into a [`Field`]: a string, a boolean or an array of strings in its
/// typed form, anything else as the `Value` that `serde_json` builds for it (objects and arrays
/// through `Value`'s own `Deserialize`, so the same tree).
struct FieldSeed;

impl<'de> DeserializeSeed<'de> for FieldSeed {
    type Value = Field;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Field, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FieldSeed {
    type Value = Field;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Field, E> {
        Ok(Field::Json(serde_json::Value::Null))
    }
    fn visit_none<E>(self) -> Result<Field, E> {
        Ok(Field::Json(serde_json::Value::Null))
    }
    fn visit_bool<E>(self, b: bool) -> Result<Field, E> {
        Ok(Field::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Field, E> {
        Ok(Field::Json(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Field, E> {
        Ok(Field::Json(n.into()))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Field, E> {
        Ok(Field::Json(Raw::from_f64(n).into_value()))
    }
    fn visit_str<E>(self, s: &str) -> Result<Field, E> {
        Ok(Field::Str(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Field, E> {
        Ok(Field::Str(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Field, A::Error> {
        // Strings while every item is one; from the first other item on, JSON values.
        let mut strings = Vec::new();
        while let Some(item) = seq.next_element_seed(ListItemSeed)? {
            match item {
                ListItem::Str(s) => strings.push(s),
                ListItem::Json(v) => {
                    let mut items: Vec<serde_json::Value> =
                        strings.into_iter().map(serde_json::Value::String).collect();
                    items.push(v);
                    while let Some(v) = seq.next_element::<serde_json::Value>()? {
                        items.push(v);
                    }
                    return Ok(Field::Json(serde_json::Value::Array(items)));
                }
            }
        }
        Ok(Field::Strings(strings))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Field, A::Error> {
        serde_json::Value::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            .map(Field::Json)
    }
}

/// One item of an array read by [`FieldSeed`].
enum ListItem {
    Str(String),
    Json(serde_json::Value),
}

/// Parses an array item into a [`ListItem`].
struct ListItemSeed;

impl<'de> DeserializeSeed<'de> for ListItemSeed {
    type Value = ListItem;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ListItem, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ListItemSeed {
    type Value = ListItem;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<ListItem, E> {
        Ok(ListItem::Json(serde_json::Value::Null))
    }
    fn visit_none<E>(self) -> Result<ListItem, E> {
        Ok(ListItem::Json(serde_json::Value::Null))
    }
    fn visit_bool<E>(self, b: bool) -> Result<ListItem, E> {
        Ok(ListItem::Json(b.into()))
    }
    fn visit_i64<E>(self, n: i64) -> Result<ListItem, E> {
        Ok(ListItem::Json(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<ListItem, E> {
        Ok(ListItem::Json(n.into()))
    }
    fn visit_f64<E>(self, n: f64) -> Result<ListItem, E> {
        Ok(ListItem::Json(Raw::from_f64(n).into_value()))
    }
    fn visit_str<E>(self, s: &str) -> Result<ListItem, E> {
        Ok(ListItem::Str(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<ListItem, E> {
        Ok(ListItem::Str(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ListItem, A::Error> {
        serde_json::Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
            .map(ListItem::Json)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ListItem, A::Error> {
        serde_json::Value::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            .map(ListItem::Json)
    }
}

/// Adds one parsed item to the entries (items that are not objects get a diagnostic only).
fn convert(item: Item<'_>, path: &str, i: usize, must: Severity, out: &mut StreamedEntries) {
    match item {
        Item::Object => {}
        Item::Other(raw) => {
            let mut r = Repairs {
                diags: &mut out.diags,
                must,
            };
            if let Some(e) = Entry::read(raw, &Idx(&path, i), &mut r) {
                out.entries.push(e);
            }
        }
    }
}

/// Parses JSON text into the model's fast raw tree and hands it to `f` (the tree borrows the
/// text, which may have been decoded from UTF-16 here, or repaired of lone surrogates). Lorebook
/// entries are converted while parsing where their place is known (see `model::stream`);
/// `bare_books` adds the guess for a top-level `entries` array.
pub(crate) fn with_raw<T>(
    bytes: &[u8],
    opts: &crate::ReadOptions,
    bare_books: bool,
    f: impl FnOnce(Raw<'_>, Vec<Diagnostic>) -> crate::Result<T>,
) -> crate::Result<T> {
    with_raw_text(Text::Bytes(bytes), opts, bare_books, f)
}

/// [`with_raw`] of a text already checked as UTF-8 (a PNG card chunk decoded to a `String`): the
/// parser does not check each string again (issue 16: that second pass was 4% of `ccv3 validate
/// DIR`). The same tree, diagnostics and errors as [`with_raw`] of its bytes.
pub(crate) fn with_raw_str<T>(
    text: &str,
    opts: &crate::ReadOptions,
    bare_books: bool,
    f: impl FnOnce(Raw<'_>, Vec<Diagnostic>) -> crate::Result<T>,
) -> crate::Result<T> {
    with_raw_text(Text::Str(text), opts, bare_books, f)
}

pub(crate) fn with_raw_text<T>(
    text: Text<'_>,
    opts: &crate::ReadOptions,
    bare_books: bool,
    f: impl FnOnce(Raw<'_>, Vec<Diagnostic>) -> crate::Result<T>,
) -> crate::Result<T> {
    json::with_text(text, opts, |text, mut diags| {
        match parse(text, bare_books, opts.entry_thread) {
            Ok(raw) => f(raw, diags),
            Err(e) if json::is_lone_surrogate_error(&e) => {
                let Some(repair) = json::repair_lone_surrogates(text.as_bytes()) else {
                    return Err(crate::Error::from_json(&e));
                };
                let raw = parse(Text::Bytes(&repair.text), bare_books, opts.entry_thread)
                    .map_err(|e| crate::Error::from_json(&e))?;
                diags.push(repair.diagnostic());
                f(raw, diags)
            }
            Err(e) => Err(crate::Error::from_json(&e)),
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::{read_bytes, Card, Diagnostic, Document, Lorebook};
    use serde_json::{json, Value};

    /// Entries with every kind of repair the reader makes, and items that are not objects.
    fn entries(n: usize) -> Vec<Value> {
        (0..n)
            .map(|i| match i % 7 {
                0 => json!({"keys": ["k"], "content": format!("c{i}"), "extensions": {"depth": 4},
                    "enabled": true, "insertion_order": i, "use_regex": false, "x_extra": [1, 2]}),
                1 => json!({"keys": "one key", "content": "c", "extensions": {}, "enabled": "true",
                    "insertion_order": "5"}),
                2 => json!("not an entry"),
                3 => json!({"content": 7, "position": 0, "id": [1]}),
                4 => json!({"keys": ["a", 1, null], "content": "c", "extensions": null,
                    "enabled": false, "insertion_order": 1.5, "use_regex": true,
                    "secondary_keys": "b", "case_sensitive": "yes"}),
                5 => json!({"insertion_order": 3, "keys": [], "content": "", "extensions": {},
                    "enabled": true, "use_regex": false, "name": "n", "comment": null}),
                _ => json!(null),
            })
            .collect()
    }

    fn card_of(doc: Document) -> (Card, Vec<Diagnostic>) {
        match doc {
            Document::Card(cf) => (cf.card, cf.diagnostics),
            Document::Lorebook(_) => panic!("expected a card"),
        }
    }

    fn book_of(doc: Document) -> (Lorebook, Vec<Diagnostic>) {
        match doc {
            Document::Lorebook(bf) => (bf.book, bf.diagnostics),
            Document::Card(_) => panic!("expected a lorebook"),
        }
    }

    /// The card as the plain (`Value`) reader reads it.
    fn plain_card(v: &Value) -> (Card, Vec<Diagnostic>) {
        let mut diags = Vec::new();
        let card = Card::from_json(v.clone(), &mut diags).unwrap();
        (card, diags)
    }

    #[test]
    fn streamed_card_book_entries_read_exactly_as_the_plain_reader_for_v3_and_v2() {
        // Below and above the point where a second thread converts entries when asked for
        // (64 entries are converted inline), with and without asking.
        for entry_thread in [false, true] {
            let opts = crate::ReadOptions::default().entry_thread(entry_thread);
            for n in [0, 5, 65, 1000] {
                for spec in ["chara_card_v3", "chara_card_v2"] {
                    let v = json!({"spec": spec, "spec_version": "3.0", "data": {
                        "name": "A", "character_book": {"name": "B", "entries": entries(n),
                        "extensions": {}}}});
                    let text = serde_json::to_vec(&v).unwrap();
                    let (card, diags) = card_of(crate::read_bytes_with(&text, &opts).unwrap());
                    let (plain, plain_diags) = plain_card(&v);
                    let what = format!("{spec} with {n} entries, entry_thread {entry_thread}");
                    assert_eq!(card, plain, "{what}");
                    assert_eq!(diags, plain_diags, "{what}");
                    assert_eq!(card.to_v3_json(), plain.to_v3_json());
                }
            }
        }
    }

    /// House rules (ARCHITECTURE.md, "Libraries embed anywhere": no threads unless the caller
    /// asks) and issue 16 (the CLI's folder pipelines already keep both cores busy): a big
    /// book's second thread starts only when `ReadOptions::entry_thread` asks for it.
    #[cfg(feature = "parallel")]
    #[test]
    fn a_second_thread_only_when_asked_for() {
        let v = json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {
            "name": "A", "character_book": {"name": "B", "entries": entries(1000)}}});
        let text = serde_json::to_vec(&v).unwrap();
        let started = || super::parallel::STARTED.with(std::cell::Cell::get);
        let before = started();
        let plain = card_of(read_bytes(&text).unwrap());
        assert_eq!(started(), before, "read_bytes started a thread");
        let opts = crate::ReadOptions::default().entry_thread(true);
        let threaded = card_of(crate::read_bytes_with(&text, &opts).unwrap());
        assert_eq!(started(), before + 1, "entry_thread started no thread");
        assert_eq!(plain, threaded);
    }

    #[cfg(feature = "parallel")]
    #[test]
    fn batches_converted_out_of_order_join_in_array_order() {
        use super::parallel::Assembly;
        use super::{Place, StreamedEntries};
        let part = |from: usize, n: usize| StreamedEntries {
            entries: (from..from + n)
                .map(|i| crate::Entry::new(&["k"], &i.to_string()))
                .collect(),
            diags: Vec::new(),
            place: Place::Bare,
        };
        let mut a = Assembly {
            next: 2,
            waiting: Default::default(),
            out: part(0, 2),
            failed: None,
        };
        // Batches of 3 items from item 2; the one at 8 holds a non-object (2 entries only).
        a.add(11, 3, part(10, 3));
        a.add(5, 3, part(5, 3));
        assert_eq!(
            a.out.entries.len(),
            2,
            "nothing can join before item 2 is in"
        );
        a.add(8, 3, part(8, 2));
        a.add(2, 3, part(2, 3));
        assert_eq!(a.next, 14);
        assert!(a.waiting.is_empty());
        let contents: Vec<&str> = a.out.entries.iter().map(|e| e.content.as_str()).collect();
        assert_eq!(
            contents,
            ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"]
        );
    }

    /// Issue 16: entry fields parsed straight into their typed form (`model::fields::Field`)
    /// read exactly as their JSON does (SPEC_V3.md, "`entries` Fields" and "Optional `entries`
    /// Fields": the same entries, repairs and diagnostics), for the spec's types and every
    /// other shape a field can take.
    #[test]
    fn typed_entry_fields_read_exactly_as_their_json() {
        let odd = [
            json!(null),
            json!(true),
            json!(0),
            json!(-7),
            json!(1.5),
            json!(-0.0),
            json!(1e300),
            json!(18446744073709551615u64),
            json!(""),
            json!("  "),
            json!("a, b ,c"),
            json!("quote \" é \u{1F600}"),
            json!("true"),
            json!("0"),
            json!("{\"a\":1}"),
            json!([]),
            json!(["a"]),
            json!(["a", "b"]),
            json!(["a", 1, null, true, 2.5]),
            json!([null]),
            json!([["nested"], {"o": 1}]),
            json!(["x", ["y"]]),
            json!({}),
            json!({"a": [1, {"b": null}], "c": "d"}),
        ];
        // The fields the spec names, and one it does not.
        let fields: Vec<&str> = crate::model::book::ENTRY_FIELDS
            .iter()
            .copied()
            .chain(["x_unknown"])
            .collect();
        let mut items = Vec::new();
        for (i, field) in fields.iter().enumerate() {
            for (j, v) in odd.iter().enumerate() {
                let mut e = json!({"keys": ["k"], "content": "c", "extensions": {},
                    "enabled": true, "insertion_order": 1, "use_regex": false});
                // Every field both replacing a present key and added after the others.
                if (i + j) % 2 == 0 {
                    e[*field] = v.clone();
                } else {
                    e.as_object_mut().unwrap().remove(*field);
                    e.as_object_mut()
                        .unwrap()
                        .insert((*field).to_string(), v.clone());
                }
                items.push(e);
            }
        }
        for spec in ["chara_card_v3", "chara_card_v2"] {
            let v = json!({"spec": spec, "spec_version": "3.0", "data": {
                "name": "A", "character_book": {"entries": items.clone(), "extensions": {}}}});
            let text = serde_json::to_vec(&v).unwrap();
            let (card, diags) = card_of(read_bytes(&text).unwrap());
            let (plain, plain_diags) = plain_card(&v);
            assert!(!diags.is_empty());
            assert_eq!(diags, plain_diags, "{spec}");
            assert_eq!(card, plain, "{spec}");
            assert_eq!(card.to_v3_json(), plain.to_v3_json(), "{spec}");
        }
    }

    #[test]
    fn spec_after_data_reads_the_same_without_streaming() {
        let v = json!({"data": {"name": "A", "character_book": {"entries": entries(300)}},
            "spec": "chara_card_v3", "spec_version": "3.0"});
        let (card, diags) = card_of(read_bytes(&serde_json::to_vec(&v).unwrap()).unwrap());
        assert_eq!((card, diags), plain_card(&v));
    }

    #[test]
    fn streamed_lorebook_v3_and_bare_book_entries_read_exactly_as_the_plain_reader() {
        let data = json!({"name": "B", "extensions": {}, "entries": entries(400)});
        let v3 = json!({"spec": "lorebook_v3", "data": data});
        let (book, diags) = book_of(read_bytes(&serde_json::to_vec(&v3).unwrap()).unwrap());
        let mut plain_diags = Vec::new();
        let plain = Lorebook::from_json(data.clone(), "data", true, &mut plain_diags).unwrap();
        assert_eq!((book, diags), (plain, plain_diags));

        let bare = json!({"entries": entries(400), "name": "B"});
        let (book, diags) = book_of(read_bytes(&serde_json::to_vec(&bare).unwrap()).unwrap());
        let mut plain_diags = Vec::new();
        let plain = Lorebook::from_json(bare, "", false, &mut plain_diags).unwrap();
        assert_eq!((book, diags), (plain, plain_diags));
    }

    #[test]
    fn top_level_entries_beside_v1_card_fields_make_a_lorebook_that_keeps_them() {
        // Issue 13: `entries` holding lorebook entries make a lorebook whatever else the file
        // carries; the card-like fields stay as unknown book fields.
        let items = entries(300);
        let v = json!({"entries": items, "name": "Aqua", "first_mes": "Hi"});
        let (book, _) = book_of(read_bytes(&serde_json::to_vec(&v).unwrap()).unwrap());
        assert_eq!(book.name.as_deref(), Some("Aqua"));
        assert_eq!(book.extra.get("first_mes"), Some(&json!("Hi")));
        let written = book.to_json().to_string();
        assert!(written.contains("\"x_extra\":[1,2]"), "entries lost");
        // Entries that are not entry-shaped leave a V1 card with an `entries` field.
        let odd = json!({"entries": [1, 2], "name": "Aqua", "first_mes": "Hi"});
        let (card, _) = card_of(read_bytes(&serde_json::to_vec(&odd).unwrap()).unwrap());
        assert_eq!(card.extra.get("entries"), Some(&json!([1, 2])));
    }

    #[test]
    fn top_level_entries_shaped_like_novelai_or_agnai_are_read_by_their_importers() {
        let novel = json!({"entries": [{"text": "t", "keys": ["k"], "displayName": "d"}]});
        let (book, _) = book_of(read_bytes(&serde_json::to_vec(&novel).unwrap()).unwrap());
        assert_eq!(book.entries[0].content, "t");
        let agnai = json!({"entries": [{"entry": "e", "keywords": ["k"], "name": "n"}]});
        let (book, _) = book_of(read_bytes(&serde_json::to_vec(&agnai).unwrap()).unwrap());
        assert_eq!(book.entries[0].content, "e");
        // A marker after the entries decides too.
        let marked = json!({"entries": [{"entry": "e", "keywords": ["k"], "content": "c"}],
            "kind": "memory"});
        let (book, _) = book_of(read_bytes(&serde_json::to_vec(&marked).unwrap()).unwrap());
        assert_eq!(book.entries[0].content, "e");
    }

    #[test]
    fn broken_json_inside_streamed_entries_is_an_error_with_its_place() {
        let v = json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {
            "name": "A", "character_book": {"entries": entries(500)}}});
        let mut text = serde_json::to_string(&v).unwrap();
        // Cut the text in the middle of the entries.
        text.truncate(text.len() * 3 / 4);
        let err = read_bytes(text.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("EOF") || err.contains("end of"), "{err}");
        let text = serde_json::to_string(&v)
            .unwrap()
            .replacen("\"c7\"", "\"c7\" nope", 1);
        let err = read_bytes(text.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("line 1"), "{err}");
    }
}
