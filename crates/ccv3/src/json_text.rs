//! The JSON text writer behind [`crate::json::write`] (every V3 card and lorebook writer, and
//! `ccv3 index`'s card hash): `serde_json`'s layout (its [`Formatter`]: compact or indented,
//! its numbers) with strings scanned for characters to escape eight bytes at a time.
//!
//! `serde_json` looks up every byte of a string in a table; card text is long prose with few
//! characters to escape, and that loop was most of the cost of writing a card (issue 16: the
//! card hash serialises every card of an archive). The text written is the same, byte for byte:
//! the same escapes (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00XX` for other control
//! characters, nothing else), the same separators and indentation, the same numbers.

use serde::ser::{self, Error as _, Serialize};
use serde_json::ser::{CharEscape, Formatter};
use serde_json::Error;
use std::io;

/// Writes JSON text to `w` with the layout of `f` (see the module docs).
pub(crate) struct TextSerializer<W, F> {
    w: W,
    f: F,
}

impl<W: io::Write, F: Formatter> TextSerializer<W, F> {
    /// A writer to `w` laid out by `f`.
    pub(crate) fn new(w: W, f: F) -> Self {
        TextSerializer { w, f }
    }
}

/// Repeats a byte in each of a word's eight bytes.
const fn splat(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

/// Nonzero when any of the eight bytes of `x` is a control character (below 0x20), `"` or a
/// backslash: exact (the classic "has a zero byte" and "has a byte less than n" tests).
fn escape_bits(x: u64) -> u64 {
    let high = splat(0x80);
    let has_zero = |v: u64| v.wrapping_sub(splat(1)) & !v & high;
    let below_space = x.wrapping_sub(splat(0x20)) & !x & high;
    below_space | has_zero(x ^ splat(b'"')) | has_zero(x ^ splat(b'\\'))
}

/// The escape of byte `b`, if it needs one.
fn escape_of(b: u8) -> Option<CharEscape> {
    Some(match b {
        b'"' => CharEscape::Quote,
        b'\\' => CharEscape::ReverseSolidus,
        0x08 => CharEscape::Backspace,
        0x0C => CharEscape::FormFeed,
        b'\n' => CharEscape::LineFeed,
        b'\r' => CharEscape::CarriageReturn,
        b'\t' => CharEscape::Tab,
        0x00..=0x1F => CharEscape::AsciiControl(b),
        _ => return None,
    })
}

/// The place of the next byte at or after `from` that needs an escape, and its escape.
fn next_escape(bytes: &[u8], from: usize) -> Option<(usize, CharEscape)> {
    let rest = bytes.get(from..)?;
    let mut at = from;
    // Sixteen bytes at a time while none needs an escape; then the escape is in the sixteen
    // bytes that flagged, or in the tail of fewer than sixteen.
    for block in rest.chunks_exact(16) {
        let (a, b) = block.split_at(8);
        let word = |w: &[u8]| u64::from_ne_bytes(w.try_into().unwrap_or([0; 8]));
        if escape_bits(word(a)) | escape_bits(word(b)) != 0 {
            break;
        }
        at += 16;
    }
    bytes
        .get(at..)?
        .iter()
        .enumerate()
        .find_map(|(i, &b)| escape_of(b).map(|e| (at + i, e)))
}

/// Writes `s` as a JSON string: quoted, escaped as `serde_json` escapes.
fn write_str<W: io::Write, F: Formatter>(w: &mut W, f: &mut F, s: &str) -> io::Result<()> {
    f.begin_string(w)?;
    let bytes = s.as_bytes();
    let mut start = 0;
    while let Some((at, escape)) = next_escape(bytes, start) {
        // Escaped bytes are ASCII: `at` is a character boundary.
        if at > start {
            f.write_string_fragment(w, &s[start..at])?;
        }
        f.write_char_escape(w, escape)?;
        start = at + 1;
    }
    if start < bytes.len() {
        f.write_string_fragment(w, &s[start..])?;
    }
    f.end_string(w)
}

/// An array or object being written.
pub(crate) struct Compound<'a, W, F> {
    ser: &'a mut TextSerializer<W, F>,
    /// Nothing written in it yet.
    first: bool,
    /// Written whole already (known to be empty).
    closed: bool,
}

/// Values of a kind the card model never writes.
fn unsupported() -> Error {
    Error::custom("the JSON text writer writes no enum variants with fields")
}

