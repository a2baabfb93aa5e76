//! Cards and lorebooks: read, write, validate.

use crate::error::EmbedError;
use crate::opts::type_name;
use crate::source::Source;
use ccv3::decorator::{self, Decorator};
use ccv3::{CardFile, CardVersion, Container, Diagnostic, Document, Entry, Lorebook};
use serde::Deserialize;
use serde_json::Value;

/// How [`read_card`] and [`read_lorebook`] present the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Give each lorebook entry a `decorators` list ([`ccv3::decorator::parse_list`]) and its
    /// `content` without the decorator lines (default `true`). With `false` the content is raw
    /// and entries have no `decorators` field.
    pub parse_decorators: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            parse_decorators: true,
        }
    }
}

/// The name of the field that holds an entry's decorators in list form.
const DECORATORS: &str = "decorators";

/// How this crate reads files: `ccv3`'s defaults, and with this crate's `parallel` feature
/// (the Python package) a big lorebook's entries converted on a second thread too
/// ([`ccv3::ReadOptions::entry_thread`]).
pub(crate) fn library_options() -> ccv3::ReadOptions {
    ccv3::ReadOptions::default().entry_thread(cfg!(feature = "parallel"))
}

/// Reads any card or lorebook file.
pub(crate) fn read_document(bytes: &[u8]) -> Result<Document, EmbedError> {
    ccv3::read_bytes_with(bytes, &library_options()).map_err(|e| EmbedError::from_read(&e))
}

/// Reads a card file.
fn read_card_file(bytes: &[u8]) -> Result<CardFile, EmbedError> {
    card_of(read_document(bytes)?)
}

/// The card of a document.
pub(crate) fn card_of(doc: Document) -> Result<CardFile, EmbedError> {
    match doc {
        Document::Card(cf) => Ok(cf),
        Document::Lorebook(_) => Err(EmbedError::read_failed(
            "the file is a lorebook, not a character card",
        )),
    }
}

/// Moves the decorator lines of each entry into a `decorators` list in its extra fields.
pub(crate) fn split_decorators(entries: &mut [Entry]) {
    for e in entries {
        let (list, body) = decorator::parse_list(&e.content);
        let list = serde_json::to_value(&list).unwrap_or_else(|_| Value::Array(Vec::new()));
        if body.len() != e.content.len() {
            e.content = body.to_string();
        }
        e.extra.insert(DECORATORS.to_string(), list);
    }
}

/// The V3 JSON text of a card read from bytes (compact).
///
/// The same value as [`read_card`], as JSON text: the bindings hand it to their JSON parser,
/// which is faster than building the object from Rust.
///
/// # Errors
/// `read-failed` when the bytes are not a card (a lorebook included); `limit` when a size
/// limit is hit.
///
/// ```
/// let v1 = br#"{"name": "Ember", "description": "A fire spirit.", "first_mes": "Hi."}"#;
/// let text = ccv3_embed::read_card_json(v1, &ccv3_embed::ReadOptions::default())?;
/// assert!(text.starts_with(r#"{"spec":"chara_card_v3""#));
/// assert!(ccv3_embed::read_card_json(b"not a card", &ccv3_embed::ReadOptions::default()).is_err());
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn read_card_json(bytes: &[u8], options: &ReadOptions) -> Result<String, EmbedError> {
    let card = read_card_model(bytes, options)?;
    card_json(&card, bytes.len().min(1 << 26) / 2 + 1024)
}

/// [`read_card_json`] of the file at `path`, read with [`ccv3::read_file`]: a PNG's image data
/// is skipped, never read. For native callers (the Python package); WebAssembly has no files.
///
/// # Errors
/// As [`read_card_json`]; `read-failed` naming the path when the file cannot be read.
///
/// ```
/// let path = std::env::temp_dir().join("ccv3-embed-doc-read-card-path-json.json");
/// std::fs::write(&path, r#"{"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Ember"}}"#).unwrap();
/// let text = ccv3_embed::read_card_path_json(&path, &ccv3_embed::ReadOptions::default())?;
/// assert!(text.contains(r#""name":"Ember""#));
/// let missing = ccv3_embed::read_card_path_json(&path.with_extension("gone"), &Default::default());
/// assert!(missing.unwrap_err().message.contains("read-card-path-json.gone"));
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn read_card_path_json(
    path: &std::path::Path,
    options: &ReadOptions,
) -> Result<String, EmbedError> {
    card_json(&read_card_path_model(path, options)?, 0)
}

/// The card of the file at `path` as the model, its entries' decorators split off when asked
/// (the card [`read_card_path_json`] writes). For native callers that build their own objects
/// from it with [`ccv3::Card::serialize_v3`] (the Python package).
///
/// # Errors
/// As [`read_card_path_json`].
///
/// ```
/// let path = std::env::temp_dir().join("ccv3-embed-doc-read-card-path-model.json");
/// std::fs::write(&path, r#"{"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Ember"}}"#).unwrap();
/// let card = ccv3_embed::read_card_path_model(&path, &ccv3_embed::ReadOptions::default())?;
/// assert_eq!(card.data.name, "Ember");
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn read_card_path_model(
    path: &std::path::Path,
    options: &ReadOptions,
) -> Result<ccv3::Card, EmbedError> {
    card_path_model(path, options, &library_options())
}

