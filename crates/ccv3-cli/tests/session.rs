//! One turn policy behind `ccv3 lore scan`, `ccv3 prompt` and `ccv3 cbs` (issue 11): the same
//! default seed, the same entries, the clock passed in.

mod common;
use common::{ccv3, example};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;

fn json_out(o: &Output) -> Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

/// A global book of 24 entries on the key `storm`, each with a 50% probability: which of them
/// activate depends on the seed only.
fn coin_book(dir: &Path) -> PathBuf {
    let entries: Vec<Value> = (0..24)
        .map(|i| {
            json!({"keys": ["storm"], "content": format!("coin {i}"), "name": format!("c{i}"),
                "extensions": {"probability": 50, "useProbability": true}, "enabled": true,
                "insertion_order": i, "use_regex": false})
        })
        .collect();
    let path = dir.join("coins.json");
    let book = json!({"spec": "lorebook_v3", "data": {"entries": entries}});
    std::fs::write(&path, book.to_string()).unwrap();
    path
}

/// FNV-1a 64 over each message's content and a zero byte (the chat's default seed).
fn chat_seed(chat: &Path) -> u64 {
    let v: Value = serde_json::from_slice(&std::fs::read(chat).unwrap()).unwrap();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for m in v.as_array().unwrap() {
        for b in m["content"].as_str().unwrap().bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn scan_names(v: &Value) -> Vec<String> {
    v["activated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn session_lore_scan_default_seed_is_the_chats_and_prompt_picks_the_same_entries() {
    let dir = tempfile::tempdir().unwrap();
    let book = coin_book(dir.path());
    let chat = example("chat.json");
    let scan = |seed: Option<String>| {
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![
            &"lore", &"scan", &"--book", &book, &"--chat", &chat, &"--json",
        ];
        let s;
        if let Some(seed) = seed {
            s = seed;
            args.extend([&"--seed" as &dyn AsRef<std::ffi::OsStr>, &s]);
        }
        scan_names(&json_out(&ccv3(&args)))
    };
    let default = scan(None);
    assert_eq!(default, scan(Some(chat_seed(&chat).to_string())));
    // Some but not all coins come up (else the seed would not matter).
    assert!(!default.is_empty() && default.len() < 24, "{default:?}");
    assert_ne!(default, scan(Some("1".into())));

    let prompt = json_out(&ccv3(&[
        &"prompt",
        &"--card",
        &example("ember.json"),
        &"--book",
        &book,
        &"--chat",
        &chat,
        &"--json",
    ]));
    let mut from_prompt: Vec<String> = prompt["lore"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["label"].as_str()?.strip_prefix("coins.json/"))
        .map(str::to_string)
        .collect();
    let mut from_scan = default;
    from_prompt.sort();
    from_scan.sort();
    assert_eq!(from_prompt, from_scan);
}

#[test]
fn session_now_option_sets_the_time_macros() {
    let o = ccv3(&[
        &"cbs",
        &"{{isodate}} {{isotime}} {{unixtime}}",
        &"--now",
        &"2026-11-25T13:00:00+02:00",
    ]);
    assert!(o.status.success());
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "2026-11-25 13:00 1795604400"
    );
    let o = ccv3(&[&"cbs", &"{{unixtime}}", &"--now", &"0"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "0");
    // Without --now the CLI passes the system clock.
    let o = ccv3(&[&"cbs", &"{{unixtime}}"]);
    let t: i64 = String::from_utf8_lossy(&o.stdout)
        .parse()
        .expect("a number");
    assert!(t > 1_700_000_000, "{t}");
    let o = ccv3(&[&"cbs", &"x", &"--now", &"yesterday"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("RFC 3339"));
}

#[test]
fn session_prompt_now_reaches_card_macros() {
    let dir = tempfile::tempdir().unwrap();
    let mut card: Value =
        serde_json::from_slice(&std::fs::read(example("ember.json")).unwrap()).unwrap();
    card["data"]["description"] = json!("Today is {{date}}.");
    let path = dir.path().join("card.json");
    std::fs::write(&path, card.to_string()).unwrap();
    let v = json_out(&ccv3(&[
        &"prompt",
        &"--card",
        &path,
        &"--chat",
        &example("chat.json"),
        &"--now",
        &"2026-11-25T09:30:00Z",
        &"--json",
    ]));
    let system = v["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("Today is November 25, 2026."), "{system}");
}

#[test]
fn session_chat_of_another_shape_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("foo.json", "{\"foo\":1}"),
        ("empty.json", ""),
        ("n.json", "5"),
    ] {
        let chat = dir.path().join(name);
        std::fs::write(&chat, text).unwrap();
        for cmd in ["scan", "prompt"] {
            let o = if cmd == "scan" {
                ccv3(&[
                    &"lore",
                    &"scan",
                    &"--book",
                    &example("world.json"),
                    &"--chat",
                    &chat,
                ])
            } else {
                ccv3(&[
                    &"prompt",
                    &"--card",
                    &example("ember.json"),
                    &"--chat",
                    &chat,
                ])
            };
            assert_eq!(o.status.code(), Some(2), "{cmd} {name}");
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains(name) && err.contains("{\"messages\": [...]}"),
                "{cmd} {name}: {err}"
            );
        }
    }
    // The peers' {"messages": [...]} shape is read, not taken for an empty chat.
    let chat = dir.path().join("peers.json");
    std::fs::write(
        &chat,
        r#"{"messages":[{"name":"Sam","is_user":true,"mes":"the storm and the Teeth"}]}"#,
    )
    .unwrap();
    let v = json_out(&ccv3(&[
        &"lore",
        &"scan",
        &"--book",
        &example("ember.json"),
        &"--chat",
        &chat,
        &"--json",
    ]));
    assert!(scan_names(&v).iter().any(|n| n == "The Teeth"), "{v}");
}