impl<'a, W: io::Write, F: Formatter> ser::Serializer for &'a mut TextSerializer<W, F> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a, W, F>;
    type SerializeTuple = Compound<'a, W, F>;
    type SerializeTupleStruct = Compound<'a, W, F>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = Compound<'a, W, F>;
    type SerializeStruct = Compound<'a, W, F>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.f.write_bool(&mut self.w, v).map_err(Error::io)
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.f.write_i8(&mut self.w, v).map_err(Error::io)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.f.write_i16(&mut self.w, v).map_err(Error::io)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.f.write_i32(&mut self.w, v).map_err(Error::io)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.f.write_i64(&mut self.w, v).map_err(Error::io)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.f.write_i128(&mut self.w, v).map_err(Error::io)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.f.write_u8(&mut self.w, v).map_err(Error::io)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.f.write_u16(&mut self.w, v).map_err(Error::io)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.f.write_u32(&mut self.w, v).map_err(Error::io)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.f.write_u64(&mut self.w, v).map_err(Error::io)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.f.write_u128(&mut self.w, v).map_err(Error::io)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        if v.is_finite() {
            self.f.write_f32(&mut self.w, v).map_err(Error::io)
        } else {
            self.serialize_unit()
        }
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        if v.is_finite() {
            self.f.write_f64(&mut self.w, v).map_err(Error::io)
        } else {
            self.serialize_unit()
        }
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        write_str(&mut self.w, &mut self.f, v).map_err(Error::io)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        use ser::SerializeSeq;
        let mut seq = self.serialize_seq(Some(v.len()))?;
        for b in v {
            seq.serialize_element(b)?;
        }
        seq.end()
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.f.write_null(&mut self.w).map_err(Error::io)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        use ser::SerializeMap;
        let mut map = self.serialize_map(Some(1))?;
        map.serialize_entry(variant, v)?;
        map.end()
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'a, W, F>, Error> {
        self.f.begin_array(&mut self.w).map_err(Error::io)?;
        let closed = len == Some(0);
        if closed {
            self.f.end_array(&mut self.w).map_err(Error::io)?;
        }
        Ok(Compound {
            ser: self,
            first: true,
            closed,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a, W, F>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        len: usize,
    ) -> Result<Compound<'a, W, F>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(unsupported())
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'a, W, F>, Error> {
        self.f.begin_object(&mut self.w).map_err(Error::io)?;
        let closed = len == Some(0);
        if closed {
            self.f.end_object(&mut self.w).map_err(Error::io)?;
        }
        Ok(Compound {
            ser: self,
            first: true,
            closed,
        })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Compound<'a, W, F>, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(unsupported())
    }
}

impl<W: io::Write, F: Formatter> ser::SerializeSeq for Compound<'_, W, F> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Error> {
        let s = &mut *self.ser;
        s.f.begin_array_value(&mut s.w, self.first)
            .map_err(Error::io)?;
        self.first = false;
        v.serialize(&mut *s)?;
        s.f.end_array_value(&mut s.w).map_err(Error::io)
    }
    fn end(self) -> Result<(), Error> {
        if self.closed {
            return Ok(());
        }
        self.ser.f.end_array(&mut self.ser.w).map_err(Error::io)
    }
}

impl<W: io::Write, F: Formatter> ser::SerializeTuple for Compound<'_, W, F> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Error> {
        ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<(), Error> {
        ser::SerializeSeq::end(self)
    }
}

impl<W: io::Write, F: Formatter> ser::SerializeTupleStruct for Compound<'_, W, F> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Error> {
        ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<(), Error> {
        ser::SerializeSeq::end(self)
    }
}

impl<W: io::Write, F: Formatter> ser::SerializeMap for Compound<'_, W, F> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Error> {
        let s = &mut *self.ser;
        s.f.begin_object_key(&mut s.w, self.first)
            .map_err(Error::io)?;
        self.first = false;
        key.serialize(KeySerializer(&mut *s))?;
        s.f.end_object_key(&mut s.w).map_err(Error::io)
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Error> {
        let s = &mut *self.ser;
        s.f.begin_object_value(&mut s.w).map_err(Error::io)?;
        v.serialize(&mut *s)?;
        s.f.end_object_value(&mut s.w).map_err(Error::io)
    }
    fn end(self) -> Result<(), Error> {
        if self.closed {
            return Ok(());
        }
        self.ser.f.end_object(&mut self.ser.w).map_err(Error::io)
    }
}

impl<W: io::Write, F: Formatter> ser::SerializeStruct for Compound<'_, W, F> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        ser::SerializeMap::serialize_entry(self, key, v)
    }
    fn end(self) -> Result<(), Error> {
        ser::SerializeMap::end(self)
    }
}

/// Writes an object key: a string or a character, or a number or boolean in quotes (as
/// `serde_json` writes them); anything else is an error.
struct KeySerializer<'a, W, F>(&'a mut TextSerializer<W, F>);

impl<W: io::Write, F: Formatter> KeySerializer<'_, W, F> {
    /// Writes what `write` writes between quotes.
    fn quoted(self, write: impl FnOnce(&mut F, &mut W) -> io::Result<()>) -> Result<(), Error> {
        let s = self.0;
        s.f.begin_string(&mut s.w)
            .and_then(|()| write(&mut s.f, &mut s.w))
            .and_then(|()| s.f.end_string(&mut s.w))
            .map_err(Error::io)
    }
}

