//! Lorebooks (`character_book` and standalone `lorebook_v3`) and their entries.

use super::extensions::Extensions;
use super::fields::{
    self, arranged, join, list, s, Arranged, At, Field, Idx, KeyOrder, Object, Out, Repairs,
};
use super::raw::Raw;
use crate::diag::{Diagnostic, Severity};
use serde_json::{Number, Value};
use std::fmt;

/// A lorebook: the spec's `Lorebook` object. Unknown fields are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Lorebook {
    /// `name`: identifies the book; never used in prompts.
    pub name: Option<String>,
    /// `description`: comments on the book; never used in prompts.
    pub description: Option<String>,
    /// `scan_depth`: how many recent messages are scanned for keys.
    pub scan_depth: Option<Number>,
    /// `token_budget`: the most tokens the book's entries may take.
    pub token_budget: Option<Number>,
    /// `recursive_scanning`: whether entry contents are scanned for further keys.
    pub recursive_scanning: Option<bool>,
    /// `extensions`: application data, kept as is.
    pub extensions: Object,
    /// `entries`, in file order.
    pub entries: Vec<Entry>,
    /// Fields the spec does not name, in file order.
    pub extra: Object,
    /// The key order as read (written back the same way); `KeyOrder::default()` for new values.
    pub order: KeyOrder,
}

/// One lorebook entry. Unknown fields are kept in `extra`.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// `keys`: the primary keys (plain text, or regex patterns when `use_regex`).
    pub keys: Vec<String>,
    /// `content`: the text inserted into the prompt; may start with `@@decorator` lines.
    pub content: String,
    /// `extensions`: application data (SillyTavern World Info fields live here), kept as the
    /// text read until looked into.
    pub extensions: Extensions,
    /// `enabled`: false means never inserted, in any case.
    pub enabled: bool,
    /// `insertion_order`: lower is inserted earlier.
    pub insertion_order: Number,
    /// `case_sensitive`: whether keys match case-sensitively.
    pub case_sensitive: Option<bool>,
    /// `use_regex`: keys are regex patterns.
    pub use_regex: bool,
    /// `constant`: always a match (when decorators allow).
    pub constant: Option<bool>,
    /// `name`: identifies the entry; never used in prompts.
    pub name: Option<String>,
    /// `priority`: lowest is dropped first when the budget is exceeded.
    pub priority: Option<Number>,
    /// `id`: a number or a string.
    pub id: Option<Value>,
    /// `comment`: notes on the entry; never used in prompts.
    pub comment: Option<String>,
    /// `selective`: `secondary_keys` must match too.
    pub selective: Option<bool>,
    /// `secondary_keys`.
    pub secondary_keys: Option<Vec<String>>,
    /// `position`: `before_char` or `after_char`.
    pub position: Option<String>,
    /// Fields the spec does not name, in file order.
    pub extra: Object,
    /// The key order as read (written back the same way); `KeyOrder::default()` for new values.
    pub order: KeyOrder,
}

impl Default for Entry {
    fn default() -> Self {
        Entry {
            keys: Vec::new(),
            content: String::new(),
            extensions: Extensions::new(),
            enabled: true,
            insertion_order: Number::from(100),
            case_sensitive: None,
            use_regex: false,
            constant: None,
            name: None,
            priority: None,
            id: None,
            comment: None,
            selective: None,
            secondary_keys: None,
            position: None,
            extra: Object::new(),
            order: KeyOrder::default(),
        }
    }
}

/// Books with at least this many entries are read on two threads (feature `parallel`).
#[cfg(feature = "parallel")]
const PARALLEL_ENTRIES: usize = 512;

/// Reads the items of an `entries` array numbered from `first`, in order.
fn read_items(items: Vec<Raw<'_>>, path: &str, first: usize, r: &mut Repairs) -> Vec<Entry> {
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        if let Some(e) = Entry::read(item, &Idx(&path, first + i), r) {
            out.push(e);
        }
    }
    out
}

/// Reads an `entries` array in order, on this thread.
#[cfg(not(feature = "parallel"))]
fn read_entries(items: Vec<Raw<'_>>, path: &str, r: &mut Repairs) -> Vec<Entry> {
    read_items(items, path, 0, r)
}

