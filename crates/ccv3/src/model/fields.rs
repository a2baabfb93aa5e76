//! Lenient field readers and the order-keeping object writer shared by every model level.
//!
//! Reading walks an object's keys in file order: a key the model knows is converted to its typed
//! field (repairing what real applications get wrong and recording a [`Diagnostic`]); every other
//! key goes to the level's `extra` map. The original key order is remembered in a [`KeyOrder`], so
//! writing puts every key back where it was; fields that were absent in the input follow in the
//! spec's order.
//!
//! An import circle with `book`, `asset`, `extensions` and `raw`, kept on purpose: the writer
//! half (`Out`, `Arranged`) names the levels it writes nested (a book, its entries, assets, an
//! extensions object) and each level reads and writes its own fields through this module: the
//! recursion of the card's tree, written once. The reading half names no level; it reads the
//! `raw` tree, which holds a book's entries already converted where they were converted while
//! parsing (`raw::StreamedEntries`).

use super::asset::Asset;
use super::book::{Entry, Lorebook};
use super::extensions::Extensions;
use super::raw::Raw;
use crate::diag::{Diagnostic, Severity};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::fmt;

/// JSON object type used throughout the model (keeps insertion order).
pub type Object = Map<String, Value>;

/// Where a key stood in an object as read: a field the model knows, or the next unknown field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// A known field, by its spec name.
    Known(&'static str),
    /// The next key of the level's `extra` map (which keeps its own order).
    Extra,
}

/// The key order of an object as read, used to write keys back in the same order.
///
/// Known fields are recorded by their place in the level's list of spec fields and unknown ones
/// as "the next extra": one byte per key, no strings.
///
/// Key order is presentation, not meaning: two `KeyOrder`s always compare equal, so values read
/// from differently ordered JSON compare by their content.
#[derive(Debug, Clone, Default)]
pub struct KeyOrder {
    /// The level's spec fields, which the codes index.
    known: &'static [&'static str],
    /// One code per key as read: [`EXTRA`] or a place in `known`.
    codes: Vec<u8>,
}

/// The code of an unknown key (a level has far fewer than 255 spec fields).
const EXTRA: u8 = u8::MAX;

impl PartialEq for KeyOrder {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for KeyOrder {}

impl KeyOrder {
    /// An empty order with room for `n` keys.
    pub(crate) fn with_capacity(n: usize) -> Self {
        KeyOrder {
            known: &[],
            codes: Vec::with_capacity(n),
        }
    }

    /// The order of an existing object's keys, `known` naming the level's spec fields.
    pub(crate) fn of(obj: &Object, known: &'static [&'static str]) -> Self {
        let mut order = KeyOrder::with_capacity(obj.len());
        for k in obj.keys() {
            order.note(k, known);
        }
        order
    }

    /// Records `key`: returns its static name when it is one of `known` (the same list at every
    /// call), else records an extra.
    pub(crate) fn note(
        &mut self,
        key: &str,
        known: &'static [&'static str],
    ) -> Option<&'static str> {
        self.note_at(known.iter().position(|k| *k == key), known)
    }

    /// [`KeyOrder::note`] with the key's place in `known` already found (`None`: not there).
    pub(crate) fn note_at(
        &mut self,
        place: Option<usize>,
        known: &'static [&'static str],
    ) -> Option<&'static str> {
        self.known = known;
        match place.and_then(|i| known.get(i).map(|k| (i, *k))) {
            Some((i, k)) if i < usize::from(EXTRA) => {
                self.codes.push(i as u8);
                Some(k)
            }
            _ => {
                self.codes.push(EXTRA);
                None
            }
        }
    }

    /// Turns the last recorded key into an extra (a known field kept raw in `extra`).
    pub(crate) fn keep_last_as_extra(&mut self) {
        if let Some(last) = self.codes.last_mut() {
            *last = EXTRA;
        }
    }

    /// True when `key` was among the known keys read.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.slots()
            .any(|s| matches!(s, Slot::Known(k) if k == key))
    }

    /// The keys as read, in order.
    pub(crate) fn slots(&self) -> impl Iterator<Item = Slot> + '_ {
        self.codes
            .iter()
            .map(|&c| match self.known.get(usize::from(c)) {
                Some(k) if c != EXTRA => Slot::Known(k),
                _ => Slot::Extra,
            })
    }
}

