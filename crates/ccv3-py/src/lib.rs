//! The native part of the `ccv3` Python package (`ccv3._ccv3`).
//!
//! Every function calls the facade crate `ccv3_embed` with the interpreter released
//! ([`Python::detach`]), so other Python threads run meanwhile. Cards and lorebooks come back as
//! Python objects built straight from the Rust values once the interpreter is held again
//! (`ser.rs`: no JSON text in between), or, for a card whose text the library finds standing as
//! the model keeps it, from that text (`astext.rs`: no model at all); other values cross as JSON
//! text, which the Python layer (`python/ccv3/__init__.py`) writes with `json.dumps` and reads
//! with `loads`. Failures raise `ccv3.Ccv3Error` (a `ValueError`) with the facade's stable
//! `code`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use ccv3_embed::{EmbedError, ReadOptions, Source};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde_json::Value;

mod astext;
mod key;
mod ser;
mod tape;
mod topy;

// The extension's Rust allocations (card models, JSON text) go through mimalloc, as in the CLI:
// reading a big card allocates and frees many small strings.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

create_exception!(
    ccv3,
    Ccv3Error,
    PyValueError,
    "A ccv3 failure: `code` is a stable kebab-case string (bad-input, read-failed, limit, ...)."
);

/// The Python exception for a facade error, with `code` set.
fn py_err(py: Python<'_>, e: EmbedError) -> PyErr {
    let err = Ccv3Error::new_err(e.message);
    // Setting an attribute on a fresh exception instance cannot fail in practice; if it did,
    // the error still carries its message.
    let _ = err.value(py).setattr("code", e.code);
    err
}

/// Runs `f` with the interpreter released and maps its error.
fn run<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, EmbedError> + Send) -> PyResult<T> {
    py.detach(f).map_err(|e| py_err(py, e))
}

/// Parses JSON text from the Python layer.
fn parse(text: &str, what: &str) -> Result<Value, EmbedError> {
    serde_json::from_str(text).map_err(|e| EmbedError::bad_input(format!("{what}: {e}")))
}

/// Writes a value as JSON text for the Python layer.
fn text(v: &Value) -> Result<String, EmbedError> {
    serde_json::to_string(v).map_err(|e| EmbedError::write_failed(e.to_string()))
}

/// `loads(text)`: JSON text as Python objects (dict, list, str, int, float, bool, None), keys
/// interned; what the Python layer uses instead of `json.loads` for the values it returns.
#[pyfunction]
fn loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    topy::loads(py, text)
}

/// `read_card(data, parse_decorators)`: the card as JSON text.
#[pyfunction]
fn read_card(py: Python<'_>, data: &[u8], parse_decorators: bool) -> PyResult<String> {
    let o = ReadOptions { parse_decorators };
    run(py, || ccv3_embed::read_card_json(data, &o))
}

/// `read_card_path(path, parse_decorators)`: the card of a file as JSON text (a PNG's image
/// data is skipped, not read).
#[pyfunction]
fn read_card_path(
    py: Python<'_>,
    path: std::path::PathBuf,
    parse_decorators: bool,
) -> PyResult<String> {
    let o = ReadOptions { parse_decorators };
    run(py, || ccv3_embed::read_card_path_json(&path, &o))
}

/// `read_card_summary(data, tokens=None)`: what a character list shows of a card, as JSON text
/// (issue 29); `tokens` (an encoding) counts the permanent fields' tokens.
#[pyfunction]
#[pyo3(signature = (data, tokens=None))]
fn read_card_summary(py: Python<'_>, data: &[u8], tokens: Option<&str>) -> PyResult<String> {
    run(py, || ccv3_embed::read_card_summary_json(data, tokens))
}

/// `read_card_summary_path(path, tokens=None)`: [`read_card_summary`] of a file (a PNG's image
/// data is skipped, a CHARX streamed).
#[pyfunction]
#[pyo3(signature = (path, tokens=None))]
fn read_card_summary_path(
    py: Python<'_>,
    path: std::path::PathBuf,
    tokens: Option<&str>,
) -> PyResult<String> {
    run(py, || {
        ccv3_embed::read_card_summary_path_json(&path, tokens)
    })
}

/// A card model written as the V3 object ([`ccv3::Card::serialize_v3`]).
struct V3(ccv3::Card);

