//! The WebAssembly core of the npm package `ccv3`.
//!
//! Every export here is a thin conversion around one function of [`ccv3_embed`]: JSON text in
//! and out for values, `&[u8]`/`Vec<u8>` for bytes, and a JS `Error` with a stable `code` for
//! failures (the facade's codes). The package's JavaScript wrapper (`bindings/npm/src/api.js`)
//! turns JSON text into plain objects: one string crosses the boundary instead of a walk over a
//! JS object graph, which is the fastest way to move big values between JS and WebAssembly.
//!
//! No spec logic lives here. Files and books travel as:
//! - `books_json`: a JSON array with one item per book, either the lorebook object or `null`
//!   for "the next file's bytes";
//! - `blob` + `lens`: the files' bytes concatenated, and each file's length.
//!
//! The module is built with `panic = "immediate-abort"` (no panic machinery, for size), so nothing
//! here may panic: every input error is a returned `Error`. If the instance ever traps anyway,
//! the JavaScript wrapper reports code `internal` and restarts it.
#![deny(missing_docs)]

use ccv3_embed::{EmbedError, ReadOptions, Source};
use serde_json::Value;
use wasm_bindgen::prelude::*;

/// Runs when the module is instantiated: regex keys that need backtracking get JavaScript's own
/// syntax check (the core leaves `regress` out for size, issue 11).
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen(start)]
fn start() {
    ccv3_embed::set_regex_syntax_check(js_regex_syntax);
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen]
extern "C" {
    /// JavaScript's `RegExp`.
    #[wasm_bindgen(js_name = RegExp)]
    type JsRegExp;

    /// `new RegExp(pattern, flags)`: throws a `SyntaxError` for an invalid pattern.
    #[wasm_bindgen(constructor, catch, js_class = "RegExp")]
    fn new(pattern: &str, flags: &str) -> Result<JsRegExp, JsValue>;
}

/// ECMAScript's syntax check by the JavaScript engine itself: `Err` with its message.
#[cfg(target_arch = "wasm32")]
fn js_regex_syntax(pattern: &str, flags: &str) -> Result<(), String> {
    JsRegExp::new(pattern, flags).map(drop).map_err(|e| {
        e.dyn_ref::<js_sys::Error>()
            .map(|e| String::from(e.message()))
            .unwrap_or_else(|| "not a valid JavaScript regular expression".to_owned())
    })
}

/// Returns the package version (the workspace version).
#[wasm_bindgen]
pub fn version() -> String {
    ccv3_embed::VERSION.to_owned()
}

/// A failure as a JS `Error` whose `message` names the problem and whose `code` is stable.
fn js_error(code: &str, message: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    // Setting a property on a fresh Error object cannot fail; if it ever did, the message stays.
    let _ = js_sys::Reflect::set(&error, &JsValue::from_str("code"), &JsValue::from_str(code));
    error.into()
}

fn to_js(e: EmbedError) -> JsValue {
    js_error(e.code, &e.message)
}

fn bad_input(message: impl std::fmt::Display) -> JsValue {
    js_error("bad-input", &message.to_string())
}

/// Parses JSON text that the wrapper made with `JSON.stringify` (`what` names it in errors).
fn parse(text: &str, what: &str) -> Result<Value, JsValue> {
    serde_json::from_str(text).map_err(|e| bad_input(format!("{what} is not valid JSON: {e}")))
}

/// Serialises a result for `JSON.parse` on the JS side.
fn json_text(value: &Value) -> Result<String, JsValue> {
    serde_json::to_string(value)
        .map_err(|e| js_error("internal", &format!("cannot write JSON: {e}")))
}

/// The books of one call: parsed objects plus slices of the concatenated file bytes.
struct Books {
    values: Vec<Value>,
}

impl Books {
    fn parse(books_json: &str) -> Result<Self, JsValue> {
        match parse(books_json, "books")? {
            Value::Array(values) => Ok(Books { values }),
            _ => Err(bad_input("books must be an array")),
        }
    }

    /// Pairs each book with its source: the object itself, or the next slice of `blob`.
    fn sources<'a>(&'a self, blob: &'a [u8], lens: &[u32]) -> Result<Vec<Source<'a>>, JsValue> {
        let mut sources = Vec::with_capacity(self.values.len());
        let mut files = lens.iter();
        let mut at = 0usize;
        for value in &self.values {
            if value.is_null() {
                let len = files
                    .next()
                    .ok_or_else(|| bad_input("books: more files than byte buffers"))?;
                let end = at
                    .checked_add(*len as usize)
                    .filter(|end| *end <= blob.len())
                    .ok_or_else(|| bad_input("books: byte buffers shorter than their lengths"))?;
                sources.push(Source::Bytes(&blob[at..end]));
                at = end;
            } else {
                sources.push(Source::Json(value));
            }
        }
        Ok(sources)
    }
}

