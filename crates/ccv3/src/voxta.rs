//! Voxta packages (`.voxpkg`): read as a character card.
//!
//! # The format
//!
//! A Voxta package is a zip: `package.json` at the root (`$type: "package"`, `Id`, `Name`,
//! `EntryResource` naming the entry character by `Kind` 1 and `Id`), a folder per character
//! (`Characters/{id}/character.json`, its picture `Characters/{id}/thumbnail.{ext}`, other files
//! under `Characters/{id}/Assets/`), one per memory book (`Books/{id}/book.json`: `Name` and
//! `Items`, each with `Keywords`, `Text`, `Weight`, `Deleted`) and one per scenario
//! (`Scenarios/{id}/scenario.json`). Card Architect and character-foundry write it (their
//! `voxta-builder.ts` / `packages/voxta/src/writer.ts`), as Voxta itself exports it.
//!
//! # Mapping (as the tools that convert Voxta characters to cards map them)
//!
//! | Voxta character | card |
//! |---|---|
//! | `Name` / `Label` | `name` / `nickname` |
//! | `Profile` | `description` |
//! | `Personality`, `Scenario`, `FirstMessage`, `AlternateGreetings`, `MessageExamples` | `personality`, `scenario`, `first_mes`, `alternate_greetings`, `mes_example` |
//! | `SystemPrompt`, `PostHistoryInstructions` | `system_prompt`, `post_history_instructions` |
//! | `Creator`, `CreatorNotes`, `Tags`, `Version` | `creator`, `creator_notes`, `tags`, `character_version` |
//! | the items of its `MemoryBooks` (every book when it names none) | `character_book` entries: `Keywords` the keys, `Text` the content, `Deleted` not enabled, `Weight` the priority, list order the insertion order |
//! | `thumbnail.{ext}` | the `icon` asset `main` |
//! | the files under `Assets/Avatars/` / the other files under `Assets/` | `emotion` / `x_voxta_asset` assets named by the file name (the files kept) |
//!
//! Voxta writes macros with spaces (`{{ char }}`, `{{ user }}`): they become `{{char}}` and
//! `{{user}}`. What has no card field is kept under `data.extensions.voxta`: the package, the
//! character's other fields (`Description`, the appearance; voices, scripts, chat settings,
//! dates; and a text field as written when its macros were rewritten), each book without its
//! items (`books`), the books it does not name (`other_books`) and the scenarios (`scenarios`),
//! and each item's other fields in its entry's `extensions.voxta`. Every file of the package is
//! kept. Only the entry character (else the first) is read, with the warning
//! `voxta-more-characters`. Read only: convert a package to CHARX, PNG or JSON.

use crate::charx::CharxFile;
use crate::diag::Diagnostic;
use crate::error::{Error, Result};
use crate::model::{Asset, Card};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};

/// The package's metadata file, at the root.
pub const PACKAGE: &str = "package.json";

/// The character folders' prefix.
const CHARACTERS: &str = "Characters/";

/// The character files of a package (`Characters/{id}/character.json`), in archive order.
fn character_files(files: &[CharxFile]) -> impl Iterator<Item = &str> {
    files_named(files, "Characters", "character.json")
}

/// True when the zip's files are a Voxta package: a `Characters/{id}/character.json` and no
/// `card.json`.
///
/// ```
/// use ccv3::charx::CharxFile;
/// let file = |p: &str| CharxFile { path: p.into(), data: b"{}".to_vec() };
/// assert!(ccv3::voxta::is_voxta(&[file("Characters/0b1c/character.json")]));
/// assert!(!ccv3::voxta::is_voxta(&[file("card.json")]));
/// ```
pub fn is_voxta(files: &[CharxFile]) -> bool {
    character_files(files).next().is_some() && !files.iter().any(|f| f.path == "card.json")
}

