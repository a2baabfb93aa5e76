//! Runs every data-driven case in `tests/data/cbs/*.json`.
//!
//! Each file is a JSON array of cases:
//! `{ "name", "template", "context"?: {...}, "vars"?: Variables, "mode"?: "prompt" | "display" |
//! "lorescan", "expect"?: text, "expect_one_of"?: [texts], "expect_vars"?: Variables }`.
//! Context keys: `char`, `nickname`, `user`, `description`, `personality`, `scenario`,
//! `persona`, `mes_examples`, `original`, `seed`, `nonce`, `now` (unix seconds),
//! `utc_offset` (minutes), `greeting_index`, `messages` (`[{role: user|char|system, name,
//! content, time?}]`).

use std::path::Path;

use ccv3_cbs::{Context, Message, Mode, Role, Template, Timestamp, Variables};
use serde::Deserialize;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct Ctx {
    char: String,
    nickname: String,
    user: String,
    description: String,
    personality: String,
    scenario: String,
    persona: String,
    mes_examples: String,
    original: String,
    seed: u64,
    nonce: u64,
    now: Option<i64>,
    utc_offset: i32,
    greeting_index: Option<usize>,
    messages: Vec<Msg>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Msg {
    role: String,
    #[serde(default)]
    name: String,
    content: String,
    #[serde(default)]
    time: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    template: String,
    #[serde(default)]
    context: Ctx,
    #[serde(default)]
    vars: Variables,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    expect: Option<String>,
    #[serde(default)]
    expect_one_of: Option<Vec<String>>,
    #[serde(default)]
    expect_vars: Option<Variables>,
}

fn context(c: &Ctx) -> Context {
    let mut ctx = Context::new()
        .with_char_name(&c.char)
        .with_nickname(&c.nickname)
        .with_user_name(&c.user)
        .with_description(&c.description)
        .with_personality(&c.personality)
        .with_scenario(&c.scenario)
        .with_persona(&c.persona)
        .with_mes_examples(&c.mes_examples)
        .with_original(&c.original)
        .with_seed(c.seed)
        .with_nonce(c.nonce);
    if let Some(now) = c.now {
        ctx = ctx.with_now(Timestamp::utc(now).with_offset(c.utc_offset));
    }
    if let Some(i) = c.greeting_index {
        ctx = ctx.with_greeting_index(i);
    }
    for m in &c.messages {
        let role = match m.role.as_str() {
            "user" => Role::User,
            "char" => Role::Char,
            "system" => Role::System,
            other => panic!("unknown role {other}"),
        };
        let mut msg = Message::new(role, &m.name, &m.content);
        msg.time = m.time;
        ctx = ctx.with_message(msg);
    }
    ctx
}

#[test]
fn data_driven_cbs_cases() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cbs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    let mut count = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let cases: Vec<Case> =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for case in cases {
            count += 1;
            let mode = match case.mode.as_deref() {
                None | Some("prompt") => Mode::Prompt,
                Some("display") => Mode::Display,
                Some("lorescan") => Mode::LoreScan,
                Some(other) => panic!("{}: unknown mode {other}", case.name),
            };
            let mut vars = case.vars.clone();
            let out =
                Template::parse(&case.template).expand(&context(&case.context), &mut vars, mode);
            let where_ = format!(
                "{} / {}",
                file.file_name().unwrap().to_string_lossy(),
                case.name
            );
            if let Some(exp) = &case.expect {
                if &out.text != exp {
                    failures.push(format!("{where_}: expected {exp:?}, got {:?}", out.text));
                }
            }
            if let Some(one_of) = &case.expect_one_of {
                if !one_of.contains(&out.text) {
                    failures.push(format!(
                        "{where_}: expected one of {one_of:?}, got {:?}",
                        out.text
                    ));
                }
            }
            if let Some(ev) = &case.expect_vars {
                if ev != &vars {
                    failures.push(format!("{where_}: expected vars {ev:?}, got {vars:?}"));
                }
            }
            assert!(
                case.expect.is_some() || case.expect_one_of.is_some() || case.expect_vars.is_some(),
                "{where_}: case checks nothing"
            );
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