impl serde::Serialize for V3 {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_v3(ser)
    }
}

/// Books with this many entries or more are walked on a second thread while their dicts are
/// built ([`tape`]).
const TAPE_ENTRIES: usize = 256;

/// Parses each lorebook entry's `extensions` now (they stay JSON text in the model until looked
/// at): called with the interpreter released, so that building the dicts afterwards, with the
/// interpreter held, finds them parsed.
fn parse_extensions(card: &ccv3::Card) {
    if let Some(book) = card.data.character_book.as_ref() {
        for e in &book.entries {
            // Looking inside parses the text once; the map is kept with the entry.
            let _ = e.extensions.len();
        }
    }
}

/// Whether a card's book is big enough to be walked on a second thread while its dicts are
/// built ([`tape`]).
fn big_book(card: &ccv3::Card) -> bool {
    card.data
        .character_book
        .as_ref()
        .is_some_and(|b| b.entries.len() >= TAPE_ENTRIES)
}

/// The card as Python objects (a big book walked on a second thread meanwhile, its entries'
/// extensions parsed there); the model is freed with the interpreter released.
fn card_object(py: Python<'_>, card: ccv3::Card) -> PyResult<Bound<'_, PyAny>> {
    let split = big_book(&card);
    let card = V3(card);
    let out = if split {
        tape::to_py(py, &card)
    } else {
        ser::to_py(py, &card)
    };
    py.detach(move || drop(card));
    out
}

/// A card as read, before its objects are made.
enum Read {
    /// The card's text stands as the model keeps it: its objects are built from the text.
    AsIs(ccv3_embed::AsIsCard),
    /// Any other card.
    Model(Box<ccv3::Card>),
}

/// The objects of a card as read; its text or model is freed with the interpreter released.
fn read_object(py: Python<'_>, card: Read) -> PyResult<Bound<'_, PyAny>> {
    match card {
        Read::Model(card) => card_object(py, *card),
        Read::AsIs(card) => {
            let out = astext::to_py(py, &card);
            py.detach(move || drop(card));
            out
        }
    }
}

/// `read_card_value(data, parse_decorators)`: the card as a dict (what `json.loads` of
/// [`read_card`]'s text gives, without the text).
#[pyfunction]
fn read_card_value<'py>(
    py: Python<'py>,
    data: &[u8],
    parse_decorators: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let o = ReadOptions { parse_decorators };
    let card = run(py, || {
        if let Some(card) = ccv3_embed::read_card_as_is(std::io::Cursor::new(data), &o) {
            return Ok(Read::AsIs(card));
        }
        let card = ccv3_embed::read_card_model(data, &o)?;
        // A big book's extensions are parsed on the tape's thread instead.
        if !big_book(&card) {
            parse_extensions(&card);
        }
        Ok(Read::Model(Box::new(card)))
    })?;
    read_object(py, card)
}

/// `read_card_path_value(path, parse_decorators)`: the card of a file as a dict (a PNG's image
/// data is skipped, not read).
#[pyfunction]
fn read_card_path_value(
    py: Python<'_>,
    path: std::path::PathBuf,
    parse_decorators: bool,
) -> PyResult<Bound<'_, PyAny>> {
    let o = ReadOptions { parse_decorators };
    let card = run(py, || {
        if let Some(card) = ccv3_embed::read_card_path_as_is(&path, &o) {
            return Ok(Read::AsIs(card));
        }
        let card = ccv3_embed::read_card_path_model(&path, &o)?;
        // A big book's extensions are parsed on the tape's thread instead.
        if !big_book(&card) {
            parse_extensions(&card);
        }
        Ok(Read::Model(Box::new(card)))
    })?;
    read_object(py, card)
}

/// `read_lorebook_value(data, parse_decorators)`: the lorebook as a dict.
#[pyfunction]
fn read_lorebook_value<'py>(
    py: Python<'py>,
    data: &[u8],
    parse_decorators: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let o = ReadOptions { parse_decorators };
    let book = run(py, || ccv3_embed::read_lorebook(data, &o))?;
    let out = ser::to_py(py, &book);
    py.detach(move || drop(book));
    out
}

/// One file of a [`CardBatch`].
enum Slot {
    /// Not read yet.
    Pending,
    /// Read: its card's text or tape, or why not.
    Ready(Result<Taped, EmbedError>),
    /// Handed to Python.
    Taken,
}

