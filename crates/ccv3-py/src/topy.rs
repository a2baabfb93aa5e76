//! JSON text to Python objects in one pass: a serde visitor that builds `dict`, `list`, `str`,
//! `int`, `float`, `bool` and `None` as it parses, with object keys interned (a card repeats the
//! same few dozen keys thousands of times). Faster than `json.loads` on the big values this
//! package returns, and no tree is built in between.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;

/// Keys seen so far, as Python strings.
type Keys<'py> = RefCell<HashMap<String, Bound<'py, PyString>>>;

/// Parses JSON text into Python objects.
pub(crate) fn loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let keys: Keys<'py> = RefCell::new(HashMap::new());
    let mut de = serde_json::Deserializer::from_str(text);
    // Deep values are the caller's own; ccv3 writes none deeper than serde_json's limit.
    let seed = Seed { py, keys: &keys };
    let out = seed
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v))
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    Ok(out)
}

#[derive(Clone, Copy)]
struct Seed<'a, 'py> {
    py: Python<'py>,
    keys: &'a Keys<'py>,
}

/// A serde error for a failed Python call.
fn err<E: serde::de::Error>(e: PyErr) -> E {
    E::custom(e.to_string())
}

impl<'de, 'py> DeserializeSeed<'de> for Seed<'_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 'py> Visitor<'de> for Seed<'_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(self.py.None().into_bound(self.py))
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(PyBool::new(self.py, v).to_owned().into_any())
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(PyInt::new(self.py, v).into_any())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(PyInt::new(self.py, v).into_any())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(PyFloat::new(self.py, v).into_any())
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(PyString::new(self.py, v).into_any())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let list = PyList::empty(self.py);
        while let Some(v) = seq.next_element_seed(self)? {
            list.append(v).map_err(err)?;
        }
        Ok(list.into_any())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let dict = PyDict::new(self.py);
        while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let key = {
                let mut keys = self.keys.borrow_mut();
                match keys.get(k.as_ref()) {
                    Some(s) => s.clone(),
                    None => {
                        let s = PyString::intern(self.py, &k);
                        keys.insert(k.into_owned(), s.clone());
                        s
                    }
                }
            };
            let v = map.next_value_seed(self)?;
            dict.set_item(key, v).map_err(err)?;
        }
        Ok(dict.into_any())
    }
}
