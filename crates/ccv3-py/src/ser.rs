//! Rust values to Python objects without JSON text in between: a serde `Serializer` that
//! builds `dict`, `list`, `str`, `int`, `float`, `bool` and `None`, the objects `json.loads`
//! gives for the JSON text `serde_json` would write for the same value (non-finite floats become
//! `None`, bytes a list of ints, enum variants `{variant: value}`). Object keys are made once per
//! call and shared (a card repeats the same few dozen keys thousands of times).

use crate::key::{KeySer, KeyTarget};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};
use rustc_hash::FxHashMap;
use serde::ser::{self, Serialize};
use std::cell::RefCell;
use std::fmt;

/// The keys made so far, by text.
type Keys<'py> = RefCell<FxHashMap<Box<str>, Bound<'py, PyString>>>;

/// `value` as Python objects.
///
/// The cyclic garbage collector is paused meanwhile: a big card makes tens of thousands of
/// dicts and lists, every 700 of which would start a collection that can find nothing to free
/// (everything made is reachable from the value being built). No Python code runs in between,
/// since the interpreter is held throughout, and the collector's earlier state comes back
/// afterwards, error or not.
pub(crate) fn to_py<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    let _paused = GcPause::new(py)?;
    let keys: Keys<'py> = RefCell::new(FxHashMap::default());
    value.serialize(ToPy { py, keys: &keys }).map_err(|e| e.0)
}

/// `gc.isenabled`, `gc.disable` and `gc.enable`, looked up once (importing takes longer than
/// a small card's whole build).
static GC_ISENABLED: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static GC_DISABLE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static GC_ENABLE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The collector while it is paused: enabled again on drop if it was enabled before.
pub(crate) struct GcPause<'py>(Option<&'py Bound<'py, PyAny>>);

impl<'py> GcPause<'py> {
    /// Pauses the collector if it runs.
    pub(crate) fn new(py: Python<'py>) -> PyResult<Self> {
        let enabled = GC_ISENABLED.import(py, "gc", "isenabled")?;
        if enabled.call0()?.is_truthy()? {
            let enable = GC_ENABLE.import(py, "gc", "enable")?;
            GC_DISABLE.import(py, "gc", "disable")?.call0()?;
            Ok(GcPause(Some(enable)))
        } else {
            Ok(GcPause(None))
        }
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if let Some(enable) = self.0 {
            // `gc.enable()` cannot fail; were it to, the collector would stay paused rather
            // than the error replacing the caller's result.
            let _ = enable.call0();
        }
    }
}

/// A Python error on its way through serde.
pub(crate) struct Error(PyErr);

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<M: fmt::Display>(msg: M) -> Self {
        Error(pyo3::exceptions::PyValueError::new_err(msg.to_string()))
    }
}

impl From<PyErr> for Error {
    fn from(e: PyErr) -> Self {
        Error(e)
    }
}

/// The serializer: the interpreter and the keys made so far.
#[derive(Clone, Copy)]
struct ToPy<'a, 'py> {
    py: Python<'py>,
    keys: &'a Keys<'py>,
}

impl<'py> ToPy<'_, 'py> {
    /// The shared Python string for an object key.
    fn key(&self, k: &str) -> Bound<'py, PyString> {
        let mut keys = self.keys.borrow_mut();
        if let Some(s) = keys.get(k) {
            return s.clone();
        }
        let s = PyString::intern(self.py, k);
        keys.insert(k.into(), s.clone());
        s
    }

    /// `{variant: value}`.
    fn tagged(&self, variant: &str, value: Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>, Error> {
        let d = PyDict::new(self.py);
        d.set_item(self.key(variant), value)?;
        Ok(d.into_any())
    }
}

type Out<'py> = Result<Bound<'py, PyAny>, Error>;

