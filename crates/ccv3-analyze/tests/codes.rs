//! Every lint code of issue 27 from a book made for it, and its absence where it does not
//! apply. Each test names the source of its rule.

use ccv3::{Card, Entry, Lorebook, Severity};
use ccv3_analyze::{lint_card, lint_lorebook, App, Finding, LintOptions};
use serde_json::json;

fn tok() -> std::sync::Arc<dyn ccv3_tokens::Tokenizer> {
    ccv3_tokens::load(&ccv3_tokens::TokenizerKind::O200k).unwrap()
}

fn book(entries: Vec<Entry>) -> Lorebook {
    Lorebook {
        entries,
        ..Default::default()
    }
}

fn entry(keys: &[&str], content: &str) -> Entry {
    Entry::new(keys, content)
}

fn ext(mut e: Entry, k: &str, v: serde_json::Value) -> Entry {
    e.extensions.insert(k.into(), v);
    e
}

fn lint_with(b: &Lorebook, opts: &LintOptions) -> Vec<Finding> {
    lint_lorebook(b, opts, &*tok())
}

fn lint(b: &Lorebook) -> Vec<Finding> {
    lint_with(b, &LintOptions::default())
}

/// The findings with `code`, as (entry, severity).
fn with(fs: &[Finding], code: &str) -> Vec<(Option<usize>, Severity)> {
    fs.iter()
        .filter(|f| f.code == code)
        .map(|f| (f.entry, f.severity))
        .collect()
}

const W: Severity = Severity::Warning;
const I: Severity = Severity::Info;

#[test]
fn no_keys() {
    // SPEC_V3 `keys` / engine choice 8: an entry that is not constant and has no key and no
    // `@@activate` is never a match (the engine explains it `no keys`).
    let b = book(vec![
        entry(&[], "lonely"),
        entry(&[], "@@activate\nforced"),
        {
            let mut e = entry(&[], "always");
            e.constant = Some(true);
            e
        },
        entry(&["k"], "keyed"),
    ]);
    assert_eq!(with(&lint(&b), "lore-entry-no-keys"), [(Some(0), W)]);
}

#[test]
fn zero_probability() {
    // SillyTavern World Info doc, "Inclusion probability": with useProbability the roll must be
    // below the probability; 0 never passes. `useProbability: false` turns it off.
    let b = book(vec![
        ext(
            ext(entry(&["a"], "x"), "probability", json!(0)),
            "useProbability",
            json!(true),
        ),
        ext(
            ext(entry(&["b"], "y"), "probability", json!(0)),
            "useProbability",
            json!(false),
        ),
        entry(&["c"], "@@probability 0\nz"),
    ]);
    assert_eq!(
        with(&lint(&b), "lore-entry-zero-probability"),
        [(Some(0), W), (Some(2), W)]
    );
}

#[test]
fn recursion_dead_and_unreachable() {
    // SillyTavern World Info doc, "Delay until recursion" (fires only in recursion steps) and
    // "Non-recursable" (exclude_recursion: recursion steps may not activate it).
    let b = book(vec![
        ext(
            ext(
                entry(&["dragon"], "a"),
                "delay_until_recursion",
                json!(true),
            ),
            "exclude_recursion",
            json!(true),
        ),
        ext(
            entry(&["castle"], "b"),
            "delay_until_recursion",
            json!(true),
        ),
        ext(entry(&["moat"], "c"), "delay_until_recursion", json!(true)),
        entry(&["knight"], "The knight rides to the castle."),
    ]);
    let fs = lint(&b);
    assert_eq!(with(&fs, "lore-entry-recursion-dead"), [(Some(0), W)]);
    // #1's key is in #3's content; nothing holds `moat`.
    assert_eq!(with(&fs, "lore-entry-unreachable"), [(Some(2), W)]);
}

