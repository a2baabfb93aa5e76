//! SillyTavern's macro engine syntax in the `sillytavern` dialect (issue 17): `{{if}}`, scoped
//! blocks, flags, the variable shorthand, escaping and comment blocks. Source of truth:
//! SillyTavern 1.19.0 (npm `sillytavern@1.19.0`): `public/scripts/macros/engine/MacroLexer.js`,
//! `MacroParser.js`, `MacroCstWalker.js`, `MacroFlags.js`, `MacroEngine.js`,
//! `public/scripts/macros/definitions/core-macros.js`, and the behaviours its own test suite
//! `tests/frontend/MacroEngine.e2e.js` checks (restated here, with inputs of our own).

use std::path::Path;
use std::time::{Duration, Instant};

use ccv3_cbs::{Context, Dialect, Limits, Mode, Registry, Template, Variables, MAX_WARNINGS};

fn ctx() -> Context {
    Context::new()
        .with_char_name("Alice")
        .with_user_name("Bob")
        .with_seed(7)
}

fn st_with(text: &str, vars: &mut Variables) -> String {
    Template::parse(text)
        .expand_with(
            Registry::dialect_ref(Dialect::SillyTavern),
            &Limits::default(),
            &ctx(),
            vars,
            Mode::Prompt,
        )
        .text
}

