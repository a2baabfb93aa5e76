//! Backyard AI archives (`.byaf`): read as a character card, as SillyTavern imports them.
//!
//! # The format
//!
//! A BYAF file is a zip with `manifest.json` at its root (`schemaVersion`, `characters`: paths
//! of `character.json` files, `scenarios`: paths of scenario files, optional `author` with
//! `name` and `backyardURL`). A character has `name`, `displayName`, `persona`, `loreItems`
//! (`key`/`value` pairs) and `images` (`path` relative to the character's folder, `label`); a
//! scenario has `narrative`, `formattingInstructions`, `firstMessages` (at most one),
//! `exampleMessages`, model settings and a chat history (`messages`).
//!
//! # Mapping (SillyTavern's importer, written anew)
//!
//! | BYAF | card |
//! |---|---|
//! | character `name` (else `displayName`) | `name` |
//! | character `persona` | `description` |
//! | first scenario `narrative` | `scenario` |
//! | first scenario `firstMessages[0].text` | `first_mes` |
//! | first scenario `exampleMessages`, each after a `<START>` line | `mes_example` |
//! | first scenario `formattingInstructions` | `system_prompt` |
//! | `firstMessages[0].text` of the other scenarios | `alternate_greetings` |
//! | `loreItems` (`key` split on commas, `value`) | `character_book` entries, in order |
//! | manifest `author.name` / `author.backyardURL` | `creator` / `creator_notes` |
//! | character `images` | `assets` (`icon`, the first named `main`), the files kept |
//!
//! Backyard's `{character}` and `{user}` (and `#{character}:` / `#{user}:` at line starts) become
//! `{{char}}` and `{{user}}`. Only the first character is read (warning `byaf-more-characters`).
//! What has no card field is kept under `data.extensions.byaf`: the manifest, the character
//! without its lore items, and the scenarios without their chat history (`messages`), so model
//! settings and titles survive a conversion.

use crate::charx::CharxFile;
use crate::diag::Diagnostic;
use crate::error::{Error, Result};
use crate::model::{Asset, Card};
use serde_json::{json, Map, Value};

/// The root file that marks a BYAF archive.
pub const MANIFEST: &str = "manifest.json";

/// True when the zip's files are a BYAF archive (a `manifest.json` at the root, no `card.json`).
///
/// ```
/// use ccv3::charx::CharxFile;
/// let file = |p: &str| CharxFile { path: p.into(), data: b"{}".to_vec() };
/// assert!(ccv3::byaf::is_byaf(&[file("manifest.json")]));
/// assert!(!ccv3::byaf::is_byaf(&[file("manifest.json"), file("card.json")]));
/// ```
pub fn is_byaf(files: &[CharxFile]) -> bool {
    files.iter().any(|f| f.path == MANIFEST) && !files.iter().any(|f| f.path == "card.json")
}

/// Takes the text field `key` out of an importer's map, its macros converted by `convert`; the
/// original is kept in `kept` when the conversion changed it, and a value that is not text is
/// kept there as it is (and read as empty). Shared by the importers of other applications'
/// characters (Backyard's legacy PNG, text-generation-webui).
pub(crate) fn take_text(
    map: &mut Map<String, Value>,
    key: &str,
    kept: &mut Map<String, Value>,
    convert: impl Fn(&str) -> String,
) -> String {
    match map.shift_remove(key) {
        Some(Value::String(s)) => {
            let out = convert(&s);
            if out != s {
                kept.insert(key.into(), Value::String(s));
            }
            out
        }
        Some(other) => {
            kept.insert(key.into(), other);
            String::new()
        }
        None => String::new(),
    }
}

