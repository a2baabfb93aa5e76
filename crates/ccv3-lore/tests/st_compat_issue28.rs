//! Issue 28, "Compat mode: three departures": cases where `Compat::SillyTavern` differed from
//! SillyTavern's own `checkWorldInfo`, found by an independent harness running SillyTavern's
//! unmodified `public/scripts/world-info.js`. Each test names the line of that file (the
//! `sillytavern` 1.16.0 npm release, whose scan is 1.15's, or of the 1.19.0 release:
//! docs/sillytavern-compat.md) whose behaviour it pins down.

use ccv3_lore::chat::{Chat, Message, Role};
use ccv3_lore::{
    BookInput, BookKind, Compat, LorebookCompiler, ScanOptions, ScanState, Strategy, Trigger,
};
use serde_json::{json, Value};

/// Scans the World Info `entries` against a one-message chat `text`; returns the activations
/// in prompt order as `position:index` and the rejections as `index: reason`.
fn scan(entries: Value, text: &str, opts: &ScanOptions) -> (Vec<String>, Vec<String>) {
    scan_as(entries, text, opts, false)
}

/// [`scan`], with the book marked as read from a World Info file as stored (`world_info`).
fn scan_as(
    entries: Value,
    text: &str,
    opts: &ScanOptions,
    world_info: bool,
) -> (Vec<String>, Vec<String>) {
    let mut diags = Vec::new();
    let (book, _) =
        ccv3::lorebook::read_lorebook_value(json!({ "entries": entries }), &mut diags).unwrap();
    let compiled = LorebookCompiler::new().compile(&[BookInput {
        book: &book,
        kind: BookKind::Global,
        name: "w".into(),
        world_info,
    }]);
    let chat = Chat::from(vec![Message::new(Role::User, text)]);
    let r = compiled.scan(&chat, &ScanState::default(), opts, &ccv3_tokens::Estimate);
    (
        r.activated
            .iter()
            .map(|a| format!("{}:{}", a.position.as_str(), a.entry.index))
            .collect(),
        r.rejected
            .iter()
            .map(|r| format!("{}: {}", r.entry.index, r.reason))
            .collect(),
    )
}

fn compat(opts: ScanOptions) -> ScanOptions {
    ScanOptions {
        compat: Compat::SillyTavern,
        ..opts
    }
}

#[test]
fn triggers_filter_the_generation_type() {
    // world-info.js 1.16.0, lines 4607-4614: an entry whose `triggers` is a non-empty array is
    // skipped (`continue`) unless it holds `globalScanData.trigger` (`normal` for a plain
    // generation).
    let entries = json!({"0": {"uid": 0, "key": ["apple"], "content": "A", "order": 100,
        "position": 0, "triggers": ["continue"]},
        "1": {"uid": 1, "key": ["apple"], "content": "B", "order": 200, "position": 0,
        "triggers": []}});
    let normal = ScanOptions::default();
    let (st, st_rejected) = scan(entries.clone(), "apple", &compat(normal.clone()));
    assert_eq!(st, ["before_char:1"]);
    assert_eq!(st_rejected, ["0: trigger"]);
    assert_eq!(scan(entries.clone(), "apple", &normal).0, st);
    let cont = ScanOptions {
        trigger: Trigger::Continue,
        ..Default::default()
    };
    let (st, _) = scan(entries.clone(), "apple", &compat(cont.clone()));
    assert_eq!(st, ["before_char:0", "before_char:1"]);
    assert_eq!(scan(entries, "apple", &cont).0, st);
}

#[test]
fn ignore_budget_entries_pass_a_spent_budget() {
    // world-info.js 1.16.0, line 4855: the budget check is skipped for `ignoreBudget` entries;
    // lines 4811-4821: after an overflow the walk `continue`s past the other entries while an
    // `ignoreBudget` one is left, then `break`s. The entries it passed over or stopped before
    // are cut by the budget (not "no key matched").
    let big = "K".repeat(40);
    let opts = ScanOptions {
        token_budget: Some(4),
        ..Default::default()
    };
    // Activation order: order highest first. 0 overflows; 1 (ignoreBudget) is still added;
    // 2 is cut.
    let entries = json!({
        "0": {"uid": 0, "key": ["apple"], "content": big, "order": 300, "position": 0},
        "1": {"uid": 1, "key": ["apple"], "content": "B", "order": 200, "position": 0,
              "ignoreBudget": true},
        "2": {"uid": 2, "key": ["apple"], "content": "C", "order": 100, "position": 0}});
    let (st, st_rejected) = scan(entries.clone(), "apple", &compat(opts.clone()));
    assert_eq!(st, ["before_char:1"]);
    assert_eq!(st_rejected, ["0: budget (12 tokens)", "2: budget"]);
    assert_eq!(scan(entries, "apple", &opts).0, st);
    // 1 comes after the overflow and before an `ignoreBudget` entry: passed over, cut.
    let entries = json!({
        "0": {"uid": 0, "key": ["apple"], "content": big, "order": 300, "position": 0},
        "1": {"uid": 1, "key": ["apple"], "content": "C", "order": 200, "position": 0},
        "2": {"uid": 2, "key": ["apple"], "content": "B", "order": 100, "position": 0,
              "ignoreBudget": true}});
    let (st, st_rejected) = scan(entries.clone(), "apple", &compat(opts.clone()));
    assert_eq!(st, ["before_char:2"]);
    assert_eq!(st_rejected, ["0: budget (12 tokens)", "1: budget"]);
    assert_eq!(scan(entries, "apple", &opts).0, st);
}

