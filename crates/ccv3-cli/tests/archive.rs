//! Issue 16 ("The CLI for people and for archives"): clear errors, one greeting policy, every
//! cut listed, and the archive commands (`validate DIR` streamed, `convert DIR`, `index`,
//! `search`, `export`).

mod common;
use common::{ccv3, example, stderr, stdout};
use serde_json::{json, Value};
use std::path::Path;

/// A V3 card JSON with `entries` as its character book.
fn card_with_book(name: &str, entries: Value) -> Value {
    json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {
        "name": name, "description": "", "personality": "", "scenario": "", "first_mes": "Hi.",
        "mes_example": "", "creator_notes": "", "system_prompt": "", "post_history_instructions": "",
        "alternate_greetings": ["Hello again."], "tags": [], "creator": "", "character_version": "",
        "extensions": {}, "group_only_greetings": [],
        "character_book": {"entries": entries, "extensions": {}}}})
}

fn entry(keys: &[&str], content: &str) -> Value {
    json!({"keys": keys, "content": content, "extensions": {}, "enabled": true,
        "insertion_order": 10, "use_regex": false})
}

fn write_json(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_vec(v).unwrap()).unwrap();
}

/// Issue 16 "Bad input": `lore scan` and `prompt` pick the same entries by default (greeting 0
/// for `@@is_greeting` in both).
#[test]
fn lore_scan_and_prompt_agree_on_the_default_greeting() {
    let dir = tempfile::tempdir().unwrap();
    let card = dir.path().join("card.json");
    write_json(
        &card,
        &card_with_book(
            "Aqua",
            json!([
                entry(&["tea"], "@@is_greeting 1\nOnly on the second greeting."),
                entry(&["tea"], "@@is_greeting 0\nOnly on the first greeting.")
            ]),
        ),
    );
    let chat = dir.path().join("chat.json");
    write_json(&chat, &json!([{"role": "user", "content": "tea please"}]));
    let scan = ccv3(&[
        &"lore", &"scan", &"--book", &card, &"--chat", &chat, &"--json",
    ]);
    assert!(scan.status.success(), "{}", stderr(&scan));
    let scan: Value = serde_json::from_slice(&scan.stdout).unwrap();
    let scanned: Vec<u64> = scan["activated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["index"].as_u64().unwrap())
        .collect();
    assert_eq!(scanned, [1]);
    let prompt = ccv3(&[
        &"prompt", &"--card", &card, &"--chat", &chat, &"--json", &"--now", &"0",
    ]);
    assert!(prompt.status.success(), "{}", stderr(&prompt));
    let prompt: Value = serde_json::from_slice(&prompt.stdout).unwrap();
    let labels: Vec<&str> = prompt["lore"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["card.json/#1"]);
    // --greeting 1 picks the other entry in both.
    let scan = ccv3(&[
        &"lore",
        &"scan",
        &"--book",
        &card,
        &"--chat",
        &chat,
        &"--json",
        &"--greeting",
        &"1",
    ]);
    let scan: Value = serde_json::from_slice(&scan.stdout).unwrap();
    assert_eq!(scan["activated"][0]["index"], 0);
}

/// Issue 16 "Bad input": `prompt --max-context` lists every cut item in `cut` (lore the budget
/// cut too), and a prompt that still does not fit has `over_limit`, a warning and exit 1.
#[test]
fn prompt_max_context_lists_every_cut_and_says_over_limit() {
    let run = |max: &str| {
        ccv3(&[
            &"prompt",
            &"--card",
            &example("ember.png"),
            &"--chat",
            &example("chat.json"),
            &"--book",
            &example("world.json"),
            &"--max-context",
            &max,
            &"--json",
            &"--now",
            &"0",
        ])
    };
    let full = run("100000");
    assert_eq!(full.status.code(), Some(0), "{}", stderr(&full));
    let full: Value = serde_json::from_slice(&full.stdout).unwrap();
    assert!(full.get("over_limit").is_none());
    let all_lore: Vec<String> = full["lore"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["label"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(all_lore.len(), 6);

    let tight = run("50");
    assert_eq!(tight.status.code(), Some(1));
    assert!(
        stderr(&tight).contains("over --max-context 50"),
        "{}",
        stderr(&tight)
    );
    let v: Value = serde_json::from_slice(&tight.stdout).unwrap();
    assert!(v["over_limit"].as_u64().is_some_and(|n| n > 0));
    let cut_lore: Vec<&str> = v["cut"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "lore")
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    for l in &all_lore {
        assert!(cut_lore.contains(&l.as_str()), "{l} not in {cut_lore:?}");
    }
    assert!(v["cut"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["tokens"].as_u64().unwrap() > 0));
}

/// A folder of cards for the archive commands: two good cards, one with spec errors, one
/// unreadable, and hidden files that must be skipped.
fn archive(dir: &Path) {
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::create_dir_all(dir.join(".hidden")).unwrap();
    std::fs::copy(example("ember.png"), dir.join("ember.png")).unwrap();
    std::fs::copy(example("ember.json"), dir.join("sub/ember.json")).unwrap();
    std::fs::copy(example("ember.json"), dir.join(".hidden/ember.json")).unwrap();
    std::fs::copy(example("ember.json"), dir.join(".skipped.json")).unwrap();
    std::fs::write(
        dir.join("bad.json"),
        r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#,
    )
    .unwrap();
    std::fs::write(dir.join("sub/broken.json"), "{ nope").unwrap();
}

/// Issue 16: `validate a.png missing.png b.png` reports the missing file, validates the others
/// and exits 2; `--json` is one valid JSON document all the same.
#[test]
fn validate_reports_a_missing_file_and_checks_the_others() {
    let a = example("ember.png");
    let b = example("ember.json");
    let o = ccv3(&[&"validate", &a, &"missing.png", &b]);
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(lines[0].ends_with("ember.png: ok"), "{out}");
    assert!(lines[1].starts_with("missing.png: unreadable: "), "{out}");
    assert!(lines[2].ends_with("ember.json: ok"), "{out}");
    assert_eq!(
        lines[3],
        "3 files: 0 with errors, 1 unreadable; 0 errors, 0 warnings"
    );
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).starts_with("ccv3: missing.png: "));

    let o = ccv3(&[&"validate", &a, &"missing.png", &b, &"--json"]);
    assert_eq!(o.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(
        v,
        json!([{"file": "missing.png", "severity": "error", "code": "unreadable", "path": "",
            "message": v[0]["message"]}])
    );
    // Nothing but missing files: still one document.
    let o = ccv3(&[&"validate", &"missing.png", &"--json"]);
    assert_eq!(o.status.code(), Some(2));
    serde_json::from_slice::<Value>(&o.stdout).expect("one JSON document");
}

/// Issue 16 "Archives": a folder is validated with hidden files and folders skipped, one line
/// per card, `--verbose`, `--jsonl`, `--summary`, `--severity`, `--code`.
#[test]
fn validate_folder_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    archive(d);
    let o = ccv3(&[&"validate", &d]);
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o).replace(&format!("{}/", d.display()), "");
    assert_eq!(
        out,
        "bad.json: 14 errors (missing-required-field)\n\
         ember.png: ok\n\
         sub/broken.json: unreadable: JSON at line 1 column 3: key must be a string\n\
         sub/ember.json: ok\n\
         4 files: 1 with errors, 1 unreadable; 14 errors, 0 warnings\n"
    );

    let o = ccv3(&[&"validate", &d, &"--verbose"]);
    let out = stdout(&o);
    assert_eq!(out.lines().filter(|l| l.contains("bad.json: ")).count(), 14);

    let o = ccv3(&[&"validate", &d, &"--jsonl"]);
    let items: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one object per line"))
        .collect();
    assert_eq!(items.len(), 15);
    for k in ["file", "severity", "code", "path", "message"] {
        assert!(items[0].get(k).is_some());
    }
    assert_eq!(items[14]["code"], "unreadable");

    let o = ccv3(&[&"validate", &d, &"--summary", &"--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["files"], 4);
    assert_eq!(v["unreadable"], 1);
    assert_eq!(v["errors"], 14);
    assert_eq!(
        v["codes"][0],
        json!({"code": "missing-required-field", "severity": "error", "count": 14, "files": 1})
    );
    assert!(v["worst"][0]["file"]
        .as_str()
        .unwrap()
        .ends_with("bad.json"));
    let o = ccv3(&[&"validate", &d, &"--summary"]);
    assert!(
        stdout(&o).starts_with("findings by code:\n"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("worst files:\n"));

    let o = ccv3(&[&"validate", &d, &"--severity", &"warning", &"--jsonl"]);
    assert_eq!(stdout(&o).lines().count(), 15);
    let o = ccv3(&[&"validate", &d, &"--severity", &"error", &"--jsonl"]);
    assert_eq!(stdout(&o).lines().count(), 15);
    let o = ccv3(&[&"validate", &d.join("bad.json"), &"--code", &"no-such-code"]);
    assert_eq!(o.status.code(), Some(0), "no finding kept: clean");
    assert_eq!(
        stdout(&o),
        "1 file: 0 with errors, 0 unreadable; 0 errors, 0 warnings\n"
    );
}

/// Issue 16 "Archives": `convert DIR --out DIR --to v2 --format json` converts every card (the
/// folder layout kept, hidden files skipped), goes on past bad files with a report at the end,
/// and never replaces an existing output without `--force`.
#[test]
fn convert_folder_keeps_going_and_never_overwrites_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let out = dir.path().join("out");
    archive(&input);
    let o = ccv3(&[
        &"convert",
        &input,
        &"--out",
        &out,
        &"--to",
        &"v2",
        &"--format",
        &"json",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let report = stdout(&o);
    assert!(report.starts_with("4 files: 3 converted into "), "{report}");
    assert!(report.contains("broken.json"), "{report}");
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    let v2: Value =
        serde_json::from_slice(&std::fs::read(out.join("sub/ember.json")).unwrap()).unwrap();
    assert_eq!(v2["spec"], "chara_card_v2");
    assert!(out.join("ember.json").is_file() && out.join("bad.json").is_file());
    assert!(!out.join(".hidden").exists() && !out.join(".skipped.json").exists());

    std::fs::write(out.join("ember.json"), b"mine").unwrap();
    let o = ccv3(&[
        &"convert",
        &input,
        &"--out",
        &out,
        &"--to",
        &"v2",
        &"--format",
        &"json",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("exists; not replaced (--force replaces it)"));
    assert_eq!(std::fs::read(out.join("ember.json")).unwrap(), b"mine");
    let o = ccv3(&[
        &"convert",
        &input,
        &"--out",
        &out,
        &"--to",
        &"v2",
        &"--format",
        &"json",
        &"--force",
    ]);
    assert!(
        stdout(&o).starts_with("4 files: 3 converted"),
        "{}",
        stdout(&o)
    );
    assert_ne!(std::fs::read(out.join("ember.json")).unwrap(), b"mine");
    // No temporary files are left anywhere.
    let mut stack = vec![out.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            assert!(!p
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".ccv3"));
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
}

/// Issue 16 "Archives": `ccv3 index DIR --db` records every card (duplicates across containers
/// share a card hash), re-runs read only changed files and drop removed ones, `search` finds
/// cards by name, tags or creator, `export` writes one JSON object per card.
#[test]
fn index_search_export() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("cards");
    archive(&d);
    std::fs::copy(example("ember.charx"), d.join("ember.charx")).unwrap();
    let db = dir.path().join("cards.sqlite");
    let o = ccv3(&[&"index", &d, &"--db", &db]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("5 files: 5 new, 0 changed, 0 unchanged, 0 removed, 1 unreadable"),
        "{}",
        stdout(&o)
    );
    let o = ccv3(&[&"index", &d, &"--db", &db]);
    assert!(
        stdout(&o).starts_with("5 files: 0 new, 0 changed, 5 unchanged, 0 removed"),
        "{}",
        stdout(&o)
    );
    std::fs::write(
        d.join("bad.json"),
        r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"B"}}"#,
    )
    .unwrap();
    std::fs::remove_file(d.join("ember.charx")).unwrap();
    let o = ccv3(&[&"index", &d, &"--db", &db]);
    assert!(
        stdout(&o).starts_with("4 files: 0 new, 1 changed, 3 unchanged, 1 removed"),
        "{}",
        stdout(&o)
    );
    std::fs::copy(example("ember.charx"), d.join("ember.charx")).unwrap();
    ccv3(&[&"index", &d, &"--db", &db]);

    let o = ccv3(&[&"search", &"--db", &db, &"lighthouse", &"--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let paths: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 3, "{paths:?}");
    assert!(paths.iter().all(|p| p.contains("ember")));
    let o = ccv3(&[&"search", &"--db", &db, &"nosuchword"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "0 matches\n");
    let o = ccv3(&[&"search", &"--db", &db, &"\"unclosed"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("ccv3: QUERY: "), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1);

    let o = ccv3(&[&"export", &"--db", &db, &"--format", &"jsonl"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 5);
    let embers: Vec<&Value> = rows.iter().filter(|r| r["name"] == "Ember Vale").collect();
    assert_eq!(embers.len(), 3);
    assert!(embers
        .iter()
        .all(|r| r["card_hash"] == embers[0]["card_hash"]));
    let png = embers.iter().find(|r| r["container"] == "PNG").unwrap();
    assert_eq!(png["entries"], 5);
    assert_eq!(png["tokenizer"], "o200k_base");
    assert!(png["tokens"]["description"].as_u64().unwrap() > 0);
    assert!(png["findings"].is_array());
    let broken = rows.iter().find(|r| r["kind"] == "unreadable").unwrap();
    assert!(broken["error"].as_str().unwrap().contains("JSON"));
    let out = dir.path().join("cards.jsonl");
    ccv3(&[&"export", &"--db", &db, &"-o", &out]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), stdout(&o));
}

/// Issue 16 ("re-running updates only changed files"): `index` takes a file's size and time
/// from the file it opened (relative to its folder), and a file whose size and time are
/// unchanged is opened but never read: its row stays as it was even when its bytes changed
/// behind the same size and time. A new time makes it read again.
#[test]
fn index_reads_no_file_whose_size_and_time_are_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("cards");
    std::fs::create_dir_all(&d).unwrap();
    let card = d.join("card.json");
    let text = |name: &str| {
        format!(r#"{{"spec":"chara_card_v3","spec_version":"3.0","data":{{"name":"{name}"}}}}"#)
    };
    std::fs::write(&card, text("A")).unwrap();
    let db = dir.path().join("cards.sqlite");
    let names = || {
        let o = ccv3(&[&"export", &"--db", &db, &"--format", &"jsonl"]);
        let row: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        (
            row["name"].as_str().unwrap().to_string(),
            row["size"].clone(),
        )
    };
    let o = ccv3(&[&"index", &d, &"--db", &db]);
    assert!(stdout(&o).starts_with("1 file: 1 new"), "{}", stdout(&o));
    assert_eq!(names(), ("A".into(), json!(text("A").len())));
    let time = std::fs::metadata(&card).unwrap().modified().unwrap();
    std::fs::write(&card, text("B")).unwrap();
    let f = std::fs::File::options().write(true).open(&card).unwrap();
    f.set_modified(time).unwrap();
    drop(f);
    let o = ccv3(&[&"index", &d, &"--db", &db]);
    assert!(
        stdout(&o).contains("0 changed, 1 unchanged"),
        "{}",
        stdout(&o)
    );
    assert_eq!(names().0, "A", "an unchanged file was read");
    let f = std::fs::File::options().write(true).open(&card).unwrap();
    f.set_modified(time + std::time::Duration::from_secs(1))
        .unwrap();
    drop(f);
    let o = ccv3(&[&"index", &d, &"--db", &db]);
    assert!(
        stdout(&o).contains("1 changed, 0 unchanged"),
        "{}",
        stdout(&o)
    );
    assert_eq!(names().0, "B");
}

/// The paths `ccv3 search --db DB QUERY --json` finds, sorted.
fn found(db: &Path, query: &str) -> Vec<String> {
    let o = ccv3(&[&"search", &"--db", &db, &query, &"--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    let mut paths: Vec<String> = v
        .as_array()
        .map(|a| {
            a.iter()
                .map(|m| m["path"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    paths
}

/// Issue 16 "Speed" (indexing within 2x of validating): `cards_fts` is a contentless FTS5
/// table (no second copy of the text). `search` still finds what its docs promise
/// (`crates/ccv3-cli/src/cmd/search.rs` module doc: words, `"phrases"`, `name:` columns,
/// `AND`, `prefix*`; SQLite FTS5 docs, section 3 "Full-text Query Syntax"), re-indexing a
/// changed file replaces its words, and an index made with the earlier table (which stored the
/// text) is moved to the contentless one by the next `ccv3 index`, finding the same cards.
#[test]
fn contentless_fts_keeps_search_and_moves_old_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("cards");
    archive(&d);
    let db = dir.path().join("cards.sqlite");
    ccv3(&[&"index", &d, &"--db", &db]);
    let ember = vec![
        d.join("ember.png").display().to_string(),
        d.join("sub/ember.json").display().to_string(),
    ];
    for query in [
        "lighthouse",
        "\"lighthouse keeper\"",
        "name:ember",
        "tags:fantasy AND spyglass",
        "skerr*",
        "creator:project",
    ] {
        assert_eq!(found(&db, query), ember, "{query}");
    }
    assert!(found(&db, "\"keeper lighthouse\"").is_empty());
    assert!(found(&db, "name:lighthouse").is_empty());
    // A changed file: its old words are gone from the index, its new ones found.
    let card = d.join("sub/ember.json");
    let text = std::fs::read_to_string(&card).unwrap();
    std::fs::write(&card, text.replace("spyglass", "telescope")).unwrap();
    ccv3(&[&"index", &d, &"--db", &db]);
    assert_eq!(found(&db, "spyglass"), ember[..1].to_vec());
    assert_eq!(found(&db, "telescope"), ember[1..].to_vec());

    // The earlier table, as `ccv3 index` made it before: FTS5 storing its text.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE VIRTUAL TABLE old_fts USING fts5(name, description, tags, creator);
         INSERT INTO old_fts (rowid, name, description, tags, creator)
             SELECT c.id, c.name, 'a lighthouse on Skerrow, a telescope', '', c.creator
             FROM cards c WHERE c.kind = 'card';
         DROP TABLE cards_fts;
         ALTER TABLE old_fts RENAME TO cards_fts;",
    )
    .unwrap();
    drop(conn);
    assert_eq!(found(&db, "telescope").len(), 3);
    let o = ccv3(&[&"index", &d, &"--db", &db]);
    assert!(stdout(&o).contains("0 new, 0 changed"), "{}", stdout(&o));
    let conn = rusqlite::Connection::open(&db).unwrap();
    let sql: String = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'cards_fts'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(sql.contains("content=''"), "{sql}");
    let automerge: i64 = conn
        .query_row(
            "SELECT v FROM cards_fts_config WHERE k = 'automerge'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(automerge, 16);
    drop(conn);
    // The words moved with the rows (the unchanged files were not read again).
    assert_eq!(found(&db, "telescope").len(), 3);
    assert_eq!(found(&db, "\"ember vale\" AND skerrow").len(), 2);
}

/// Issue 16 "Everyday commands": `lore list` (index, name, keys, position, order, enabled,
/// decorators), `tokens` (per field and per entry, the tokenizer named), `completions`.
#[test]
fn lore_list_tokens_and_completions() {
    let o = ccv3(&[&"lore", &"list", &example("ember.png")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("ember.png: 5 entries\n") || out.contains(": 5 entries\n"),
        "{out}"
    );
    assert!(
        out.contains("Old Sol") && out.contains("@@depth 2 @@role system"),
        "{out}"
    );
    let o = ccv3(&[&"lore", &"list", &example("ember.png"), &"--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 5);
    assert_eq!(v[1]["name"], "Old Sol");
    assert_eq!(v[1]["decorators"][0], json!({"type": "depth", "value": 2}));
    assert_eq!(v[4]["constant"], true);

    let o = ccv3(&[&"tokens", &example("ember.png"), &"--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["tokenizer"], "o200k_base");
    assert_eq!(v["entries"].as_array().unwrap().len(), 5);
    let fields: u64 = v["fields"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(
        v["total"].as_u64().unwrap(),
        fields + v["lorebook"].as_u64().unwrap()
    );
    let o = ccv3(&[&"tokens", &example("ember.png")]);
    assert!(stdout(&o).starts_with("tokenizer: o200k_base\n"));

    for shell in ["bash", "zsh", "fish"] {
        let o = ccv3(&[&"completions", &shell]);
        assert_eq!(o.status.code(), Some(0));
        assert!(stdout(&o).contains("validate"), "{shell}");
    }
}

/// Issue 16 "Everyday commands": `diff A B` across containers (exit 0 same, 1 different) and
/// `set FILE FIELD VALUE -o OUT` for scripted edits.
#[test]
fn diff_and_set() {
    let o = ccv3(&[&"diff", &example("ember.png"), &example("ember.json")]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(stdout(&o), "0 differences\n");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.charx");
    let o = ccv3(&[
        &"set",
        &example("ember.png"),
        &"name",
        &"Ember Two",
        &"-o",
        &out,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out2 = dir.path().join("out.json");
    let o = ccv3(&[
        &"set",
        &out,
        &"data.character_book.entries.1.insertion_order",
        &"7",
        &"--json",
        &"-o",
        &out2,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = ccv3(&[&"diff", &example("ember.png"), &out2, &"--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    // The icon's URI names its container (a JSON card holds it as a data: URL).
    let fields: Vec<Value> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| !d["path"].as_str().unwrap().starts_with("data.assets"))
        .cloned()
        .collect();
    assert_eq!(
        fields,
        [
            // Issue 31: texts add their word diff.
            json!({"path": "data.name", "a": "Ember Vale", "b": "Ember Two", "changes": [
                {"op": "equal", "text": "Ember "},
                {"op": "delete", "text": "Vale"},
                {"op": "insert", "text": "Two"},
            ]}),
            json!({"path": "data.character_book.entries.1.insertion_order", "a": 20, "b": 7})
        ]
    );
    let o = ccv3(&[
        &"set",
        &example("ember.png"),
        &"no.such",
        &"1",
        &"-o",
        &out2,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o), "ccv3: no.such: no field \"no\"\n");
}

/// Issue 16 "Everyday commands": `-` reads a card from standard input (any container).
#[test]
fn dash_reads_standard_input() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    for file in ["ember.png", "ember.charx", "ember.json"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ccv3"))
            .args(["inspect", "-", "--json"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let bytes = std::fs::read(example(file)).unwrap();
        let mut stdin = child.stdin.take().unwrap();
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        });
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{file}");
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["data"]["name"], "Ember Vale", "{file}");
    }
}

/// Issue 16 "Speed" (`ccv3 index` writes a new path without looking for its row first,
/// `crates/ccv3-cli/src/cmd/index_writer.rs`): a file reached twice in one run (a folder given
/// twice, once with a trailing slash, and a file in it given alone) is still one row and one
/// full-text row, replaced in place; no journal file is left beside the database.
#[test]
fn index_paths_given_twice_keep_one_row_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("cards");
    archive(&d);
    let db = dir.path().join("cards.sqlite");
    let slash = format!("{}/", d.display());
    let o = ccv3(&[&"index", &d, &slash, &d.join("ember.png"), &"--db", &db]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("9 files: 9 new, 0 changed, 0 unchanged, 0 removed, 2 unreadable"),
        "{}",
        stdout(&o)
    );
    let conn = rusqlite::Connection::open(&db).unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count("SELECT COUNT(*) FROM cards"), 4);
    assert_eq!(count("SELECT COUNT(DISTINCT path) FROM cards"), 4);
    // Every readable card has its full-text row, under its own id.
    assert_eq!(
        count(
            "SELECT COUNT(*) FROM cards c JOIN cards_fts_docsize f ON f.id = c.id
             WHERE c.kind != 'unreadable'"
        ),
        3
    );
    assert_eq!(count("SELECT COUNT(*) FROM cards_fts_docsize"), 3);
    drop(conn);
    assert_eq!(found(&db, "lighthouse").len(), 2);
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.starts_with("cards.sqlite-")),
        "{names:?}"
    );
}