/// What a [`CardBatch`] shares with its reading threads.
struct Shared {
    paths: Vec<String>,
    options: ReadOptions,
    /// The next file for a thread to read.
    next: std::sync::atomic::AtomicUsize,
    /// Set when the batch is dropped: the threads stop after the file they are reading.
    cancelled: std::sync::atomic::AtomicBool,
    slots: std::sync::Mutex<Vec<Slot>>,
    /// Signalled each time a file is read.
    ready: std::sync::Condvar,
}

/// A file of a batch, read, ready for its objects to be made.
enum Taped {
    /// The card's text stands as the model keeps it.
    AsIs(ccv3_embed::AsIsCard),
    /// The card's whole tape.
    Tape(tape::Tape),
}

/// Reads one file of a batch: a card standing as the model keeps it as its text, any other
/// card as its whole tape (the model's key order and the entries' extensions walked here, on
/// the reading thread), so that taking it only makes the objects.
fn read_one(path: &str, options: &ReadOptions) -> Result<Taped, EmbedError> {
    let path = std::path::Path::new(path);
    if let Some(card) = ccv3_embed::read_card_path_as_is(path, options) {
        return Ok(Taped::AsIs(card));
    }
    // The batch's threads have the cores: no second thread per big book.
    let card = V3(ccv3_embed::read_card_path_model_on_this_thread(
        path, options,
    )?);
    let tape = tape::record(&card)
        .map_err(|e| EmbedError::new("internal", format!("{}: {e}", path.display())))?;
    Ok(Taped::Tape(tape))
}

impl Shared {
    /// A reading thread: reads the next unread file until none is left or the batch is gone.
    fn work(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        while !self.cancelled.load(Relaxed) {
            let i = self.next.fetch_add(1, Relaxed);
            let Some(path) = self.paths.get(i) else {
                return;
            };
            // The readers promise not to panic; were one to, the file reports it instead of its
            // taker waiting forever.
            let card = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                read_one(path, &self.options)
            }))
            .unwrap_or_else(|_| {
                Err(EmbedError::new(
                    "internal",
                    format!("{path}: reading failed"),
                ))
            });
            let Ok(mut slots) = self.slots.lock() else {
                return;
            };
            if let Some(slot) = slots.get_mut(i) {
                *slot = Slot::Ready(card);
            }
            drop(slots);
            self.ready.notify_all();
        }
    }
}

/// The cards of [`read_cards_batch`]: threads read the files in order, with the interpreter
/// released, and write each card's tape ([`tape::record`]), while Python takes the cards read
/// so far; each card becomes a dict when taken, so reading the next files overlaps building this
/// one, and a batch never holds more than one card's Python objects.
#[pyclass(module = "ccv3")]
struct CardBatch {
    shared: std::sync::Arc<Shared>,
    /// How many reading threads started (none: `take` reads the file itself).
    threads: usize,
}