/// Backyard's `{character}` / `{user}` placeholders as CBS macros.
///
/// ```
/// assert_eq!(ccv3::byaf::macros("#{character}: Hi {user}!"), "{{char}}: Hi {{user}}!");
/// assert_eq!(ccv3::byaf::macros("{{user}} stays"), "{{user}} stays");
/// ```
pub fn macros(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(i) = rest.find(['{', '#']) {
        let (head, tail) = rest.split_at(i);
        out.push_str(head);
        let lower = |n: usize| tail.get(..n).map(str::to_ascii_lowercase);
        let mut done = false;
        for (from, to) in [
            ("#{user}:", "{{user}}:"),
            ("#{character}:", "{{char}}:"),
            ("{user}", "{{user}}"),
            ("{character}", "{{char}}"),
        ] {
            if lower(from.len()).as_deref() == Some(from)
                && (from.ends_with(':') || !tail[from.len()..].starts_with('}'))
                && !out.ends_with('{')
            {
                out.push_str(to);
                rest = &tail[from.len()..];
                done = true;
                break;
            }
        }
        if !done {
            let c = tail.chars().next().unwrap_or('{');
            out.push(c);
            rest = &tail[c.len_utf8()..];
        }
    }
    out.push_str(rest);
    out
}

fn parse(files: &[CharxFile], path: &str) -> Result<Value> {
    let file = files
        .iter()
        .find(|f| f.path == path)
        .ok_or_else(|| byaf_err(path, "the archive has no such file"))?;
    crate::json::from_slice_repaired::<Value>(&file.data)
        .map(|(v, _)| v)
        .map_err(|e| byaf_err(path, format!("not JSON: {}", Error::from_json(&e))))
}

fn byaf_err(entry: &str, problem: impl Into<String>) -> Error {
    Error::Charx {
        entry: entry.into(),
        problem: format!("Backyard AI archive (BYAF): {}", problem.into()),
    }
}

fn text(v: &Value, key: &str) -> String {
    macros(v.get(key).and_then(Value::as_str).unwrap_or_default())
}

