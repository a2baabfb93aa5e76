//! A big value to Python objects on two threads: a second thread walks the Rust value (the
//! model's key order, entries' extensions parsed on the way) and writes it as a tape of events
//! in chunks; the calling thread, holding the interpreter, turns the chunks into objects as they
//! come. The same objects as [`crate::ser::to_py`] builds, in less time on the calling thread.
//! A tape can also be written whole ahead of time ([`record`], on a thread that does not hold
//! the interpreter) and built later ([`build`]): `read_cards`' reading threads do this, so the
//! calling thread only makes objects.

use crate::key::{KeySer, KeyTarget};
use crate::ser::GcPause;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};
use rustc_hash::FxHashMap;
use serde::ser::{self, Serialize};
use std::fmt;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// Events a chunk holds before it is handed over.
const CHUNK_EVENTS: usize = 4096;

/// Chunks written ahead of the calling thread at most.
const CHUNKS_AHEAD: usize = 8;

/// One step of the tape.
#[derive(Clone, Copy)]
enum Ev {
    Null,
    Bool(bool),
    I64(i64),
    U64(u64),
    I128(i128),
    U128(u128),
    F64(f64),
    /// A string: a range of the chunk's text.
    Str(usize, usize),
    /// A key seen before, by number.
    Key(u32),
    /// A new key (the next number): a range of the chunk's text.
    NewKey(usize, usize),
    /// A dict starts: keys and values follow, then `End`.
    Map,
    /// A list starts: items follow, then `End`.
    List,
    End,
}

/// Events and the text their strings point into.
#[derive(Default)]
struct Chunk {
    evs: Vec<Ev>,
    text: String,
}

/// `value` as Python objects, walked on a second thread (see the module docs); on the calling
/// thread alone when no thread can be started.
pub(crate) fn to_py<'py, T: Serialize + Sync + ?Sized>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    let (tx, rx) = sync_channel::<Chunk>(CHUNKS_AHEAD);
    std::thread::scope(|scope| {
        let writer = std::thread::Builder::new()
            .name("ccv3-py-tape".into())
            .spawn_scoped(scope, move || write(value, tx));
        let Ok(writer) = writer else {
            return crate::ser::to_py(py, value);
        };
        // Reading drops the receiver, which stops the writer when reading failed half-way.
        let built = read(py, rx);
        let written = writer.join();
        let out = built?;
        match written {
            Ok(Ok(())) => Ok(out),
            Ok(Err(e)) => Err(pyo3::exceptions::PyValueError::new_err(e.0)),
            Err(_) => Err(pyo3::exceptions::PyValueError::new_err(
                "writing the value failed",
            )),
        }
    })
}

/// The writing thread: the whole value, chunk by chunk.
fn write<T: Serialize + ?Sized>(value: &T, tx: SyncSender<Chunk>) -> Result<(), Error> {
    let mut w = Writer {
        tx: Some(tx),
        chunk: Chunk {
            evs: Vec::with_capacity(CHUNK_EVENTS),
            text: String::new(),
        },
        keys: FxHashMap::default(),
    };
    value.serialize(&mut w)?;
    let last = std::mem::take(&mut w.chunk);
    if let Some(tx) = w.tx {
        // The value is whole: a reader gone by now has its answer already.
        let _ = tx.send(last);
    }
    Ok(())
}

/// A value's whole tape, written ahead of time by [`record`] and turned into objects by
/// [`build`].
pub(crate) struct Tape(Chunk);

/// Writes `value`'s whole tape (one chunk); needs no interpreter, so it runs on any thread.
pub(crate) fn record<T: Serialize + ?Sized>(value: &T) -> Result<Tape, String> {
    let mut w = Writer {
        tx: None,
        chunk: Chunk::default(),
        keys: FxHashMap::default(),
    };
    value.serialize(&mut w).map_err(|e| e.0)?;
    Ok(Tape(w.chunk))
}

