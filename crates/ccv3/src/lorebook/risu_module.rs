//! RisuAI modules (read-only): a module's lorebook read as a lorebook, everything else it holds
//! kept in the book's `extensions.risuai`.
//!
//! A RisuAI module (`src/ts/process/modules.ts`, `RisuModule`) has `name`, `description`, `id`,
//! `lorebook` (RisuAI lorebook entries, as in [`super::risu`]), `regex` (regex scripts),
//! `trigger` (trigger scripts), `cjs`, `assets` (`[name, path, ext]` triples), `namespace`,
//! `lowLevelAccess`, `hideIcon`, ... RisuAI writes it in two shapes:
//! - JSON, older versions: the module's fields with `"type": "risuModule"` beside them;
//! - `.risum` ([`super::risum`]), and the JSON inside it: `{"type": "risuModule", "module":
//!   {...}}`.
//!
//! | RisuAI module | V3 lorebook |
//! |---|---|
//! | `name` | `name` |
//! | `description` | `description` |
//! | `lorebook` | `entries` (each read as [`super::risu`] reads RisuAI entries) |
//!
//! Everything else is kept in the book's `extensions.risuai` in the shape it came in: the
//! top-level fields (`type`, ...) there, and for the wrapped shape the module's other fields
//! (`id`, `regex`, `trigger`, `cjs`, `assets`, ...) under `extensions.risuai.module`.

use crate::model::fields::{self, Object, Repairs};
use crate::{Diagnostic, Lorebook, Severity};
use serde_json::Value;

pub use super::risu::NAMESPACE;

/// True for a RisuAI module object: `"type": "risuModule"`.
pub(crate) fn is_risu_module(obj: &Object) -> bool {
    obj.get("type").and_then(Value::as_str) == Some("risuModule")
}

/// Reads a RisuAI module object (either shape) into a V3 lorebook.
///
/// ```
/// let obj = serde_json::json!({"type": "risuModule", "name": "Dragons", "id": "m1", "lorebook": [
///     {"key": "dragon", "secondkey": "", "insertorder": 100, "comment": "", "content": "Dragons breathe fire.",
///      "mode": "normal", "alwaysActive": false, "selective": false}]});
/// let serde_json::Value::Object(obj) = obj else { unreachable!() };
/// let book = ccv3::lorebook::risu_module::from_risu_module(obj, &mut Vec::new());
/// assert_eq!(book.name.as_deref(), Some("Dragons"));
/// assert_eq!(book.entries[0].content, "Dragons breathe fire.");
/// // The module's other parts are kept.
/// assert!(book.extensions.contains_key("risuai"));
/// ```
pub fn from_risu_module(obj: Object, diags: &mut Vec<Diagnostic>) -> Lorebook {
    let mut r = Repairs {
        diags,
        must: Severity::Warning,
    };
    let mut book = Lorebook::default();
    let mut top = obj;
    let wrapped = matches!(top.get("module"), Some(Value::Object(_)));
    let (module, prefix) = if wrapped {
        match top.shift_remove("module") {
            Some(Value::Object(m)) => (m, "module"),
            _ => (Object::new(), "module"),
        }
    } else {
        (std::mem::take(&mut top), "")
    };
    let mut rest = Object::new();
    for (k, v) in module {
        let p = fields::join(prefix, &k);
        match (k.as_str(), v) {
            ("name", v @ Value::String(_)) => book.name = fields::string(v, &p, &mut r),
            ("description", v @ Value::String(_)) => {
                book.description = fields::string(v, &p, &mut r);
            }
            ("lorebook", Value::Array(items)) => super::read_entry_list(
                &mut book.entries,
                items,
                &p,
                "RisuAI module lorebook entry",
                &mut r,
                |e, _, ip, r| super::risu::entry(e, ip, r),
            ),
            (_, v) => {
                rest.insert(k, v);
            }
        }
    }
    if wrapped {
        top.insert("module".into(), Value::Object(rest));
    } else {
        top = rest;
    }
    super::stash_leftovers(&mut book.extensions, top, NAMESPACE);
    book
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn risu_module_both_shapes_read_their_lorebook_and_keep_the_rest() {
        // RisuAI src/ts/process/modules.ts: exportModule wrote `{...module, type}` as JSON;
        // the .risum main block is `{type: 'risuModule', module}`.
        let entry = json!({"key": "gate", "secondkey": "", "insertorder": 100, "comment": "Gate",
                           "content": "The gate is shut.", "mode": "normal",
                           "alwaysActive": false, "selective": false});
        for (v, wrapped) in [
            (
                json!({"name": "M", "description": "D", "id": "u1", "lorebook": [entry.clone()],
                       "regex": [{"comment": "r", "in": "a", "out": "b", "type": "editoutput"}],
                       "type": "risuModule"}),
                false,
            ),
            (
                json!({"type": "risuModule", "module": {"name": "M", "description": "D",
                       "id": "u1", "lorebook": [entry.clone()], "trigger": [], "regex": [
                       {"comment": "r", "in": "a", "out": "b", "type": "editoutput"}]}}),
                true,
            ),
        ] {
            let Value::Object(o) = v else { panic!() };
            assert!(is_risu_module(&o));
            let mut d = Vec::new();
            let book = from_risu_module(o, &mut d);
            assert!(d.is_empty(), "{d:?}");
            assert_eq!(book.name.as_deref(), Some("M"));
            assert_eq!(book.description.as_deref(), Some("D"));
            assert_eq!(book.entries[0].keys, ["gate"]);
            let kept = &book.extensions[NAMESPACE];
            assert_eq!(kept["type"], "risuModule");
            let module = if wrapped { &kept["module"] } else { kept };
            assert_eq!(module["id"], "u1");
            assert_eq!(module["regex"][0]["in"], "a");
        }
    }
}
