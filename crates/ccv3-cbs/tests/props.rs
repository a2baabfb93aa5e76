//! Property tests: expansion never panics, stays within the bounds, and leaves text alone.

use ccv3_cbs::{
    Context, Limits, Message, Mode, Registry, Role, Template, Timestamp, Variables, MAX_WARNINGS,
};
use proptest::prelude::*;

const PIECES: &[&str] = &[
    "{{",
    "}}",
    "{",
    "}",
    "::",
    ":",
    " ",
    "\n",
    "\\,",
    ",",
    "char",
    "user",
    "random",
    "pick",
    "roll",
    "d6",
    "2d6",
    "//",
    "?",
    "1+2",
    "(",
    ")",
    "^",
    "hidden_key",
    "comment",
    "reverse",
    "#if",
    "#if_pure",
    "#when",
    "#each",
    "/if",
    "/",
    ":else",
    "as x",
    "[1,2,3]",
    "slot::x",
    "setvar::v",
    "getvar::v",
    "addvar::v",
    "incvar::v",
    "calc::",
    "equal",
    "and",
    "not",
    "is",
    "trim",
    "newline",
    "original",
    "description",
    "lastMessage",
    "time",
    "idle_duration",
    "<user>",
    "<CHAR>",
    "<bot",
    "é",
    "日本",
    "🙂",
    "§",
    "x",
    "0",
    "1",
    "true",
    "keep",
    "var",
];

fn template() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(PIECES).prop_map(str::to_owned),
            1 => any::<String>(),
        ],
        0..60,
    )
    .prop_map(|v| v.concat())
}

fn ctx() -> Context {
    Context::new()
        .with_char_name("A")
        .with_user_name("U")
        .with_description("{{char}} {{description}} {{user}}")
        .with_original("orig {{original}}")
        .with_now(Timestamp::utc(1_000_000))
        .with_message(Message::new(Role::User, "U", "{{char}}").at(999_000))
}

fn small_limits() -> Limits {
    Limits {
        max_depth: 16,
        max_output: 4096,
        max_work: 64 << 10,
        max_steps: 20_000,
        max_each_items: 50,
        max_recursion: 3,
        max_variables: 20,
        max_variable_len: 512,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn expansion_never_panics_and_respects_output_bound(src in template(), seed in any::<u64>()) {
        let limits = small_limits();
        let t = Template::parse_with(&src, &limits);
        let c = ctx().with_seed(seed);
        for mode in [Mode::Prompt, Mode::Display, Mode::LoreScan] {
            let mut vars = Variables::new();
            let out = t.expand_with(Registry::standard_ref(), &limits, &c, &mut vars, mode);
            prop_assert!(out.text.len() <= limits.max_output);
            prop_assert!(out.warnings.len() <= MAX_WARNINGS + 1);
            prop_assert!(vars.local.len() <= limits.max_variables);
            prop_assert!(vars.local.values().all(|v| v.len() <= limits.max_variable_len));
        }
    }

    #[test]
    fn empty_registry_expansion_is_identity(src in template()) {
        let t = Template::parse(&src);
        let out = t.expand_with(&Registry::empty(), &Limits::default(), &ctx(), &mut Variables::new(), Mode::Prompt);
        prop_assert_eq!(out.text, src);
    }

    #[test]
    fn text_without_macros_is_unchanged(src in "[^{<]*") {
        let t = Template::parse(&src);
        prop_assert!(t.is_plain());
        let out = t.expand(&ctx(), &mut Variables::new(), Mode::Prompt);
        prop_assert_eq!(out.text, src);
    }

    #[test]
    fn pick_is_stable_for_same_seed(seed in any::<u64>(), n in 1usize..20) {
        let items: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        let src = format!("{{{{pick::{}}}}}", items.join(","));
        let t = Template::parse(&src);
        let c = ctx().with_seed(seed);
        let a = t.expand(&c, &mut Variables::new(), Mode::Prompt).text;
        let b = t.expand(&c.clone().with_nonce(seed ^ 1), &mut Variables::new(), Mode::Prompt).text;
        prop_assert_eq!(&a, &b);
        prop_assert!(items.contains(&a));
    }

    #[test]
    fn roll_stays_in_range(seed in any::<u64>(), n in 1u64..1_000_000) {
        let out = ccv3_cbs::expand(&format!("{{{{roll:d{n}}}}}"), &ctx().with_seed(seed));
        let v: u64 = out.parse().unwrap();
        prop_assert!((1..=n).contains(&v));
    }
}