impl Drop for CardBatch {
    fn drop(&mut self) {
        self.shared
            .cancelled
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

#[pymethods]
impl CardBatch {
    /// The number of files.
    fn __len__(&self) -> usize {
        self.shared.paths.len()
    }

    /// `take(i)`: the `i`th file's `(card, None, None)` or `(None, code, message)`, waiting
    /// (interpreter released) until it is read; a file is taken once.
    fn take<'py>(
        &self,
        py: Python<'py>,
        i: usize,
    ) -> PyResult<(Bound<'py, PyAny>, Option<&'static str>, Option<String>)> {
        let s = &*self.shared;
        let Some(path) = s.paths.get(i) else {
            return Err(Ccv3Error::new_err(format!("no file {i} in the batch")));
        };
        let threads = self.threads;
        let slot = py.detach(|| {
            let mut slots = s.slots.lock().ok()?;
            loop {
                match std::mem::replace(slots.get_mut(i)?, Slot::Taken) {
                    Slot::Pending if threads == 0 => {
                        drop(slots);
                        return Some(Slot::Ready(read_one(path, &s.options)));
                    }
                    Slot::Pending => {
                        slots[i] = Slot::Pending;
                        slots = s.ready.wait(slots).ok()?;
                    }
                    other => return Some(other),
                }
            }
        });
        match slot {
            // Only the objects are made here: the reading threads walked the card.
            Some(Slot::Ready(Ok(Taped::Tape(tape)))) => Ok((tape::build(py, tape)?, None, None)),
            Some(Slot::Ready(Ok(Taped::AsIs(card)))) => {
                Ok((read_object(py, Read::AsIs(card))?, None, None))
            }
            Some(Slot::Ready(Err(e))) => {
                Ok((py.None().into_bound(py), Some(e.code), Some(e.message)))
            }
            _ => Err(Ccv3Error::new_err(format!(
                "file {i} of the batch was taken already"
            ))),
        }
    }
}

/// `read_cards_batch(paths, threads, parse_decorators)`: starts reading the files on
/// `threads` threads (default: one per core) and returns the [`CardBatch`] to take the cards
/// from, in order.
#[pyfunction]
#[pyo3(signature = (paths, threads, parse_decorators))]
fn read_cards_batch(
    paths: Vec<String>,
    threads: Option<usize>,
    parse_decorators: bool,
) -> CardBatch {
    let n = paths.len();
    let wanted = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, n.max(1));
    let shared = std::sync::Arc::new(Shared {
        slots: std::sync::Mutex::new((0..n).map(|_| Slot::Pending).collect()),
        paths,
        options: ReadOptions { parse_decorators },
        next: std::sync::atomic::AtomicUsize::new(0),
        cancelled: std::sync::atomic::AtomicBool::new(false),
        ready: std::sync::Condvar::new(),
    });
    let mut started = 0;
    if n > 0 {
        for _ in 0..wanted {
            let s = std::sync::Arc::clone(&shared);
            let spawned = std::thread::Builder::new()
                .name("ccv3-py-read".into())
                .spawn(move || s.work());
            if spawned.is_ok() {
                started += 1;
            }
        }
    }
    CardBatch {
        shared,
        threads: started,
    }
}

/// `read_lorebook(data, parse_decorators)`: the lorebook as JSON text.
#[pyfunction]
fn read_lorebook(py: Python<'_>, data: &[u8], parse_decorators: bool) -> PyResult<String> {
    let o = ReadOptions { parse_decorators };
    run(py, || ccv3_embed::read_lorebook_json(data, &o))
}

/// `parse_decorators(content)`: `{"decorators": [...], "content": body}` as JSON text.
#[pyfunction]
fn parse_decorators(py: Python<'_>, content: &str) -> PyResult<String> {
    run(py, || text(&ccv3_embed::parse_decorators(content)))
}

/// `serialize_decorators(decorators_json, content)`: the content with `@@` lines.
#[pyfunction]
fn serialize_decorators(py: Python<'_>, decorators: &str, content: &str) -> PyResult<String> {
    run(py, || {
        ccv3_embed::serialize_decorators(&parse(decorators, "decorators")?, content)
    })
}

/// `write_card(card_json, format, image)`: the file's bytes.
#[pyfunction]
#[pyo3(signature = (card, format, image=None))]
fn write_card<'py>(
    py: Python<'py>,
    card: &str,
    format: &str,
    image: Option<&[u8]>,
) -> PyResult<Bound<'py, PyBytes>> {
    let out = run(py, || {
        ccv3_embed::write_card(&parse(card, "card")?, format, image)
    })?;
    Ok(PyBytes::new(py, &out))
}

/// `write_lorebook(book_json, format)`: the file's bytes.
#[pyfunction]
#[pyo3(signature = (book, format=None))]
fn write_lorebook<'py>(
    py: Python<'py>,
    book: &str,
    format: Option<&str>,
) -> PyResult<Bound<'py, PyBytes>> {
    let out = run(py, || {
        ccv3_embed::write_lorebook(&parse(book, "lorebook")?, format)
    })?;
    Ok(PyBytes::new(py, &out))
}

/// `validate(kind, data, json)`: the diagnostics of a card (`kind` = "card") or lorebook, given
/// as file bytes or as JSON text, as JSON text.
#[pyfunction]
#[pyo3(signature = (kind, data=None, json=None))]
fn validate(
    py: Python<'_>,
    kind: &str,
    data: Option<&[u8]>,
    json: Option<&str>,
) -> PyResult<String> {
    run(py, || {
        let value;
        let source = match (data, json) {
            (Some(b), _) => Source::Bytes(b),
            (None, Some(t)) => {
                value = parse(t, kind)?;
                Source::Json(&value)
            }
            (None, None) => return Err(EmbedError::bad_input("nothing to validate")),
        };
        let out = if kind == "card" {
            ccv3_embed::validate_card(source)?
        } else {
            ccv3_embed::validate_lorebook(source)?
        };
        text(&out)
    })
}