/// [`read_card_path_model`] on the calling thread alone: a big book's entries are not
/// converted on a second thread. For callers that read many files on threads of their own
/// (the Python package's `read_cards`), where the cores are busy already.
///
/// # Errors
/// As [`read_card_path_json`].
///
/// ```
/// let path = std::env::temp_dir().join("ccv3-embed-doc-read-card-path-model-on-this-thread.json");
/// std::fs::write(&path, r#"{"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Ember"}}"#).unwrap();
/// let card = ccv3_embed::read_card_path_model_on_this_thread(&path, &ccv3_embed::ReadOptions::default())?;
/// assert_eq!(card.data.name, "Ember");
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn read_card_path_model_on_this_thread(
    path: &std::path::Path,
    options: &ReadOptions,
) -> Result<ccv3::Card, EmbedError> {
    card_path_model(path, options, &ccv3::ReadOptions::default())
}

/// The card of a file read with `read`, its decorators split off when asked.
fn card_path_model(
    path: &std::path::Path,
    options: &ReadOptions,
    read: &ccv3::ReadOptions,
) -> Result<ccv3::Card, EmbedError> {
    let doc = ccv3::read_file_with(path, read).map_err(|e| {
        let e = EmbedError::from_read(&e);
        EmbedError::new(e.code, format!("{}: {}", path.display(), e.message))
    })?;
    let mut card = card_of(doc)?.card;
    if options.parse_decorators {
        if let Some(book) = card.data.character_book.as_mut() {
            split_decorators(&mut book.entries);
        }
    }
    Ok(card)
}

/// What a character list shows of a card ([`ccv3::CardSummary`]: name, nickname, creator, tags,
/// spec, container, counts of greetings, lorebook entries and assets) as compact JSON text, read
/// from a file's bytes without building the card ([`ccv3::read_summary_bytes`]; issue 29). With
/// `tokens` (an encoding as [`crate::count_tokens`] names it: `o200k`, `cl100k` or `estimate`),
/// also `permanent_tokens`: the tokens of the permanent fields ([`ccv3::PERMANENT_FIELDS`]).
///
/// # Errors
/// As [`read_card_json`]; as [`crate::count_tokens`] for the encoding.
///
/// ```
/// let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Ember","tags":["fire"],
///   "first_mes":"Hi","character_book":{"entries":[{"keys":["a"],"content":"x","enabled":true,"insertion_order":0}]}}}"#;
/// let summary: serde_json::Value = serde_json::from_str(&ccv3_embed::read_card_summary_json(text, None)?).unwrap();
/// assert_eq!(summary["name"], "Ember");
/// assert_eq!(summary["entries"], 1);
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn read_card_summary_json(bytes: &[u8], tokens: Option<&str>) -> Result<String, EmbedError> {
    let opts = library_options();
    let summary = with_counter(tokens, |count| {
        ccv3::read_summary_bytes(bytes, &opts, count)
    })?
    .map_err(|e| EmbedError::from_read(&e))?;
    summary_json(&summary)
}

/// [`read_card_summary_json`] of a random-access source ([`ccv3::read_summary_seekable`]: a
/// PNG's image data is seeked past, never copied; the npm package reads a `Uint8Array` in place).
///
/// # Errors
/// As [`read_card_summary_json`].
///
/// ```
/// let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Ember"}}"#;
/// let json = ccv3_embed::read_card_summary_seekable_json(std::io::Cursor::new(&text[..]), Some("estimate"))?;
/// assert!(json.contains(r#""name":"Ember""#) && json.contains("permanent_tokens"));
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn read_card_summary_seekable_json<R: std::io::Read + std::io::Seek>(
    source: R,
    tokens: Option<&str>,
) -> Result<String, EmbedError> {
    let opts = library_options();
    let summary = with_counter(tokens, |count| {
        ccv3::read_summary_seekable(source, &opts, count)
    })?
    .map_err(|e| EmbedError::from_read(&e))?;
    summary_json(&summary)
}

/// [`read_card_summary_json`] of the file at `path` ([`ccv3::read_summary_file`]: a PNG's image
/// data is skipped, a CHARX streamed). For native callers (the Python package).
///
/// # Errors
/// As [`read_card_summary_json`]; `read-failed` naming the path when the file cannot be read.
///
/// ```
/// let path = std::env::temp_dir().join("ccv3-embed-doc-read-card-summary-path-json.json");
/// std::fs::write(&path, r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Ember"}}"#).unwrap();
/// let json = ccv3_embed::read_card_summary_path_json(&path, None)?;
/// assert!(json.contains(r#""name":"Ember""#));
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn read_card_summary_path_json(
    path: &std::path::Path,
    tokens: Option<&str>,
) -> Result<String, EmbedError> {
    let opts = library_options();
    let summary = with_counter(tokens, |count| ccv3::read_summary_file(path, &opts, count))?
        .map_err(|e| {
            let e = EmbedError::from_read(&e);
            EmbedError::new(e.code, format!("{}: {}", path.display(), e.message))
        })?;
    summary_json(&summary)
}

