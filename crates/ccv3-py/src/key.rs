//! Map keys as serde_json writes them, for both object builders ([`crate::ser`] and
//! [`crate::tape`]): strings as they are; chars, integers and booleans as their text; unit
//! variants as their name; any other key is an error.

use serde::ser::{self, Serialize};
use std::fmt;

/// Where a key goes: a builder that takes it as text.
pub(crate) trait KeyTarget: Sized {
    /// What taking a key gives back.
    type Ok;
    /// The builder's error.
    type Error: ser::Error;
    /// Takes one key.
    fn write_key(self, key: &str) -> Result<Self::Ok, Self::Error>;
}

/// The serializer of one map key into `T`.
pub(crate) struct KeySer<T>(pub(crate) T);

fn key_error<E: ser::Error>() -> E {
    E::custom("key must be a string")
}

impl<T: KeyTarget> KeySer<T> {
    fn text(self, v: impl fmt::Display) -> Result<T::Ok, T::Error> {
        self.0.write_key(&v.to_string())
    }
}

impl<T: KeyTarget> ser::Serializer for KeySer<T> {
    type Ok = T::Ok;
    type Error = T::Error;
    type SerializeSeq = ser::Impossible<T::Ok, T::Error>;
    type SerializeTuple = ser::Impossible<T::Ok, T::Error>;
    type SerializeTupleStruct = ser::Impossible<T::Ok, T::Error>;
    type SerializeTupleVariant = ser::Impossible<T::Ok, T::Error>;
    type SerializeMap = ser::Impossible<T::Ok, T::Error>;
    type SerializeStruct = ser::Impossible<T::Ok, T::Error>;
    type SerializeStructVariant = ser::Impossible<T::Ok, T::Error>;

    fn serialize_bool(self, v: bool) -> Result<T::Ok, T::Error> {
        self.text(v)
    }
    fn serialize_i8(self, v: i8) -> Result<T::Ok, T::Error> {
        self.text(v)
    }
    fn serialize_i16(self, v: i16) -> Result<T::Ok, T::Error> {
        self.text(v)
    }
    fn serialize_i32(self, v: i32) -> Result<T::Ok, T::Error> {
        self.text(v)
    }
    fn serialize_i64(self, v: i64) -> Result<T::Ok, T::Error> {
        self.text(v)
    }
    fn serialize_i128(self, v: i128) -> Result<T::Ok, T::Error> {
        self.text(v)
    }
    fn serialize_u8(self, v: u8) -> Result<T::Ok, T::Error> {
        self.text(v)
    }
    fn serialize_u16(self, v: u16) -> Result<T::Ok, T::Error> {
        self.text(v)
    }
    fn serialize_u32(self, v: u32) -> Result<T::Ok, T::Error> {
        self.text(v)
    }
    fn serialize_u64(self, v: u64) -> Result<T::Ok, T::Error> {
        self.text(v)
    }
    fn serialize_u128(self, v: u128) -> Result<T::Ok, T::Error> {
        self.text(v)
    }
    fn serialize_char(self, v: char) -> Result<T::Ok, T::Error> {
        self.text(v)
    }
    fn serialize_f32(self, _: f32) -> Result<T::Ok, T::Error> {
        Err(key_error())
    }
    fn serialize_f64(self, _: f64) -> Result<T::Ok, T::Error> {
        Err(key_error())
    }
    fn serialize_str(self, v: &str) -> Result<T::Ok, T::Error> {
        self.0.write_key(v)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<T::Ok, T::Error> {
        Err(key_error())
    }
    fn serialize_none(self) -> Result<T::Ok, T::Error> {
        Err(key_error())
    }
    fn serialize_some<V: Serialize + ?Sized>(self, _: &V) -> Result<T::Ok, T::Error> {
        Err(key_error())
    }
    fn serialize_unit(self) -> Result<T::Ok, T::Error> {
        Err(key_error())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<T::Ok, T::Error> {
        Err(key_error())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        v: &'static str,
    ) -> Result<T::Ok, T::Error> {
        self.0.write_key(v)
    }
    fn serialize_newtype_struct<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &V,
    ) -> Result<T::Ok, T::Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &V,
    ) -> Result<T::Ok, T::Error> {
        Err(key_error())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, T::Error> {
        Err(key_error())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, T::Error> {
        Err(key_error())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, T::Error> {
        Err(key_error())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, T::Error> {
        Err(key_error())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, T::Error> {
        Err(key_error())
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, T::Error> {
        Err(key_error())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, T::Error> {
        Err(key_error())
    }
}
