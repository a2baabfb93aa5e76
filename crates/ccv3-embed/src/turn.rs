//! The lorebook engine and prompt assembly: [`scan_lorebook`] and [`build_prompt`], through
//! the one turn policy of [`ccv3_prompt::Session`].

use crate::cards::{book_from_value, card_from_value, read_book_source, read_card_data};
use crate::opts::{self, get, type_name};
use crate::text::{read_chat, read_now, read_variables, tokenizer};
use crate::{EmbedError, Source};
use ccv3::{CardData, Lorebook};
use ccv3_lore::chat::Chat;
use ccv3_lore::{BookKind, ScanState, Strategy};
use ccv3_prompt::{InstructTemplate, Session, SessionOptions, Template};
use serde::Serialize;
use serde_json::Value;

/// A book of a request, read, with how the session takes it.
struct Book {
    book: Lorebook,
    name: String,
    /// Read from a card's bytes: the card's name, for `{{char}}`.
    card_name: Option<String>,
}

/// Reads the books of a request. A book's display name (the `book` of activations and the
/// prefix of lore labels) is its `name`, else `books[i]`.
fn read_books(books: &[Source<'_>]) -> Result<Vec<Book>, EmbedError> {
    let mut out = Vec::with_capacity(books.len());
    for (i, b) in books.iter().enumerate() {
        let at = |e: EmbedError| EmbedError::new(e.code, format!("books[{i}]: {}", e.message));
        let (book, card_name) = match b {
            Source::Bytes(bytes) => read_book_source(bytes).map_err(at)?,
            Source::Json(v) => (book_from_value(v).map_err(at)?.0, None),
        };
        let name = book
            .name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map_or_else(|| format!("books[{i}]"), str::to_string);
        out.push(Book {
            book,
            name,
            card_name,
        });
    }
    Ok(out)
}

/// The session options of a request (`user`, `char`, `greeting`, `scan_depth`, `recursive`,
/// `strategy`, `max_context`, `system_prompt`, `template`, `seed`, `now`).
fn session_options(req: Option<&Value>) -> Result<SessionOptions, EmbedError> {
    let mut o = SessionOptions::default();
    if let Some(u) = opts::string(req, "user")? {
        o.user_name = u.to_string();
    }
    o.char_name = opts::string(req, "char")?.map(str::to_string);
    o.greeting = opts::count(req, "greeting")?.map(|g| usize::try_from(g).unwrap_or(usize::MAX));
    o.scan_depth = opts::count(req, "scan_depth")?;
    o.recursive = opts::boolean(req, "recursive")?.unwrap_or(false);
    if let Some(s) = opts::string(req, "strategy")? {
        o.strategy = Strategy::parse(s).ok_or_else(|| {
            EmbedError::bad_input(format!(
                "unknown strategy {s:?}: use evenly, character-first or global-first"
            ))
        })?;
    }
    o.max_context =
        opts::count(req, "max_context")?.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    o.system_prompt = opts::string(req, "system_prompt")?.map(str::to_string);
    if let Some(t) = get(req, "template") {
        let text = serde_json::to_string(t).map_err(|e| EmbedError::bad_input(e.to_string()))?;
        o.template = Template::from_json(&text)
            .map_err(|e| EmbedError::bad_input(format!("template: {e}")))?;
    }
    o.seed = opts::seed(req, "seed")?;
    o.now = get(req, "now").map(read_now).transpose()?;
    Ok(o)
}

/// The chat of a request (empty when absent).
fn request_chat(req: Option<&Value>) -> Result<Chat, EmbedError> {
    get(req, "chat").map_or_else(|| Ok(Chat::default()), read_chat)
}

/// The state of a request: a previous call's `state` (a new chat's when absent).
fn request_state(req: Option<&Value>) -> Result<ScanState, EmbedError> {
    match get(req, "state") {
        None => Ok(ScanState::default()),
        Some(v @ Value::Object(_)) => {
            let mut state = state_from_value(v)?;
            if let Some(vars) = v.get("variables").filter(|x| !x.is_null()) {
                state.variables = read_variables(vars)?;
            }
            Ok(state)
        }
        Some(other) => Err(EmbedError::bad_input(format!(
            "state must be the state object of the previous call, found {}",
            type_name(other)
        ))),
    }
}

/// A [`ScanState`] from a JSON value, its variables left to [`read_variables`].
fn state_from_value(v: &Value) -> Result<ScanState, EmbedError> {
    let mut v = v.clone();
    if let Value::Object(o) = &mut v {
        o.shift_remove("variables");
    }
    <ScanState as serde::Deserialize>::deserialize(&v)
        .map_err(|e| EmbedError::bad_input(format!("state: {e}")))
}

/// A serialisable value as an object, with `state` added.
fn with_state(report: &impl Serialize, state: &ScanState) -> Result<Value, EmbedError> {
    let mut v =
        serde_json::to_value(report).map_err(|e| EmbedError::write_failed(e.to_string()))?;
    let state = serde_json::to_value(state).map_err(|e| EmbedError::write_failed(e.to_string()))?;
    if let Value::Object(o) = &mut v {
        o.insert("state".to_string(), state);
    }
    Ok(v)
}

/// Runs the lorebook engine over a chat: `{activated, rejected, tokens, state}`, the first
/// three as `ccv3 lore scan --json` prints them; `state` is what the next call passes back in.
///
/// `books` are Lorebook objects or file bytes (a card's bytes mean its character book: the
/// first such book is the character book, the others are global, as in `ccv3 lore scan`).
/// `request` keys (`snake_case` or `camelCase`, all optional): `chat` (messages
/// `[{role, name, content}]`, `{messages: [...]}` or a chat file's text), `state`, `seed`
/// (default: from the chat), `user`, `char` (default: the first card's name), `greeting`,
/// `scan_depth`, `recursive`, `strategy`, `max_context`, `tokenizer` (`o200k`, `cl100k`,
/// `estimate`).
///
/// # Errors
/// `bad-input` for a request of the wrong shape, `chat` for a chat the reader refuses,
/// `read-failed` for book bytes that are not a lorebook or a card with a book.
pub fn scan_lorebook(books: &[Source<'_>], request: &Value) -> Result<Value, EmbedError> {
    let req = opts::object(request, "the request")?;
    let books = read_books(books)?;
    let chat = request_chat(req)?;
    let state = request_state(req)?;
    let mut options = session_options(req)?;
    if options.char_name.is_none() {
        options.char_name = Some(
            books
                .iter()
                .find_map(|b| b.card_name.clone())
                .unwrap_or_else(|| "Character".to_string()),
        );
    }
    options.single_scan = true;
    let tok = tokenizer(opts::string(req, "tokenizer")?)?;
    let mut session = Session::new(options, tok);
    let mut has_character = false;
    for b in &books {
        let kind = if b.card_name.is_some() && !has_character {
            has_character = true;
            BookKind::Character
        } else {
            BookKind::Global
        };
        session = session.with_book(&b.book, kind, b.name.clone());
    }
    let out = session.scan(&chat, &state);
    with_state(&out.report(), out.state())
}

/// Builds the prompt of one turn: `{messages, tokens, lore, cut, state}`, the first four as
/// `ccv3 prompt --json` prints them (plus `text`, the prompt through the instruct template,
/// when `instruct` is given).
///
/// `card` is a card object or file bytes; its `character_book` is the character book and
/// `books` are global books. `request` keys: those of [`scan_lorebook`], plus
/// `system_prompt`, `template` (a list of slot names), `instruct` (a built-in template name:
/// `chatml`, `llama3`, `mistral`, `alpaca`, or a template object) and `now` (unix seconds or
/// `{unix, utc_offset_minutes}`, for the time macros). `greeting` defaults to 0.
///
/// # Errors
/// As [`scan_lorebook`], and `bad-input` for a greeting the card does not have or a template
/// without a history slot.
pub fn build_prompt(
    card: Source<'_>,
    books: &[Source<'_>],
    request: &Value,
) -> Result<Value, EmbedError> {
    let req = opts::object(request, "the request")?;
    let card: CardData = match card {
        Source::Bytes(b) => read_card_data(b)?,
        Source::Json(v) => card_from_value(v)?.0.data,
    };
    let books = read_books(books)?;
    let chat = request_chat(req)?;
    let state = request_state(req)?;
    let mut options = session_options(req)?;
    options.greeting = Some(options.greeting.unwrap_or(0));
    let instruct = match get(req, "instruct") {
        None => None,
        Some(Value::String(name)) => Some(InstructTemplate::builtin(name).ok_or_else(|| {
            EmbedError::bad_input(format!(
                "unknown instruct template {name:?}: use {}, or a template object",
                InstructTemplate::BUILTIN.join(", ")
            ))
        })?),
        Some(v @ Value::Object(_)) => Some(
            InstructTemplate::from_json(&v.to_string())
                .map_err(|e| EmbedError::bad_input(format!("instruct: {e}")))?,
        ),
        Some(other) => return Err(opts::wrong("instruct", "a template name or object", other)),
    };
    let tok = tokenizer(opts::string(req, "tokenizer")?)?;
    let mut session = Session::new(options, tok).with_card(&card, "card");
    for b in &books {
        session = session.with_book(&b.book, BookKind::Global, b.name.clone());
    }
    let turn = session
        .prompt(&chat, &state)
        .map_err(|e| EmbedError::bad_input(e.to_string()))?;
    let mut v = with_state(&turn.report(), &turn.state)?;
    if let (Some(t), Value::Object(o)) = (&instruct, &mut v) {
        let text = t.render(&turn.prompt);
        let state = o.shift_remove("state");
        o.insert("text".to_string(), Value::String(text));
        if let Some(s) = state {
            o.insert("state".to_string(), s);
        }
    }
    Ok(v)
}