fn st(text: &str) -> String {
    st_with(text, &mut Variables::new())
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

fn check(cases: &[(&str, &str)]) {
    for (input, want) in cases {
        assert_eq!(st(input), *want, "input: {input:?}");
    }
}

/// core-macros.js `if` handler: falsy is empty or `isFalseBoolean` (off/false/0); `!` inverts;
/// inline `{{if::cond::content}}` form.
#[test]
fn st_1_19_if_truthiness_inline_and_negation() {
    check(&[
        ("{{if::yes::shown}}", "shown"),
        ("{{if::::hidden}}", ""),
        ("{{if::false::hidden}}", ""),
        ("{{if::OFF::hidden}}", ""),
        ("{{if::0::hidden}}", ""),
        ("{{if::1::shown}}", "shown"),
        ("{{if::TRUE::shown}}", "shown"),
        ("{{if !yes}}shown{{/if}}[end]", "[end]"),
        ("{{if !false}}shown{{/if}}", "shown"),
        ("{{if::!}}inverted empty{{else}}no{{/if}}", "inverted empty"),
        ("{{if::!anything}}x{{/if}}[end]", "[end]"),
        ("{{if ! off}}spaced bang{{/if}}", "spaced bang"),
    ]);
}

/// core-macros.js `if`: a condition that names a macro taking no argument is expanded first;
/// other words are literal; nested macros in the condition are expanded; a `!` produced by an
/// expanded value does not invert.
#[test]
fn st_1_19_if_condition_macro_names_and_nested_macros() {
    check(&[
        ("{{if char}}Name: {{char}}{{/if}}", "Name: Alice"),
        ("{{if noop}}not shown{{/if}}[end]", "[end]"),
        ("{{if noop}}has{{else}}empty{{/if}}", "empty"),
        ("{{if !noop}}no value{{/if}}", "no value"),
        ("{{if !char}}no char{{else}}has char{{/if}}", "has char"),
        ("{{if::notamacro::shown}}", "shown"),
        ("{{setvar::f::yes}}{{if {{getvar::f}}}}on{{/if}}", "on"),
        ("{{setvar::f::}}{{if {{getvar::f}}}}on{{/if}}[end]", "[end]"),
        (
            "{{setvar::f::false}}{{if {{getvar::f}}}}on{{/if}}[end]",
            "[end]",
        ),
        ("{{setvar::e::}}{{if !{{getvar::e}}}}empty{{/if}}", "empty"),
        (
            "{{setvar::b::!hi}}{{if {{getvar::b}}}}has{{else}}none{{/if}}",
            "has",
        ),
    ]);
}

/// core-macros.js `if` with `delayArgResolution`: only the chosen branch is expanded, so its
/// `{{setvar}}` side effects happen only there; `splitOnTopLevelElse` skips nested scoped ifs
/// and inline ifs do not count as nesting.
#[test]
fn st_1_19_if_only_the_taken_branch_runs() {
    let mut vars = Variables::new();
    let out = st_with(
        "{{if 0}}{{setvar::a::then}}{{else}}{{setvar::a::else}}{{/if}}{{if 1}}{{setvar::b::then}}{{else}}{{setvar::b::else}}{{/if}}{{if 0}}{{setvar::c::x}}{{/if}}",
        &mut vars,
    );
    assert_eq!(out, "");
    assert_eq!(vars.local["a"], "else");
    assert_eq!(vars.local["b"], "then");
    assert!(!vars.local.contains_key("c"));
    let mut vars = Variables::new();
    st_with(
        "{{if 1}}{{setvar::o::yes}}{{if 0}}{{setvar::i::wrong}}{{else}}{{setvar::i::right}}{{/if}}{{/if}}",
        &mut vars,
    );
    assert_eq!(vars.local["o"], "yes");
    assert_eq!(vars.local["i"], "right");
    check(&[
        ("{{if yes}}outer{{if yes}}inner{{/if}}{{/if}}", "outerinner"),
        ("{{if::}}outer{{if yes}}inner{{/if}}{{/if}}[end]", "[end]"),
        ("{{if yes}}outer{{if::}}inner{{/if}}end{{/if}}", "outerend"),
        (
            "{{if 0}}{{if::1::inner}}{{else}}outer-else{{/if}}",
            "outer-else",
        ),
        (
            "{{if 0}}{{if::1::a}}{{if::1::b}}{{else}}found{{/if}}",
            "found",
        ),
        ("{{if 0}}a{{else}}{{if 0}}b{{else}}c{{/if}}{{/if}}", "c"),
        ("{{if 1}}{{if 0}}x{{else}}y{{/if}}{{else}}z{{/if}}", "y"),
        ("{{if false}}only then{{/if}}[end]", "[end]"),
    ]);
}

/// MacroEngine.js `trimScopedContent`: branches and scoped content are dedented by the first
/// non-blank line and trimmed, unless the `#` flag (MacroFlags.js `PRESERVE_WHITESPACE`).
#[test]
fn st_1_19_scoped_content_is_dedented_and_trimmed_unless_hash() {
    check(&[
        ("{{if yes}}\n  trimmed  \n{{/if}}", "trimmed"),
        ("{{#if yes}}\n  kept  \n{{/if}}", "\n  kept  \n"),
        (
            "{{if false}}\n  then\n{{else}}\n  # Title\n  body\n{{/if}}",
            "# Title\nbody",
        ),
        ("{{reverse}}\n  abc  \n{{/reverse}}", "cba"),
        ("{{#reverse}}\n  abc  \n{{/reverse}}", "\n  cba  \n"),
        ("{{trim}}  hello {{user}}  {{/trim}}", "hello Bob"),
        ("{{trim}}  a {{trim}}  b  {{/trim}} c  {{/trim}}", "a b c"),
        (
            "{{setvar::v}}\n  parent\n    child\n  sibling\n{{/setvar}}[{{getvar::v}}]",
            "[parent\n  child\nsibling]",
        ),
        ("{{setvar::v}}   {{/setvar}}[{{getvar::v}}]", "[]"),
        ("{{#setvar::v}}   {{/setvar}}[{{getvar::v}}]", "[   ]"),
        (
            "{{#setvar::v}}\n  {{char}}  \n{{/setvar}}[{{getvar::v}}]",
            "[\n  Alice  \n]",
        ),
    ]);
}

/// MacroCstWalker.js `processScopedMacros` / `canAcceptScopedContent`: the content becomes the
/// last argument; same-name tags nest; outermost pairs first; unmatched closing tags and pairs
/// whose macro cannot take one more argument stay as written.
#[test]
fn st_1_19_scoped_blocks_pass_content_as_last_argument() {
    check(&[
        (
            "{{setvar::v}}Hello {{user}}!{{/setvar}}{{getvar::v}}",
            "Hello Bob!",
        ),
        (
            "{{setvar::o}}x {{setvar::i}}in{{/setvar}} y{{/setvar}}{{getvar::o}}|{{getvar::i}}",
            "x  y|in",
        ),
        (
            "{{setvar::a}}1{{/setvar}}mid{{setvar::b}}2{{/setvar}}[{{getvar::a}}{{getvar::b}}]",
            "mid[12]",
        ),
        ("{{setvar::e}}{{/setvar}}[{{getvar::e}}]", "[]"),
        (
            "{{setvar::s}}a { b } :: c{{/setvar}}{{getvar::s}}",
            "a { b } :: c",
        ),
        ("Before {{/setvar}} After", "Before {{/setvar}} After"),
        ("{{/getvar::x}}", "{{/getvar::x}}"),
        (
            "{{setvar::v}}c{{/setvar}}{{/setvar}}{{getvar::v}}",
            "{{/setvar}}c",
        ),
        ("{{setvar::x::1}}c{{/getvar}}{{getvar::x}}", "c{{/getvar}}1"),
        (
            "{{user}}Hi {{char}}!{{/user}}",
            "{{user}}Hi Alice!{{/user}}",
        ),
        (
            "{{setvar::v::full}}extra{{/setvar}}{{getvar::v}}",
            "{{setvar::v::full}}extra{{/setvar}}",
        ),
        (
            "{{setvar::t::{{reverse}}ab{{/reverse}}-{{if 0}}no{{else}}yes{{/if}}}}{{getvar::t}}",
            "ba-yes",
        ),
        (
            "{{unknownthing::a}}b{{/unknownthing}}",
            "{{unknownthing::a}}b{{/unknownthing}}",
        ),
    ]);
}

/// MacroFlags.js: `#` keeps whitespace, `!`, `?`, `~`, `>` are parsed and change nothing,
/// whitespace may separate flags (MacroLexer.js `macro_def` mode).
#[test]
fn st_1_19_flags_are_read_before_the_name() {
    check(&[
        ("Hello {{#user}}!", "Hello Bob!"),
        ("{{!reverse::hello}}", "olleh"),
        ("{{ ! ? > user }}", "Bob"),
        ("{{~char}} {{?user}}", "Alice Bob"),
    ]);
}

/// MacroEngine.e2e.js "Comment macro": `{{// ...}}` and comment blocks `{{//}}...{{///}}`
/// (extra slashes allowed) are removed. The argument or block content is still expanded, as
/// SillyTavern 1.19.0 does (core-macros.js `//` has no `delayArgResolution`; checked with
/// scripts/st-engine-compare): a `{{setvar}}` inside runs.
#[test]
fn st_1_19_comments_and_comment_blocks() {
    let mut vars = Variables::new();
    let out = st_with(
        "A{{// note {{setvar::x::1}}}}B{{//}}{{setvar::y::1}} hidden{{///}}C{{//}}more{{////}}D",
        &mut vars,
    );
    assert_eq!(out, "ABCD");
    assert_eq!(vars.local["x"], "1");
    assert_eq!(vars.local["y"], "1");
    check(&[("Start\n{{//}}\n  block\n{{///}}\nEnd", "Start\n\nEnd")]);
}

/// MacroLexer.js `Var` tokens and MacroCstWalker.js `#executeVariableOperation`: the shorthand
/// reads and writes variables with its operators.
#[test]
fn st_1_19_variable_shorthand_operators() {
    let mut vars = Variables::new();
    vars.local.insert("n".into(), "5".into());
    vars.global.insert("g".into(), "10".into());
    vars.local.insert("zero".into(), "0".into());
    vars.local.insert("empty".into(), String::new());
    vars.local.insert("my-var".into(), "dash".into());
    let cases = [
        ("{{.n}}", "5"),
        ("{{$g}}", "10"),
        ("{{.my-var}}", "dash"),
        ("[{{.missing}}]", "[]"),
        ("{{.n++}}", "6"),
        ("{{$g--}}", "9"),
        ("{{.fresh++}}", "1"),
        ("{{.s = hi {{user}}}}{{.s}}", "hi Bob"),
        ("{{ .sp = spaced }}{{.sp}}", "spaced"),
        ("{{.n += 4}}{{.n}}", "10"),
        ("{{.n -= 3}}{{.n}}", "7"),
        ("{{.n -= abc}}{{.n}}", "7"),
        ("{{.t = a}}{{.t += b}}{{.t}}", "ab"),
        ("{{.empty || fb}}", "fb"),
        ("{{.zero || fb}}", "fb"),
        ("{{.n || fb}}", "7"),
        ("{{.none ?? fb}}", "fb"),
        ("[{{.empty ?? fb}}]", "[]"),
        ("{{.zero ?? fb}}", "0"),
        ("{{.o1 ||= set}}{{.o1}}", "setset"),
        ("{{.n ||= other}}", "7"),
        ("{{.o2 ??= made}}{{.o2}}", "mademade"),
        ("[{{.empty ??= made}}][{{.empty}}]", "[][]"),
        ("{{.n == 7}} {{.n == 8}} {{.empty == }}", "true false true"),
        ("{{.n != 7}} {{.n != 8}}", "false true"),
        (
            "{{.n > 6}} {{.n > 7}} {{.n >= 7}} {{.n < 8}} {{.n <= 6}}",
            "true false true true false",
        ),
        // variables.js `getLocalVariable`: unset reads as empty, `Number('')` is 0.
        (
            "{{.my-var > 1}} {{.missing < 1}} {{.missing > -1}}",
            "false true true",
        ),
        (
            "{{.neg = -5}}{{.neg < -2}} {{.dec = 1.5}}{{.dec >= 1.5}}",
            "true true",
        ),
        // variables.js getters return numbers as numbers.
        (
            "{{.z = 007}}{{.z}} {{.z == 7}} {{.z != 007}}",
            "7 true true",
        ),
        ("{{.n++5}}", "{{.n++5}}"),
        ("{{.n -- 5}}", "{{.n -- 5}}"),
        ("{{.n--5}}", ""),
        ("{{.n extra}}", "{{.n extra}}"),
    ];
    for (input, want) in cases {
        assert_eq!(st_with(input, &mut vars), want, "input: {input:?}");
    }
}

/// MacroCstWalker.js `#createLazyValue`: the value after `||`, `??`, `||=`, `??=` runs only
/// when needed; after `=`, `+=`, `==` always.
#[test]
fn st_1_19_shorthand_values_are_lazy() {
    let mut vars = Variables::new();
    vars.local.insert("set".into(), "yes".into());
    let out = st_with(
        "{{.set ?? {{setvar::a::ran}}x}}{{.set || {{setvar::b::ran}}x}}{{.unset ?? {{setvar::c::ran}}fb}}{{.set == {{setvar::d::ran}}yes}}",
        &mut vars,
    );
    assert_eq!(out, "yesyesfbtrue");
    assert!(!vars.local.contains_key("a"));
    assert!(!vars.local.contains_key("b"));
    assert_eq!(vars.local["c"], "ran");
    assert_eq!(vars.local["d"], "ran");
}

/// core-macros.js `if` with `.name` / `$name` conditions (read through getvar / getglobalvar).
#[test]
fn st_1_19_if_with_variable_shorthand_conditions() {
    let mut vars = Variables::new();
    vars.local.insert("on".into(), "1".into());
    vars.local.insert("count".into(), "0".into());
    vars.global.insert("flag".into(), "true".into());
    let cases = [
        ("{{if .on}}Yes{{/if}}", "Yes"),
        ("{{if .count}}n{{else}}No count{{/if}}", "No count"),
        ("{{if $flag}}Active{{/if}}", "Active"),
        ("{{if !.missing}}Not set{{/if}}", "Not set"),
        ("{{if ! $flag}}x{{else}}y{{/if}}", "y"),
    ];
    for (input, want) in cases {
        assert_eq!(st_with(input, &mut vars), want, "input: {input:?}");
    }
}

/// MacroEngine.js post-processors: `\{` and `\}` lose their backslash; `{{else}}` outside an
/// `{{if}}` is removed; unknown macros keep their text with nested macros expanded; an unclosed
/// `{{` stays text; `{{if}}` with a wrong number of arguments stays as written.
#[test]
fn st_1_19_escapes_unknown_and_malformed() {
    check(&[
        (r"\{\{user\}\} is {{user}}", "{{user}} is Bob"),
        ("a{{else}}b", "ab"),
        ("{{unknown::{{user}}}}", "{{unknown::Bob}}"),
        ("Test {{ hehe", "Test {{ hehe"),
        ("{{if yes}}", "{{if yes}}"),
        ("{{if::a::b::c}}", "{{if::a::b::c}}"),
    ]);
}

/// The engine syntax is SillyTavern's only: the risu and spec dialects keep their behaviour.
#[test]
fn st_engine_syntax_stays_out_of_risu_and_spec() {
    let text = "{{if::1::x}}{{.v = 1}}{{setvar::a}}b{{/setvar}}";
    assert_eq!(run_in(Dialect::Spec, text), text);
    assert_eq!(
        run_in(Dialect::Risu, "{{#if 1}}\n  yes\n{{/if}} {{.v}}"),
        "yes {{.v}}"
    );
    assert_eq!(run_in(Dialect::Auto, "{{if::1::x}}"), "{{if::1::x}}");
}

/// `ccv3 cbs --list`: the catalog lists the engine's entries for the sillytavern dialect only.
#[test]
fn st_engine_entries_are_listed_for_sillytavern() {
    let names: Vec<&str> = Registry::dialect_ref(Dialect::SillyTavern)
        .macros()
        .iter()
        .map(|m| m.name)
        .collect();
    for n in ["if", "else", ".name"] {
        assert!(names.contains(&n), "{n} missing");
    }
    let risu: Vec<&str> = Registry::dialect_ref(Dialect::Risu)
        .macros()
        .iter()
        .map(|m| m.name)
        .collect();
    assert!(!risu.contains(&"if"));
}

/// core-macros.js `if` example usage (`{{if description}}# Description\n{{description}}{{/if}}`):
/// a card field macro as the condition; the inline form also splits on `{{else}}`.
#[test]
fn st_1_19_if_on_card_fields_and_inline_else() {
    let with_desc = ctx().with_description("A knight.");
    let run = |c: &Context, src: &str| {
        Template::parse(src)
            .expand_with(
                Registry::dialect_ref(Dialect::SillyTavern),
                &Limits::default(),
                c,
                &mut Variables::new(),
                Mode::Prompt,
            )
            .text
    };
    let src = "{{if description}}\n  # Description\n  {{description}}\n{{/if}}";
    assert_eq!(run(&with_desc, src), "# Description\nA knight.");
    assert_eq!(run(&ctx(), src), "");
    check(&[
        ("{{if::0::a{{else}}b}}", "b"),
        ("{{if::1::a{{else}}b}}", "a"),
        ("{{if 0}}x{{else}}{{if::1::a{{else}}b}}{{/if}}", "a"),
    ]);
}

/// MacroEngine.e2e.js "pick" seeding: picks inside scoped content keep their place in the
/// text, so the same text gives the same choices every time, and identical picks at different
/// places may differ.
#[test]
fn st_1_19_picks_inside_scopes_are_stable() {
    let src = "{{if 1}}{{pick::a,b,c,d,e,f,g,h}}{{/if}}|{{trim}}{{pick::a,b,c,d,e,f,g,h}}{{/trim}}";
    let first = st(src);
    for _ in 0..5 {
        assert_eq!(st(src), first);
    }
    assert_eq!(first.len(), 3);
}

/// The handlebars-style `{{#if}}` (the `#` flag, MacroLexer.js) pairs by name in SillyTavern,
/// even with other scoped macros inside.
#[test]
fn st_1_19_hash_if_pairs_by_name_with_scopes_inside() {
    check(&[
        (
            "{{#if 1}}{{setvar::a}}in{{/setvar}}{{/if}}[{{getvar::a}}]",
            "[in]",
        ),
        ("{{#if 0}}a{{else}}b{{/if}}", "b"),
        ("{{#if 1}}x{{:else}}y{{/if}}", "x{{:else}}y"),
    ]);
}

/// Expands `src` in every mode with `registry`: within the output bound, the warning cap and
/// the variable limits, in bounded time (the hostile-input rule; as tests/regressions.rs).
fn check_in(registry: &Registry, name: &str, src: &str) {
    let limits = Limits::default();
    let start = Instant::now();
    let t = Template::parse(src);
    for mode in [Mode::Prompt, Mode::Display, Mode::LoreScan] {
        let mut vars = Variables::new();
        let out = t.expand_with(registry, &limits, &ctx(), &mut vars, mode);
        assert!(out.text.len() <= limits.max_output, "{name}");
        assert!(out.warnings.len() <= MAX_WARNINGS + 1, "{name}");
        for map in [&vars.local, &vars.global] {
            assert!(map.len() <= limits.max_variables, "{name}");
            assert!(
                map.values().all(|v| v.len() <= limits.max_variable_len),
                "{name}"
            );
        }
    }
    let took = start.elapsed();
    assert!(took < Duration::from_secs(30), "{name} took {took:?}");
}

/// The regression corpus of hostile templates (tests/data/regressions/) read in the
/// sillytavern dialect, where scoped blocks, `{{if}}` and the shorthand apply.
#[test]
fn sillytavern_engine_reads_the_regression_corpus_within_bounds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let st = Registry::dialect_ref(Dialect::SillyTavern);
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        check_in(
            st,
            &file.display().to_string(),
            &String::from_utf8_lossy(&bytes),
        );
    }
}