#[test]
fn world_info_entry_without_position_is_activated_and_placed_nowhere() {
    // world-info.js 1.19.0, lines 5212-5262: the placement `switch (entry.position)` has cases
    // for 0-7 only (compared with `===`) and a `default: break`; an entry without `position`
    // (a native World Info file stored as written: only the editor fills missing fields) is
    // still activated, counted in the budget and given its timed effects (line 5274), but put
    // in no prompt slot. So is one whose position is text ("1") or no slot number (9).
    let entries = json!({
        "0": {"uid": 0, "key": ["apple"], "content": "A", "order": 100},
        "1": {"uid": 1, "key": ["apple"], "content": "B", "order": 200, "position": 0},
        "2": {"uid": 2, "key": ["apple"], "content": "C", "order": 300, "position": "1"},
        "3": {"uid": 3, "key": ["apple"], "content": "D", "order": 400, "position": 9},
        "4": {"uid": 4, "key": ["apple"], "content": "E", "order": 500, "position": 4,
              "depth": 2},
        "5": {"uid": 5, "key": ["apple"], "content": "F", "order": 50,
              "extensions": {"position": 0}}});
    let opts = compat(ScanOptions::default());
    let (st, rejected) = scan_as(entries.clone(), "apple", &opts, true);
    // 5's own `extensions.position` is not the `position` the switch reads.
    assert_eq!(
        st,
        [
            "before_char:1",
            "at_depth:4",
            "nowhere:5",
            "nowhere:0",
            "nowhere:2",
            "nowhere:3"
        ]
    );
    assert!(rejected.is_empty(), "{rejected:?}");
    // A book not read from a World Info file (a card's book: SillyTavern's card import writes
    // every entry a position, `after` when it has none, line 5636) keeps the old placement.
    let (card, _) = scan_as(entries, "apple", &opts, false);
    assert_eq!(
        card,
        [
            "before_char:5",
            "before_char:1",
            "after_char:0",
            "after_char:2",
            "after_char:3",
            "at_depth:4"
        ]
    );
}

#[test]
fn world_info_entry_placed_nowhere_still_takes_budget() {
    // world-info.js 1.19.0: the budget walk (lines 5017-5075) runs before placement, so an
    // unplaced entry spends budget like any other.
    let big = "K".repeat(40);
    let entries = json!({
        "0": {"uid": 0, "key": ["apple"], "content": big, "order": 300},
        "1": {"uid": 1, "key": ["apple"], "content": "B", "order": 200, "position": 0}});
    let opts = compat(ScanOptions {
        token_budget: Some(4),
        ..Default::default()
    });
    let (st, rejected) = scan_as(entries, "apple", &opts, true);
    assert!(st.is_empty(), "{st:?}");
    assert_eq!(rejected, ["0: budget (12 tokens)", "1: budget"]);
}

