//! JSON text handed to any serde serializer value by value, building no tree: how an entry's
//! kept `extensions` text ([`super::Extensions`]) is written (issue 16: a second copy of every
//! entry's extensions as maps made writing a big book several times slower than reading it).
//!
//! The serializer sees the calls that serialising the text's parsed [`serde_json::Value`]
//! makes (the same numbers, strings and key order), so the output is the same, as long as no
//! object repeats a key: a parsed map keeps one of them, so [`keys_unique`] must hold first.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde::ser::{Error as _, Serialize, SerializeMap, SerializeSeq, Serializer};
use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

/// Objects with more keys than this are left to the parsed map (repeats are looked for by a
/// linear search of the keys seen).
const MAX_KEYS: usize = 64;

/// Whether `text` (valid JSON) has no object that repeats a key or has more than
/// [`MAX_KEYS`] keys: then [`transcode`] writes what its parsed value would.
pub(crate) fn keys_unique(text: &str) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_any(Unique).is_ok()
}

/// Serialises the JSON `text` (valid, checked when it was read) with `ser`, value by value.
///
/// # Errors
/// The serializer's own errors (and, for text that is not valid JSON, the parse error).
pub(crate) fn transcode<S: Serializer>(text: &str, ser: S) -> Result<S::Ok, S::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    Pass(Cell::new(Some(&mut de))).serialize(ser)
}

/// Walks a value, failing at the first object with a repeated key or too many keys.
struct Unique;

impl<'de> DeserializeSeed<'de> for Unique {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(Unique)
    }
}

impl<'de> Visitor<'de> for Unique {
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
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Unique)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: Vec<Cow<'de, str>> = Vec::new();
        while let Some(k) = map.next_key::<Cow<'de, str>>()? {
            if seen.len() >= MAX_KEYS || seen.contains(&k) {
                return Err(A::Error::custom("repeated key"));
            }
            seen.push(k);
            map.next_value_seed(Unique)?;
        }
        Ok(())
    }
}

/// A value still in the deserializer, serialised as it is read (taken once).
struct Pass<D>(Cell<Option<D>>);

impl<'de, D: Deserializer<'de>> Serialize for Pass<D> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let d = self
            .0
            .take()
            .ok_or_else(|| S::Error::custom("value serialised twice"))?;
        d.deserialize_any(Forward(ser)).map_err(S::Error::custom)
    }
}

/// Makes the serializer call that serialising the parsed [`serde_json::Value`] would.
struct Forward<S>(S);

impl<'de, S: Serializer> Visitor<'de> for Forward<S> {
    type Value = S::Ok;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<S::Ok, E> {
        self.0.serialize_bool(v).map_err(E::custom)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<S::Ok, E> {
        self.0.serialize_i64(v).map_err(E::custom)
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<S::Ok, E> {
        self.0.serialize_u64(v).map_err(E::custom)
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<S::Ok, E> {
        // A parsed value holds no infinite number: it would be `null`.
        if v.is_finite() {
            self.0.serialize_f64(v).map_err(E::custom)
        } else {
            self.0.serialize_unit().map_err(E::custom)
        }
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<S::Ok, E> {
        self.0.serialize_str(v).map_err(E::custom)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<S::Ok, E> {
        self.0.serialize_unit().map_err(E::custom)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<S::Ok, A::Error> {
        let mut out = self.0.serialize_seq(None).map_err(A::Error::custom)?;
        while seq.next_element_seed(Item(&mut out))?.is_some() {}
        out.end().map_err(A::Error::custom)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<S::Ok, A::Error> {
        let mut out = self.0.serialize_map(None).map_err(A::Error::custom)?;
        while let Some(k) = map.next_key::<Cow<'de, str>>()? {
            out.serialize_key(&*k).map_err(A::Error::custom)?;
            map.next_value_seed(Field(&mut out))?;
        }
        out.end().map_err(A::Error::custom)
    }
}

/// The next element of an array being serialised.
struct Item<'a, Q>(&'a mut Q);

impl<'de, Q: SerializeSeq> DeserializeSeed<'de> for Item<'_, Q> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.0
            .serialize_element(&Pass(Cell::new(Some(d))))
            .map_err(D::Error::custom)
    }
}

/// The value of the key just serialised in an object.
struct Field<'a, M>(&'a mut M);

impl<'de, M: SerializeMap> DeserializeSeed<'de> for Field<'_, M> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.0
            .serialize_value(&Pass(Cell::new(Some(d))))
            .map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What serialising the parsed value writes, compact and indented, and as a tree.
    fn parsed(text: &str) -> (String, String, serde_json::Value) {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        (
            serde_json::to_string(&v).unwrap(),
            serde_json::to_string_pretty(&v).unwrap(),
            v,
        )
    }

    /// What transcoding writes, the same three ways.
    fn transcoded(text: &str) -> (String, String, serde_json::Value) {
        let mut compact = Vec::new();
        transcode(text, &mut serde_json::Serializer::new(&mut compact)).unwrap();
        let mut pretty = Vec::new();
        transcode(text, &mut serde_json::Serializer::pretty(&mut pretty)).unwrap();
        let tree = transcode(text, serde_json::value::Serializer).unwrap();
        (
            String::from_utf8(compact).unwrap(),
            String::from_utf8(pretty).unwrap(),
            tree,
        )
    }

    /// Source: `serde_json` 1.0 (`Value`'s `Deserialize` and `Serialize`, `preserve_order` and
    /// `float_roundtrip` as this workspace builds it): the text written through is what writing
    /// the parsed value gives, for numbers of every kind, escapes, nesting and empty values.
    #[test]
    fn transcoding_writes_what_the_parsed_value_writes() {
        for text in [
            r#"{"depth": 4, "group": "a,b", "x": [1, {"y": null}], "z": {}}"#,
            r#"{"n": [0, -0, -1, 1.0, 1e2, 1.5e-7, -2.25E+3, 18446744073709551615,
                18446744073709551616, -9223372036854775808, -9223372036854775809, 0.1,
                3.141592653589793238462643383279]}"#,
            r#"{"s": "quote \" back \\ slash \/ tab \t nl \n cr \r ff \f bs \b \u0001 \u001f",
                "u": "\u00e9\u4e2d\ud83d\ude00 é中😀", "k\u0041": true, "": false}"#,
            r#"{"deep": [[[[{"a": [[], {}, [{}]]}]]]], "b": [true, false, null, "", 0]}"#,
            "  {\"spaced\" :\t[ 1 ,2 ] }  ",
        ] {
            assert!(keys_unique(text), "{text}");
            assert_eq!(transcoded(text), parsed(text), "{text}");
        }
    }

    #[test]
    fn repeated_or_too_many_keys_are_found_at_any_depth() {
        assert!(!keys_unique(r#"{"a": 1, "b": 2, "a": 3}"#));
        assert!(!keys_unique(r#"{"x": [{"a": 1, "a": 1}]}"#));
        // The same key spelled with an escape is the same key.
        assert!(!keys_unique(r#"{"a": 1, "\u0061": 2}"#));
        assert!(keys_unique(
            r#"{"a": {"a": {"a": 1}}, "b": [{"a": 1}, {"a": 2}]}"#
        ));
        let keys = |n: usize| {
            let fields: Vec<String> = (0..n).map(|i| format!("\"k{i}\": {i}")).collect();
            format!("{{{}}}", fields.join(", "))
        };
        assert!(keys_unique(&keys(MAX_KEYS)));
        assert!(!keys_unique(&keys(MAX_KEYS + 1)));
        assert!(!keys_unique("{"));
    }
}
