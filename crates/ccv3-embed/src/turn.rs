//! The lorebook engine and prompt assembly: [`scan_lorebook`] and [`build_prompt`], through
//! the one turn policy of [`ccv3_prompt::Session`].

use crate::cards::{
    book_file_from_value, card_from_value, read_book_card_world_info, read_card_data,
};
use crate::encoding::tokenizer;
use crate::error::EmbedError;
use crate::opts::{self, get, type_name};
use crate::source::Source;
use crate::text::{read_chat, read_now, read_variables};
use ccv3::{CardData, Lorebook};
use ccv3_lore::chat::Chat;
use ccv3_lore::{BookKind, ScanState, Strategy, Trigger};
use ccv3_prompt::{EngineSettings, InstructTemplate, ReadBook, Session, SessionOptions, Template};
use serde::Serialize;
use serde_json::Value;

/// A book of a request, read.
struct Book {
    book: Lorebook,
    name: String,
    /// Read from a card's bytes: the card without its book (its names, tags and texts serve
    /// entries' character filters and `match_*` flags).
    card: Option<CardData>,
    /// Read from a SillyTavern World Info file (`ccv3_lore::BookInput::world_info`).
    world_info: bool,
    /// The kind the request's `book_kinds` gives it.
    kind: Option<BookKind>,
}

/// Reads the books of a request. A book's display name (the `book` of activations and the
/// prefix of lore labels) is its `name`, else `books[i]`.
fn read_books(books: &[Source<'_>], req: Option<&Value>) -> Result<Vec<Book>, EmbedError> {
    let kinds = book_kinds(req, books.len())?;
    let mut out = Vec::with_capacity(books.len());
    for (i, b) in books.iter().enumerate() {
        let at = |e: EmbedError| EmbedError::new(e.code, format!("books[{i}]: {}", e.message));
        let (book, card, world_info) = match b {
            Source::Bytes(bytes) => read_book_card_world_info(bytes).map_err(at)?,
            Source::Json(v) => {
                let bf = book_file_from_value(v).map_err(at)?;
                let world_info = bf.format == ccv3::lorebook::BookFormat::WorldInfo;
                (bf.book, None, world_info)
            }
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
            card,
            world_info,
            kind: kinds.get(i).copied().flatten(),
        });
    }
    Ok(out)
}

/// The request's `book_kinds`: one of `character`, `global`, `chat`, `persona` (SillyTavern's
/// lore kinds) or `null` (the default policy) per book, in order.
fn book_kinds(req: Option<&Value>, n: usize) -> Result<Vec<Option<BookKind>>, EmbedError> {
    let list = match get(req, "book_kinds") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(a)) if a.len() <= n => a,
        Some(Value::Array(a)) => {
            return Err(EmbedError::bad_input(format!(
                "book_kinds has {} items for {n} books",
                a.len()
            )))
        }
        Some(other) => return Err(opts::wrong("book_kinds", "an array", other)),
    };
    list.iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::Null => Ok(None),
            Value::String(s) => BookKind::parse(s).map(Some).ok_or_else(|| {
                EmbedError::bad_input(format!(
                    "book_kinds[{i}]: unknown kind {s:?}: use character, global, chat or persona"
                ))
            }),
            other => Err(opts::wrong(
                &format!("book_kinds[{i}]"),
                "a kind name",
                other,
            )),
        })
        .collect()
}

