//! Decorators in list form (SPEC_V3 "Decorators"), for `parseDecorators` and
//! `serializeDecorators`.

use crate::EmbedError;
use ccv3::decorator::{self, Decorator};
use serde::Deserialize;
use serde_json::{json, Value};

/// Reads the decorator lines at the top of an entry's `content`:
/// `{"decorators": [...], "content": body}` (see [`ccv3::decorator::Decorator`] for the shape
/// of a decorator).
///
/// ```
/// let v = ccv3_embed::parse_decorators("@@depth 4\n@@x_risu\n@@@role system\nThe castle.");
/// assert_eq!(v, serde_json::json!({"decorators": [
///     {"type": "depth", "value": 4},
///     {"type": "unknown", "name": "x_risu", "fallbacks": [{"type": "role", "value": "system"}]}
/// ], "content": "The castle."}));
/// ```
pub fn parse_decorators(content: &str) -> Value {
    let (list, body) = decorator::parse_list(content);
    json!({ "decorators": list, "content": body })
}

/// Writes `decorators` (a list as [`parse_decorators`] returns it) as `@@` lines above
/// `content`; `parse_decorators(serialize_decorators(d, c))` gives back `d` and `c`.
///
/// # Errors
/// `bad-input` when `decorators` is not a list of decorators (an unknown `type`, a value of the
/// wrong type, a flag with a value).
///
/// ```
/// let decorators = serde_json::json!([{"type": "depth", "value": 4}]);
/// let content = ccv3_embed::serialize_decorators(&decorators, "The castle.")?;
/// assert_eq!(content, "@@depth 4\nThe castle.");
/// # Ok::<(), ccv3_embed::EmbedError>(())
/// ```
pub fn serialize_decorators(decorators: &Value, content: &str) -> Result<String, EmbedError> {
    let list = match decorators {
        Value::Null => Vec::new(),
        v => Vec::<Decorator>::deserialize(v)
            .map_err(|e| EmbedError::bad_input(format!("decorators: {e}")))?,
    };
    Ok(decorator::serialize(&list, content))
}
