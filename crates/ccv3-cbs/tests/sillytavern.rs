//! Issue 17: SillyTavern's classic macros in the `sillytavern` dialect. Each test names its
//! source in SillyTavern 1.19.0: the macro definitions (`public/scripts/macros/definitions/
//! *.js`), the engine (`public/scripts/macros/engine/MacroEngine.js`, `MacroRegistry.js`),
//! `public/scripts/variables.js`, and its tests (`tests/frontend/MacroEngine.e2e.js`).
//! Written from their behaviour, not copied.

use ccv3_cbs::{
    Budget, BudgetLimits, Context, Dialect, Limits, Message, Mode, Registry, Role, Template,
    Timestamp, Variables,
};

/// 2026-11-21T15:07:09Z, a Saturday.
const NOW: i64 = 1_795_273_629;

fn ctx() -> Context {
    Context::new()
        .with_char_name("Character")
        .with_user_name("User")
        .with_now(Timestamp::utc(NOW))
}

fn run_with(text: &str, ctx: &Context, vars: &mut Variables) -> (String, Vec<&'static str>) {
    let out = Template::parse(text).expand_with(
        Registry::dialect_ref(Dialect::SillyTavern),
        &Limits::default(),
        ctx,
        vars,
        Mode::Prompt,
    );
    (out.text, out.warnings.iter().map(|w| w.kind()).collect())
}

fn st(text: &str) -> String {
    run_with(text, &ctx(), &mut Variables::new()).0
}