/// Runs a summary reader with the token counter of the encoding `tokens` when one is given;
/// the error is the encoding's (`bad-input` for an unknown one), the result the reader's.
fn with_counter(
    tokens: Option<&str>,
    read: impl FnOnce(Option<&dyn Fn(&str) -> usize>) -> ccv3::Result<ccv3::CardSummary>,
) -> Result<ccv3::Result<ccv3::CardSummary>, EmbedError> {
    let Some(encoding) = tokens else {
        return Ok(read(None));
    };
    let tok = crate::encoding::tokenizer(Some(encoding))?;
    Ok(read(Some(&|t| tok.count(t))))
}

/// A summary as compact JSON text.
fn summary_json(summary: &ccv3::CardSummary) -> Result<String, EmbedError> {
    serde_json::to_string(summary).map_err(|e| EmbedError::write_failed(e.to_string()))
}

/// A card as compact V3 JSON text.
pub(crate) fn card_json(card: &ccv3::Card, size_hint: usize) -> Result<String, EmbedError> {
    let mut out = Vec::with_capacity(size_hint);
    card.write_v3_json(&mut out, false)
        .map_err(|e| EmbedError::write_failed(e.to_string()))?;
    String::from_utf8(out).map_err(|e| EmbedError::write_failed(e.to_string()))
}

/// Reads a card from a file's bytes (V1/V2/V3 JSON, PNG/APNG, CHARX, WebP, JPEG) as the V3
/// object `{spec, spec_version, data}`; V1 and V2 cards are upgraded.
///
/// # Errors
/// As [`read_card_json`].
///
/// ```
/// // A V2 card in, the V3 object out, its entries' decorators split off (the default).
/// let v2 = br#"{"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "Ember",
///     "character_book": {"entries": [{"keys": ["fire"], "content": "@@depth 2\nEmber is warm.",
///         "enabled": true, "insertion_order": 0}]}}}"#;
/// let card = ccv3_embed::read_card(v2, &ccv3_embed::ReadOptions::default())?;
/// assert_eq!(card["spec"], "chara_card_v3");
/// let entry = &card["data"]["character_book"]["entries"][0];
/// assert_eq!((entry["content"].as_str(), entry["decorators"][0]["type"].as_str()), (Some("Ember is warm."), Some("depth")));
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn read_card(bytes: &[u8], options: &ReadOptions) -> Result<Value, EmbedError> {
    Ok(read_card_model(bytes, options)?.to_v3_json())
}

/// The card of a file's bytes as the model, its entries' decorators split off when asked (the
/// card [`read_card_json`] writes). For native callers that build their own objects from it
/// with [`ccv3::Card::serialize_v3`] (the Python package).
///
/// # Errors
/// As [`read_card_json`].
///
/// ```
/// let text = br#"{"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Ember", "tags": ["fire"]}}"#;
/// let card = ccv3_embed::read_card_model(text, &ccv3_embed::ReadOptions::default())?;
/// assert_eq!(card.data.name, "Ember");
/// assert_eq!(card.data.tags, ["fire"]);
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn read_card_model(bytes: &[u8], options: &ReadOptions) -> Result<ccv3::Card, EmbedError> {
    let mut card = read_card_file(bytes)?.card;
    if options.parse_decorators {
        if let Some(book) = card.data.character_book.as_mut() {
            split_decorators(&mut book.entries);
        }
    }
    Ok(card)
}

/// The book of a file for the engine, and the card's name when the file is a card.
pub(crate) fn read_book_source(bytes: &[u8]) -> Result<(Lorebook, Option<String>), EmbedError> {
    read_book_and_card(bytes).map(|(book, card)| (book, card.map(|c| c.char_name().to_string())))
}

/// A lorebook from a file's bytes, and the card it came from (without its book) when the bytes
/// are a card's.
pub(crate) fn read_book_and_card(
    bytes: &[u8],
) -> Result<(Lorebook, Option<ccv3::CardData>), EmbedError> {
    read_book_card_world_info(bytes).map(|(book, card, _)| (book, card))
}

/// [`read_book_and_card`], and whether the bytes were a SillyTavern World Info file
/// (`ccv3_lore::BookInput::world_info`).
pub(crate) fn read_book_card_world_info(
    bytes: &[u8],
) -> Result<(Lorebook, Option<ccv3::CardData>, bool), EmbedError> {
    match read_document(bytes)? {
        Document::Lorebook(bf) => Ok((
            bf.book,
            None,
            bf.format == ccv3::lorebook::BookFormat::WorldInfo,
        )),
        Document::Card(cf) => {
            let mut card = cf.card.data;
            let book = card
                .character_book
                .take()
                .ok_or_else(|| EmbedError::read_failed("the card has no character_book"))?;
            Ok((book, Some(card), false))
        }
    }
}

/// The card data of a card file.
pub(crate) fn read_card_data(bytes: &[u8]) -> Result<ccv3::CardData, EmbedError> {
    Ok(read_card_file(bytes)?.card.data)
}