/// Reads an `entries` array in order. Big books are split in two halves read on two threads
/// (each with its own diagnostics, appended in order), so a large card's entries are built on
/// both cores once its JSON is parsed.
#[cfg(feature = "parallel")]
fn read_entries(mut items: Vec<Raw<'_>>, path: &str, r: &mut Repairs) -> Vec<Entry> {
    if items.len() < PARALLEL_ENTRIES {
        return read_items(items, path, 0, r);
    }
    let mid = items.len() / 2;
    // Taken by the second thread, or by this one when no thread can be had.
    let second = std::sync::Mutex::new(Some(items.split_off(mid)));
    let must = r.must;
    let read_second = || {
        let mut diags = Vec::new();
        let taken = second.lock().unwrap_or_else(|e| e.into_inner()).take();
        let entries = taken.map_or_else(Vec::new, |items| {
            read_items(
                items,
                path,
                mid,
                &mut Repairs {
                    diags: &mut diags,
                    must,
                },
            )
        });
        (entries, diags)
    };
    std::thread::scope(|s| {
        let handle = std::thread::Builder::new()
            .spawn_scoped(s, read_second)
            .ok();
        let mut entries = read_items(items, path, 0, r);
        let (tail, tail_diags) = match handle {
            // The other half cannot panic on input; if it did, that bug surfaces here as it
            // would have on this thread.
            Some(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
            None => read_second(),
        };
        entries.extend(tail);
        r.diags.extend(tail_diags);
        entries
    })
}

/// The entry fields the spec names, in spec order.
pub(crate) const ENTRY_FIELDS: [&str; 15] = [
    "keys",
    "content",
    "extensions",
    "enabled",
    "insertion_order",
    "case_sensitive",
    "use_regex",
    "constant",
    "name",
    "priority",
    "id",
    "comment",
    "selective",
    "secondary_keys",
    "position",
];

/// An entry field the spec names; its discriminant is its place in [`ENTRY_FIELDS`].
#[derive(Clone, Copy)]
enum EntryField {
    Keys,
    Content,
    Extensions,
    Enabled,
    InsertionOrder,
    CaseSensitive,
    UseRegex,
    Constant,
    Name,
    Priority,
    Id,
    Comment,
    Selective,
    SecondaryKeys,
    Position,
}

/// The entry field `key` names (one branch on the length, then a compare, for the fifteen keys
/// every entry repeats; the reader then dispatches on the variant, not on the text again).
fn entry_field(key: &str) -> Option<EntryField> {
    use EntryField as F;
    let k = key.as_bytes();
    let is = |name: &[u8]| same_bytes(k, name);
    Some(match k.len() {
        2 if is(b"id") => F::Id,
        4 if is(b"keys") => F::Keys,
        4 if is(b"name") => F::Name,
        7 if is(b"content") => F::Content,
        7 if is(b"enabled") => F::Enabled,
        7 if is(b"comment") => F::Comment,
        8 if is(b"constant") => F::Constant,
        8 if is(b"priority") => F::Priority,
        8 if is(b"position") => F::Position,
        9 if is(b"use_regex") => F::UseRegex,
        9 if is(b"selective") => F::Selective,
        10 if is(b"extensions") => F::Extensions,
        14 if is(b"case_sensitive") => F::CaseSensitive,
        14 if is(b"secondary_keys") => F::SecondaryKeys,
        15 if is(b"insertion_order") => F::InsertionOrder,
        _ => return None,
    })
}

/// `a == b`, compared for 2 to 16 bytes as two overlapping words: a slice compare of some
/// lengths is a call to a byte-by-byte `memcmp` in the npm core (opt-level "s"; issue 29: 1.5%
/// of a big book's read + `JSON.stringify`, from the entries' keys).
#[inline(always)]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    fn pair<const N: usize>(s: &[u8]) -> Option<([u8; N], [u8; N])> {
        let first = s.get(..N)?.try_into().ok()?;
        let last = s.get(s.len().checked_sub(N)?..)?.try_into().ok()?;
        Some((first, last))
    }
    let (x, y) = match n {
        8..=16 => (pair::<8>(a).map(words64), pair::<8>(b).map(words64)),
        4..=7 => (pair::<4>(a).map(words32), pair::<4>(b).map(words32)),
        _ => return a == b,
    };
    x.is_some() && x == y
}

/// Two 8-byte words as numbers ([`same_bytes`]).
#[inline(always)]
fn words64((a, b): ([u8; 8], [u8; 8])) -> (u64, u64) {
    (u64::from_ne_bytes(a), u64::from_ne_bytes(b))
}

