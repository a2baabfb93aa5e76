//! SillyTavern World Info <-> V3 lorebook, lossless both ways.
//!
//! # The format
//!
//! A World Info file ("world") is `{"entries": {"<uid>": entry, ...}}`: an object keyed by each
//! entry's `uid` (as text). Entries use SillyTavern's own names: `key`, `keysecondary`, `comment`,
//! `content`, `constant`, `selective`, `order`, `position` (a number 0..7), `disable`, and many
//! engine knobs in camelCase (`selectiveLogic`, `groupOverride`, `scanDepth`, ...). The old
//! "KoboldAI Worlds" files have the same shape with fewer fields (and `title`, `folders`).
//!
//! # Mapping (as SillyTavern's own converters do)
//!
//! | World Info | V3 entry |
//! |---|---|
//! | `uid` | `id` |
//! | `key` | `keys` |
//! | `keysecondary` | `secondary_keys` |
//! | `comment` | `comment`, and `name` when the entry has no `name` field |
//! | `content` | `content` |
//! | `constant` | `constant` |
//! | `selective` | `selective` |
//! | `order` | `insertion_order` |
//! | `disable` | `!enabled` |
//! | `position` (0..7) | `position`: `before_char` for 0, `after_char` otherwise; and `extensions.position` = the number |
//! | `caseSensitive` | `extensions.case_sensitive`, and `case_sensitive` when it is a boolean |
//! | `extensions` (object) | spread into `extensions`, under the knobs (SillyTavern does the same) |
//!
//! Every other World Info knob travels in the entry's `extensions` under the key SillyTavern
//! writes there when it exports a card (and reads back on import): see [`KNOBS`]. Note the mix:
//! `useProbability` and `selectiveLogic` keep their camelCase names, the rest are snake_case.
//!
//! # Lossless both ways
//!
//! *World Info -> V3 -> World Info* gives back equal JSON for every file (book-level fields of
//! the wrong type, such as a numeric `name`, are the one exception: they are repaired with a
//! diagnostic; SillyTavern writes no book-level fields). What has no V3 home is
//! kept in the entry's `extensions.ccv3_world_info` ([`STASH_KEY`]), an object with up to three
//! keys, each present only when needed:
//! - `fields`: World Info fields written back verbatim: SillyTavern-only fields with no card key
//!   (`addMemo`, `characterFilter`), and any core field whose V3 form cannot reproduce the
//!   original (a `key` given as a string, an `order` given as text, an `extensions` object whose
//!   keys collide with the knobs, ...);
//! - `absent`: World Info fields the file did not have although V3 requires the value
//!   (`order`, `disable`, `extensions` in old files);
//! - `key`: the key of the entry in `entries` when it is not the `uid`.
//!
//! Fields unknown to both formats stay unknown at the same level: an unknown World Info entry
//! field becomes an unknown V3 entry field (`Entry::extra`) and back; unknown top-level fields
//! (`originalData`, `_meta`, `folders`) become unknown book fields (`Lorebook::extra`) and back.
//!
//! *V3 -> World Info -> V3* gives back equal JSON too, apart from the normalisations listed
//! below, which happen once (a second round trip is exact). V3 fields that World Info lacks are
//! written as extra World Info fields with their V3 names (`name` when it differs from
//! `comment`, `priority`, `use_regex` when true, `case_sensitive` when it differs from
//! `extensions.case_sensitive`); SillyTavern keeps unknown entry fields in its files. Unknown V3
//! entry fields whose names mean something in World Info (a stray top-level `sticky`, or a
//! numeric `position` the V3 reader kept aside) are written inside a `ccv3_extra` object
//! ([`EXTRA_KEY`]) so they do not turn into knobs, and come back out as unknown fields. Book fields
//! (`name`, `description`, `scan_depth`, `token_budget`, `recursive_scanning`, non-empty
//! `extensions`) are written at the top level of the World Info file.
//!
//! Documented normalisations (V3 -> World Info -> V3 only):
//! - an entry with `position` but no `extensions.position` gains `extensions.position` (0 or 1),
//!   and an entry with `extensions.position` but no `position` gains the matching `position`;
//!   a `position` other than `before_char`/`after_char`, or one that disagrees with
//!   `extensions.position`, is rewritten from the number (World Info has one position field);
//! - two entries with the same `id` get distinct keys in `entries` (the next free integer, as
//!   SillyTavern does) and the second comes back with `extensions.ccv3_world_info.key`;
//! - an empty book-level `extensions` object is not written;
//! - an `extensions.ccv3_world_info` object already in the V3 input is applied as written, and
//!   replaced by what the reader needs.
//!
//! Key order inside objects is not kept by the World Info writer (JSON equality ignores it).
//!
//! Spec choice: `use_regex` is false for entries read from World Info (SillyTavern decides per
//! key: a key written `/pattern/flags` is a regex, others are plain text), unless the entry
//! carries a `use_regex` field.

use crate::model::fields::{self, arrange, join, KeyOrder, Object, Out, Repairs};
use crate::{Diagnostic, Entry, Lorebook, Severity};
use serde_json::{Number, Value};
use std::collections::HashSet;

