//! Runs the regression corpus of hostile templates in `tests/data/regressions/` (small files)
//! plus large hostile templates generated here: each must parse and expand in every mode
//! without panicking, within the output bound and the warning cap, in bounded time.

use std::path::Path;
use std::time::{Duration, Instant};

use ccv3_cbs::{
    Context, Limits, Message, Mode, Registry, Role, Template, Timestamp, Variables, MAX_WARNINGS,
};

fn ctx() -> Context {
    Context::new()
        .with_char_name("A")
        .with_user_name("U")
        .with_description("{{char}} {{description}}")
        .with_personality("{{personality}}{{personality}}")
        .with_original("{{original}}")
        .with_now(Timestamp::utc(1_000_000))
        .with_message(Message::new(Role::User, "U", "hi").at(0))
}

fn check(name: &str, src: &str) {
    let limits = Limits::default();
    let start = Instant::now();
    let t = Template::parse(src);
    for mode in [Mode::Prompt, Mode::Display, Mode::LoreScan] {
        let mut vars = Variables::new();
        let out = t.expand_with(Registry::standard_ref(), &limits, &ctx(), &mut vars, mode);
        assert!(out.text.len() <= limits.max_output, "{name}");
        assert!(out.warnings.len() <= MAX_WARNINGS + 1, "{name}");
        assert!(vars.local.len() <= limits.max_variables, "{name}");
        assert!(
            vars.local
                .values()
                .all(|v| v.len() <= limits.max_variable_len),
            "{name}"
        );
    }
    let took = start.elapsed();
    assert!(took < Duration::from_secs(30), "{name} took {took:?}");
}

#[test]
fn regression_corpus_expands_within_bounds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 20);
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        check(
            &file.display().to_string(),
            &String::from_utf8_lossy(&bytes),
        );
    }
}

#[test]
fn large_generated_hostile_templates_expand_within_bounds() {
    let list = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let cases: Vec<(&str, String)> = vec![
        ("deep open braces", "{{".repeat(100_000)),
        ("deep close braces", "}}".repeat(100_000)),
        (
            "deep nesting",
            format!("{}x{}", "{{reverse:".repeat(20_000), "}}".repeat(20_000)),
        ),
        ("unclosed blocks", "{{#if 1}}".repeat(20_000)),
        (
            "nested each explosion",
            format!(
                "{}{{{{slot::a}}}}x{}",
                format!("{{{{#each [{}] as a}}}}", list(1000)).repeat(4),
                "{{/each}}".repeat(4)
            ),
        ),
        (
            "variable doubling in a loop",
            format!(
                "{{{{setvar::x::ab}}}}{{{{#each [{}] as i}}}}{{{{setvar::x::{{{{getvar::x}}}}{{{{getvar::x}}}}}}}}{{{{/each}}}}",
                list(1000)
            ),
        ),
        (
            "many variables",
            (0..20_000)
                .map(|i| format!("{{{{setvar::v{i}::{i}}}}}"))
                .collect(),
        ),
        (
            "huge each list",
            format!("{{{{#each [{}] as x}}}}{{{{slot::x}}}}{{{{/each}}}}", list(100_000)),
        ),
        ("field recursion", "{{description}}{{personality}}".repeat(5_000)),
        ("trim storm", "\n\n{{trim}}\n\n".repeat(20_000)),
        ("comment storm", "{{// {{setvar::x::1}}}}".repeat(20_000)),
    ];
    for (name, src) in cases {
        check(name, &src);
    }
}
