//! Rules of the CBS grammar and the spec set, one test per rule.

use ccv3_cbs::{
    expand, Context, Expansion, Family, Limits, Message, Mode, Registry, Role, Template, Timestamp,
    Variables, Warning,
};

fn ctx() -> Context {
    Context::new()
        .with_char_name("Alice")
        .with_user_name("Bob")
        .with_seed(1234)
}

fn run(t: &str, mode: Mode) -> String {
    Template::parse(t)
        .expand(&ctx(), &mut Variables::new(), mode)
        .text
}

#[test]
fn spec_cbs_char_uses_nickname_else_name() {
    assert_eq!(expand("{{char}}", &ctx()), "Alice");
    let nick = ctx().with_nickname("Ali");
    assert_eq!(expand("{{char}}", &nick), "Ali");
    let empty_nick = ctx().with_nickname("");
    assert_eq!(expand("{{char}}", &empty_nick), "Alice");
}

#[test]
fn spec_cbs_char_markers_angle_char_and_bot() {
    assert_eq!(
        expand("<char>/<bot>/<CHAR>/<Bot>", &ctx()),
        "Alice/Alice/Alice/Alice"
    );
}

#[test]
fn spec_cbs_user_is_display_name() {
    assert_eq!(expand("{{user}} <USER>", &ctx()), "Bob Bob");
}

#[test]
fn spec_cbs_names_case_insensitive() {
    assert_eq!(
        expand("{{CHAR}} {{User}} {{ReVeRsE:ab}}", &ctx()),
        "Alice Bob ba"
    );
    assert_eq!(expand("{{HIDDEN_KEY:x}}{{hiddenKey:x}}", &ctx()), "");
}

#[test]
fn spec_cbs_unknown_macro_stays_text() {
    assert_eq!(expand("a {{nope}} b", &ctx()), "a {{nope}} b");
    assert_eq!(expand("{{nope::x::y}}", &ctx()), "{{nope::x::y}}");
    assert_eq!(expand("{{ spaced out }}", &ctx()), "{{ spaced out }}");
    assert_eq!(expand("{{}}", &ctx()), "{{}}");
    // Nested known macros inside an unknown one are expanded.
    assert_eq!(expand("{{nope::{{user}}}}", &ctx()), "{{nope::Bob}}");
}

#[test]
fn spec_cbs_unclosed_braces_stay_text() {
    for t in [
        "{{",
        "{{char",
        "a {{user b",
        "{{{{",
        "}}",
        "{{char}",
        "{char}}",
        "{{a::{{b",
    ] {
        assert_eq!(expand(t, &ctx()), t, "{t}");
    }
    assert_eq!(expand("{{ {{char}}", &ctx()), "{{ Alice");
}

#[test]
fn spec_cbs_triple_braces_keep_outer_brace() {
    assert_eq!(expand("{{{char}}}", &ctx()), "{Alice}");
}

#[test]
fn spec_cbs_nested_inner_expands_first() {
    assert_eq!(expand("{{reverse:{{user}}}}", &ctx()), "boB");
    assert_eq!(
        expand("{{setvar::n::{{user}}}}{{getvar::n}}", &ctx()),
        "Bob"
    );
}

#[test]
fn spec_cbs_random_picks_one_of_the_values() {
    for seed in 0..50 {
        let c = ctx().with_seed(seed);
        let v = expand("{{random:Hello,Hi,Hey}}", &c);
        assert!(["Hello", "Hi", "Hey"].contains(&v.as_str()), "{v}");
        let v = expand("{{random::a::b}}", &c);
        assert!(["a", "b"].contains(&v.as_str()), "{v}");
    }
}

#[test]
fn spec_cbs_random_covers_all_values() {
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..200 {
        seen.insert(expand("{{random:a,b,c}}", &ctx().with_seed(seed)));
    }
    assert_eq!(seen.len(), 3);
}

#[test]
fn spec_cbs_random_reproducible_for_same_seed_and_nonce() {
    let t = "{{random:a,b,c,d,e,f}}{{random:a,b,c,d,e,f}}{{roll:100}}";
    assert_eq!(expand(t, &ctx()), expand(t, &ctx()));
    let differs = (1..20).any(|n| expand(t, &ctx().with_nonce(n)) != expand(t, &ctx()));
    assert!(differs);
}

#[test]
fn spec_cbs_escaped_comma() {
    assert_eq!(expand(r"{{random:a\,b}}", &ctx()), "a,b");
    assert_eq!(expand(r"{{pick::x\,y}}", &ctx()), "x,y");
    for seed in 0..30 {
        let v = expand(r"{{random:1\,000,2\,000}}", &ctx().with_seed(seed));
        assert!(v == "1,000" || v == "2,000", "{v}");
    }
}