impl<'a, 'py> ser::Serializer for ToPy<'a, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    type SerializeSeq = Seq<'a, 'py>;
    type SerializeTuple = Seq<'a, 'py>;
    type SerializeTupleStruct = Seq<'a, 'py>;
    type SerializeTupleVariant = Seq<'a, 'py>;
    type SerializeMap = Map<'a, 'py>;
    type SerializeStruct = Map<'a, 'py>;
    type SerializeStructVariant = Map<'a, 'py>;

    fn serialize_bool(self, v: bool) -> Out<'py> {
        Ok(PyBool::new(self.py, v).to_owned().into_any())
    }
    fn serialize_i8(self, v: i8) -> Out<'py> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Out<'py> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Out<'py> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Out<'py> {
        Ok(PyInt::new(self.py, v).into_any())
    }
    fn serialize_i128(self, v: i128) -> Out<'py> {
        Ok(PyInt::new(self.py, v).into_any())
    }
    fn serialize_u8(self, v: u8) -> Out<'py> {
        self.serialize_u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Out<'py> {
        self.serialize_u64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Out<'py> {
        self.serialize_u64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Out<'py> {
        Ok(PyInt::new(self.py, v).into_any())
    }
    fn serialize_u128(self, v: u128) -> Out<'py> {
        Ok(PyInt::new(self.py, v).into_any())
    }
    fn serialize_f32(self, v: f32) -> Out<'py> {
        self.serialize_f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> Out<'py> {
        // serde_json writes NaN and the infinities as `null`.
        if v.is_finite() {
            Ok(PyFloat::new(self.py, v).into_any())
        } else {
            self.serialize_unit()
        }
    }
    fn serialize_char(self, v: char) -> Out<'py> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Out<'py> {
        Ok(PyString::new(self.py, v).into_any())
    }
    fn serialize_bytes(self, v: &[u8]) -> Out<'py> {
        Ok(PyList::new(self.py, v)?.into_any())
    }
    fn serialize_none(self) -> Out<'py> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Out<'py> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Out<'py> {
        Ok(self.py.None().into_bound(self.py))
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Out<'py> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Out<'py> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> Out<'py> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Out<'py> {
        let v = value.serialize(self)?;
        self.tagged(variant, v)
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq<'a, 'py>, Error> {
        Ok(Seq {
            ser: self,
            items: Vec::with_capacity(len.unwrap_or(0)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'a, 'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Seq<'a, 'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Seq<'a, 'py>, Error> {
        let mut s = self.serialize_seq(Some(len))?;
        s.variant = Some(variant);
        Ok(s)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Map<'a, 'py>, Error> {
        Ok(Map {
            ser: self,
            dict: PyDict::new(self.py),
            key: None,
            variant: None,
        })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Map<'a, 'py>, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Map<'a, 'py>, Error> {
        let mut m = self.serialize_map(Some(len))?;
        m.variant = Some(variant);
        Ok(m)
    }
}

/// A list being built.
struct Seq<'a, 'py> {
    ser: ToPy<'a, 'py>,
    items: Vec<Bound<'py, PyAny>>,
    /// The enum variant to wrap the list in, for a tuple variant.
    variant: Option<&'static str>,
}

impl<'py> Seq<'_, 'py> {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.items.push(value.serialize(self.ser)?);
        Ok(())
    }

    fn finish(self) -> Out<'py> {
        let list = PyList::new(self.ser.py, self.items)?.into_any();
        match self.variant {
            Some(v) => self.ser.tagged(v, list),
            None => Ok(list),
        }
    }
}

impl<'py> ser::SerializeSeq for Seq<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Out<'py> {
        self.finish()
    }
}

impl<'py> ser::SerializeTuple for Seq<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Out<'py> {
        self.finish()
    }
}

impl<'py> ser::SerializeTupleStruct for Seq<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Out<'py> {
        self.finish()
    }
}

impl<'py> ser::SerializeTupleVariant for Seq<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> Out<'py> {
        self.finish()
    }
}

/// A dict being built.
struct Map<'a, 'py> {
    ser: ToPy<'a, 'py>,
    dict: Bound<'py, PyDict>,
    /// The key of the value to come, after `serialize_key`.
    key: Option<Bound<'py, PyString>>,
    /// The enum variant to wrap the dict in, for a struct variant.
    variant: Option<&'static str>,
}

impl<'py> Map<'_, 'py> {
    fn put<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        let k = self.ser.key(key);
        let v = value.serialize(self.ser)?;
        self.dict.set_item(k, v)?;
        Ok(())
    }

    fn finish(self) -> Out<'py> {
        let dict = self.dict.into_any();
        match self.variant {
            Some(v) => self.ser.tagged(v, dict),
            None => Ok(dict),
        }
    }
}

impl<'py> ser::SerializeMap for Map<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(key.serialize(KeySer(self.ser))?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let Some(k) = self.key.take() else {
            return Err(ser::Error::custom("a map value without its key"));
        };
        let v = value.serialize(self.ser)?;
        self.dict.set_item(k, v)?;
        Ok(())
    }
    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), Error> {
        let k = key.serialize(KeySer(self.ser))?;
        let v = value.serialize(self.ser)?;
        self.dict.set_item(k, v)?;
        Ok(())
    }
    fn end(self) -> Out<'py> {
        self.finish()
    }
}

impl<'py> ser::SerializeStruct for Map<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.put(key, value)
    }
    fn end(self) -> Out<'py> {
        self.finish()
    }
}

impl<'py> ser::SerializeStructVariant for Map<'_, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.put(key, value)
    }
    fn end(self) -> Out<'py> {
        self.finish()
    }
}

/// Keys become shared Python strings.
impl<'a, 'py> KeyTarget for ToPy<'a, 'py> {
    type Ok = Bound<'py, PyString>;
    type Error = Error;
    fn write_key(self, key: &str) -> Result<Bound<'py, PyString>, Error> {
        Ok(self.key(key))
    }
}
