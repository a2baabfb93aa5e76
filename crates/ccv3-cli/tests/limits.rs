//! Issue 12 (hostile input, part 2), sizes and CBS per prompt, through the command: every input
//! of `cbs`, `prompt` and `lore scan` is refused over its limit with one line on stderr naming
//! the file, the limit and the option that raises it; the macro budget of a prompt is spent with
//! a warning; the state written is capped. Limits are set low through the options, so the
//! inputs stay small.

mod common;
use common::{ccv3, example, stderr};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Exit 2 and exactly one line on stderr, containing every needle.
fn refused(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    for n in needles {
        assert!(err.contains(n), "missing {n:?} in {err}");
    }
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn chat_of(n: usize) -> String {
    let msgs: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"role":"user","content":"message {i}"}}"#))
        .collect();
    format!("[{}]", msgs.join(","))
}

/// Issue 12, sizes: "`prompt` reads a 200 MB chat although a 64 MiB chat limit exists": the
/// chat is refused from its size before it is read, in all three commands.
#[test]
fn issue12_chat_over_max_chat_size_is_refused_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let chat = write(dir.path(), "big.json", &chat_of(200));
    let card = example("ember.json");
    for args in [
        vec!["prompt", "--card", card.to_str().unwrap(), "--chat"],
        vec!["lore", "scan", "--book", card.to_str().unwrap(), "--chat"],
        vec!["cbs", "{{lastmessage}}", "--chat"],
    ] {
        let mut a: Vec<&dyn AsRef<std::ffi::OsStr>> = args
            .iter()
            .map(|s| s as &dyn AsRef<std::ffi::OsStr>)
            .collect();
        a.push(&chat);
        a.push(&"--max-chat-size");
        a.push(&"1K");
        refused(
            &ccv3(&a),
            &["big.json", "1024 bytes (1 KiB)", "--max-chat-size"],
        );
    }
    // Raised, the same chat is read.
    let o = ccv3(&[
        &"cbs",
        &"{{lastmessage}}",
        &"--chat",
        &chat,
        &"--max-chat-size",
        &"1M",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "message 199");
}

/// Issue 12, sizes: the messages limit (`--max-messages`).
#[test]
fn issue12_chat_over_max_messages_is_refused_naming_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let chat = write(dir.path(), "many.json", &chat_of(50));
    let o = ccv3(&[
        &"prompt",
        &"--card",
        &example("ember.json"),
        &"--chat",
        &chat,
        &"--max-messages",
        &"10",
    ]);
    refused(
        &o,
        &["many.json", "more than 10 messages", "--max-messages"],
    );
}