/// Two 4-byte words as numbers, widened ([`same_bytes`]).
#[inline(always)]
fn words32((a, b): ([u8; 4], [u8; 4])) -> (u64, u64) {
    (
        u64::from(u32::from_ne_bytes(a)),
        u64::from(u32::from_ne_bytes(b)),
    )
}

/// A JSON value's type, as far as [`EntryAsIs`] needs it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Shape {
    /// `true` or `false`.
    Bool,
    /// A number.
    Number,
    /// A string; `at_signs` when it holds `@@` (and the caller looked).
    Str {
        /// The string holds `@@`.
        at_signs: bool,
    },
    /// An array of strings only (the empty array included).
    Strings,
    /// An object.
    Object,
    /// Anything else (`null`, other arrays).
    Other,
}

/// The entry fields that must be present for the entry to be read as it stands (the reader
/// adds the missing ones): `keys`, `content`, `extensions`, `enabled`, `insertion_order`,
/// `use_regex`, as bits of their places in [`ENTRY_FIELDS`].
const REQUIRED_ENTRY_FIELDS: u16 = 0b101_1111;

/// An entry's unknown keys are compared pairwise to find one written twice: past this many the
/// entry is not taken as it stands (bounded work on hostile input).
const MAX_EXTRA_KEYS: usize = 16;

/// Whether an entry object is read into the model and written back as the same JSON value (the
/// same keys, in the same order, with the same values), fed its fields in order: each key
/// occurs once, every field the spec names has its type (nothing for [`EntryReader`] to repair,
/// drop or convert) and the required ones are there. Bindings then build such entries from
/// their text with their own JSON parser and read only the others through the model.
/// `decorated` notes what splitting decorators off may change: `@@` in the content or a
/// `decorators` field.
#[derive(Default)]
pub(crate) struct EntryAsIs {
    seen: u16,
    extra: Vec<String>,
    changed: bool,
    /// The content holds `@@`, or the entry has a `decorators` field.
    pub(crate) decorated: bool,
}

impl EntryAsIs {
    /// Notes the field `key` with a value of shape `shape`.
    #[inline(always)]
    pub(crate) fn add(&mut self, key: &str, shape: Shape) {
        let Some(field) = entry_field(key) else {
            if self.extra.len() >= MAX_EXTRA_KEYS || self.extra.iter().any(|k| k == key) {
                self.changed = true;
            } else {
                self.extra.push(key.to_string());
            }
            self.decorated |= key == "decorators";
            return;
        };
        let bit = 1u16 << (field as u16);
        if self.seen & bit != 0 {
            self.changed = true;
        }
        self.seen |= bit;
        use EntryField as F;
        let fits = match field {
            F::Keys | F::SecondaryKeys => shape == Shape::Strings,
            F::Content => {
                self.decorated |= shape == Shape::Str { at_signs: true };
                matches!(shape, Shape::Str { .. })
            }
            F::Extensions => shape == Shape::Object,
            F::Enabled | F::CaseSensitive | F::UseRegex | F::Constant | F::Selective => {
                shape == Shape::Bool
            }
            F::InsertionOrder | F::Priority => shape == Shape::Number,
            F::Name | F::Comment | F::Position => matches!(shape, Shape::Str { .. }),
            F::Id => matches!(shape, Shape::Number | Shape::Str { .. }),
        };
        self.changed |= !fits;
    }

    /// Whether the entry, all its fields noted, is read as it stands.
    pub(crate) fn as_is(&self) -> bool {
        !self.changed && self.seen & REQUIRED_ENTRY_FIELDS == REQUIRED_ENTRY_FIELDS
    }
}

/// The book fields the spec names, in spec order.
pub(crate) const BOOK_FIELDS: [&str; 7] = [
    "name",
    "description",
    "scan_depth",
    "token_budget",
    "recursive_scanning",
    "extensions",
    "entries",
];

/// The spec's `position` for one of SillyTavern's position numbers: `0` is `before_char`, any
/// other number `after_char` (what SillyTavern itself writes for them in a `character_book`).
fn position_name(n: &Number) -> &'static str {
    if n.as_f64() == Some(0.0) {
        "before_char"
    } else {
        "after_char"
    }
}