/// Reads the card of a BYAF archive from its files (see the module docs). The archive's files
/// are kept; the character's images become the card's `embeded://` icons.
///
/// Longer than 150 lines on purpose: one Backyard AI field after another, each to its card
/// field in the card's order, with what has no card field kept beside them; split, each part
/// would take the same maps and lists.
///
/// # Errors
///
/// [`Error::Charx`] naming the file when `manifest.json` or the character file is missing or
/// not JSON, or when the manifest lists no character.
///
/// ```
/// use ccv3::{byaf, charx};
/// // A .byaf is a zip without card.json: read its files, then the character.
/// let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/wild/backyard_archive.byaf"));
/// let (files, _) = charx::read_zip_files(std::io::Cursor::new(&bytes[..]), &charx::Limits::default())?;
/// assert!(byaf::is_byaf(&files));
/// let (card, _assets) = byaf::card_from_byaf(&files, &mut Vec::new())?;
/// assert!(!card.data.name.is_empty());
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn card_from_byaf(
    files: &[CharxFile],
    diags: &mut Vec<Diagnostic>,
) -> Result<(Card, Vec<Asset>)> {
    let manifest = parse(files, MANIFEST)?;
    let characters = manifest
        .get("characters")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let Some(char_path) = characters.first().and_then(Value::as_str) else {
        return Err(byaf_err(MANIFEST, "the manifest lists no character"));
    };
    if characters.len() > 1 {
        diags.push(Diagnostic::warning(
            "byaf-more-characters",
            "",
            format!(
                "the archive holds {} characters; read the first ({char_path})",
                characters.len()
            ),
        ));
    }
    let mut character = parse(files, char_path)?;
    let mut scenarios: Vec<Value> = Vec::new();
    for path in manifest
        .get("scenarios")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        match parse(files, path) {
            Ok(v) => scenarios.push(v),
            Err(e) => diags.push(Diagnostic::warning(
                "byaf-scenario-unreadable",
                "",
                format!("{e}; scenario skipped"),
            )),
        }
    }
    let empty = Value::Object(Map::new());
    let first = scenarios.first().unwrap_or(&empty);
    let first_text = |s: &Value| {
        s.get("firstMessages")
            .and_then(Value::as_array)
            .and_then(|m| m.first())
            .map(|m| text(m, "text"))
    };
    let mut examples = String::new();
    for m in first
        .get("exampleMessages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let t = text(m, "text");
        if !t.is_empty() {
            examples.push_str("<START>\n");
            examples.push_str(&t);
            examples.push('\n');
        }
    }
    let greetings: Vec<String> = scenarios
        .iter()
        .skip(1)
        .filter_map(first_text)
        .filter(|t| !t.is_empty())
        .collect();
    let entries: Vec<Value> = character
        .get("loreItems")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, item)| {
            let keys: Vec<String> = text(item, "key")
                .split(',')
                .map(str::trim)
                .filter(|k| !k.is_empty())
                .map(str::to_string)
                .collect();
            json!({"keys": keys, "content": text(item, "value"), "extensions": {},
                   "enabled": true, "insertion_order": i, "use_regex": false})
        })
        .collect();
    let name = [character.get("name"), character.get("displayName")]
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|n| !n.is_empty())
        .unwrap_or_default()
        .to_string();
    let author = manifest.get("author").unwrap_or(&empty);
    // What has no card field: kept (chat histories aside).
    if let Some(c) = character.as_object_mut() {
        c.shift_remove("loreItems");
    }
    let kept_scenarios: Vec<Value> = scenarios
        .iter()
        .cloned()
        .map(|mut s| {
            if let Some(o) = s.as_object_mut() {
                o.shift_remove("messages");
            }
            s
        })
        .collect();
    let mut data = json!({
        "name": name,
        "description": text(&character, "persona"),
        "personality": "",
        "scenario": text(first, "narrative"),
        "first_mes": first_text(first).unwrap_or_default(),
        "mes_example": examples.trim_end(),
        "creator_notes": author.get("backyardURL").and_then(Value::as_str).unwrap_or_default(),
        "system_prompt": text(first, "formattingInstructions"),
        "post_history_instructions": "",
        "alternate_greetings": greetings,
        "tags": [],
        "creator": author.get("name").and_then(Value::as_str).unwrap_or_default(),
        "character_version": "",
        "extensions": {"byaf": {"manifest": manifest, "character": character,
                                "scenarios": kept_scenarios}},
    });
    if !entries.is_empty() {
        data["character_book"] = json!({"entries": entries, "extensions": {}});
    }
    let dir = char_path.rsplit_once('/').map_or("", |(d, _)| d);
    let mut assets = Vec::new();
    for img in character
        .get("images")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(rel) = img.get("path").and_then(Value::as_str) else {
            continue;
        };
        let full = if dir.is_empty() {
            rel.trim_start_matches("./").to_string()
        } else {
            format!("{dir}/{}", rel.trim_start_matches("./"))
        };
        if !files.iter().any(|f| f.path == full) {
            diags.push(Diagnostic::warning(
                "byaf-image-missing",
                "",
                format!("the character's image {full:?} is not in the archive"),
            ));
            continue;
        }
        let ext = full
            .rsplit_once('.')
            .map_or("png", |(_, e)| e)
            .to_ascii_lowercase();
        let label = if assets.is_empty() {
            "main".to_string()
        } else {
            img.get("label")
                .and_then(Value::as_str)
                .filter(|l| !l.is_empty())
                .map_or_else(|| format!("image{}", assets.len()), str::to_string)
        };
        assets.push(Asset::new(
            "icon",
            &format!("embeded://{full}"),
            &label,
            &ext,
        ));
    }
    diags.push(Diagnostic::info(
        "byaf-read",
        "",
        "read a Backyard AI archive (BYAF) as a card, mapped as SillyTavern imports it",
    ));
    let card = Card::from_json(
        json!({"spec": "chara_card_v2", "spec_version": "2.0", "data": data}),
        diags,
    )?;
    Ok((card, assets))
}