/// Collects diagnostics while reading, with the severity to use for spec violations.
pub(crate) struct Repairs<'a> {
    pub diags: &'a mut Vec<Diagnostic>,
    /// Severity of a required field that is missing or `null`: an error for cards and books
    /// that claim V3, a warning for V2 and bare books, info (then dropped) for V1. Wrong types
    /// are errors whatever this is.
    pub must: Severity,
}

impl Repairs<'_> {
    pub fn push(
        &mut self,
        severity: Severity,
        code: &str,
        path: &dyn fmt::Display,
        message: String,
    ) {
        self.diags
            .push(Diagnostic::new(severity, code, path.to_string(), message));
    }
    fn wrong_type(&mut self, path: &dyn fmt::Display, expected: &str, got: &Value, fix: &str) {
        // The spec fixes every field's type: a value of another type is an error in every
        // version (see docs/validation.md).
        let sev = Severity::Error;
        self.push(
            sev,
            "wrong-type",
            path,
            format!("expected {expected}, found {}; {fix}", type_name(got)),
        );
    }
    pub fn missing(&mut self, path: &dyn fmt::Display, what: &str) {
        let sev = self.must;
        self.push(
            sev,
            "missing-required-field",
            path,
            format!("required field is missing; {what}"),
        );
    }
}

/// A JSON path made of a base and a key, formatted only when a diagnostic needs it.
#[derive(Clone, Copy)]
pub(crate) struct At<'a>(pub &'a dyn fmt::Display, pub &'a str);

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let base = self.0.to_string();
        if base.is_empty() {
            f.write_str(self.1)
        } else {
            write!(f, "{base}.{}", self.1)
        }
    }
}

/// A JSON path made of a base and an array index, formatted only when needed.
#[derive(Clone, Copy)]
pub(crate) struct Idx<'a>(pub &'a dyn fmt::Display, pub usize);

impl fmt::Display for Idx<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.0, self.1)
    }
}

/// Joins a JSON path and a key: `data` + `name` = `data.name`.
pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Joins a JSON path and an index: `data.tags` + 2 = `data.tags[2]`.
pub(crate) fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

pub(crate) use crate::json::type_name;

/// The pairs of an object, or `None` (with a diagnostic) when `v` is something else.
pub(crate) fn expect_object<'a>(
    v: Raw<'a>,
    path: &dyn fmt::Display,
    what: &str,
    r: &mut Repairs,
) -> Option<Vec<(Cow<'a, str>, Raw<'a>)>> {
    match v {
        Raw::Object(pairs) => Some(pairs),
        other => {
            let sev = Severity::Error;
            let found = type_name(&other.into_value());
            r.push(
                sev,
                "wrong-type",
                path,
                format!("{what} must be an object, found {found}; dropped it"),
            );
            None
        }
    }
}

/// A field's value as the streaming entry reader parses it: the types the spec gives most
/// fields (a string, a boolean, an array of strings) already in their typed form, anything else
/// as JSON. Reading a typed value gives exactly what reading its JSON gives (the `*_field`
/// readers below fall back to the JSON readers for the rest), without building and taking apart
/// a `Value` for each field of each lorebook entry (issue 16).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Field {
    /// A JSON string.
    Str(String),
    /// A JSON boolean.
    Bool(bool),
    /// A JSON array whose items are all strings (possibly none).
    Strings(Vec<String>),
    /// Any other JSON value.
    Json(Value),
}

