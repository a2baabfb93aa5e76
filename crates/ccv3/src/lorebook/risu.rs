//! RisuAI lorebook export import (read-only).
//!
//! RisuAI exports a lorebook as `{"type": "risu", "ver": 1, "data": [...]}`. Each entry has
//! `key` and `secondkey` (comma-joined strings), `insertorder`, `comment`, `content`, `mode`
//! (`normal`, `constant`, `multiple`, `child`, `folder`), `alwaysActive`, `selective`,
//! `useRegex`, and optional `activationPercent`, `loreCache`, `bookVersion`, `folder`,
//! `extentions` (sic), `id`.
//!
//! | RisuAI | V3 entry |
//! |---|---|
//! | `key` | `keys` (split on commas, trimmed, empty parts dropped) |
//! | `secondkey` | `secondary_keys` (same) |
//! | `insertorder` | `insertion_order` (100 when absent) |
//! | `comment` | `comment` and `name` |
//! | `content` | `content` |
//! | `alwaysActive` | `constant` |
//! | `selective` | `selective` |
//! | `useRegex` | `use_regex` |
//! | `id` | `id` |
//!
//! Every entry is enabled (RisuAI has no switch). Other entry fields are kept in the entry's
//! `extensions.risuai`, and so are `key`/`secondkey` as written when splitting and joining them
//! with `,` would not give the same text back. Book fields other than `data` (`type`, `ver`)
//! are kept in the book's `extensions.risuai`. Folder entries (`mode: "folder"`) are kept as
//! entries (their content is empty, so they never insert anything).

use crate::model::fields::{self, Object, Repairs};
use crate::{Diagnostic, Entry, Lorebook, Severity};
use serde_json::Value;

/// The `extensions` key RisuAI leftovers are kept under.
pub const NAMESPACE: &str = "risuai";

/// Reads a RisuAI lorebook export object into a V3 lorebook.
///
/// ```
/// let obj = serde_json::json!({"type": "risu", "ver": 1, "data": [
///     {"key": "dragon, wyrm", "secondkey": "", "insertorder": 5, "comment": "Dragons",
///      "content": "Dragons breathe fire.", "mode": "normal", "alwaysActive": false, "selective": false}]});
/// let serde_json::Value::Object(obj) = obj else { unreachable!() };
/// let mut diags = Vec::new();
/// let book = ccv3::lorebook::risu::from_risu(obj, &mut diags);
/// assert_eq!(book.entries[0].keys, ["dragon", "wyrm"]);
/// assert_eq!(book.entries[0].insertion_order.as_i64(), Some(5));
/// ```
pub fn from_risu(obj: Object, diags: &mut Vec<Diagnostic>) -> Lorebook {
    let mut r = Repairs {
        diags,
        must: Severity::Warning,
    };
    let mut book = Lorebook::default();
    let mut ns = Object::new();
    for (k, v) in obj {
        match (k.as_str(), v) {
            ("data", Value::Array(items)) => super::read_entry_list(
                &mut book.entries,
                items,
                "data",
                "risu entry",
                &mut r,
                |e, _, p, r| entry(e, p, r),
            ),
            (_, v) => {
                ns.insert(k, v);
            }
        }
    }
    super::stash_leftovers(&mut book.extensions, ns, NAMESPACE);
    book
}

/// Reads one RisuAI lorebook entry (also the entries of a RisuAI module, [`super::risu_module`]).
pub(crate) fn entry(obj: Object, path: &str, r: &mut Repairs) -> Entry {
    let mut e = Entry::default();
    let mut ns = Object::new();
    let mut content = None;
    for (k, v) in obj {
        let p = fields::join(path, &k);
        match k.as_str() {
            "key" => e.keys = super::comma_keys_keeping_text(k, v, &p, &mut ns, r),
            "secondkey" => {
                e.secondary_keys = Some(super::comma_keys_keeping_text(k, v, &p, &mut ns, r))
            }
            "insertorder" => {
                if let Some(n) = fields::number(v, &p, r) {
                    e.insertion_order = n;
                }
            }
            "comment" => {
                e.comment = fields::string(v, &p, r);
                e.name = e.comment.clone();
            }
            "content" => content = fields::string(v, &p, r),
            "alwaysActive" => e.constant = fields::boolean(v, &p, r),
            "selective" => e.selective = fields::boolean(v, &p, r),
            "useRegex" => e.use_regex = fields::boolean(v, &p, r).unwrap_or(false),
            "id" => match v {
                Value::Number(_) | Value::String(_) => e.id = Some(v),
                other => {
                    ns.insert(k, other);
                }
            },
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
    use crate::lorebook::{read_lorebook_slice, BookFormat};
    use serde_json::Number;

    #[test]
    fn risu_sample_export_imports() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/lorebook/risu_lorebook_export.json");
        let bytes = std::fs::read(p).unwrap_or_default();
        let mut d = Vec::new();
        let (book, f) = read_lorebook_slice(&bytes, &mut d).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f, BookFormat::Risu);
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(book.extensions[NAMESPACE]["ver"], 1);
        assert_eq!(book.entries.len(), 3);
        let e = &book.entries[0];
        assert_eq!(e.keys, vec!["tower", "spire"]);
        assert_eq!(e.secondary_keys, Some(vec!["night".to_string()]));
        assert_eq!(e.insertion_order, Number::from(250));
        assert_eq!(e.comment.as_deref(), Some("Tower"));
        assert_eq!(e.selective, Some(true));
        assert_eq!(e.constant, Some(false));
        // "tower, spire" does not join back to the same text: kept as written.
        assert_eq!(e.extensions[NAMESPACE]["key"], "tower, spire");
        assert_eq!(e.extensions[NAMESPACE]["mode"], "normal");
        let c = &book.entries[1];
        assert_eq!(c.constant, Some(true));
        assert!(c.extensions[NAMESPACE].get("key").is_none());
        let rx = &book.entries[2];
        assert!(rx.use_regex);
        assert_eq!(rx.keys, vec!["/dragons?/i"]);
        assert_eq!(rx.extensions[NAMESPACE]["activationPercent"], 50);
    }
}