/// Keeps a numeric `position` in the entry's extensions: at `extensions.position`, where
/// SillyTavern keeps its number (and the lore engine reads it), unless that already holds
/// another value; then at `extensions.ccv3.position`.
fn keep_numeric_position(ext: &mut Extensions, n: Number) {
    let n = Value::Number(n);
    match ext.get("position") {
        None => {
            ext.insert("position".into(), n);
        }
        Some(v) if *v == n => {}
        Some(_) => {
            let stash = ext
                .entry(super::extensions::STASH_KEY)
                .or_insert_with(|| Value::Object(Object::new()));
            match stash {
                Value::Object(m) => {
                    m.insert("position".into(), n);
                }
                // An application's own `ccv3` that is not an object: keep the number beside it.
                _ => {
                    ext.insert("ccv3_position".into(), n);
                }
            }
        }
    }
}

/// An entry read one `(key, value)` pair at a time, in the object's order, into an entry in
/// place: what [`Entry::from_pairs`] does with a list of pairs, fed by the streaming reader as
/// each field is parsed (issue 16: no buffer of pairs, each value moved once, the entry built
/// where it is kept). The same entry, repairs and diagnostics, in the same order, as
/// [`Entry::from_pairs`] of the same pairs.
pub(crate) struct EntryReader<'e> {
    e: &'e mut Entry,
    keys: Option<Field>,
    content: Option<Field>,
    ext: Option<Field>,
    enabled: Option<Field>,
    order: Option<Field>,
    use_regex: Option<Field>,
    numeric_position: Option<Number>,
}

impl<'e> EntryReader<'e> {
    /// A new entry with room for `n` keys in its key order, for [`EntryReader::new`].
    pub(crate) fn blank(n: usize) -> Entry {
        Entry {
            order: KeyOrder::with_capacity(n),
            ..Default::default()
        }
    }

    /// A reader that fills `e`, a blank entry ([`EntryReader::blank`], or `Entry::default()`
    /// with room in its key order).
    pub(crate) fn new(e: &'e mut Entry) -> Self {
        EntryReader {
            e,
            keys: None,
            content: None,
            ext: None,
            enabled: None,
            order: None,
            use_regex: None,
            numeric_position: None,
        }
    }

    /// Reads the entry's next pair; `path` is the entry's place (for diagnostics).
    pub(crate) fn add(
        &mut self,
        k: std::borrow::Cow<'_, str>,
        v: Field,
        path: &dyn fmt::Display,
        r: &mut Repairs,
    ) {
        let e = &mut *self.e;
        let p = At(path, &k);
        let Some(field) = entry_field(&k) else {
            e.order.note_at(None, &ENTRY_FIELDS);
            e.extra.insert(k.into_owned(), v.into_value());
            return;
        };
        e.order.note_at(Some(field as usize), &ENTRY_FIELDS);
        match field {
            EntryField::Keys => self.keys = Some(v),
            EntryField::Content => self.content = Some(v),
            EntryField::Extensions => self.ext = Some(v),
            EntryField::Enabled => self.enabled = Some(v),
            EntryField::InsertionOrder => self.order = Some(v),
            EntryField::UseRegex => self.use_regex = Some(v),
            EntryField::CaseSensitive => e.case_sensitive = fields::boolean_field(v, &p, r),
            EntryField::Constant => e.constant = fields::boolean_field(v, &p, r),
            EntryField::Name => e.name = fields::string_field(v, &p, r),
            EntryField::Priority => e.priority = fields::number(v.into_value(), &p, r),
            EntryField::Id => {
                e.id = match v.into_value() {
                    Value::Null => None,
                    v @ (Value::Number(_) | Value::String(_)) => Some(v),
                    other => {
                        r.push(
                            Severity::Error,
                            "wrong-type",
                            &p,
                            format!(
                                "id must be a number or a string, found {}; kept it",
                                fields::type_name(&other)
                            ),
                        );
                        Some(other)
                    }
                }
            }
            EntryField::Comment => e.comment = fields::string_field(v, &p, r),
            EntryField::Selective => e.selective = fields::boolean_field(v, &p, r),
            EntryField::SecondaryKeys => {
                e.secondary_keys = if v.is_null() {
                    None
                } else {
                    Some(fields::string_list_field(v, &p, true, r))
                }
            }
            EntryField::Position => match v.into_value() {
                Value::String(s) => e.position = Some(s),
                Value::Null => {}
                Value::Number(n) => {
                    // SillyTavern's numbering (0 before the character, 1 after, 2.. other
                    // places): the spec's value is written, the number kept in extensions.
                    let spec = position_name(&n);
                    r.push(
                        Severity::Warning,
                        "entry-position-number",
                        &p,
                        format!(
                            "position is the number {n}; read it as {spec:?} and kept {n} in extensions.position"
                        ),
                    );
                    e.position = Some(spec.to_string());
                    self.numeric_position = Some(n);
                }
                other => {
                    // Not a V3 value (SillyTavern numbers, say): keep it untouched.
                    r.push(
                        Severity::Error,
                        "wrong-type",
                        &p,
                        format!(
                            "position must be a string, found {}; kept it as is",
                            fields::type_name(&other)
                        ),
                    );
                    // Written back where it stood, through `extra`.
                    e.order.keep_last_as_extra();
                    e.extra.insert(k.into_owned(), other);
                }
            },
        }
    }

