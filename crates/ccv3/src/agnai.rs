//! Agnai character exports (`{"kind": "character", ...}`): read as a character card, as Agnai's
//! own V2 export writes them.
//!
//! | Agnai | card |
//! |---|---|
//! | `name` | `name` |
//! | `persona` (`text`: its text; other kinds: one `key: value, value` line per attribute) | `description`, and the persona itself in `extensions.agnai.persona` (Agnai's V2 export keeps it there too) |
//! | `greeting` / `alternateGreetings` | `first_mes` / `alternate_greetings` |
//! | `scenario` / `sampleChat` | `scenario` / `mes_example` |
//! | `description` | `creator_notes` |
//! | `systemPrompt` / `postHistoryInstructions` | `system_prompt` / `post_history_instructions` |
//! | `creator` / `characterVersion` / `tags` | `creator` / `character_version` / `tags` |
//! | `characterBook` (an Agnai memory book) | `character_book` ([`crate::lorebook::agnai`]) |
//! | `extensions` | `extensions` |
//!
//! Every other field (`_id`, `userId`, `avatar`, `voice`, `insert`, ...) is kept in
//! `extensions.agnai`.

use crate::diag::Diagnostic;
use crate::error::Result;
use crate::model::Card;
use serde_json::{json, Map, Value};

/// True when a JSON object is an Agnai character: `kind: "character"`, or Agnai's native fields
/// (`name`, `persona`, `greeting`, `scenario`, `sampleChat`) without a `spec`.
///
/// ```
/// let serde_json::Value::Object(obj) = serde_json::json!({"kind": "character", "name": "Ember"}) else { unreachable!() };
/// assert!(ccv3::agnai::is_agnai_character(&obj));
/// ```
pub fn is_agnai_character(obj: &Map<String, Value>) -> bool {
    if obj.contains_key("spec") {
        return false;
    }
    obj.get("kind").and_then(Value::as_str) == Some("character")
        || ["name", "persona", "greeting", "scenario", "sampleChat"]
            .iter()
            .all(|k| obj.contains_key(*k))
}

/// An Agnai persona as description text.
fn persona_text(persona: &Value) -> String {
    let attrs = persona.get("attributes").and_then(Value::as_object);
    let list = |v: &Value| -> Vec<String> {
        match v {
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            Value::String(s) => vec![s.clone()],
            _ => Vec::new(),
        }
    };
    match (persona.get("kind").and_then(Value::as_str), attrs) {
        (Some("text"), Some(a)) => a.get("text").map(list).unwrap_or_default().join("\n"),
        (_, Some(a)) => a
            .iter()
            .map(|(k, v)| format!("{k}: {}", list(v).join(", ")))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Reads an Agnai character object as a card (see the module docs), recording repairs and a
/// `agnai-character` info in `diags`.
///
/// # Errors
///
/// Those of [`Card::from_json`] (none for an object).
///
/// ```
/// let obj = serde_json::json!({"kind": "character", "name": "Ember",
///     "persona": {"kind": "text", "attributes": {"text": ["A fire spirit."]}}, "greeting": "Hi."});
/// let serde_json::Value::Object(obj) = obj else { unreachable!() };
/// assert!(ccv3::agnai::is_agnai_character(&obj));
/// let card = ccv3::agnai::card_from_agnai(obj, &mut Vec::new())?;
/// assert_eq!((card.data.name.as_str(), card.data.first_mes.as_str()), ("Ember", "Hi."));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn card_from_agnai(obj: Map<String, Value>, diags: &mut Vec<Diagnostic>) -> Result<Card> {
    let mut rest = obj;
    let mut take = |k: &str| rest.shift_remove(k);
    let s = |v: Option<Value>| match v {
        Some(Value::String(s)) => s,
        _ => String::new(),
    };
    let persona = take("persona");
    let description = persona.as_ref().map(persona_text).unwrap_or_default();
    let mut data = json!({
        "name": s(take("name")),
        "description": description,
        "personality": "",
        "scenario": s(take("scenario")),
        "first_mes": s(take("greeting")),
        "mes_example": s(take("sampleChat")),
        "creator_notes": s(take("description")),
        "system_prompt": s(take("systemPrompt")),
        "post_history_instructions": s(take("postHistoryInstructions")),
        "alternate_greetings": take("alternateGreetings").unwrap_or_else(|| json!([])),
        "tags": take("tags").unwrap_or_else(|| json!([])),
        "creator": s(take("creator")),
        "character_version": s(take("characterVersion")),
        "extensions": take("extensions").filter(Value::is_object).unwrap_or_else(|| json!({})),
    });
    let book = take("characterBook");
    if let Some(Value::Object(b)) = book {
        let book = crate::lorebook::agnai::from_agnai(b, diags);
        data["character_book"] = book.to_json();
    }
    let mut kept = rest;
    kept.shift_remove("kind");
    if let Some(p) = persona {
        kept.insert("persona".into(), p);
    }
    if !kept.is_empty() {
        data["extensions"]["agnai"] = Value::Object(kept);
    }
    diags.push(Diagnostic::info(
        "agnai-character",
        "",
        "read an Agnai character export as a card, mapped as Agnai's own V2 export",
    ));
    Card::from_json(
        json!({"spec": "chara_card_v2", "spec_version": "2.0", "data": data}),
        diags,
    )
}