/// The entry `extensions` key holding World Info data without a V3 home (see module docs).
pub const STASH_KEY: &str = "ccv3_world_info";

/// The World Info entry field holding unknown V3 entry fields whose names World Info uses.
pub const EXTRA_KEY: &str = "ccv3_extra";

/// World Info knob name -> the entry `extensions` key SillyTavern uses for it in cards.
pub const KNOBS: &[(&str, &str)] = &[
    ("position", "position"),
    ("excludeRecursion", "exclude_recursion"),
    ("displayIndex", "display_index"),
    ("probability", "probability"),
    ("useProbability", "useProbability"),
    ("depth", "depth"),
    ("selectiveLogic", "selectiveLogic"),
    ("outletName", "outlet_name"),
    ("group", "group"),
    ("groupOverride", "group_override"),
    ("groupWeight", "group_weight"),
    ("preventRecursion", "prevent_recursion"),
    ("delayUntilRecursion", "delay_until_recursion"),
    ("scanDepth", "scan_depth"),
    ("matchWholeWords", "match_whole_words"),
    ("useGroupScoring", "use_group_scoring"),
    ("caseSensitive", "case_sensitive"),
    ("automationId", "automation_id"),
    ("role", "role"),
    ("vectorized", "vectorized"),
    ("sticky", "sticky"),
    ("cooldown", "cooldown"),
    ("delay", "delay"),
    ("matchPersonaDescription", "match_persona_description"),
    ("matchCharacterDescription", "match_character_description"),
    ("matchCharacterPersonality", "match_character_personality"),
    ("matchCharacterDepthPrompt", "match_character_depth_prompt"),
    ("matchScenario", "match_scenario"),
    ("matchCreatorNotes", "match_creator_notes"),
    ("triggers", "triggers"),
    ("ignoreBudget", "ignore_budget"),
];

/// SillyTavern World Info fields that SillyTavern never writes into a card.
const ST_ONLY: &[&str] = &["addMemo", "characterFilter"];

/// V3 entry field names that are not World Info fields: an unknown World Info field with one of
/// these names cannot become an unknown V3 field, so it goes to the stash.
const V3_ONLY: &[&str] = &["keys", "enabled", "insertion_order", "id", "secondary_keys"];

/// World Info entry fields the reader maps: an unknown V3 field with one of these names cannot
/// be written at the top level of a World Info entry.
const WI_MAPPED: &[&str] = &[
    "uid",
    "key",
    "keysecondary",
    "comment",
    "content",
    "constant",
    "selective",
    "order",
    "disable",
    "extensions",
    "name",
    "priority",
    "use_regex",
    "case_sensitive",
    EXTRA_KEY,
];

fn wi_mapped(k: &str) -> bool {
    WI_MAPPED.contains(&k) || knob_ext(k).is_some() || ST_ONLY.contains(&k) || V3_ONLY.contains(&k)
}

fn knob_ext(wi: &str) -> Option<&'static str> {
    KNOBS.iter().find(|(w, _)| *w == wi).map(|(_, e)| *e)
}

fn is_knob_ext(ext: &str) -> bool {
    KNOBS.iter().any(|(_, e)| *e == ext)
}

/// Reads a SillyTavern World Info object (`{"entries": {...}}`) into a V3 lorebook.
///
/// Never fails: problems are repaired and reported in `diags` (paths like `entries.3.key`).
///
/// ```
/// let wi = serde_json::json!({"entries": {"0": {"uid": 0, "key": ["castle"], "content": "Old.",
///     "order": 100, "position": 4, "depth": 2, "disable": false}}});
/// let mut diags = Vec::new();
/// let book = ccv3::lorebook::from_worldinfo(wi.as_object().unwrap().clone(), &mut diags);
/// let e = &book.entries[0];
/// assert_eq!(e.position.as_deref(), Some("after_char"));
/// assert_eq!(e.extensions["position"], 4);
/// assert_eq!(e.extensions["depth"], 2);
/// assert_eq!(ccv3::lorebook::to_worldinfo(&book), wi);
/// ```
pub fn from_worldinfo(obj: Object, diags: &mut Vec<Diagnostic>) -> Lorebook {
    let mut r = Repairs {
        diags,
        must: Severity::Warning,
    };
    let mut book = Lorebook {
        order: KeyOrder::of(&obj, &crate::model::BOOK_FIELDS),
        ..Default::default()
    };
    let mut entries = None;
    for (k, v) in obj {
        let p = k.clone();
        match k.as_str() {
            "entries" => entries = Some(v),
            "name" => book.name = fields::string(v, &p, &mut r),
            "description" => book.description = fields::string(v, &p, &mut r),
            "scan_depth" => book.scan_depth = fields::number(v, &p, &mut r),
            "token_budget" => book.token_budget = fields::number(v, &p, &mut r),
            "recursive_scanning" => book.recursive_scanning = fields::boolean(v, &p, &mut r),
            "extensions" => match v {
                Value::Object(m) => book.extensions = m,
                other => r.push(
                    Severity::Warning,
                    "wrong-type",
                    &p,
                    format!(
                        "extensions must be an object, found {}; dropped it",
                        fields::type_name(&other)
                    ),
                ),
            },
            _ => {
                book.extra.insert(k, v);
            }
        }
    }
    match entries {
        Some(Value::Object(map)) => {
            book.entries.reserve(map.len());
            for (key, v) in map {
                let p = join("entries", &key);
                // The index the writer will see: dropped entries do not count.
                let i = book.entries.len();
                match v {
                    Value::Object(e) => book.entries.push(entry_from_wi(&key, i, e, &p, &mut r)),
                    other => r.push(
                        Severity::Warning,
                        "wrong-type",
                        &p,
                        format!(
                            "world info entry must be an object, found {}; dropped it",
                            fields::type_name(&other)
                        ),
                    ),
                }
            }
        }
        Some(Value::Array(items)) => {
            r.push(
                Severity::Warning,
                "wrong-type",
                &"entries",
                "world info entries is an array, not an object keyed by uid; read it in order"
                    .into(),
            );
            for (i, v) in items.into_iter().enumerate() {
                let p = format!("entries[{i}]");
                if let Value::Object(e) = v {
                    let key = i.to_string();
                    let at = book.entries.len();
                    book.entries.push(entry_from_wi(&key, at, e, &p, &mut r));
                }
            }
        }
        None => r.missing(&"entries", "used no entries"),
        Some(other) => r.push(
            Severity::Warning,
            "wrong-type",
            &"entries",
            format!(
                "entries must be an object, found {}; used no entries",
                fields::type_name(&other)
            ),
        ),
    }
    book
}