/// The JSON text of [`read_lorebook`] (compact).
///
/// # Errors
/// `read-failed` when the bytes are neither a lorebook nor a card with a character book;
/// `limit` when a size limit is hit.
///
/// ```
/// let v3 = br#"{"spec": "lorebook_v3", "data": {"entries": [{"keys": ["tea"],
///     "content": "@@depth 2\nTea is strong.", "enabled": true, "insertion_order": 0}]}}"#;
/// let mut opts = ccv3_embed::ReadOptions::default();
/// opts.parse_decorators = true;
/// let text = ccv3_embed::read_lorebook_json(v3, &opts)?;
/// let book: serde_json::Value = serde_json::from_str(&text).unwrap();
/// assert_eq!(book["entries"][0]["content"], "Tea is strong.");
/// assert_eq!(book["entries"][0]["decorators"][0]["type"], "depth");
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn read_lorebook_json(bytes: &[u8], options: &ReadOptions) -> Result<String, EmbedError> {
    let mut book = read_book_source(bytes)?.0;
    if options.parse_decorators {
        split_decorators(&mut book.entries);
    }
    serde_json::to_string(&book.to_json()).map_err(|e| EmbedError::write_failed(e.to_string()))
}

/// Reads a lorebook from a file's bytes as the Lorebook object (the structure of a card's
/// `data.character_book`), whatever format the file has (`lorebook_v3`, a bare book,
/// SillyTavern World Info, NovelAI, Agnai, RisuAI). A card's bytes give its character book.
///
/// # Errors
/// As [`read_lorebook_json`].
///
/// ```
/// // SillyTavern World Info in, the Lorebook object (a card's `character_book`) out.
/// let wi = br#"{"entries": {"0": {"uid": 0, "key": ["tea"], "keysecondary": [], "content": "Tea is strong.",
///     "order": 100, "disable": false}}}"#;
/// let book = ccv3_embed::read_lorebook(wi, &ccv3_embed::ReadOptions::default())?;
/// assert_eq!(book["entries"][0]["keys"][0], "tea");
/// assert_eq!(book["entries"][0]["insertion_order"], 100);
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn read_lorebook(bytes: &[u8], options: &ReadOptions) -> Result<Value, EmbedError> {
    let mut book = read_book_source(bytes)?.0;
    if options.parse_decorators {
        split_decorators(&mut book.entries);
    }
    Ok(book.to_json())
}

/// Writes the `decorators` list of each entry of `entries` (a JSON array) back into its
/// `content` as `@@` lines, and removes the list. `path` names the array in errors.
fn join_decorators(entries: &mut Value, path: &str) -> Result<(), EmbedError> {
    let Value::Array(items) = entries else {
        return Ok(());
    };
    for (i, item) in items.iter_mut().enumerate() {
        let Value::Object(obj) = item else { continue };
        let Some(list) = obj.shift_remove(DECORATORS) else {
            continue;
        };
        if list.is_null() {
            continue;
        }
        let list = Vec::<Decorator>::deserialize(&list)
            .map_err(|e| EmbedError::bad_input(format!("{path}[{i}].decorators: {e}")))?;
        let content = match obj.get("content") {
            None | Some(Value::Null) => "",
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                return Err(EmbedError::bad_input(format!(
                    "{path}[{i}].content must be a string, found {}",
                    type_name(other)
                )))
            }
        };
        let text = decorator::serialize(&list, content);
        obj.insert("content".to_string(), Value::String(text));
    }
    Ok(())
}

/// A card model from a caller's JSON value (V3 as [`read_card`] returns it, or V1/V2), with
/// the reader's repairs.
pub(crate) fn card_from_value(v: &Value) -> Result<(ccv3::Card, Vec<Diagnostic>), EmbedError> {
    if !v.is_object() {
        return Err(EmbedError::bad_input(format!(
            "a card must be an object, found {}",
            type_name(v)
        )));
    }
    card_from_owned_value(v.clone())
}

/// [`card_from_value`] of a value the caller no longer needs (no copy of it is made).
fn card_from_owned_value(mut v: Value) -> Result<(ccv3::Card, Vec<Diagnostic>), EmbedError> {
    if !v.is_object() {
        return Err(EmbedError::bad_input(format!(
            "a card must be an object, found {}",
            type_name(&v)
        )));
    }
    if let Some(entries) = v.pointer_mut("/data/character_book/entries") {
        join_decorators(entries, "data.character_book.entries")?;
    }
    let mut diags = Vec::new();
    let card = ccv3::Card::from_json(v, &mut diags).map_err(|e| EmbedError::from_value(&e))?;
    Ok((card, diags))
}