/// `analyze(kind, data, json, options)`: `lint_card`, `lint_lorebook`, `lore_graph` or
/// `portability` (issue 27) of a card or lorebook given as file bytes or JSON text, with options
/// as JSON text; the result as JSON text.
#[pyfunction]
#[pyo3(signature = (kind, data=None, json=None, options="{}"))]
fn analyze(
    py: Python<'_>,
    kind: &str,
    data: Option<&[u8]>,
    json: Option<&str>,
    options: &str,
) -> PyResult<String> {
    run(py, || {
        let f: fn(Source, &Value) -> Result<Value, EmbedError> = match kind {
            "lint_card" => ccv3_embed::lint_card,
            "lint_lorebook" => ccv3_embed::lint_lorebook,
            "lore_graph" => ccv3_embed::lore_graph,
            "portability" => ccv3_embed::portability,
            other => return Err(EmbedError::bad_input(format!("no analysis {other:?}"))),
        };
        let options = parse(options, "options")?;
        if let (None, Some(t), "lint_card") = (data, json, kind) {
            // A card object's JSON text, read straight into the card model.
            return ccv3_embed::lint_card_json(t, &options);
        }
        let value;
        let source = match (data, json) {
            (Some(b), _) => Source::Bytes(b),
            (None, Some(t)) => {
                value = parse(t, "input")?;
                Source::Json(&value)
            }
            (None, None) => return Err(EmbedError::bad_input("nothing to analyse")),
        };
        text(&f(source, &options)?)
    })
}

/// A card or book of a request: `{"$bytes": i}` is the `i`th of `blobs`, anything else a JSON
/// object.
fn source<'a>(v: &'a Value, blobs: &[&'a [u8]], what: &str) -> Result<Source<'a>, EmbedError> {
    match v.get("$bytes").and_then(Value::as_u64) {
        Some(i) => usize::try_from(i)
            .ok()
            .and_then(|i| blobs.get(i))
            .map(|b| Source::Bytes(b))
            .ok_or_else(|| EmbedError::bad_input(format!("{what}: no such bytes"))),
        None => Ok(Source::Json(v)),
    }
}

/// The books of a request (removed from it), as sources.
fn take_books(request: &mut Value) -> Value {
    match request.as_object_mut() {
        Some(o) => o.shift_remove("books").unwrap_or(Value::Null),
        None => Value::Null,
    }
}

fn books_of<'a>(books: &'a Value, blobs: &[&'a [u8]]) -> Result<Vec<Source<'a>>, EmbedError> {
    match books {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, b)| source(b, blobs, &format!("books[{i}]")))
            .collect(),
        _ => Err(EmbedError::bad_input("books must be a list")),
    }
}

/// `scan_lorebook(request_json, blobs)`: `{activated, rejected, tokens, state}` as JSON text.
#[pyfunction]
fn scan_lorebook(
    py: Python<'_>,
    request: &str,
    blobs: Vec<Bound<'_, PyBytes>>,
) -> PyResult<String> {
    let blobs: Vec<&[u8]> = blobs.iter().map(|b| b.as_bytes()).collect();
    run(py, || {
        let mut req = parse(request, "request")?;
        let books = take_books(&mut req);
        let sources = books_of(&books, &blobs)?;
        text(&ccv3_embed::scan_lorebook(&sources, &req)?)
    })
}

/// `build_prompt(request_json, blobs)`: `{messages, tokens, lore, cut, state}` as JSON text.
#[pyfunction]
fn build_prompt(py: Python<'_>, request: &str, blobs: Vec<Bound<'_, PyBytes>>) -> PyResult<String> {
    let blobs: Vec<&[u8]> = blobs.iter().map(|b| b.as_bytes()).collect();
    run(py, || {
        let mut req = parse(request, "request")?;
        let books = take_books(&mut req);
        let card = match req.as_object_mut() {
            Some(o) => o.shift_remove("card").unwrap_or(Value::Null),
            None => Value::Null,
        };
        let sources = books_of(&books, &blobs)?;
        let card = source(&card, &blobs, "card")?;
        text(&ccv3_embed::build_prompt(card, &sources, &req)?)
    })
}

