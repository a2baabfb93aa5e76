//! NovelAI `.lorebook` import (read-only).
//!
//! A NovelAI lorebook is `{"lorebookVersion": 4, "entries": [...], "settings": {...},
//! "categories": [...]}`. Each entry has `text`, `keys` (plain text, or `/regex/` keys),
//! `displayName`, `enabled`, `id` (a UUID), `forceActivation`, and a `contextConfig` with
//! `budgetPriority`, `insertionPosition`, `tokenBudget`, `prefix`/`suffix` and trim settings,
//! plus `searchRange`, `keyRelative`, `nonStoryActivatable`, `category`, `loreBiasGroups`,
//! `lastUpdatedAt`.
//!
//! | NovelAI | V3 entry |
//! |---|---|
//! | `text` | `content` |
//! | `keys` | `keys` |
//! | `displayName` | `name` and `comment` |
//! | `enabled` | `enabled` (true when absent) |
//! | `id` | `id` |
//! | `forceActivation` | `constant` |
//! | `contextConfig.budgetPriority` | `insertion_order` and `priority` (100 when absent) |
//!
//! Everything else of an entry (the whole `contextConfig` included) is kept in its
//! `extensions.novelai`; book-level fields other than `entries` go to the book's
//! `extensions.novelai`. Spec choice, as SillyTavern's importer: the budget priority becomes the
//! insertion order; `use_regex` stays false (NovelAI marks regex keys per key with slashes).

use crate::model::fields::{self, Object, Repairs};
use crate::{Diagnostic, Entry, Lorebook, Severity};
use serde_json::{Number, Value};

/// The `extensions` key NovelAI leftovers are kept under.
pub const NAMESPACE: &str = "novelai";

/// Reads a NovelAI lorebook object into a V3 lorebook.
///
/// ```
/// let obj = serde_json::json!({"lorebookVersion": 4, "entries": [
///     {"text": "Dragons breathe fire.", "keys": ["dragon"], "displayName": "Dragons", "enabled": true}]});
/// let serde_json::Value::Object(obj) = obj else { unreachable!() };
/// let book = ccv3::lorebook::novelai::from_novelai(obj, &mut Vec::new());
/// assert_eq!(book.entries[0].content, "Dragons breathe fire.");
/// assert_eq!(book.entries[0].name.as_deref(), Some("Dragons"));
/// ```
pub fn from_novelai(obj: Object, diags: &mut Vec<Diagnostic>) -> Lorebook {
    let mut r = Repairs {
        diags,
        must: Severity::Warning,
    };
    let mut book = Lorebook::default();
    let mut ns = Object::new();
    for (k, v) in obj {
        if k == "entries" {
            match v {
                Value::Array(items) => super::read_entry_list(
                    &mut book.entries,
                    items,
                    "entries",
                    "novelai entry",
                    &mut r,
                    |e, _, p, r| entry(e, p, r),
                ),
                other => {
                    ns.insert(k, other);
                }
            }
        } else {
            ns.insert(k, v);
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
            "text" => content = fields::string(v, &p, r),
            "keys" => e.keys = fields::string_list(v, &p, false, r),
            "displayName" => {
                e.name = fields::string(v, &p, r);
                e.comment = e.name.clone();
            }
            "enabled" => e.enabled = fields::boolean(v, &p, r).unwrap_or(true),
            "id" => match v {
                Value::Number(_) | Value::String(_) => e.id = Some(v),
                other => {
                    ns.insert(k, other);
                }
            },
            "forceActivation" => e.constant = fields::boolean(v, &p, r),
            "contextConfig" => {
                if let Some(n) = v.get("budgetPriority").and_then(Value::as_number) {
                    e.insertion_order = n.clone();
                    e.priority = Some(n.clone());
                }
                ns.insert(k, v);
            }
            _ => {
                ns.insert(k, v);
            }
        }
    }
    if e.priority.is_none() {
        e.insertion_order = Number::from(100);
    }
    super::finish_imported_entry(&mut e, content, ns, NAMESPACE, path, "text", r);
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lorebook::{read_lorebook_slice, BookFormat};

    fn corpus(name: &str) -> Option<Vec<u8>> {
        let p = crate::test_corpus::file(&format!("lorebook/{name}"))?;
        std::fs::read(p).ok()
    }

    #[test]
    fn novelai_every_corpus_lorebook_imports() {
        let files = [
            ("nai_A_hiss_of_smoke_empty_v4.lorebook", 0),
            ("nai_New_Story_v4.lorebook", 1),
            ("nai_generated_81_entries_v4.lorebook", 81),
            ("nai_starter_v4.lorebook", 4),
        ];
        for (name, n) in files {
            let Some(bytes) = corpus(name) else {
                return;
            };
            let mut d = Vec::new();
            let (book, f) = read_lorebook_slice(&bytes, &mut d).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(f, BookFormat::NovelAi, "{name}");
            assert_eq!(book.entries.len(), n, "{name}");
            assert_eq!(book.extensions[NAMESPACE]["lorebookVersion"], 4, "{name}");
            assert!(
                book.extensions[NAMESPACE].get("settings").is_some(),
                "{name}"
            );
            for e in &book.entries {
                let ns = &e.extensions[NAMESPACE];
                assert!(ns.get("lastUpdatedAt").is_some(), "{name}");
                assert!(ns.get("text").is_none() && ns.get("keys").is_none());
            }
        }
    }

    #[test]
    fn novelai_entry_with_empty_text_and_keys_imports() {
        let Some(bytes) = corpus("nai_New_Story_v4.lorebook") else {
            return;
        };
        let mut d = Vec::new();
        let (book, _) = read_lorebook_slice(&bytes, &mut d).unwrap_or_else(|e| panic!("{e}"));
        let e = &book.entries[0];
        assert_eq!(e.content, "");
        assert!(e.keys.is_empty());
        assert_eq!(e.name.as_deref(), Some("New Lorebook Entry"));
        assert_eq!(e.insertion_order, Number::from(400));
        assert_eq!(
            e.id,
            Some(Value::String("bd90161f-4ff6-44a0-8522-0f25ad26aae3".into()))
        );
        assert!(d.is_empty(), "{d:?}");
    }

    #[test]
    fn novelai_starter_maps_fields() {
        let Some(bytes) = corpus("nai_starter_v4.lorebook") else {
            return;
        };
        let mut d = Vec::new();
        let (book, _) = read_lorebook_slice(&bytes, &mut d).unwrap_or_else(|e| panic!("{e}"));
        let e = &book.entries[0];
        assert_eq!(e.content, "This is a test entry.");
        assert_eq!(e.keys, vec!["Rome", "Emperor", "476 AD"]);
        assert_eq!(e.comment.as_deref(), Some("Rome Burning"));
        assert_eq!(e.constant, Some(false));
        assert!(e.enabled);
        assert_eq!(e.extensions[NAMESPACE]["searchRange"], 1000);
    }
}
