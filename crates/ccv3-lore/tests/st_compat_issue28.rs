//! Issue 28, "Compat mode: three departures": cases where `Compat::SillyTavern` differed from
//! SillyTavern's own `checkWorldInfo`, found by an independent harness running SillyTavern's
//! unmodified `public/scripts/world-info.js`. Each test names the line of that file (the
//! `sillytavern` 1.16.0 npm release, whose scan is 1.15's, or of the 1.19.0 release:
//! docs/sillytavern-compat.md) whose behaviour it pins down.

use ccv3_lore::chat::{Chat, Message, Role};
use ccv3_lore::{BookInput, BookKind, Compat, LorebookCompiler, ScanOptions, ScanState, Trigger};
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
              "depth": 2}});
    let opts = compat(ScanOptions::default());
    let (st, rejected) = scan_as(entries.clone(), "apple", &opts, true);
    assert_eq!(
        st,
        ["before_char:1", "at_depth:4", "nowhere:0", "nowhere:2", "nowhere:3"]
    );
    assert!(rejected.is_empty(), "{rejected:?}");
    // A book not read from a World Info file (a card's book: SillyTavern's card import writes
    // every entry a position, `after` when it has none, line 5636) keeps the old placement.
    let (card, _) = scan_as(entries, "apple", &opts, false);
    assert_eq!(
        card,
        ["before_char:1", "after_char:0", "after_char:2", "after_char:3", "at_depth:4"]
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