/// SillyTavern's engine syntax (issue 17) under hostile input: deep scoped nesting, unpaired
/// and crossing tags, `{{else}}` storms, shorthand loops that double a variable.
#[test]
fn sillytavern_engine_hostile_templates_expand_within_bounds() {
    let st = Registry::dialect_ref(Dialect::SillyTavern);
    let cases: Vec<(&str, String)> = vec![
        (
            "deep scoped if",
            format!("{}x{}", "{{if 1}}".repeat(5_000), "{{/if}}".repeat(5_000)),
        ),
        (
            "deep scoped if with else",
            format!(
                "{}x{}",
                "{{if 0}}a{{else}}".repeat(5_000),
                "{{/if}}".repeat(5_000)
            ),
        ),
        (
            "deep inline if",
            format!("{}x{}", "{{if::1::".repeat(5_000), "}}".repeat(5_000)),
        ),
        (
            "unclosed scoped openers",
            format!("{}{{{{/setvar}}}}", "{{setvar::a}}".repeat(12_500)),
        ),
        ("closing tags only", "{{/setvar}}{{/if}}".repeat(12_500)),
        (
            "crossing scopes",
            "{{trim}}{{reverse}}{{/trim}}{{/reverse}}".repeat(5_000),
        ),
        (
            "scopes beside raw pairs",
            "{{setvar::a}}x{{/setvar}}{{user}}y{{/user}}".repeat(3_750),
        ),
        (
            "nested scoped trims",
            format!(
                "{}x{}",
                "{{#trim}} ".repeat(7_500),
                "{{/trim}}".repeat(7_500)
            ),
        ),
        (
            "else storm",
            format!("{{{{if 0}}}}{}{{{{/if}}}}", "{{else}}".repeat(25_000)),
        ),
        (
            "shorthand doubling",
            format!("{{{{.x = ab}}}}{}", "{{.x += {{.x}}}}".repeat(200)),
        ),
        (
            "global shorthand doubling",
            format!(
                "{{{{$x = ab}}}}{}",
                "{{$x ||= z}}{{$x += {{$x}}}}".repeat(200)
            ),
        ),
        ("shorthand counter storm", "{{.n++}}{{$m--}}".repeat(5_000)),
        (
            "many shorthand variables",
            (0..5_000).map(|i| format!("{{{{.v{i} = {i}}}}}")).collect(),
        ),
        (
            "comment blocks",
            "{{//}}{{setvar::x::1}}{{///}}".repeat(7_500),
        ),
        (
            "flag storm",
            "{{!?~#>/user}}{{ ! # reverse::ab}}".repeat(3_750),
        ),
        ("escape storm", "\\{\\}".repeat(25_000)),
        (
            "nested pure blocks",
            format!(
                "{}{{{{char}}}}{}",
                "{{#pure}}".repeat(2_000),
                "{{/pure}}".repeat(2_000)
            ),
        ),
        (
            "many pure blocks",
            "{{#pure}}{{user}}{{/pure}}".repeat(5_000),
        ),
        (
            "huge space",
            "{{space::99999999999}}{{space::1048577}}".repeat(1_000),
        ),
        (
            "roll storm",
            "{{roll::1000d1000000}}{{roll::bad}}{{random}}".repeat(2_000),
        ),
        (
            "date storm",
            format!(
                "{{{{timeDiff::{}::{}}}}}",
                "1/".repeat(20_000),
                "(".repeat(20_000)
            ),
        ),
    ];
    for (name, src) in cases {
        check_in(st, name, &src);
    }
}

