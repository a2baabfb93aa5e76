//! Issue 14: the engine follows SillyTavern's World Info documentation
//! (docs.sillytavern.app, "World Info") where it disagreed, and reads every setting.

use super::*;

// ---- Timed Effects Rules, rule 4: "Making any changes to the entry that is currently on timed
// effect will cause the effect to be forcibly removed." ----

#[test]
fn st_doc_timed_effects_any_edit_of_the_entry_ends_its_effect() {
    let sticky = ext(entry(&["dragon"], "D"), json!({"sticky": 5}));
    let b = book(vec![sticky.clone()]);
    let first = run(&b, &timeline_chat(1), &ScanState::default(), &all());
    assert_eq!(first.state.sticky.len(), 1);
    let quiet = chat(&[
        (Role::User, "dragon"),
        (Role::User, "nothing"),
        (Role::User, "nothing"),
    ]);
    // Unchanged: still sticky on the next message without the key.
    let same = run(&b, &quiet, &first.state, &all());
    assert_eq!(same.reasons, ["sticky"]);
    // Each edit (not only keys, content, comment or name) ends the effect.
    let edits = [
        with(sticky.clone(), json!({"insertion_order": 7})),
        with(sticky.clone(), json!({"priority": 3})),
        with(sticky.clone(), json!({"position": "before_char"})),
        with(sticky.clone(), json!({"case_sensitive": true})),
        with(sticky.clone(), json!({"selective": true})),
        with(sticky.clone(), json!({"id": 9})),
        with(sticky.clone(), json!({"x_unknown": 1})),
        ext(sticky.clone(), json!({"sticky": 6})),
        ext(sticky.clone(), json!({"depth": 2})),
        ext(sticky.clone(), json!({"group": "g"})),
    ];
    for (i, edited) in edits.into_iter().enumerate() {
        let b2 = book(vec![edited]);
        let o = run(&b2, &quiet, &first.state, &all());
        assert!(o.act.is_empty(), "edit {i}: still {:?}", o.reasons);
        assert!(o.state.sticky.is_empty(), "edit {i}");
    }
}

#[test]
fn st_doc_timed_effects_identical_entries_keep_distinct_identities() {
    // Two identical entries still have two identities (a counter tells them apart).
    let e = ext(entry(&["dragon"], "D"), json!({"sticky": 2}));
    let b = book(vec![e.clone(), e]);
    let o = run(&b, &timeline_chat(1), &ScanState::default(), &all());
    assert_eq!(o.state.sticky.len(), 2);
}

// ---- "Use Group Scoring": the number of activated keys decides; constant and `@@activate`
// members are scored by their keys like any other member. ----

fn scoring() -> ScanOptions {
    ScanOptions {
        group_scoring: true,
        ..all()
    }
}

#[test]
fn st_doc_group_scoring_counts_the_keys_of_constant_members() {
    // The constant member finds 3 keys, the keyed one 2: the constant one wins, every seed.
    let b = book(vec![
        ext(entry(&["song", "sing"], "keyed"), json!({"group": "songs"})),
        with(
            ext(
                entry(&["song", "sing", "ghosts"], "constant"),
                json!({"group": "songs"}),
            ),
            json!({"constant": true}),
        ),
    ]);
    for seed in 0..10 {
        let o = run(
            &b,
            &user("sing me a song about ghosts"),
            &ScanState::default(),
            &ScanOptions { seed, ..scoring() },
        );
        assert_eq!(o.act, [1], "seed {seed}");
    }
    // With fewer of its keys found than the other member, the constant one loses.
    let b = book(vec![
        ext(
            entry(&["song", "sing", "ghosts"], "keyed"),
            json!({"group": "songs"}),
        ),
        with(
            ext(entry(&["dance"], "constant"), json!({"group": "songs"})),
            json!({"constant": true}),
        ),
    ]);
    let o = run(
        &b,
        &user("sing me a song about ghosts"),
        &ScanState::default(),
        &scoring(),
    );
    assert_eq!(o.act, [0]);
    assert!(reason_of(&o, 1).starts_with("group"), "{:?}", o.rej);
}

