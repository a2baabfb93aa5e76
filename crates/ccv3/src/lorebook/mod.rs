//! Standalone lorebooks: detection, reading every format in the wild, and writing V3 or World Info.
//!
//! # Formats
//!
//! | [`BookFormat`] | shape | read | write |
//! |---|---|---|---|
//! | `LorebookV3` | `{"spec":"lorebook_v3","data":{...}}` (also ccardlib's `chara_book_v2`/`chara_book_v3`) | yes | [`Lorebook::to_lorebook_v3`] |
//! | `CharacterBook` | a bare `character_book` object: `entries` is an array | yes | [`Lorebook::to_json`] |
//! | `WorldInfo` | SillyTavern World Info: `entries` is an object keyed by uid ([`worldinfo`]) | yes | [`to_worldinfo`] |
//! | `NovelAi` | NovelAI `.lorebook`: `lorebookVersion`, entries with `text`, `keys`, `contextConfig` ([`novelai`]) | yes | no |
//! | `Agnai` | Agnai memory book: `kind: "memory"`, entries with `name`, `entry`, `keywords` ([`agnai`]) | yes | no |
//! | `Risu` | RisuAI export: `{"type":"risu","ver":1,"data":[...]}` ([`risu`]) | yes | no |
//! | `RisuModule` | RisuAI module: `{"type":"risuModule", ...}` as JSON or inside a `.risum` file ([`risu_module`], [`risum`]) | yes | no |
//! | `Kobold` | KoboldAI story save's `worldinfo` list, or KoboldAI Lite's world info export (that list alone) ([`kobold`]) | yes | no |
//!
//! Detection looks at the top-level shape only, in the order of the table (the markers first:
//! `spec`, `type: "risu"`, `kind: "memory"`, `lorebookVersion`; then the type of `entries`).
//! A character card is never taken for a lorebook: `spec` `chara_card_v2`/`chara_card_v3`, or the
//! V1 fields (`name` with `first_mes`, `description`, `personality`, ...) say "card".
//!
//! The importers keep what has no V3 field in each entry's `extensions` under the application's
//! name (`novelai`, `agnai`, `risuai`), and book-level leftovers in the book's `extensions`
//! under the same name, so nothing is lost.

pub mod agnai;
mod import;
pub mod kobold;
pub mod novelai;
pub mod risu;
pub mod risu_module;
pub mod risum;
pub mod risum_table;
pub mod worldinfo;

pub use worldinfo::{from_worldinfo, to_worldinfo};

pub(crate) use import::{
    comma_keys_keeping_text, finish_imported_entry, read_entry_list, stash_leftovers,
};

use crate::model::fields::Object;
use crate::{Diagnostic, Error, Lorebook, Result};
use serde_json::Value;

/// Field names of the spec's Lorebook object.
const BOOK_FIELDS: [&str; 7] = [
    "name",
    "description",
    "scan_depth",
    "token_budget",
    "recursive_scanning",
    "extensions",
    "entries",
];

/// The format a standalone lorebook was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BookFormat {
    /// `{"spec":"lorebook_v3","data":{...}}`.
    LorebookV3,
    /// A bare `character_book` object (V2 or V3 entries).
    CharacterBook,
    /// SillyTavern World Info (entries keyed by uid).
    WorldInfo,
    /// NovelAI `.lorebook`.
    NovelAi,
    /// Agnai memory book.
    Agnai,
    /// RisuAI lorebook export.
    Risu,
    /// KoboldAI world info: a story save's `worldinfo`, or KoboldAI Lite's export of it.
    Kobold,
    /// A RisuAI module's lorebook (JSON, or a `.risum` file).
    RisuModule,
}

impl BookFormat {
    /// A short lowercase name: `lorebook_v3`, `character_book`, `worldinfo`, `novelai`, `agnai`,
    /// `risu`, `kobold`, `risu_module`.
    pub fn label(self) -> &'static str {
        match self {
            BookFormat::LorebookV3 => "lorebook_v3",
            BookFormat::CharacterBook => "character_book",
            BookFormat::WorldInfo => "worldinfo",
            BookFormat::NovelAi => "novelai",
            BookFormat::Agnai => "agnai",
            BookFormat::Risu => "risu",
            BookFormat::Kobold => "kobold",
            BookFormat::RisuModule => "risu_module",
        }
    }
}