/// RisuAI's `{{#pure}}`/`{{#puredisplay}}` are not SillyTavern macros: `#` is SillyTavern's
/// whitespace flag and `pure` a name it does not define (MacroRegistry.js: unknown macros stay
/// as written, their nested macros resolved, MacroEngine.js `#resolveMacro`), so the body's
/// macros expand and both tags stay.
#[test]
fn st_1_19_pure_blocks_are_text_whose_macros_expand() {
    check(&[
        ("{{#pure}}{{char}}{{/pure}}", "{{#pure}}Alice{{/pure}}"),
        (
            "{{#puredisplay}} {{user}} {{/puredisplay}}",
            "{{#puredisplay}} Bob {{/puredisplay}}",
        ),
        (
            "{{if 1}}{{#pure}}{{char}}{{#pure}}{{user}}{{/pure}}{{/pure}}{{/if}}",
            "{{#pure}}Alice{{#pure}}Bob{{/pure}}{{/pure}}",
        ),
        (
            "{{#pure}}{{setvar::x::1}}{{/pure}}[{{getvar::x}}]",
            "{{#pure}}{{/pure}}[1]",
        ),
    ]);
    // The risu dialect keeps RisuAI's meaning: the body as written.
    assert_eq!(
        run_in(Dialect::Risu, "{{#pure}}{{char}}{{/pure}}"),
        "{{char}}"
    );
}