/// Reads a card's file bytes; returns the V3 card as JSON text.
#[wasm_bindgen]
pub fn read_card(bytes: &[u8], parse_decorators: bool) -> Result<String, JsValue> {
    ccv3_embed::read_card_json(bytes, &ReadOptions { parse_decorators }).map_err(to_js)
}

#[wasm_bindgen]
extern "C" {
    /// A JavaScript object with a numeric `length` (a typed array).
    #[wasm_bindgen(extends = js_sys::Object)]
    type HasLength;

    /// `length` as a number: js-sys's `length()` is a `u32`, which a longer array would wrap.
    #[wasm_bindgen(method, getter)]
    fn length(this: &HasLength) -> f64;
}

/// A JavaScript `Uint8Array` read in place, as a random-access source: each read copies only
/// the bytes asked for into WebAssembly memory (a PNG card's image data is never copied).
struct JsBytes<'a> {
    array: &'a js_sys::Uint8Array,
    len: u64,
    pos: u64,
    /// The first read after a seek gives at most [`HEADER_READ`] bytes, read through a
    /// `DataView` (a few number reads, no view made and copied out): the summary's PNG walk
    /// reads one chunk header after each seek (issue 29: a PNG of 231 `IDAT` chunks).
    header_reads: bool,
    /// A seek came last (with `header_reads`).
    jumped: bool,
    view: Option<js_sys::DataView>,
}

/// The bytes a header read gives (a PNG chunk's length, type, and the next chunk's start).
const HEADER_READ: usize = 16;

impl<'a> JsBytes<'a> {
    /// The array as a source, or `limit` when it is longer than a WebAssembly memory can
    /// address (4 GiB).
    fn new(array: &'a js_sys::Uint8Array) -> Result<Self, JsValue> {
        let len = array.unchecked_ref::<HasLength>().length();
        if !(0.0..=f64::from(u32::MAX)).contains(&len) {
            return Err(js_error(
                "limit",
                &format!("input of {len} bytes is over the 4 GiB limit"),
            ));
        }
        Ok(JsBytes {
            array,
            len: len as u64,
            pos: 0,
            header_reads: false,
            jumped: false,
            view: None,
        })
    }

    /// Reads up to [`HEADER_READ`] bytes at the position through a `DataView` of the array.
    fn read_header(&mut self, buf: &mut [u8]) -> usize {
        let left = self.len.saturating_sub(self.pos);
        let n = usize::try_from(left).map_or(HEADER_READ, |l| l.min(HEADER_READ));
        let n = n.min(buf.len());
        let (Ok(start), Some(dst)) = (usize::try_from(self.pos), buf.get_mut(..n)) else {
            return 0;
        };
        if n == 0 {
            return 0;
        }
        let array = self.array;
        // Made on first need: the array holds bytes here, so its buffer is not detached.
        let view = self.view.get_or_insert_with(|| {
            js_sys::DataView::new(
                &array.buffer(),
                array.byte_offset() as usize,
                array.length() as usize,
            )
        });
        let mut at = start;
        let mut words = dst.chunks_exact_mut(4);
        for word in &mut words {
            word.copy_from_slice(&view.get_uint32(at).to_be_bytes());
            at += 4;
        }
        for byte in words.into_remainder() {
            *byte = view.get_uint8(at);
            at += 1;
        }
        self.pos += n as u64;
        n
    }
}

impl std::io::Read for JsBytes<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.jumped {
            self.jumped = false;
            return Ok(self.read_header(buf));
        }
        let left = self.len.saturating_sub(self.pos);
        let n = usize::try_from(left).map_or(buf.len(), |left| left.min(buf.len()));
        let (Ok(start), Some(dst)) = (u32::try_from(self.pos), buf.get_mut(..n)) else {
            return Ok(0);
        };
        if n == 0 {
            return Ok(0);
        }
        // `start + n <= len <= u32::MAX`, so the end fits; the view has exactly `n` bytes.
        let end = start.saturating_add(n as u32);
        self.array.subarray(start, end).copy_to(dst);
        self.pos += n as u64;
        Ok(n)
    }
}

