//! Issue 14: each place where `Compat::SillyTavern` departs from the default mode, one test with
//! both sides (listed in `docs/sillytavern-compat.md`). The SillyTavern side of each case is what
//! SillyTavern's own `checkWorldInfo` returned for the same book and chat under
//! `scripts/st-compare` (the harness); the default side is the spec / SillyTavern's documentation.

use ccv3_lore::chat::{Chat, Message, Role};
use ccv3_lore::{
    Activation, BookInput, BookKind, Compat, LorebookCompiler, ScanOptions, ScanState,
};
use serde_json::{json, Value};

/// Scans World Info `entries` over `turns` (each a chat, oldest message first, users and the
/// character taking turns) and returns each scan's activations in prompt order, as
/// `position:index` (`before_char:1`).
fn scan(entries: Value, turns: &[&[&str]], opts: &ScanOptions, compat: Compat) -> Vec<Vec<String>> {
    scan_shown(entries, turns, opts, compat, |a| {
        format!("{}:{}", a.position.as_str(), a.entry.index)
    })
}

/// [`scan`], each activation written by `show`.
fn scan_shown(
    entries: Value,
    turns: &[&[&str]],
    opts: &ScanOptions,
    compat: Compat,
    show: impl Fn(&Activation<'_>) -> String,
) -> Vec<Vec<String>> {
    let mut diags = Vec::new();
    let (book, _) =
        ccv3::lorebook::read_lorebook_value(json!({ "entries": entries }), &mut diags).unwrap();
    let compiled = LorebookCompiler::new().compile(&[BookInput {
        book: &book,
        kind: BookKind::Global,
        name: "w".into(),
        world_info: false,
    }]);
    let opts = ScanOptions {
        compat,
        ..opts.clone()
    };
    let mut state = ScanState::default();
    let mut out = Vec::new();
    for turn in turns {
        let chat = Chat::from(
            turn.iter()
                .enumerate()
                .map(|(i, c)| {
                    let (role, name) = if i % 2 == 0 {
                        (Role::User, "User")
                    } else {
                        (Role::Assistant, "Char")
                    };
                    let mut m = Message::new(role, c);
                    m.name = Some(name.into());
                    m
                })
                .collect::<Vec<_>>(),
        );
        let r = compiled.scan(&chat, &state, &opts, &ccv3_tokens::Estimate);
        state = r.state.clone();
        out.push(r.activated.iter().map(&show).collect());
    }
    out
}

fn both(
    entries: Value,
    turns: &[&[&str]],
    opts: ScanOptions,
) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    (
        scan(entries.clone(), turns, &opts, Compat::Spec),
        scan(entries, turns, &opts, Compat::SillyTavern),
    )
}

fn v(items: &[&[&str]]) -> Vec<Vec<String>> {
    items
        .iter()
        .map(|t| t.iter().map(|s| s.to_string()).collect())
        .collect()
}

#[test]
fn equal_order_prompt_order() {
    let (spec, st) = both(
        json!({"0": {"uid": 0, "key": ["apple"], "content": "A", "order": 100, "position": 0},
               "1": {"uid": 1, "key": ["pear"], "content": "B", "order": 100, "position": 0}}),
        &[&["apple pear"]],
        ScanOptions::default(),
    );
    // Spec: insertion order, then activation order. SillyTavern: reversed activation order.
    assert_eq!(spec, v(&[&["before_char:0", "before_char:1"]]));
    assert_eq!(st, v(&[&["before_char:1", "before_char:0"]]));
}

#[test]
fn sticky_is_one_message_shorter() {
    let turns: &[&[&str]] = &[
        &["apple"],
        &["apple", "x"],
        &["apple", "x", "y"],
        &["apple", "x", "y", "z"],
    ];
    let opts = ScanOptions {
        scan_depth: 1,
        ..Default::default()
    };
    let (spec, st) = both(
        json!({"0": {"uid": 0, "key": ["apple"], "content": "A", "order": 100, "position": 0, "sticky": 2}}),
        turns,
        opts,
    );
    // Documentation: sticky 2 keeps it for the next 2 messages. SillyTavern: for 1.
    assert_eq!(
        spec,
        v(&[
            &["before_char:0"],
            &["before_char:0"],
            &["before_char:0"],
            &[]
        ])
    );
    assert_eq!(st, v(&[&["before_char:0"], &["before_char:0"], &[], &[]]));
}