/// Scans the World Info book `world` (named `name`) against `n` messages without a key,
/// starting from SillyTavern's `timedWorldInfo`; returns activations and rejections as [`scan`]
/// does, and the next state's sticky and cooldown records as `entry: start-end`.
fn scan_timed(
    name: &str,
    world: Value,
    n: usize,
    timed: &Value,
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let mut diags = Vec::new();
    let (book, _) = ccv3::lorebook::read_lorebook_value(world, &mut diags).unwrap();
    let compiled = LorebookCompiler::new().compile(&[BookInput {
        book: &book,
        kind: BookKind::Global,
        name: name.into(),
        world_info: true,
    }]);
    let state = compiled.st_timed_state(timed);
    let chat = Chat::from(
        (0..n)
            .map(|i| Message::new(Role::User, format!("tea {i}")))
            .collect::<Vec<_>>(),
    );
    let opts = compat(ScanOptions {
        explain_all: true,
        ..Default::default()
    });
    let r = compiled.scan(&chat, &state, &opts, &ccv3_tokens::Estimate);
    let records = |m: &std::collections::BTreeMap<String, ccv3_lore::TimedRecord>, kind: &str| {
        m.values()
            .map(|t| format!("{kind} {}: {}-{}", t.entry, t.start, t.end))
            .collect::<Vec<_>>()
    };
    let mut next = records(&r.state.sticky, "sticky");
    next.extend(records(&r.state.cooldown, "cooldown"));
    (
        r.activated
            .iter()
            .map(|a| format!("{}:{}", a.position.as_str(), a.entry.index))
            .collect(),
        r.rejected
            .iter()
            .map(|r| format!("{}: {}", r.entry.index, r.reason))
            .collect(),
        next,
    )
}

#[test]
fn sillytavern_timed_world_info_is_the_scan_state() {
    // world-info.js 1.19.0: records are keyed `${entry.world}.${entry.uid}` (line 594) and
    // written `{hash, start, end, protected}` with `end = start + N` (lines 605-610);
    // `#checkTimedEffectOfType` (lines 619-656) drops a record whose chat did not advance
    // unless protected, applies one while `chat.length < end`, and when a sticky one ends puts
    // an entry with a cooldown on a protected cooldown at once (lines 519-530).
    let world = json!({"entries": {
        "5": {"uid": 5, "key": ["apple"], "content": "S", "order": 100, "position": 0,
              "sticky": 3, "cooldown": 2},
        "7": {"uid": 7, "key": ["tea"], "content": "C", "order": 90, "position": 0,
              "cooldown": 4}}});
    // As SillyTavern writes them (chat_metadata.timedWorldInfo after the scan at length 2).
    let timed = json!({"timedWorldInfo": {
        "sticky": {"my.world.5": {"hash": 1_234_567_890, "start": 2, "end": 5, "protected": false}},
        "cooldown": {
            "my.world.5": {"hash": 1_234_567_890, "start": 2, "end": 4, "protected": false},
            "my.world.7": {"hash": -98_765, "start": 2, "end": 6, "protected": false},
            "other.3": {"hash": 5, "start": 0, "end": 99, "protected": false}}}});
    // Length 3: 5 is sticky (its cooldown does not block a sticky entry), 7 cools down.
    let (on, off, next) = scan_timed("my.world", world.clone(), 3, &timed);
    assert_eq!(on, ["before_char:0"]);
    assert!(off.contains(&"1: cooldown".to_string()), "{off:?}");
    assert_eq!(
        next,
        [
            "sticky my.world#0: 2-5",
            "cooldown my.world#0: 2-4",
            "cooldown my.world#1: 2-6"
        ]
    );
    // Length 5: the sticky period is over; 5 goes on a protected cooldown from now (5-7).
    let (on, off, next) = scan_timed("my.world", world.clone(), 5, &timed);
    assert!(on.is_empty(), "{on:?}");
    assert!(off.contains(&"0: cooldown".to_string()), "{off:?}");
    assert!(
        next.contains(&"cooldown my.world#0: 5-7".to_string()),
        "{next:?}"
    );
    // Length 2: the chat did not advance past `start`: the records are dropped, and 7's key
    // matches again.
    let (on, _, _) = scan_timed("my.world", world.clone(), 2, &timed);
    assert_eq!(on, ["before_char:1"]);
    // Another book name: no record is this book's.
    let (on, _, _) = scan_timed("other", world, 3, &timed);
    assert_eq!(on, ["before_char:1"]);
}