/// A key that cannot be written as a string.
fn key_not_a_string() -> Error {
    Error::custom("key must be a string")
}

impl<W: io::Write, F: Formatter> ser::Serializer for KeySerializer<'_, W, F> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.0.serialize_str(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.0.serialize_char(v)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.0.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.quoted(|f, w| f.write_bool(w, v))
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.quoted(|f, w| f.write_i8(w, v))
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.quoted(|f, w| f.write_i16(w, v))
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.quoted(|f, w| f.write_i32(w, v))
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.quoted(|f, w| f.write_i64(w, v))
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.quoted(|f, w| f.write_u8(w, v))
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.quoted(|f, w| f.write_u16(w, v))
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.quoted(|f, w| f.write_u32(w, v))
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.quoted(|f, w| f.write_u64(w, v))
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        if !v.is_finite() {
            return Err(key_not_a_string());
        }
        self.quoted(|f, w| f.write_f32(w, v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        if !v.is_finite() {
            return Err(key_not_a_string());
        }
        self.quoted(|f, w| f.write_f64(w, v))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
        Err(key_not_a_string())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(key_not_a_string())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), Error> {
        Err(key_not_a_string())
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(key_not_a_string())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        Err(key_not_a_string())
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(key_not_a_string())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_not_a_string())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_not_a_string())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_not_a_string())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_not_a_string())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_not_a_string())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(key_not_a_string())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_not_a_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    /// What this writer writes, compact and indented (two spaces, as `json::write`).
    fn written<T: Serialize + ?Sized>(v: &T) -> (String, String) {
        let mut compact = Vec::new();
        v.serialize(&mut TextSerializer::new(
            &mut compact,
            serde_json::ser::CompactFormatter,
        ))
        .unwrap();
        let mut pretty = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(b"  ");
        v.serialize(&mut TextSerializer::new(&mut pretty, fmt))
            .unwrap();
        (
            String::from_utf8(compact).unwrap(),
            String::from_utf8(pretty).unwrap(),
        )
    }

    /// What `serde_json` writes, the same two ways.
    fn serde_written<T: Serialize + ?Sized>(v: &T) -> (String, String) {
        let mut pretty = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(b"  ");
        v.serialize(&mut serde_json::Serializer::with_formatter(
            &mut pretty,
            fmt,
        ))
        .unwrap();
        (
            serde_json::to_string(v).unwrap(),
            String::from_utf8(pretty).unwrap(),
        )
    }

    /// Source: RFC 8259 section 7 (which characters a string must escape) and `serde_json`
    /// 1.0's writer (which it escapes, and how): every byte value around the eight-byte words,
    /// at every offset, is written as `serde_json` writes it.
    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        for b in 0u8..0x80 {
            for at in 0..41 {
                let mut s = "abcdefghijklmnopqrstuvwxyz é中 0123456789".to_string();
                if !s.is_char_boundary(at) {
                    continue;
                }
                s.insert(at, char::from(b));
                assert_eq!(written(&s), serde_written(&s), "{b:#x} at {at}");
            }
        }
        for s in [
            "",
            "é",
            "中文 text ✓",
            "😀\"\\\u{7f}\u{80}\u{2028}",
            "\u{1f}\u{0}",
        ] {
            assert_eq!(written(&s), serde_written(&s), "{s:?}");
        }
    }

    #[test]
    fn values_are_laid_out_as_serde_json_lays_them_out() {
        let v = json!({"a": [], "b": {}, "c": [1, -2, 3.5, 1e300, 0.1, null, true, false],
            "d": {"e": [{"f": "g"}, [[]], {}]}, "": 18446744073709551615u64,
            "h": -9223372036854775808i64});
        assert_eq!(written(&v), serde_written(&v));
        assert_eq!(written(&f64::NAN), serde_written(&f64::NAN));
        assert_eq!(written(&Some('x')), serde_written(&Some('x')));
        assert_eq!(written(&b"ab"[..]), serde_written(&b"ab"[..]));
        let keys = std::collections::BTreeMap::from([(-1, 2), (3, 4)]);
        assert_eq!(written(&keys), serde_written(&keys));
        let keys = std::collections::BTreeMap::from([(true, 1), (false, 2)]);
        assert_eq!(written(&keys), serde_written(&keys));
        let mut out = Vec::new();
        let map = std::collections::BTreeMap::from([((1, 2), 3)]);
        assert!(map
            .serialize(&mut TextSerializer::new(
                &mut out,
                serde_json::ser::CompactFormatter
            ))
            .is_err());
    }

    /// Any JSON value: strings of any characters, nested arrays and objects.
    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            any::<String>().prop_map(Value::String),
            "[ -~\\n\\t\\r\\u{0}-\\u{1f}\"\\\\é中]{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                prop::collection::vec((any::<String>(), inner), 0..8)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_value_is_written_as_serde_json_writes_it(v in any_value()) {
            prop_assert_eq!(written(&v), serde_written(&v));
        }
    }
}