    /// The entry, once every pair is read: the required fields checked and repaired. With
    /// `ext_text`, the last `extensions` pair was kept as text (its pair held a placeholder).
    pub(crate) fn finish(
        self,
        ext_text: Option<Extensions>,
        path: &dyn fmt::Display,
        r: &mut Repairs,
    ) {
        let EntryReader {
            e,
            keys,
            content,
            ext,
            enabled,
            order,
            use_regex,
            numeric_position,
        } = self;
        e.keys = fields::req_string_list_field(keys, &At(path, "keys"), true, r);
        e.content = fields::req_string_field(content, &At(path, "content"), r);
        e.extensions = match ext_text {
            Some(text) => text,
            None => fields::object(ext.map(Field::into_value), &At(path, "extensions"), r).into(),
        };
        if let Some(n) = numeric_position {
            keep_numeric_position(&mut e.extensions, n);
        }
        e.enabled = match enabled {
            None => {
                r.missing(&At(path, "enabled"), "used true");
                true
            }
            Some(v) => fields::boolean_field(v, &At(path, "enabled"), r).unwrap_or(true),
        };
        e.insertion_order = match order {
            None => {
                r.missing(&At(path, "insertion_order"), "used 100");
                Number::from(100)
            }
            Some(v) => fields::number(v.into_value(), &At(path, "insertion_order"), r)
                .unwrap_or_else(|| Number::from(100)),
        };
        e.use_regex = match use_regex {
            // V2 entries have no use_regex: not a repair worth an error, V3 requires it.
            None => {
                if r.must == Severity::Error {
                    r.missing(&At(path, "use_regex"), "used false");
                }
                false
            }
            Some(v) => fields::boolean_field(v, &At(path, "use_regex"), r).unwrap_or(false),
        };
    }
}

impl Entry {
    /// A new enabled entry with keys and content, insertion order 100.
    pub fn new(keys: &[&str], content: &str) -> Self {
        Entry {
            keys: keys.iter().map(|k| k.to_string()).collect(),
            content: content.to_string(),
            enabled: true,
            insertion_order: Number::from(100),
            ..Default::default()
        }
    }

    /// `insertion_order` as a float (0 when it is not a finite number).
    pub fn insertion_order_f64(&self) -> f64 {
        self.insertion_order.as_f64().unwrap_or(0.0)
    }

    /// `priority` as a float, when present.
    pub fn priority_f64(&self) -> Option<f64> {
        self.priority.as_ref().and_then(Number::as_f64)
    }

    /// Reads an entry from JSON (V2 or V3 shape), repairing what it can.
    pub(crate) fn read(v: Raw, path: &dyn fmt::Display, r: &mut Repairs) -> Option<Entry> {
        let pairs = fields::expect_object(v, path, "entry", r)?;
        let n = pairs.len();
        Some(Entry::from_pairs(
            n,
            pairs
                .into_iter()
                .map(|(k, v)| (k, Field::Json(v.into_value()))),
            None,
            path,
            r,
        ))
    }

    /// Reads an entry from the `n` pairs of its object, in order (what [`Entry::read`] does once
    /// it has an object; the streaming reader parses entry objects straight into pairs). With
    /// `ext_text`, the last `extensions` pair was kept as text (its pair holds a placeholder).
    pub(crate) fn from_pairs<'a>(
        n: usize,
        pairs: impl IntoIterator<Item = (std::borrow::Cow<'a, str>, Field)>,
        ext_text: Option<Extensions>,
        path: &dyn fmt::Display,
        r: &mut Repairs,
    ) -> Entry {
        let mut e = EntryReader::blank(n);
        let mut reader = EntryReader::new(&mut e);
        for (k, v) in pairs {
            reader.add(k, v, path, r);
        }
        reader.finish(ext_text, path, r);
        e
    }