#[test]
fn cooldown_is_one_message_shorter() {
    let turns: &[&[&str]] = &[
        &["apple"],
        &["apple", "apple"],
        &["apple", "apple", "apple"],
        &["apple", "apple", "apple", "apple"],
    ];
    let opts = ScanOptions {
        scan_depth: 1,
        ..Default::default()
    };
    let (spec, st) = both(
        json!({"0": {"uid": 0, "key": ["apple"], "content": "A", "order": 100, "position": 0, "cooldown": 2}}),
        turns,
        opts,
    );
    assert_eq!(spec, v(&[&["before_char:0"], &[], &[], &["before_char:0"]]));
    assert_eq!(st, v(&[&["before_char:0"], &[], &["before_char:0"], &[]]));
}

#[test]
fn budget_boundary() {
    // 10 characters: 3 tokens (estimate); SillyTavern counts "content\n" (4 tokens) and stops
    // at `>=` the budget.
    let opts = ScanOptions {
        token_budget: Some(4),
        ..Default::default()
    };
    let (spec, st) = both(
        json!({"0": {"uid": 0, "key": ["apple"], "content": "AAAAAAAAAA", "order": 100, "position": 0}}),
        &[&["apple"]],
        opts,
    );
    assert_eq!(spec, v(&[&["before_char:0"]]));
    assert_eq!(st, v(&[&[]]));
}

/// Scans a CCV3 `character_book` with a `token_budget` of 1 against the chat `apple`, returning
/// the activations as `position:index`.
fn scan_book_with_own_budget(opts: &ScanOptions) -> Vec<String> {
    let book = ccv3::Lorebook::from_json(
        json!({"token_budget": 1, "extensions": {}, "entries": [
            {"keys": ["apple"], "content": "AAAAAAAAAA", "enabled": true, "insertion_order": 100,
             "use_regex": false, "extensions": {}, "position": "before_char"}]}),
        "",
        false,
        &mut Vec::new(),
    )
    .unwrap();
    let compiled = LorebookCompiler::new().compile(&[BookInput {
        book: &book,
        kind: BookKind::Character,
        name: "b".into(),
        world_info: false,
    }]);
    let chat = Chat::from(vec![Message::new(Role::User, "apple")]);
    let r = compiled.scan(&chat, &ScanState::default(), opts, &ccv3_tokens::Estimate);
    r.activated
        .iter()
        .map(|a| format!("{}:{}", a.position.as_str(), a.entry.index))
        .collect()
}

#[test]
fn book_token_budget_ignored() {
    // SillyTavern's World Info budget is one global setting (`world_info_budget`, a percentage of
    // the context, capped by `world_info_budget_cap`: public/scripts/world-info.js of 1.16.0,
    // `checkWorldInfo`); a book has no budget of its own. Compat mode therefore reads the budget
    // from the options only, while the default mode applies the book's `token_budget` too
    // (SPEC_V3 "token_budget"; docs/sillytavern-compat.md, docs/benchmarks.md).
    let spec = scan_book_with_own_budget(&ScanOptions::default());
    let st = scan_book_with_own_budget(&ScanOptions {
        compat: Compat::SillyTavern,
        ..Default::default()
    });
    assert_eq!(spec, Vec::<String>::new());
    assert_eq!(st, vec!["before_char:0".to_string()]);
    // The options' budget still applies in compat mode.
    let st_with_option = scan_book_with_own_budget(&ScanOptions {
        compat: Compat::SillyTavern,
        token_budget: Some(1),
        ..Default::default()
    });
    assert_eq!(st_with_option, Vec::<String>::new());
}