/// Issue 12, sizes: cards and books over `--max-file-size` are refused from their size.
#[test]
fn issue12_card_and_book_over_max_file_size_are_refused() {
    let chat = example("chat.json");
    let o = ccv3(&[
        &"prompt",
        &"--card",
        &example("ember.json"),
        &"--chat",
        &chat,
        &"--max-file-size",
        &"1000",
    ]);
    refused(&o, &["ember.json", "1000 bytes", "--max-file-size"]);
    let o = ccv3(&[
        &"lore",
        &"scan",
        &"--book",
        &example("world.json"),
        &"--chat",
        &chat,
        &"--max-file-size",
        &"100",
    ]);
    refused(&o, &["world.json", "--max-file-size"]);
    // The limit counts the files together: each book fits alone, the three do not.
    let world = example("world.json");
    let size = std::fs::metadata(&world).unwrap().len();
    let limit = (size * 5 / 2).to_string();
    let o = ccv3(&[
        &"lore",
        &"scan",
        &"--book",
        &world,
        &"--book",
        &world,
        &"--chat",
        &chat,
        &"--max-file-size",
        &limit,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = ccv3(&[
        &"lore",
        &"scan",
        &"--book",
        &world,
        &"--book",
        &world,
        &"--book",
        &world,
        &"--chat",
        &chat,
        &"--max-file-size",
        &limit,
    ]);
    refused(
        &o,
        &[
            "world.json",
            "with the cards and books before it",
            "--max-file-size",
        ],
    );
    let o = ccv3(&[
        &"cbs",
        &"{{char}}",
        &"--card",
        &example("ember.png"),
        &"--max-file-size",
        &"1K",
    ]);
    refused(&o, &["ember.png", "--max-file-size"]);
}

/// Issue 12, sizes: text read from standard input (`ccv3 cbs -`) is capped while it is read.
#[test]
fn issue12_cbs_stdin_over_max_file_size_is_refused() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ccv3"))
        .args(["cbs", "-", "--max-file-size", "100"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The command may stop reading early: a broken pipe here is fine.
    let _ = stdin.write_all(&[b'x'; 1000]);
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    refused(&o, &["<stdin>", "100 bytes", "--max-file-size"]);
}

/// Issue 12, CBS: "300 entries x 100 variables of 64 KiB ... write a 655 MB `--state`": the
/// state read is capped, the variables are capped by the budget and the state written is capped.
#[test]
fn issue12_state_is_capped_when_read_and_written() {
    let dir = tempfile::tempdir().unwrap();
    let chat = example("chat.json");
    let big = write(
        dir.path(),
        "state.json",
        &format!(
            r#"{{"variables":{{"local":{{"a":"{}"}}}}}}"#,
            "x".repeat(5000)
        ),
    );
    let o = ccv3(&[
        &"prompt",
        &"--card",
        &example("ember.json"),
        &"--chat",
        &chat,
        &"--state",
        &big,
        &"--max-state-size",
        &"1K",
    ]);
    refused(&o, &["state.json", "--max-state-size"]);
    // Raised, it is read; the next state (the same variables, written as pretty JSON) is over a
    // limit set between the two sizes: refused, and the file is left as it was.
    let o = ccv3(&[
        &"prompt",
        &"--card",
        &example("ember.json"),
        &"--chat",
        &chat,
        &"--state",
        &big,
        &"--max-state-size",
        &"5060",
    ]);
    refused(
        &o,
        &[
            "state.json",
            "the next state is",
            "not written",
            "--max-state-size",
        ],
    );
    assert!(std::fs::read_to_string(&big)
        .unwrap()
        .starts_with(r#"{"variables""#));
    // A card that writes 20 variables of 1,000 bytes: with --max-variable-bytes 4K the state
    // holds at most 4 KiB of them, and the cut is reported.
    let mut card: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(example("ember.json")).unwrap()).unwrap();
    let setters: String = (0..20)
        .map(|i| format!("{{{{setvar::v{i}::{}}}}}", "y".repeat(1000)))
        .collect();
    card["data"]["description"] = serde_json::Value::String(setters);
    let card_path = write(dir.path(), "vars.json", &card.to_string());
    let state = dir.path().join("next.json");
    let o = ccv3(&[
        &"prompt",
        &"--card",
        &card_path,
        &"--chat",
        &chat,
        &"--state",
        &state,
        &"--max-variable-bytes",
        &"4K",
        &"--now",
        &"0",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("(--max-variable-bytes raises it)"),
        "{}",
        stderr(&o)
    );
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let bytes: usize = written["variables"]["local"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| k.len() + v.as_str().unwrap().len())
        .sum();
    assert!((3000..=4096).contains(&bytes), "{bytes}");
}

/// Issue 12, CBS: "7 card fields and 800 entries each just under the limit pass 3 GiB": the
/// prompt's expansions share `--max-macro-output`; the prompt is cut there with a warning that
/// names the option, and the command still succeeds.
#[test]
fn issue12_prompt_macro_output_is_shared_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut card: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(example("ember.json")).unwrap()).unwrap();
    // 2 KiB from 60 bytes of macros, in every field.
    let mut grow = String::from("{{settempvar::a::xxxxxxxxxxxxxxxx}}");
    for _ in 0..7 {
        grow.push_str("{{settempvar::a::{{tempvar::a}}{{tempvar::a}}}}");
    }
    grow.push_str("{{tempvar::a}}");
    for f in ["description", "personality", "scenario", "mes_example"] {
        card["data"][f] = serde_json::Value::String(grow.clone());
    }
    let card_path = write(dir.path(), "grow.json", &card.to_string());
    let o = ccv3(&[
        &"prompt",
        &"--card",
        &card_path,
        &"--chat",
        &example("chat.json"),
        &"--json",
        &"--now",
        &"0",
        &"--max-macro-output",
        &"5K",
        // `settempvar` is RisuAI's; ember.json has no RisuAI extensions (issue 17's dialects).
        &"--dialect",
        &"risu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("the prompt's macro budget is spent (output bytes: 5120)")
            && err.contains("(--max-macro-output raises it)"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let xs: usize = v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().matches('x').count())
        .sum();
    assert!(xs <= 5120, "{xs}");
    // Without the option the same card is whole and quiet.
    let o = ccv3(&[
        &"prompt",
        &"--card",
        &card_path,
        &"--chat",
        &example("chat.json"),
        &"--json",
        &"--now",
        &"0",
    ]);
    assert!(o.status.success());
    assert!(!stderr(&o).contains("budget"), "{}", stderr(&o));
}

/// Issue 12, sizes: template and instruct files have fixed caps (64 KiB and 1 MiB), checked
/// from their size before they are read.
#[test]
fn issue12_template_and_instruct_files_are_capped() {
    let dir = tempfile::tempdir().unwrap();
    let big = write(dir.path(), "instruct.json", &" ".repeat((1 << 20) + 1));
    let o = ccv3(&[
        &"prompt",
        &"--card",
        &example("ember.json"),
        &"--chat",
        &example("chat.json"),
        &"--instruct",
        &big,
    ]);
    refused(&o, &["instruct.json", "1048577 bytes", "1048576"]);
    let big = write(dir.path(), "template.json", &" ".repeat(100_000));
    let o = ccv3(&[
        &"prompt",
        &"--card",
        &example("ember.json"),
        &"--chat",
        &example("chat.json"),
        &"--template",
        &big,
    ]);
    refused(&o, &["template.json", "100000 bytes", "65536"]);
}

/// The options read sizes with binary units and refuse anything else (clap's usage error).
#[test]
fn limits_bad_size_is_a_usage_error() {
    let o = ccv3(&[&"cbs", &"x", &"--max-file-size", &"12X"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown unit"), "{}", stderr(&o));
}