impl std::io::Seek for JsBytes<'_> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            std::io::SeekFrom::Start(n) => Some(n),
            std::io::SeekFrom::End(d) => self.len.checked_add_signed(d),
            std::io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        match target {
            Some(n) => {
                // Past the end is allowed (as for files); reads there return 0 bytes.
                self.pos = n;
                self.jumped = self.header_reads;
                Ok(n)
            }
            None => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "seek before the start of the input",
            )),
        }
    }
}

/// Reads what a character list shows of a card from a `Uint8Array`, in place (a PNG's image
/// data stays in JavaScript); returns the summary as JSON text (issue 29), with the permanent
/// tokens counted in `tokens` (an encoding) when given.
#[wasm_bindgen]
pub fn read_card_summary(
    bytes: &js_sys::Uint8Array,
    tokens: Option<String>,
) -> Result<String, JsValue> {
    // The same reader type as read_card_parts' (no second copy of the generic readers in the
    // core), whose source reads each chunk header after a seek through a `DataView`.
    let mut src = JsBytes::new(bytes)?;
    src.header_reads = true;
    let source = std::io::BufReader::with_capacity(512, src);
    ccv3_embed::read_card_summary_seekable_json(source, tokens.as_deref()).map_err(to_js)
}

/// Reads a card from a `Uint8Array` without copying it whole (a PNG's image data stays in
/// JavaScript); returns `[card, entries, later, places]`: the V3 card as JSON text with its
/// book's `entries` empty; those entries as the UTF-8 bytes of a JSON array, or (`later`, for a
/// big book or a small one read as it stands) the card's JSON text to read them from when they are wanted; `undefined` for the
/// one not given (both without a book). With `later`, `places` is `undefined` when the entries
/// are all read by `card_entries`, or a `Uint32Array` `[start, end, ...reread]`: the entries
/// array stands at `later[start..end]` and is parsed as it is (each entry given `decorators: []`
/// at its end when decorators are split off), except the entries at the places `reread`, read
/// by `card_entries_at`. `later` is instead a string, and `places` `undefined`, when every entry
/// stands as the model keeps it: that text (the array as it
/// stands, each entry given `decorators: []` at its end when decorators are split off). The
/// wrapper builds the entries on first access.
#[wasm_bindgen]
pub fn read_card_parts(
    bytes: &js_sys::Uint8Array,
    parse_decorators: bool,
) -> Result<js_sys::Array, JsValue> {
    let source = std::io::BufReader::with_capacity(512, JsBytes::new(bytes)?);
    let parts =
        ccv3_embed::read_card_parts(source, &ReadOptions { parse_decorators }).map_err(to_js)?;
    let undefined = || JsValue::UNDEFINED;
    let (entries, later, places) = match &parts.entries {
        Some(ccv3_embed::PartEntries::Json(text)) => (
            js_sys::Uint8Array::from(text.as_bytes()).into(),
            undefined(),
            undefined(),
        ),
        Some(ccv3_embed::PartEntries::Later(text)) => (
            undefined(),
            js_sys::Uint8Array::from(text.as_slice()).into(),
            undefined(),
        ),
        // A book read wholly as it stands: only its entries' text, as a string decoded straight
        // from this memory (no copy of the card text kept for later; issue 29: for a big book
        // that decoding costs about what copying the bytes out did, and the wrapper's first
        // access then parses without decoding).
        Some(ccv3_embed::PartEntries::AsIs {
            text,
            range,
            reread,
        }) if reread.is_empty() => match text.get(range.clone()).map(std::str::from_utf8) {
            Some(Ok(entries)) => (undefined(), JsValue::from_str(entries), undefined()),
            _ => return Err(js_error("internal", "the entries are not in the card text")),
        },
        Some(ccv3_embed::PartEntries::AsIs {
            text,
            range,
            reread,
        }) => {
            // Card texts are read from at most 4 GiB inputs (wasm32): the places fit in u32.
            let places: Vec<u32> = [range.start, range.end]
                .iter()
                .chain(reread)
                .map(|&n| u32::try_from(n).unwrap_or(u32::MAX))
                .collect();
            (
                undefined(),
                js_sys::Uint8Array::from(text.as_slice()).into(),
                js_sys::Uint32Array::from(places.as_slice()).into(),
            )
        }
        None => (undefined(), undefined(), undefined()),
    };
    let out = js_sys::Array::of3(&JsValue::from_str(&parts.card), &entries, &later);
    out.push(&places);
    Ok(out)
}

