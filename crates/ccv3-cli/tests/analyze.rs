//! `ccv3 lint`, `ccv3 lore graph` and `ccv3 portability` (issue 27): the JSON shapes the issue
//! names, and `lint`'s exit status as `validate` has it.

mod common;
use common::{ccv3, example, stdout};

#[test]
fn lint_json_is_one_array_with_the_budget_plan() {
    let o = ccv3(&[&"lint", &example("ember.png"), &"--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let items = v.as_array().unwrap();
    let plan = items
        .iter()
        .find(|f| f["code"] == "lore-budget-plan")
        .unwrap();
    assert_eq!(plan["entry"], serde_json::Value::Null);
    assert_eq!(plan["budget"]["limit"], 512, "the book's own token_budget");
    for f in items {
        for k in ["file", "severity", "code", "path", "entry", "message"] {
            assert!(f.get(k).is_some(), "{k} in {f}");
        }
    }
    // --budget and --code, as `validate --code`.
    let o = ccv3(&[
        &"lint",
        &example("ember.png"),
        &"--jsonl",
        &"--budget",
        &"10",
        &"--code",
        &"lore-constant-over-budget",
    ]);
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("lore-constant-over-budget"));
}

#[test]
fn lint_exit_status_is_validates() {
    let dir = tempfile::tempdir().unwrap();
    let card = dir.path().join("card.json");
    std::fs::write(
        &card,
        r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","first_mes":"{{#when x}}never closed"}}"#,
    )
    .unwrap();
    // cbs-unclosed-block is an error: exit 1.
    let o = ccv3(&[&"lint", &card, &"--app", &"risuai"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("cbs-unclosed-block"));
    // Only warnings and up kept, none an error after --code: exit 0.
    let o = ccv3(&[
        &"lint",
        &card,
        &"--app",
        &"risuai",
        &"--code",
        &"lore-budget-plan",
    ]);
    assert_eq!(o.status.code(), Some(0));
    // A file that cannot be read: exit 2, the others still linted.
    let o = ccv3(&[
        &"lint",
        &dir.path().join("missing.json"),
        &example("ember.png"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("ember.png: 4 findings"));
}

#[test]
fn lore_graph_formats() {
    let o = ccv3(&[&"lore", &"graph", &example("ember.png"), &"--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["nodes"].as_array().unwrap().len(), 5);
    assert_eq!(
        v["edges"][0],
        serde_json::json!({"from": 3, "to": 0, "key": "Teeth"})
    );
    let o = ccv3(&[
        &"lore",
        &"graph",
        &example("ember.png"),
        &"--format",
        &"dot",
    ]);
    assert!(stdout(&o).starts_with("digraph lore {"));
    let o = ccv3(&[
        &"lore",
        &"graph",
        &example("ember.png"),
        &"--format",
        &"mermaid",
    ]);
    assert!(stdout(&o).contains("e3 -->|\"Teeth\"| e0"));
}

#[test]
fn portability_json_names_the_app() {
    let o = ccv3(&[
        &"portability",
        &example("ember.charx"),
        &"--json",
        &"--app",
        &"v2",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let items = v.as_array().unwrap();
    assert!(items.iter().all(|f| f["app"] == "v2"));
    assert!(items.iter().any(|f| f["code"] == "container-unsupported"));
}
