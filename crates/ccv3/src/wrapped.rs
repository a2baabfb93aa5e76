//! A card inside a wrapper object: Pygmalion.chat's export.
//!
//! Pygmalion.chat's export endpoint (`server.pygmalion.chat/api/export/character/{id}/v2`)
//! answers `{"character": {"spec": "chara_card_v2", "spec_version": "2.0", "data": {...}}}`,
//! the card under one key, with `data.avatar` the URL of its picture. The applications that
//! import from it take the card from `character` (SillyTavern `src/endpoints/content-manager.js`
//! `downloadPygmalionCharacter`, which hands on the answer itself, wrapper and all, as a `.json`
//! file when the picture cannot be fetched; ChatterUI; character archivers), so ccv3 reads the card inside,
//! with the info `wrapped-card`. Keys beside `character` are kept as the card's own top-level
//! fields ([`crate::Card::extra`]); written back, the card has no wrapper.

use crate::diag::Diagnostic;
use crate::error::Result;
use crate::model::Card;
use serde_json::{Map, Value};

/// The key Pygmalion.chat's export puts the card under.
pub const WRAPPER_KEY: &str = "character";

/// True when `obj` holds a card under [`WRAPPER_KEY`]: an object with `spec` beside a `data`
/// object (a V2 or V3 card), and `obj` has no `spec` or `data` of its own.
///
/// ```
/// let serde_json::Value::Object(obj) = serde_json::json!({"character": {"spec": "chara_card_v2", "data": {}}}) else { unreachable!() };
/// assert!(ccv3::wrapped::is_wrapped_card(&obj));
/// ```
pub fn is_wrapped_card(obj: &Map<String, Value>) -> bool {
    if obj.contains_key("spec") || obj.contains_key("data") {
        return false;
    }
    obj.get(WRAPPER_KEY)
        .and_then(Value::as_object)
        .is_some_and(|card| {
            card.get("spec").is_some_and(Value::is_string)
                && card.get("data").is_some_and(Value::is_object)
        })
}

/// The card inside a wrapper ([`is_wrapped_card`]), read as [`Card::from_json`] reads it. The
/// wrapper's other keys become top-level fields of the card; one the card has itself is left
/// out with a warning.
///
/// # Errors
///
/// Those of [`Card::from_json`].
///
/// ```
/// let obj = serde_json::json!({"character": {"spec": "chara_card_v2", "spec_version": "2.0",
///     "data": {"name": "Ember"}}});
/// let serde_json::Value::Object(obj) = obj else { unreachable!() };
/// assert!(ccv3::wrapped::is_wrapped_card(&obj));
/// let mut diags = Vec::new();
/// let card = ccv3::wrapped::card_from_wrapped(obj, &mut diags)?;
/// assert_eq!(card.data.name, "Ember");
/// assert!(diags.iter().any(|d| d.code == "wrapped-card"));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn card_from_wrapped(mut obj: Map<String, Value>, diags: &mut Vec<Diagnostic>) -> Result<Card> {
    let inner = obj.shift_remove(WRAPPER_KEY).unwrap_or(Value::Null);
    let mut card = Card::from_json(inner, diags)?;
    diags.push(Diagnostic::info(
        "wrapped-card",
        "",
        format!(
            "read the card inside the `{WRAPPER_KEY}` key (Pygmalion.chat's export); written \
             back without the wrapper"
        ),
    ));
    for (key, value) in obj {
        if matches!(key.as_str(), "spec" | "spec_version" | "data") || card.extra.contains_key(&key)
        {
            diags.push(Diagnostic::warning(
                "wrapped-card",
                key.clone(),
                format!(
                    "`{key}` beside the wrapped card clashes with the card's own `{key}`: left out"
                ),
            ));
        } else {
            card.extra.insert(key, value);
        }
    }
    Ok(card)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn wrapped_pygmalion_export_reads_the_card_inside() {
        // Pygmalion.chat /api/export/character/{id}/v2 (as SillyTavern content-manager.js reads it).
        let w = obj(
            json!({"character": {"spec": "chara_card_v2", "spec_version": "2.0",
            "data": {"name": "Iris", "avatar": "https://example.invalid/a.png"}}, "note": 1}),
        );
        assert!(is_wrapped_card(&w));
        let mut diags = Vec::new();
        let card = card_from_wrapped(w, &mut diags).unwrap();
        assert_eq!(card.data.name, "Iris");
        assert_eq!(card.data.extra["avatar"], "https://example.invalid/a.png");
        assert_eq!(card.extra["note"], 1);
        assert!(diags.iter().any(|d| d.code == "wrapped-card"));
    }

    #[test]
    fn wrapped_card_needs_spec_and_data_inside_and_no_card_outside() {
        for v in [
            json!({"character": {"name": "A"}}),
            json!({"character": {"spec": "chara_card_v2", "data": "x"}}),
            json!({"character": "A"}),
            json!({"spec": "chara_card_v2", "data": {}, "character": {"spec": "x", "data": {}}}),
        ] {
            assert!(!is_wrapped_card(&obj(v.clone())), "{v}");
        }
    }
}
