//! Every code of `ccv3 portability` (issue 27) from a card, book or file made for it, and its
//! absence where the application has a place for the value. Each test names the rule whose
//! source (`docs/portability.md`, `portability::RULES`) states the fact.

use ccv3::{Document, Severity};
use ccv3_analyze::{portability, App};
use serde_json::{json, Value};
use std::path::Path;

/// A V3 card of the spec's required fields, with `data` merged over them.
fn card(data: Value) -> Document {
    let mut d = json!({
        "name": "Aqua", "description": "", "personality": "", "scenario": "", "first_mes": "",
        "mes_example": "", "creator_notes": "", "system_prompt": "", "post_history_instructions": "",
        "alternate_greetings": [], "group_only_greetings": [], "tags": [], "creator": "",
        "character_version": "", "extensions": {}
    });
    for (k, v) in data.as_object().unwrap() {
        d[k] = v.clone();
    }
    let text = json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": d}).to_string();
    ccv3::read_bytes(text.as_bytes()).unwrap()
}

/// A card whose book has `book` merged over an empty book.
fn card_with_book(book: Value) -> Document {
    let mut b = json!({"extensions": {}, "entries": []});
    for (k, v) in book.as_object().unwrap() {
        b[k] = v.clone();
    }
    card(json!({ "character_book": b }))
}

fn entry(keys: &[&str], content: &str, more: Value) -> Value {
    let mut e = json!({"keys": keys, "content": content, "extensions": {}, "enabled": true,
        "insertion_order": 0, "use_regex": false});
    for (k, v) in more.as_object().unwrap() {
        e[k] = v.clone();
    }
    e
}

/// The findings of `app` with `code`, as (path, entry, severity).
fn found(doc: &Document, app: App, code: &str) -> Vec<(String, Option<usize>, Severity)> {
    portability(doc, &[app])
        .into_iter()
        .inspect(|f| assert_eq!(f.app, app))
        .filter(|f| f.code == code)
        .map(|f| (f.path, f.entry, f.severity))
        .collect()
}

fn example(name: &str) -> Document {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    ccv3::read_file(&p).unwrap()
}

const W: Severity = Severity::Warning;
const I: Severity = Severity::Info;
const E: Severity = Severity::Error;

#[test]
fn v3_field_dropped_by_a_v2_reader() {
    // Rule v2-v3-fields: SPEC_V3.md "CharacterCard Object", the fields TavernCardV2 lacks.
    let doc = card(
        json!({"nickname": "Aq", "creation_date": 1700000000, "group_only_greetings": ["hi"]}),
    );
    assert_eq!(
        found(&doc, App::V2, "v3-field-dropped"),
        [
            ("data.nickname".into(), None, W),
            ("data.group_only_greetings".into(), None, W),
            ("data.creation_date".into(), None, W),
        ]
    );
    // The applications that read V3 keep them.
    for app in [App::SillyTavern, App::Risu, App::Agnai] {
        assert!(found(&doc, app, "v3-field-dropped").is_empty(), "{app:?}");
    }
    // Nothing V3-only set: nothing dropped.
    assert!(found(&card(json!({})), App::V2, "v3-field-dropped").is_empty());
}

#[test]
fn lore_field_dropped() {
    // Rule risu-book-settings (RisuAI characterCards.ts convertCharbook): the settings are
    // taken only when all three are present.
    let partial = card_with_book(json!({"scan_depth": 4}));
    assert_eq!(
        found(&partial, App::Risu, "lore-field-dropped"),
        [("data.character_book.scan_depth".into(), None, W)]
    );
    let all =
        card_with_book(json!({"scan_depth": 4, "token_budget": 500, "recursive_scanning": true}));
    assert!(found(&all, App::Risu, "lore-field-dropped").is_empty());
    // Rule st-book-settings (SillyTavern convertWorldInfoToCharacterBook keeps entries and name).
    assert_eq!(found(&all, App::SillyTavern, "lore-field-dropped").len(), 3);
    // Rule risu-groups: no inclusion groups or timed effects in RisuAI.
    let grouped = card_with_book(json!({"entries": [
        entry(&["a"], "x", json!({"extensions": {"group": "g", "sticky": 2}})),
        entry(&["b"], "y", json!({}))
    ]}));
    assert_eq!(
        found(&grouped, App::Risu, "lore-field-dropped"),
        [
            (
                "data.character_book.entries[0].extensions.group".into(),
                Some(0),
                W
            ),
            (
                "data.character_book.entries[0].extensions.sticky".into(),
                Some(0),
                W
            ),
        ]
    );
    // Rule agnai-fields (agnai common/memory.ts): no constant, no secondary keys.
    let agnai = card_with_book(json!({"entries": [
        entry(&["a"], "x", json!({"constant": true, "secondary_keys": ["b"]})),
        entry(&["b"], "y", json!({}))
    ]}));
    assert_eq!(
        found(&agnai, App::Agnai, "lore-field-dropped"),
        [("data.character_book.entries[0]".into(), Some(0), W)]
    );
    // Rule v2-use-regex: V2 entries have no use_regex.
    let regex =
        card_with_book(json!({"entries": [entry(&["/a+/"], "x", json!({"use_regex": true}))]}));
    assert_eq!(
        found(&regex, App::V2, "lore-field-dropped"),
        [(
            "data.character_book.entries[0].use_regex".into(),
            Some(0),
            W
        )]
    );
}