impl Field {
    /// The value as JSON.
    pub(crate) fn into_value(self) -> Value {
        match self {
            Field::Str(s) => Value::String(s),
            Field::Bool(b) => Value::Bool(b),
            Field::Strings(items) => Value::Array(items.into_iter().map(Value::String).collect()),
            Field::Json(v) => v,
        }
    }

    /// True for `null`.
    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Field::Json(Value::Null))
    }

    /// A value of the raw tree as a field (strings, booleans and arrays of strings typed).
    pub(crate) fn from_raw(v: Raw<'_>) -> Field {
        match v {
            Raw::String(s) => Field::Str(s),
            Raw::Bool(b) => Field::Bool(b),
            Raw::Array(items) if items.iter().all(|i| matches!(i, Raw::String(_))) => {
                Field::Strings(
                    items
                        .into_iter()
                        .filter_map(|i| match i {
                            Raw::String(s) => Some(s),
                            _ => None,
                        })
                        .collect(),
                )
            }
            other => Field::Json(other.into_value()),
        }
    }
}

/// [`string`] of a [`Field`].
#[inline]
pub(crate) fn string_field(v: Field, path: &dyn fmt::Display, r: &mut Repairs) -> Option<String> {
    match v {
        Field::Str(s) => Some(s),
        other => string(other.into_value(), path, r),
    }
}

/// [`req_string`] of a [`Field`].
#[inline]
pub(crate) fn req_string_field(
    v: Option<Field>,
    path: &dyn fmt::Display,
    r: &mut Repairs,
) -> String {
    match v {
        Some(Field::Str(s)) => s,
        other => req_string(other.map(Field::into_value), path, r),
    }
}

/// [`string_list`] of a [`Field`].
#[inline]
pub(crate) fn string_list_field(
    v: Field,
    path: &dyn fmt::Display,
    split_commas: bool,
    r: &mut Repairs,
) -> Vec<String> {
    match v {
        Field::Strings(items) => items,
        other => string_list(other.into_value(), path, split_commas, r),
    }
}

/// [`req_string_list`] of a [`Field`].
#[inline]
pub(crate) fn req_string_list_field(
    v: Option<Field>,
    path: &dyn fmt::Display,
    split_commas: bool,
    r: &mut Repairs,
) -> Vec<String> {
    match v {
        Some(Field::Strings(items)) => items,
        other => req_string_list(other.map(Field::into_value), path, split_commas, r),
    }
}

/// [`boolean`] of a [`Field`].
#[inline]
pub(crate) fn boolean_field(v: Field, path: &dyn fmt::Display, r: &mut Repairs) -> Option<bool> {
    match v {
        Field::Bool(b) => Some(b),
        other => boolean(other.into_value(), path, r),
    }
}

/// Reads a string field. Numbers and booleans become their text; `null` gives `None`.
pub(crate) fn string(v: Value, path: &dyn fmt::Display, r: &mut Repairs) -> Option<String> {
    match v {
        Value::String(s) => Some(s),
        Value::Null => None,
        Value::Number(n) => {
            r.wrong_type(path, "a string", &Value::Number(n.clone()), "used its text");
            Some(n.to_string())
        }
        Value::Bool(b) => {
            r.wrong_type(path, "a string", &Value::Bool(b), "used its text");
            Some(b.to_string())
        }
        Value::Array(items) if items.iter().all(|i| i.is_string()) => {
            r.wrong_type(path, "a string", &Value::Array(vec![]), "joined its lines");
            let lines: Vec<String> = items
                .into_iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect();
            Some(lines.join("\n"))
        }
        other => {
            r.wrong_type(path, "a string", &other, "used its JSON text");
            Some(other.to_string())
        }
    }
}