/// Voxta's spaced macros (`{{ char }}`, `{{ User }}`) as CBS macros (`{{char}}`, `{{User}}`);
/// any other text is left as it is.
///
/// ```
/// assert_eq!(ccv3::voxta::macros("{{ char }} greets {{ User }}."), "{{char}} greets {{User}}.");
/// assert_eq!(ccv3::voxta::macros("{{ random: a, b }}"), "{{ random: a, b }}");
/// ```
pub fn macros(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("{{") {
        let (head, tail) = rest.split_at(i);
        out.push_str(head);
        let inner = &tail[2..];
        let rewritten = inner.find("}}").and_then(|end| {
            let word = inner[..end].trim();
            let spaced = word.len() != end;
            (spaced && (word.eq_ignore_ascii_case("char") || word.eq_ignore_ascii_case("user")))
                .then(|| (format!("{{{{{word}}}}}"), end + 4))
        });
        match rewritten {
            Some((macro_text, used)) => {
                out.push_str(&macro_text);
                rest = &tail[used..];
            }
            None => {
                out.push_str("{{");
                rest = inner;
            }
        }
    }
    out.push_str(rest);
    out
}

fn voxta_err(entry: &str, problem: impl Into<String>) -> Error {
    Error::Charx {
        entry: entry.into(),
        problem: format!("Voxta package: {}", problem.into()),
    }
}

/// The package's files by path (the first of each path, as the other readers take it).
type Index<'a> = HashMap<&'a str, &'a CharxFile>;

fn index(files: &[CharxFile]) -> Index<'_> {
    let mut index = HashMap::with_capacity(files.len());
    for f in files {
        index.entry(f.path.as_str()).or_insert(f);
    }
    index
}

/// The JSON object of the package file `path`.
fn parse(files: &Index<'_>, path: &str) -> Result<Map<String, Value>> {
    let file = files
        .get(path)
        .ok_or_else(|| voxta_err(path, "the package has no such file"))?;
    match crate::json::from_slice_repaired::<Value>(&file.data) {
        Ok((Value::Object(o), _)) => Ok(o),
        Ok(_) => Err(voxta_err(path, "not a JSON object")),
        Err(e) => Err(voxta_err(
            path,
            format!("not JSON: {}", Error::from_json(&e)),
        )),
    }
}

/// Takes the text field `key` out of `map`, macros rewritten (the original kept in `kept` when
/// they were).
fn take_text(map: &mut Map<String, Value>, key: &str, kept: &mut Map<String, Value>) -> String {
    crate::byaf::take_text(map, key, kept, macros)
}

/// Takes a list of texts out of `map` (each rewritten as [`take_text`]); a value that is not a
/// list of texts is kept in `kept` as it is.
fn take_texts(
    map: &mut Map<String, Value>,
    key: &str,
    kept: &mut Map<String, Value>,
) -> Vec<String> {
    match map.shift_remove(key) {
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            let texts: Vec<String> = items.iter().filter_map(Value::as_str).map(macros).collect();
            if texts.iter().zip(&items).any(|(t, i)| i.as_str() != Some(t)) {
                kept.insert(key.into(), Value::Array(items));
            }
            texts
        }
        Some(other) => {
            kept.insert(key.into(), other);
            Vec::new()
        }
        None => Vec::new(),
    }
}

/// The files `{dir}/{id}/{name}` of a package, in archive order.
fn files_named<'a>(
    files: &'a [CharxFile],
    dir: &'a str,
    name: &'a str,
) -> impl Iterator<Item = &'a str> {
    files.iter().map(|f| f.path.as_str()).filter(move |p| {
        p.strip_prefix(dir)
            .and_then(|r| r.strip_prefix('/'))
            .and_then(|r| r.split_once('/'))
            .is_some_and(|(id, f)| !id.is_empty() && f == name)
    })
}