/// Lorebooks compiled once for many scans (`ccv3.compile_lorebooks`).
#[pyclass(name = "CompiledLorebooks", module = "ccv3")]
struct CompiledLorebooks {
    inner: std::sync::Mutex<ccv3_embed::CompiledBooks>,
}

#[pymethods]
impl CompiledLorebooks {
    /// `CompiledLorebooks(options_json, blobs)`: compiles the request's `books` with its options.
    #[new]
    fn new(py: Python<'_>, request: &str, blobs: Vec<Bound<'_, PyBytes>>) -> PyResult<Self> {
        let blobs: Vec<&[u8]> = blobs.iter().map(|b| b.as_bytes()).collect();
        let inner = run(py, || {
            let mut req = parse(request, "options")?;
            let books = take_books(&mut req);
            let sources = books_of(&books, &blobs)?;
            ccv3_embed::CompiledBooks::new(&sources, &req)
        })?;
        Ok(CompiledLorebooks {
            inner: std::sync::Mutex::new(inner),
        })
    }

    /// `scan(request_json)`: a scan with the request's `chat`, `state` and `seed`, as JSON text.
    fn scan(&self, py: Python<'_>, request: &str) -> PyResult<String> {
        run(py, || {
            let req = parse(request, "request")?;
            let mut inner = self
                .inner
                .lock()
                .map_err(|_| EmbedError::new("poisoned", "an earlier scan failed"))?;
            inner.scan_json(&req)
        })
    }

    /// The books' display names, in order.
    fn book_names(&self) -> PyResult<Vec<String>> {
        self.inner
            .lock()
            .map(|b| b.book_names())
            .map_err(|_| Ccv3Error::new_err("an earlier scan failed"))
    }
}

/// `expand_macros(text, context_json)`: the expanded text.
#[pyfunction]
fn expand_macros(py: Python<'_>, text: &str, context: &str) -> PyResult<String> {
    run(py, || {
        ccv3_embed::expand_macros(text, &parse(context, "context")?)
    })
}

/// `count_tokens(text, encoding)`: the number of tokens.
#[pyfunction]
#[pyo3(signature = (text, encoding=None))]
fn count_tokens(py: Python<'_>, text: &str, encoding: Option<&str>) -> PyResult<usize> {
    run(py, || ccv3_embed::count_tokens(text, encoding))
}

/// The native module `ccv3._ccv3`.
#[pymodule]
fn _ccv3(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", ccv3_embed::VERSION)?;
    m.add("Ccv3Error", m.py().get_type::<Ccv3Error>())?;
    m.add_function(wrap_pyfunction!(loads, m)?)?;
    m.add_function(wrap_pyfunction!(read_card, m)?)?;
    m.add_function(wrap_pyfunction!(read_card_path, m)?)?;
    m.add_function(wrap_pyfunction!(read_card_summary, m)?)?;
    m.add_function(wrap_pyfunction!(read_card_summary_path, m)?)?;
    m.add_function(wrap_pyfunction!(read_lorebook, m)?)?;
    m.add_function(wrap_pyfunction!(read_card_value, m)?)?;
    m.add_function(wrap_pyfunction!(read_card_path_value, m)?)?;
    m.add_function(wrap_pyfunction!(read_lorebook_value, m)?)?;
    m.add_function(wrap_pyfunction!(read_cards_batch, m)?)?;
    m.add_class::<CardBatch>()?;
    m.add_function(wrap_pyfunction!(parse_decorators, m)?)?;
    m.add_function(wrap_pyfunction!(serialize_decorators, m)?)?;
    m.add_function(wrap_pyfunction!(write_card, m)?)?;
    m.add_function(wrap_pyfunction!(write_lorebook, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(scan_lorebook, m)?)?;
    m.add_function(wrap_pyfunction!(build_prompt, m)?)?;
    m.add_function(wrap_pyfunction!(expand_macros, m)?)?;
    m.add_class::<CompiledLorebooks>()?;
    m.add_function(wrap_pyfunction!(count_tokens, m)?)?;
    Ok(())
}