#[test]
fn decorator_ignored() {
    // Rule st-decorators (SillyTavern world-info.js KNOWN_DECORATORS): only @@activate and
    // @@dont_activate; rule v2-decorators: a V2 reader sends decorator lines as text.
    let doc = card_with_book(json!({"entries": [
        entry(&["a"], "@@depth 2\nx", json!({})),
        entry(&["b"], "@@activate\ny", json!({}))
    ]}));
    assert_eq!(
        found(&doc, App::SillyTavern, "decorator-ignored"),
        [("data.character_book.entries[0].content".into(), Some(0), W)]
    );
    assert_eq!(found(&doc, App::V2, "decorator-ignored").len(), 2);
    assert_eq!(found(&doc, App::Agnai, "decorator-ignored").len(), 2);
    // A fallback SillyTavern honours is named.
    let fallback =
        card_with_book(json!({"entries": [entry(&["a"], "@@depth 2\n@@@activate\nx", json!({}))]}));
    let f = portability(&fallback, &[App::SillyTavern]);
    let ignored = f.iter().find(|f| f.code == "decorator-ignored").unwrap();
    assert!(
        ignored.message.contains("fallback @@@activate"),
        "{}",
        ignored.message
    );
    // No decorators: nothing.
    assert!(found(
        &card_with_book(json!({"entries": [entry(&["a"], "x", json!({}))]})),
        App::V2,
        "decorator-ignored"
    )
    .is_empty());
}

#[test]
fn macro_not_expanded() {
    // Rules st-macros, risu-macros, agnai-macros: each application's macro set (ccv3-cbs
    // catalog; Agnai's memory book replaces {{char}} and {{user}} only).
    let doc = card(json!({"first_mes": "{{char}} {{noop}} {{arraylength::[]}}"}));
    assert_eq!(
        found(&doc, App::SillyTavern, "macro-not-expanded"),
        [("data.first_mes".into(), None, W)]
    );
    let st = portability(&doc, &[App::SillyTavern]);
    assert!(st.iter().any(|f| f.message.contains("{{arraylength}}")));
    let risu = portability(&doc, &[App::Risu]);
    let risu: Vec<&str> = risu
        .iter()
        .filter(|f| f.code == "macro-not-expanded")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(risu.len(), 1, "{risu:?}");
    assert!(risu[0].contains("{{noop}}"));
    assert_eq!(found(&doc, App::Agnai, "macro-not-expanded").len(), 2);
    // V2 readers and the spec are not checked (no recorded fact).
    assert!(found(&doc, App::V2, "macro-not-expanded").is_empty());
    assert!(found(
        &card(json!({"first_mes": "{{char}} and {{user}}"})),
        App::Agnai,
        "macro-not-expanded"
    )
    .is_empty());
}

#[test]
fn container_unsupported() {
    // Rules v2-containers (CHARX is V3), agnai-containers (PNG or JSON only), st-containers and
    // risu-containers (no standalone lorebook_v3 import).
    let charx = example("ember.charx");
    assert_eq!(
        found(&charx, App::V2, "container-unsupported"),
        [(String::new(), None, E)]
    );
    assert_eq!(
        found(&charx, App::Agnai, "container-unsupported"),
        [(String::new(), None, E)]
    );
    assert!(found(&charx, App::SillyTavern, "container-unsupported").is_empty());
    assert!(found(&charx, App::Risu, "container-unsupported").is_empty());
    assert!(found(&example("ember.png"), App::Agnai, "container-unsupported").is_empty());
    let v3_book =
        json!({"spec": "lorebook_v3", "data": {"extensions": {}, "entries": []}}).to_string();
    let book = ccv3::read_bytes(v3_book.as_bytes()).unwrap();
    assert!(matches!(book, Document::Lorebook(_)));
    assert_eq!(
        found(&book, App::SillyTavern, "container-unsupported").len(),
        1
    );
    assert_eq!(found(&book, App::Risu, "container-unsupported").len(), 1);
}

#[test]
fn asset_ignored() {
    // Rule st-assets (SillyTavern src/charx.js CHARX_IMAGE_EXTENSIONS; user_icon skipped).
    let doc = card(json!({"assets": [
        {"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"},
        {"type": "user_icon", "uri": "ccdefault:", "name": "me", "ext": "png"},
        {"type": "other", "uri": "embeded://assets/song.mp3", "name": "song", "ext": "mp3"}
    ]}));
    assert_eq!(
        found(&doc, App::SillyTavern, "asset-ignored"),
        [
            ("data.assets[1]".into(), None, I),
            ("data.assets[2]".into(), None, I)
        ]
    );
    assert!(found(&doc, App::Risu, "asset-ignored").is_empty());
}

#[test]
fn lore_behaves_differently() {
    // Rules risu-case (RisuAI matches case-insensitively), risu-regex (RisuAI issue #1530),
    // agnai-keys (Agnai wraps keywords in \b...\b as a regex, unescaped).
    let doc = card_with_book(json!({"entries": [
        entry(&["Ash"], "x", json!({"case_sensitive": true})),
        entry(&["/o+k/i"], "y", json!({"use_regex": true})),
        entry(&["a.b"], "z", json!({})),
        entry(&["plain"], "w", json!({}))
    ]}));
    assert_eq!(
        found(&doc, App::Risu, "lore-behaves-differently"),
        [
            (
                "data.character_book.entries[0].case_sensitive".into(),
                Some(0),
                I
            ),
            ("data.character_book.entries[1].keys".into(), Some(1), W),
        ]
    );
    assert_eq!(
        found(&doc, App::Agnai, "lore-behaves-differently"),
        [
            ("data.character_book.entries[1].keys".into(), Some(1), I),
            ("data.character_book.entries[2].keys".into(), Some(2), I),
        ]
    );
    assert!(found(&doc, App::SillyTavern, "lore-behaves-differently").is_empty());
}
