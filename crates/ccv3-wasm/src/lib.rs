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
//! Two modules are built from this crate (`scripts/build-bindings`): the full core, and with the
//! feature `read-core` the read core, which leaves out every export of the `full` module (and the
//! token counts of [`read_card_summary`]): the package's Node entry compiles the read core at
//! `require`, so that a program that starts and reads a card compiles a third of the code (issue
//! 29), and the full core on the first call that needs more.
//!
//! The module is built with `panic = "immediate-abort"` (no panic machinery, for size), so nothing
//! here may panic: every input error is a returned `Error`. If the instance ever traps anyway,
//! the JavaScript wrapper reports code `internal` and restarts it.
#![deny(missing_docs)]

use ccv3_embed::ReadOptions;
use errors::{js_error, to_js};
use wasm_bindgen::prelude::*;

mod errors;
#[cfg(not(feature = "read-core"))]
mod full;
#[cfg(not(feature = "read-core"))]
pub use full::*;

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
#[cfg(not(feature = "read-core"))]
#[wasm_bindgen]
pub fn read_card_summary(
    bytes: &js_sys::Uint8Array,
    tokens: Option<String>,
) -> Result<String, JsValue> {
    let source = summary_source(bytes)?;
    ccv3_embed::read_card_summary_seekable_json(source, tokens.as_deref()).map_err(to_js)
}

/// Reads what a character list shows of a card from a `Uint8Array`, in place, without token
/// counts (the read core has no tokenizer: the package asks the full core when `tokens` is given).
#[cfg(feature = "read-core")]
#[wasm_bindgen]
pub fn read_card_summary(bytes: &js_sys::Uint8Array) -> Result<String, JsValue> {
    let source = summary_source(bytes)?;
    ccv3_embed::read_card_summary_seekable_json(source, None).map_err(to_js)
}

/// The summary's source: the same reader type as read_card_parts' (no second copy of the
/// generic readers in the core), whose source reads each chunk header after a seek through a
/// `DataView`.
fn summary_source(bytes: &js_sys::Uint8Array) -> Result<std::io::BufReader<JsBytes<'_>>, JsValue> {
    let mut src = JsBytes::new(bytes)?;
    src.header_reads = true;
    Ok(std::io::BufReader::with_capacity(512, src))
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
/// stands, each entry given `decorators: []` at its end when decorators are split off), made by
/// `latin1` (given a `Uint8Array`, returns its bytes read as Latin-1) when the text is ASCII and
/// `latin1` is given, else decoded as UTF-8. The wrapper builds the entries on first access.
///
/// Only the read core takes `latin1` (Node's entry serves readCard from it; the browser entry,
/// which has the full core alone, decodes UTF-8): the full core stays within its size limit.
#[cfg(feature = "read-core")]
#[wasm_bindgen]
pub fn read_card_parts(
    bytes: &js_sys::Uint8Array,
    parse_decorators: bool,
    latin1: Option<js_sys::Function>,
) -> Result<js_sys::Array, JsValue> {
    card_parts(bytes, parse_decorators, latin1.as_ref())
}

/// Reads a card from a `Uint8Array` in two parts, as the read core's `read_card_parts` does,
/// the entries' text always decoded as UTF-8.
#[cfg(not(feature = "read-core"))]
#[wasm_bindgen]
pub fn read_card_parts(
    bytes: &js_sys::Uint8Array,
    parse_decorators: bool,
) -> Result<js_sys::Array, JsValue> {
    card_parts(bytes, parse_decorators, None)
}

/// `read_card_parts` with the Latin-1 decoder `latin1`, when one is given.
fn card_parts(
    bytes: &js_sys::Uint8Array,
    parse_decorators: bool,
    latin1: Option<&js_sys::Function>,
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
            ascii,
        }) if reread.is_empty() => match text.get(range.clone()) {
            Some(entries) => (
                undefined(),
                js_string(entries, *ascii, latin1)?,
                undefined(),
            ),
            None => return Err(js_error("internal", "the entries are not in the card text")),
        },
        Some(ccv3_embed::PartEntries::AsIs {
            text,
            range,
            reread,
            ..
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

/// The UTF-8 `text` as a JavaScript string: made by `latin1` from a view of this memory when
/// the text is ASCII (Latin-1 reads ASCII as UTF-8 does, and Node decodes it faster: issue 29),
/// else checked and decoded as UTF-8 (`PartEntries::AsIs` holds the card text as bytes).
fn js_string(
    text: &[u8],
    ascii: bool,
    latin1: Option<&js_sys::Function>,
) -> Result<JsValue, JsValue> {
    if let (Some(latin1), true) = (latin1, ascii) {
        // SAFETY: the view is read by `latin1` alone, synchronously, and dropped here; nothing
        // runs in this module meanwhile, so its memory neither changes nor grows (which would
        // detach the view's buffer) while the view is in use.
        #[allow(unsafe_code)]
        let view = unsafe { js_sys::Uint8Array::view(text) };
        return latin1.call1(&JsValue::UNDEFINED, &view);
    }
    match std::str::from_utf8(text) {
        Ok(text) => Ok(JsValue::from_str(text)),
        Err(_) => Err(js_error("internal", "the entries are not UTF-8")),
    }
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
