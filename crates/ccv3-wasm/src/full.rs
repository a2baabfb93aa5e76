//! The exports the full core adds to the read core (issue 29): plain `read_card`, lorebooks,
//! decorators, writing, validation, analysis, scans, prompts, macros and tokens. The npm
//! package's Node entry compiles the read core (built with the feature `read-core`, which leaves
//! this module out) at `require`, and this full core on the first call that needs it.

use crate::errors::{js_error, to_js};
use ccv3_embed::{EmbedError, ReadOptions, Source};
use serde_json::Value;
use wasm_bindgen::prelude::*;

/// A `bad-input` error with `message`.
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

/// Lints a card; returns the findings of `ccv3 lint --json` as JSON text. A card object's JSON
/// text goes to [`ccv3_embed::lint_card_json`] (read straight into the card model, the findings
/// written straight to text).
#[wasm_bindgen]
pub fn lint_card(
    bytes: Option<Vec<u8>>,
    json: Option<String>,
    options_json: &str,
) -> Result<String, JsValue> {
    match (bytes, json) {
        (None, Some(text)) => {
            let options = parse(options_json, "the options")?;
            ccv3_embed::lint_card_json(&text, &options).map_err(to_js)
        }
        (bytes, json) => analyze(bytes, json, options_json, "card", ccv3_embed::lint_card),
    }
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