#[test]
fn budget_overflow_ends_the_scan() {
    // SillyTavern 1.14.0 and 1.16.0 (npm releases, under the harness): once an entry overflows
    // the budget, no entry of a later step is added, even one that would fit (SillyTavern's 2024
    // code activated `1` here, and compat mode followed it). Both modes now agree.
    let opts = ScanOptions {
        token_budget: Some(10),
        recursive: true,
        ..Default::default()
    };
    let (spec, st) = both(
        json!({"0": {"uid": 0, "key": ["apple"], "content": "KKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKK", "order": 100, "position": 0, "preventRecursion": true},
               "1": {"uid": 1, "key": ["apple"], "content": "B", "order": 200, "position": 0, "delayUntilRecursion": 2},
               "2": {"uid": 2, "key": ["zzz"], "content": "Z", "order": 100, "position": 0, "delayUntilRecursion": 1}}),
        &[&["apple"]],
        opts,
    );
    assert_eq!(spec, v(&[&[]]));
    assert_eq!(st, v(&[&[]]));
}

#[test]
fn constants_in_the_budget_walk() {
    let opts = ScanOptions {
        token_budget: Some(8),
        ..Default::default()
    };
    let (spec, st) = both(
        json!({"0": {"uid": 0, "key": ["apple"], "content": "KKKKKKKKKKKKKKKKKK", "order": 200, "position": 0},
               "1": {"uid": 1, "key": [], "constant": true, "content": "CCCCCCCCCCCCCCCCCC", "order": 10, "position": 0}}),
        &[&["apple"]],
        opts,
    );
    // Spec: constants are counted first. SillyTavern: in activation order (order, highest first).
    assert_eq!(spec, v(&[&["before_char:1"]]));
    assert_eq!(st, v(&[&["before_char:0"]]));
}

#[test]
fn entry_in_two_inclusion_groups() {
    let (spec, st) = both(
        json!({"0": {"uid": 0, "key": ["apple"], "content": "A", "order": 100, "position": 0, "group": "g1,g2"},
               "1": {"uid": 1, "key": ["apple"], "content": "B", "order": 100, "position": 0, "group": "g1", "groupOverride": true},
               "2": {"uid": 2, "key": ["apple"], "content": "C", "order": 100, "position": 0, "group": "g2", "groupOverride": true},
               "3": {"uid": 3, "key": ["apple"], "content": "D", "order": 100, "position": 0}}),
        &[&["apple"]],
        ScanOptions::default(),
    );
    // SillyTavern removes the entry that lost both groups twice: the second removal takes the
    // last entry of the step (D, in no group).
    assert_eq!(
        spec,
        v(&[&["before_char:1", "before_char:2", "before_char:3"]])
    );
    assert_eq!(st, v(&[&["before_char:2", "before_char:1"]]));
}

#[test]
fn group_loser_wins_a_later_pass() {
    let opts = ScanOptions {
        recursive: true,
        ..Default::default()
    };
    let (spec, st) = both(
        json!({"0": {"uid": 0, "key": ["apple"], "content": "A banana", "order": 100, "position": 0, "group": "g, h", "groupOverride": true},
               "1": {"uid": 1, "key": ["apple"], "content": "B", "order": 100, "position": 0, "group": "g"}}),
        &[&["apple"]],
        opts,
    );
    // SillyTavern blocks a group in later passes only when an activated entry's whole group
    // text equals the group's name ("g, h" is not "g"), so the loser comes back by recursion.
    assert_eq!(spec, v(&[&["before_char:0"]]));
    assert_eq!(st, v(&[&["before_char:1", "before_char:0"]]));
}

#[test]
fn scan_depth_zero_with_recursion() {
    let opts = ScanOptions {
        scan_depth: 0,
        recursive: true,
        ..Default::default()
    };
    let (spec, st) = both(
        json!({"0": {"uid": 0, "key": [], "constant": true, "content": "C apple", "order": 100, "position": 0},
               "1": {"uid": 1, "key": ["apple"], "content": "A", "order": 100, "position": 0}}),
        &[&["hello"]],
        opts,
    );
    // Documentation: depth 0 scans only recursion. SillyTavern: nothing at all.
    assert_eq!(spec, v(&[&["before_char:0", "before_char:1"]]));
    assert_eq!(st, v(&[&["before_char:0"]]));
}