#[test]
fn spec_cbs_pick_same_for_same_prompt() {
    let t = "{{pick:a,b,c,d,e,f,g,h}} {{pick::a,b,c,d,e,f,g,h}}";
    let first = expand(t, &ctx());
    for _ in 0..5 {
        assert_eq!(expand(t, &ctx()), first);
        // The random stream (nonce) does not move pick.
        assert_eq!(expand(t, &ctx().with_nonce(99)), first);
    }
    // Text before a pick that does not move it keeps the choice: seeded by place.
    let a = Template::parse("{{pick:a,b,c,d,e,f,g,h}}");
    let mut v = Variables::new();
    let x = a.expand(&ctx(), &mut v, Mode::Prompt).text;
    let y = a.expand(&ctx(), &mut v, Mode::Prompt).text;
    assert_eq!(x, y);
    // Different chats (seeds) eventually choose differently.
    let differs = (0..20).any(|s| expand(t, &ctx().with_seed(s)) != first);
    assert!(differs);
}

#[test]
fn spec_cbs_pick_double_colon_form() {
    let v = expand("{{pick::Hello,Hi,Hey}}", &ctx());
    assert!(["Hello", "Hi", "Hey"].contains(&v.as_str()), "{v}");
}

#[test]
fn spec_cbs_roll_between_one_and_n() {
    for seed in 0..200 {
        let c = ctx().with_seed(seed);
        let n: u64 = expand("{{roll:6}}", &c).parse().unwrap();
        assert!((1..=6).contains(&n));
    }
    assert_eq!(expand("{{roll:1}}", &ctx()), "1");
}

#[test]
fn spec_cbs_roll_d_prefix_any_case() {
    for t in ["{{roll:d6}}", "{{roll:D6}}", "{{roll::d6}}", "{{ROLL:D6}}"] {
        for seed in 0..50 {
            let n: u64 = expand(t, &ctx().with_seed(seed)).parse().unwrap();
            assert!((1..=6).contains(&n), "{t}");
        }
    }
}

#[test]
fn spec_cbs_roll_huge_sides_no_overflow() {
    let v: u64 = expand("{{roll:18446744073709551615}}", &ctx())
        .parse()
        .unwrap();
    assert!(v >= 1);
    assert_eq!(expand("{{roll:0}}", &ctx()), "{{roll:0}}");
}

#[test]
fn spec_cbs_comment_slash_slash_always_empty() {
    for mode in [Mode::Prompt, Mode::Display, Mode::LoreScan] {
        assert_eq!(run("a{{// secret}}b", mode), "ab");
        assert_eq!(run("a{{//secret: x}}b", mode), "ab");
    }
}

#[test]
fn spec_cbs_hidden_key_empty_in_prompt_visible_in_lore_scan() {
    assert_eq!(run("x{{hidden_key:dragon}}y", Mode::Prompt), "xy");
    assert_eq!(run("x{{hidden_key:dragon}}y", Mode::Display), "xy");
    assert_eq!(run("x{{hidden_key:dragon}}y", Mode::LoreScan), "xdragony");
}

#[test]
fn spec_cbs_comment_empty_in_prompt_shown_in_display() {
    assert_eq!(run("a{{comment: note}}b", Mode::Prompt), "ab");
    assert_eq!(run("a{{comment: note}}b", Mode::LoreScan), "ab");
    assert_eq!(
        run("a{{comment: <b>note</b>}}b", Mode::Display),
        "a<span class=\"cbs-comment\">&lt;b&gt;note&lt;/b&gt;</span>b"
    );
    let custom = ctx().with_comment_renderer(|t| format!("[{t}]"));
    let out =
        Template::parse("{{comment:hi}}").expand(&custom, &mut Variables::new(), Mode::Display);
    assert_eq!(out.text, "[hi]");
}

#[test]
fn spec_cbs_reverse_reverses_argument_only() {
    assert_eq!(expand("{{reverse:Hello}}", &ctx()), "olleH");
    assert_eq!(expand("{{reverse::héllo}}", &ctx()), "olléh");
    assert_eq!(expand("{{reverse:a:b}}", &ctx()), "b:a");
}

#[test]
fn spec_cbs_added_macros_start_and_end_with_braces() {
    let reg = Registry::standard();
    for name in reg.names() {
        let is_marker = name.starts_with('<') && name.ends_with('>');
        assert!(
            !name.is_empty() && (is_marker || !name.contains('}')),
            "{name}"
        );
    }
}

