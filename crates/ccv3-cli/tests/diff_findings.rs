//! Issue 31 "What a person sees": `ccv3 diff` shows the change itself (texts word by word,
//! lists by item, lorebook entries matched by id), and `ccv3 validate` of a few files shows
//! every finding.

mod common;

use common::{ccv3, example, stdout};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// `examples/ember.json` changed by `edit`, written to `dir/name`.
fn ember_with(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut card: Value =
        serde_json::from_slice(&std::fs::read(example("ember.json")).unwrap()).unwrap();
    edit(&mut card);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(&card).unwrap()).unwrap();
    path
}

fn diff_json(a: &Path, b: &Path) -> Vec<Value> {
    let o = ccv3(&[&"diff", &a, &b, &"--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    serde_json::from_slice::<Value>(&o.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The text the runs of `changes` give for side A (`delete`) or B (`insert`).
fn side(changes: &Value, keep: &str) -> String {
    changes
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["op"] == "equal" || c["op"] == keep)
        .map(|c| c["text"].as_str().unwrap())
        .collect()
}

#[test]
fn a_change_past_the_cut_of_a_long_text_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let a = example("ember.json");
    let b = ember_with(dir.path(), "b.json", |c| {
        let d = c["data"]["description"].as_str().unwrap().to_string();
        c["data"]["description"] = json!(format!("{d} She hums while she works."));
    });
    let o = ccv3(&[&"diff", &a, &b, &"--color", &"never"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    // `git diff --word-diff` marks: the sentence added at the end, with a few words before it.
    assert!(out.starts_with("data.description:\n  … "), "{out}");
    assert!(out.contains("{+ She hums while she works.+}"), "{out}");
    assert!(out.ends_with("1 difference\n"), "{out}");
    let o = ccv3(&[&"diff", &a, &b, &"--color", &"always"]);
    assert!(
        stdout(&o).contains("\x1b[32m She hums while she works.\x1b[0m"),
        "{}",
        stdout(&o)
    );
    // `auto` colors only a terminal (here a pipe), and NO_COLOR is respected.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ccv3"))
        .args(["diff", "--color", "auto"])
        .arg(&a)
        .arg(&b)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!stdout(&o).contains('\x1b'), "{}", stdout(&o));

    // `--json`: {path, a, b} and the runs, which give back both texts.
    let v = diff_json(&a, &b);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["path"], "data.description");
    let changes = &v[0]["changes"];
    assert_eq!(side(changes, "delete"), v[0]["a"].as_str().unwrap());
    assert_eq!(side(changes, "insert"), v[0]["b"].as_str().unwrap());
    assert_eq!(
        changes.as_array().unwrap().last().unwrap(),
        &json!({"op": "insert", "text": " She hums while she works."})
    );
}

#[test]
fn one_word_fixed_in_the_middle_and_short_fields_whole() {
    let dir = tempfile::tempdir().unwrap();
    let a = ember_with(dir.path(), "a.json", |c| {
        c["data"]["scenario"] = json!("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen");
    });
    let b = ember_with(dir.path(), "b.json", |c| {
        c["data"]["scenario"] = json!("one two three four five six seven eight NINE ten eleven twelve thirteen fourteen fifteen sixteen");
        c["data"]["name"] = json!("Ember Two");
    });
    let o = ccv3(&[&"diff", &a, &b, &"--color", &"never"]);
    assert_eq!(
        stdout(&o),
        "data.name: \"Ember Vale\" -> \"Ember Two\"\n\
         data.scenario:\n  … three four five six seven eight [-nine-]{+NINE+} ten eleven twelve thirteen fourteen fifteen …\n\
         2 differences\n"
    );
}

#[test]
fn lists_show_items_added_removed_and_moved() {
    let dir = tempfile::tempdir().unwrap();
    let a = example("ember.json");
    // ["example", "fantasy", "lighthouse"] -> ["lighthouse", "example", "sea"]
    let b = ember_with(dir.path(), "b.json", |c| {
        c["data"]["tags"] = json!(["lighthouse", "example", "sea"]);
    });
    let o = ccv3(&[&"diff", &a, &b, &"--color", &"never"]);
    assert_eq!(
        stdout(&o),
        "data.tags: [--\"fantasy\"-], moved \"lighthouse\" (2 -> 0), {++\"sea\"+}\n1 difference\n"
    );
    let v = diff_json(&a, &b);
    assert_eq!(
        v[0]["items"],
        json!([
            {"op": "delete", "value": "fantasy", "at": 1},
            {"op": "move", "value": "lighthouse", "from": 2, "to": 0},
            {"op": "insert", "value": "sea", "at": 2},
        ])
    );
    assert_eq!(v[0]["a"], json!(["example", "fantasy", "lighthouse"]));
}

#[test]
fn an_inserted_lorebook_entry_is_one_difference() {
    let dir = tempfile::tempdir().unwrap();
    let a = example("ember.json");
    let b = ember_with(dir.path(), "b.json", |c| {
        let entries = c["data"]["character_book"]["entries"]
            .as_array_mut()
            .unwrap();
        let mut new = entries[0].clone();
        new["id"] = json!(99);
        new["name"] = json!("Gulls");
        new["keys"] = json!(["gull"]);
        entries.insert(0, new);
        // A later entry also changed: found at its new place by its id.
        entries[3]["insertion_order"] = json!(77);
    });
    let v = diff_json(&a, &b);
    let paths: Vec<&str> = v.iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert_eq!(
        paths,
        [
            "data.character_book.entries.0",
            "data.character_book.entries.3.insertion_order"
        ],
        "{v:?}"
    );
    assert_eq!(v[0]["a"], Value::Null);
    assert_eq!(v[0]["b"]["name"], "Gulls");
}

/// A card that lacks required fields (several findings).
fn broken_card(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(
        &p,
        r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#,
    )
    .unwrap();
    p
}

#[test]
fn validate_of_a_few_files_shows_every_finding() {
    let dir = tempfile::tempdir().unwrap();
    let bad = broken_card(dir.path(), "bad.json");
    let o = ccv3(&[&"validate", &bad]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    // Every finding as `--verbose` prints it (severity, code, JSON path, message), then totals.
    let verbose = stdout(&ccv3(&[&"validate", &bad, &"--verbose"]));
    assert_eq!(out, verbose);
    assert!(lines.len() > 2, "{out}");
    assert!(
        lines[0].contains("bad.json: error [missing-required-field] at data."),
        "{out}"
    );
    assert!(lines.last().unwrap().starts_with("1 file: 1 with errors"));

    // A clean file among a few: `ok`.
    let o = ccv3(&[&"validate", &bad, &example("ember.json")]);
    assert!(stdout(&o).contains("ember.json: ok\n"), "{}", stdout(&o));

    // `--summary` still gives the totals only.
    let o = ccv3(&[&"validate", &bad, &"--summary"]);
    assert!(
        stdout(&o).starts_with("findings by code:\n"),
        "{}",
        stdout(&o)
    );

    // More than 10 files, or a folder: one line per file.
    let many: Vec<PathBuf> = (0..11)
        .map(|i| broken_card(dir.path(), &format!("b{i}.json")))
        .collect();
    let args: Vec<&dyn AsRef<std::ffi::OsStr>> = std::iter::once(&"validate" as _)
        .chain(many.iter().map(|p| p as _))
        .collect();
    let out = stdout(&ccv3(&args));
    assert_eq!(out.lines().count(), 12, "{out}");
    let out = stdout(&ccv3(&[&"validate", &dir.path()]));
    assert_eq!(out.lines().count(), 13, "{out}");
    assert!(
        out.contains("bad.json: ") && out.contains(" errors"),
        "{out}"
    );
}

#[test]
fn a_damaged_png_warning_names_the_chunk_and_its_byte() {
    let dir = tempfile::tempdir().unwrap();
    let mut png = std::fs::read(example("ember.png")).unwrap();
    // Break the CRC of the `ccv3` chunk (its value is still used: a warning).
    let at = png.windows(8).position(|w| w == b"tEXtccv3").unwrap() - 4;
    let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
    png[at + 8 + len] ^= 0xff;
    let p = dir.path().join("damaged.png");
    std::fs::write(&p, &png).unwrap();
    let o = ccv3(&[&"validate", &p]);
    let out = stdout(&o);
    let line = out
        .lines()
        .find(|l| l.contains("png-bad-crc"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("tEXt chunk \"ccv3\"") && line.contains(&format!("at byte {at}")),
        "{line}"
    );
}
