//! Fuzzes CBS over a whole prompt: the input, cut on NUL bytes, is many texts (card fields,
//! entries, keys) expanded in turn, four rounds, with one shared `Budget` and one set of
//! variables. Together they never pass the budget's output or variable bytes (issue 12: the
//! limits hold per prompt, not per expansion), and nothing panics.
#![no_main]

use ccv3_cbs::{
    Budget, BudgetLimits, Context, Limits, Message, Mode, Registry, Role, Template, Timestamp,
    Variables, MAX_WARNINGS,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let texts: Vec<&str> = src.split('\0').take(64).collect();
    // Small bounds keep a run fast (the budget, not each text, is what is under test).
    let limits = Limits {
        max_output: 32 << 10,
        max_work: 256 << 10,
        max_steps: 20_000,
        ..Limits::default()
    };
    let bounds = BudgetLimits {
        max_output: 64 << 10,
        max_work: 1 << 20,
        max_steps: 80_000,
        max_variable_bytes: 16 << 10,
    };
    let ctx = Context::new()
        .with_char_name("A")
        .with_user_name("U")
        .with_description(texts.first().copied().unwrap_or_default())
        .with_personality(texts.get(1).copied().unwrap_or_default())
        .with_scenario(texts.get(2).copied().unwrap_or_default())
        .with_seed(u64::from(data.first().copied().unwrap_or(0)))
        .with_now(Timestamp::utc(1_000_000))
        .with_message(Message::new(Role::User, "U", "hi").at(0));
    let mut budget = Budget::new(bounds.clone());
    let mut vars = Variables::new();
    let mut total = 0usize;
    let templates: Vec<Template> = texts
        .iter()
        .map(|t| Template::parse_with(t, &limits))
        .collect();
    for round in 0..4 {
        for (i, template) in templates.iter().enumerate() {
            let mode = match (round + i) % 3 {
                0 => Mode::Prompt,
                1 => Mode::LoreScan,
                _ => Mode::Display,
            };
            let out = template.expand_in(
                Registry::standard_ref(),
                &limits,
                &mut budget,
                &ctx,
                &mut vars,
                mode,
            );
            assert!(out.text.len() <= limits.max_output);
            assert!(out.warnings.len() <= MAX_WARNINGS + 1);
            total += out.text.len();
        }
    }
    assert!(total <= bounds.max_output, "{total}");
    assert_eq!(total, budget.output());
    let held: usize = vars
        .local
        .iter()
        .chain(&vars.global)
        .map(|(k, v)| k.len() + v.len())
        .sum();
    assert!(held <= bounds.max_variable_bytes, "{held}");
});
