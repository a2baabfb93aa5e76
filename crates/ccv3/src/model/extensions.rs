//! An entry's `extensions`, kept as the JSON text it was read as until someone looks inside.

use super::fields::Object;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::{LazyLock, OnceLock};

/// The key under `extensions` where V3-only data is kept in a V2 backfill.
pub const STASH_KEY: &str = "ccv3";

/// A lorebook entry's `extensions` object.
///
/// Read from a file, it is kept as the object's JSON text (checked to be a valid object when
/// read) and parsed into an [`Object`] the first time something looks inside (`Deref`); once
/// changed (`DerefMut`) it is that map from then on. The entries of a big book each carry a few
/// application fields that most readers never look at: as text they cost one allocation, where a
/// map costs one per key plus its tables (a 50,000-entry book's maps were half of its memory).
/// Readers that want a few fields of every entry use [`Extensions::visit`], which reads them
/// straight from the text.
///
/// ```
/// use ccv3::Extensions;
/// let mut ext = Extensions::default();
/// ext.insert("depth".into(), 4.into());
/// assert_eq!(ext["depth"], 4);
/// assert_eq!(ext.to_value(), serde_json::json!({"depth": 4}));
/// ```
#[derive(Clone, Default)]
pub struct Extensions(Store);

/// Small on purpose (every entry has one): an empty object holds nothing, a map is boxed.
#[derive(Clone, Default)]
enum Store {
    /// An empty object.
    #[default]
    Empty,
    /// The object's JSON text as read, and its map once something looked inside.
    Text(Box<str>, OnceLock<Box<Object>>),
    /// A map built or changed in memory.
    Map(Box<Object>),
}

/// What an empty [`Extensions`] derefs to.
static EMPTY: LazyLock<Object> = LazyLock::new(Object::new);

/// Extensions nested deeper than this are parsed when read (see [`Extensions::from_json_text`]).
const MAX_TEXT_DEPTH: usize = 100;

/// Parses text that [`Extensions::from_json_text`] checked: it cannot fail.
fn parse(text: &str) -> Object {
    serde_json::from_str(text).unwrap_or_default()
}

impl Extensions {
    /// An empty object.
    pub fn new() -> Self {
        Extensions::default()
    }

    /// Keeps `text` as the extensions when it is a JSON object that parses into an [`Object`]
    /// (nested at most 100 deep); `None` otherwise (the caller parses it and reports what it is).
    /// An empty object keeps no text.
    pub fn from_json_text(text: &str) -> Option<Extensions> {
        if text == "{}" {
            // The common case, without a parser (issue 16).
            return Some(Extensions::default());
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let shape = de.deserialize_any(Check(0)).ok()?;
        de.end().ok()?;
        match shape {
            Shape::EmptyObject => Some(Extensions::default()),
            Shape::Object => Some(Extensions(Store::Text(text.into(), OnceLock::new()))),
            Shape::Other => None,
        }
    }

    /// Whether this is still the text it was read as (nothing looked inside it yet, or only
    /// through [`Extensions::visit`]).
    pub fn is_unparsed_text(&self) -> bool {
        matches!(&self.0, Store::Text(_, m) if m.get().is_none())
    }

    /// The extensions as a JSON value (an object), without keeping a parsed map.
    pub fn to_value(&self) -> Value {
        match &self.0 {
            Store::Empty => Value::Object(Object::new()),
            Store::Text(text, m) => match m.get() {
                Some(map) => Value::Object((**map).clone()),
                None => Value::Object(parse(text)),
            },
            Store::Map(map) => Value::Object((**map).clone()),
        }
    }

    /// False when the extensions have no field `key` written plainly (for text: the quoted key
    /// does not occur in it; a key spelled with `\u` escapes is not seen): a cheap filter before
    /// looking inside.
    /// `quoted` finds `"key"` (built once by the caller for all the entries of a book).
    pub(crate) fn mentions(&self, key: &str, quoted: &memchr::memmem::Finder<'_>) -> bool {
        match &self.0 {
            Store::Empty => false,
            Store::Text(text, m) => match m.get() {
                Some(map) => map.contains_key(key),
                None => quoted.find(text.as_bytes()).is_some(),
            },
            Store::Map(map) => map.contains_key(key),
        }
    }

    /// Calls `f` with the extensions as a map (parsed for the call when they are still text).
    pub(crate) fn with_object<R>(&self, f: impl FnOnce(&Object) -> R) -> R {
        match &self.0 {
            Store::Empty => f(&Object::new()),
            Store::Text(text, m) => match m.get() {
                Some(map) => f(map),
                None => f(&parse(text)),
            },
            Store::Map(map) => f(map),
        }
    }

    /// Serialises the extensions with `ser` as [`Extensions::to_value`] would: text still
    /// unparsed is handed over value by value, building no map (when no object in it repeats
    /// a key, which a map would keep once; see [`super::transcode`]).
    pub(crate) fn serialize_with<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Store::Text(text, m) if m.get().is_none() && super::transcode::keys_unique(text) => {
                super::transcode::transcode(text, ser)
            }
            _ => self.with_object(|o| serde::Serialize::serialize(o, ser)),
        }
    }

    /// Calls `f` with each field whose name `wanted` accepts, in order (a name written twice is
    /// visited twice). Text is read without building the map: only the wanted values are built.
    pub fn visit<'s>(
        &'s self,
        wanted: impl Fn(&str) -> bool,
        mut f: impl FnMut(&str, Cow<'s, Value>),
    ) {
        let map: &Object = match &self.0 {
            Store::Empty => return,
            Store::Text(text, m) => match m.get() {
                Some(map) => map,
                None => {
                    let mut de = serde_json::Deserializer::from_str(text);
                    // Checked when read: visiting cannot fail.
                    let _ = de.deserialize_map(Pick {
                        wanted: &wanted,
                        f: &mut |k: &str, v: Value| f(k, Cow::Owned(v)),
                    });
                    return;
                }
            },
            Store::Map(map) => map,
        };
        for (k, v) in map {
            if wanted(k) {
                f(k, Cow::Borrowed(v));
            }
        }
    }
}