/// Reads a required string field, defaulting to empty (with a diagnostic) when absent or null.
pub(crate) fn req_string(v: Option<Value>, path: &dyn fmt::Display, r: &mut Repairs) -> String {
    match v {
        None => {
            r.missing(path, "used an empty string");
            String::new()
        }
        Some(Value::Null) => {
            let sev = r.must;
            r.push(
                sev,
                "null-value",
                path,
                "required string is null; used an empty string".into(),
            );
            String::new()
        }
        Some(v) => string(v, path, r).unwrap_or_default(),
    }
}

/// Reads an array of strings. A single string becomes a one-element array (split on commas for
/// `split_commas` fields such as tags); non-string items are converted.
pub(crate) fn string_list(
    v: Value,
    path: &dyn fmt::Display,
    split_commas: bool,
    r: &mut Repairs,
) -> Vec<String> {
    match v {
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                let p = Idx(path, i);
                match item {
                    Value::String(s) => out.push(s),
                    Value::Null => r.push(r.must, "null-value", &p, "null item dropped".into()),
                    other => {
                        if let Some(s) = string(other, &p, r) {
                            out.push(s)
                        }
                    }
                }
            }
            out
        }
        Value::Null => {
            r.push(
                r.must,
                "null-value",
                path,
                "null array; used an empty array".into(),
            );
            Vec::new()
        }
        Value::String(s) => {
            r.wrong_type(
                path,
                "an array of strings",
                &Value::String(String::new()),
                "split it",
            );
            if s.trim().is_empty() {
                Vec::new()
            } else if split_commas {
                s.split(',')
                    .map(|t| t.trim().to_string())
                    .filter(|t| !t.is_empty())
                    .collect()
            } else {
                vec![s]
            }
        }
        other => {
            r.wrong_type(
                path,
                "an array of strings",
                &other,
                "used its text as one item",
            );
            string(other, path, r).into_iter().collect()
        }
    }
}

/// Reads a required array of strings, defaulting to empty (with a diagnostic) when absent.
pub(crate) fn req_string_list(
    v: Option<Value>,
    path: &dyn fmt::Display,
    split_commas: bool,
    r: &mut Repairs,
) -> Vec<String> {
    match v {
        None => {
            r.missing(path, "used an empty array");
            Vec::new()
        }
        Some(v) => string_list(v, path, split_commas, r),
    }
}

/// Reads a boolean: `"true"`/`"false"`, `1`/`0` are repaired; `null` gives `None`.
pub(crate) fn boolean(v: Value, path: &dyn fmt::Display, r: &mut Repairs) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(b),
        Value::Null => None,
        Value::String(ref s) => {
            let b = match s.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" => Some(true),
                "false" | "0" | "no" | "" => Some(false),
                _ => None,
            };
            r.wrong_type(
                path,
                "a boolean",
                &v,
                if b.is_some() {
                    "converted it"
                } else {
                    "ignored it"
                },
            );
            b
        }
        Value::Number(ref n) => {
            let b = n.as_f64().map(|f| f != 0.0);
            r.wrong_type(path, "a boolean", &v, "converted it");
            b
        }
        other => {
            r.wrong_type(path, "a boolean", &other, "ignored it");
            None
        }
    }
}

/// Reads a number: numeric strings are repaired; `null` gives `None`.
pub(crate) fn number(v: Value, path: &dyn fmt::Display, r: &mut Repairs) -> Option<Number> {
    match v {
        Value::Number(n) => Some(n),
        Value::Null => None,
        Value::String(ref s) => {
            let t = s.trim();
            let n = t
                .parse::<i64>()
                .ok()
                .map(Number::from)
                .or_else(|| t.parse::<f64>().ok().and_then(Number::from_f64));
            r.wrong_type(
                path,
                "a number",
                &v,
                if n.is_some() {
                    "converted it"
                } else {
                    "ignored it"
                },
            );
            n
        }
        Value::Bool(b) => {
            r.wrong_type(path, "a number", &v, "converted it");
            Some(Number::from(b as i64))
        }
        other => {
            r.wrong_type(path, "a number", &other, "ignored it");
            None
        }
    }
}