#[test]
fn st_doc_group_scoring_counts_the_keys_of_activate_decorator_members() {
    let b = book(vec![
        ext(entry(&["song"], "keyed"), json!({"group": "songs"})),
        ext(
            entry(&["song", "sing"], "@@activate\nforced"),
            json!({"group": "songs"}),
        ),
    ]);
    for seed in 0..10 {
        let o = run(
            &b,
            &user("sing me a song"),
            &ScanState::default(),
            &ScanOptions { seed, ..scoring() },
        );
        assert_eq!(o.act, [1], "seed {seed}");
    }
    // Secondary keys count as for keyed members (AND ANY: each one found).
    let b = book(vec![
        ext(entry(&["song", "sing"], "keyed"), json!({"group": "songs"})),
        with(
            ext(
                entry(&["song"], "@@activate\nforced"),
                json!({"group": "songs"}),
            ),
            json!({"selective": true, "secondary_keys": ["ghosts", "about"]}),
        ),
    ]);
    let o = run(
        &b,
        &user("sing me a song about ghosts"),
        &ScanState::default(),
        &scoring(),
    );
    assert_eq!(o.act, [1]);
}

// ---- "Triggers": an entry with generation types is activated only for those; nothing
// selected, every type. ----

#[test]
fn st_doc_triggers_limit_entries_to_their_generation_types() {
    let b = book(vec![
        ext(entry(&["dragon"], "C"), json!({"triggers": ["continue"]})),
        ext(
            entry(&["dragon"], "N"),
            json!({"triggers": ["normal", "swipe"]}),
        ),
        entry(&["dragon"], "any"),
    ]);
    let c = user("a dragon");
    // The default generation type is `normal`.
    let o = scan(&b, &c);
    assert_eq!(o.act, [1, 2]);
    assert_eq!(reason_of(&o, 0), "trigger");
    let for_type = |t: Trigger| {
        run(
            &b,
            &c,
            &ScanState::default(),
            &ScanOptions {
                trigger: t,
                ..all()
            },
        )
        .act
    };
    assert_eq!(for_type(Trigger::Continue), [0, 2]);
    assert_eq!(for_type(Trigger::Swipe), [1, 2]);
    for t in [Trigger::Impersonate, Trigger::Regenerate, Trigger::Quiet] {
        assert_eq!(for_type(t), [2], "{t:?}");
    }
    assert_eq!(Trigger::parse("Regenerate"), Some(Trigger::Regenerate));
    assert_eq!(Trigger::parse("bogus"), None);
    for t in Trigger::ALL {
        assert_eq!(Trigger::parse(t.as_str()), Some(t));
    }
}

// ---- Activation Settings: "Budget Cap" caps the budget of all books. ----

#[test]
fn st_doc_budget_cap_caps_the_budget_of_all_books() {
    let b = book(vec![
        with(
            entry(&["dragon"], "aaaa bbbb cccc dddd"),
            json!({"insertion_order": 2}),
        ),
        with(
            entry(&["dragon"], "eeee ffff gggg hhhh"),
            json!({"insertion_order": 1}),
        ),
    ]);
    let c = user("a dragon");
    let one = scan(&b, &c);
    assert_eq!(one.act.len(), 2);
    let per_entry = one.tokens / 2;
    let capped = |cap: Option<usize>, budget: Option<usize>| {
        run(
            &b,
            &c,
            &ScanState::default(),
            &ScanOptions {
                budget_cap: cap,
                token_budget: budget,
                ..all()
            },
        )
        .act
        .len()
    };
    assert_eq!(capped(Some(per_entry), None), 1);
    assert_eq!(capped(Some(per_entry), Some(10 * per_entry)), 1);
    assert_eq!(capped(Some(10 * per_entry), Some(per_entry)), 1);
    assert_eq!(capped(Some(10 * per_entry), None), 2);
}
