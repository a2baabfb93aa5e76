//! Issue 12: `ccv3 lore scan` on hostile regex keys ends within its step budgets, and the only
//! change to its `--json` document is the rejection reason `regex-budget`.

use std::process::Command;

#[test]
fn lore_scan_json_explains_regex_keys_over_their_budget() {
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("book.json");
    let chat = dir.path().join("chat.json");
    let entries: Vec<serde_json::Value> = ["/(a*)\\1*b/", "/(.*)(.*)\\2\\1=/", "tail"]
        .iter()
        .map(|k| {
            serde_json::json!({"keys": [k], "content": "c", "extensions": {}, "enabled": true,
            "insertion_order": 100, "use_regex": false, "constant": false})
        })
        .collect();
    std::fs::write(
        &book,
        serde_json::json!({"name": "hostile", "entries": entries}).to_string(),
    )
    .unwrap();
    let text = "a".repeat(8 * 1024) + " tail";
    std::fs::write(
        &chat,
        serde_json::json!([{"role": "user", "content": text}]).to_string(),
    )
    .unwrap();
    let t = std::time::Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_ccv3"))
        .args(["lore", "scan", "--json", "--book"])
        .arg(&book)
        .arg("--chat")
        .arg(&chat)
        .output()
        .unwrap();
    assert!(t.elapsed().as_secs() < 10);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The scan's warning is printed on stderr like the books' warnings (issue 12).
    let stderr = String::from_utf8_lossy(&o.stderr);
    let budget: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("lore-regex-budget"))
        .collect();
    assert_eq!(budget.len(), 1, "{stderr}");
    assert!(budget[0].starts_with("ccv3: warning: "), "{stderr}");
    assert!(budget[0].contains("ran out of steps"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["activated", "rejected", "tokens"]);
    assert_eq!(v["activated"][0]["index"], 2);
    let rejected = v["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), 2);
    for r in rejected {
        assert_eq!(r["reason"], "regex-budget");
        let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["book", "index", "name", "reason"]);
    }
}
