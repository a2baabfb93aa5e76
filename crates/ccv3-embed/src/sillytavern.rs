//! SillyTavern's World Info settings as scan options (issue 28: the World Info inspector of the
//! SillyTavern extension passes SillyTavern's own values here and scans with what comes back).
//!
//! The rules are SillyTavern 1.19.0's (`public/scripts/world-info.js`): `checkWorldInfo` takes
//! its budget as `Math.round(world_info_budget * maxContext / 100) || 1`, then
//! `world_info_budget_cap` when that is above 0 and the budget exceeds it;
//! `updateWorldInfoSettings` reads the numbers with `Number(value)` and the switches with
//! `Boolean(value)`; `world_info_insertion_strategy` is `evenly: 0, character_first: 1,
//! global_first: 2`. The budget's tokens are counted by the server's tokenizer for the model,
//! which for a model it does not know is gpt-3.5-turbo's (`cl100k`).

use crate::opts::get;
use crate::EmbedError;
use serde_json::{json, Map, Value};

/// The scan options (`compat: "sillytavern"`, `scanDepth`, `recursive`, `budget`, ...) of
/// SillyTavern's World Info settings.
///
/// `request`: `{settings, maxContext, tokenizerModel?, trigger?}` where `settings` is what
/// SillyTavern's `getWorldInfoSettings()` returns (`world_info_depth`, `world_info_budget`,
/// ...), `maxContext` the context size its generation gave the scan (its
/// `getMaxPromptTokens()`), `tokenizerModel` the model its tokenizer counts for
/// (`getTokenizerModel()`: `gpt-4o`, `o1`, `gpt-4.1`, `gpt-5` ... count with `o200k`, any other
/// with `cl100k`), `trigger` the generation type. Missing settings take SillyTavern's defaults.
///
/// # Errors
/// `bad-input` when `request` or `settings` is not an object.
///
/// ```
/// let opts = ccv3_embed::sillytavern_scan_options(&serde_json::json!({
///     "settings": {"world_info_depth": 4, "world_info_budget": 25},
///     "maxContext": 8192, "tokenizerModel": "gpt-4o"}))?;
/// assert_eq!(opts["compat"], "sillytavern");
/// assert_eq!(opts["scanDepth"], 4);
/// assert_eq!(opts["budget"], 2048); // 25% of 8,192
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn sillytavern_scan_options(request: &Value) -> Result<Value, EmbedError> {
    let req = crate::opts::object(request, "the request")?;
    let settings = match get(req, "settings") {
        None => None,
        Some(v @ Value::Object(_)) => Some(v),
        Some(_) => return Err(EmbedError::bad_input("settings must be an object")),
    };
    let num = |key: &str, default: f64| get(settings, key).map_or(default, js_number);
    let flag = |key: &str, default: bool| get(settings, key).map_or(default, js_truthy);
    let max_context = get(req, "max_context").map_or(0.0, js_number);

    let mut budget = js_round(num("world_info_budget", 25.0) * max_context / 100.0);
    if budget == 0.0 || budget.is_nan() {
        budget = 1.0;
    }
    let cap = num("world_info_budget_cap", 0.0);
    if cap > 0.0 && budget > cap {
        budget = cap;
    }
    let strategy = match num("world_info_character_strategy", 1.0) as i64 {
        1 => "character-first",
        2 => "global-first",
        _ => "evenly",
    };
    let model = get(req, "tokenizer_model")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut out = Map::new();
    out.insert("compat".into(), json!("sillytavern"));
    out.insert(
        "scanDepth".into(),
        json!(count(num("world_info_depth", 2.0))),
    );
    out.insert(
        "recursive".into(),
        json!(flag("world_info_recursive", false)),
    );
    out.insert("budget".into(), json!(count(budget)));
    out.insert(
        "minActivations".into(),
        json!(count(num("world_info_min_activations", 0.0))),
    );
    out.insert(
        "minActivationsDepthMax".into(),
        json!(count(num("world_info_min_activations_depth_max", 0.0))),
    );
    out.insert(
        "maxRecursionSteps".into(),
        json!(count(num("world_info_max_recursion_steps", 0.0))),
    );
    out.insert(
        "includeNames".into(),
        json!(flag("world_info_include_names", true)),
    );
    out.insert(
        "wholeWords".into(),
        json!(flag("world_info_match_whole_words", false)),
    );
    out.insert(
        "caseSensitive".into(),
        json!(flag("world_info_case_sensitive", false)),
    );
    out.insert(
        "groupScoring".into(),
        json!(flag("world_info_use_group_scoring", false)),
    );
    out.insert("strategy".into(), json!(strategy));
    out.insert("tokenizer".into(), json!(tokenizer_of(model)));
    if let Some(t) = get(req, "trigger").and_then(Value::as_str) {
        out.insert("trigger".into(), json!(t));
    }
    Ok(Value::Object(out))
}

