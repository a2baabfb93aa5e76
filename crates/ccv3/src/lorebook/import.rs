//! What the importers of other applications' lorebooks (Agnai, KoboldAI, NovelAI, RisuAI)
//! share: reading a list of entries, comma-separated keys, and keeping the fields with no V3
//! meaning under an `extensions` namespace. It sits below the importers and
//! [`super::read_lorebook_value`], which calls them.

use crate::model::fields::{self, Object, Repairs};
use serde_json::Value;

/// Ends an entry read by an importer: sets its content (or reports the field `content_key` as
/// missing) and keeps the fields that have no V3 meaning under `extensions[namespace]`.
pub(crate) fn finish_imported_entry(
    e: &mut crate::Entry,
    content: Option<String>,
    leftovers: Object,
    namespace: &str,
    path: &str,
    content_key: &str,
    r: &mut Repairs,
) {
    match content {
        Some(c) => e.content = c,
        None => r.missing(
            &crate::model::fields::join(path, content_key),
            "used an empty string",
        ),
    }
    stash_leftovers(&mut e.extensions, leftovers, namespace);
}

/// Keeps an importer's fields that have no V3 meaning under `extensions[namespace]` (book or
/// entry), unless there are none.
pub(crate) fn stash_leftovers(extensions: &mut Object, leftovers: Object, namespace: &str) {
    if !leftovers.is_empty() {
        extensions.insert(namespace.into(), Value::Object(leftovers));
    }
}

/// Splits a comma-separated key list as RisuAI and KoboldAI write it; returns the keys and the
/// text as written when joining them with `,` does not give it back (a list that is not text is
/// read as a list of strings and always kept as written).
pub(crate) fn split_comma_keys(
    v: Value,
    path: &str,
    r: &mut Repairs,
) -> (Vec<String>, Option<Value>) {
    match v {
        Value::String(s) => {
            let keys: Vec<String> = s
                .split(',')
                .map(|k| k.trim().to_string())
                .filter(|k| !k.is_empty())
                .collect();
            let exact = keys.join(",") == s;
            (keys, (!exact).then_some(Value::String(s)))
        }
        other => {
            let raw = other.clone();
            (fields::string_list(other, &path, true, r), Some(raw))
        }
    }
}

/// Reads an importer's list of entries into `entries`: each object with `read` (given its place
/// in the list and its path, `list_path[i]`); any other item is dropped with a warning that
/// names it as `what`.
pub(crate) fn read_entry_list(
    entries: &mut Vec<crate::Entry>,
    items: Vec<Value>,
    list_path: &str,
    what: &str,
    r: &mut Repairs,
    mut read: impl FnMut(Object, usize, &str, &mut Repairs) -> crate::Entry,
) {
    entries.reserve(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let p = fields::index(list_path, i);
        match item {
            Value::Object(e) => entries.push(read(e, i, &p, r)),
            other => r.push(
                crate::Severity::Warning,
                "wrong-type",
                &p,
                format!(
                    "{what} must be an object, found {}; dropped it",
                    fields::type_name(&other)
                ),
            ),
        }
    }
}

/// The keys of an importer's comma-separated key field `key` ([`split_comma_keys`]); the text
/// as written goes into the entry's `leftovers` under `key` when the keys do not give it back.
pub(crate) fn comma_keys_keeping_text(
    key: String,
    v: Value,
    path: &str,
    leftovers: &mut Object,
    r: &mut Repairs,
) -> Vec<String> {
    let (keys, raw) = split_comma_keys(v, path, r);
    if let Some(raw) = raw {
        leftovers.insert(key, raw);
    }
    keys
}