    /// This entry as a V3 JSON object, keys in their original order.
    pub fn to_json(&self) -> Value {
        Value::Object(self.to_object(true))
    }

    /// The key `use_regex` comes before in the entry's V3 object; `None` when it is the last.
    pub(crate) fn key_after_use_regex(&self) -> Option<String> {
        let a = self.arranged(true);
        let mut keys = a.keys().skip_while(|k| *k != "use_regex").skip(1);
        keys.next().map(str::to_string)
    }

    /// Moves `use_regex` before the key `next` in the entry's key order (the V3 order a
    /// backfill stashed); nothing when the entry has no such key.
    pub(crate) fn put_use_regex_before(&mut self, next: &str) {
        let keys: Vec<String> = self
            .arranged(true)
            .keys()
            .filter(|k| *k != "use_regex")
            .map(str::to_string)
            .collect();
        if !keys.iter().any(|k| k == next) {
            return;
        }
        let ordered = keys.iter().flat_map(|k| {
            let first = (k == next).then_some("use_regex");
            first.into_iter().chain(std::iter::once(k.as_str()))
        });
        super::fields::reorder(&mut self.order, &mut self.extra, &ENTRY_FIELDS, ordered);
    }

    /// The entry as an object; `v3 = false` leaves out `use_regex` (the V2 shape).
    pub(crate) fn to_object(&self, v3: bool) -> Object {
        self.arranged(v3).into_object()
    }

    /// The entry's keys in writing order, for [`Entry::to_object`] or straight to text.
    pub(crate) fn arranged(&self, v3: bool) -> Arranged<'_> {
        arranged(
            &self.order,
            vec![
                ("keys", list(&self.keys)),
                ("content", s(&self.content)),
                ("extensions", Some(Out::Ext(&self.extensions))),
                ("enabled", Some(Out::Bool(self.enabled))),
                ("insertion_order", Some(Out::Num(&self.insertion_order))),
                ("case_sensitive", self.case_sensitive.map(Out::Bool)),
                ("use_regex", v3.then_some(Out::Bool(self.use_regex))),
                ("constant", self.constant.map(Out::Bool)),
                ("name", self.name.as_deref().and_then(s)),
                ("priority", self.priority.as_ref().map(Out::Num)),
                ("id", self.id.clone().map(Out::Owned)),
                ("comment", self.comment.as_deref().and_then(s)),
                ("selective", self.selective.map(Out::Bool)),
                (
                    "secondary_keys",
                    self.secondary_keys.as_deref().and_then(list),
                ),
                ("position", self.position.as_deref().and_then(s)),
            ],
            &self.extra,
        )
    }
}

impl Lorebook {
    /// Reads a `character_book` / `lorebook_v3` `data` object (V2 or V3 shape).
    ///
    /// `strict_v3` makes missing required fields errors (the book claims V3); otherwise warnings.
    pub fn from_json(
        v: Value,
        path: &str,
        strict_v3: bool,
        diags: &mut Vec<Diagnostic>,
    ) -> Option<Lorebook> {
        let must = if strict_v3 {
            Severity::Error
        } else {
            Severity::Warning
        };
        let mut r = Repairs { diags, must };
        Self::read(Raw::from_value(v), path, &mut r)
    }

    /// [`Lorebook::from_json`] from the fast raw tree.
    pub(crate) fn from_raw(
        v: Raw,
        path: &str,
        strict_v3: bool,
        diags: &mut Vec<Diagnostic>,
    ) -> Option<Lorebook> {
        let must = if strict_v3 {
            Severity::Error
        } else {
            Severity::Warning
        };
        Self::read(v, path, &mut Repairs { diags, must })
    }

