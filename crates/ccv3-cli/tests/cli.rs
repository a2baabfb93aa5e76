//! The `ccv3` command's contract: names, outputs and exit codes.

mod common;
use common::{ccv3, corpus, example, root, stderr, stdout};
use std::path::Path;

#[test]
fn cli_inspect_summarises_the_example_card() {
    let o = ccv3(&[&"inspect", &example("ember.json")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for needle in [
        "Ember Vale",
        "container:   JSON",
        "lorebook:    5 entries",
        "greetings:",
        "assets:",
        "diagnostics:",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
}

#[test]
fn cli_inspect_json_prints_one_v3_object_with_text_as_stored() {
    let o = ccv3(&[&"inspect", &example("ember.json"), &"--json"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["spec"], "chara_card_v3");
    assert_eq!(v["spec_version"], "3.0");
    let input: serde_json::Value =
        serde_json::from_slice(&std::fs::read(example("ember.json")).unwrap()).unwrap();
    assert_eq!(v, input, "every field exactly as stored");
}

#[test]
fn cli_inspect_json_of_a_v2_card_is_v3_with_unknown_fields_kept() {
    let o = ccv3(&[
        &"inspect",
        &corpus("json/ca_e2e_test-ccv2-amanda.json"),
        &"--json",
    ]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["spec"], "chara_card_v3");
    assert!(v["data"]["extensions"].get("visual_description").is_some());
    assert_eq!(v["data"]["group_only_greetings"], serde_json::json!([]));
}

#[test]
fn cli_failure_is_one_line_naming_the_file_with_exit_2() {
    let missing = root().join("no/such/card.png");
    let o = ccv3(&[&"inspect", &missing]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("no/such/card.png"), "{err}");
}

#[test]
fn cli_validate_exit_codes_and_json_shape() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.json");
    std::fs::copy(example("ember.json"), &good).unwrap();
    let o = ccv3(&[&"validate", &good, &"--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.is_array());

    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#,
    )
    .unwrap();
    let o = ccv3(&[&"validate", &bad, &"--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let first = &v[0];
    for k in ["file", "severity", "code", "path", "message"] {
        assert!(first.get(k).is_some(), "{k} in {first}");
    }

    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{ not json").unwrap();
    let o = ccv3(&[&"validate", &dir.path()]);
    assert_eq!(o.status.code(), Some(2), "an unreadable file gives 2");
    assert!(stdout(&o).contains("3 files"), "{}", stdout(&o));
}

#[test]
fn cli_convert_failure_leaves_no_partial_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{ nope").unwrap();
    let o = ccv3(&[&"convert", &bad, &out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary files left"
    );
}

#[test]
fn cli_convert_to_v2_json_backfills() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v2.json");
    let o = ccv3(&[&"convert", &example("ember.json"), &out, &"--to", &"v2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["spec"], "chara_card_v2");
    let content = v["data"]["character_book"]["entries"][1]["content"]
        .as_str()
        .unwrap();
    assert!(!content.contains("@@"), "decorators removed: {content}");
}

#[test]
fn issue13_cli_convert_v3_to_v2_and_back_gives_the_v3_card() {
    // Through JSON and PNG: the V2 card keeps what V2 cannot hold, `convert` brings it back
    // (the same card; the restored fields come after the V2 ones in the key order).
    let dir = tempfile::tempdir().unwrap();
    let json = |o: &std::process::Output| -> serde_json::Value {
        serde_json::from_str(&stdout(o)).expect("inspect --json")
    };
    let want = json(&ccv3(&[&"inspect", &example("ember.json"), &"--json"]));
    for ext in ["json", "png"] {
        let v2 = dir.path().join(format!("v2.{ext}"));
        let back = dir.path().join(format!("back-{ext}.json"));
        let o = ccv3(&[&"convert", &example("ember.json"), &v2, &"--to", &"v2"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = ccv3(&[&"convert", &v2, &back]);
        assert!(o.status.success(), "{}", stderr(&o));
        let got = json(&ccv3(&[&"inspect", &back, &"--json"]));
        assert_eq!(got, want, "through V2 {ext}");
    }
}

#[test]
fn cli_convert_unknown_extension_names_the_output() {
    let o = ccv3(&[&"convert", &example("ember.json"), &"out.txt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("out.txt"));
}

#[test]
fn cli_extract_then_pack_round_trips_a_charx() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("x");
    let src = corpus("charx/risutoki_night_veil_v2_ko.charx");
    if !src.is_file() {
        eprintln!("skipped: the RisuAI CHARX is not in the in-repository corpus (no ../shared)");
        return;
    }
    let o = ccv3(&[&"extract", &src, &folder]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(folder.join("card.json").exists());
    assert!(folder.join("module.risum").exists());
    let out = dir.path().join("back.charx");
    let o = ccv3(&[&"pack", &folder, &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    let a = ccv3(&[&"inspect", &src, &"--json"]);
    let b = ccv3(&[&"inspect", &out, &"--json"]);
    assert_eq!(stdout(&a), stdout(&b), "same card after extract + pack");
}

#[test]
fn cli_extract_refuses_a_non_empty_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "x").unwrap();
    let o = ccv3(&[
        &"extract",
        &corpus("charx/ca_fixture_baseline_v3_small.charx"),
        &dir.path(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(Path::new(&dir.path().join("keep.txt")).exists());
}

#[test]
fn cli_cbs_expands_spec_macros_with_the_card() {
    let o = ccv3(&[
        &"cbs",
        &"{{char}}/{{user}}/{{reverse:abc}}/{{// gone}}/{{nope}}",
        &"--card",
        &example("ember.json"),
        &"--user",
        &"Sam",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "Ember/Sam/cba//{{nope}}");
}

#[test]
fn cli_cbs_pick_is_the_same_for_the_same_chat() {
    let args: [&dyn AsRef<std::ffi::OsStr>; 4] = [
        &"cbs",
        &"{{pick:a,b,c,d,e,f,g,h}}",
        &"--chat",
        &example("chat.json"),
    ];
    let first = stdout(&ccv3(&args));
    for _ in 0..3 {
        assert_eq!(stdout(&ccv3(&args)), first);
    }
}

#[test]
fn cli_cbs_display_shows_comments_prompt_hides_them() {
    let prompt = ccv3(&[&"cbs", &"x{{comment:note}}y"]);
    assert_eq!(stdout(&prompt), "xy");
    let display = ccv3(&[&"cbs", &"x{{comment:note}}y", &"--display"]);
    assert!(stdout(&display).contains("note"));
}

#[test]
fn cli_lore_scan_json_contract() {
    let o = ccv3(&[
        &"lore",
        &"scan",
        &"--book",
        &example("ember.png"),
        &"--book",
        &example("world.json"),
        &"--chat",
        &example("chat.json"),
        &"--json",
        &"--timing",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let activated = v["activated"].as_array().unwrap();
    assert!(!activated.is_empty());
    for k in [
        "book", "index", "name", "content", "position", "depth", "role", "reason",
    ] {
        assert!(activated[0].get(k).is_some(), "activated item lacks {k}");
    }
    assert!(v["rejected"].is_array());
    assert!(v["tokens"].as_u64().unwrap() > 0);
    for k in ["load_ms", "compile_ms", "scan_ms"] {
        assert!(v["timing"][k].is_number(), "timing.{k}");
    }
    // The constant entry is there, with decorators removed from every content.
    assert!(activated.iter().any(|a| a["reason"] == "constant"));
    assert!(activated
        .iter()
        .all(|a| !a["content"].as_str().unwrap().contains("@@")));
    // index is the entry's place in its book as read.
    let teeth = activated.iter().find(|a| a["name"] == "The Teeth").unwrap();
    assert_eq!(
        (teeth["book"].as_str(), teeth["index"].as_u64()),
        (Some("ember.png"), Some(0))
    );
}

#[test]
fn cli_lore_scan_state_file_is_written_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    for _ in 0..2 {
        let o = ccv3(&[
            &"lore",
            &"scan",
            &"--book",
            &example("world.json"),
            &"--chat",
            &example("chat.json"),
            &"--state",
            &state,
            &"--json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let s: serde_json::Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
        assert!(s.get("sticky").is_some(), "{s}");
    }
}

#[test]
fn cli_lore_scan_bad_strategy_is_one_clear_line() {
    let o = ccv3(&[
        &"lore",
        &"scan",
        &"--book",
        &example("world.json"),
        &"--chat",
        &example("chat.json"),
        &"--strategy",
        &"sideways",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("sideways"));
}

#[test]
fn cli_prompt_json_contract_and_fitting() {
    let o = ccv3(&[
        &"prompt",
        &"--card",
        &example("ember.png"),
        &"--chat",
        &example("chat.json"),
        &"--book",
        &example("world.json"),
        &"--json",
        &"--max-context",
        &"250",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for k in ["messages", "tokens", "lore", "cut"] {
        assert!(v.get(k).is_some(), "{k}");
    }
    assert!(v["tokens"].as_u64().unwrap() <= 250);
    let first_cut = &v["cut"][0];
    assert_eq!(
        first_cut["kind"], "history",
        "oldest history goes first: {first_cut}"
    );
    for m in v["messages"].as_array().unwrap() {
        assert!(["system", "user", "assistant"].contains(&m["role"].as_str().unwrap()));
    }
}

#[test]
fn cli_prompt_instruct_chatml_renders_text() {
    let o = ccv3(&[
        &"prompt",
        &"--card",
        &example("ember.png"),
        &"--chat",
        &example("chat.json"),
        &"--instruct",
        &"chatml",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.starts_with("<|im_start|>system"), "{text}");
    assert!(text.contains("<|im_start|>user") && text.contains("<|im_end|>"));
}

/// Issue 12 "Output for people": control characters from card fields are shown escaped by
/// `inspect` (ESC, OSC 52 clipboard writes, BEL, forged line breaks), and `--json` keeps the text.
#[test]
fn inspect_escapes_control_characters_from_card_fields() {
    let dir = tempfile::tempdir().unwrap();
    let card = dir.path().join("evil.json");
    let name = "Eve\u{1b}]52;c;SGk=\u{7}\u{1b}[2J\nfile:        forged";
    let json = serde_json::json!({
        "spec": "chara_card_v3", "spec_version": "3.0",
        "data": {"name": name, "description": "", "personality": "", "scenario": "",
                 "first_mes": "", "mes_example": "", "creator_notes": "", "system_prompt": "",
                 "post_history_instructions": "", "alternate_greetings": [], "tags": ["t\u{7}ag"],
                 "creator": "\u{9b}31m", "character_version": "", "extensions": {},
                 "group_only_greetings": []}
    });
    std::fs::write(&card, json.to_string()).unwrap();
    let out = ccv3(&[&"inspect", &card]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{9b}'));
    assert!(text.contains("name:        Eve\\x1b]52;c;SGk=\\x07\\x1b[2J\\nfile:        forged"));
    assert!(text.contains("tags:        t\\x07ag"));
    assert!(text.contains("creator:     \\u{9b}31m"));
    assert_eq!(text.matches("\nfile:").count(), 0, "no forged line");
    let json_out = ccv3(&[&"inspect", &card, &"--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json_out.stdout).unwrap();
    assert_eq!(v["data"]["name"], name);
}

/// Issue 12 "Files": writing over an existing file keeps its permission bits but never setuid,
/// setgid or sticky.
#[cfg(unix)]
#[test]
fn convert_over_a_setuid_file_drops_the_special_bits() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.json");
    std::fs::write(&out_path, b"old").unwrap();
    std::fs::set_permissions(&out_path, std::fs::Permissions::from_mode(0o6755)).unwrap();
    let out = ccv3(&[&"convert", &example("ember.png"), &out_path]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mode = std::fs::metadata(&out_path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o755);
}

/// Issue 12 "Files": `extract` to a target that is a symbolic link (here a dangling one) fails
/// naming the target, writes nothing through the link and leaves no staging folder behind.
#[cfg(unix)]
#[test]
fn extract_to_a_dangling_symlink_fails_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("out");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).unwrap();
    let out = ccv3(&[&"extract", &example("ember.png"), &link]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("out"), "{}", stderr(&out));
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        vec!["out".to_string()],
        "only the link itself remains"
    );
    assert!(!dir.path().join("nowhere").exists());
}

/// Issue 29 ("Library list"): `ccv3 inspect --summary --json FILE` prints what a character list
/// shows, the same for the card in every container; without `--json`, one line a field.
#[test]
fn cli_inspect_summary_json_contract() {
    for name in ["ember.json", "ember.png", "ember.charx"] {
        let o = ccv3(&[&"inspect", &"--summary", &"--json", &example(name)]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "name",
                "nickname",
                "creator",
                "tags",
                "spec",
                "spec_version",
                "container",
                "greetings",
                "entries",
                "assets"
            ],
            "{name}"
        );
        assert_eq!(v["name"], "Ember Vale", "{name}");
        assert_eq!(v["entries"], 5, "{name}");
        assert_eq!(v["greetings"], 2, "{name}");
    }
    let o = ccv3(&[&"inspect", &"--summary", &example("ember.png")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for needle in [
        "name:        Ember Vale",
        "container:   PNG",
        "lorebook:    5 entries",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    let o = ccv3(&[&"inspect", &"--summary", &example("world.json")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("a lorebook, not a character card"));
}

/// Issue 29: "the token count of the permanent fields if asked": `--tokens T` adds
/// `permanent_tokens` (last) to `ccv3 inspect --summary --json`, the sum of the name,
/// description, personality, scenario and character's note counted by T (SillyTavern's
/// permanent fields, `ccv3::PERMANENT_FIELDS`); `--tokens` needs `--summary`.
#[test]
fn cli_inspect_summary_tokens() {
    let card = example("ember.png");
    let o = ccv3(&[
        &"inspect",
        &"--summary",
        &"--json",
        &"--tokens",
        &"o200k",
        &card,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys.last(), Some(&"permanent_tokens"));
    // The counts `ccv3 tokens` gives the fields, plus the name and the character's note.
    let o = ccv3(&[&"tokens", &card, &"--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    let f = &t["fields"];
    let tok = ccv3_tokens::load(&"o200k".parse().unwrap()).unwrap();
    let expected = tok.count("Ember Vale")
        + tok.count("{{char}} smells of lamp oil and salt.")
        + ["description", "personality", "scenario"]
            .iter()
            .map(|k| f[*k].as_u64().unwrap() as usize)
            .sum::<usize>();
    assert_eq!(v["permanent_tokens"], expected);
    let o = ccv3(&[&"inspect", &"--summary", &"--tokens", &"o200k", &card]);
    assert!(
        stdout(&o).contains(&format!("permanent:   {expected} tokens")),
        "{}",
        stdout(&o)
    );
    let o = ccv3(&[&"inspect", &"--json", &"--tokens", &"o200k", &card]);
    assert_eq!(o.status.code(), Some(2), "--tokens without --summary");
}