/// Reads an object (`extensions`): absent or `null` gives an empty object with a diagnostic.
pub(crate) fn object(v: Option<Value>, path: &dyn fmt::Display, r: &mut Repairs) -> Object {
    match v {
        Some(Value::Object(m)) => m,
        None => {
            r.push(
                r.must,
                "missing-required-field",
                path,
                "extensions is missing; used {}".into(),
            );
            Object::new()
        }
        Some(Value::Null) => {
            r.push(
                r.must,
                "null-value",
                path,
                "extensions is null; used {}".into(),
            );
            Object::new()
        }
        Some(Value::String(s)) if s.trim().starts_with('{') => match serde_json::from_str(&s) {
            Ok(Value::Object(m)) => {
                r.push(
                    Severity::Error,
                    "wrong-type",
                    path,
                    "object stored as JSON text; parsed it".into(),
                );
                m
            }
            _ => {
                r.push(
                    Severity::Error,
                    "wrong-type",
                    path,
                    "expected an object; used {}".into(),
                );
                Object::new()
            }
        },
        Some(other) => {
            r.wrong_type(path, "an object", &other, "used {}");
            Object::new()
        }
    }
}

/// A field's value on its way out: borrowed from the model where it can be, so that an object
/// can be written straight to text ([`Arranged`] is `Serialize`) or built as a tree
/// ([`arrange`]) from the one list of fields each level gives.
pub(crate) enum Out<'a> {
    Str(&'a str),
    List(&'a [String]),
    Bool(bool),
    Num(&'a Number),
    Obj(&'a Object),
    Ext(&'a Extensions),
    /// A value made for the occasion.
    Owned(Value),
    /// A book's entries (`true`: the V3 shape).
    Entries(&'a [Entry], bool),
    /// A book (`true`: the V3 shape).
    Book(&'a Lorebook, bool),
    Assets(&'a [Asset]),
    /// A nested object already arranged.
    Arranged(Box<Arranged<'a>>),
}

impl Out<'_> {
    /// The value as a tree.
    fn into_value(self) -> Value {
        match self {
            Out::Str(s) => Value::String(s.to_string()),
            Out::List(l) => Value::Array(l.iter().map(|x| Value::String(x.clone())).collect()),
            Out::Bool(b) => Value::Bool(b),
            Out::Num(n) => Value::Number(n.clone()),
            Out::Obj(o) => Value::Object(o.clone()),
            Out::Ext(e) => e.to_value(),
            Out::Owned(v) => v,
            Out::Entries(es, v3) => {
                Value::Array(es.iter().map(|e| Value::Object(e.to_object(v3))).collect())
            }
            Out::Book(b, v3) => Value::Object(b.to_object(v3)),
            Out::Assets(a) => Value::Array(a.iter().map(Asset::to_json).collect()),
            Out::Arranged(a) => Value::Object(a.into_object()),
        }
    }
}

impl Serialize for Out<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        match self {
            Out::Str(s) => ser.serialize_str(s),
            Out::List(l) => ser.collect_seq(l.iter()),
            Out::Bool(b) => ser.serialize_bool(*b),
            Out::Num(n) => n.serialize(ser),
            Out::Obj(o) => o.serialize(ser),
            Out::Ext(e) => e.serialize_with(ser),
            Out::Owned(v) => v.serialize(ser),
            Out::Entries(es, v3) => ser.collect_seq(es.iter().map(|e| e.arranged(*v3))),
            Out::Book(b, v3) => b.arranged(*v3).serialize(ser),
            Out::Assets(a) => ser.collect_seq(a.iter().map(Asset::arranged)),
            Out::Arranged(a) => a.serialize(ser),
        }
    }
}

/// An object's keys in writing order, each with its value: keys in the `order` they were read
/// in first (known fields from the level's list, the rest from its `extra` map), then known
/// fields that were not in the input (in the list's order), then the remaining extras. A key
/// appears once (as in a map: a known field written over an extra of the same name keeps the
/// extra's place).
pub(crate) struct Arranged<'a>(Vec<(&'a str, Placed<'a>)>);

/// A value in an [`Arranged`] object.
enum Placed<'a> {
    Field(Out<'a>),
    Extra(&'a Value),
}

/// Objects with more keys than this find repeated keys through a map instead of a search.
const LINEAR_KEYS: usize = 32;

/// Where each key of an object being arranged is.
struct Places<'a> {
    map: Option<std::collections::HashMap<&'a str, usize>>,
    /// No unknown field has a known field's name: every key is placed once (known fields are
    /// taken from their list once, extras come from a map), so none is looked for.
    distinct: bool,
}

impl<'a> Places<'a> {
    fn find(&self, keys: &[(&'a str, Placed<'a>)], key: &str) -> Option<usize> {
        if self.distinct {
            return None;
        }
        match &self.map {
            Some(m) => m.get(key).copied(),
            None => keys.iter().position(|(k, _)| *k == key),
        }
    }

    fn push(&mut self, keys: &mut Vec<(&'a str, Placed<'a>)>, key: &'a str, v: Placed<'a>) {
        if !self.distinct {
            if let Some(m) = &mut self.map {
                m.insert(key, keys.len());
            } else if keys.len() == LINEAR_KEYS {
                let mut m: std::collections::HashMap<&str, usize> =
                    keys.iter().enumerate().map(|(i, (k, _))| (*k, i)).collect();
                m.insert(key, keys.len());
                self.map = Some(m);
            }
        }
        keys.push((key, v));
    }
}

/// Puts an object's keys (its `order` and `extra`, `known` naming its spec fields) in the
/// order `keys` gives: the keys it names first, in its order, then the others in their present
/// order. Does nothing when an unknown field has a spec field's name (a value kept raw), whose
/// place the order cannot say. Each key of `keys` is looked at once.
pub(crate) fn reorder<'k>(
    order: &mut KeyOrder,
    extra: &mut Object,
    known: &'static [&'static str],
    keys: impl Iterator<Item = &'k str>,
) {
    if extra.keys().any(|k| known.contains(&k.as_str())) {
        return;
    }
    let mut shape = Object::with_capacity(extra.len() + known.len());
    for k in keys {
        if known.contains(&k) || extra.contains_key(k) {
            shape.entry(k.to_string()).or_insert(Value::Null);
        }
    }
    let mut extras = extra.keys();
    for slot in order.slots() {
        let k = match slot {
            Slot::Known(k) => Some(k),
            Slot::Extra => extras.next().map(String::as_str),
        };
        if let Some(k) = k {
            shape.entry(k.to_string()).or_insert(Value::Null);
        }
    }
    for k in extras {
        shape.entry(k.clone()).or_insert(Value::Null);
    }
    let mut rest = std::mem::take(extra);
    for k in shape.keys() {
        if let Some((k, v)) = rest.swap_remove_entry(k) {
            extra.insert(k, v);
        }
    }
    *order = KeyOrder::of(&shape, known);
}

/// Arranges an object (see [`Arranged`]).
pub(crate) fn arranged<'a>(
    order: &KeyOrder,
    fields: Vec<(&'static str, Option<Out<'a>>)>,
    extra: &'a Object,
) -> Arranged<'a> {
    let mut keys: Vec<(&'a str, Placed<'a>)> = Vec::with_capacity(fields.len() + extra.len());
    let mut places = Places {
        map: None,
        distinct: !extra
            .keys()
            .any(|k| fields.iter().any(|(f, _)| *f == k.as_str())),
    };
    let mut known = fields;
    let mut extras = extra.iter();
    let put_known = |keys: &mut Vec<_>, places: &mut Places<'a>, key: &'static str, v| match places
        .find(keys, key)
    {
        Some(i) => keys[i].1 = Placed::Field(v),
        None => places.push(keys, key, Placed::Field(v)),
    };
    // A key not written yet is added; one written already keeps its value.
    let put_new = |keys: &mut Vec<_>, places: &mut Places<'a>, key: &'a str, v| {
        if places.find(keys, key).is_none() {
            places.push(keys, key, v);
        }
    };
    for slot in order.slots() {
        match slot {
            Slot::Known(key) => {
                if let Some(field) = known.iter_mut().find(|(k, _)| *k == key) {
                    if let Some(v) = field.1.take() {
                        put_known(&mut keys, &mut places, key, v);
                    }
                }
            }
            Slot::Extra => {
                if let Some((k, v)) = extras.next() {
                    put_new(&mut keys, &mut places, k, Placed::Extra(v));
                }
            }
        }
    }
    for (k, v) in known {
        if let Some(v) = v {
            put_new(&mut keys, &mut places, k, Placed::Field(v));
        }
    }
    for (k, v) in extras {
        put_new(&mut keys, &mut places, k, Placed::Extra(v));
    }
    Arranged(keys)
}

impl Arranged<'_> {
    /// The keys, in the order they are written.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.0.iter().map(|(k, _)| *k)
    }

    /// The object as a tree.
    pub(crate) fn into_object(self) -> Object {
        let mut out = Object::with_capacity(self.0.len());
        for (k, v) in self.0 {
            let v = match v {
                Placed::Field(f) => f.into_value(),
                Placed::Extra(v) => v.clone(),
            };
            out.insert(k.to_string(), v);
        }
        out
    }
}