#[test]
fn unreachable_when_the_book_turns_recursion_off() {
    let mut b = book(vec![
        ext(
            entry(&["castle"], "b"),
            "delay_until_recursion",
            json!(true),
        ),
        entry(&["knight"], "The knight rides to the castle."),
    ]);
    assert!(with(&lint(&b), "lore-entry-unreachable").is_empty());
    b.recursive_scanning = Some(false);
    let fs = lint(&b);
    assert_eq!(with(&fs, "lore-entry-unreachable"), [(Some(0), W)]);
    assert!(fs.iter().any(|f| f.message.contains("recursion off")));
}

#[test]
fn disabled_by_decorator() {
    // SPEC_V3 `@@dont_activate`: the entry is not activated "in any case".
    let b = book(vec![
        entry(&["k"], "@@dont_activate\nnever"),
        entry(&["j"], "fine"),
    ]);
    assert_eq!(
        with(&lint(&b), "lore-entry-disabled-by-decorator"),
        [(Some(0), W)]
    );
    // A book triggered by @@activate only: said once, as info.
    let b = book(vec![
        entry(&["k"], "@@dont_activate\nnever"),
        entry(&["j"], "@@dont_activate\nnever"),
        entry(&[], "@@activate\nalways"),
    ]);
    assert_eq!(
        with(&lint(&b), "lore-entry-disabled-by-decorator"),
        [(Some(0), I)]
    );
}

#[test]
fn key_too_broad() {
    // Issue 27: keys of one or two characters, or among the 100 most frequent English words
    // (src/common_words.txt, the Oxford English Corpus list); whole-word matching on by
    // default (SillyTavern's `match_whole_words` default).
    let b = book(vec![
        entry(&["the"], "a"),
        entry(&["x"], "b"),
        ext(entry(&["ab"], "c"), "match_whole_words", json!(false)),
        entry(&["ab"], "d"),
        entry(&["Seraphine"], "e"),
        entry(&["/the/i"], "f"),
    ]);
    let fs = lint(&b);
    assert_eq!(
        with(&fs, "lore-key-too-broad"),
        [(Some(0), W), (Some(1), W), (Some(2), W)]
    );
}

#[test]
fn key_duplicate() {
    // Issue 27: the same key after the entry's case rule (SPEC_V3 `case_sensitive`) in two or
    // more enabled entries.
    let mut cs = entry(&["Dragon"], "c");
    cs.case_sensitive = Some(true);
    let mut off = entry(&["dragon"], "d");
    off.enabled = false;
    let b = book(vec![
        entry(&["dragon"], "a"),
        entry(&["DRAGON"], "b"),
        cs,
        off,
    ]);
    let fs = lint(&b);
    assert_eq!(
        with(&fs, "lore-key-duplicate"),
        [(Some(0), I), (Some(1), I)]
    );
    assert!(fs
        .iter()
        .any(|f| f.code == "lore-key-duplicate" && f.message.contains("#1")));
}

#[test]
fn regex_invalid() {
    // SillyTavern world-info.js parseRegexFromString: a `/pattern/flags` key that does not
    // compile is matched as plain text; ECMAScript's grammar decides (regress).
    let b = book(vec![entry(&["/dra(gon/i", "/ok/"], "a")]);
    let fs = lint(&b);
    assert_eq!(with(&fs, "lore-regex-invalid"), [(Some(0), W)]);
    assert_eq!(
        fs.iter()
            .find(|f| f.code == "lore-regex-invalid")
            .unwrap()
            .path,
        "data.entries[0].keys[0]"
    );
}

#[test]
fn secondary_unused() {
    // SillyTavern World Info doc, "Optional Filter": the logic applies to secondary keys; the
    // spec's `selective` turns them on.
    let mut unused = entry(&["a"], "x");
    unused.secondary_keys = Some(vec!["b".into()]);
    unused.selective = Some(false);
    let mut used = entry(&["a"], "y");
    used.secondary_keys = Some(vec!["b".into()]);
    used.selective = Some(true);
    let b = book(vec![
        ext(entry(&["c"], "z"), "selectiveLogic", json!(3)),
        unused,
        used,
    ]);
    assert_eq!(
        with(&lint(&b), "lore-secondary-unused"),
        [(Some(0), I), (Some(1), I)]
    );
}