#[test]
fn v2_cbs_original_is_app_prompt_or_empty() {
    let c = ctx().with_original("Main prompt.");
    assert_eq!(expand("{{original}} more", &c), "Main prompt. more");
    assert_eq!(expand("[{{original}}]", &ctx()), "[]");
}

#[test]
fn registry_spec_only_leaves_families_out() {
    let reg = Registry::spec_only();
    let out = Template::parse("{{char}} {{getvar::x}} {{time}} {{#if 1}}y{{/if}} <user>")
        .expand_with(
            &reg,
            &Limits::default(),
            &ctx(),
            &mut Variables::new(),
            Mode::Prompt,
        );
    assert_eq!(
        out.text,
        "Alice {{getvar::x}} {{time}} {{#if 1}}y{{/if}} <user>"
    );
}

#[test]
fn registry_remove_family_and_register_custom() {
    let mut reg = Registry::standard();
    reg.remove_family(Family::Time);
    assert!(!reg.contains("isodate"));
    assert!(reg.contains("char"));
    reg.register("greet", |c| Some(format!("hello {}", c.arg(0))));
    assert!(reg.remove("reverse"));
    let c = ctx().with_now(Timestamp::utc(0));
    let out = Template::parse("{{isodate}} {{greet::you}} {{reverse:ab}}").expand_with(
        &reg,
        &Limits::default(),
        &c,
        &mut Variables::new(),
        Mode::Prompt,
    );
    assert_eq!(out.text, "{{isodate}} hello you {{reverse:ab}}");
    reg.add_family(Family::Time);
    assert!(reg.contains("isodate"));
}

#[test]
fn argument_styles_all_reach_the_handler() {
    let t = "{{setvar::a::1}}{{setvar:b:2}}{{setvar c 3}}{{getvar::a}}{{getvar:b}}{{getvar c}}";
    assert_eq!(expand(t, &ctx()), "123");
}

#[test]
fn separator_from_nested_macro_does_not_split() {
    let c = ctx().with_user_name("x::y");
    assert_eq!(expand("{{setvar::v::{{user}}}}{{getvar::v}}", &c), "x::y");
    assert_eq!(expand("{{equal::{{user}}::x::y}}", &c), "0");
}

#[test]
fn chat_family_reads_messages() {
    let c = ctx()
        .with_message(Message::new(Role::User, "Bob", "one"))
        .with_message(Message::new(Role::Char, "Alice", "two"));
    assert_eq!(
        expand(
            "{{lastMessage}}|{{lastUserMessage}}|{{lastCharMessage}}|{{lastMessageId}}",
            &c
        ),
        "two|one|two|1"
    );
}

#[test]
fn character_field_recursion_is_bounded() {
    let c = ctx().with_description("d{{description}}");
    let out = Template::parse("{{description}}").expand(&c, &mut Variables::new(), Mode::Prompt);
    assert_eq!(out.text, "ddddd{{description}}");
    assert!(out
        .warnings
        .iter()
        .any(|w| matches!(w, Warning::Recursion { .. })));
}

#[test]
fn trim_removes_surrounding_newlines_only() {
    assert_eq!(expand("a \n{{trim}}\n b", &ctx()), "a  b");
}

#[test]
fn blocks_nest_and_else_is_optional() {
    let t = "{{#if 1}}A{{#if 0}}B{{:else}}C{{/if}}D{{/if}}";
    assert_eq!(expand(t, &ctx()), "ACD");
    assert_eq!(expand("{{#if 0}}A{{/if}}", &ctx()), "");
    assert_eq!(expand("x{{/if}}y{{:else}}", &ctx()), "x{{/if}}y{{:else}}");
}

#[test]
fn each_bounded_by_limit_with_warning() {
    let limits = Limits {
        max_each_items: 3,
        ..Limits::default()
    };
    let out = Template::parse("{{#each [1,2,3,4,5] as n}}{{slot::n}}{{/each}}").expand_with(
        Registry::standard_ref(),
        &limits,
        &ctx(),
        &mut Variables::new(),
        Mode::Prompt,
    );
    assert_eq!(out.text, "123");
    assert!(matches!(
        out.warnings[0],
        Warning::EachItems {
            items: 5,
            limit: 3,
            ..
        }
    ));
}

