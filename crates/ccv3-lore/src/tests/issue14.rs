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

// ---- "Character Filter": names or tags, include or exclude. ----

fn for_character(names: &[&str], tags: &[&str]) -> ScanOptions {
    ScanOptions {
        char_name: names.first().map_or(String::new(), |n| n.to_string()),
        character_names: names.iter().skip(1).map(|n| n.to_string()).collect(),
        character_tags: tags.iter().map(|t| t.to_string()).collect(),
        ..all()
    }
}

#[test]
fn st_doc_character_filter_names_include_and_exclude() {
    let b = book(vec![
        ext(
            entry(&["dragon"], "only Aqua"),
            json!({"character_filter": {"isExclude": false, "names": ["Aqua"], "tags": []}}),
        ),
        ext(
            entry(&["dragon"], "all but Aqua"),
            json!({"character_filter": {"isExclude": true, "names": ["Aqua"]}}),
        ),
        // An empty filter filters nothing.
        ext(
            entry(&["dragon"], "anyone"),
            json!({"character_filter": {"isExclude": false, "names": [], "tags": []}}),
        ),
    ]);
    let c = user("a dragon");
    let aqua = run(
        &b,
        &c,
        &ScanState::default(),
        &for_character(&["Aqua"], &[]),
    );
    assert_eq!(aqua.act, [0, 2]);
    assert_eq!(reason_of(&aqua, 1), "character filter");
    let other = run(
        &b,
        &c,
        &ScanState::default(),
        &for_character(&["Megumin"], &[]),
    );
    assert_eq!(other.act, [1, 2]);
    assert_eq!(reason_of(&other, 0), "character filter");
    // Another of the character's names (its file name, say) counts too.
    let by_file = run(
        &b,
        &c,
        &ScanState::default(),
        &for_character(&["Goddess", "Aqua"], &[]),
    );
    assert_eq!(by_file.act, [0, 2]);
}

#[test]
fn st_doc_character_filter_tags_include_and_exclude() {
    let b = book(vec![
        ext(
            entry(&["dragon"], "fantasy only"),
            json!({"character_filter": {"isExclude": false, "names": [], "tags": ["fantasy"]}}),
        ),
        ext(
            entry(&["dragon"], "not fantasy"),
            json!({"character_filter": {"isExclude": true, "tags": ["fantasy"]}}),
        ),
    ]);
    let c = user("a dragon");
    let tagged = run(
        &b,
        &c,
        &ScanState::default(),
        &for_character(&["Aqua"], &["fantasy"]),
    );
    assert_eq!(tagged.act, [0]);
    let untagged = run(
        &b,
        &c,
        &ScanState::default(),
        &for_character(&["Aqua"], &["scifi"]),
    );
    assert_eq!(untagged.act, [1]);
}

#[test]
fn st_doc_character_filter_from_world_info_and_card_books() {
    // A World Info file keeps `characterFilter` (the reader keeps it in the entry's stash);
    // SillyTavern keeps `character_filter` on a card book's entry.
    let wi = json!({"entries": {"0": {"uid": 0, "key": ["dragon"], "content": "D",
        "characterFilter": {"isExclude": false, "names": ["Aqua"], "tags": []}}}});
    let mut d = Vec::new();
    let wb = ccv3::lorebook::from_worldinfo(wi.as_object().unwrap().clone(), &mut d);
    let card = book(vec![with(
        entry(&["dragon"], "D"),
        json!({"character_filter": {"isExclude": true, "names": ["Aqua"]}}),
    )]);
    let c = user("a dragon");
    for (b, aqua, other) in [(&wb, vec![0], vec![]), (&card, vec![], vec![0])] {
        let a = run(b, &c, &ScanState::default(), &for_character(&["Aqua"], &[]));
        assert_eq!(a.act, aqua);
        let o = run(
            b,
            &c,
            &ScanState::default(),
            &for_character(&["Megumin"], &[]),
        );
        assert_eq!(o.act, other);
    }
}

// ---- "Additional matching sources": `match_*` flags add texts beside the chat. ----

fn with_sources(sources: MatchSources) -> ScanOptions {
    ScanOptions { sources, ..all() }
}

#[test]
fn st_doc_additional_matching_sources_each_flag() {
    let flags = [
        ("match_persona_description", Source::PersonaDescription),
        ("match_character_description", Source::CharacterDescription),
        ("match_character_personality", Source::CharacterPersonality),
        ("match_character_depth_prompt", Source::CharacterDepthPrompt),
        ("match_scenario", Source::Scenario),
        ("match_creator_notes", Source::CreatorNotes),
    ];
    for (flag, source) in flags {
        let b = book(vec![
            ext(entry(&["castle"], "flagged"), json!({ flag: true })),
            entry(&["castle"], "chat only"),
        ]);
        let mut texts = MatchSources::default();
        let text = match source {
            Source::PersonaDescription => &mut texts.persona_description,
            Source::CharacterDescription => &mut texts.character_description,
            Source::CharacterPersonality => &mut texts.character_personality,
            Source::CharacterDepthPrompt => &mut texts.character_depth_prompt,
            Source::Scenario => &mut texts.scenario,
            Source::CreatorNotes => &mut texts.creator_notes,
        };
        *text = "She lives in a Castle.".into();
        let o = run(
            &b,
            &user("hello"),
            &ScanState::default(),
            &with_sources(texts),
        );
        assert_eq!(o.act, [0], "{flag}");
        assert_eq!(
            o.reasons,
            [format!("key \"castle\" in {}", source.as_str())],
            "{flag}"
        );
        // Without the text, or without the flag, nothing.
        let none = run(&b, &user("hello"), &ScanState::default(), &all());
        assert!(none.act.is_empty(), "{flag}");
    }
}