#[test]
fn group_single() {
    // SillyTavern World Info doc, "Inclusion Group": one entry of a group is chosen; a group of
    // one chooses nothing.
    let mut off = ext(entry(&["c"], "z"), "group", json!("pair"));
    off.enabled = false;
    let b = book(vec![
        ext(entry(&["a"], "x"), "group", json!("solo")),
        ext(entry(&["b"], "y"), "group", json!("pair")),
        off,
        ext(entry(&["d"], "w"), "group", json!("two")),
        ext(entry(&["e"], "v"), "group", json!("two")),
    ]);
    assert_eq!(
        with(&lint(&b), "lore-group-single"),
        [(Some(0), I), (Some(1), I)]
    );
}

#[test]
fn budget_plan_and_constants_over_budget() {
    // Engine choice 14 (SillyTavern's budget): constants first, then priority; the first entry
    // that does not fit ends the budget. `--budget` beats the book's token_budget.
    let words = |n: usize| vec!["word"; n].join(" ");
    let constant = |content: String, order: i64| {
        let mut e = entry(&[], &content);
        e.constant = Some(true);
        e.insertion_order = order.into();
        e.priority = Some(order.into());
        e
    };
    let b = book(vec![
        constant(words(60), 1),
        constant(words(60), 3),
        constant(words(60), 2),
        entry(&["k"], &words(10)),
    ]);
    let opts = LintOptions {
        budget: Some(100),
        ..Default::default()
    };
    let fs = lint_with(&b, &opts);
    let plan = fs.iter().find(|f| f.code == "lore-budget-plan").unwrap();
    let p = plan.budget.as_ref().unwrap();
    assert_eq!(p.limit, 100);
    assert_eq!(
        p.constant,
        p.entries[0].tokens + p.entries[1].tokens + p.entries[2].tokens
    );
    assert_eq!(p.triggered_max, p.entries[3].tokens);
    assert_eq!(p.total, p.constant + p.triggered_max);
    let over = fs
        .iter()
        .find(|f| f.code == "lore-constant-over-budget")
        .unwrap();
    // Priority 3 (#1) fits; #2 (priority 2) ends the budget, #0 after it.
    assert!(
        over.message
            .ends_with("2 dropped on every turn, in this order: #2, #0"),
        "{}",
        over.message
    );
    // The default limit: 25% of the max context, capped.
    let opts = LintOptions {
        max_context: 400,
        budget_cap: Some(90),
        ..Default::default()
    };
    assert_eq!(LintOptions::default().limit(&b), 2048);
    let fs = lint_with(&b, &opts);
    assert_eq!(
        fs.iter()
            .find(|f| f.code == "lore-budget-plan")
            .unwrap()
            .budget
            .as_ref()
            .unwrap()
            .limit,
        90
    );
    // The JSON shape of issue 27.
    let v = serde_json::to_value(plan).unwrap();
    assert_eq!(
        v.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["severity", "code", "path", "entry", "message", "budget"]
    );
    assert_eq!(
        v["budget"].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["limit", "constant", "triggered_max", "total", "entries"]
    );
}

fn card_with(first_mes: &str, ext_key: Option<&str>) -> Card {
    let mut c = Card::new("Aqua");
    c.data.first_mes = first_mes.into();
    if let Some(k) = ext_key {
        c.data.extensions.insert(k.into(), json!({}));
    }
    c
}

fn lint_app(c: &Card, app: Option<App>) -> Vec<Finding> {
    lint_card(
        c,
        &LintOptions {
            app,
            ..Default::default()
        },
        &*tok(),
    )
}