    pub(crate) fn read(v: Raw, path: &str, r: &mut Repairs) -> Option<Lorebook> {
        let path_d: &dyn fmt::Display = &path;
        if v.is_null() {
            return None;
        }
        let pairs = fields::expect_object(v, &path, "lorebook", r)?;
        let mut b = Lorebook {
            order: KeyOrder::with_capacity(pairs.len()),
            ..Default::default()
        };
        let (mut ext, mut entries) = (None, None);
        for (k, v) in pairs {
            let p = At(path_d, &k);
            match b.order.note(&k, &BOOK_FIELDS) {
                Some("name") => b.name = fields::string(v.into_value(), &p, r),
                Some("description") => b.description = fields::string(v.into_value(), &p, r),
                Some("scan_depth") => b.scan_depth = fields::number(v.into_value(), &p, r),
                Some("token_budget") => b.token_budget = fields::number(v.into_value(), &p, r),
                Some("recursive_scanning") => {
                    b.recursive_scanning = fields::boolean(v.into_value(), &p, r)
                }
                Some("extensions") => ext = Some(v.into_value()),
                Some(_) => entries = Some(v),
                None => {
                    b.extra.insert(k.into_owned(), v.into_value());
                }
            }
        }
        b.extensions = fields::object(ext, &At(path_d, "extensions"), r);
        let ep = join(path, "entries");
        match entries {
            None => r.missing(&ep, "used an empty array"),
            Some(Raw::Array(items)) => b.entries = read_entries(items, &ep, r),
            Some(Raw::Entries(streamed)) => {
                let streamed = *streamed;
                b.entries = streamed.entries;
                r.diags.extend(streamed.diags);
            }
            Some(Raw::Object(map)) => {
                // Some exporters write entries keyed by id, like World Info.
                r.push(
                    Severity::Error,
                    "wrong-type",
                    &ep,
                    "entries is an object keyed by id; read its values in order".into(),
                );
                for (i, (_, item)) in map.into_iter().enumerate() {
                    if let Some(e) = Entry::read(item, &Idx(&ep, i), r) {
                        b.entries.push(e);
                    }
                }
            }
            Some(Raw::Null) => r.push(
                r.must,
                "null-value",
                &ep,
                "entries is null; used an empty array".into(),
            ),
            Some(other) => {
                let sev = Severity::Error;
                let found = fields::type_name(&other.into_value());
                r.push(
                    sev,
                    "wrong-type",
                    &ep,
                    format!("entries must be an array, found {found}; used an empty array"),
                );
            }
        }
        Some(b)
    }

    /// This book as a V3 JSON object (the `data` of `lorebook_v3`), keys in original order.
    pub fn to_json(&self) -> Value {
        Value::Object(self.to_object(true))
    }

    pub(crate) fn to_object(&self, v3: bool) -> Object {
        self.arranged(v3).into_object()
    }

    /// The book's keys in writing order, for [`Lorebook::to_object`] or straight to text.
    pub(crate) fn arranged(&self, v3: bool) -> Arranged<'_> {
        self.arranged_with(Out::Entries(&self.entries, v3))
    }

    /// [`Lorebook::to_object`] with the entries as given.
    pub(crate) fn to_object_with(&self, entry: impl Fn(&Entry) -> Value) -> Object {
        let entries = Value::Array(self.entries.iter().map(entry).collect());
        self.arranged_with(Out::Owned(entries)).into_object()
    }

    fn arranged_with<'a>(&'a self, entries: Out<'a>) -> Arranged<'a> {
        arranged(
            &self.order,
            vec![
                ("name", self.name.as_deref().and_then(s)),
                ("description", self.description.as_deref().and_then(s)),
                ("scan_depth", self.scan_depth.as_ref().map(Out::Num)),
                ("token_budget", self.token_budget.as_ref().map(Out::Num)),
                ("recursive_scanning", self.recursive_scanning.map(Out::Bool)),
                ("extensions", Some(Out::Obj(&self.extensions))),
                ("entries", Some(entries)),
            ],
            &self.extra,
        )
    }

    /// The standalone form `{"spec":"lorebook_v3","data":{...}}`.
    pub fn to_lorebook_v3(&self) -> Value {
        let mut m = Object::new();
        m.insert("spec".into(), Value::String("lorebook_v3".into()));
        m.insert("data".into(), self.to_json());
        Value::Object(m)
    }

    /// Writes [`Lorebook::to_lorebook_v3`] to `w` as JSON text, indented or compact, without
    /// building the tree first.
    ///
    /// ```
    /// let book = ccv3::Lorebook::default();
    /// let mut text = Vec::new();
    /// book.write_lorebook_v3(&mut text, true).unwrap();
    /// assert_eq!(text, serde_json::to_vec_pretty(&book.to_lorebook_v3()).unwrap());
    /// ```
    pub fn write_lorebook_v3<W: std::io::Write>(&self, w: W, pretty: bool) -> std::io::Result<()> {
        crate::json::write(w, &self.standalone(), pretty)
    }

    /// Writes the book's `entries` array (V3 shape) as compact JSON text: the same text that
    /// [`Lorebook::write_lorebook_v3`] and [`crate::Card::write_v3_json`] write for it (compact).
    /// Bindings use it to hand over a big book's entries apart from the rest of a card.
    ///
    /// ```
    /// let mut book = ccv3::Lorebook::default();
    /// book.entries.push(ccv3::Entry::new(&["a"], "A."));
    /// let mut text = Vec::new();
    /// book.write_entries_json(&mut text).unwrap();
    /// assert_eq!(text, serde_json::to_vec(&book.to_json()["entries"]).unwrap());
    /// ```
    pub fn write_entries_json<W: std::io::Write>(&self, w: W) -> std::io::Result<()> {
        crate::json::write(w, &Out::Entries(&self.entries, true), false)
    }

    /// The standalone form, ready to be written.
    pub(crate) fn standalone(&self) -> Standalone<'_> {
        Standalone(self.arranged(true))
    }
}