/// Reads one World Info entry; `key` is its key in `entries`, `index` its position.
fn entry_from_wi(key: &str, index: usize, wi: Object, path: &str, r: &mut Repairs) -> Entry {
    let original = wi.clone();
    let mut e = Entry::default();
    let mut ext = Object::new();
    let mut knobs = Object::new();
    let mut stash_fields = Object::new();
    let mut v3_name: Option<Option<String>> = None;
    let mut v3_case: Option<Option<bool>> = None;
    for (k, v) in wi {
        let p = join(path, &k);
        match k.as_str() {
            "uid" => {
                // Kept whatever its type, as the V3 reader keeps an odd `id`.
                e.id = match v {
                    Value::Null => None,
                    other => Some(other),
                }
            }
            "key" => e.keys = fields::string_list(v, &p, true, r),
            "keysecondary" => {
                e.secondary_keys = if v.is_null() {
                    None
                } else {
                    Some(fields::string_list(v, &p, true, r))
                }
            }
            "comment" => e.comment = fields::string(v, &p, r),
            "content" => e.content = fields::string(v, &p, r).unwrap_or_default(),
            "constant" => e.constant = fields::boolean(v, &p, r),
            "selective" => e.selective = fields::boolean(v, &p, r),
            "order" => {
                e.insertion_order = fields::number(v, &p, r).unwrap_or_else(|| Number::from(100))
            }
            "disable" => e.enabled = !fields::boolean(v, &p, r).unwrap_or(false),
            "extensions" => match v {
                Value::Object(m) => ext = m,
                Value::Null => {}
                other => r.push(
                    Severity::Warning,
                    "wrong-type",
                    &p,
                    format!(
                        "extensions must be an object, found {}; kept it aside",
                        fields::type_name(&other)
                    ),
                ),
            },
            "name" => v3_name = Some(fields::string(v, &p, r)),
            "priority" => e.priority = fields::number(v, &p, r),
            "use_regex" => e.use_regex = fields::boolean(v, &p, r).unwrap_or(false),
            "case_sensitive" => v3_case = Some(fields::boolean(v, &p, r)),
            EXTRA_KEY => match v {
                Value::Object(m) => e.extra.extend(m),
                other => {
                    e.extra.insert(k, other);
                }
            },
            _ => {
                if let Some(ext_key) = knob_ext(&k) {
                    if k == "position" {
                        e.position = position_name(&v).map(str::to_string);
                    }
                    knobs.insert(ext_key.to_string(), v);
                } else if ST_ONLY.contains(&k.as_str()) || V3_ONLY.contains(&k.as_str()) {
                    stash_fields.insert(k, v);
                } else {
                    e.extra.insert(k, v);
                }
            }
        }
    }
    e.case_sensitive = match v3_case {
        Some(c) => c,
        None => knobs.get("case_sensitive").and_then(Value::as_bool),
    };
    e.name = match v3_name {
        Some(n) => n,
        None => e.comment.clone(),
    };
    // SillyTavern spreads the entry's own `extensions` first, then writes its knobs over it.
    for (k, v) in knobs {
        ext.insert(k, v);
    }
    e.extensions = ext.into();
    let mut stash = Object::new();
    if !stash_fields.is_empty() {
        stash.insert("fields".into(), Value::Object(stash_fields));
    }
    set_stash(&mut e, stash);

    // Whatever the writer would not reproduce goes to the stash, so the round trip is exact.
    let (default_key, written) = entry_to_wi(&e, index);
    let mut stash = e
        .extensions
        .get(STASH_KEY)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut overrides = stash
        .get("fields")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (k, v) in &original {
        if written.get(k) != Some(v) {
            overrides.insert(k.clone(), v.clone());
        }
    }
    let absent: Vec<Value> = written
        .keys()
        .filter(|k| !original.contains_key(*k))
        .map(|k| Value::String(k.clone()))
        .collect();
    if !overrides.is_empty() {
        stash.insert("fields".into(), Value::Object(overrides));
    }
    if !absent.is_empty() {
        stash.insert("absent".into(), Value::Array(absent));
    }
    if default_key != key {
        stash.insert("key".into(), Value::String(key.to_string()));
    }
    set_stash(&mut e, stash);
    e
}

