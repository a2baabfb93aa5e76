//! `--compat sillytavern` on `ccv3 lore scan` and `ccv3 prompt` (issue 14): SillyTavern puts
//! entries of equal `order` in reversed activation order; the default mode keeps activation order.

mod common;
use common::{ccv3, example};
use serde_json::{json, Value};

fn json_out(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

#[test]
fn lore_scan_and_prompt_take_compat_sillytavern() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("w.json");
    let entries = json!({"entries": {
        "0": {"uid": 0, "key": ["apple"], "content": "Apples are red.", "order": 100, "position": 0},
        "1": {"uid": 1, "key": ["pear"], "content": "Pears are green.", "order": 100, "position": 0}}});
    std::fs::write(&book, entries.to_string()).unwrap();
    let chat = dir.path().join("chat.json");
    let msgs = json!([{"role": "user", "name": "User", "content": "an apple and a pear"}]);
    std::fs::write(&chat, msgs.to_string()).unwrap();
    let scan = |compat: Option<&str>| -> Vec<String> {
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![
            &"lore", &"scan", &"--book", &book, &"--chat", &chat, &"--json",
        ];
        if let Some(c) = &compat {
            args.extend([&"--compat" as &dyn AsRef<std::ffi::OsStr>, c]);
        }
        json_out(&ccv3(&args))["activated"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["content"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(scan(None), ["Apples are red.", "Pears are green."]);
    assert_eq!(
        scan(Some("sillytavern")),
        ["Pears are green.", "Apples are red."]
    );
    let bad = ccv3(&[
        &"lore",
        &"scan",
        &"--book",
        &book,
        &"--chat",
        &chat,
        &"--compat",
        &"nope",
    ]);
    assert!(!bad.status.success());

    let card = example("ember.png");
    let prompt = |compat: Option<&str>| -> String {
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![
            &"prompt", &"--card", &card, &"--chat", &chat, &"--book", &book, &"--json", &"--now",
            &"0",
        ];
        if let Some(c) = &compat {
            args.extend([&"--compat" as &dyn AsRef<std::ffi::OsStr>, c]);
        }
        json_out(&ccv3(&args))["messages"].to_string()
    };
    let (spec, st) = (prompt(None), prompt(Some("sillytavern")));
    let at = |s: &str, what: &str| s.find(what).unwrap_or(usize::MAX);
    assert!(
        at(&spec, "Apples are red.") < at(&spec, "Pears are green."),
        "{spec}"
    );
    assert!(
        at(&st, "Pears are green.") < at(&st, "Apples are red."),
        "{st}"
    );
}