/// The encoding SillyTavern's server counts `model`'s tokens with (its OpenAI tokenizers:
/// the o200k family for GPT-4o and later, cl100k for the rest and for unknown models).
fn tokenizer_of(model: &str) -> &'static str {
    let m = model.to_ascii_lowercase();
    let o200k = [
        "gpt-4o",
        "chatgpt-4o",
        "gpt-4.1",
        "gpt-4.5",
        "gpt-5",
        "o1",
        "o3",
        "o4",
    ];
    if o200k.iter().any(|p| m.starts_with(p)) {
        "o200k"
    } else {
        "cl100k"
    }
}

/// JavaScript's `Number(value)` for the JSON values a settings file holds.
fn js_number(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Null => 0.0,
        Value::String(s) if s.trim().is_empty() => 0.0,
        Value::String(s) => s.trim().parse().unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

/// JavaScript's `Boolean(value)`.
fn js_truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// JavaScript's `Math.round` (halves round up).
fn js_round(x: f64) -> f64 {
    (x + 0.5).floor()
}

/// A setting as a count: negative and NaN are 0, fractions truncated.
fn count(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= u64::MAX as f64 {
        u64::MAX
    } else {
        x as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // SillyTavern 1.19.0 public/scripts/world-info.js, checkWorldInfo:
    // `let budget = Math.round(world_info_budget * maxContext / 100) || 1;` then the cap.
    #[test]
    fn budget_is_a_share_of_the_context_then_capped() {
        let o = sillytavern_scan_options(&json!({"settings": {"world_info_budget": 25},
            "maxContext": 3690}))
        .unwrap();
        assert_eq!(o["budget"], 923); // 922.5 rounds up
        let o = sillytavern_scan_options(&json!({"settings": {"world_info_budget": 25,
            "world_info_budget_cap": 500}, "maxContext": 3690}))
        .unwrap();
        assert_eq!(o["budget"], 500);
        let o = sillytavern_scan_options(&json!({"settings": {"world_info_budget": 0},
            "maxContext": 3690}))
        .unwrap();
        assert_eq!(o["budget"], 1); // `|| 1`
    }

    // world-info.js: `world_info_depth = 2`, `world_info_match_whole_words = false`,
    // `world_info_include_names = true`, `world_info_character_strategy = character_first` (1).
    #[test]
    fn defaults_and_number_strings_as_sillytavern_reads_them() {
        let o = sillytavern_scan_options(&json!({"settings": {}, "maxContext": 100})).unwrap();
        assert_eq!(o["compat"], "sillytavern");
        assert_eq!(o["scanDepth"], 2);
        assert_eq!(o["wholeWords"], false);
        assert_eq!(o["includeNames"], true);
        assert_eq!(o["strategy"], "character-first");
        assert_eq!(o["tokenizer"], "cl100k");
        let o = sillytavern_scan_options(&json!({"settings": {"world_info_depth": "5",
            "world_info_recursive": 1, "world_info_character_strategy": "0"},
            "tokenizerModel": "gpt-4o-mini", "trigger": "swipe"}))
        .unwrap();
        assert_eq!(o["scanDepth"], 5);
        assert_eq!(o["recursive"], true);
        assert_eq!(o["strategy"], "evenly");
        assert_eq!(o["tokenizer"], "o200k");
        assert_eq!(o["trigger"], "swipe");
    }

    #[test]
    fn wrong_shapes_are_bad_input() {
        assert_eq!(
            sillytavern_scan_options(&json!(3)).unwrap_err().code,
            "bad-input"
        );
        assert_eq!(
            sillytavern_scan_options(&json!({"settings": []}))
                .unwrap_err()
                .code,
            "bad-input"
        );
    }
}