/// The objects of a [`record`]ed tape: what [`crate::ser::to_py`] builds of the same value.
pub(crate) fn build(py: Python<'_>, tape: Tape) -> PyResult<Bound<'_, PyAny>> {
    let mut chunk = Some(tape.0);
    read_chunks(py, |_| chunk.take())
}

/// What the calling thread is building.
enum Frame<'py> {
    Dict(Bound<'py, PyDict>, Option<Bound<'py, PyString>>),
    List(Vec<Bound<'py, PyAny>>),
}

/// The calling thread: objects from the chunks, in order, until the value is whole.
/// The receiver is dropped on return, which stops the writer if the value is not whole.
fn read<'py>(py: Python<'py>, rx: Receiver<Chunk>) -> PyResult<Bound<'py, PyAny>> {
    let mut rx = Some(rx);
    read_chunks(py, |py| {
        let r = rx.take()?;
        // Waits with the interpreter released (the receiver goes along and comes back).
        let (back, got) = py.detach(move || {
            let got = r.recv();
            (r, got)
        });
        rx = Some(back);
        got.ok()
    })
}

/// Objects from the chunks `next` gives, in order, until the value is whole; a value `next`
/// ends (`None`) before it is whole is an error.
fn read_chunks<'py>(
    py: Python<'py>,
    mut next: impl FnMut(Python<'py>) -> Option<Chunk>,
) -> PyResult<Bound<'py, PyAny>> {
    let _paused = GcPause::new(py)?;
    let mut keys: Vec<Bound<'py, PyString>> = Vec::new();
    let mut stack: Vec<Frame<'py>> = Vec::new();
    let broken = || pyo3::exceptions::PyValueError::new_err("the value's tape is broken");
    loop {
        let Some(chunk) = next(py) else {
            return Err(broken());
        };
        let text = chunk.text.as_str();
        let piece = |a: usize, b: usize| text.get(a..b).ok_or_else(broken);
        for ev in chunk.evs {
            let v: Bound<'py, PyAny> = match ev {
                Ev::Null => py.None().into_bound(py),
                Ev::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
                Ev::I64(n) => PyInt::new(py, n).into_any(),
                Ev::U64(n) => PyInt::new(py, n).into_any(),
                Ev::I128(n) => PyInt::new(py, n).into_any(),
                Ev::U128(n) => PyInt::new(py, n).into_any(),
                Ev::F64(f) => PyFloat::new(py, f).into_any(),
                Ev::Str(a, b) => PyString::new(py, piece(a, b)?).into_any(),
                Ev::Key(i) => {
                    let k = keys.get(i as usize).ok_or_else(broken)?.clone();
                    match stack.last_mut() {
                        Some(Frame::Dict(_, slot)) => *slot = Some(k),
                        _ => return Err(broken()),
                    }
                    continue;
                }
                Ev::NewKey(a, b) => {
                    let k = PyString::intern(py, piece(a, b)?);
                    keys.push(k.clone());
                    match stack.last_mut() {
                        Some(Frame::Dict(_, slot)) => *slot = Some(k),
                        _ => return Err(broken()),
                    }
                    continue;
                }
                Ev::Map => {
                    stack.push(Frame::Dict(PyDict::new(py), None));
                    continue;
                }
                Ev::List => {
                    stack.push(Frame::List(Vec::new()));
                    continue;
                }
                Ev::End => match stack.pop() {
                    Some(Frame::Dict(d, None)) => d.into_any(),
                    Some(Frame::List(items)) => PyList::new(py, items)?.into_any(),
                    _ => return Err(broken()),
                },
            };
            match stack.last_mut() {
                None => return Ok(v),
                Some(Frame::Dict(d, slot)) => {
                    let k = slot.take().ok_or_else(broken)?;
                    d.set_item(k, v)?;
                }
                Some(Frame::List(items)) => items.push(v),
            }
        }
    }
}

/// A failure while writing the tape.
struct Error(String);

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<M: fmt::Display>(msg: M) -> Self {
        Error(msg.to_string())
    }
}

/// The writing side: the chunk being filled and the keys numbered so far; without a channel
/// the whole tape stays in one chunk.
struct Writer {
    tx: Option<SyncSender<Chunk>>,
    chunk: Chunk,
    keys: FxHashMap<Box<str>, u32>,
}

impl Writer {
    fn push(&mut self, ev: Ev) -> Result<(), Error> {
        self.chunk.evs.push(ev);
        if let Some(tx) = &self.tx {
            if self.chunk.evs.len() >= CHUNK_EVENTS {
                // The next chunk starts at its full size (growing it step by step copied each
                // chunk's events about twice), its text at the size of the last one's.
                let next = Chunk {
                    evs: Vec::with_capacity(CHUNK_EVENTS),
                    text: String::with_capacity(self.chunk.text.len()),
                };
                let full = std::mem::replace(&mut self.chunk, next);
                // The reader is gone when building failed: stop.
                tx.send(full).map_err(|_| Error("stopped".into()))?;
            }
        }
        Ok(())
    }