/// [`card_from_value`] of the JSON text of a card object: the same card and diagnostics (the
/// key order of an entry whose `decorators` list was joined aside, which analysis never reads).
///
/// A well-formed V2 or V3 card (one the reader repairs nothing in, as [`read_card`] writes them)
/// is read straight from the text into the model ([`ccv3::Card::from_json_text`]: no `Value`
/// tree, no copy of one), and its entries' `decorators` lists are joined there. Any other text
/// (a repair, a V1 card, a `data` object without its wrapper, an error) is read through the
/// `Value`, so that it gets exactly [`card_from_value`]'s repairs and errors.
pub(crate) fn card_from_text(text: &str) -> Result<(ccv3::Card, Vec<Diagnostic>), EmbedError> {
    if let Some(read) = well_formed_card_from_text(text) {
        return read;
    }
    let v: Value = serde_json::from_str(text)
        .map_err(|e| EmbedError::bad_input(format!("the card is not valid JSON: {e}")))?;
    card_from_owned_value(v)
}

/// The fast path of [`card_from_text`]; `None` for text it must leave to the `Value` path.
fn well_formed_card_from_text(
    text: &str,
) -> Option<Result<(ccv3::Card, Vec<Diagnostic>), EmbedError>> {
    // `serde_json` refuses a byte order mark that the text reader skips with a diagnostic.
    if text.starts_with('\u{feff}') {
        return None;
    }
    let mut diags = Vec::new();
    let mut card = ccv3::Card::from_json_text(text.as_bytes(), &mut diags).ok()?;
    // No repair at all: every entry item was an object with a string `content` (so entry `i`
    // is item `i` of `data.character_book.entries`), and no lone surrogate was replaced.
    // A wrapped V2/V3 card: `data.character_book` is the card's book.
    let wrapped = matches!(
        card.origin,
        Some(ccv3::SpecVersion::V2 | ccv3::SpecVersion::V3)
    );
    if !diags.is_empty() || !wrapped {
        return None;
    }
    if let Some(book) = card.data.character_book.as_mut() {
        if let Err(e) = join_entry_decorators(&mut book.entries, "data.character_book.entries") {
            return Some(Err(e));
        }
    }
    Some(Ok((card, diags)))
}

/// [`join_decorators`] on model entries read from well-formed JSON (each entry's `content` a
/// string): the `decorators` list of each entry written back into its `content` as `@@` lines,
/// and removed. `path` names the entries in errors.
fn join_entry_decorators(entries: &mut [Entry], path: &str) -> Result<(), EmbedError> {
    for (i, e) in entries.iter_mut().enumerate() {
        let Some(list) = e.extra.shift_remove(DECORATORS) else {
            continue;
        };
        if list.is_null() {
            continue;
        }
        let list = Vec::<Decorator>::deserialize(&list)
            .map_err(|err| EmbedError::bad_input(format!("{path}[{i}].decorators: {err}")))?;
        e.content = decorator::serialize(&list, &e.content);
    }
    Ok(())
}

/// A lorebook model from a caller's JSON value (a Lorebook object as [`read_lorebook`] returns
/// it, a `lorebook_v3` file object, or any lorebook format), with the reader's repairs.
pub(crate) fn book_from_value(v: &Value) -> Result<(Lorebook, Vec<Diagnostic>), EmbedError> {
    book_file_from_value(v).map(|bf| (bf.book, bf.diagnostics))
}

/// As [`book_from_value`], keeping the format the value was in.
pub(crate) fn book_file_from_value(v: &Value) -> Result<ccv3::BookFile, EmbedError> {
    if !v.is_object() {
        return Err(EmbedError::bad_input(format!(
            "a lorebook must be an object, found {}",
            type_name(v)
        )));
    }
    let mut v = v.clone();
    let wrapped = v.get("spec").and_then(Value::as_str) == Some("lorebook_v3");
    let entries = if wrapped {
        v.pointer_mut("/data/entries")
    } else {
        v.pointer_mut("/entries")
    };
    if let Some(entries) = entries {
        join_decorators(entries, if wrapped { "data.entries" } else { "entries" })?;
    }
    let mut diagnostics = Vec::new();
    let (book, format) = ccv3::lorebook::read_lorebook_value(v, &mut diagnostics)
        .map_err(|e| EmbedError::from_value(&e))?;
    Ok(ccv3::BookFile {
        book,
        format,
        diagnostics,
    })
}

/// Writes a card (an object as [`read_card`] returns it, or V1/V2 JSON) as `format`: `png`,
/// `charx`, `json` (V3) or `json-v2` (the spec's V2 backfill, as `ccv3 convert --to v2`).
///
/// Decorator lists are written back to `@@` lines. PNG carries the `ccv3` chunk plus the spec's
/// V2 `chara` backfill; its picture is `image` (PNG bytes), else the card's main icon when the
/// card carries it, else a plain placeholder. JSON is pretty-printed.
///
/// # Errors
/// `bad-input` for a value that is not a card, an unknown format, or an `image` that is not a
/// PNG; `write-failed` when the container cannot be written.
///
/// ```
/// let card = serde_json::json!({"spec": "chara_card_v3", "spec_version": "3.0",
///     "data": {"name": "Ember"}});
/// let png = ccv3_embed::write_card(&card, "png", None)?;
/// assert!(png.starts_with(b"\x89PNG"));
/// let v2 = ccv3_embed::write_card(&card, "json-v2", None)?;
/// assert!(String::from_utf8(v2).unwrap().contains("chara_card_v2"));
/// assert!(ccv3_embed::write_card(&card, "gif", None).is_err());
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn write_card(card: &Value, format: &str, image: Option<&[u8]>) -> Result<Vec<u8>, EmbedError> {
    write_card_with_files(card, format, image, Vec::new())
}