/// True when `obj` looks like a character card (V1, V2 or V3) rather than a lorebook.
///
/// `spec` `chara_card_*` is a card; so is a string `name` with a V1 field other than
/// `description` (Agnai memory books have `name` and `description` too), unless `entries` holds
/// entry-shaped items: such a file is a lorebook whatever else it carries (issue 13).
fn looks_like_card(obj: &Object) -> bool {
    if let Some(spec) = obj.get("spec").and_then(Value::as_str) {
        if spec.starts_with("chara_card") {
            return true;
        }
    }
    let entry_shaped = |v: &Value| {
        v.as_object().is_some_and(|e| {
            crate::model::ENTRY_MARKERS
                .iter()
                .any(|k| e.contains_key(*k))
        })
    };
    let book_entries = match obj.get("entries") {
        Some(Value::Array(items)) => items.first().is_some_and(entry_shaped),
        Some(Value::Object(items)) => items.values().next().is_some_and(entry_shaped),
        _ => false,
    };
    if book_entries {
        return false;
    }
    let named = ["name", "char_name"]
        .iter()
        .any(|k| obj.get(*k).is_some_and(Value::is_string));
    named
        && crate::model::CARD_ONLY_FIELDS
            .iter()
            .any(|k| obj.contains_key(*k))
}

/// The lorebook format of a JSON value, or `None` when it is not a lorebook (a card, say).
///
/// ```
/// use ccv3::lorebook::{detect_format, BookFormat};
/// let v = serde_json::json!({"entries": {"0": {"key": ["a"], "content": "b"}}});
/// assert_eq!(detect_format(&v), Some(BookFormat::WorldInfo));
/// let card = serde_json::json!({"spec": "chara_card_v3", "data": {"character_book": {"entries": []}}});
/// assert_eq!(detect_format(&card), None);
/// ```
pub fn detect_format(v: &Value) -> Option<BookFormat> {
    if let Value::Array(items) = v {
        // KoboldAI Lite's world info export: the story's `worldinfo` list alone.
        return items
            .first()
            .is_some_and(kobold::is_kobold_entry)
            .then_some(BookFormat::Kobold);
    }
    let obj = v.as_object()?;
    if kobold::is_kobold_story(obj) {
        return Some(BookFormat::Kobold);
    }
    if looks_like_card(obj) {
        return None;
    }
    let spec = obj.get("spec").and_then(Value::as_str);
    if matches!(
        spec,
        Some("lorebook_v3" | "chara_book_v3" | "chara_book_v2")
    ) && obj.get("data").is_some_and(Value::is_object)
    {
        return Some(BookFormat::LorebookV3);
    }
    if risu_module::is_risu_module(obj) {
        return Some(BookFormat::RisuModule);
    }
    if obj.get("type").and_then(Value::as_str) == Some("risu")
        && obj.get("data").is_some_and(Value::is_array)
    {
        return Some(BookFormat::Risu);
    }
    let entries = obj.get("entries");
    let entries_array = entries.and_then(Value::as_array);
    if obj.get("kind").and_then(Value::as_str) == Some("memory") && entries_array.is_some() {
        return Some(BookFormat::Agnai);
    }
    if obj.contains_key("lorebookVersion") && entries_array.is_some() {
        return Some(BookFormat::NovelAi);
    }
    match entries {
        Some(Value::Object(_)) => Some(BookFormat::WorldInfo),
        Some(Value::Array(items)) => {
            // Unmarked exports: tell the entry shapes apart by their field names.
            let first = items.iter().find_map(Value::as_object);
            match first {
                Some(e) if e.contains_key("entry") && e.contains_key("keywords") => {
                    Some(BookFormat::Agnai)
                }
                Some(e) if e.contains_key("text") && !e.contains_key("content") => {
                    Some(BookFormat::NovelAi)
                }
                _ => Some(BookFormat::CharacterBook),
            }
        }
        _ => None,
    }
}

/// True when `v` is a lorebook in one of the [`BookFormat`]s, and not a character card.
///
/// ```
/// let book = serde_json::json!({"spec": "lorebook_v3", "data": {"extensions": {}, "entries": []}});
/// assert!(ccv3::lorebook::looks_like_lorebook(&book));
/// let v1 = serde_json::json!({"name": "Aqua", "first_mes": "Hi", "entries": []});
/// assert!(!ccv3::lorebook::looks_like_lorebook(&v1));
/// ```
pub fn looks_like_lorebook(v: &Value) -> bool {
    detect_format(v).is_some()
}