impl Deref for Extensions {
    type Target = Object;
    fn deref(&self) -> &Object {
        match &self.0 {
            Store::Empty => &EMPTY,
            Store::Text(text, m) => m.get_or_init(|| Box::new(parse(text))),
            Store::Map(map) => map,
        }
    }
}

impl DerefMut for Extensions {
    fn deref_mut(&mut self) -> &mut Object {
        match &mut self.0 {
            Store::Empty => self.0 = Store::Map(Box::default()),
            Store::Text(text, m) => {
                let map = m.take().unwrap_or_else(|| Box::new(parse(text)));
                self.0 = Store::Map(map);
            }
            Store::Map(_) => {}
        }
        match &mut self.0 {
            Store::Map(map) => map,
            Store::Empty | Store::Text(..) => unreachable!("turned into a map just above"),
        }
    }
}

impl From<Object> for Extensions {
    fn from(map: Object) -> Self {
        if map.is_empty() {
            return Extensions::default();
        }
        Extensions(Store::Map(Box::new(map)))
    }
}

impl From<Extensions> for Object {
    fn from(ext: Extensions) -> Self {
        match ext.0 {
            Store::Empty => Object::new(),
            Store::Text(text, m) => m.into_inner().map_or_else(|| parse(&text), |m| *m),
            Store::Map(map) => *map,
        }
    }
}

impl PartialEq for Extensions {
    fn eq(&self, other: &Self) -> bool {
        if let (Store::Text(a, _), Store::Text(b, _)) = (&self.0, &other.0) {
            if a == b {
                return true;
            }
        }
        **self == **other
    }
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Store::Text(text, m) if m.get().is_none() => {
                f.debug_tuple("Extensions").field(&&**text).finish()
            }
            _ => f.debug_tuple("Extensions").field(&**self).finish(),
        }
    }
}

/// What [`Check`] found at the top of the text.
enum Shape {
    EmptyObject,
    Object,
    Other,
}

/// Walks a value the way parsing it into a [`Value`] would (same numbers, strings, escapes),
/// building nothing; fails past [`MAX_TEXT_DEPTH`].
struct Check(usize);

impl Check {
    fn deeper<E: serde::de::Error>(&self) -> Result<Check, E> {
        if self.0 >= MAX_TEXT_DEPTH {
            return Err(E::custom("nested too deep"));
        }
        Ok(Check(self.0 + 1))
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Check {
    type Value = Shape;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Shape, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Check {
    type Value = Shape;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        let inner = self.deeper()?;
        while seq.next_element_seed(Check(inner.0))?.is_some() {}
        Ok(Shape::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let inner = self.deeper()?;
        let mut any = false;
        while map.next_key::<IgnoredKey>()?.is_some() {
            map.next_value_seed(Check(inner.0))?;
            any = true;
        }
        Ok(if any {
            Shape::Object
        } else {
            Shape::EmptyObject
        })
    }
}

/// A key, checked as a string (escapes decoded) and dropped.
struct IgnoredKey;

impl<'de> serde::Deserialize<'de> for IgnoredKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = IgnoredKey;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E>(self, _: &str) -> Result<IgnoredKey, E> {
                Ok(IgnoredKey)
            }
        }
        d.deserialize_str(V)
    }
}