#[test]
fn sillytavern_activated_set_settles_its_random_draws() {
    // world-info.js 1.19.0: a probability below 100 is rolled with `Math.random() * 100`
    // (line 5041) and an inclusion group without override or scoring draws its winner by
    // weight with `Math.random()` (`filterByInclusionGroups`, line 5453); the entries it activated are
    // `allActivatedEntries`, keyed `${entry.world}.${entry.uid}` (line 5075). Given that set,
    // compat mode takes those outcomes; which entries matched is still its own finding.
    let entries = json!({
        "0": {"uid": 0, "key": ["apple"], "content": "A", "order": 100, "position": 0,
              "useProbability": true, "probability": 30},
        "1": {"uid": 1, "key": ["apple"], "content": "B", "order": 90, "position": 0,
              "useProbability": true, "probability": 30},
        "2": {"uid": 2, "key": ["apple"], "content": "C", "order": 80, "position": 0,
              "group": "g", "group_weight": 50},
        "3": {"uid": 3, "key": ["apple"], "content": "D", "order": 70, "position": 0,
              "group": "g", "group_weight": 50},
        "4": {"uid": 4, "key": ["pear"], "content": "E", "order": 60, "position": 0}});
    let with = |keys: &[&str]| {
        compat(ScanOptions {
            st_activated: Some(std::sync::Arc::new(
                keys.iter().map(|k| k.to_string()).collect(),
            )),
            ..Default::default()
        })
    };
    let (on, off) = scan_as(
        entries.clone(),
        "apple",
        &with(&["w.1", "w.3", "w.4"]),
        true,
    );
    assert_eq!(on, ["before_char:3", "before_char:1"]);
    assert_eq!(off, ["0: probability roll 100.0 >= 30", "2: group \"g\""]);
    let (on, _) = scan_as(entries.clone(), "apple", &with(&["w.0", "w.2"]), true);
    assert_eq!(on, ["before_char:2", "before_char:0"]);
    // No group member activated (its winner fell later): every member loses.
    let (on, off) = scan_as(entries, "apple", &with(&[]), true);
    assert!(on.is_empty(), "{on:?}");
    assert!(off.contains(&"3: group \"g\"".to_string()), "{off:?}");
}

/// Scans World Info books `(name, kind, entries)` in `strategy` against "apple"; returns the
/// activations as `book:index` in SillyTavern's activation order (the order of the budget walk,
/// seen through a budget that keeps only the first entries).
fn order_of(books: &[(&str, BookKind, Value)], strategy: Strategy, keep: usize) -> Vec<String> {
    let read: Vec<_> = books
        .iter()
        .map(|(_, _, e)| {
            let mut d = Vec::new();
            ccv3::lorebook::read_lorebook_value(json!({ "entries": e }), &mut d)
                .unwrap()
                .0
        })
        .collect();
    let inputs: Vec<BookInput> = books
        .iter()
        .zip(&read)
        .map(|((name, kind, _), book)| BookInput {
            book,
            kind: *kind,
            name: name.to_string(),
            world_info: true,
        })
        .collect();
    let compiled = LorebookCompiler::new().strategy(strategy).compile(&inputs);
    let chat = Chat::from(vec![Message::new(Role::User, "apple")]);
    // The walk counts each content with a newline, and stops when the total reaches the budget.
    let budget =
        ccv3_tokens::Tokenizer::count(&ccv3_tokens::Estimate, &"XXXXXXXXXX\n".repeat(keep + 1));
    let opts = compat(ScanOptions {
        token_budget: Some(budget),
        ..Default::default()
    });
    let r = compiled.scan(&chat, &ScanState::default(), &opts, &ccv3_tokens::Estimate);
    let mut on: Vec<_> = r
        .activated
        .iter()
        .map(|a| {
            (
                a.order,
                format!("{}:{}", books[a.entry.book].0, a.entry.index),
            )
        })
        .collect();
    on.sort_by(|a, b| b.0.total_cmp(&a.0));
    on.into_iter().map(|x| x.1).collect()
}

#[test]
fn books_are_ordered_as_sillytavern_sorts_them() {
    // world-info.js 1.19.0, `getSortedEntries` lines 4608-4625: evenly sorts
    // `[...globalLore, ...characterLore]` by order (highest first, stably: on a tie the global
    // entry first); character first and global first sort each lore on its own and put one
    // before the other; chat lore, then persona lore, go before all of them.
    let one = |order: u32| json!({"0": {"uid": 0, "key": ["apple"], "content": "XXXXXXXXXX", "order": order, "position": 0}});
    let books = [
        ("char", BookKind::Character, one(100)),
        ("global", BookKind::Global, one(100)),
        ("chat", BookKind::Chat, one(10)),
        ("persona", BookKind::Persona, one(20)),
    ];
    let order = |s, keep| order_of(&books, s, keep);
    // The budget keeps the first 3 of the walk: chat, persona, then the strategy's first.
    assert_eq!(
        order(Strategy::CharacterFirst, 3),
        ["char:0", "persona:0", "chat:0"]
    );
    assert_eq!(
        order(Strategy::GlobalFirst, 3),
        ["global:0", "persona:0", "chat:0"]
    );
    assert_eq!(
        order(Strategy::Evenly, 3),
        ["global:0", "persona:0", "chat:0"]
    );
}