fn in_dialect(d: Dialect, text: &str) -> String {
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

#[test]
fn arity_errors_leave_the_macro_as_written() {
    // MacroRegistry.js executeMacro: a call outside minArgs..maxArgs throws, and
    // MacroEngine.js #resolveMacro returns the raw macro; MacroEngine.e2e.js "Arity errors".
    for text in [
        "Start {{char::extra}} end.",
        "Result: {{reverse}}",
        "Result: {{reverse::a::b}}",
        "{{setvar::x}}",
        "{{setvar::x::a::b}}",
        "{{getvar}}",
        "{{timeDiff::2023-01-01}}",
        "{{noop::x}}",
        "{{hasvar::a::b}}",
    ] {
        let (out, warnings) = run_with(text, &ctx(), &mut Variables::new());
        assert_eq!(out, text);
        assert!(warnings.contains(&"argument"), "{text}: {warnings:?}");
    }
    // Whitespace alone is no argument: `{{ char }}` is fine.
    assert_eq!(st("{{ char }}|{{getvar::}}"), "Character|");
    // Nested macros still expand inside the refused one.
    assert_eq!(
        st("Result: {{user Something {{char}}}}"),
        "Result: {{user Something Character}}"
    );
    // The legacy `name:text` and `name text` forms are one argument (MacroParser.js
    // `argumentAllowingColons`), so a two-argument macro refuses them.
    assert_eq!(st("{{setvar:x:1}}[{{getvar::x}}]"), "{{setvar:x:1}}[]");
    assert_eq!(st("{{setvar x 1}}"), "{{setvar x 1}}");
    // Other dialects keep their own, lenient reading.
    assert_eq!(
        in_dialect(Dialect::Auto, "{{setvar:x:1}}{{getvar::x}}"),
        "1"
    );
}

#[test]
fn legacy_colon_and_space_arguments_are_one() {
    // MacroEngine.e2e.js "Unnamed arguments".
    assert_eq!(st("Reversed: {{reverse:abc}}!"), "Reversed: cba!");
    assert_eq!(st("Reversed: {{reverse:abc::def}}!"), "Reversed: fed::cba!");
    assert_eq!(st("Reversed: {{reverse:abc:def}}!"), "Reversed: fed:cba!");
    assert_eq!(st("Values: {{reverse abc def}}!"), "Values: fed cba!");
    assert_eq!(st("Values: {{roll 1d1}}!"), "Values: 1!");
    // core-macros.js readSingleArgsRandomList: one argument holding `::` splits on it.
    for _ in 0..3 {
        let picked = st("{{random:a b::a b}}|{{pick:c d::c d}}");
        assert_eq!(picked, "a b|c d");
    }
}

#[test]
fn legacy_markers_and_time_offsets_are_rewritten() {
    // MacroEngine.js #registerCorePreProcessors; MacroEngine.e2e.js "Legacy compatibility".
    assert_eq!(st("Hello <USER>!"), "Hello User!");
    assert_eq!(
        st("Bot: <BOT>, Char: <CHAR>."),
        "Bot: Character, Char: Character."
    );
    assert_eq!(
        st("Group: <GROUP>, CharIfNotGroup: <CHARIFNOTGROUP>."),
        "Group: Character, CharIfNotGroup: Character."
    );
    assert_eq!(st("<group> <charIfNotGroup>"), "Character Character");
    // time-macros.js `time`: `UTC±N` is an offset in hours; `{{time_UTC±N}}` is the same.
    assert_eq!(st("Time: {{time_UTC+2}}"), "Time: 5:07 PM");
    assert_eq!(st("Time: {{time_UTC-10}}"), "Time: 5:07 AM");
    assert_eq!(st("{{time::UTC+2}} {{time::UTC-7}}"), "5:07 PM 8:07 AM");
    assert_eq!(st("{{time}} {{time::later}}"), "3:07 PM 3:07 PM");
    // Not the legacy pattern (`/{{time_(UTC[+-]\d+)}}/`): stays text.
    assert_eq!(
        st("{{time_UTC}} {{time_UTC+x}}"),
        "{{time_UTC}} {{time_UTC+x}}"
    );
    // The markers belong to SillyTavern: RisuAI does not read <GROUP>.
    assert_eq!(in_dialect(Dialect::Risu, "<GROUP>"), "<GROUP>");
    // The legacy trim (MacroEngine.js core:legacy-trim).
    assert_eq!(st("foo\n\n{{trim}}\n\nbar"), "foobar");
}

#[test]
fn variable_existence_and_deletion() {
    // variable-macros.js hasvar/varexists, deletevar/flushvar and the global forms.
    let mut vars = Variables::new();
    let (out, _) = run_with(
        "{{setvar::a::}}{{hasvar::a}} {{varexists::b}} {{deletevar::a}}{{hasvar::a}} \
         {{setglobalvar::g::1}}{{hasglobalvar::g}} {{flushglobalvar::g}}{{globalvarexists::g}}",
        &ctx(),
        &mut vars,
    );
    assert_eq!(out, "true false false true false");
    assert!(vars.local.is_empty() && vars.global.is_empty());
    vars.local.insert("x".into(), "1".into());
    let (out, _) = run_with("{{flushvar::x}}[{{getvar::x}}]", &ctx(), &mut vars);
    assert_eq!(out, "[]");
    assert!(vars.local.is_empty());
    // RisuAI has no hasvar: it stays text there.
    assert_eq!(in_dialect(Dialect::Risu, "{{hasvar::a}}"), "{{hasvar::a}}");
}

#[test]
fn variable_values_read_and_add_like_sillytavern() {
    // variables.js getLocalVariable: a numeric value is returned as a number; addLocalVariable:
    // JSON arrays get the value pushed, numbers add, anything else appends;
    // incrementLocalVariable adds the number 1.
    assert_eq!(st("{{setvar::n::007}}{{getvar::n}}"), "7");
    assert_eq!(st("{{setvar::n:: }}[{{getvar::n}}]"), "[]");
    assert_eq!(st("{{incvar::c}} {{incvar::c}} {{decvar::d}}"), "1 2 -1");
    assert_eq!(st("{{setvar::s::ab}}{{addvar::s::c}}{{getvar::s}}"), "abc");
    assert_eq!(st("{{addvar::n::2}}{{addvar::n::3}}{{getvar::n}}"), "5");
    assert_eq!(
        st(r#"{{setvar::l::["a"]}}{{addvar::l::b}}{{incvar::l}}"#),
        r#"["a","b",1]"#
    );
    assert_eq!(
        st("{{incglobalvar::g}}{{addglobalvar::g::0.5}}{{getglobalvar::g}}"),
        "11.5"
    );
}

#[test]
fn variable_keys_and_indexes() {
    // variable-macros.js setvarkey/getvarkey (setvarindex/getvarindex); variables.js
    // setLocalVariable with an index: a number indexes an array, other keys an object; an
    // unset variable becomes one.
    assert_eq!(
        st("{{setvarkey::o::name::Alice}}{{setvarkey::o::age::30}}{{getvar::o}} {{getvarkey::o::age}}"),
        r#"{"name":"Alice","age":"30"} 30"#
    );
    assert_eq!(
        st("{{setvarindex::l::2::c}}{{getvar::l}} [{{getvarindex::l::0}}] {{getvarkey::l::2}}"),
        r#"[null,null,"c"] [] c"#
    );
    let mut vars = Variables::new();
    vars.local
        .insert("o".into(), r#"{"a":{"b":1},"n":"007"}"#.into());
    let (out, _) = run_with(
        "{{getvarkey::o::a}} [{{getvarkey::o::zz}}] {{getvarkey::o::n}}",
        &ctx(),
        &mut vars,
    );
    assert_eq!(out, r#"{"b":1} [] 7"#);
    assert_eq!(
        st("{{setglobalvarkey::g::k::v}}{{getglobalvarkey::g::k}}{{getglobalvarindex::g::k}}"),
        "vv"
    );
    // A value that is not JSON is left alone; reading a key of it gives the value.
    assert_eq!(
        st("{{setvar::t::text}}{{setvarkey::t::k::v}}{{getvar::t}} {{getvarkey::t::k}}"),
        "text text"
    );
}

#[test]
fn time_macros_read_the_callers_clock() {
    // time-macros.js: date 'LL', weekday 'dddd', isotime 'HH:mm', isodate 'YYYY-MM-DD',
    // datetimeformat (moment.js format), timeDiff (humanize(true) of left - right).
    assert_eq!(
        st("{{date}}|{{weekday}}|{{isotime}}|{{isodate}}"),
        "November 21, 2026|Saturday|15:07|2026-11-21"
    );
    assert_eq!(
        st("{{datetimeformat::YYYY-MM-DD HH:mm:ss}}|{{datetimeformat::LLLL}}"),
        "2026-11-21 15:07:09|Saturday, November 21, 2026 3:07 PM"
    );
    // macros.js legacy form `{{datetimeformat FORMAT}}`.
    assert_eq!(st("{{datetimeformat DD.MM.YY}}"), "21.11.26");
    assert_eq!(
        st("{{ timeDiff :: 2023-01-01 12:00:00 :: 2023-01-01 15:00:00 }}"),
        "3 hours ago"
    );
    assert_eq!(
        st("{{timeDiff::2023-01-02::2023-01-01}}|{{timeDiff::2023-01-01::2023-01-01}}"),
        "in a day|a few seconds ago"
    );
    assert_eq!(
        st("{{timeDiff::{{date}} {{time}}::November 21, 2026 1:07 PM}}"),
        "in 2 hours"
    );
    assert_eq!(st("{{timeDiff::soon::2023-01-01}}"), "Invalid date");
    // Without a clock the clock macros are empty (now comes from the caller).
    let (out, _) = run_with(
        "[{{datetimeformat::YYYY}}{{time_UTC+2}}{{time}}]",
        &Context::new(),
        &mut Variables::new(),
    );
    assert_eq!(out, "[{{time_UTC+2}}]");
    // RisuAI's datetimeformat is its own `date` with a format (cbs.ts): `Do` is not a token.
    assert_eq!(in_dialect(Dialect::Risu, "{{datetimeformat::Do}}"), "Do");
    assert_eq!(
        in_dialect(Dialect::SillyTavern, "{{datetimeformat::Do}}"),
        "21st"
    );
}

#[test]
fn idle_duration_skips_the_newest_message() {
    // time-macros.js getTimeSinceLastMessage: system messages are skipped, the newest other
    // message is skipped, then the first user message's send date counts.
    let base = ctx()
        .with_message(Message::new(Role::User, "User", "old").at(NOW - 7200))
        .with_message(Message::new(Role::Char, "Character", "reply").at(NOW - 3600))
        .with_message(Message::new(Role::User, "User", "new").at(NOW - 60));
    let (out, _) = run_with(
        "{{idle_duration}} {{idleDuration}}",
        &base,
        &mut Variables::new(),
    );
    assert_eq!(out, "2 hours 2 hours");
    let (out, _) = run_with("{{idle_duration}}", &ctx(), &mut Variables::new());
    assert_eq!(out, "just now");
}

#[test]
fn card_fields_names_and_chat() {
    // env-macros.js charFirstMessage/greeting (index 0 the first message, N alternate N),
    // charVersion/version, charCreatorNotes/creatorNotes, charPrompt, charInstruction,
    // charDepthPrompt, group/groupNotMuted/notChar; chat-macros.js allChatRange.
    let c = ctx()
        .with_first_message("Hello")
        .with_alternate_greetings(vec!["Alt one".into(), "Alt two".into()])
        .with_char_version("2.0")
        .with_message(Message::new(Role::Char, "Character", "Hello"))
        .with_message(Message::new(Role::User, "User", "Hi"));
    let (out, _) = run_with(
        "{{greeting}}|{{greeting::2}}|{{charFirstMessage::0}}|[{{greeting::9}}]|{{version}}|{{allChatRange}}|{{notChar}}",
        &c,
        &mut Variables::new(),
    );
    assert_eq!(out, "Hello|Alt two|Hello|[]|2.0|0-1|User");
    // An index that is not an integer is refused (MacroValueType.INTEGER, strict).
    assert_eq!(st("{{greeting::x}}"), "{{greeting::x}}");
    let g = ctx().with_group(
        vec!["Character".into(), "Other".into(), "Muted".into()],
        vec!["Muted".into()],
    );
    let (out, _) = run_with(
        "{{group}}|{{groupNotMuted}}|{{notChar}}|<GROUP>",
        &g,
        &mut Variables::new(),
    );
    assert_eq!(
        out,
        "Character, Other, Muted|Character, Other|Other, Muted|Character, Other, Muted"
    );
}

#[test]
fn utility_counts() {
    // core-macros.js space/newline: an optional integer count; a count that is not an
    // integer leaves the macro as written.
    assert_eq!(st("a{{space::4}}b{{space}}c"), "a    b c");
    assert_eq!(st("a{{newline::2}}b{{newline}}c"), "a\n\nb\nc");
    assert_eq!(st("{{space::abc}}"), "{{space::abc}}");
    // MacroRegistry.js isValueOfType 'integer' is /^-?\d+$/: no sign, no fraction.
    for text in [
        "{{space::+1}}",
        "{{space::1.0}}",
        "{{newline::-1}}",
        "{{greeting::+1}}",
    ] {
        assert_eq!(st(text), text);
    }
}

#[test]
fn macros_that_need_sillytavern_are_listed_with_the_reason() {
    let listed = Registry::dialect_ref(Dialect::SillyTavern).macros();
    for name in [
        "input",
        "maxPrompt",
        "model",
        "isMobile",
        "instructStop",
        "lastGenerationType",
        "hasExtension",
        "outlet",
        "banned",
        "systemPrompt",
        "currentSwipeId",
    ] {
        let row = listed
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("{name}"));
        assert!(row.unavailable.is_some(), "{name}");
    }
    for name in [
        "hasvar",
        "deletevar",
        "getvarkey",
        "setvarkey",
        "timeDiff",
        "datetimeformat",
        "group",
        "greeting",
    ] {
        assert!(
            listed.iter().any(|m| m.unavailable.is_none()
                && std::iter::once(&m.name)
                    .chain(m.aliases)
                    .any(|n| *n == name)),
            "{name}"
        );
    }
    // They stay as written.
    assert_eq!(st("{{input}} {{maxPrompt}}"), "{{input}} {{maxPrompt}}");
    // RisuAI's list does not carry them.
    let risu = Registry::dialect_ref(Dialect::Risu).macros();
    assert!(!risu
        .iter()
        .any(|m| m.name == "instructStop" || m.name == "hasvar"));
}

fn bounded(text: &str) -> (String, Vec<&'static str>) {
    let limits = Limits {
        max_output: 1 << 16,
        ..Limits::default()
    };
    let out = Template::parse(text).expand_in(
        Registry::dialect_ref(Dialect::SillyTavern),
        &limits,
        &mut Budget::new(BudgetLimits::default()),
        &ctx(),
        &mut Variables::new(),
        Mode::Prompt,
    );
    (out.text, out.warnings.iter().map(|w| w.kind()).collect())
}

#[test]
fn issue12_hostile_sillytavern_macros_stay_within_the_limits() {
    // Repetition past the output bound is refused.
    let (text, w) = bounded("{{newline::1000000000}}");
    assert_eq!(text, "{{newline::1000000000}}");
    assert!(w.contains(&"output"), "{w:?}");
    // `space` too, bounded by the output limit rather than a fixed 1024 (issue 17).
    let (text, w) = bounded("{{space::1000000000}}");
    assert_eq!(text, "{{space::1000000000}}");
    assert!(w.contains(&"output"), "{w:?}");
    assert_eq!(bounded("{{space::65536}}").0.len(), 65536);
    // An array index far past the end would write a billion nulls.
    let (text, w) = bounded("{{setvarindex::l::1000000000::x}}{{getvar::l}}");
    assert_eq!(text, "{{setvarindex::l::1000000000::x}}");
    assert!(w.contains(&"output"), "{w:?}");
    // A format that grows ten-fold is cut at the bound and refused.
    let (text, w) = bounded(&format!(
        "{{{{datetimeformat::{}}}}}",
        "LLLL".repeat(10_000)
    ));
    assert!(text.starts_with("{{datetimeformat::LLLL"));
    assert!(w.contains(&"output"), "{w:?}");
    // Extreme dates and offsets give text, never a panic.
    for text in [
        "{{timeDiff::9999-12-31T23:59:59+23:59::0000-01-01T00:00:00-23:59}}",
        "{{timeDiff::January 1, 275760 11:59 PM::2023-01-01}}",
        "{{time::UTC+2147483647}}{{time::UTC-99999999999999999999}}",
        "{{time_UTC+99999999999}}{{time_UTC-2147483648}}",
        "{{datetimeformat::YYYYYY Y GGGG gggg x X}}",
    ] {
        let _ = bounded(text);
    }
    let far = Context::new().with_now(Timestamp::utc(i64::MAX).with_offset(i32::MAX));
    for text in [
        "{{datetimeformat::LLLL W w gggg GGGG DDDD x}}",
        "{{time_UTC-10}}",
    ] {
        let _ = run_with(text, &far, &mut Variables::new());
    }
}

proptest::proptest! {
    /// Issue 12's contract for SillyTavern's macros: any arguments, in any argument style,
    /// give text, never a panic.
    #[test]
    fn sillytavern_macros_never_panic(
        name in proptest::sample::select(Registry::dialect_ref(Dialect::SillyTavern).names()),
        sep in proptest::sample::select(vec!["::", ":", " "]),
        args in proptest::collection::vec(
            proptest::prop_oneof![
                "\\PC{0,12}",
                "-?[0-9]{1,25}",
                "UTC[+-][0-9]{1,12}",
                "[0-9]{4}-[0-9]{2}-[0-9]{2}( [0-9]{2}:[0-9]{2})?",
                "[YMDdHhmsaAZXxLlWwGgQEeNSko\\[\\] ]{0,12}",
                "\\[[0-9,\" a-z]{0,20}\\]",
            ],
            0..4,
        ),
    ) {
        let text = if args.is_empty() {
            format!("{{{{{name}}}}}")
        } else {
            format!("{{{{{name}{sep}{}}}}}", args.join(sep))
        };
        let far = Context::new().with_now(Timestamp::utc(-62_135_596_800).with_offset(-900))
            .with_message(Message::new(Role::User, "Bob", "hi").at(i64::MAX))
            .with_message(Message::new(Role::Char, "Al", "yo"));
        let mut vars = Variables::new();
        vars.local.insert("l".into(), "[1,2]".into());
        let _ = run_with(&text, &far, &mut vars);
        let _ = run_with(&text, &ctx(), &mut vars);
    }
}