/// Reads the entries of a card's book from the card's JSON text (`later` of
/// `read_card_parts`); returns them as JSON text.
#[wasm_bindgen]
pub fn card_entries(card_text: &[u8], parse_decorators: bool) -> Result<String, JsValue> {
    ccv3_embed::card_entries_json(card_text, &ReadOptions { parse_decorators }).map_err(to_js)
}

/// Reads the entries at the places `reread` (ascending) of a card's book, whose entries array
/// stands at `card_text[start..end]` (`later` and `places` of `read_card_parts`); returns those
/// entries as a JSON array text.
#[wasm_bindgen]
pub fn card_entries_at(
    card_text: &[u8],
    start: u32,
    end: u32,
    reread: &[u32],
    parse_decorators: bool,
) -> Result<String, JsValue> {
    let reread: Vec<usize> = reread.iter().map(|&n| n as usize).collect();
    ccv3_embed::card_entries_at_json(
        card_text,
        start as usize..end as usize,
        &reread,
        &ReadOptions { parse_decorators },
    )
    .map_err(to_js)
}

/// Reads a lorebook file's bytes; returns the lorebook as JSON text.
#[wasm_bindgen]
pub fn read_lorebook(bytes: &[u8], parse_decorators: bool) -> Result<String, JsValue> {
    ccv3_embed::read_lorebook_json(bytes, &ReadOptions { parse_decorators }).map_err(to_js)
}

/// Splits decorator lines off `content`; returns `{decorators, content}` as JSON text.
#[wasm_bindgen]
pub fn parse_decorators(content: &str) -> Result<String, JsValue> {
    json_text(&ccv3_embed::parse_decorators(content))
}

/// Writes decorators (a JSON array) back as `@@` lines before `content`.
#[wasm_bindgen]
pub fn serialize_decorators(decorators_json: &str, content: &str) -> Result<String, JsValue> {
    let decorators = parse(decorators_json, "decorators")?;
    ccv3_embed::serialize_decorators(&decorators, content).map_err(to_js)
}

/// Writes a card (JSON text) as `png`, `charx` or `json` bytes.
#[wasm_bindgen]
pub fn write_card(
    card_json: &str,
    format: &str,
    image: Option<Vec<u8>>,
) -> Result<Vec<u8>, JsValue> {
    let card = parse(card_json, "card")?;
    ccv3_embed::write_card(&card, format, image.as_deref()).map_err(to_js)
}

/// Writes a card (JSON text) as `format` with the files its assets point at: `paths_json` is a
/// JSON array of the files' paths, `blob` their bytes concatenated and `lens` each one's length.
#[wasm_bindgen]
pub fn write_card_with_files(
    card_json: &str,
    format: &str,
    image: Option<Vec<u8>>,
    paths_json: &str,
    blob: &[u8],
    lens: &[u32],
) -> Result<Vec<u8>, JsValue> {
    let card = parse(card_json, "card")?;
    let paths: Vec<String> = serde_json::from_str(paths_json)
        .map_err(|e| bad_input(format!("files: the paths are not a list of strings: {e}")))?;
    if paths.len() != lens.len() {
        return Err(bad_input("files: one length per path is needed"));
    }
    let mut files = Vec::with_capacity(paths.len());
    let mut at = 0usize;
    for (path, &len) in paths.into_iter().zip(lens) {
        let end = at.saturating_add(len as usize);
        let Some(data) = blob.get(at..end) else {
            return Err(bad_input("files: the lengths run past the bytes"));
        };
        files.push((path, data.to_vec()));
        at = end;
    }
    ccv3_embed::write_card_with_files(&card, format, image.as_deref(), files).map_err(to_js)
}

/// The files a card file carries besides the card (CHARX entries, PNG asset chunks): returns
/// `[paths, blob, lens]`, the paths as JSON text, the bytes concatenated and each one's length.
#[wasm_bindgen]
pub fn read_card_files(bytes: &[u8]) -> Result<js_sys::Array, JsValue> {
    let files = ccv3_embed::read_card_files(bytes).map_err(to_js)?;
    let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    let paths = serde_json::to_string(&paths)
        .map_err(|e| js_error("internal", &format!("cannot write JSON: {e}")))?;
    let total: usize = files.iter().map(|(_, d)| d.len()).sum();
    let mut blob = Vec::with_capacity(total);
    let mut lens = Vec::with_capacity(files.len());
    for (_, data) in &files {
        blob.extend_from_slice(data);
        lens.push(u32::try_from(data.len()).unwrap_or(u32::MAX));
    }
    Ok(js_sys::Array::of3(
        &JsValue::from_str(&paths),
        &js_sys::Uint8Array::from(blob.as_slice()).into(),
        &js_sys::Uint32Array::from(lens.as_slice()).into(),
    ))
}