/// [`write_card`] with the files the card's assets point at (`embeded://PATH` and
/// `__asset:PATH` URIs), as [`read_card_files`] returns them: PNG and CHARX carry them, so a
/// card read from a CHARX or a PNG with asset chunks keeps its assets when written again. For
/// `charx`, `image` (PNG bytes) is the portrait of a card whose icon is `ccdefault:`.
///
/// # Errors
/// As [`write_card`].
///
/// ```
/// // A CHARX with one asset: read the card and its files, write it again with them.
/// let card = serde_json::json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Ember",
///     "assets": [{"type": "icon", "uri": "data:image/png;base64,AQID", "name": "main", "ext": "png"}]}});
/// let charx = ccv3_embed::write_card(&card, "charx", None)?;
/// let read = ccv3_embed::read_card(&charx, &ccv3_embed::ReadOptions::default())?;
/// let files = ccv3_embed::read_card_files(&charx)?;
/// assert_eq!(files[0].1, [1, 2, 3]);
/// let again = ccv3_embed::write_card_with_files(&read, "charx", None, files)?;
/// assert_eq!(ccv3_embed::read_card_files(&again)?[0].1, [1, 2, 3]);
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn write_card_with_files(
    card: &Value,
    format: &str,
    image: Option<&[u8]>,
    files: Vec<(String, Vec<u8>)>,
) -> Result<Vec<u8>, EmbedError> {
    let format = format.trim().to_ascii_lowercase();
    if !matches!(
        format.as_str(),
        "png" | "apng" | "charx" | "json" | "json-v2"
    ) {
        return Err(EmbedError::bad_input(format!(
            "unknown card format {format:?}: use png, charx, json or json-v2"
        )));
    }
    if let Some(img) = image {
        if !matches!(format.as_str(), "png" | "apng" | "charx") {
            return Err(EmbedError::bad_input(format!(
                "an image is only used for png and charx, not {format}"
            )));
        }
        if !ccv3::png::is_png(img) {
            return Err(EmbedError::bad_input(
                "image must be the bytes of a PNG file",
            ));
        }
    }
    let (card, diagnostics) = card_from_value(card)?;
    let files: Vec<ccv3::EmbeddedFile> = files
        .into_iter()
        .map(|(path, data)| ccv3::EmbeddedFile { path, data })
        .collect();
    // A CHARX written with files keeps those no asset points at (RisuAI's module.risum,
    // x_meta/...), as a CHARX read and written again does; its picture is `image`.
    let charx = format == "charx";
    let cf = CardFile {
        card,
        container: if charx && !files.is_empty() {
            Container::Charx
        } else {
            Container::Json
        },
        files,
        image: if charx {
            image.map(<[u8]>::to_vec)
        } else {
            None
        },
        diagnostics,
    };
    match format.as_str() {
        "json" => Ok(ccv3::write_json(&cf, CardVersion::V3)),
        "json-v2" => Ok(ccv3::write_json(&cf, CardVersion::V2)),
        "charx" => ccv3::write_charx(&cf).map_err(|e| EmbedError::write_failed(e.to_string())),
        _ => ccv3::write_png(&cf, image, CardVersion::V3)
            .map_err(|e| EmbedError::write_failed(e.to_string())),
    }
}