#[test]
fn macros_per_dialect() {
    // RisuAI src/ts/cbs.ts defines `arraylength` and `#when`; SillyTavern's macro definitions
    // define `noop` and its `if` (which also reads `{{#if}}`); ccv3-cbs catalog.
    let c = card_with(
        "{{#when x}}a{{/when}} {{arraylength::[]}} {{noop}} {{#if 1}}b{{/if}} {{nosuchmacro}}",
        None,
    );
    let st = lint_app(&c, Some(App::SillyTavern));
    let other: Vec<&str> = st
        .iter()
        .filter(|f| f.code == "cbs-other-dialect")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(other.len(), 2, "{other:?}");
    assert!(other.iter().all(|m| m.contains("RisuAI")));
    assert_eq!(with(&st, "cbs-unknown-macro").len(), 1);
    let risu = lint_app(&c, Some(App::Risu));
    let other: Vec<&str> = risu
        .iter()
        .filter(|f| f.code == "cbs-other-dialect")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(other.len(), 1, "{other:?}");
    assert!(other[0].contains("{{noop}}") && other[0].contains("SillyTavern"));
    // The card's own application: RisuAI's extension.
    let own = lint_app(&card_with("{{arraylength::[]}}", Some("risuai")), None);
    assert!(own.iter().all(|f| !f.code.starts_with("cbs-")));
    assert_eq!(own.len(), 0);
}

#[test]
fn unclosed_block() {
    // RisuAI parser.svelte.ts blockStartMatcher / blockEndMatcher: a block needs its end.
    let c = card_with("{{#when x}}never closed", None);
    let fs = lint_app(&c, Some(App::Risu));
    assert_eq!(with(&fs, "cbs-unclosed-block"), [(None, Severity::Error)]);
    assert_eq!(fs[0].path, "data.first_mes");
}

#[test]
fn decorators() {
    // SPEC_V3 "Decorators" (the spec's list and `@@@` fallbacks); RisuAI's own decorators
    // (lorebook.svelte.ts); SillyTavern honours only @@activate/@@dont_activate (world-info.js).
    let b = book(vec![
        entry(&["a"], "@@no_such_thing\nx"),
        entry(&["b"], "@@no_such_thing\n@@@activate\ny"),
        entry(&["c"], "@@depth 4\nz"),
        entry(&["d"], "@@match_full_word\nw"),
    ]);
    let spec = lint(&b);
    assert_eq!(with(&spec, "decorator-unknown"), [(Some(0), W)]);
    assert!(with(&spec, "decorator-ignored-by-app").is_empty());
    let st = lint_with(
        &b,
        &LintOptions {
            app: Some(App::SillyTavern),
            ..Default::default()
        },
    );
    let ignored: Vec<&Finding> = st
        .iter()
        .filter(|f| f.code == "decorator-ignored-by-app")
        .collect();
    assert_eq!(
        ignored.iter().map(|f| f.entry).collect::<Vec<_>>(),
        [Some(1), Some(2), Some(3)]
    );
    assert!(ignored[0].message.contains("fallback @@@activate"));
    assert!(ignored[1].message.contains("no fallback"));
    let risu = lint_with(
        &b,
        &LintOptions {
            app: Some(App::Risu),
            ..Default::default()
        },
    );
    assert_eq!(
        with(&risu, "decorator-ignored-by-app").len(),
        1,
        "only @@no_such_thing with its fallback"
    );
}

#[test]
fn findings_serialise_as_issue_27_says() {
    let b = book(vec![entry(&[], "lonely")]);
    let f = lint(&b)
        .into_iter()
        .find(|f| f.code == "lore-entry-no-keys")
        .unwrap();
    let mut f = f;
    f.file = Some("book.json".into());
    let v = serde_json::to_value(&f).unwrap();
    assert_eq!(
        v.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["file", "severity", "code", "path", "entry", "message"]
    );
    assert_eq!(v["severity"], "warning");
    assert_eq!(v["entry"], 0);
    assert_eq!(v["path"], "data.entries[0].keys");
}
