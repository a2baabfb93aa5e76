//! Text functions: CBS macro expansion and token counting.

use crate::cards::card_from_value;
use crate::encoding::tokenizer;
use crate::opts::{self, get};
use crate::EmbedError;
use ccv3_cbs::{Mode, Timestamp, Variables};
use ccv3_lore::chat::Chat;
use ccv3_prompt::{Session, SessionOptions};
use serde_json::Value;

/// Reads a chat given as a JSON value: an array of `{role, name?, content}`, an object with
/// `messages`, or the text of a chat file (JSON, SillyTavern `.jsonl`).
pub(crate) fn read_chat(v: &Value) -> Result<Chat, EmbedError> {
    let chat = match v {
        Value::String(s) => ccv3_lore::chat::parse_chat(s),
        other => ccv3_lore::chat::chat_from_value(other),
    };
    chat.map_err(|e| match e {
        ccv3_lore::LoreError::Limit(_) => EmbedError::new("limit", e.to_string()),
        _ => EmbedError::new("chat", e.to_string()),
    })
}

/// Reads `now`: unix seconds, an RFC 3339 date-time (`2026-11-25T13:00:00Z`), or
/// `{unix, utc_offset_minutes}`.
pub(crate) fn read_now(v: &Value) -> Result<Timestamp, EmbedError> {
    let bad = || {
        EmbedError::bad_input(
            "option now must be unix seconds, an RFC 3339 date-time or {unix, utc_offset_minutes}"
                .to_string(),
        )
    };
    match v {
        Value::Number(_) => opts::whole(v).map(Timestamp::utc).ok_or_else(bad),
        Value::String(s) => {
            Timestamp::parse(s).map_err(|e| EmbedError::bad_input(format!("now: {e}")))
        }
        Value::Object(_) => {
            let unix = get(Some(v), "unix").and_then(opts::whole).ok_or_else(bad)?;
            let offset = match get(Some(v), "utc_offset_minutes") {
                None => 0,
                Some(o) => opts::whole(o)
                    .and_then(|m| i32::try_from(m).ok())
                    .filter(|m| m.abs() <= 24 * 60)
                    .ok_or_else(bad)?,
            };
            Ok(Timestamp::utc(unix).with_offset(offset))
        }
        _ => Err(bad()),
    }
}

/// Reads `variables`: `{local, global}` maps, or one flat map of chat variables.
pub(crate) fn read_variables(v: &Value) -> Result<Variables, EmbedError> {
    let Value::Object(o) = v else {
        return Err(opts::wrong("variables", "an object", v));
    };
    let text = |x: &Value| match x {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let map = |m: &Value, scope: &str| -> Result<_, EmbedError> {
        match m {
            Value::Null => Ok(Default::default()),
            Value::Object(o) => Ok(o.iter().map(|(k, x)| (k.clone(), text(x))).collect()),
            other => Err(opts::wrong(scope, "an object", other)),
        }
    };
    if o.contains_key("local") || o.contains_key("global") {
        Ok(Variables {
            local: map(o.get("local").unwrap_or(&Value::Null), "variables.local")?,
            global: map(o.get("global").unwrap_or(&Value::Null), "variables.global")?,
        })
    } else {
        let mut vars = Variables::new();
        vars.local = map(v, "variables")?;
        Ok(vars)
    }
}

/// Expands the CBS macros of `text` (`{{char}}`, `{{user}}`, `{{random:...}}`, ...).
///
/// `context` keys (all optional): `card` (a card object, for the character's fields), `chat`
/// (messages, as [`crate::read_card`]'s callers pass to the scan), `user` (default `User`),
/// `char` (overrides the card's name), `variables` (`{local, global}` or a flat map), `now`
/// (unix seconds, an RFC 3339 date-time or `{unix, utc_offset_minutes}`; without it time macros expand to nothing),
/// `seed` (default: from the chat), `greeting` (the greeting index), `display` (`true` renders
/// comments for display instead of removing them), `dialect` (`auto`, `risu`, `sillytavern` or
/// `spec`: whose macros; `auto` takes the card's application, and without a card every
/// built-in macro).
///
/// ```
/// let ctx = serde_json::json!({"user": "Bob", "card": {"name": "Aqua", "description": "a goddess"}});
/// assert_eq!(ccv3_embed::expand_macros("{{char}} meets {{user}}", &ctx)?, "Aqua meets Bob");
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
///
/// # Errors
/// `bad-input` for a context that is not an object or an option of the wrong type; `chat` for
/// a chat the chat reader does not accept.
pub fn expand_macros(text: &str, context: &Value) -> Result<String, EmbedError> {
    let ctx = opts::object(context, "the macro context")?;
    let card = match get(ctx, "card") {
        Some(v) => Some(card_from_value(v)?.0.data),
        None => None,
    };
    let chat = match get(ctx, "chat") {
        Some(v) => read_chat(v)?,
        None => Chat::default(),
    };
    let mut options = SessionOptions::default();
    if let Some(u) = opts::string(ctx, "user")? {
        options.user_name = u.to_string();
    }
    options.char_name = opts::string(ctx, "char")?.map(str::to_string);
    options.seed = opts::seed(ctx, "seed")?;
    options.greeting =
        opts::count(ctx, "greeting")?.map(|g| usize::try_from(g).unwrap_or(usize::MAX));
    options.now = get(ctx, "now").map(read_now).transpose()?;
    if let Some(d) = opts::dialect(ctx, "dialect")? {
        options.dialect = d;
    }
    let mut vars = match get(ctx, "variables") {
        Some(v) => read_variables(v)?,
        None => Variables::new(),
    };
    let mode = if opts::boolean(ctx, "display")?.unwrap_or(false) {
        Mode::Display
    } else {
        Mode::Prompt
    };
    // Macros count no tokens: the cheapest tokenizer will do.
    let mut session = Session::new(options, std::sync::Arc::new(ccv3_tokens::Estimate));
    if let Some(card) = &card {
        session = session.with_card(card, "card");
    }
    Ok(session.expand_macros(text, &chat, &mut vars, mode).text)
}

/// Counts the tokens of `text` with `encoding`: `o200k` (the default), `cl100k` or `estimate`.
///
/// ```
/// assert_eq!(ccv3_embed::count_tokens("hello world", None)?, 2);
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
///
/// # Errors
/// `bad-input` for an unknown encoding; `tokenizer-unavailable` when it cannot be loaded.
pub fn count_tokens(text: &str, encoding: Option<&str>) -> Result<usize, EmbedError> {
    Ok(tokenizer(encoding)?.count(text))
}
