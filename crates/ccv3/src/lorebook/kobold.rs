//! KoboldAI world info import (read-only): KoboldAI (United) and KoboldAI Lite story saves,
//! whose `worldinfo` list is the story's lorebook, and KoboldAI Lite's world info export (that
//! list alone, a JSON array).
//!
//! A story save is `{"gamestarted", "prompt", "memory", "authorsnote", "actions", ...,
//! "worldinfo": [...], "wifolders_d": {uid: {"name", "collapsed"}}, "wifolders_l": [uid, ...]}`.
//! Each world info entry has `key` and `keysecondary` (comma-separated text), `content`,
//! `comment`, `folder` (a folder's uid, or null), `selective` (both a key and a secondary key
//! must match) and `constant` (always inserted); KoboldAI Lite adds `keyanti` (keys that stop
//! the entry), `probability` (0-100), `wigroup` and `widisabled`. KoboldAI inserts the triggered
//! entries in list order, and matches keys as plain text, ignoring case.
//!
//! | KoboldAI | V3 entry |
//! |---|---|
//! | `key` | `keys` (split on commas, trimmed, empty parts dropped) |
//! | `keysecondary` | `secondary_keys` (same) |
//! | `content` | `content` |
//! | `comment` | `comment` and `name` |
//! | `selective` / `constant` | `selective` / `constant` |
//! | `widisabled` | `!enabled` |
//! | place in the list | `insertion_order` (0, 1, 2, ...), as KoboldAI inserts them |
//! | `uid` (when there) | `id` |
//!
//! Everything else is kept: entry fields (`folder`, `keyanti`, `probability`, `wigroup`, `num`,
//! `init`, ...) and `key`/`keysecondary` as written when splitting and joining them with `,`
//! would not give the same text back, in the entry's `extensions.kobold`; the rest of the story
//! save (folders, prompt, memory, actions, settings) in the book's `extensions.kobold`.

use crate::model::fields::{self, Object, Repairs};
use crate::{Diagnostic, Entry, Lorebook, Severity};
use serde_json::{Number, Value};

/// The `extensions` key KoboldAI leftovers are kept under.
pub const NAMESPACE: &str = "kobold";

/// True for an object shaped like a KoboldAI world info entry: `key` as text and `content`, with
/// a field only KoboldAI writes (`keysecondary` as text, `keyanti`, `wigroup`, `widisabled`).
pub(crate) fn is_kobold_entry(v: &Value) -> bool {
    v.as_object().is_some_and(|e| {
        e.get("key").is_some_and(Value::is_string)
            && e.contains_key("content")
            && (e.get("keysecondary").is_some_and(Value::is_string)
                || ["keyanti", "wigroup", "widisabled"]
                    .iter()
                    .any(|k| e.contains_key(*k)))
    })
}

/// True for a KoboldAI story save with world info: a `worldinfo` list beside a story field.
pub(crate) fn is_kobold_story(obj: &Object) -> bool {
    obj.get("worldinfo").is_some_and(Value::is_array)
        && [
            "gamestarted",
            "actions",
            "memory",
            "authorsnote",
            "wifolders_d",
            "prompt",
        ]
        .iter()
        .any(|k| obj.contains_key(*k))
}

/// Reads a KoboldAI story save (an object) or world info export (an array) into a V3 lorebook.
///
/// ```
/// // KoboldAI Lite's world info export: the list alone.
/// let v = serde_json::json!([{"key": "dragon, wyrm", "keysecondary": "", "content": "Dragons breathe fire.",
///     "comment": "", "folder": null, "selective": false, "constant": false}]);
/// let book = ccv3::lorebook::kobold::from_kobold(v, &mut Vec::new());
/// assert_eq!(book.entries[0].keys, ["dragon", "wyrm"]);
/// ```
pub fn from_kobold(v: Value, diags: &mut Vec<Diagnostic>) -> Lorebook {
    let mut r = Repairs {
        diags,
        must: Severity::Warning,
    };
    let mut book = Lorebook::default();
    let (items, path, rest) = match v {
        Value::Array(items) => (items, String::new(), Object::new()),
        Value::Object(mut obj) => {
            let items = match obj.shift_remove("worldinfo") {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            };
            (items, "worldinfo".to_string(), obj)
        }
        _ => (Vec::new(), String::new(), Object::new()),
    };
    let what = "KoboldAI world info entry";
    super::read_entry_list(&mut book.entries, items, &path, what, &mut r, entry);
    super::stash_leftovers(&mut book.extensions, rest, NAMESPACE);
    book
}