/// Reads a standalone lorebook in any [`BookFormat`] into the V3 model.
///
/// Repairs are recorded in `diags`. Fails with [`Error::Unrecognized`] when the value is not a
/// lorebook (a character card included: read those with [`crate::Card::from_json`]).
///
/// ```
/// use ccv3::lorebook::{read_lorebook_value, BookFormat};
/// let v = serde_json::json!({"kind": "memory", "name": "Facts", "entries": [
///     {"name": "Sky", "entry": "The sky is green.", "keywords": ["sky"],
///      "priority": 1, "weight": 5, "enabled": true}]});
/// let mut diags = Vec::new();
/// let (book, format) = read_lorebook_value(v, &mut diags)?;
/// assert_eq!(format, BookFormat::Agnai);
/// assert_eq!(book.entries[0].content, "The sky is green.");
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn read_lorebook_value(
    v: Value,
    diags: &mut Vec<Diagnostic>,
) -> Result<(Lorebook, BookFormat)> {
    let Some(format) = detect_format(&v) else {
        let what = match &v {
            Value::Object(o) if looks_like_card(o) => {
                "a character card, not a lorebook".to_string()
            }
            Value::Object(_) => "no lorebook markers and no `entries`".to_string(),
            other => format!(
                "a lorebook must be a JSON object, found {}",
                crate::model::fields::type_name(other)
            ),
        };
        return Err(Error::Unrecognized(what));
    };
    if format == BookFormat::Kobold {
        return Ok((kobold::from_kobold(v, diags), format));
    }
    let Value::Object(mut obj) = v else {
        return Err(Error::Unrecognized("not a JSON object".into()));
    };
    let book = match format {
        BookFormat::LorebookV3 => {
            let data = obj.shift_remove("data").unwrap_or(Value::Null);
            let spec = obj.get("spec").and_then(Value::as_str).unwrap_or_default();
            if spec != "lorebook_v3" {
                diags.push(Diagnostic::warning(
                    "unknown-spec",
                    "spec",
                    format!(
                        "lorebook spec {spec:?} is not \"lorebook_v3\"; read it as lorebook_v3"
                    ),
                ));
            }
            let mut book = Lorebook::from_json(data, "data", true, diags)
                .ok_or_else(|| Error::format("data", "the lorebook has no `data` object"))?;
            // Unknown fields beside `spec` and `data` are kept with the book, unless the book
            // has a field of that name.
            for (k, v) in obj {
                if k == "spec" {
                    continue;
                }
                if BOOK_FIELDS.contains(&k.as_str()) || book.extra.contains_key(&k) {
                    diags.push(Diagnostic::warning(
                        "unknown-field",
                        k.clone(),
                        format!("top-level field {k:?} beside `data` clashes with a book field; dropped it"),
                    ));
                } else {
                    diags.push(Diagnostic::info(
                        "unknown-field",
                        k.clone(),
                        format!("unknown top-level field {k:?} kept in the book's extra fields"),
                    ));
                    book.extra.insert(k, v);
                }
            }
            book
        }
        BookFormat::CharacterBook => Lorebook::from_json(Value::Object(obj), "", false, diags)
            .ok_or_else(|| Error::format("", "not a lorebook object"))?,
        BookFormat::WorldInfo => worldinfo::from_worldinfo(obj, diags),
        BookFormat::NovelAi => novelai::from_novelai(obj, diags),
        BookFormat::Agnai => agnai::from_agnai(obj, diags),
        BookFormat::Risu => risu::from_risu(obj, diags),
        BookFormat::Kobold => kobold::from_kobold(Value::Object(obj), diags),
        BookFormat::RisuModule => risu_module::from_risu_module(obj, diags),
    };
    Ok((book, format))
}

/// Parses JSON bytes (a UTF-8 BOM is skipped) and reads the lorebook in them.
///
/// ```
/// use ccv3::lorebook::{read_lorebook_slice, BookFormat};
/// let text = br#"{"entries": {"0": {"uid": 0, "key": ["dragon"], "content": "Dragons breathe fire."}}}"#;
/// let mut diags = Vec::new();
/// let (book, format) = read_lorebook_slice(text, &mut diags)?;
/// assert_eq!(format, BookFormat::WorldInfo);
/// assert_eq!(book.entries[0].keys, ["dragon"]);
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn read_lorebook_slice(
    bytes: &[u8],
    diags: &mut Vec<Diagnostic>,
) -> Result<(Lorebook, BookFormat)> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let (v, repaired) =
        crate::json::from_slice_repaired::<Value>(bytes).map_err(|e| Error::from_json(&e))?;
    diags.extend(repaired);
    read_lorebook_value(v, diags)
}