/// The JSON objects of `paths` that read; each that does not is a warning `code`.
fn read_all(
    files: &Index<'_>,
    paths: &[&str],
    code: &str,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Value> {
    let mut out = Vec::new();
    for path in paths {
        match parse(files, path) {
            Ok(o) => out.push(Value::Object(o)),
            Err(e) => diags.push(Diagnostic::warning(code, "", format!("{e}; left out"))),
        }
    }
    out
}

/// The entries of the book files `paths`, and each book without its items.
fn book_entries(
    files: &Index<'_>,
    paths: &[&str],
    diags: &mut Vec<Diagnostic>,
) -> (Vec<Value>, Vec<Value>, Option<String>) {
    let (mut entries, mut books, mut name) = (Vec::new(), Vec::new(), None);
    for path in paths {
        let mut book = match parse(files, path) {
            Ok(b) => b,
            Err(e) => {
                diags.push(Diagnostic::warning(
                    "voxta-book-unreadable",
                    "",
                    format!("{e}; the book is left out of the lorebook"),
                ));
                continue;
            }
        };
        if name.is_none() {
            name = book.get("Name").and_then(Value::as_str).map(str::to_string);
        }
        let items = match book.shift_remove("Items") {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        };
        for item in items {
            let Value::Object(mut item) = item else {
                continue;
            };
            let mut kept = Map::new();
            let keys: Vec<String> = match item.shift_remove("Keywords") {
                Some(Value::Array(k)) => k
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
                Some(other) => {
                    kept.insert("Keywords".into(), other);
                    Vec::new()
                }
                None => Vec::new(),
            };
            let content = take_text(&mut item, "Text", &mut kept);
            let enabled = item.get("Deleted").and_then(Value::as_bool) != Some(true);
            let mut entry = json!({"keys": keys, "content": content, "extensions": {},
                "enabled": enabled, "insertion_order": entries.len(), "use_regex": false});
            if let Some(w) = item.get("Weight").filter(|w| w.is_number()) {
                entry["priority"] = w.clone();
            }
            kept.extend(item);
            entry["extensions"]["voxta"] = Value::Object(kept);
            entries.push(entry);
        }
        books.push(Value::Object(book));
    }
    (entries, books, name)
}

/// Reads the card of a Voxta package from its files (see the module docs); the character's
/// thumbnail becomes the card's `embeded://` main icon.
///
/// Longer than 150 lines on purpose: one Voxta field after another, each to its card field in
/// the card's order, with what has no card field kept beside them; split, each part would take
/// the same dozen maps and lists.
///
/// # Errors
///
/// [`Error::Charx`] naming the file when the character file is missing, not JSON or not an
/// object.
///
/// ```
/// use ccv3::{charx, voxta};
/// // A Voxta package is a zip without card.json: read its files, then the character.
/// let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/wild/voxta_package.voxpkg"));
/// let (files, _) = charx::read_zip_files(std::io::Cursor::new(&bytes[..]), &charx::Limits::default())?;
/// assert!(voxta::is_voxta(&files));
/// let (card, _assets) = voxta::card_from_voxta(&files, &mut Vec::new())?;
/// assert!(!card.data.name.is_empty());
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn card_from_voxta(
    files: &[CharxFile],
    diags: &mut Vec<Diagnostic>,
) -> Result<(Card, Vec<Asset>)> {
    let by_path = index(files);
    let package = by_path
        .contains_key(PACKAGE)
        .then(|| parse(&by_path, PACKAGE))
        .transpose()?;
    let characters: Vec<&str> = character_files(files).collect();
    let entry_id = package
        .as_ref()
        .and_then(|p| p.get("EntryResource"))
        .filter(|r| r.get("Kind").and_then(Value::as_i64) == Some(1))
        .and_then(|r| r.get("Id"))
        .and_then(Value::as_str);
    let char_path = entry_id
        .map(|id| format!("{CHARACTERS}{id}/character.json"))
        .filter(|p| characters.contains(&p.as_str()))
        .or_else(|| characters.first().map(|p| p.to_string()))
        .ok_or_else(|| voxta_err(PACKAGE, "the package holds no character"))?;
    if characters.len() > 1 {
        diags.push(Diagnostic::warning(
            "voxta-more-characters",
            "",
            format!(
                "the package holds {} characters; read {char_path}",
                characters.len()
            ),
        ));
    }
    let mut ch = parse(&by_path, &char_path)?;
    let mut kept = Map::new();
    let str_of = |ch: &mut Map<String, Value>, key: &str, kept: &mut Map<String, Value>| match ch
        .shift_remove(key)
    {
        Some(Value::String(s)) => s,
        Some(other) => {
            kept.insert(key.into(), other);
            String::new()
        }
        None => String::new(),
    };
    let name = str_of(&mut ch, "Name", &mut kept);
    let nickname = ch
        .get("Label")
        .and_then(Value::as_str)
        .filter(|l| !l.is_empty())
        .map(str::to_string);
    if nickname.is_some() {
        ch.shift_remove("Label");
    }
    let description = take_text(&mut ch, "Profile", &mut kept);
    let personality = take_text(&mut ch, "Personality", &mut kept);
    let scenario = take_text(&mut ch, "Scenario", &mut kept);
    let first_mes = take_text(&mut ch, "FirstMessage", &mut kept);
    let mes_example = take_text(&mut ch, "MessageExamples", &mut kept);
    let system_prompt = take_text(&mut ch, "SystemPrompt", &mut kept);
    let post_history = take_text(&mut ch, "PostHistoryInstructions", &mut kept);
    let greetings = take_texts(&mut ch, "AlternateGreetings", &mut kept);
    let creator = str_of(&mut ch, "Creator", &mut kept);
    let creator_notes = str_of(&mut ch, "CreatorNotes", &mut kept);
    let version = str_of(&mut ch, "Version", &mut kept);
    let tags: Vec<String> = match ch.shift_remove("Tags") {
        Some(Value::Array(t)) if t.iter().all(Value::is_string) => t
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        Some(other) => {
            kept.insert("Tags".into(), other);
            Vec::new()
        }
        None => Vec::new(),
    };
    // The books the character names (every book when it names none) give the entries; the
    // others, and the scenarios, are kept whole.
    let all_books: Vec<&str> = files_named(files, "Books", "book.json").collect();
    let named: Vec<&str> = match ch.get("MemoryBooks").and_then(Value::as_array) {
        Some(ids) => {
            let wanted: HashSet<String> = ids
                .iter()
                .filter_map(Value::as_str)
                .map(|id| format!("Books/{id}/book.json"))
                .collect();
            let found: Vec<&str> = all_books
                .iter()
                .copied()
                .filter(|p| wanted.contains(*p))
                .collect();
            if found.len() < wanted.len() {
                diags.push(Diagnostic::warning(
                    "voxta-book-unreadable",
                    "",
                    format!(
                        "{} of the character's {} MemoryBooks are not in the package; read \
                         without them",
                        wanted.len() - found.len(),
                        wanted.len()
                    ),
                ));
            }
            found
        }
        None => all_books.clone(),
    };
    let named_set: HashSet<&str> = named.iter().copied().collect();
    let others: Vec<&str> = all_books
        .iter()
        .copied()
        .filter(|p| !named_set.contains(p))
        .collect();
    let other_books = read_all(&by_path, &others, "voxta-book-unreadable", diags);
    let scenarios: Vec<&str> = files_named(files, "Scenarios", "scenario.json").collect();
    let scenarios = read_all(&by_path, &scenarios, "voxta-scenario-unreadable", diags);
    let (entries, books, book_name) = book_entries(&by_path, &named, diags);
    // What has no card field, with the originals of the texts whose macros were rewritten.
    ch.extend(kept);
    let mut voxta = Map::new();
    if let Some(p) = package {
        voxta.insert("package".into(), Value::Object(p));
    }
    voxta.insert("character".into(), Value::Object(ch));
    for (key, list) in [
        ("books", books),
        ("other_books", other_books),
        ("scenarios", scenarios),
    ] {
        if !list.is_empty() {
            voxta.insert(key.into(), Value::Array(list));
        }
    }
    let mut data = json!({
        "name": name,
        "description": description,
        "personality": personality,
        "scenario": scenario,
        "first_mes": first_mes,
        "mes_example": mes_example,
        "creator_notes": creator_notes,
        "system_prompt": system_prompt,
        "post_history_instructions": post_history,
        "alternate_greetings": greetings,
        "group_only_greetings": [],
        "tags": tags,
        "creator": creator,
        "character_version": version,
        "extensions": {"voxta": voxta},
    });
    if let Some(n) = nickname {
        data["nickname"] = Value::String(n);
    }
    if !entries.is_empty() {
        let mut book = json!({"entries": entries, "extensions": {}});
        if let Some(n) = book_name {
            book["name"] = Value::String(n);
        }
        data["character_book"] = book;
    }
    let dir = char_path.trim_end_matches("character.json");
    let mut assets = Vec::new();
    let ext_of = |path: &str| {
        path.rsplit_once('.')
            .filter(|(_, e)| !e.contains('/'))
            .map_or_else(String::new, |(_, e)| e.to_ascii_lowercase())
    };
    if let Some(thumb) = files.iter().find(|f| {
        f.path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with("thumbnail.") && !rest.contains('/'))
    }) {
        let uri = format!("embeded://{}", thumb.path);
        assets.push(Asset::new("icon", &uri, "main", &ext_of(&thumb.path)));
    }
    // The character's other files: its avatars (one picture per emotion) and the rest.
    for f in files {
        let Some(rest) = f
            .path
            .strip_prefix(dir)
            .and_then(|r| r.strip_prefix("Assets/"))
        else {
            continue;
        };
        let kind = if rest.starts_with("Avatars/") {
            "emotion"
        } else {
            "x_voxta_asset"
        };
        let file_name = rest.rsplit('/').next().unwrap_or(rest);
        let stem = file_name.rsplit_once('.').map_or(file_name, |(s, _)| s);
        let uri = format!("embeded://{}", f.path);
        assets.push(Asset::new(kind, &uri, stem, &ext_of(&f.path)));
    }
    diags.push(Diagnostic::info(
        "voxta-read",
        "",
        format!("read a Voxta package's character ({char_path}) as a card"),
    ));
    let card = Card::from_json(
        json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": data}),
        diags,
    )?;
    Ok((card, assets))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn voxta_spaced_macros_become_cbs_macros() {
        // Voxta writes {{ char }} / {{ user }} (character-foundry packages/voxta/src/macros.ts
        // converts them the same way).
        assert_eq!(
            macros("{{ char }} and {{  user  }}"),
            "{{char}} and {{user}}"
        );
        assert_eq!(macros("{{ CHAR }}"), "{{CHAR}}");
        assert_eq!(macros("{{char}} {{ other }} {{"), "{{char}} {{ other }} {{");
        assert_eq!(macros("{{ user"), "{{ user");
    }

    fn file(path: &str, text: &str) -> CharxFile {
        CharxFile {
            path: path.into(),
            data: text.as_bytes().to_vec(),
        }
    }

    #[test]
    fn voxta_entry_character_is_read_of_several_with_a_warning() {
        // package.json EntryResource (Kind 1 = character) names the one to read.
        let files = [
            file("Characters/a/character.json", r#"{"Name": "A"}"#),
            file(
                "Characters/b/character.json",
                r#"{"Name": "B", "Tags": "x"}"#,
            ),
            file(
                "package.json",
                r#"{"$type": "package", "EntryResource": {"Kind": 1, "Id": "b"}}"#,
            ),
        ];
        assert!(is_voxta(&files));
        let mut diags = Vec::new();
        let (card, assets) = card_from_voxta(&files, &mut diags).unwrap();
        assert_eq!(card.data.name, "B");
        assert!(assets.is_empty());
        // A field of the wrong type is kept as it was, not lost.
        assert_eq!(card.data.extensions["voxta"]["character"]["Tags"], "x");
        assert!(diags.iter().any(|d| d.code == "voxta-more-characters"));
    }

    #[test]
    fn voxta_broken_files_are_errors_or_warnings_naming_the_file() {
        let files = [file("Characters/a/character.json", "[1, 2")];
        let err = card_from_voxta(&files, &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("Characters/a/character.json") && err.contains("Voxta"),
            "{err}"
        );
        let files = [
            file(
                "Characters/a/character.json",
                r#"{"Name": "A", "MemoryBooks": ["z"]}"#,
            ),
            file("Scenarios/s/scenario.json", "nope"),
        ];
        let mut diags = Vec::new();
        let (card, _) = card_from_voxta(&files, &mut diags).unwrap();
        assert!(card.data.character_book.is_none());
        let codes: Vec<&str> = diags.iter().map(|d| d.code.as_str()).collect();
        assert!(
            codes.contains(&"voxta-book-unreadable")
                && codes.contains(&"voxta-scenario-unreadable"),
            "{codes:?}"
        );
        // Not a package: a card.json beside it, or no character file.
        assert!(!is_voxta(&[
            file("card.json", "{}"),
            file("Characters/a/character.json", "{}")
        ]));
        assert!(!is_voxta(&[file("Characters/character.json", "{}")]));
    }
}
