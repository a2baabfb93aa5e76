//! A JSON tree made for reading cards fast.
//!
//! `serde_json::Value` builds a hash map for every object; a card with a 2,000-entry lorebook
//! has thousands of them, and the model then takes them apart again. [`Raw`] keeps objects as
//! vectors of pairs with keys borrowed from the input where the text has no escapes, so the reader
//! can dispatch known keys without hashing or allocating; only the values the model keeps as JSON
//! (unknown fields, `extensions`) are turned into `Value`s.

use super::book::Entry;
use crate::diag::Diagnostic;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::fmt;

/// Entries converted while parsing, with their conversion's diagnostics in entry order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StreamedEntries {
    /// The entries, in array order (items that are not objects are left out, as the reader does).
    pub entries: Vec<Entry>,
    /// What converting them repaired or reported.
    pub diags: Vec<Diagnostic>,
    /// Where the array stood.
    pub place: Place,
}

/// Where a streamed `entries` array stood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// `data.character_book.entries` of a V2/V3 card.
    CardBook,
    /// `data.entries` of a `lorebook_v3` file.
    LorebookData,
    /// `entries` at the top of the document (a bare `character_book`, if the guess holds).
    Bare,
}

/// A parsed JSON value with objects as ordered pairs and borrowed keys.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Raw<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Raw<'a>>),
    Object(Vec<(Cow<'a, str>, Raw<'a>)>),
    /// A lorebook's `entries`, already converted while parsing (see [`super::stream`]).
    Entries(Box<StreamedEntries>),
}

impl<'a> Raw<'a> {
    /// Converts into a `serde_json::Value` (objects keep their key order).
    pub fn into_value(self) -> Value {
        match self {
            Raw::Null => Value::Null,
            Raw::Bool(b) => Value::Bool(b),
            Raw::Number(n) => Value::Number(n),
            Raw::String(s) => Value::String(s),
            Raw::Array(items) => Value::Array(items.into_iter().map(Raw::into_value).collect()),
            Raw::Object(pairs) => {
                let mut m = Map::with_capacity(pairs.len());
                for (k, v) in pairs {
                    m.insert(k.into_owned(), v.into_value());
                }
                Value::Object(m)
            }
            // Streamed arrays are only made where the lorebook reader takes them; written back
            // as entries should that ever change.
            Raw::Entries(s) => Value::Array(s.entries.iter().map(|e| e.to_json()).collect()),
        }
    }

    /// Converts from a `serde_json::Value`.
    pub fn from_value(v: Value) -> Raw<'static> {
        match v {
            Value::Null => Raw::Null,
            Value::Bool(b) => Raw::Bool(b),
            Value::Number(n) => Raw::Number(n),
            Value::String(s) => Raw::String(s),
            Value::Array(items) => Raw::Array(items.into_iter().map(Raw::from_value).collect()),
            Value::Object(m) => Raw::Object(
                m.into_iter()
                    .map(|(k, v)| (Cow::Owned(k), Raw::from_value(v)))
                    .collect(),
            ),
        }
    }

    /// True for `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Raw::Null)
    }
}

/// An object key: borrowed from the input when it has no escapes.
pub(crate) struct Key<'a>(pub Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

impl<'de> Raw<'de> {
    /// A float as a number (`null` when it is not finite, as JSON cannot say it).
    pub(crate) fn from_f64(n: f64) -> Raw<'de> {
        Number::from_f64(n).map_or(Raw::Null, Raw::Number)
    }

    /// Collects the rest of an array after `items`.
    pub(crate) fn collect_seq<A: SeqAccess<'de>>(
        mut seq: A,
        mut items: Vec<Raw<'de>>,
    ) -> Result<Raw<'de>, A::Error> {
        // Cap the pre-allocation: the size hint comes from the input.
        items.reserve(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Raw::Array(items))
    }

    /// Parses any JSON value into the plain tree.
    pub(crate) fn deserialize_plain<D: Deserializer<'de>>(d: D) -> Result<Raw<'de>, D::Error> {
        Self::deserialize(d)
    }
}

impl<'de> Deserialize<'de> for Raw<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct RawVisitor;
        impl<'de> Visitor<'de> for RawVisitor {
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
                Raw::collect_seq(seq, Vec::new())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw<'de>, A::Error> {
                let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
                while let Some((k, v)) = map.next_entry::<Key<'de>, Raw<'de>>()? {
                    pairs.push((k.0, v));
                }
                Ok(Raw::Object(pairs))
            }
        }
        d.deserialize_any(RawVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_round_trips_through_value_keeping_key_order() {
        let text = r#"{"z":1,"a":[true,null,"s",{"k\u0041":2.5}],"m":{}}"#;
        let raw: Raw = serde_json::from_str(text).unwrap();
        let v = raw.clone().into_value();
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"z":1,"a":[true,null,"s",{"kA":2.5}],"m":{}}"#
        );
        assert_eq!(Raw::from_value(v), raw);
    }
}
