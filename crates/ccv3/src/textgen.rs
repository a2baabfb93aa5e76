//! text-generation-webui characters: the YAML files it keeps in `characters/` (and the same
//! fields in JSON), read as a card the way the application means them.
//!
//! text-generation-webui (`modules/chat.py`, `load_character`; `docs/Custom-chat-characters.md`)
//! reads a mapping with
//!
//! | text-generation-webui | meaning there | card |
//! |---|---|---|
//! | `name`, else `bot`, `<\|bot\|>`, `char_name` (the first that is not empty) | the character's name | `name` |
//! | `context` | the text at the top of the prompt (description and personality) | `description` (as SillyTavern's YAML import maps it) |
//! | `greeting` | the first message | `first_mes` |
//! | `example_dialogue` (older versions) | example messages, `<START>` between chats | `mes_example` |
//! | `your_name`, `user`, `<\|user\|>` | the user's name (overrides the UI's) | kept in `extensions.textgen` |
//!
//! It replaces `{{char}}`/`<BOT>` with the character's name and `{{user}}`/`<USER>` with the
//! user's when it loads the file; a card means the same by `{{char}}` and `{{user}}`, so `<BOT>`
//! and `<USER>` become those macros (the text as written is kept in `extensions.textgen`). Every
//! field without a card field (`turn_template`, the unused name keys, ...) is kept in
//! `extensions.textgen`, so nothing is lost. It writes characters as YAML with `name`,
//! `greeting` and `context` only (`generate_character_yaml`).
//!
//! Pygmalion-style files (`char_name`, `char_persona`, `char_greeting`, `world_scenario`,
//! `example_dialogue`; text-generation-webui builds its context from them) are V1-era cards: in
//! YAML they are read as the same fields in JSON are ([`crate::Card::from_json`]).

use crate::diag::Diagnostic;
use crate::error::Result;
use crate::model::Card;
use serde_json::{json, Map, Value};

/// The `extensions` key text-generation-webui leftovers are kept under.
pub const NAMESPACE: &str = "textgen";

/// The keys text-generation-webui takes the character's name from, in its order.
const NAME_KEYS: [&str; 4] = ["name", "bot", "<|bot|>", "char_name"];

/// True when a mapping is a text-generation-webui character in its own shape: a name key and
/// `context` or `greeting`, and neither a card's `spec`/`data` nor a card's greeting field
/// (`first_mes`, Pygmalion's `char_greeting`), nor Agnai's `kind`/`persona`
/// ([`crate::agnai`]).
///
/// ```
/// let serde_json::Value::Object(obj) = serde_json::json!({"name": "Ember", "context": "A fire spirit.", "greeting": "Hi."}) else { unreachable!() };
/// assert!(ccv3::textgen::is_textgen_character(&obj));
/// ```
pub fn is_textgen_character(obj: &Map<String, Value>) -> bool {
    let named = NAME_KEYS.iter().any(|k| obj.contains_key(*k));
    named
        && !is_textgen_instruction_template(obj)
        && (obj.contains_key("context") || obj.contains_key("greeting"))
        && ![
            "spec",
            "data",
            "first_mes",
            "char_greeting",
            "char_persona",
            "kind",
            "persona",
        ]
        .iter()
        .any(|k| obj.contains_key(*k))
}

/// True for a text-generation-webui instruction template (`instruction-following/*.yaml`):
/// `instruction_template` (a Jinja template), or the older `user`/`bot`/`turn_template`
/// prompts without a character's `name` or `greeting`. Not a character.
///
/// ```
/// let obj = serde_json::json!({"instruction_template": "{%- for message in messages %}{{ message['content'] }}{%- endfor %}"});
/// let serde_json::Value::Object(obj) = obj else { unreachable!() };
/// // An instruction template, not a character: ccv3 says so instead of reading a nameless card.
/// assert!(ccv3::textgen::is_textgen_instruction_template(&obj));
/// assert!(!ccv3::textgen::is_textgen_character(&obj));
/// ```
pub fn is_textgen_instruction_template(obj: &Map<String, Value>) -> bool {
    obj.contains_key("instruction_template")
        || (obj.contains_key("turn_template")
            && !obj.contains_key("name")
            && !obj.contains_key("greeting"))
}

/// text-generation-webui's `<BOT>`/`<USER>` as the card macros `{{char}}`/`{{user}}`.
fn card_macros(text: &str) -> String {
    text.replace("<BOT>", "{{char}}")
        .replace("<USER>", "{{user}}")
}

