//! Fuzzes the CBS parser and expander: any UTF-8 input must parse and expand in every mode
//! without panicking, within the output bound and the warning cap.
#![no_main]

use ccv3_cbs::{
    Context, Limits, Message, Mode, Registry, Role, Template, Timestamp, Variables, MAX_WARNINGS,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let limits = Limits {
        max_output: 64 << 10,
        max_work: 1 << 20,
        max_steps: 100_000,
        ..Limits::default()
    };
    let ctx = Context::new()
        .with_char_name("A")
        .with_user_name("U")
        .with_description("{{char}} {{description}}")
        .with_original("{{original}}")
        .with_seed(u64::from(data.first().copied().unwrap_or(0)))
        .with_now(Timestamp::utc(1_000_000))
        .with_message(Message::new(Role::User, "U", "hi").at(0));
    let t = Template::parse_with(src, &limits);
    for mode in [Mode::Prompt, Mode::Display, Mode::LoreScan] {
        let mut vars = Variables::new();
        let out = t.expand_with(Registry::standard_ref(), &limits, &ctx, &mut vars, mode);
        assert!(out.text.len() <= limits.max_output);
        assert!(out.warnings.len() <= MAX_WARNINGS + 1);
    }
    // With no macros registered, expansion gives the source back.
    let same = t.expand_with(&Registry::empty(), &Limits::default(), &ctx, &mut Variables::new(), Mode::Prompt);
    if src.len() < Limits::default().max_output {
        assert_eq!(same.text, src);
    }
});