/// The files a card file carries besides the card: a CHARX's entries other than `card.json`
/// (its portrait and assets) or a PNG's `chara-ext-asset_:PATH` chunks, as `(path, bytes)` in
/// file order. Empty for JSON and for pictures without assets.
///
/// # Errors
/// `read-failed` when the bytes are not a card (a lorebook included); `limit` when a size
/// limit is hit.
///
/// ```
/// let card = serde_json::json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "Ember",
///     "assets": [{"type": "icon", "uri": "data:image/png;base64,AQID", "name": "main", "ext": "png"}]}});
/// let charx = ccv3_embed::write_card(&card, "charx", None)?;
/// let files = ccv3_embed::read_card_files(&charx)?;
/// assert_eq!(files.len(), 1);
/// assert_eq!(files[0].1, [1, 2, 3]);
/// // A JSON card carries no files.
/// assert!(ccv3_embed::read_card_files(&ccv3_embed::write_card(&card, "json", None)?)?.is_empty());
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn read_card_files(bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>, EmbedError> {
    Ok(read_card_file(bytes)?
        .files
        .into_iter()
        .map(|f| (f.path, f.data))
        .collect())
}

/// Writes a lorebook (an object as [`read_lorebook`] returns it, a `lorebook_v3` file object,
/// or any lorebook format ccv3 reads) as `lorebook_v3` JSON (the default) or, with
/// `format = "worldinfo"`, SillyTavern World Info JSON; the same bytes as `ccv3 convert`.
///
/// # Errors
/// `bad-input` for a value that is not a lorebook or an unknown format.
///
/// ```
/// let book = serde_json::json!({"entries": [{"keys": ["tea"], "content": "Tea is strong.",
///     "enabled": true, "insertion_order": 0}]});
/// let v3 = ccv3_embed::write_lorebook(&book, None)?;
/// assert!(String::from_utf8(v3).unwrap().contains("lorebook_v3"));
/// let wi: serde_json::Value = serde_json::from_slice(&ccv3_embed::write_lorebook(&book, Some("worldinfo"))?).unwrap();
/// assert_eq!(wi["entries"]["0"]["key"][0], "tea");
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn write_lorebook(book: &Value, format: Option<&str>) -> Result<Vec<u8>, EmbedError> {
    let format = format.map(|f| f.trim().to_ascii_lowercase());
    let worldinfo = match format.as_deref() {
        None | Some("lorebook_v3") => false,
        Some("worldinfo") => true,
        Some(other) => {
            return Err(EmbedError::bad_input(format!(
                "unknown lorebook format {other:?}: use lorebook_v3 or worldinfo"
            )))
        }
    };
    let (book, _) = book_from_value(book)?;
    Ok(if worldinfo {
        ccv3::json::to_pretty(&ccv3::lorebook::to_worldinfo(&book))
    } else {
        ccv3::write_lorebook_v3(&book)
    })
}

/// Diagnostics as `[{severity, code, path, message}]`.
fn diagnostics_value(diags: &[Diagnostic]) -> Value {
    serde_json::to_value(diags).unwrap_or_else(|_| Value::Array(Vec::new()))
}

/// Validates a card: the reader's repairs plus every spec finding, as
/// `[{severity, code, path, message}]` with the codes and paths of `ccv3 validate --json`.
///
/// # Errors
/// `read-failed` for bytes that are not a card (a lorebook included), `bad-input` for a value
/// that is not a card.
///
/// ```
/// let card = serde_json::json!({"spec": "chara_card_v3", "spec_version": "3.0",
///     "data": {"name": "Ember", "creation_date": 1_700_000_000_000u64}});
/// let found = ccv3_embed::validate_card(ccv3_embed::Source::Json(&card))?;
/// assert!(found.as_array().unwrap().iter().any(|f| f["code"] == "date-in-milliseconds"));
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn validate_card(card: Source<'_>) -> Result<Value, EmbedError> {
    let diags = match card {
        Source::Bytes(b) => {
            let doc = read_document(b)?;
            if matches!(doc, Document::Lorebook(_)) {
                return Err(EmbedError::read_failed(
                    "the file is a lorebook, not a character card (use validate_lorebook)",
                ));
            }
            ccv3::check_document(&doc)
        }
        Source::Json(v) => {
            let (card, mut diags) = card_from_value(v)?;
            let ctx = ccv3::validate::ValidateContext::default();
            diags.extend(ccv3::validate_card(&card, &ctx));
            diags
        }
    };
    Ok(diagnostics_value(&diags))
}

/// Validates a lorebook: the reader's repairs plus every spec finding, as
/// `[{severity, code, path, message}]` with the codes and paths of `ccv3 validate --json`
/// (entries under `data.entries`).
///
/// # Errors
/// `read-failed` for bytes that are not a lorebook (a card included), `bad-input` for a value
/// that is not a lorebook.
///
/// ```
/// let book = serde_json::json!({"spec": "lorebook_v3", "data": {"entries": [
///     {"keys": ["/(/"], "content": "x", "enabled": true, "insertion_order": 0, "use_regex": true}]}});
/// let found = ccv3_embed::validate_lorebook(ccv3_embed::Source::Json(&book))?;
/// assert!(found.as_array().unwrap().iter().any(|f| f["code"] == "entry-regex-invalid"));
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn validate_lorebook(book: Source<'_>) -> Result<Value, EmbedError> {
    let diags = match book {
        Source::Bytes(b) => {
            let doc = read_document(b)?;
            if matches!(doc, Document::Card(_)) {
                return Err(EmbedError::read_failed(
                    "the file is a character card, not a lorebook (use validate_card)",
                ));
            }
            ccv3::check_document(&doc)
        }
        Source::Json(v) => {
            let (book, mut diags) = book_from_value(v)?;
            diags.extend(ccv3::validate_lorebook(&book, "data"));
            diags
        }
    };
    Ok(diagnostics_value(&diags))
}

#[cfg(test)]
mod tests {
    /// DESIGN.md "Nothing hidden" (no threads unless the caller asks) and issue 16: the reads
    /// ask for a big book's second thread exactly when this crate's `parallel` feature is on
    /// (the Python package's choice; the npm package's WebAssembly core has none).
    #[test]
    fn a_second_thread_only_with_the_parallel_feature() {
        let opts = super::library_options();
        assert_eq!(opts.entry_thread, cfg!(feature = "parallel"));
        assert_eq!(opts.entry_thread(false), ccv3::ReadOptions::default());
    }

    use super::{card_from_text, card_from_value};
    use serde_json::{json, Value};

    /// A card's JSON text, as the npm and Python packages send an object.
    fn both(v: &Value) -> (String, Value) {
        (serde_json::to_string(v).unwrap(), v.clone())
    }

    /// The fast text path (issue 27: lint as the user types) reads every card exactly as the
    /// `Value` path does: the same card, diagnostics and errors, for cards as `read_card` returns
    /// them (`decorators` lists) and for text it must leave to the `Value` path.
    #[test]
    fn card_from_text_reads_as_card_from_value() {
        let entry = |content: Value, decorators: Value| {
            json!({"keys": ["k"], "content": content, "extensions": {}, "enabled": true,
                "insertion_order": 0, "use_regex": false, "decorators": decorators})
        };
        // Every field a V3 (or V2) card has, as the writers write them: nothing to repair.
        let v3 = super::read_card(
            br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#,
            &super::ReadOptions::default(),
        )
        .unwrap();
        let v2: Value =
            serde_json::from_slice(&super::write_card(&v3, "json-v2", None).unwrap()).unwrap();
        let card = |spec: &str, entries: Vec<Value>| {
            let mut c = if spec == "chara_card_v3" {
                v3.clone()
            } else {
                v2.clone()
            };
            c["data"]["character_book"] = json!({"entries": entries, "extensions": {}});
            c
        };
        let depth = json!([{"type": "depth", "value": 2}, {"type": "activate"}]);
        let mut cases = Vec::new();
        let mut fast = Vec::new();
        for spec in ["chara_card_v3", "chara_card_v2"] {
            cases.push(card(spec, vec![entry(json!("Text."), depth.clone())]));
            cases.push(card(spec, vec![entry(json!("Text."), json!([]))]));
            cases.push(card(spec, vec![entry(json!("Text."), Value::Null)]));
            cases.push(card(spec, vec![entry(json!(""), depth.clone())]));
            fast.extend(cases[cases.len() - 4..].iter().cloned());
            // A list that is not decorators, a content that is not a string, an item that is
            // not an entry, a missing content: the errors and repairs of the `Value` path.
            cases.push(card(
                spec,
                vec![entry(json!("Text."), json!([{"type": 5}]))],
            ));
            cases.push(card(spec, vec![entry(json!(7), depth.clone())]));
            cases.push(card(
                spec,
                vec![json!("no entry"), entry(json!("T"), json!(3))],
            ));
            let mut no_content = entry(json!("T"), depth.clone());
            no_content.as_object_mut().unwrap().remove("content");
            cases.push(card(spec, vec![no_content]));
        }
        // A V1 card and a `data` object without its wrapper, both with a `data.character_book`
        // that the `Value` path joins and the card's own book does not hold.
        let inner = card("chara_card_v3", vec![entry(json!("T"), depth.clone())]);
        cases.push(json!({"name": "A", "description": "d", "first_mes": "hi",
            "data": inner["data"].clone()}));
        cases.push(json!({"name": "A", "creator": "c", "data": inner["data"].clone()}));
        cases.push(json!({"spec": "lorebook_v3", "data": {"entries": []}}));
        cases.push(json!([1]));
        // Well-formed V2 and V3 cards take the fast path (the others may or may not).
        for v in &fast {
            let text = both(v).0;
            assert!(super::well_formed_card_from_text(&text).is_some(), "{text}");
        }
        for v in &cases {
            let (text, v) = both(v);
            let fast = card_from_text(&text);
            let plain = card_from_value(&v);
            match (fast, plain) {
                (Ok((fc, fd)), Ok((pc, pd))) => {
                    assert_eq!(fc, pc, "{text}");
                    assert_eq!(fd, pd, "{text}");
                    assert_eq!(fc.to_v3_json(), pc.to_v3_json(), "{text}");
                }
                (Err(f), Err(p)) => assert_eq!((f.code, f.message), (p.code, p.message), "{text}"),
                (f, p) => panic!("{text}: {:?} / {:?}", f.map(|_| ()), p.map(|_| ())),
            }
        }
        // Text only: a byte order mark, a lone surrogate and a repeated key read as the parsed
        // text does (or fail as parsing it does), and text that is not JSON is `bad-input`.
        let plain_of = |t: &str| serde_json::from_str::<Value>(t).map(|v| card_from_value(&v));
        for text in [
            "\u{feff}{\"spec\":\"chara_card_v3\",\"data\":{\"name\":\"A\"}}",
            r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"\ud800"}}"#,
            r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","name":"B"}}"#,
            r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"},"data":{"name":"B"}}"#,
        ] {
            let fast = card_from_text(text);
            match plain_of(text) {
                Ok(Ok((pc, pd))) => {
                    let (fc, fd) = fast.unwrap();
                    assert_eq!((fc, fd), (pc, pd), "{text}");
                }
                Ok(Err(p)) => assert_eq!(fast.unwrap_err().message, p.message, "{text}"),
                Err(_) => assert_eq!(fast.unwrap_err().code, "bad-input", "{text}"),
            }
        }
        assert_eq!(card_from_text("{").unwrap_err().code, "bad-input");
    }
}