/// Reads a text-generation-webui character mapping as a card (see the module docs), adding a
/// `textgen-character` info to `diags`.
///
/// # Errors
///
/// Those of [`Card::from_json`] (none for a mapping).
///
/// ```
/// let obj = serde_json::json!({"name": "Ember", "context": "A fire spirit.", "greeting": "Hi."});
/// let serde_json::Value::Object(obj) = obj else { unreachable!() };
/// assert!(ccv3::textgen::is_textgen_character(&obj));
/// let card = ccv3::textgen::card_from_textgen(obj, &mut Vec::new())?;
/// assert_eq!((card.data.description.as_str(), card.data.first_mes.as_str()), ("A fire spirit.", "Hi."));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn card_from_textgen(obj: Map<String, Value>, diags: &mut Vec<Diagnostic>) -> Result<Card> {
    let mut rest = obj;
    let name_key = NAME_KEYS
        .iter()
        .find(|k| {
            rest.get(**k)
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty())
        })
        .copied();
    let name = name_key
        .and_then(|k| rest.shift_remove(k))
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut kept = Map::new();
    let mut text = |key: &str, rest: &mut Map<String, Value>| {
        crate::byaf::take_text(rest, key, &mut kept, card_macros)
    };
    let description = text("context", &mut rest);
    let first_mes = text("greeting", &mut rest);
    let mes_example = text("example_dialogue", &mut rest);
    let mut data = json!({
        "name": name,
        "description": description,
        "personality": "",
        "scenario": "",
        "first_mes": first_mes,
        "mes_example": mes_example,
        "creator_notes": "",
        "system_prompt": "",
        "post_history_instructions": "",
        "alternate_greetings": [],
        "tags": [],
        "creator": "",
        "character_version": "",
        "extensions": {},
    });
    if let Some(k) = name_key.filter(|k| *k != "name") {
        kept.insert("name_key".into(), Value::String(k.to_string()));
    }
    kept.extend(rest);
    if !kept.is_empty() {
        data["extensions"][NAMESPACE] = Value::Object(kept);
    }
    diags.push(Diagnostic::info(
        "textgen-character",
        "",
        "read a text-generation-webui character: `context` as the description, `greeting` as \
         the first message, `<BOT>`/`<USER>` as {{char}}/{{user}}",
    ));
    Card::from_json(
        json!({"spec": "chara_card_v2", "spec_version": "2.0", "data": data}),
        diags,
    )
}

/// True when `text` reads as a YAML mapping rather than JSON: after blank and `#` comment lines
/// (and an optional `---`), the first line is `key:` something and does not start a JSON value.
pub(crate) fn looks_like_yaml_mapping(text: &str) -> bool {
    let text = text.trim_start_matches('\u{feff}');
    let mut lines = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    let mut first = lines.next();
    if first == Some("---") {
        first = lines.next();
    }
    let Some(line) = first else {
        return false;
    };
    if line.starts_with(['{', '[', ' ', '\t', '-', '"']) {
        return false;
    }
    line.split_once(':')
        .is_some_and(|(key, after)| !key.is_empty() && (after.is_empty() || after.starts_with(' ')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textgen_maps_fields_as_the_application_reads_them() {
        // text-generation-webui modules/chat.py load_character: the name from `name`, else
        // `bot`/`<|bot|>`/`char_name`; `context`, `greeting`; `<BOT>`/`<USER>` replaced.
        let obj = json!({"bot": "Kai", "context": "<BOT> helps <USER>.", "greeting": "Hi {{user}}",
                          "your_name": "Sam", "turn_template": "x"});
        let Value::Object(obj) = obj else { panic!() };
        assert!(is_textgen_character(&obj));
        let mut d = Vec::new();
        let card = card_from_textgen(obj, &mut d).unwrap();
        assert_eq!(card.data.name, "Kai");
        assert_eq!(card.data.description, "{{char}} helps {{user}}.");
        assert_eq!(card.data.first_mes, "Hi {{user}}");
        let kept = &card.data.extensions[NAMESPACE];
        assert_eq!(kept["context"], "<BOT> helps <USER>.");
        assert_eq!(kept["your_name"], "Sam");
        assert_eq!(kept["name_key"], "bot");
        assert!(kept.get("greeting").is_none());
        assert!(d.iter().any(|d| d.code == "textgen-character"));
    }

    #[test]
    fn textgen_detection_leaves_cards_and_pygmalion_files_alone() {
        for v in [
            json!({"name": "A", "first_mes": "hi", "context": "c"}),
            json!({"char_name": "A", "char_persona": "p", "char_greeting": "hi"}),
            json!({"spec": "chara_card_v2", "name": "A", "greeting": "g"}),
            json!({"context": "no name"}),
        ] {
            let Value::Object(o) = v else { panic!() };
            assert!(!is_textgen_character(&o), "{o:?}");
        }
        // Instruction templates (text-generation-webui instruction-following/*.yaml).
        for v in [
            json!({"user": "### Instruction:", "bot": "### Response:",
                   "turn_template": "<|user|>\n<|user-message|>\n<|bot|>", "context": "Below"}),
            json!({"instruction_template": "{%- for message in messages %}..."}),
        ] {
            let Value::Object(o) = v else { panic!() };
            assert!(!is_textgen_character(&o) && is_textgen_instruction_template(&o));
        }
        assert!(looks_like_yaml_mapping("# c\n---\nname: A\n"));
        assert!(looks_like_yaml_mapping("name:\n  A\n"));
        assert!(!looks_like_yaml_mapping("{\"name\": 1}"));
        assert!(!looks_like_yaml_mapping("http://x"));
        assert!(!looks_like_yaml_mapping("plain text"));
    }
}