/// `{"spec":"lorebook_v3","data":...}` around an arranged book ([`Lorebook::standalone`]).
pub(crate) struct Standalone<'a>(Arranged<'a>);

impl serde::Serialize for Standalone<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = ser.serialize_map(Some(2))?;
        m.serialize_entry("spec", "lorebook_v3")?;
        m.serialize_entry("data", &self.0)?;
        m.end()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn entry_field_places_match_the_field_list() {
        for (i, k) in super::ENTRY_FIELDS.iter().enumerate() {
            assert_eq!(super::entry_field(k).map(|f| f as usize), Some(i), "{k}");
        }
        assert!(super::entry_field("Keys").is_none());
        // Same length, other bytes, at each end and in the middle.
        for k in [
            "keyz",
            "zeys",
            "contenT",
            "conXent",
            "insertion_ordex",
            "xnsertion_order",
        ] {
            assert!(super::entry_field(k).is_none(), "{k}");
        }
        for (a, b) in [
            ("", ""),
            ("a", "a"),
            ("ab", "ab"),
            ("abc", "abd"),
            ("0123456789abcdefg", "0123456789abcdefg"),
        ] {
            assert_eq!(
                super::same_bytes(a.as_bytes(), b.as_bytes()),
                a == b,
                "{a} {b}"
            );
        }
        let long = "0123456789abcdef";
        for n in 0..=long.len() {
            for at in 0..n {
                let mut other = long.as_bytes()[..n].to_vec();
                other[at] ^= 1;
                assert!(
                    !super::same_bytes(&long.as_bytes()[..n], &other),
                    "{n} {at}"
                );
            }
            assert!(super::same_bytes(
                &long.as_bytes()[..n],
                &long.as_bytes()[..n]
            ));
        }
        assert!(super::entry_field("extra").is_none());
    }

    #[cfg(feature = "parallel")]
    #[test]
    fn big_books_read_on_two_threads_as_on_one() {
        use super::{read_entries, read_items, Raw, Repairs, PARALLEL_ENTRIES};
        use crate::Severity;
        use serde_json::json;
        // Entries with repairs (each with a diagnostic naming its index) and non-objects.
        let items = || -> Vec<Raw<'static>> {
            (0..PARALLEL_ENTRIES * 2 + 3)
                .map(|i| {
                    Raw::from_value(match i % 3 {
                        0 => json!({"keys": "one", "content": i, "enabled": "true"}),
                        1 => json!("not an entry"),
                        _ => json!({"keys": ["k"], "content": "c", "extensions": {},
                            "enabled": true, "insertion_order": i, "use_regex": false}),
                    })
                })
                .collect()
        };
        let run = |two: bool| {
            let mut diags = Vec::new();
            let mut r = Repairs {
                diags: &mut diags,
                must: Severity::Error,
            };
            let entries = if two {
                read_entries(items(), "entries", &mut r)
            } else {
                read_items(items(), "entries", 0, &mut r)
            };
            (entries, diags)
        };
        let (two, one) = (run(true), run(false));
        assert!(!one.1.is_empty());
        assert_eq!(two, one);
    }
}