/// Writes a lorebook in a writable format: `LorebookV3`, `CharacterBook` or `WorldInfo`.
///
/// The importer formats are read-only: asking for one is an [`Error::Parameter`].
///
/// ```
/// use ccv3::lorebook::{write_lorebook_value, BookFormat};
/// let mut book = ccv3::Lorebook::default();
/// book.entries.push(ccv3::Entry::new(&["dragon"], "Dragons breathe fire."));
/// let v3 = write_lorebook_value(&book, BookFormat::LorebookV3)?;
/// assert_eq!(v3["spec"], "lorebook_v3");
/// let wi = write_lorebook_value(&book, BookFormat::WorldInfo)?;
/// assert_eq!(wi["entries"]["0"]["key"][0], "dragon");
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn write_lorebook_value(book: &Lorebook, format: BookFormat) -> Result<Value> {
    match format {
        BookFormat::LorebookV3 => Ok(book.to_lorebook_v3()),
        BookFormat::CharacterBook => Ok(book.to_json()),
        BookFormat::WorldInfo => Ok(worldinfo::to_worldinfo(book)),
        other => Err(Error::Parameter(format!(
            "cannot write {} lorebooks: that format is read-only",
            other.label()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lorebook_detects_every_format() {
        let cases = [
            (
                json!({"spec": "lorebook_v3", "data": {"extensions": {}, "entries": []}}),
                BookFormat::LorebookV3,
            ),
            (
                json!({"extensions": {}, "entries": []}),
                BookFormat::CharacterBook,
            ),
            (json!({"entries": {}}), BookFormat::WorldInfo),
            (
                json!({"lorebookVersion": 4, "entries": []}),
                BookFormat::NovelAi,
            ),
            (json!({"kind": "memory", "entries": []}), BookFormat::Agnai),
            (
                json!({"type": "risu", "ver": 1, "data": []}),
                BookFormat::Risu,
            ),
            (
                json!({"entries": [{"entry": "x", "keywords": []}]}),
                BookFormat::Agnai,
            ),
            (
                json!({"entries": [{"text": "x", "keys": []}]}),
                BookFormat::NovelAi,
            ),
        ];
        for (v, f) in cases {
            assert_eq!(detect_format(&v), Some(f), "{v}");
            let mut d = Vec::new();
            let (_, got) = read_lorebook_value(v, &mut d).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got, f);
        }
    }

    #[test]
    fn lorebook_never_claims_a_character_card() {
        let cards = [
            json!({"spec": "chara_card_v2", "data": {"entries": []}}),
            json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {}}),
            json!({"name": "A", "first_mes": "hi", "entries": {}}),
            json!({"char_name": "A", "char_greeting": "hi"}),
            json!([1, 2]),
            json!("text"),
            json!({"hello": 1}),
        ];
        for c in cards {
            assert!(!looks_like_lorebook(&c), "{c}");
            let mut d = Vec::new();
            assert!(matches!(
                read_lorebook_value(c, &mut d),
                Err(Error::Unrecognized(_))
            ));
        }
    }

    #[test]
    fn lorebook_v3_standalone_reads_and_writes_back() {
        let v = json!({"spec": "lorebook_v3", "data": {"name": "B", "extensions": {},
            "entries": [{"keys": ["a"], "content": "b", "extensions": {}, "enabled": true,
            "insertion_order": 1, "use_regex": false}]}});
        let mut d = Vec::new();
        let (book, f) = read_lorebook_value(v.clone(), &mut d).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f, BookFormat::LorebookV3);
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(write_lorebook_value(&book, f).ok(), Some(v));
        assert!(write_lorebook_value(&book, BookFormat::NovelAi).is_err());
    }

    #[test]
    fn lorebook_slice_skips_bom_and_reports_bad_json() {
        let mut d = Vec::new();
        let ok = read_lorebook_slice(b"\xEF\xBB\xBF{\"entries\":{}}", &mut d);
        assert!(matches!(ok, Ok((_, BookFormat::WorldInfo))));
        assert!(matches!(
            read_lorebook_slice(b"{\"entries\":", &mut d),
            Err(Error::Json { .. })
        ));
    }

    #[test]
    fn lorebook_regression_corpus_never_panics() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/lorebook");
        let Ok(rd) = std::fs::read_dir(&dir) else {
            return;
        };
        let mut n = 0;
        for e in rd.flatten() {
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            let mut d = Vec::new();
            // The same checks as the fuzz target (fuzz/fuzz_targets/lorebook.rs).
            if let Ok((book, _)) = read_lorebook_slice(&bytes, &mut d) {
                let _ = crate::validate::validate_lorebook(&book, "data");
                let wi = to_worldinfo(&book);
                if let Value::Object(obj) = wi.clone() {
                    let mut d2 = Vec::new();
                    let back = from_worldinfo(obj, &mut d2);
                    assert_eq!(to_worldinfo(&back), wi, "{}", e.path().display());
                    if let Value::Object(obj2) = to_worldinfo(&back) {
                        let again = from_worldinfo(obj2, &mut d2);
                        assert_eq!(again.to_json(), back.to_json());
                    }
                }
                let _ = book.to_lorebook_v3();
            }
            n += 1;
        }
        assert!(n >= 10);
    }
}
