//! Backyard AI's legacy PNG exports (the Faraday era, before `.byaf`): read as a card.
//!
//! Faraday's "Export to PNG" wrote no `chara` text chunk: the character is JSON in the PNG's
//! EXIF (`eXIf` chunk), in the `UserComment` tag (`ASCII` charset), base64-encoded in later
//! versions and plain in early ones ([`crate::legacy::read_png_exif_card`]). The JSON is
//! `{"version": ..., "character": {...}}` with the character's `aiName`, `aiDisplayName`,
//! `aiPersona`, `basePrompt`, `scenario`, `firstMessage`, `customDialogue` and `loreItems`
//! (`key`/`value` pairs), as the public converters of these files read them.
//!
//! | Faraday | card |
//! |---|---|
//! | `aiName` (else `aiDisplayName`) | `name` |
//! | `aiPersona` | `description` |
//! | `scenario` | `scenario` |
//! | `firstMessage` | `first_mes` |
//! | `customDialogue` | `mes_example` |
//! | `basePrompt` | `system_prompt` |
//! | `loreItems` (`key` split on commas, `value`) | `character_book` entries, in order |
//!
//! Backyard's `{character}`/`{user}` placeholders (and `#{character}:` line starts) become
//! `{{char}}`/`{{user}}` ([`crate::byaf::macros`], as for `.byaf` archives). Every other field
//! (`aiDisplayName`, ids, dates, model settings, the top-level `version`) is kept in
//! `data.extensions.faraday`, and so is the text of a mapped field as written when the
//! placeholders changed it.

use crate::byaf::macros;
use crate::diag::Diagnostic;
use crate::error::Result;
use crate::model::Card;
use serde_json::{json, Map, Value};

/// The `extensions` key Faraday leftovers are kept under.
pub const NAMESPACE: &str = "faraday";

/// True for a Faraday character export: a `character` object with `aiName` or `aiPersona`.
///
/// ```
/// assert!(ccv3::faraday::is_faraday_character(&serde_json::json!({"character": {"aiName": "Ember"}})));
/// assert!(!ccv3::faraday::is_faraday_character(&serde_json::json!({"name": "Ember"})));
/// ```
pub fn is_faraday_character(v: &Value) -> bool {
    v.get("character")
        .and_then(Value::as_object)
        .is_some_and(|c| c.contains_key("aiName") || c.contains_key("aiPersona"))
}

/// Reads a Faraday character export as a card (see the module docs), adding a
/// `faraday-png` info to `diags`.
///
/// # Errors
///
/// Those of [`Card::from_json`] (none for an object).
///
/// ```
/// let v = serde_json::json!({"version": 1, "character": {"aiName": "Ember", "aiPersona": "A fire spirit.",
///     "firstMessage": "Hi.", "loreItems": [{"key": "dragon", "value": "Dragons breathe fire."}]}});
/// assert!(ccv3::faraday::is_faraday_character(&v));
/// let card = ccv3::faraday::card_from_faraday(v, &mut Vec::new())?;
/// assert_eq!(card.data.name, "Ember");
/// assert_eq!(card.data.character_book.unwrap().entries[0].keys, ["dragon"]);
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn card_from_faraday(v: Value, diags: &mut Vec<Diagnostic>) -> Result<Card> {
    let Value::Object(mut top) = v else {
        return Card::from_json(v, diags);
    };
    let mut character = match top.shift_remove("character") {
        Some(Value::Object(c)) => c,
        _ => Map::new(),
    };
    let mut kept = Map::new();
    let mut text =
        |key: &str, c: &mut Map<String, Value>| crate::byaf::take_text(c, key, &mut kept, macros);
    let mut name = text("aiName", &mut character);
    if name.is_empty() {
        name = character
            .get("aiDisplayName")
            .and_then(Value::as_str)
            .map(macros)
            .unwrap_or_default();
    }
    let description = text("aiPersona", &mut character);
    let scenario = text("scenario", &mut character);
    let first_mes = text("firstMessage", &mut character);
    let mes_example = text("customDialogue", &mut character);
    let system_prompt = text("basePrompt", &mut character);
    let lore = character.shift_remove("loreItems");
    let entries: Vec<Value> = match &lore {
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let field =
                    |k: &str| macros(item.get(k).and_then(Value::as_str).unwrap_or_default());
                let keys: Vec<String> = field("key")
                    .split(',')
                    .map(str::trim)
                    .filter(|k| !k.is_empty())
                    .map(str::to_string)
                    .collect();
                json!({"keys": keys, "content": field("value"), "extensions": {},
                       "enabled": true, "insertion_order": i, "use_regex": false})
            })
            .collect(),
        _ => Vec::new(),
    };
    if let Some(other @ (Value::Object(_) | Value::String(_) | Value::Number(_))) = lore {
        kept.insert("loreItems".into(), other);
    }
    let mut data = json!({
        "name": name,
        "description": description,
        "personality": "",
        "scenario": scenario,
        "first_mes": first_mes,
        "mes_example": mes_example,
        "creator_notes": "",
        "system_prompt": system_prompt,
        "post_history_instructions": "",
        "alternate_greetings": [],
        "tags": [],
        "creator": "",
        "character_version": "",
        "extensions": {},
    });
    if !entries.is_empty() {
        data["character_book"] = json!({"extensions": {}, "entries": entries});
    }
    kept.extend(character);
    let mut ns = Map::new();
    if !kept.is_empty() {
        ns.insert("character".into(), Value::Object(kept));
    }
    ns.extend(top);
    if !ns.is_empty() {
        data["extensions"][NAMESPACE] = Value::Object(ns);
    }
    diags.push(Diagnostic::info(
        "faraday-png",
        "",
        "read a Backyard AI (Faraday) PNG export: the character in the PNG's EXIF UserComment",
    ));
    Card::from_json(
        json!({"spec": "chara_card_v2", "spec_version": "2.0", "data": data}),
        diags,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faraday_maps_fields_and_keeps_the_rest() {
        let v = json!({"version": 1, "character": {"aiName": "Wren", "aiDisplayName": "Wren the Keeper",
            "aiPersona": "{character} keeps the light for {user}.", "basePrompt": "Stay in character.",
            "scenario": "A storm.", "firstMessage": "Hello, {user}.",
            "customDialogue": "#{user}: Lamp lit?\n#{character}: Always.",
            "loreItems": [{"key": "lamp, lens", "value": "The lens is old."}],
            "temperature": 0.8}});
        assert!(is_faraday_character(&v));
        let mut d = Vec::new();
        let card = card_from_faraday(v, &mut d).unwrap();
        let c = &card.data;
        assert_eq!(c.name, "Wren");
        assert_eq!(c.description, "{{char}} keeps the light for {{user}}.");
        assert_eq!(c.mes_example, "{{user}}: Lamp lit?\n{{char}}: Always.");
        assert_eq!(c.system_prompt, "Stay in character.");
        let book = c.character_book.as_ref().unwrap();
        assert_eq!(book.entries[0].keys, ["lamp", "lens"]);
        let kept = &c.extensions[NAMESPACE];
        assert_eq!(kept["version"], 1);
        assert_eq!(kept["character"]["aiDisplayName"], "Wren the Keeper");
        assert_eq!(kept["character"]["temperature"], 0.8);
        assert_eq!(
            kept["character"]["aiPersona"],
            "{character} keeps the light for {user}."
        );
        assert!(d.iter().any(|d| d.code == "faraday-png"));
        assert!(!is_faraday_character(&json!({"character": "x"})));
    }
}