fn set_stash(e: &mut Entry, stash: Object) {
    if stash.is_empty() {
        e.extensions.shift_remove(STASH_KEY);
    } else {
        e.extensions
            .insert(STASH_KEY.to_string(), Value::Object(stash));
    }
}

/// `before_char` for World Info position 0, `after_char` for other numbers.
fn position_name(v: &Value) -> Option<&'static str> {
    let n = v.as_f64()?;
    Some(if n == 0.0 {
        "before_char"
    } else {
        "after_char"
    })
}

/// The key an entry gets in `entries` when nothing says otherwise: its id, else its index.
fn default_key(e: &Entry, index: usize) -> String {
    match &e.id {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) => s.clone(),
        _ => index.to_string(),
    }
}

fn strings(v: &[String]) -> Value {
    Value::Array(v.iter().map(|s| Value::String(s.clone())).collect())
}

/// One V3 entry as a World Info entry: (key in `entries`, entry object). The key comes from
/// the stash when present, else from [`default_key`].
fn entry_to_wi(e: &Entry, index: usize) -> (String, Object) {
    let stash = e.extensions.get(STASH_KEY).and_then(Value::as_object);
    let mut w = Object::new();
    if let Some(id) = &e.id {
        w.insert("uid".into(), id.clone());
    }
    w.insert("key".into(), strings(&e.keys));
    if let Some(sk) = &e.secondary_keys {
        w.insert("keysecondary".into(), strings(sk));
    }
    if let Some(c) = &e.comment {
        w.insert("comment".into(), Value::String(c.clone()));
    }
    w.insert("content".into(), Value::String(e.content.clone()));
    if let Some(c) = e.constant {
        w.insert("constant".into(), Value::Bool(c));
    }
    if let Some(s) = e.selective {
        w.insert("selective".into(), Value::Bool(s));
    }
    w.insert("order".into(), Value::Number(e.insertion_order.clone()));
    let position = e.extensions.get("position").cloned().or_else(|| {
        e.position
            .as_deref()
            .map(|p| Value::from(if p == "before_char" { 0 } else { 1 }))
    });
    if let Some(p) = position {
        w.insert("position".into(), p);
    }
    w.insert("disable".into(), Value::Bool(!e.enabled));
    for (wi, ext) in KNOBS {
        if *wi == "position" {
            continue;
        }
        if let Some(v) = e.extensions.get(*ext) {
            w.insert((*wi).to_string(), v.clone());
        }
    }
    if e.name != e.comment {
        w.insert(
            "name".into(),
            e.name.clone().map(Value::String).unwrap_or(Value::Null),
        );
    }
    if let Some(p) = &e.priority {
        w.insert("priority".into(), Value::Number(p.clone()));
    }
    if e.use_regex {
        w.insert("use_regex".into(), Value::Bool(true));
    }
    let derived_case = e.extensions.get("case_sensitive").and_then(Value::as_bool);
    if e.case_sensitive != derived_case {
        w.insert(
            "case_sensitive".into(),
            e.case_sensitive.map(Value::Bool).unwrap_or(Value::Null),
        );
    }
    let rest: Object = e
        .extensions
        .iter()
        .filter(|(k, _)| k.as_str() != STASH_KEY && !is_knob_ext(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    w.insert("extensions".into(), Value::Object(rest));
    let mut kept_aside = Object::new();
    for (k, v) in &e.extra {
        if wi_mapped(k) {
            kept_aside.insert(k.clone(), v.clone());
        } else {
            w.insert(k.clone(), v.clone());
        }
    }
    if !kept_aside.is_empty() {
        w.insert(EXTRA_KEY.into(), Value::Object(kept_aside));
    }
    let mut key = default_key(e, index);
    if let Some(st) = stash {
        if let Some(Value::Object(f)) = st.get("fields") {
            for (k, v) in f {
                w.insert(k.clone(), v.clone());
            }
        }
        if let Some(Value::Array(absent)) = st.get("absent") {
            for k in absent.iter().filter_map(Value::as_str) {
                w.shift_remove(k);
            }
        }
        if let Some(Value::String(k)) = st.get("key") {
            key = k.clone();
        }
    }
    (key, w)
}

/// Writes a lorebook as SillyTavern World Info: `{"entries": {"<uid>": {...}, ...}}`.
///
/// Entries are keyed by their `id` (their index when they have none); a key already used gets
/// the next free integer, as SillyTavern does. See the module docs for the field mapping.
///
/// ```
/// let mut book = ccv3::Lorebook::default();
/// book.entries.push(ccv3::Entry::new(&["dragon"], "Dragons breathe fire."));
/// let wi = ccv3::lorebook::worldinfo::to_worldinfo(&book);
/// assert_eq!(wi["entries"]["0"]["key"][0], "dragon");
/// assert_eq!(wi["entries"]["0"]["content"], "Dragons breathe fire.");
/// ```
pub fn to_worldinfo(book: &Lorebook) -> Value {
    let mut entries = Object::new();
    let mut used: HashSet<String> = HashSet::new();
    let mut next_free: u64 = 0;
    for (i, e) in book.entries.iter().enumerate() {
        let (mut key, w) = entry_to_wi(e, i);
        if used.contains(&key) {
            while used.contains(&next_free.to_string()) {
                next_free = next_free.saturating_add(1);
            }
            key = next_free.to_string();
        }
        used.insert(key.clone());
        entries.insert(key, Value::Object(w));
    }
    let extensions = (!book.extensions.is_empty()).then_some(Out::Obj(&book.extensions));
    Value::Object(arrange(
        &book.order,
        vec![
            ("entries", Some(Out::Owned(Value::Object(entries)))),
            ("name", book.name.as_deref().map(Out::Str)),
            ("description", book.description.as_deref().map(Out::Str)),
            ("scan_depth", book.scan_depth.as_ref().map(Out::Num)),
            ("token_budget", book.token_budget.as_ref().map(Out::Num)),
            ("recursive_scanning", book.recursive_scanning.map(Out::Bool)),
            ("extensions", extensions),
        ],
        &book.extra,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn corpus_dir() -> Option<std::path::PathBuf> {
        let d = crate::test_corpus::dir().join("lorebook");
        d.is_dir().then_some(d)
    }

    fn wi_files() -> Vec<(String, Value)> {
        let mut out = Vec::new();
        let Some(dir) = corpus_dir() else {
            eprintln!("shared corpus not found; skipped");
            return out;
        };
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        paths.sort();
        for p in paths {
            if p.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            if v.get("entries").is_some_and(Value::is_object) {
                out.push((p.display().to_string(), v));
            }
        }
        out
    }

    fn read(v: &Value) -> Lorebook {
        let mut d = Vec::new();
        from_worldinfo(v.as_object().cloned().unwrap_or_default(), &mut d)
    }

    #[test]
    fn worldinfo_corpus_round_trips_wi_v3_wi_with_equal_json() {
        let files = wi_files();
        if crate::test_corpus::is_full() {
            assert!(files.len() >= 4, "expected the corpus World Info files");
        } else {
            assert!(
                !files.is_empty(),
                "expected the in-repository World Info file"
            );
        }
        for (name, v) in files {
            let book = read(&v);
            assert_eq!(to_worldinfo(&book), v, "{name}");
            // Through V3 JSON text too: what a V3 writer stores reads back the same.
            let mut d = Vec::new();
            let again =
                Lorebook::from_json(book.to_json(), "data", true, &mut d).unwrap_or_default();
            assert_eq!(to_worldinfo(&again), v, "{name} via V3 JSON");
        }
    }

    #[test]
    fn worldinfo_corpus_round_trips_v3_wi_v3_with_equal_json() {
        for (name, v) in wi_files() {
            let book = read(&v);
            let back = read(&to_worldinfo(&book));
            assert_eq!(back.to_json(), book.to_json(), "{name}");
        }
    }

    #[test]
    fn worldinfo_kobold_sample_keeps_title_and_folders_and_absent_fields() {
        let Some(path) = crate::test_corpus::file("lorebook/st_KoboldAI_World_Sample.json") else {
            return;
        };
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        let book = read(&v);
        assert_eq!(book.entries.len(), 2);
        assert!(book.extra.contains_key("folders"));
        let e = &book.entries[0];
        assert_eq!(e.extra["title"], "AAA");
        assert_eq!(e.keys, vec!["AAA"]);
        assert_eq!(e.name.as_deref(), Some("AAA definition"));
        let absent = &e.extensions[STASH_KEY]["absent"];
        assert!(absent
            .as_array()
            .is_some_and(|a| a.contains(&json!("order"))));
        assert_eq!(to_worldinfo(&book), v);
    }

    #[test]
    fn worldinfo_extra_top_level_meta_key_survives() {
        let v = json!({"entries": {"3": {"uid": 3, "key": ["a"], "content": "x", "order": 1,
            "disable": true}}, "_meta": {"version": "4.3"}});
        let book = read(&v);
        assert_eq!(book.extra["_meta"]["version"], "4.3");
        assert!(!book.entries[0].enabled);
        assert_eq!(book.entries[0].id, Some(json!(3)));
        assert_eq!(to_worldinfo(&book), v);
    }

    #[test]
    fn worldinfo_knobs_travel_in_extensions_under_sillytavern_card_names() {
        let v: Value = serde_json::from_str(
            r#"{"entries": {"0": {"uid": 0, "key": ["k"], "keysecondary": ["s"],
            "comment": "c", "content": "t", "constant": false, "selective": true,
            "selectiveLogic": 3, "order": 5, "position": 4, "disable": false, "depth": 2,
            "role": 1, "probability": 50, "useProbability": true, "group": "g",
            "groupOverride": true, "groupWeight": 7, "useGroupScoring": true, "scanDepth": 3,
            "caseSensitive": true, "matchWholeWords": false, "excludeRecursion": true,
            "preventRecursion": true, "delayUntilRecursion": 2, "sticky": 1, "cooldown": 2,
            "delay": 3, "triggers": ["normal"], "ignoreBudget": true, "outletName": "o",
            "automationId": "a", "vectorized": true, "displayIndex": 9,
            "matchPersonaDescription": true, "matchCharacterDescription": true,
            "matchCharacterPersonality": true, "matchCharacterDepthPrompt": true,
            "matchScenario": true, "matchCreatorNotes": true, "extensions": {}}}}"#,
        )
        .unwrap_or_default();
        let book = read(&v);
        let e = &book.entries[0];
        let x = &e.extensions;
        assert_eq!(x["selectiveLogic"], 3);
        assert_eq!(x["group_override"], true);
        assert_eq!(x["group_weight"], 7);
        assert_eq!(x["use_group_scoring"], true);
        assert_eq!(x["scan_depth"], 3);
        assert_eq!(x["case_sensitive"], true);
        assert_eq!(x["match_whole_words"], false);
        assert_eq!(x["exclude_recursion"], true);
        assert_eq!(x["prevent_recursion"], true);
        assert_eq!(x["delay_until_recursion"], 2);
        assert_eq!(x["ignore_budget"], true);
        assert_eq!(x["outlet_name"], "o");
        assert_eq!(x["automation_id"], "a");
        assert_eq!(x["display_index"], 9);
        assert_eq!(x["match_creator_notes"], true);
        assert_eq!(x["position"], 4);
        assert!(!x.contains_key(STASH_KEY), "nothing needs the stash: {x:?}");
        assert_eq!(e.position.as_deref(), Some("after_char"));
        assert_eq!(e.case_sensitive, Some(true));
        assert_eq!(e.insertion_order, Number::from(5));
        assert_eq!(e.secondary_keys, Some(vec!["s".to_string()]));
        assert_eq!(to_worldinfo(&book), v);
    }

    #[test]
    fn worldinfo_sillytavern_exported_character_book_entry_reads_back_with_same_knobs() {
        // The shape SillyTavern writes into a card's character_book.
        let card_book: Value = serde_json::from_str(
            r#"{"entries": [{"id": 7, "keys": ["gate"], "secondary_keys": [],
            "comment": "gate", "content": "The gate.", "constant": false, "selective": true,
            "insertion_order": 30, "enabled": true, "position": "after_char", "use_regex": true,
            "extensions": {"position": 4, "exclude_recursion": false, "display_index": 0,
                "probability": 80, "useProbability": true, "depth": 3, "selectiveLogic": 2,
                "outlet_name": "", "group": "doors", "group_override": false, "group_weight": 100,
                "prevent_recursion": true, "delay_until_recursion": false, "scan_depth": null,
                "match_whole_words": null, "use_group_scoring": false, "case_sensitive": null,
                "automation_id": "", "role": 2, "vectorized": false, "sticky": 2,
                "cooldown": null, "delay": null, "match_persona_description": false,
                "match_character_description": false, "match_character_personality": false,
                "match_character_depth_prompt": false, "match_scenario": false,
                "match_creator_notes": false, "triggers": [], "ignore_budget": false}}]}"#,
        )
        .unwrap_or_default();
        let mut d = Vec::new();
        let book = Lorebook::from_json(card_book, "", true, &mut d).unwrap_or_default();
        let wi = to_worldinfo(&book);
        let w = &wi["entries"]["7"];
        assert_eq!(w["uid"], 7);
        assert_eq!(w["key"], json!(["gate"]));
        assert_eq!(w["order"], 30);
        assert_eq!(w["position"], 4);
        assert_eq!(w["depth"], 3);
        assert_eq!(w["role"], 2);
        assert_eq!(w["probability"], 80);
        assert_eq!(w["selectiveLogic"], 2);
        assert_eq!(w["group"], "doors");
        assert_eq!(w["groupWeight"], 100);
        assert_eq!(w["preventRecursion"], true);
        assert_eq!(w["sticky"], 2);
        assert_eq!(w["scanDepth"], Value::Null);
        assert_eq!(w["disable"], false);
        assert_eq!(w["extensions"], json!({}));
        let back = read(&wi);
        assert_eq!(back.to_json(), book.to_json());
    }

    #[test]
    fn worldinfo_choral_original_data_round_trips_v3_wi_v3() {
        for (name, v) in wi_files() {
            let Some(orig) = v.get("originalData") else {
                continue;
            };
            let mut d = Vec::new();
            let book = Lorebook::from_json(orig.clone(), "", false, &mut d).unwrap_or_default();
            let back = read(&to_worldinfo(&book));
            assert_eq!(back.to_json(), book.to_json(), "{name}");
        }
    }

    #[test]
    fn worldinfo_odd_types_are_repaired_and_restored_verbatim() {
        let v = json!({"entries": {"a": {"uid": "x1", "key": "one, two", "content": 5,
            "order": "12", "disable": "false", "addMemo": true, "keys": "stray",
            "extensions": {"position": 9, "custom": 1}, "position": 0}}});
        let mut d = Vec::new();
        let book = from_worldinfo(v.as_object().cloned().unwrap_or_default(), &mut d);
        assert!(!d.is_empty());
        let e = &book.entries[0];
        assert_eq!(e.keys, vec!["one", "two"]);
        assert_eq!(e.content, "5");
        assert_eq!(e.insertion_order, Number::from(12));
        assert_eq!(e.extensions["custom"], 1);
        assert_eq!(e.extensions["position"], 0);
        assert_eq!(to_worldinfo(&book), v);
    }

    fn any_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1e6f64..1e6).prop_map(Value::from),
            "[a-z0-9 ,/]{0,6}".prop_map(Value::String),
        ];
        leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                proptest::collection::vec(("[a-z_]{1,4}", inner), 0..3)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    fn any_wi_entry() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let names: Vec<&'static str> = [
            "uid",
            "key",
            "keysecondary",
            "comment",
            "content",
            "constant",
            "selective",
            "order",
            "disable",
            "extensions",
            "name",
            "priority",
            "use_regex",
            "case_sensitive",
            "addMemo",
            "keys",
            "enabled",
            "id",
            "title",
            "position",
            "caseSensitive",
            "depth",
            "ccv3_world_info",
            "ccv3_extra",
        ]
        .into_iter()
        .chain(KNOBS.iter().map(|(w, _)| *w))
        .collect();
        proptest::collection::vec((proptest::sample::select(names), any_value()), 0..12)
            .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
    }

    proptest::proptest! {
        #[test]
        fn worldinfo_any_entries_round_trip_wi_v3_wi(
            entries in proptest::collection::vec(("[0-9a-z]{1,3}", any_wi_entry()), 0..5),
            extra in any_value(),
        ) {
            let mut top = Object::new();
            top.insert("entries".into(), Value::Object(entries.into_iter().collect()));
            top.insert("_meta".into(), extra);
            let v = Value::Object(top);
            let book = read(&v);
            proptest::prop_assert_eq!(to_worldinfo(&book), v);
        }
    }

    fn any_v3_entry(stash: bool) -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let mut names: Vec<&'static str> = crate::model::ENTRY_FIELDS.to_vec();
        names.extend(["sticky", "uid", "key", "ccv3_extra", "x_app"]);
        if stash {
            names.push(STASH_KEY);
        }
        let ext_names: Vec<&'static str> = KNOBS
            .iter()
            .map(|(_, e)| *e)
            .chain(["x_app", "risuai"])
            .chain(stash.then_some(STASH_KEY))
            .collect();
        let ext =
            proptest::collection::vec((proptest::sample::select(ext_names), any_value()), 0..6)
                .prop_map(|kv| {
                    Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                });
        (
            proptest::collection::vec((proptest::sample::select(names), any_value()), 0..10),
            ext,
        )
            .prop_map(|(kv, ext)| {
                let mut m: Object = kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                m.insert("extensions".into(), ext);
                Value::Object(m)
            })
    }

    fn v3_book(entries: Vec<Value>) -> Lorebook {
        let mut d = Vec::new();
        Lorebook::from_json(json!({ "entries": entries }), "", false, &mut d).unwrap_or_default()
    }

    proptest::proptest! {
        #[test]
        fn worldinfo_any_v3_book_round_trips_v3_wi_v3_modulo_position(
            entries in proptest::collection::vec(any_v3_entry(false), 0..5),
        ) {
            let book = v3_book(entries);
            let ids: Vec<String> = book.entries.iter().enumerate().map(|(i, e)| default_key(e, i)).collect();
            let unique = ids.iter().collect::<HashSet<_>>().len() == ids.len();
            let back = read(&to_worldinfo(&book));
            proptest::prop_assert_eq!(book.entries.len(), back.entries.len());
            if unique {
                for (x, y) in book.entries.iter().zip(&back.entries) {
                    proptest::prop_assert_eq!(
                        without_position(&x.to_json()),
                        without_position(&y.to_json())
                    );
                }
            }
        }

        #[test]
        fn worldinfo_v3_wi_v3_is_exact_after_one_pass(
            entries in proptest::collection::vec(any_v3_entry(true), 0..5),
        ) {
            let once = read(&to_worldinfo(&v3_book(entries)));
            let twice = read(&to_worldinfo(&once));
            proptest::prop_assert_eq!(twice.to_json(), once.to_json());
        }
    }

    #[test]
    fn worldinfo_round_trip_holds_when_entries_are_dropped_or_keys_odd() {
        let v = json!({"entries": {"0": null, "1": {"key": ["a"], "content": "b"},
            "x": {"key": ["c"], "content": "d", "uid": 1}}});
        let book = read(&v);
        assert_eq!(book.entries.len(), 2);
        let wi = to_worldinfo(&book);
        let mut expected = v.clone();
        if let Some(m) = expected["entries"].as_object_mut() {
            m.shift_remove("0");
        }
        assert_eq!(wi, expected);
        assert_eq!(to_worldinfo(&read(&wi)), wi);
    }

    /// An entry's V3 JSON without `position` and `extensions.position` (the documented
    /// normalisation).
    fn without_position(e: &Value) -> Value {
        let mut e = e.clone();
        if let Some(m) = e.as_object_mut() {
            m.shift_remove("position");
            if let Some(Value::Object(x)) = m.get_mut("extensions") {
                x.shift_remove("position");
            }
        }
        e
    }

    #[test]
    fn worldinfo_corpus_card_books_round_trip_v3_wi_v3() {
        let root = crate::test_corpus::dir();
        let files = [
            "json/ca_e2e_test-ccv3-beepboop.json",
            "json/ca_e2e_test-ccv2-amanda.json",
            "json/ca_fixture_hybrid_format_v2.json",
            "png/lide_akerodia_zh_JSON_with_png_extension.png",
        ];
        for f in files {
            let Ok(bytes) = std::fs::read(root.join(f)) else {
                continue;
            };
            let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let mut d = Vec::new();
            let Some(book) = crate::Card::from_json(v, &mut d)
                .ok()
                .and_then(|c| c.data.character_book)
            else {
                continue;
            };
            let back = read(&to_worldinfo(&book));
            let (a, b) = (book.to_json(), back.to_json());
            assert_eq!(a.get("name"), b.get("name"), "{f}");
            assert_eq!(a.get("extensions"), b.get("extensions"), "{f}");
            assert_eq!(book.entries.len(), back.entries.len(), "{f}");
            for (x, y) in book.entries.iter().zip(&back.entries) {
                let (x, y) = (x.to_json(), y.to_json());
                if x.get("position").is_some() && x["extensions"].get("position").is_some() {
                    assert_eq!(x, y, "{f}");
                } else {
                    assert_eq!(without_position(&x), without_position(&y), "{f}");
                }
            }
        }
    }

    #[test]
    fn worldinfo_v3_extras_named_like_knobs_stay_unknown() {
        let mut e = Entry::new(&["a"], "b");
        e.extra.insert("sticky".into(), json!(0));
        e.extra.insert("position".into(), json!(4));
        e.extra.insert("x_other".into(), json!(true));
        let mut book = Lorebook::default();
        book.entries.push(e);
        let wi = to_worldinfo(&book);
        let w = &wi["entries"]["0"];
        assert_eq!(w[EXTRA_KEY], json!({"sticky": 0, "position": 4}));
        assert_eq!(w["x_other"], true);
        assert!(w.get("sticky").is_none() && w.get("position").is_none());
        let back = read(&wi);
        assert_eq!(back.entries[0].to_json(), book.entries[0].to_json());
    }

    #[test]
    fn worldinfo_documented_normalisation_position_gains_extensions_position() {
        let mut e = Entry::new(&["a"], "b");
        e.position = Some("after_char".into());
        let mut book = Lorebook::default();
        book.entries.push(e);
        let wi = to_worldinfo(&book);
        assert_eq!(wi["entries"]["0"]["position"], 1);
        let back = read(&wi);
        assert_eq!(back.entries[0].position.as_deref(), Some("after_char"));
        assert_eq!(back.entries[0].extensions["position"], 1);
        // From then on the round trip is exact.
        assert_eq!(read(&to_worldinfo(&back)).to_json(), back.to_json());
    }

    #[test]
    fn worldinfo_v3_only_fields_survive_v3_wi_v3() {
        let mut e = Entry::new(&["a"], "b");
        e.name = Some("Named".into());
        e.comment = Some("memo".into());
        e.priority = Some(Number::from(3));
        e.use_regex = true;
        e.case_sensitive = Some(false);
        e.id = Some(json!("s1"));
        e.extra.insert("x_custom".into(), json!([1]));
        let mut e2 = Entry::new(&["c"], "d");
        e2.id = Some(json!("s1")); // duplicate id
        let book = Lorebook {
            name: Some("Book".into()),
            scan_depth: Some(Number::from(4)),
            entries: vec![e, e2],
            ..Default::default()
        };
        let wi = to_worldinfo(&book);
        assert_eq!(wi["name"], "Book");
        assert!(wi["entries"].get("s1").is_some() && wi["entries"].get("0").is_some());
        let back = read(&wi);
        assert_eq!(back.entries[0].to_json(), book.entries[0].to_json());
        assert_eq!(back.name.as_deref(), Some("Book"));
        assert_eq!(back.scan_depth, Some(Number::from(4)));
        // The duplicate keeps its id; its new key is recorded.
        assert_eq!(back.entries[1].id, Some(json!("s1")));
        assert_eq!(back.entries[1].extensions[STASH_KEY]["key"], "0");
    }
}