/// Reads an object's fields, building the values of the wanted ones only.
struct Pick<'w, W, F> {
    wanted: &'w W,
    f: &'w mut F,
}

impl<'de, W: Fn(&str) -> bool, F: FnMut(&str, Value)> Visitor<'de> for Pick<'_, W, F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(k) = map.next_key::<Cow<'de, str>>()? {
            if (self.wanted)(&k) {
                let v = map.next_value::<Value>()?;
                (self.f)(&k, v);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_is_kept_until_looked_into_and_reads_as_the_map() {
        let ext =
            Extensions::from_json_text(r#"{"depth": 4, "group": "a,b", "x": [1, {"y": null}]}"#)
                .unwrap();
        assert!(ext.is_unparsed_text());
        assert_eq!(
            ext.to_value(),
            json!({"depth": 4, "group": "a,b", "x": [1, {"y": null}]})
        );
        assert!(ext.is_unparsed_text());
        assert_eq!(ext["depth"], 4);
        assert!(!ext.is_unparsed_text());
        let keys: Vec<&String> = ext.keys().collect();
        assert_eq!(keys, ["depth", "group", "x"]);
    }

    #[test]
    fn changing_text_extensions_changes_the_map() {
        let mut ext = Extensions::from_json_text(r#"{"a": 1}"#).unwrap();
        ext.insert("b".into(), json!(2));
        assert_eq!(ext.to_value(), json!({"a": 1, "b": 2}));
        assert_eq!(
            Object::from(ext),
            json!({"a": 1, "b": 2}).as_object().unwrap().clone()
        );
    }

    #[test]
    fn only_valid_objects_are_kept_as_text() {
        for bad in [
            "[]",
            "1",
            "null",
            "\"{}\"",
            "{",
            r#"{"a": 1e999}"#,
            r#"{"a": "\ud800"}"#,
            "{} x",
        ] {
            assert!(Extensions::from_json_text(bad).is_none(), "{bad}");
        }
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(200), "]".repeat(200));
        assert!(Extensions::from_json_text(&deep).is_none());
        let empty = Extensions::from_json_text(" { } ").unwrap();
        assert!(!empty.is_unparsed_text());
        assert!(empty.is_empty());
    }

    /// Issue 16 (writing without building maps): text is written as its parsed map writes,
    /// repeated keys too (the map keeps one), and the text stays unparsed.
    #[test]
    fn serialize_with_writes_text_as_its_map() {
        for text in [
            r#"{"depth": 4, "x": [1.0, {"y": null}], "s": "\u00e9\n"}"#,
            r#"{"depth": 4, "role": "x", "depth": 5}"#,
            r#"{"a": [{"k": 1, "k": 2}]}"#,
        ] {
            let ext = Extensions::from_json_text(text).unwrap();
            let mut out = Vec::new();
            ext.serialize_with(&mut serde_json::Serializer::pretty(&mut out))
                .unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string_pretty(&ext.to_value()).unwrap()
            );
            assert!(ext.is_unparsed_text());
            let tree = ext.serialize_with(serde_json::value::Serializer).unwrap();
            assert_eq!(tree, ext.to_value());
        }
    }

    #[test]
    fn visit_reads_wanted_fields_from_text_and_from_maps_alike() {
        let text = r#"{"depth": 4, "skip": {"deep": [1, 2]}, "role": "x", "depth": 5}"#;
        let from_text = Extensions::from_json_text(text).unwrap();
        let from_map = Extensions::from(serde_json::from_str::<Object>(text).unwrap());
        let seen = |ext: &Extensions| {
            let mut seen = Vec::new();
            ext.visit(
                |k| k != "skip",
                |k, v| seen.push((k.to_string(), v.into_owned())),
            );
            seen
        };
        assert_eq!(
            seen(&from_text),
            [
                ("depth".into(), json!(4)),
                ("role".into(), json!("x")),
                ("depth".into(), json!(5))
            ]
        );
        assert!(from_text.is_unparsed_text());
        // The map keeps one `depth` (the last value, where the first stood).
        assert_eq!(
            seen(&from_map),
            [("depth".into(), json!(5)), ("role".into(), json!("x"))]
        );
        assert_eq!(from_text, from_map);
    }
}
