//! RisuAI's CBS functions and the dialects (issue 17). Each test names its source: the
//! function's description and usage line in RisuAI's `src/ts/cbs.ts` (kwaroran/RisuAI), whose
//! behaviour these tests restate; expected values were written from that documentation and
//! JavaScript's number and JSON rules.

use ccv3_cbs::{
    Budget, BudgetLimits, Context, Dialect, Limits, Message, Mode, Registry, Role, Template,
    Timestamp, Variables,
};

fn ctx() -> Context {
    Context::new()
        .with_char_name("Alice")
        .with_user_name("Bob")
        .with_seed(7)
}

fn run_in(d: Dialect, text: &str) -> String {
    Template::parse(text)
        .expand_with(
            Registry::dialect_ref(d),
            &Limits::default(),
            &ctx(),
            &mut Variables::new(),
            Mode::Prompt,
        )
        .text
}

fn risu(text: &str) -> String {
    run_in(Dialect::Risu, text)
}

#[test]
fn risu_cbs_ts_usage_lines_give_their_documented_results() {
    // Each pair: the usage line of cbs.ts and the result its description states.
    let cases = [
        ("{{replace::Hello World::o::0}}", "Hell0 W0rld"),
        (
            "{{split::apple,banana,cherry::,}}",
            r#"["apple","banana","cherry"]"#,
        ),
        (r#"{{join::["apple","banana"]::, }}"#, "apple, banana"),
        (r#"{{spread::["a","b","c"]}}"#, "a::b::c"),
        ("{{trim::  hello world  }}", "hello world"),
        ("{{length::Hello}}", "5"),
        (r#"{{arraylength::["a","b","c"]}}"#, "3"),
        ("{{lower::Hello WORLD}}", "hello world"),
        ("{{upper::Hello world}}", "HELLO WORLD"),
        ("{{capitalize::hello world}}", "Hello world"),
        ("{{round::3.7}}", "4"),
        ("{{floor::3.9}}", "3"),
        ("{{ceil::3.1}}", "4"),
        ("{{abs::-5}}", "5"),
        ("{{remaind::10::3}}", "1"),
        ("{{tonumber::abc123.45def}}", "123.45"),
        ("{{pow::2::3}}", "8"),
        (r#"{{arrayelement::["a","b","c"]::1}}"#, "b"),
        (r#"{{dictelement::{"name":"John"}::name}}"#, "John"),
        (r#"{{objectassert::{"a":1}::b::2}}"#, r#"{"a":1,"b":"2"}"#),
        (r#"{{arrayshift::["a","b","c"]}}"#, r#"["b","c"]"#),
        (r#"{{arraypop::["a","b","c"]}}"#, r#"["a","b"]"#),
        (r#"{{arraypush::["a","b"]::c}}"#, r#"["a","b","c"]"#),
        (
            r#"{{arraysplice::["a","b","c"]::1::1::x}}"#,
            r#"["a","x","c"]"#,
        ),
        ("{{makearray::a::b::c}}", r#"["a","b","c"]"#),
        (
            "{{makedict::name=John::age=25}}",
            r#"{"name":"John","age":"25"}"#,
        ),
        ("{{range::[5]}}", r#"["0","1","2","3","4"]"#),
        ("{{range::[2,8,2]}}", r#"["2","4","6"]"#),
        (r#"{{filter::["a","","a"]::unique}}"#, r#"["a",""]"#),
        (r#"{{filter::["a","","a"]::nonempty}}"#, r#"["a","a"]"#),
        (r#"{{filter::["a","","a"]}}"#, r#"["a"]"#),
        ("{{all::1::1::1}}", "1"),
        ("{{any::0::1::0}}", "1"),
        ("{{min::5::2::8}}", "2"),
        ("{{max::5::2::8}}", "8"),
        ("{{sum::1::2::3}}", "6"),
        ("{{average::2::4::6}}", "4"),
        ("{{fixnum::3.14159::2}}", "3.14"),
        ("{{unicodeencode::A}}", "65"),
        ("{{unicodedecode::65}}", "A"),
        ("{{u::41}}", "A"),
        ("{{ue::41}}", "A"),
        ("{{fromhex::FF}}", "255"),
        ("{{tohex::255}}", "ff"),
        ("{{iserror::Error: failed}}", "1"),
        ("{{startswith::Hello World::Hello}}", "1"),
        ("{{endswith::Hello World::World}}", "1"),
        ("{{contains::Hello World::lo Wo}}", "1"),
        ("{{tex::E=mc^2}}", "$$E=mc^2$$"),
        ("{{cbr}}", r"\n"),
        ("{{cbr::3}}", r"\n\n\n"),
    ];
    for (usage, want) in cases {
        assert_eq!(risu(usage), want, "{usage}");
    }
}

#[test]
fn risu_cbs_ts_numbers_print_like_javascript() {
    // cbs.ts converts with Number() and prints with toString()/toFixed().
    assert_eq!(risu("{{pow::2::0.5}}"), "1.4142135623730951");
    assert_eq!(risu("{{pow::10::21}}"), "1e+21");
    assert_eq!(risu("{{pow::2::-1}}"), "0.5");
    assert_eq!(risu("{{abs::x}}"), "NaN");
    assert_eq!(risu("{{round::-2.5}}"), "-2");
    assert_eq!(risu("{{fixnum::2.5::0}}"), "3");
    assert_eq!(risu("{{fixnum::1.005::2}}"), "1.00");
    assert_eq!(risu("{{fixnum::1::101}}"), "{{fixnum::1::101}}");
    assert_eq!(risu("{{remaind::-7::3}}"), "-1");
    assert_eq!(risu("{{average::[]}}"), "NaN");
    assert_eq!(risu("{{min::[]}}"), "Infinity");
    assert_eq!(risu("{{sum::0x10::1}}"), "17");
    assert_eq!(risu("{{randint::1::x}}"), "NaN");
    // Values checked against Node.js's own Number, toFixed, toString(16) and UTF-16 strings.
    for (text, js) in [
        ("{{fixnum::1.45::1}}", "1.4"),
        ("{{fixnum::-2.5::0}}", "-3"),
        ("{{fixnum::0.000001::7}}", "0.0000010"),
        ("{{fixnum::1e20::2}}", "100000000000000000000.00"),
        ("{{pow::2::-1074}}", "5e-324"),
        ("{{pow::10::-7}}", "1e-7"),
        ("{{pow::1.1::2}}", "1.2100000000000002"),
        ("{{round::0.49999999999999994}}", "0"),
        ("{{tohex::-255.9}}", "-ff"),
        ("{{fromhex::fffffffffffffffffff}}", "7.555786372591432e+22"),
        (
            "{{tohex::123456789012345678901234567890}}",
            "18ee90ff6c373e00000000000",
        ),
        ("{{sum::0.1::0.2}}", "0.30000000000000004"),
        ("{{unicodeencode::😀::1}}", "56832"),
        ("{{length::😀a}}", "3"),
        ("{{range::[0,0.3,0.1]}}", r#"["0","0.1","0.2"]"#),
        ("{{xor::é}}", "PFY="),
    ] {
        assert_eq!(risu(text), js, "{text}");
    }
    let n: i64 = risu("{{randint::1::10}}").parse().unwrap();
    assert!((1..=10).contains(&n));
}

#[test]
fn risu_cbs_ts_hash_is_its_seeded_number() {
    // cbs.ts `hash`: pickHashRand(0, A) * 10^7 + 1, toFixed(0), padStart(7, '0').
    assert_eq!(risu("{{hash::hello}}"), "0121468");
    assert_eq!(risu("{{hash::}}"), "0000040");
    assert_eq!(
        risu("{{hash::a long text with 日本語 and more words to overflow the hash}}"),
        "4525296"
    );
}

#[test]
fn risu_cbs_ts_arrays_are_json_with_double_colons_escaped() {
    // parser.svelte.ts makeArray: `::` in items is written \u003A\u003A so the array never
    // splits the next macro's arguments; parseArray falls back to `§`.
    assert_eq!(risu("{{makearray::a§b}}"), r#"["a§b"]"#);
    assert_eq!(risu("{{arraylength::a§b§c}}"), "3");
    assert_eq!(risu("{{arraylength::}}"), "1");
    assert_eq!(
        risu(r#"{{arraypush::["x"]::{{spread::["a","b"]}}}}"#),
        r#"["x","a\\u003A\\u003Ab"]"#
    );
    assert_eq!(risu(r#"{{arrayelement::["a","b","c"]::-1}}"#), "c");
    assert_eq!(risu(r#"{{arrayelement::["a"]::5}}"#), "null");
    assert_eq!(risu(r#"{{arrayelement::[1,{"k":2}]::1}}"#), r#"{"k":2}"#);
    assert_eq!(
        risu(r#"{{arraysplice::["a","b","c"]::-1::5::x}}"#),
        r#"["a","b","x"]"#
    );
    assert_eq!(
        risu("{{makedict::a=1::bad::b=x=y}}"),
        r#"{"a":"1","b":"x=y"}"#
    );
    assert_eq!(risu(r#"{{join::[1,null,true]}}"#), "1,,true");
}

#[test]
fn risu_cbs_ts_missing_arguments_follow_javascript() {
    // args[0] missing: the JavaScript throws, RisuAI keeps the macro as text; a missing second
    // argument is `undefined`.
    assert_eq!(risu("{{lower}}"), "{{lower}}");
    assert_eq!(risu("{{contains::is undefined}}"), "1");
    assert_eq!(risu("{{split::a,b}}"), r#"["a,b"]"#);
    assert_eq!(risu("{{join::a§b}}"), "a,b");
    assert_eq!(risu("{{unicodeencode::A::9}}"), "NaN");
}

#[test]
fn risu_cbs_ts_arguments_are_not_trimmed() {
    // RisuAI splits on `::` and passes the pieces as they are.
    assert_eq!(risu("{{equal::a ::a}}"), "0");
    assert_eq!(risu("{{length:: a }}"), "3");
    // The standard set trims around separators (SillyTavern's rule).
    assert_eq!(run_in(Dialect::Auto, "{{equal::a ::a}}"), "1");
}

#[test]
fn risu_cbs_ts_shared_names_take_risu_meanings_in_the_risu_dialect() {
    // cbs.ts getvar -> getChatVar: `null` when unset; addvar adds Number()s.
    assert_eq!(risu("{{getvar::x}}"), "null");
    assert_eq!(risu("{{setvar::x::1}}{{addvar::x::2}}{{getvar::x}}"), "3");
    assert_eq!(risu("{{setvar::s::a}}{{addvar::s::b}}{{getvar::s}}"), "NaN");
    assert_eq!(risu("{{and::1::true}} {{or::0::1}} {{not::true}}"), "0 1 1");
    assert_eq!(risu("{{roll}} {{roll::x}} {{dice::d6}}"), "1 NaN 0");
    let r: f64 = risu("{{random}}").parse().unwrap();
    assert!((0.0..1.0).contains(&r));
    assert_eq!(risu("{{trim}}"), "{{trim}}");
    // SillyTavern's meanings in its own dialect.
    let st = |t: &str| run_in(Dialect::SillyTavern, t);
    assert_eq!(st("[{{getvar::x}}]"), "[]");
    assert_eq!(st("{{setvar::s::a}}{{addvar::s::b}}{{getvar::s}}"), "ab");
    assert_eq!(st("{{calc::1+1}}"), "{{calc::1+1}}");
    assert_eq!(st("{{incvar::n}}"), "1");
}

#[test]
fn risu_cbs_ts_time_functions_use_risu_formats() {
    // cbs.ts time: `${h}:${m}:${s}`; date: `${Y}-${M}-${D}`; date::FORMAT (dateTimeFormat).
    let ctx = ctx().with_now(Timestamp::utc(1_795_273_620).with_offset(120));
    let t = |s: &str| {
        Template::parse(s)
            .expand_with(
                Registry::dialect_ref(Dialect::Risu),
                &Limits::default(),
                &ctx,
                &mut Variables::new(),
                Mode::Prompt,
            )
            .text
    };
    assert_eq!(t("{{time}}"), "17:7:0");
    assert_eq!(t("{{date}}"), "2026-11-21");
    assert_eq!(t("{{isotime}} {{isodate}}"), "15:7:0 2026-11-21");
    assert_eq!(t("{{date::YYYY-MM-DD}}"), "2026-11-21");
    assert_eq!(t("{{date::HH:mm:ss::1640995200000}}"), "02:00:00");
    assert_eq!(t("{{datetimeformat::MMMM dddd}}"), "November Saturday");
    assert_eq!(t("{{unixtime}}"), "1795273620");
}

#[test]
fn risu_cbs_ts_chat_functions_outside_a_message() {
    let ctx = ctx()
        .with_message(Message::new(Role::User, "Bob", "hello"))
        .with_message(Message::new(Role::Char, "Alice", "hi"))
        .with_greeting_index(0);
    let t = |s: &str| {
        Template::parse(s)
            .expand_with(
                Registry::dialect_ref(Dialect::Risu),
                &Limits::default(),
                &ctx,
                &mut Variables::new(),
                Mode::Prompt,
            )
            .text
    };
    assert_eq!(t("{{chatindex}} {{role}} {{isfirstmsg}}"), "-1 null 0");
    assert_eq!(t("{{previouschatlog::1}}"), "hi");
    assert_eq!(t("{{history::role}}"), r#"["user: hello","char: hi"]"#);
    assert_eq!(t("{{firstmsgindex}}"), "-1");
    assert_eq!(t("{{lastcharmessage}} {{previoususerchat}}"), "hi hello");
}

#[test]
fn dialects_hold_their_applications_names() {
    let names = |d: Dialect| Registry::dialect_ref(d).names();
    assert!(names(Dialect::Risu).contains(&"arrayelement"));
    assert!(!names(Dialect::Risu).contains(&"incvar"));
    assert!(names(Dialect::SillyTavern).contains(&"incvar"));
    assert!(!names(Dialect::SillyTavern).contains(&"calc"));
    assert_eq!(
        names(Dialect::Spec).len(),
        Registry::spec_only().names().len()
    );
    for d in [Dialect::Risu, Dialect::SillyTavern, Dialect::Spec] {
        for n in [
            "char",
            "user",
            "random",
            "pick",
            "roll",
            "//",
            "hiddenkey",
            "comment",
            "reverse",
        ] {
            assert!(names(d).contains(&n), "{d}: {n}");
        }
    }
    // The spec set keeps the spec's meaning in every dialect.
    assert_eq!(risu("{{reverse::abc}}"), "cba");
}

#[test]
fn every_registered_macro_is_in_the_catalog() {
    // `ccv3 cbs --list` prints the catalog rows of the registry, so no macro can be missing.
    for d in Dialect::ALL {
        let reg = Registry::dialect_ref(d);
        let listed = reg.macros();
        for name in reg.names() {
            let found = listed.iter().any(|m| {
                std::iter::once(&m.name)
                    .chain(m.aliases)
                    .any(|n| ccv3_cbs::normalize_name(n) == name)
            });
            assert!(found, "{d}: {name} has no catalog row");
        }
        for m in &listed {
            assert!(!m.description.is_empty(), "{}", m.name);
            assert!(m.dialects.contains(d), "{d}: {}", m.name);
        }
    }
}

#[test]
fn puredisplay_keeps_its_body_unexpanded() {
    // cbs.ts `#puredisplay`: "displays content without any CBS processing"; the parser
    // escapes braces in it.
    assert_eq!(
        risu("{{#puredisplay}} {{user}} and {{#if 1}}x{{/if}} {{/puredisplay}}!"),
        r"\{\{user\}\} and \{\{#if 1\}\}x\{\{/if\}\}!"
    );
    assert_eq!(risu("{{#pure}}{{char}}{{/pure}}"), "{{char}}");
    assert_eq!(
        risu("{{#puredisplay}}never closed"),
        "{{#puredisplay}}never closed"
    );
}

fn bounded(text: &str) -> (String, Vec<&'static str>) {
    let limits = Limits {
        max_output: 1 << 16,
        ..Limits::default()
    };
    let out = Template::parse(text).expand_in(
        Registry::dialect_ref(Dialect::Risu),
        &limits,
        &mut Budget::new(BudgetLimits::default()),
        &ctx(),
        &mut Variables::new(),
        Mode::Prompt,
    );
    (out.text, out.warnings.iter().map(|w| w.kind()).collect())
}

#[test]
fn issue12_hostile_risu_functions_stay_within_the_limits() {
    // range with a step of 0 loops forever in RisuAI; here it stops at the output bound.
    let (text, w) = bounded("{{range::[0,1,0]}}");
    assert_eq!(text, "{{range::[0,1,0]}}");
    assert!(w.contains(&"output"), "{w:?}");
    let (text, w) = bounded("{{range::[1e12]}}");
    assert!(text.len() < 1 << 17 && !w.is_empty(), "{w:?}");
    // arrayassert with a far index would write a billion nulls.
    let (text, w) = bounded("{{arrayassert::[]::1000000000::x}}");
    assert_eq!(text, "{{arrayassert::[]::1000000000::x}}");
    assert!(w.contains(&"output"));
    let (_, w) = bounded(r#"{{objectassert::["a"]::4000000000::x}}"#);
    assert!(w.contains(&"output"));
    // Repetition and replacement that would pass the bound are refused.
    let (_, w) = bounded("{{cbr::1e15}}");
    assert!(w.contains(&"output"));
    let (_, w) = bounded(&format!(
        "{{{{replace::{}::a::{}}}}}",
        "a".repeat(4000),
        "b".repeat(4000)
    ));
    assert!(w.contains(&"output"));
    let (_, w) = bounded(&format!(
        "{{{{join::[{}]::{}}}}}",
        "1,".repeat(3000) + "1",
        "x".repeat(100)
    ));
    assert!(w.contains(&"output"));
    // Loops: nested #each over range lists multiply; the item cap and the step bound stop
    // them (cbs.ts `#each` over a `range` array).
    let (text, w) = bounded(
        "{{#each {{range::[5000]}} as a}}{{#each {{range::[5000]}} as b}}{{slot::b}}{{/each}}{{/each}}",
    );
    assert!(text.len() <= 1 << 16, "{}", text.len());
    assert!(w.contains(&"each-items"), "{w:?}");
    assert!(w.contains(&"budget") || w.contains(&"output"), "{w:?}");
    // String repetition inside a loop stays within the output bound as a whole.
    let (text, w) = bounded("{{#each {{range::[1000]}} as a}}{{cbr::60}}{{/each}}");
    assert!(text.len() <= 1 << 16 && w.contains(&"output"), "{w:?}");
    // pow and dice stay small or are refused.
    assert_eq!(bounded("{{pow::10::1e308}}").0, "Infinity");
    let (_, w) = bounded("{{dice::1e12d6}}");
    assert!(w.contains(&"argument"));
}

proptest::proptest! {
    /// Issue 12's contract for the new functions: any arguments give text, never a panic, in
    /// every dialect.
    #[test]
    fn risu_functions_never_panic(
        name in proptest::sample::select(Registry::dialect_ref(Dialect::Risu).names()),
        args in proptest::collection::vec(
            proptest::prop_oneof![
                "\\PC{0,12}",
                "-?[0-9]{1,25}(\\.[0-9]{1,5})?(e[+-]?[0-9]{1,3})?",
                "\\[[0-9,\" a-z]{0,20}\\]",
                "\\{\"[a-z]\":[0-9\"a-z]{1,4}\\}",
                proptest::sample::select(vec!["NaN".to_string(), "Infinity".into(), "-0".into(),
                    "4294967295".into(), "1e308".into(), "0x1F".into(), "".into()]),
            ],
            0..4,
        ),
    ) {
        let text = format!("{{{{{name}::{}}}}}", args.join("::"));
        let ctx = ctx().with_now(Timestamp::utc(-62_135_596_800))
            .with_message(Message::new(Role::User, "Bob", "hi").at(i64::MAX));
        for d in Dialect::ALL {
            let _ = Template::parse(&text).expand_with(
                Registry::dialect_ref(d), &Limits::default(), &ctx, &mut Variables::new(), Mode::Prompt);
        }
    }
}
