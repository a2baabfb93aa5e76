//! Agnai memory book import (read-only).
//!
//! An Agnai memory book export is `{"kind": "memory", "name", "description", "entries": [...]}`
//! (plus ids such as `_id`, `userId`). Each entry has `name`, `entry` (the text), `keywords`,
//! `priority`, `weight` and `enabled`.
//!
//! | Agnai | V3 entry |
//! |---|---|
//! | `entry` | `content` |
//! | `keywords` | `keys` |
//! | `name` | `name` and `comment` |
//! | `priority` | `priority` |
//! | `weight` | `insertion_order` (100 when absent) |
//! | `enabled` | `enabled` (true when absent) |
//!
//! Book `name` and `description` map to the book's; other book fields (`kind` included) are kept
//! in the book's `extensions.agnai`, other entry fields in the entry's `extensions.agnai`.
//! Spec choice, as SillyTavern's importer: `weight` becomes the insertion order. Agnai matches
//! keywords as (unescaped) regular expressions inside word boundaries; `use_regex` stays false.

use crate::model::fields::{self, Object, Repairs};
use crate::{Diagnostic, Entry, Lorebook, Severity};
use serde_json::Value;

/// The `extensions` key Agnai leftovers are kept under.
pub const NAMESPACE: &str = "agnai";

/// Reads an Agnai memory book object into a V3 lorebook.
///
/// ```
/// let obj = serde_json::json!({"kind": "memory", "name": "World", "entries": [
///     {"name": "Dragons", "entry": "Dragons breathe fire.", "keywords": ["dragon"],
///      "priority": 10, "weight": 3, "enabled": true}]});
/// let serde_json::Value::Object(obj) = obj else { unreachable!() };
/// let book = ccv3::lorebook::agnai::from_agnai(obj, &mut Vec::new());
/// assert_eq!(book.name.as_deref(), Some("World"));
/// assert_eq!((book.entries[0].keys[0].as_str(), book.entries[0].insertion_order.as_i64()), ("dragon", Some(3)));
/// ```
pub fn from_agnai(obj: Object, diags: &mut Vec<Diagnostic>) -> Lorebook {
    let mut r = Repairs {
        diags,
        must: Severity::Warning,
    };
    let mut book = Lorebook::default();
    let mut ns = Object::new();
    for (k, v) in obj {
        match k.as_str() {
            "name" if v.is_string() => book.name = fields::string(v, &k, &mut r),
            "description" if v.is_string() => book.description = fields::string(v, &k, &mut r),
            "entries" if v.is_array() => {
                if let Value::Array(items) = v {
                    super::read_entry_list(
                        &mut book.entries,
                        items,
                        "entries",
                        "agnai entry",
                        &mut r,
                        |e, _, p, r| entry(e, p, r),
                    );
                }
            }
            _ => {
                ns.insert(k, v);
            }
        }
    }
    super::stash_leftovers(&mut book.extensions, ns, NAMESPACE);
    book
}

fn entry(obj: Object, path: &str, r: &mut Repairs) -> Entry {
    let mut e = Entry::default();
    let mut ns = Object::new();
    let mut content = None;
    for (k, v) in obj {
        let p = fields::join(path, &k);
        match k.as_str() {
            "entry" => content = fields::string(v, &p, r),
            "keywords" => e.keys = fields::string_list(v, &p, true, r),
            "name" => {
                e.name = fields::string(v, &p, r);
                e.comment = e.name.clone();
            }
            "priority" => e.priority = fields::number(v, &p, r),
            "weight" => {
                if let Some(n) = fields::number(v, &p, r) {
                    e.insertion_order = n;
                }
            }
            "enabled" => e.enabled = fields::boolean(v, &p, r).unwrap_or(true),
            _ => {
                ns.insert(k, v);
            }
        }
    }
    super::finish_imported_entry(&mut e, content, ns, NAMESPACE, path, "entry", r);
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lorebook::{read_lorebook_slice, BookFormat};
    use serde_json::Number;

    #[test]
    fn agnai_sample_memory_book_imports() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/lorebook/agnai_memory_book.json");
        let bytes = std::fs::read(p).unwrap_or_default();
        let mut d = Vec::new();
        let (book, f) = read_lorebook_slice(&bytes, &mut d).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f, BookFormat::Agnai);
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(book.name.as_deref(), Some("Harbor Town"));
        assert_eq!(book.extensions[NAMESPACE]["kind"], "memory");
        assert_eq!(book.extensions[NAMESPACE]["_id"], "b-1");
        assert_eq!(book.entries.len(), 3);
        let e = &book.entries[0];
        assert_eq!(e.keys, vec!["harbor", "docks"]);
        assert_eq!(e.content, "The harbor freezes every winter.");
        assert_eq!(e.name.as_deref(), Some("Harbor"));
        assert_eq!(e.priority, Some(Number::from(10)));
        assert_eq!(e.insertion_order, Number::from(200));
        assert!(e.enabled);
        assert!(!book.entries[2].enabled);
        assert_eq!(book.entries[1].extensions[NAMESPACE]["x_note"], "kept");
    }
}