/// Writes a lorebook (JSON text) as `lorebook_v3` (default) or `worldinfo` bytes.
#[wasm_bindgen]
pub fn write_lorebook(book_json: &str, format: Option<String>) -> Result<Vec<u8>, JsValue> {
    let book = parse(book_json, "lorebook")?;
    ccv3_embed::write_lorebook(&book, format.as_deref()).map_err(to_js)
}

fn validate(
    bytes: Option<Vec<u8>>,
    json: Option<String>,
    what: &str,
    f: fn(Source) -> Result<Value, EmbedError>,
) -> Result<String, JsValue> {
    let report = match (bytes, json) {
        (Some(bytes), _) => f(Source::Bytes(&bytes)),
        (None, Some(text)) => f(Source::Json(&parse(&text, what)?)),
        (None, None) => return Err(bad_input(format!("{what}: give file bytes or an object"))),
    };
    json_text(&report.map_err(to_js)?)
}

/// Validates a card given as file bytes or JSON text; returns the diagnostics as JSON text.
#[wasm_bindgen]
pub fn validate_card(bytes: Option<Vec<u8>>, json: Option<String>) -> Result<String, JsValue> {
    validate(bytes, json, "card", ccv3_embed::validate_card)
}

/// Validates a lorebook given as file bytes or JSON text; returns the diagnostics as JSON text.
#[wasm_bindgen]
pub fn validate_lorebook(bytes: Option<Vec<u8>>, json: Option<String>) -> Result<String, JsValue> {
    validate(bytes, json, "lorebook", ccv3_embed::validate_lorebook)
}

/// One analysis of a card or lorebook given as file bytes or JSON text, with options as JSON
/// text; returns its JSON text (issue 27).
fn analyze(
    bytes: Option<Vec<u8>>,
    json: Option<String>,
    options_json: &str,
    what: &str,
    f: fn(Source, &Value) -> Result<Value, EmbedError>,
) -> Result<String, JsValue> {
    let options = parse(options_json, "the options")?;
    let report = match (bytes, json) {
        (Some(bytes), _) => f(Source::Bytes(&bytes), &options),
        (None, Some(text)) => f(Source::Json(&parse(&text, what)?), &options),
        (None, None) => return Err(bad_input(format!("{what}: give file bytes or an object"))),
    };
    json_text(&report.map_err(to_js)?)
}

/// Lints a card; returns the findings of `ccv3 lint --json` as JSON text.
#[wasm_bindgen]
pub fn lint_card(
    bytes: Option<Vec<u8>>,
    json: Option<String>,
    options_json: &str,
) -> Result<String, JsValue> {
    analyze(bytes, json, options_json, "card", ccv3_embed::lint_card)
}

/// Lints a lorebook; returns the findings of `ccv3 lint --json` as JSON text.
#[wasm_bindgen]
pub fn lint_lorebook(
    bytes: Option<Vec<u8>>,
    json: Option<String>,
    options_json: &str,
) -> Result<String, JsValue> {
    analyze(
        bytes,
        json,
        options_json,
        "lorebook",
        ccv3_embed::lint_lorebook,
    )
}

/// The recursion graph of a lorebook or a card's book, as `ccv3 lore graph --json` (JSON text).
#[wasm_bindgen]
pub fn lore_graph(
    bytes: Option<Vec<u8>>,
    json: Option<String>,
    options_json: &str,
) -> Result<String, JsValue> {
    analyze(bytes, json, options_json, "input", ccv3_embed::lore_graph)
}

/// What each application does with a card or lorebook, as `ccv3 portability --json` (JSON text).
#[wasm_bindgen]
pub fn portability(
    bytes: Option<Vec<u8>>,
    json: Option<String>,
    options_json: &str,
) -> Result<String, JsValue> {
    analyze(bytes, json, options_json, "input", ccv3_embed::portability)
}