/// The session options of a request (`user`, `char`, `greeting`, `scan_depth`, `recursive`,
/// `strategy`, `max_context`, `system_prompt`, `template`, `seed`, `now`, `dialect`, `compat`,
/// and the engine settings of [`engine_settings`]); what the request does not give is
/// [`SessionOptions::default`], as in `ccv3 lore scan` and `ccv3 prompt` (issue 26).
fn session_options(req: Option<&Value>) -> Result<SessionOptions, EmbedError> {
    let mut o = SessionOptions {
        threads: cfg!(feature = "parallel"),
        ..SessionOptions::default()
    };
    if let Some(u) = opts::string(req, "user")? {
        o.user_name = u.to_string();
    }
    o.char_name = opts::string(req, "char")?.map(str::to_string);
    if let Some(g) = opts::count(req, "greeting")? {
        o.greeting = Some(usize::try_from(g).unwrap_or(usize::MAX));
    }
    o.scan_depth = opts::count(req, "scan_depth")?;
    o.recursive = opts::boolean(req, "recursive")?.unwrap_or(false);
    if let Some(s) = opts::string(req, "strategy")? {
        o.strategy = Strategy::parse(s).ok_or_else(|| {
            EmbedError::bad_input(format!(
                "unknown strategy {s:?}: use evenly, character-first or global-first"
            ))
        })?;
    }
    if let Some(s) = opts::string(req, "compat")? {
        o.compat = ccv3_lore::Compat::parse(s).ok_or_else(|| {
            EmbedError::bad_input(format!("unknown compat mode {s:?}: use sillytavern"))
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
    o.engine = engine_settings(req)?;
    if let Some(d) = opts::dialect(req, "dialect")? {
        o.dialect = d;
    }
    Ok(o)
}

/// The lorebook engine's settings of a request (issue 14; the `ccv3 lore scan` flags):
/// `min_activations`, `min_activations_depth_max`, `max_recursion_steps`, `budget`,
/// `budget_cap`, `include_names`, `whole_words`, `case_sensitive`, `group_scoring`, `trigger`,
/// `persona` (the persona description, for entries with `match_persona_description`).
fn engine_settings(req: Option<&Value>) -> Result<EngineSettings, EmbedError> {
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let mut e = EngineSettings::default();
    if let Some(n) = opts::count(req, "min_activations")? {
        e.min_activations = size(n);
    }
    if let Some(n) = opts::count(req, "min_activations_depth_max")? {
        e.min_activations_depth_max = n;
    }
    if let Some(n) = opts::count(req, "max_recursion_steps")? {
        e.max_recursion_steps = size(n);
    }
    e.budget = opts::count(req, "budget")?.map(size);
    e.budget_cap = opts::count(req, "budget_cap")?.map(size);
    if let Some(b) = opts::boolean(req, "include_names")? {
        e.include_names = b;
    }
    if let Some(b) = opts::boolean(req, "whole_words")? {
        e.whole_words = b;
    }
    if let Some(b) = opts::boolean(req, "case_sensitive")? {
        e.case_sensitive = b;
    }
    if let Some(b) = opts::boolean(req, "group_scoring")? {
        e.group_scoring = b;
    }
    if let Some(p) = opts::string(req, "persona")? {
        e.persona_description = p.to_string();
    }
    if let Some(t) = opts::string(req, "trigger")? {
        e.trigger = Trigger::parse(t).ok_or_else(|| {
            EmbedError::bad_input(format!(
                "unknown trigger {t:?}: use normal, continue, impersonate, swipe, regenerate or quiet"
            ))
        })?;
    }
    Ok(e)
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

/// The `build_prompt` document: `ccv3 prompt --json` (with `text` for an instruct template)
/// plus `state`.
#[derive(Serialize)]
struct PromptDoc<'r> {
    messages: &'r [ccv3_prompt::ReportMessage],
    tokens: usize,
    lore: &'r [ccv3_prompt::ReportLore],
    cut: &'r [ccv3_prompt::ReportCut],
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    state: &'r ScanState,
}

/// A document as a JSON value or JSON text.
trait Out: Sized {
    fn from_doc(doc: &impl Serialize) -> Result<Self, EmbedError>;
}

impl Out for Value {
    fn from_doc(doc: &impl Serialize) -> Result<Self, EmbedError> {
        serde_json::to_value(doc).map_err(|e| EmbedError::write_failed(e.to_string()))
    }
}

impl Out for String {
    fn from_doc(doc: &impl Serialize) -> Result<Self, EmbedError> {
        serde_json::to_string(doc).map_err(|e| EmbedError::write_failed(e.to_string()))
    }
}

/// The scan document of one scan.
/// (`ScanOutcome` serialises as `{activated, rejected, tokens, state}`.)
fn scan_doc<T: Out>(out: &ccv3_prompt::ScanOutcome<'_>) -> Result<T, EmbedError> {
    T::from_doc(out)
}

/// A scan document with `rejected` left empty (the request's `rejected: false`): a big book's
/// thousands of "no key matched" cost more to move than the scan itself.
struct WithoutRejected<'a, 'b>(&'a ccv3_prompt::ScanOutcome<'b>);

impl Serialize for WithoutRejected<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let report = self.0.report().with_steps(&self.0.result);
        let mut st = s.serialize_struct("ScanOutcome", 4)?;
        st.serialize_field("activated", &report.activated)?;
        st.serialize_field("rejected", &[] as &[u8])?;
        st.serialize_field("tokens", &report.tokens)?;
        st.serialize_field("state", self.0.state())?;
        st.end()
    }
}

/// The scan document, with or without the rejected entries (`rejected`, default true).
fn scan_doc_with<T: Out>(
    out: &ccv3_prompt::ScanOutcome<'_>,
    rejected: bool,
) -> Result<T, EmbedError> {
    if rejected {
        scan_doc(out)
    } else {
        T::from_doc(&WithoutRejected(out))
    }
}

/// Runs the lorebook engine over a chat: `{activated, rejected, tokens, state}`, the first
/// three as `ccv3 lore scan --json` prints them; `state` is what the next call passes back in.
///
/// `books` are Lorebook objects or file bytes (a card's bytes mean its character book: the
/// first such book is the character book, the others are global, as in `ccv3 lore scan`).
/// `request` keys (`snake_case` or `camelCase`, all optional): `chat` (messages
/// `[{role, name, content}]`, `{messages: [...]}` or a chat file's text), `state`, `seed`
/// (default: from the chat), `user`, `char` (default: the first card's nickname, else its
/// name, else `Character`), `greeting` (default 0, `first_mes`, for `@@is_greeting`),
/// `scan_depth`, `recursive`, `strategy`, `max_context`, `tokenizer` (`o200k`, `cl100k`,
/// `estimate`), `rejected` (default true; false leaves `rejected` empty, for a big book scanned
/// as someone types), and the engine settings (as the `ccv3 lore scan` flags):
/// `min_activations`, `min_activations_depth_max`, `max_recursion_steps`, `budget`,
/// `budget_cap`, `include_names`, `whole_words`, `case_sensitive`, `group_scoring` (booleans:
/// defaults for entries that do not say), `trigger` (`normal`, `continue`, `impersonate`,
/// `swipe`, `regenerate`, `quiet`), `persona` (the persona description, for entries'
/// `match_persona_description`). For the SillyTavern extension (issue 28): `book_kinds` (per
/// book `character`, `global`, `chat`, `persona` or `null`: SillyTavern's lore kinds, which set
/// its book order), `st_timed` (SillyTavern's `chat_metadata.timedWorldInfo`: the scan starts
/// from its sticky and cooldown records, [`ccv3_lore::CompiledBooks::st_timed_state`]) and
/// `st_activated` (the entries SillyTavern activated, `["world.uid", ...]` or
/// `{world: [uid, ...]}`: with `compat: "sillytavern"` its probability rolls and group draws
/// are replayed, [`ccv3_lore::ScanOptions::st_activated`]). A book's `world` is its display
/// name: a World Info object given with `name: world` has it.
///
/// # Errors
/// `bad-input` for a request of the wrong shape, `chat` for a chat the reader refuses,
/// `read-failed` for book bytes that are not a lorebook or a card with a book.
///
/// ```
/// let book = serde_json::json!({"entries": [{"keys": ["tea"], "content": "Tea is strong.",
///     "enabled": true, "insertion_order": 0}]});
/// let out = ccv3_embed::scan_lorebook(&[ccv3_embed::Source::Json(&book)], &serde_json::json!({
///     "chat": [{"role": "user", "content": "Some tea?"}], "tokenizer": "estimate"}))?;
/// assert_eq!(out["activated"][0]["content"], "Tea is strong.");
/// // The next turn passes `out["state"]` back in as `state` (sticky, cooldown and delay).
/// assert!(out.get("state").is_some());
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn scan_lorebook(books: &[Source<'_>], request: &Value) -> Result<Value, EmbedError> {
    scan_with(books, request)
}

/// [`scan_lorebook`] as JSON text (for bindings that parse JSON faster than they build objects).
///
/// # Errors
/// As [`scan_lorebook`].
///
/// ```
/// let book = serde_json::json!({"entries": [{"keys": ["tea"], "content": "Tea is strong.",
///     "enabled": true, "insertion_order": 0}]});
/// let text = ccv3_embed::scan_lorebook_json(&[ccv3_embed::Source::Json(&book)], &serde_json::json!({
///     "chat": [{"role": "user", "content": "Some tea?"}], "tokenizer": "estimate"}))?;
/// let out: serde_json::Value = serde_json::from_str(&text).unwrap();
/// assert_eq!(out["activated"][0]["content"], "Tea is strong.");
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn scan_lorebook_json(books: &[Source<'_>], request: &Value) -> Result<String, EmbedError> {
    scan_with(books, request)
}

/// Adds `books` to `session` by the library's policy ([`Session::with_read_books`]: the first
/// book read from a card is the character book, as in `ccv3 lore scan`). Book sources have no
/// file name.
fn add_books<'a>(session: Session<'a>, books: &'a [Book]) -> Session<'a> {
    session.with_read_books(books.iter().map(|b| ReadBook {
        book: &b.book,
        card: b.card.as_ref(),
        name: b.name.clone(),
        file: None,
        kind: b.kind,
        world_info: b.world_info,
    }))
}

fn scan_with<T: Out>(books: &[Source<'_>], request: &Value) -> Result<T, EmbedError> {
    let req = opts::object(request, "the request")?;
    let books = read_books(books, req)?;
    let chat = request_chat(req)?;
    let state = request_state(req)?;
    let mut options = session_options(req)?;
    options.single_scan = true;
    let tok = tokenizer(opts::string(req, "tokenizer")?)?;
    let rejected = opts::boolean(req, "rejected")?.unwrap_or(true);
    let mut session = add_books(Session::new(options, tok), &books);
    session.set_st_activated(st_activated(req)?);
    let state = with_st_timed(req, state, &session)?;
    scan_doc_with(&session.scan(&chat, &state), rejected)
}

/// The request's `st_activated`: the entries SillyTavern activated, as `world.uid` keys or
/// uids by world ([`ccv3_lore::st_activated_set`]).
fn st_activated(
    req: Option<&Value>,
) -> Result<Option<std::sync::Arc<std::collections::HashSet<String>>>, EmbedError> {
    match get(req, "st_activated") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => ccv3_lore::st_activated_set(v)
            .map(|set| Some(std::sync::Arc::new(set)))
            .map_err(|e| EmbedError::bad_input(format!("st_activated: {e}"))),
    }
}

/// `state` with the sticky and cooldown records of the request's `st_timed` (SillyTavern's
/// `chat_metadata.timedWorldInfo`, read by [`ccv3_lore::CompiledBooks::st_timed_state`]) when
/// it has one.
fn with_st_timed(
    req: Option<&Value>,
    mut state: ScanState,
    session: &Session<'_>,
) -> Result<ScanState, EmbedError> {
    match get(req, "st_timed") {
        None | Some(Value::Null) => Ok(state),
        Some(v @ Value::Object(_)) => {
            let st = session.compiled().st_timed_state(v);
            state.sticky = st.sticky;
            state.cooldown = st.cooldown;
            Ok(state)
        }
        Some(other) => Err(opts::wrong(
            "st_timed",
            "SillyTavern's timedWorldInfo object",
            other,
        )),
    }
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
///
/// ```
/// let card = serde_json::json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {
///     "name": "Ember", "description": "{{char}} is a fire spirit.", "first_mes": "Hello, {{user}}.",
///     "character_book": {"entries": [{"keys": ["tea"], "content": "Ember hates tea.",
///         "enabled": true, "insertion_order": 0}]}}});
/// let out = ccv3_embed::build_prompt(ccv3_embed::Source::Json(&card), &[], &serde_json::json!({
///     "chat": [{"role": "user", "content": "Some tea?"}], "user": "Sam", "tokenizer": "estimate"}))?;
/// let all = serde_json::to_string(&out["messages"]).unwrap();
/// assert!(all.contains("Ember is a fire spirit.") && all.contains("Ember hates tea."));
/// assert!(out["tokens"].is_u64());
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn build_prompt(
    card: Source<'_>,
    books: &[Source<'_>],
    request: &Value,
) -> Result<Value, EmbedError> {
    prompt_with(card, books, request)
}

/// [`build_prompt`] as JSON text.
///
/// # Errors
/// As [`build_prompt`].
///
/// ```
/// let card = serde_json::json!({"spec": "chara_card_v3", "spec_version": "3.0",
///     "data": {"name": "Ember", "first_mes": "Hello, {{user}}."}});
/// let text = ccv3_embed::build_prompt_json(ccv3_embed::Source::Json(&card), &[], &serde_json::json!({
///     "chat": [{"role": "user", "content": "Hi"}], "user": "Sam", "tokenizer": "estimate",
///     "instruct": "chatml"}))?;
/// let out: serde_json::Value = serde_json::from_str(&text).unwrap();
/// assert!(out["text"].as_str().unwrap().contains("<|im_start|>user"));
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn build_prompt_json(
    card: Source<'_>,
    books: &[Source<'_>],
    request: &Value,
) -> Result<String, EmbedError> {
    prompt_with(card, books, request)
}

fn prompt_with<T: Out>(
    card: Source<'_>,
    books: &[Source<'_>],
    request: &Value,
) -> Result<T, EmbedError> {
    let req = opts::object(request, "the request")?;
    let card: CardData = match card {
        Source::Bytes(b) => read_card_data(b)?,
        Source::Json(v) => card_from_value(v)?.0.data,
    };
    let books = read_books(books, req)?;
    let chat = request_chat(req)?;
    let state = request_state(req)?;
    let options = session_options(req)?;
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
    let options = options.with_instruct(instruct.as_ref());
    let tok = tokenizer(opts::string(req, "tokenizer")?)?;
    let mut session = Session::new(options, tok).with_card(&card, "card");
    for b in &books {
        session = session.with_book(&b.book, BookKind::Global, b.name.clone());
    }
    let turn = session
        .prompt(&chat, &state)
        .map_err(|e| EmbedError::bad_input(e.to_string()))?;
    let report = turn.report();
    T::from_doc(&PromptDoc {
        messages: &report.messages,
        tokens: report.tokens,
        lore: &report.lore,
        cut: &report.cut,
        text: instruct.as_ref().map(|t| t.render(&turn.prompt)),
        state: &turn.state,
    })
}

/// Books compiled once for many scans: the handle behind `scanLorebook` turn after turn on a
/// big book (compiling a 50,000-entry book costs far more than scanning it).
///
/// The options of [`scan_lorebook`] other than `chat`, `state` and `seed` are fixed when the
/// books are compiled; each [`CompiledBooks::scan`] takes a request with those three.
///
/// ```
/// let book = serde_json::json!({"entries": [{"keys": ["tea"], "content": "Tea is strong.",
///     "enabled": true, "insertion_order": 0}]});
/// let mut books = ccv3_embed::CompiledBooks::new(&[ccv3_embed::Source::Json(&book)],
///     &serde_json::json!({"user": "Sam"}))?;
/// let out = books.scan(&serde_json::json!({"chat": [{"role": "user", "content": "Some tea?"}]}))?;
/// assert_eq!(out["activated"][0]["content"], "Tea is strong.");
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub struct CompiledBooks(Compiled);

self_cell::self_cell!(
    struct Compiled {
        owner: Vec<Book>,
        #[not_covariant]
        dependent: Session,
    }
);

impl std::fmt::Debug for CompiledBooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0
            .with_dependent(|_, s| f.debug_tuple("CompiledBooks").field(s).finish())
    }
}

impl CompiledBooks {
    /// Reads and compiles `books` with the options of `request` (as [`scan_lorebook`]'s;
    /// `chat`, `state` and `seed` are ignored here).
    ///
    /// # Errors
    /// As [`scan_lorebook`].
    pub fn new(books: &[Source<'_>], request: &Value) -> Result<CompiledBooks, EmbedError> {
        let req = opts::object(request, "the options")?;
        let books = read_books(books, req)?;
        let options = session_options(req)?;
        let tok = tokenizer(opts::string(req, "tokenizer")?)?;
        let compiled = Compiled::new(books, |books| add_books(Session::new(options, tok), books));
        // Compile now, so the first scan costs what the others do.
        compiled.with_dependent(|_, s| {
            s.compiled();
        });
        Ok(CompiledBooks(compiled))
    }

    /// The books' display names, in order.
    pub fn book_names(&self) -> Vec<String> {
        self.0.with_dependent(|_, s| s.book_names().to_vec())
    }

    /// Scans with `request`'s `chat`, `state` and `seed`: as [`scan_lorebook`].
    ///
    /// # Errors
    /// `bad-input` for a request of the wrong shape, `chat` for a chat the reader refuses.
    pub fn scan(&mut self, request: &Value) -> Result<Value, EmbedError> {
        self.scan_with(request)
    }

    /// [`CompiledBooks::scan`] as JSON text.
    ///
    /// # Errors
    /// As [`CompiledBooks::scan`].
    pub fn scan_json(&mut self, request: &Value) -> Result<String, EmbedError> {
        self.scan_with(request)
    }

    fn scan_with<T: Out>(&mut self, request: &Value) -> Result<T, EmbedError> {
        let req = opts::object(request, "the request")?;
        let chat = request_chat(req)?;
        let state = request_state(req)?;
        let seed = opts::seed(req, "seed")?;
        let rejected = opts::boolean(req, "rejected")?.unwrap_or(true);
        let activated = st_activated(req)?;
        self.0.with_dependent_mut(|_, session| {
            session.set_seed(seed);
            session.set_st_activated(activated);
            let state = with_st_timed(req, state, session)?;
            scan_doc_with(&session.scan(&chat, &state), rejected)
        })
    }
}