impl Serialize for Arranged<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut map = ser.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            match v {
                Placed::Field(f) => map.serialize_entry(k, f)?,
                Placed::Extra(v) => map.serialize_entry(k, v)?,
            }
        }
        map.end()
    }
}

/// Builds an object as a tree (see [`Arranged`]).
pub(crate) fn arrange(
    order: &KeyOrder,
    fields: Vec<(&'static str, Option<Out<'_>>)>,
    extra: &Object,
) -> Object {
    arranged(order, fields, extra).into_object()
}

/// A string field.
pub(crate) fn s(v: &str) -> Option<Out<'_>> {
    Some(Out::Str(v))
}

/// A list of strings.
pub(crate) fn list(v: &[String]) -> Option<Out<'_>> {
    Some(Out::List(v))
}

#[cfg(test)]
mod field_tests {
    use super::*;
    use serde_json::json;

    /// One way of reading a field, its result as text.
    type Reader<'a> = Box<dyn Fn(&mut Repairs) -> String + 'a>;

    /// Issue 16: a field read in its typed form ([`Field::from_raw`] and the `*_field` readers)
    /// gives exactly what reading its JSON gives: the value, and the same diagnostics (SPEC_V3.md
    /// "CharacterCard Object" and "`entries` Fields": strings, booleans and string arrays, and
    /// the repairs of `docs/validation.md` for every other shape).
    #[test]
    fn typed_fields_read_exactly_as_their_json() {
        let values = [
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(-2),
            json!(1.5),
            json!(""),
            json!(" "),
            json!("a, b,,c "),
            json!("yes"),
            json!("0"),
            json!([]),
            json!(["a"]),
            json!(["a", "b, c"]),
            json!(["a", 1, null, false]),
            json!([null]),
            json!([["x"]]),
            json!({}),
            json!({"k": [1, "v"]}),
        ];
        for must in [Severity::Error, Severity::Warning] {
            for v in &values {
                let typed = || Field::from_raw(Raw::from_value(v.clone()));
                let run = |f: &dyn Fn(&mut Repairs) -> String| {
                    let mut diags = Vec::new();
                    let out = f(&mut Repairs {
                        diags: &mut diags,
                        must,
                    });
                    (out, diags)
                };
                let p = &"data.f";
                let pairs: [(&str, Reader, Reader); 6] = [
                    (
                        "string",
                        Box::new(|r| format!("{:?}", string_field(typed(), p, r))),
                        Box::new(|r| format!("{:?}", string(v.clone(), p, r))),
                    ),
                    (
                        "req_string",
                        Box::new(|r| req_string_field(Some(typed()), p, r)),
                        Box::new(|r| req_string(Some(v.clone()), p, r)),
                    ),
                    (
                        "string_list",
                        Box::new(|r| format!("{:?}", string_list_field(typed(), p, false, r))),
                        Box::new(|r| format!("{:?}", string_list(v.clone(), p, false, r))),
                    ),
                    (
                        "req_string_list split",
                        Box::new(|r| {
                            format!("{:?}", req_string_list_field(Some(typed()), p, true, r))
                        }),
                        Box::new(|r| format!("{:?}", req_string_list(Some(v.clone()), p, true, r))),
                    ),
                    (
                        "boolean",
                        Box::new(|r| format!("{:?}", boolean_field(typed(), p, r))),
                        Box::new(|r| format!("{:?}", boolean(v.clone(), p, r))),
                    ),
                    (
                        "value",
                        Box::new(|_| typed().into_value().to_string()),
                        Box::new(|_| v.to_string()),
                    ),
                ];
                for (name, typed_read, json_read) in &pairs {
                    assert_eq!(run(&**typed_read), run(&**json_read), "{name} of {v}");
                }
                assert_eq!(typed().is_null(), v.is_null(), "{v}");
            }
        }
        // Absent required fields: the same diagnostics too.
        let mut a = Vec::new();
        let mut b = Vec::new();
        let s1 = req_string_field(
            None,
            &"x",
            &mut Repairs {
                diags: &mut a,
                must: Severity::Error,
            },
        );
        let s2 = req_string(
            None,
            &"x",
            &mut Repairs {
                diags: &mut b,
                must: Severity::Error,
            },
        );
        assert_eq!((s1, a), (s2, b));
    }
}

