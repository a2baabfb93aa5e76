//! Issue 16 ("The CLI for people and for archives"): clear errors, one greeting policy, every
//! cut listed, and the archive commands (`validate DIR` streamed, `convert DIR`, `index`,
//! `search`, `export`).

mod common;
use common::{ccv3, example, stderr};
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