/// Runs one lorebook scan; returns `{activated, rejected, tokens, state}` as JSON text.
#[wasm_bindgen]
pub fn scan_lorebook(
    books_json: &str,
    blob: &[u8],
    lens: &[u32],
    request_json: &str,
) -> Result<String, JsValue> {
    let books = Books::parse(books_json)?;
    let sources = books.sources(blob, lens)?;
    let request = parse(request_json, "the request")?;
    ccv3_embed::scan_lorebook_json(&sources, &request).map_err(to_js)
}

/// SillyTavern's World Info settings as scan options (`sillyTavernScanOptions` in JavaScript).
#[wasm_bindgen]
pub fn sillytavern_scan_options(request_json: &str) -> Result<String, JsValue> {
    let request = parse(request_json, "the request")?;
    let out = ccv3_embed::sillytavern_scan_options(&request).map_err(to_js)?;
    Ok(out.to_string())
}

/// Lorebooks compiled once and scanned turn after turn (`compileLorebooks` in JavaScript).
#[wasm_bindgen]
pub struct CompiledBooks {
    inner: ccv3_embed::CompiledBooks,
}

/// Reads and compiles books with the options of `options_json` (as `scan_lorebook`'s, without
/// `chat`, `state` and `seed`).
#[wasm_bindgen]
pub fn compile_books(
    books_json: &str,
    blob: &[u8],
    lens: &[u32],
    options_json: &str,
) -> Result<CompiledBooks, JsValue> {
    let books = Books::parse(books_json)?;
    let sources = books.sources(blob, lens)?;
    let options = parse(options_json, "the options")?;
    let inner = ccv3_embed::CompiledBooks::new(&sources, &options).map_err(to_js)?;
    Ok(CompiledBooks { inner })
}

/// Scans compiled books with a request's `chat`, `state` and `seed`; JSON text as `scan_lorebook`.
#[wasm_bindgen]
pub fn scan_compiled(books: &mut CompiledBooks, request_json: &str) -> Result<String, JsValue> {
    let request = parse(request_json, "the request")?;
    books.inner.scan_json(&request).map_err(to_js)
}

/// Builds one prompt; `card_json` or `card_bytes` is the card. Returns
/// `{messages, tokens, lore, cut, state}` as JSON text.
#[wasm_bindgen]
pub fn build_prompt(
    card_json: Option<String>,
    card_bytes: Option<Vec<u8>>,
    books_json: &str,
    blob: &[u8],
    lens: &[u32],
    request_json: &str,
) -> Result<String, JsValue> {
    let card_value = match card_json {
        Some(text) => Some(parse(&text, "card")?),
        None => None,
    };
    let card = match (&card_value, &card_bytes) {
        (Some(value), _) => Source::Json(value),
        (None, Some(bytes)) => Source::Bytes(bytes),
        (None, None) => return Err(bad_input("card is required")),
    };
    let books = Books::parse(books_json)?;
    let sources = books.sources(blob, lens)?;
    let request = parse(request_json, "the request")?;
    ccv3_embed::build_prompt_json(card, &sources, &request).map_err(to_js)
}

/// Registers a tokenizer vocabulary file (the package's `vocab/*.vocab`) for `o200k` or `cl100k`.
#[wasm_bindgen]
pub fn register_vocabulary(encoding: &str, file: Vec<u8>) -> Result<(), JsValue> {
    let encoding = match encoding {
        "o200k" | "o200k_base" => ccv3_tokens::Encoding::O200k,
        "cl100k" | "cl100k_base" => ccv3_tokens::Encoding::Cl100k,
        other => {
            return Err(bad_input(format!(
                "unknown encoding {other:?} (o200k or cl100k)"
            )))
        }
    };
    ccv3_tokens::register_vocabulary(encoding, file)
        .map_err(|e| js_error("tokenizer-unavailable", &e.to_string()))
}

/// Expands CBS macros in `text` with a context given as JSON text.
#[wasm_bindgen]
pub fn expand_macros(text: &str, context_json: &str) -> Result<String, JsValue> {
    let context = parse(context_json, "context")?;
    ccv3_embed::expand_macros(text, &context).map_err(to_js)
}

/// Counts the tokens of `text` (`o200k` by default, or `cl100k`).
#[wasm_bindgen]
pub fn count_tokens(text: &str, encoding: Option<String>) -> Result<f64, JsValue> {
    let n = ccv3_embed::count_tokens(text, encoding.as_deref()).map_err(to_js)?;
    // Token counts are far below 2^53, so f64 holds them exactly.
    Ok(n as f64)
}