/// core-macros.js `random`: an empty list gives `''`; `roll`: `droll.validate` failing gives
/// `''` (digits alone are `1dN`); `{{roll}}` without its argument stays as written (arity).
#[test]
fn st_1_19_random_without_choices_and_bad_rolls_are_empty() {
    check(&[
        ("[{{random}}]", "[]"),
        ("[{{random::}}]", "[]"),
        ("[{{random::a}}]", "[a]"),
        ("[{{roll::bad}}]", "[]"),
        ("[{{roll::0d6}}]", "[]"),
        ("[{{roll::d0}}]", "[]"),
        ("[{{roll::06}}]", "[]"),
        ("[{{roll::2 d6}}]", "[]"),
        ("[{{roll::1d1+1}}]", "[2]"),
        ("[{{roll::3d1-1}}]", "[2]"),
        ("[{{roll::1}}]", "[1]"),
        ("[{{roll}}]", "[{{roll}}]"),
    ]);
    // More than 1000 dice: refused (hostile-input bound), empty as well.
    assert_eq!(st("[{{roll::1001d6}}]"), "[]");
    // The spec dialect keeps the spec's rule: unreadable dice stay as written.
    assert_eq!(run_in(Dialect::Spec, "{{roll::bad}}"), "{{roll::bad}}");
}