    /// `s` in the chunk's text: its range.
    fn text(&mut self, s: &str) -> (usize, usize) {
        let a = self.chunk.text.len();
        self.chunk.text.push_str(s);
        (a, self.chunk.text.len())
    }

    fn str(&mut self, s: &str) -> Result<(), Error> {
        let (a, b) = self.text(s);
        self.push(Ev::Str(a, b))
    }

    fn key(&mut self, k: &str) -> Result<(), Error> {
        if let Some(&i) = self.keys.get(k) {
            return self.push(Ev::Key(i));
        }
        let i = u32::try_from(self.keys.len()).map_err(|_| Error("too many keys".into()))?;
        self.keys.insert(k.into(), i);
        let (a, b) = self.text(k);
        self.push(Ev::NewKey(a, b))
    }
}

impl<'w> ser::Serializer for &'w mut Writer {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Seq<'w>;
    type SerializeTuple = Seq<'w>;
    type SerializeTupleStruct = Seq<'w>;
    type SerializeTupleVariant = Seq<'w>;
    type SerializeMap = Seq<'w>;
    type SerializeStruct = Seq<'w>;
    type SerializeStructVariant = Seq<'w>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.push(Ev::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.push(Ev::I64(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.push(Ev::I64(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.push(Ev::I64(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.push(Ev::I64(v))
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.push(Ev::I128(v))
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.push(Ev::U64(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.push(Ev::U64(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.push(Ev::U64(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.push(Ev::U64(v))
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.push(Ev::U128(v))
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.serialize_f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        // serde_json writes NaN and the infinities as `null`.
        self.push(if v.is_finite() { Ev::F64(v) } else { Ev::Null })
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.str(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        self.push(Ev::List)?;
        for b in v {
            self.push(Ev::U64((*b).into()))?;
        }
        self.push(Ev::End)
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.push(Ev::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.push(Ev::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.push(Ev::Null)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, v: &'static str) -> Result<(), Error> {
        self.str(v)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.push(Ev::Map)?;
        self.key(variant)?;
        value.serialize(&mut *self)?;
        self.push(Ev::End)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Seq<'w>, Error> {
        self.push(Ev::List)?;
        Ok(Seq { w: self, ends: 1 })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'w>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Seq<'w>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Seq<'w>, Error> {
        self.push(Ev::Map)?;
        self.key(variant)?;
        self.push(Ev::List)?;
        Ok(Seq { w: self, ends: 2 })
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Seq<'w>, Error> {
        self.push(Ev::Map)?;
        Ok(Seq { w: self, ends: 1 })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Seq<'w>, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Seq<'w>, Error> {
        self.push(Ev::Map)?;
        self.key(variant)?;
        self.push(Ev::Map)?;
        Ok(Seq { w: self, ends: 2 })
    }
}

/// A list or dict being written; `ends` containers close at its end.
struct Seq<'w> {
    w: &'w mut Writer,
    ends: u8,
}

impl Seq<'_> {
    fn end(self) -> Result<(), Error> {
        for _ in 0..self.ends {
            self.w.push(Ev::End)?;
        }
        Ok(())
    }
}

impl ser::SerializeSeq for Seq<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Error> {
        Seq::end(self)
    }
}

impl ser::SerializeTuple for Seq<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Error> {
        Seq::end(self)
    }
}

impl ser::SerializeTupleStruct for Seq<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Error> {
        Seq::end(self)
    }
}

impl ser::SerializeTupleVariant for Seq<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Error> {
        Seq::end(self)
    }
}

impl ser::SerializeMap for Seq<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        key.serialize(KeySer(&mut *self.w))
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Error> {
        Seq::end(self)
    }
}

impl ser::SerializeStruct for Seq<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.w.key(key)?;
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Error> {
        Seq::end(self)
    }
}

impl ser::SerializeStructVariant for Seq<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.w.key(key)?;
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Error> {
        Seq::end(self)
    }
}

/// Keys are written to the tape.
impl KeyTarget for &mut Writer {
    type Ok = ();
    type Error = Error;
    fn write_key(self, key: &str) -> Result<(), Error> {
        self.key(key)
    }
}