#[cfg(test)]
mod arranged_tests {
    use super::*;

    #[test]
    fn arranged_keeps_read_order_and_each_key_once_in_text_and_tree() {
        // Read order: extra "b", known "name", extra "name" (shadowed by the field), extra "c";
        // then the known field "kind" (not read), then the extras past the order.
        let order = KeyOrder {
            known: &["name", "kind"],
            codes: vec![EXTRA, 0, EXTRA, EXTRA],
        };
        let mut extra = Object::new();
        for (k, v) in [("b", 1), ("name", 2), ("c", 3), ("d", 4), ("b", 5)] {
            extra.insert(k.into(), Value::from(v));
        }
        let fields = || vec![("name", s("Ember")), ("kind", s("icon"))];
        let tree = arrange(&order, fields(), &extra);
        let text = serde_json::to_string(&arranged(&order, fields(), &extra)).unwrap();
        assert_eq!(text, serde_json::to_string(&tree).unwrap());
        assert_eq!(text, r#"{"b":5,"name":"Ember","c":3,"kind":"icon","d":4}"#);
    }

    #[test]
    fn arranged_objects_with_many_keys_find_repeats_through_a_map() {
        let order = KeyOrder::default();
        let mut extra = Object::new();
        for i in 0..(LINEAR_KEYS * 3) {
            extra.insert(format!("k{i}"), Value::from(i));
        }
        extra.insert("name".into(), Value::from("extra"));
        let fields = || vec![("name", s("field"))];
        let text = serde_json::to_string(&arranged(&order, fields(), &extra)).unwrap();
        assert_eq!(
            text,
            serde_json::to_string(&arrange(&order, fields(), &extra)).unwrap()
        );
        // No read order: the field first, and the extra of the same name never.
        assert!(text.starts_with(r#"{"name":"field","k0":0,"#), "{text}");
        assert!(!text.contains("extra"), "{text}");
    }
}
