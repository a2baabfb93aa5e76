//! Lenient field readers and the order-keeping object writer shared by every model level.
//!
//! Reading walks an object's keys in file order: a key the model knows is converted to its typed
//! field (repairing what real applications get wrong and recording a [`Diagnostic`]); every other
//! key goes to the level's `extra` map. The original key order is remembered in a [`KeyOrder`], so
//! writing puts every key back where it was; fields that were absent in the input follow in the
//! spec's order.

use super::raw::Raw;
use crate::diag::{Diagnostic, Severity};
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
    /// Severity for a violated MUST (an error for cards that claim V3, a warning for older ones).
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
        let sev = self.must;
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

/// A short name of a JSON value's type, for messages.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

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
            let sev = r.must;
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
                    Value::Null => r.push(
                        Severity::Warning,
                        "null-value",
                        &p,
                        "null item dropped".into(),
                    ),
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
                Severity::Warning,
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
                Severity::Warning,
                "missing-required-field",
                path,
                "extensions is missing; used {}".into(),
            );
            Object::new()
        }
        Some(Value::Null) => {
            r.push(
                Severity::Warning,
                "null-value",
                path,
                "extensions is null; used {}".into(),
            );
            Object::new()
        }
        Some(Value::String(s)) if s.trim().starts_with('{') => match serde_json::from_str(&s) {
            Ok(Value::Object(m)) => {
                r.push(
                    Severity::Warning,
                    "wrong-type",
                    path,
                    "object stored as JSON text; parsed it".into(),
                );
                m
            }
            _ => {
                r.push(
                    Severity::Warning,
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

/// Writes an object: keys in `order` first (known fields from `fields`, the rest from `extra`),
/// then known fields that were not in the input (in `fields` order), then the remaining extras.
pub(crate) fn arrange(
    order: &KeyOrder,
    fields: Vec<(&'static str, Option<Value>)>,
    extra: &Object,
) -> Object {
    let mut out = Object::with_capacity(fields.len() + extra.len());
    let mut known: Vec<(&'static str, Option<Value>)> = fields;
    let mut extras = extra.iter();
    for slot in order.slots() {
        match slot {
            Slot::Known(key) => {
                if let Some(field) = known.iter_mut().find(|(k, _)| *k == key) {
                    if let Some(v) = field.1.take() {
                        out.insert(key.to_string(), v);
                    }
                }
            }
            Slot::Extra => {
                if let Some((k, v)) = extras.next() {
                    out.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
        }
    }
    for (k, v) in known {
        if let Some(v) = v {
            out.entry(k.to_string()).or_insert(v);
        }
    }
    for (k, v) in extras {
        out.entry(k.clone()).or_insert_with(|| v.clone());
    }
    out
}

/// `Some(Value::String)` of a string.
pub(crate) fn s(v: &str) -> Option<Value> {
    Some(Value::String(v.to_string()))
}

/// `Some(Value::Array)` of strings.
pub(crate) fn list(v: &[String]) -> Option<Value> {
    Some(Value::Array(
        v.iter().map(|x| Value::String(x.clone())).collect(),
    ))
}