#[test]
fn variables_state_round_trips_through_serde() {
    let mut vars = Variables::new();
    Template::parse("{{setvar::a::1}}{{setglobalvar::g::2}}").expand(
        &ctx(),
        &mut vars,
        Mode::Prompt,
    );
    let json = serde_json::to_string(&vars).unwrap();
    assert_eq!(json, r#"{"local":{"a":"1"},"global":{"g":"2"}}"#);
    let back: Variables = serde_json::from_str(&json).unwrap();
    assert_eq!(back, vars);
    let empty: Variables = serde_json::from_str("{}").unwrap();
    assert_eq!(empty, Variables::new());
}

#[test]
fn output_limit_stops_growth_and_warns() {
    let limits = Limits {
        max_output: 10,
        ..Limits::default()
    };
    let out = Template::parse("{{char}}{{char}}{{char}}{{char}}").expand_with(
        Registry::standard_ref(),
        &limits,
        &ctx(),
        &mut Variables::new(),
        Mode::Prompt,
    );
    assert_eq!(out.text, "AliceAlice");
    assert!(matches!(out.warnings[0], Warning::Output { limit: 10, .. }));
}

#[test]
fn variable_limits_cut_long_values() {
    let limits = Limits {
        max_variable_len: 4,
        max_variables: 1,
        ..Limits::default()
    };
    let mut vars = Variables::new();
    let out = Template::parse("{{setvar::a::123456}}{{setvar::b::1}}{{getvar::a}}").expand_with(
        Registry::standard_ref(),
        &limits,
        &ctx(),
        &mut vars,
        Mode::Prompt,
    );
    assert_eq!(out.text, "1234");
    assert_eq!(vars.local.len(), 1);
    assert_eq!(out.warnings.len(), 2);
}

#[test]
fn depth_limit_keeps_deep_nesting_as_text() {
    let limits = Limits {
        max_depth: 3,
        ..Limits::default()
    };
    let t = Template::parse_with("{{reverse:{{reverse:{{reverse:{{user}}}}}}}}", &limits);
    assert!(matches!(t.warnings()[0], Warning::Depth { .. }));
    let deep = "{{".repeat(100_000);
    let t = Template::parse(&deep);
    assert_eq!(
        t.expand(&ctx(), &mut Variables::new(), Mode::Prompt).text,
        deep
    );
}

#[test]
fn max_depth_is_capped_so_deep_templates_cannot_overflow_the_stack() {
    let limits = Limits {
        max_depth: usize::MAX,
        max_recursion: 8,
        ..Limits::default()
    };
    let deep = format!("{}x{}", "{{reverse:".repeat(5000), "}}".repeat(5000));
    // A field nesting almost to the cap that expands itself at the bottom: the worst case
    // of parse depth times field recursion.
    let field = format!(
        "{}x{{{{description}}}}{}",
        "{{reverse:".repeat(Limits::DEPTH_CAP - 2),
        "}}".repeat(Limits::DEPTH_CAP - 2)
    );
    let c = ctx().with_description(field);
    let t = Template::parse_with(&format!("{deep}{{{{description}}}}"), &limits);
    // Runs on a test thread (2 MiB stack by default).
    let out = t.expand_with(
        Registry::standard_ref(),
        &limits,
        &c,
        &mut Variables::new(),
        Mode::Prompt,
    );
    assert!(out
        .warnings
        .iter()
        .any(|w| matches!(w, Warning::Recursion { .. })));
    assert!(out.text.contains('x'));
    assert!(out
        .warnings
        .iter()
        .any(|w| matches!(w, Warning::Depth { .. })));
}

#[test]
fn public_types_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Template>();
    check::<Registry>();
    check::<Context>();
    check::<Variables>();
    check::<Expansion>();
    check::<Limits>();
}

#[test]
fn pick_in_nested_field_differs_from_top_level_place() {
    // Same offset (0) at top level and inside the field: the field's hash salts the seed.
    let choices = "{{pick::a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p}}";
    let differs = (0..20).any(|s| {
        let c = ctx().with_seed(s).with_description(choices);
        let top = expand(choices, &c);
        let nested = expand("{{description}}", &c);
        top != nested
    });
    assert!(differs);
}

#[test]
fn every_standard_macro_has_a_doc_example() {
    let mut examples = String::new();
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/src/families")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let mut in_code = false;
        for line in text.lines() {
            let Some(doc) = line.trim_start().strip_prefix("//!") else {
                continue;
            };
            if doc.trim_start().starts_with("```") {
                in_code = !in_code;
            } else if in_code {
                examples.push_str(&ccv3_cbs::normalize_name(doc));
                examples.push('\n');
            }
        }
    }
    let mut missing = Vec::new();
    let registry = Registry::standard();
    for name in registry.names() {
        let needle = if name.starts_with('<') {
            name.to_owned()
        } else {
            format!("{{{{{name}")
        };
        if !examples.contains(&needle) {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "no doc example for {missing:?}");
}