#[test]
fn st_doc_additional_matching_sources_keep_key_rules() {
    let b = book(vec![
        ext(
            entry(&["cast"], "whole words"),
            json!({"match_scenario": true}),
        ),
        ext(
            entry(&["/cas+tle/i"], "regex"),
            json!({"match_scenario": true}),
        ),
        with(
            ext(
                entry(&["castle"], "secondary"),
                json!({"match_scenario": true}),
            ),
            json!({"selective": true, "secondary_keys": ["moat"]}),
        ),
        ext(
            entry(&["castle"], "other flag"),
            json!({"match_persona_description": true}),
        ),
    ]);
    let texts = MatchSources {
        scenario: "A castle with a moat.".into(),
        ..Default::default()
    };
    let o = run(
        &b,
        &user("hello"),
        &ScanState::default(),
        &with_sources(texts),
    );
    assert_eq!(o.act, [1, 2]);
    // The chat still comes first: a key in both is reported in its message.
    let texts = MatchSources {
        scenario: "A castle with a moat.".into(),
        ..Default::default()
    };
    let o = run(
        &b,
        &user("the moat"),
        &ScanState::default(),
        &with_sources(texts),
    );
    assert_eq!(o.act, [1, 2]);
    assert_eq!(o.reasons[1], "key \"castle\" in scenario");
}

#[test]
fn st_doc_additional_matching_sources_in_a_single_scan() {
    // Compiled for one scan, the automata come from the keys that can occur in the texts
    // searched: the extra texts count.
    let b = book(vec![ext(
        entry(&["castle"], "C"),
        json!({"match_scenario": true}),
    )]);
    let compiled = LorebookCompiler::new()
        .for_single_scan(true)
        .compile(&[BookInput {
            book: &b,
            kind: BookKind::Global,
            name: "b".into(),
            world_info: false,
        }]);
    let opts = with_sources(MatchSources {
        scenario: "the castle".into(),
        ..Default::default()
    });
    let r = compiled.scan(
        &user("hello"),
        &ScanState::default(),
        &opts,
        &ccv3_tokens::Estimate,
    );
    assert_eq!(r.activated.len(), 1);
}

#[test]
fn st_doc_timed_effects_follow_an_unedited_entry_that_moved() {
    // A state record is found at its label first (`book#index`), else by identity: an
    // unchanged entry that moved keeps its effect (only edits end it).
    let sticky = ext(entry(&["dragon"], "D"), json!({"sticky": 5}));
    let b = book(vec![sticky.clone()]);
    let first = run(&b, &timeline_chat(1), &ScanState::default(), &all());
    let quiet = chat(&[
        (Role::User, "dragon"),
        (Role::User, "nothing"),
        (Role::User, "nothing"),
    ]);
    let moved = book(vec![entry(&["other"], "O"), sticky]);
    let o = run(&moved, &quiet, &first.state, &all());
    assert_eq!(o.act, [1]);
    assert_eq!(o.reasons, ["sticky"]);
}

// ---- Issue 14: "An entry with no `position` field is placed where the documentation says, and
// the explanation says so." SillyTavern's card import (research/other-systems.md, "Card
// mapping") maps `position` 'before_char' to 0 and anything else, absent included, to 1 (After
// Char Defs). ----

#[test]
fn st_card_import_entry_without_position_goes_after_char_and_says_so() {
    let b = book(vec![
        entry(&["dragon"], "none"),
        with(
            entry(&["dragon"], "after"),
            json!({"position": "after_char"}),
        ),
        with(
            entry(&["dragon"], "before"),
            json!({"position": "before_char"}),
        ),
        with(entry(&["dragon"], "odd"), json!({"position": "somewhere"})),
        ext(entry(&["dragon"], "st"), json!({"position": 1})),
        entry(&["dragon"], "@@depth 2\ndecorated"),
    ]);
    let compiled = LorebookCompiler::new().compile(&[BookInput {
        book: &b,
        kind: BookKind::Global,
        name: "b".into(),
        world_info: false,
    }]);
    for compat in [Compat::Spec, Compat::SillyTavern] {
        let opts = ScanOptions { compat, ..all() };
        let r = compiled.scan(
            &user("a dragon"),
            &ScanState::default(),
            &opts,
            &ccv3_tokens::Estimate,
        );
        let got = |i: usize| {
            let a = r.activated.iter().find(|a| a.entry.index == i).unwrap();
            (a.position.as_str().to_string(), a.position_default)
        };
        // Only the entry that wrote no position at all is flagged; its place is after_char.
        assert_eq!(got(0), ("after_char".into(), true), "{compat:?}");
        assert_eq!(got(1), ("after_char".into(), false), "{compat:?}");
        assert_eq!(got(2), ("before_char".into(), false), "{compat:?}");
        assert_eq!(got(3), ("after_char".into(), false), "{compat:?}");
        assert_eq!(got(4), ("after_char".into(), false), "{compat:?}");
        assert_eq!(got(5), ("at_depth".into(), false), "{compat:?}");
        // The JSON report says so for that entry only (`"position_default":true`, left out
        // when false, so the other items keep today's shape).
        let names = vec!["b".to_string()];
        let v = serde_json::to_value(ScanReport::new(&r, &names)).unwrap();
        for item in v["activated"].as_array().unwrap() {
            let flagged = item.get("position_default");
            if item["index"] == 0 {
                assert_eq!(flagged, Some(&json!(true)));
            } else {
                assert_eq!(flagged, None, "{item}");
            }
        }
    }
}