fn entry(obj: Object, at: usize, path: &str, r: &mut Repairs) -> Entry {
    let mut e = Entry {
        insertion_order: Number::from(at),
        ..Entry::default()
    };
    let mut ns = Object::new();
    let mut content = None;
    for (k, v) in obj {
        let p = fields::join(path, &k);
        match k.as_str() {
            "key" => e.keys = super::comma_keys_keeping_text(k, v, &p, &mut ns, r),
            "keysecondary" => {
                e.secondary_keys = Some(super::comma_keys_keeping_text(k, v, &p, &mut ns, r))
            }
            "content" => content = fields::string(v, &p, r),
            "comment" => {
                e.comment = fields::string(v, &p, r);
                e.name = e.comment.clone();
            }
            "selective" => e.selective = fields::boolean(v, &p, r),
            "constant" => e.constant = fields::boolean(v, &p, r),
            "widisabled" if v.is_boolean() => e.enabled = v != Value::Bool(true),
            "uid" if v.is_number() || v.is_string() => e.id = Some(v),
            _ => {
                ns.insert(k, v);
            }
        }
    }
    super::finish_imported_entry(&mut e, content, ns, NAMESPACE, path, "content", r);
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kobold_story_world_info_maps_as_koboldai_reads_it() {
        // KoboldAI-Client aiserver.py (saveRequest / checkworldinfo): comma-separated keys,
        // `selective` needs a secondary key, `constant` always inserts, list order.
        let v = json!({"gamestarted": true, "prompt": "Once", "worldinfo": [
            {"key": "castle, keep", "keysecondary": "", "content": "Stone walls.",
             "comment": "Castle", "folder": 7, "selective": false, "constant": false},
            {"key": "moat", "keysecondary": "water,bridge", "content": "Deep.",
             "comment": "", "folder": null, "selective": true, "constant": true,
             "keyanti": "dry", "probability": 50, "widisabled": true}],
            "wifolders_d": {"7": {"name": "Places", "collapsed": false}}, "wifolders_l": [7]});
        let Value::Object(o) = &v else { panic!() };
        assert!(is_kobold_story(o));
        let mut d = Vec::new();
        let book = from_kobold(v, &mut d);
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(book.entries.len(), 2);
        let (a, b) = (&book.entries[0], &book.entries[1]);
        assert_eq!(a.keys, ["castle", "keep"]);
        assert_eq!(a.extensions[NAMESPACE]["key"], "castle, keep");
        assert_eq!(a.extensions[NAMESPACE]["folder"], 7);
        assert_eq!(a.insertion_order, Number::from(0));
        assert_eq!(b.insertion_order, Number::from(1));
        assert_eq!(
            b.secondary_keys.as_deref(),
            Some(&["water".to_string(), "bridge".to_string()][..])
        );
        assert_eq!(
            (b.selective, b.constant, b.enabled),
            (Some(true), Some(true), false)
        );
        assert_eq!(b.extensions[NAMESPACE]["keyanti"], "dry");
        assert_eq!(
            book.extensions[NAMESPACE]["wifolders_d"]["7"]["name"],
            "Places"
        );
        assert_eq!(book.extensions[NAMESPACE]["prompt"], "Once");
    }

    #[test]
    fn kobold_entry_shape_is_told_from_sillytavern_and_v3_entries() {
        assert!(is_kobold_entry(
            &json!({"key": "a", "keysecondary": "", "content": "c"})
        ));
        assert!(is_kobold_entry(
            &json!({"key": "a", "content": "c", "wigroup": "General"})
        ));
        // SillyTavern World Info entries have `key` as a list; V3 entries have `keys`.
        assert!(!is_kobold_entry(
            &json!({"key": ["a"], "keysecondary": [], "content": "c"})
        ));
        assert!(!is_kobold_entry(&json!({"keys": ["a"], "content": "c"})));
    }
}