#[test]
fn min_activations_depth() {
    let opts = ScanOptions {
        scan_depth: 1,
        min_activations: 1,
        min_activations_depth_max: 2,
        ..Default::default()
    };
    let (spec, st) = both(
        json!({"0": {"uid": 0, "key": ["apple"], "content": "A", "order": 100, "position": 0}}),
        &[&["apple", "x", "y"]],
        opts,
    );
    // SillyTavern scans one message past the max depth (it checks the depth before advancing).
    assert_eq!(spec, v(&[&[]]));
    assert_eq!(st, v(&[&["before_char:0"]]));
}

#[test]
fn invalid_regex_key_is_plain_text() {
    let (spec, st) = both(
        json!({"0": {"uid": 0, "key": ["/a(b/"], "content": "A", "order": 100, "position": 0}}),
        &[&["x /a(b/ y"]],
        ScanOptions::default(),
    );
    assert_eq!(spec, v(&[&[]]));
    assert_eq!(st, v(&[&["before_char:0"]]));
}

#[test]
fn missing_fields_decorators_and_word_boundaries() {
    let (spec, st) = both(
        json!({"0": {"uid": 0, "key": ["apple"], "content": "A", "order": 100, "position": 0, "probability": 0},
               "1": {"uid": 1, "key": ["apple"], "keysecondary": ["pear"], "content": "B", "order": 100, "position": 0},
               "2": {"uid": 2, "key": ["apple"], "content": "@@depth 1\nC", "order": 100, "position": 1},
               "3": {"uid": 3, "key": ["caf"], "content": "D", "order": 100, "position": 1}}),
        &[&["apple café"]],
        ScanOptions::default(),
    );
    // SillyTavern: no `useProbability` means no roll; no `selective` means the secondary keys
    // are not checked; `@@depth` is not one of its decorators (only `@@activate` and
    // `@@dont_activate` are); `\W` is ASCII, so `é` ends a word.
    assert_eq!(
        st,
        v(&[&[
            "before_char:1",
            "before_char:0",
            "after_char:3",
            "after_char:2"
        ]])
    );
    // Spec: `probability` 0 rolls (no `useProbability` reads as on), `@@depth` moves the entry
    // into the chat, and `é` is a letter.
    assert_eq!(spec, v(&[&["before_char:1", "at_depth:2"]]));
}

/// The reasons of one SillyTavern-mode scan of `entries` over `chat` (oldest message first),
/// with recursion, as `index: reason`, by entry index.
fn st_reasons(entries: Value, chat: &[&str]) -> Vec<String> {
    let opts = ScanOptions {
        recursive: true,
        ..ScanOptions::default()
    };
    let show = |a: &Activation<'_>| format!("{}: {}", a.entry.index, a.reason);
    let mut out = scan_shown(entries, &[chat], &opts, Compat::SillyTavern, show).remove(0);
    out.sort();
    out
}

/// SillyTavern matches keys in one text (the messages in depth, then the recursion steps'
/// contents, joined: `WorldInfoBuffer.get`), which says nothing of where a key was; the
/// explanation names the message or the entry that held it, as the default mode's does
/// (docs/sillytavern-compat.md, "Explanations").
#[test]
fn explanation_names_the_message_or_the_entry_that_held_the_key() {
    let reasons = st_reasons(
        json!({"0": {"uid": 0, "key": ["apple"], "content": "It grows on a pear tree.", "order": 100, "position": 0},
               "1": {"uid": 1, "key": ["pear"], "content": "B", "order": 100, "position": 0},
               "2": {"uid": 2, "key": ["plum"], "content": "C", "order": 100, "position": 0}}),
        &["a plum", "an apple"],
    );
    assert_eq!(
        reasons,
        [
            "0: key \"apple\" in message 1",
            "1: key \"pear\" in entry 0#0 (recursion)",
            "2: key \"plum\" in message 0",
        ]
    );
}
