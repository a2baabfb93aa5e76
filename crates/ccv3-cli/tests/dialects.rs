//! Issue 17: `--dialect` on `ccv3 cbs`, `ccv3 prompt` and `ccv3 lore scan`, and `ccv3 cbs --list`.

mod common;
use common::{ccv3, example, stderr, stdout};

fn write(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn issue17_cbs_dialect_picks_the_applications_macros() {
    let text = r#"{{arrayelement::["a","b"]::1}} [{{getvar::x}}] {{calc::1+1}} {{incvar::n}}"#;
    let run = |d: &str| {
        let o = ccv3(&[&"cbs", &text, &"--dialect", &d]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    assert_eq!(run("risu"), r#"b [null] 2 {{incvar::n}}"#);
    assert_eq!(
        run("sillytavern"),
        r#"{{arrayelement::["a","b"]::1}} [] {{calc::1+1}} 1"#
    );
    assert_eq!(
        run("spec"),
        r#"{{arrayelement::["a","b"]::1}} [{{getvar::x}}] {{calc::1+1}} {{incvar::n}}"#
    );
    // Without a card, auto is every built-in macro.
    assert_eq!(run("auto"), "b [] 2 1");
    let o = ccv3(&[&"cbs", &"x", &"--dialect", &"klingon"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("expected auto, risu, sillytavern or spec"));
}

#[test]
fn issue17_cbs_auto_follows_the_card() {
    let dir = tempfile::tempdir().unwrap();
    let mut card: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(example("ember.json")).unwrap()).unwrap();
    let plain = write(dir.path(), "plain.json", &card.to_string());
    card["data"]["extensions"]["risuai"] = serde_json::json!({});
    let risu = write(dir.path(), "risu.json", &card.to_string());
    let run = |c: &std::path::Path| {
        let o = ccv3(&[&"cbs", &"{{upper::a}}[{{getvar::x}}]", &"--card", &c]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    assert_eq!(run(&risu), "A[null]");
    assert_eq!(run(&plain), "{{upper::a}}[]");
}

#[test]
fn issue17_cbs_list_prints_the_catalog_of_a_dialect() {
    let o = ccv3(&[&"cbs", &"--list", &"--dialect", &"risu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for needle in [
        "{{arrayelement::ARRAY::I}}",
        "{{makedict::K=V::K=V}}",
        "(also dict, d, makeobject, object, o)",
        "{{screenwidth}}",
        "[stays text: needs RisuAI's user interface]",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    assert!(!out.contains("{{incvar::name}}"));
    let o = ccv3(&[&"cbs", &"--list", &"--dialect", &"spec", &"--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "char",
            "user",
            "random",
            "pick",
            "roll",
            "//",
            "hidden_key",
            "comment",
            "reverse"
        ]
    );
    assert_eq!(v[0]["usage"], "{{char}}");
    assert_eq!(
        v[0]["dialects"],
        serde_json::json!(["spec", "sillytavern", "risu"])
    );
}

#[test]
fn issue17_prompt_dialect_option_reaches_the_card_fields() {
    let dir = tempfile::tempdir().unwrap();
    let mut card: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(example("ember.json")).unwrap()).unwrap();
    card["data"]["description"] = serde_json::json!("D={{upper::quiet}}");
    let path = write(dir.path(), "c.json", &card.to_string());
    let run = |d: &str| {
        let o = ccv3(&[
            &"prompt",
            &"--card",
            &path,
            &"--chat",
            &example("chat.json"),
            &"--now",
            &"0",
            &"--dialect",
            &d,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    assert!(run("risu").contains("D=QUIET"));
    assert!(run("auto").contains("D={{upper::quiet}}"));
}

/// SillyTavern 1.19.0's macro engine syntax (`public/scripts/macros/engine/`, issue 17) through
/// `ccv3 cbs --dialect sillytavern`, and its entries in `--list`.
#[test]
fn issue17_cbs_sillytavern_engine_syntax() {
    let text = "{{if 0}}{{.x = a}}{{else}}{{.x = b}}{{/if}}{{setvar::s}}\n  {{.x}} {{user}}\n{{/setvar}}[{{getvar::s}}] {{.n++}}{{.n++}} {{.n >= 2}}";
    let run = |d: &str| {
        let o = ccv3(&[&"cbs", &text, &"--dialect", &d, &"--user", &"Bob"]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    assert_eq!(run("sillytavern"), "[b Bob] 12 true");
    let o = ccv3(&[&"cbs", &"--list", &"--dialect", &"sillytavern"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for needle in ["{{if COND}}", "{{else}}", "{{.name OP VALUE}}"] {
        assert!(out.contains(needle), "{needle} missing from:\n{out}");
    }
}

/// SillyTavern 1.19.0 public/scripts/macros/definitions/*.js: the classic macros in `--list`.
#[test]
fn issue17_cbs_list_prints_sillytavern_macros_and_what_needs_sillytavern() {
    // SillyTavern 1.19.0 public/scripts/macros/definitions/*.js.
    let o = ccv3(&[&"cbs", &"--list", &"--dialect", &"sillytavern"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for needle in [
        "{{hasvar::name}}",
        "(also varexists)",
        "{{deleteglobalvar::name}}",
        "{{setvarkey::name::key::value}}",
        "{{timeDiff::LEFT::RIGHT}}",
        "{{datetimeformat::FORMAT}}",
        "{{time_UTC+N}}",
        "{{group}}",
        "{{input}}",
        "[stays text: needs SillyTavern's user interface]",
        "[stays text: reads SillyTavern's instruct and context template settings]",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    assert!(!out.contains("{{arrayelement"));
    let text = "{{setvar::a::1}}{{hasvar::a}} {{char::x}} <GROUP>";
    let o = ccv3(&[&"cbs", &text, &"--dialect", &"sillytavern"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "true {{char::x}} ");
}