/// core-macros.js `trim`: outside a scoped block the handler returns the `{{trim}}` marker,
/// which MacroEngine.js's `core:legacy-trim` post-processor removes with the newlines around.
#[test]
fn st_1_19_trim_with_an_argument_outside_a_block() {
    check(&[
        ("a\n{{trim::x}}\nb", "ab"),
        ("a\n\n{{trim::{{setvar::t::1}}}}\n\nb{{getvar::t}}", "ab1"),
        ("[{{trim}}  x  {{/trim}}]", "[x]"),
    ]);
    assert_eq!(run_in(Dialect::Risu, "[{{trim:: x }}]"), "[x]");
}

/// core-macros.js `space`: `' '.repeat(count)` for an integer count; ccv3 bounds it by
/// `Limits::max_output` (past it the macro stays as written, with a warning).
#[test]
fn st_1_19_space_is_bounded_by_the_output_limit() {
    assert_eq!(st("[{{space::3}}]"), "[   ]");
    assert_eq!(st("[{{space::2000}}]").len(), 2002);
    assert_eq!(st("[{{space::-1}}]"), "[{{space::-1}}]");
    let limits = Limits {
        max_output: 100,
        ..Limits::default()
    };
    let out = Template::parse("{{space::101}}").expand_with(
        Registry::dialect_ref(Dialect::SillyTavern),
        &limits,
        &ctx(),
        &mut Variables::new(),
        Mode::Prompt,
    );
    assert_eq!(out.text, "{{space::101}}");
    assert!(!out.warnings.is_empty());
}

/// env-macros.js `mesExamplesRaw` / `mesExamples` with script.js `parseMesExamples` (chat
/// completion, SillyTavern's default API: blocks headed `<START>`).
#[test]
fn st_1_19_mes_examples_blocks() {
    let ctx = ctx().with_mes_examples("  {{user}}: hi\n<start>\n{{char}}: yo  ");
    let run = |text: &str| {
        Template::parse(text)
            .expand_with(
                Registry::dialect_ref(Dialect::SillyTavern),
                &Limits::default(),
                &ctx,
                &mut Variables::new(),
                Mode::Prompt,
            )
            .text
    };
    assert_eq!(run("{{mesExamplesRaw}}"), "Bob: hi\n<start>\nAlice: yo");
    assert_eq!(
        run("{{mesExamples}}"),
        "<START>\nBob: hi\n<START>\nAlice: yo\n"
    );
}
