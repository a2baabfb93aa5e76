use crate::util::{card, codes, with_code};
use ccv3::{Severity, SpecVersion};
use serde_json::json;

const FULL_V3: &str = r#"{
  "zz_top": 1,
  "spec": "chara_card_v3",
  "spec_version": "3.0",
  "data": {
    "x_first": {"a": [1, 2]},
    "name": "Aqua", "description": "d", "tags": ["t"], "creator": "c",
    "character_version": "1", "mes_example": "", "extensions": {"z": 1, "a": 2},
    "system_prompt": "", "post_history_instructions": "", "first_mes": "hi",
    "alternate_greetings": [], "personality": "", "scenario": "", "creator_notes": "",
    "group_only_greetings": [],
    "character_book": {
      "book_extra": true, "extensions": {}, "name": "b",
      "entries": [{"e_extra": "x", "keys": ["k"], "content": "c", "extensions": {"depth": 4},
                   "enabled": true, "insertion_order": 10, "use_regex": false, "id": "s1"}]
    },
    "assets": [{"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png", "a_extra": 5}],
    "x_last": null
  },
  "a_last": "kept"
}"#;

#[test]
fn spec_v3_unknown_fields_kept_in_order_at_every_level() {
    let (card, diags) = card(FULL_V3);
    assert!(diags.is_empty(), "{diags:?}");
    let out = card.to_v3_json();
    let input: serde_json::Value = serde_json::from_str(FULL_V3).unwrap();
    assert_eq!(out, input);
    // Key order, not just equality: compare the serialised text.
    assert_eq!(
        serde_json::to_string(&out).unwrap(),
        serde_json::to_string(&input).unwrap()
    );
}

#[test]
fn lenient_numbers_written_as_strings_are_repaired_with_a_diagnostic() {
    let (card, diags) = card(
        r#"{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"A",
        "character_book":{"scan_depth":"4","entries":[{"keys":["k"],"content":"c","insertion_order":"7","enabled":"true"}]}}}"#,
    );
    let book = card.data.character_book.unwrap();
    assert_eq!(book.scan_depth.unwrap().as_i64(), Some(4));
    assert_eq!(book.entries[0].insertion_order.as_i64(), Some(7));
    assert!(book.entries[0].enabled);
    assert!(codes(&diags).contains(&"wrong-type"));
    // Issue 13 (docs/validation.md): the spec fixes the types, in V2 as in V3.
    assert!(
        diags
            .iter()
            .filter(|d| d.code == "wrong-type")
            .all(|d| d.severity == Severity::Error),
        "wrong types are errors: {diags:?}"
    );
}

#[test]
fn lenient_null_and_missing_arrays_become_empty() {
    let (card, diags) = card(
        r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","tags":null,
        "alternate_greetings":"only one","character_book":null,"nickname":null}}"#,
    );
    assert!(card.data.tags.is_empty());
    assert_eq!(card.data.alternate_greetings, vec!["only one"]);
    assert!(card.data.character_book.is_none());
    assert!(card.data.nickname.is_none());
    assert!(codes(&diags).contains(&"null-value"));
    assert!(codes(&diags).contains(&"missing-required-field"));
}

#[test]
fn spec_v3_missing_required_fields_are_errors_but_the_card_loads() {
    let (card, diags) =
        card(r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#);
    assert_eq!(card.data.name, "A");
    let missing: Vec<&str> = diags
        .iter()
        .filter(|d| d.code == "missing-required-field" && d.severity == Severity::Error)
        .map(|d| d.path.as_str())
        .collect();
    assert!(
        missing.contains(&"data.group_only_greetings"),
        "{missing:?}"
    );
    assert!(missing.contains(&"data.creator_notes"));
    // Written back, every required field is there.
    let out = card.to_v3_json();
    for k in [
        "tags",
        "extensions",
        "group_only_greetings",
        "alternate_greetings",
        "creator_notes",
    ] {
        assert!(out["data"].get(k).is_some(), "{k}");
    }
}

#[test]
fn lenient_v1_fields_beside_data_are_kept() {
    let (card, _) = card(
        r#"{"name":"A","description":"top","spec":"chara_card_v2","spec_version":"2.0","data":{"name":"A","description":"inner"}}"#,
    );
    let out = card.to_v3_json();
    assert_eq!(out["name"], "A");
    assert_eq!(out["description"], "top");
    assert_eq!(out["data"]["description"], "inner");
    let keys: Vec<&String> = out.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["name", "description", "spec", "spec_version", "data"]
    );
}

#[test]
fn v1_flat_card_reads_into_the_v3_model() {
    let (card, _) = card(
        r#"{"name":"Aqua","description":"d","personality":"p","scenario":"s","first_mes":"f","mes_example":"m","creatorcomment":"notes","avatar":"none","talkativeness":"0.5"}"#,
    );
    assert_eq!(card.origin, Some(SpecVersion::V1));
    let d = &card.data;
    assert_eq!(
        (
            d.name.as_str(),
            d.personality.as_str(),
            d.first_mes.as_str()
        ),
        ("Aqua", "p", "f")
    );
    assert_eq!(d.creator_notes, "notes");
    let out = card.to_v3_json();
    assert_eq!(out["spec"], "chara_card_v3");
    assert_eq!(out["avatar"], "none", "unknown V1 fields survive");
}

#[test]
fn pygmalion_field_names_read_as_v1() {
    let (card, _) = card(
        r#"{"char_name":"Bo","char_persona":"brave","char_greeting":"Yo","world_scenario":"w","example_dialogue":"e"}"#,
    );
    assert_eq!(card.data.name, "Bo");
    assert_eq!(card.data.personality, "brave");
    assert_eq!(card.data.first_mes, "Yo");
}

#[test]
fn spec_v3_char_is_nickname_else_name() {
    let (mut card, _) = card(
        r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Aqua","nickname":""}}"#,
    );
    assert_eq!(card.data.char_name(), "Aqua");
    card.data.nickname = Some("Aq".into());
    assert_eq!(card.data.char_name(), "Aq");
}

#[test]
fn spec_v3_assets_absent_means_one_default_main_icon() {
    let (card, _) = card(r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#);
    assert!(card.data.assets.is_none());
    let list = card.data.assets_or_default();
    assert_eq!(list.len(), 1);
    assert_eq!(
        (
            list[0].kind.as_str(),
            list[0].uri.as_str(),
            list[0].name.as_str(),
            list[0].ext.as_str()
        ),
        ("icon", "ccdefault:", "main", "png")
    );
    // Absent stays absent when written back.
    assert!(card.to_v3_json()["data"].get("assets").is_none());
}

#[test]
fn spec_v3_newer_spec_version_is_kept_and_the_card_loads() {
    let (card, _) = card(r#"{"spec":"chara_card_v3","spec_version":"3.1","data":{"name":"A"}}"#);
    assert_eq!(card.to_v3_json()["spec_version"], "3.1");
}

#[test]
fn lenient_spec_version_written_as_a_number() {
    let (card, diags) = card(r#"{"spec":"chara_card_v3","spec_version":3.0,"data":{"name":"A"}}"#);
    assert_eq!(card.spec_version, "3.0");
    assert!(codes(&diags).contains(&"wrong-type"));
}

#[test]
fn lenient_bom_is_accepted_with_a_diagnostic() {
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes
        .extend_from_slice(br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#);
    let doc = ccv3::read_bytes(&bytes).unwrap();
    assert!(doc.diagnostics().iter().any(|d| d.code == "bom"));
}

#[test]
fn json_errors_name_line_and_column() {
    let err = ccv3::read_bytes(b"{\n  \"spec\": \"chara_card_v3\",\n  oops\n}").unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("line 3"), "{msg}");
}

#[test]
fn not_a_card_is_a_clear_error() {
    for input in [&b"\x00\x01garbage"[..], b"[1,2]", b"{\"hello\":1}", b""] {
        let err = ccv3::read_bytes(input).unwrap_err().to_string();
        assert!(!err.is_empty());
    }
}

#[test]
fn entry_position_that_is_a_number_is_written_as_the_spec_value_and_kept_in_extensions() {
    // Issue 13: V3 output writes spec values; the number stays where SillyTavern keeps it.
    let (card, _) = card(
        r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","character_book":{"entries":[{"keys":[],"content":"","position":4}]}}}"#,
    );
    let out = card.to_v3_json();
    let e = &out["data"]["character_book"]["entries"][0];
    assert_eq!(e["position"], json!("after_char"));
    assert_eq!(e["extensions"]["position"], json!(4));
}

#[test]
fn big_books_read_in_order_with_diagnostics_in_order() {
    // Books of 512+ entries are read on two threads; the result must not show it.
    let entries: Vec<serde_json::Value> = (0..700)
        .map(|i| {
            let order = if i == 10 || i == 650 {
                json!("7")
            } else {
                json!(i)
            };
            json!({"keys": [format!("k{i}")], "content": format!("c{i}"), "extensions": {},
                   "enabled": true, "insertion_order": order, "use_regex": false})
        })
        .collect();
    let text = json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "A",
        "character_book": {"extensions": {}, "entries": entries}}})
    .to_string();
    let ccv3::Document::Card(cf) = ccv3::read_bytes(text.as_bytes()).unwrap() else {
        panic!()
    };
    let book = cf.card.data.character_book.unwrap();
    assert_eq!(book.entries.len(), 700);
    assert!(book
        .entries
        .iter()
        .enumerate()
        .all(|(i, e)| e.content == format!("c{i}")));
    let paths: Vec<&str> = cf
        .diagnostics
        .iter()
        .filter(|d| d.code == "wrong-type")
        .map(|d| d.path.as_str())
        .collect();
    assert_eq!(
        paths,
        [
            "data.character_book.entries[10].insertion_order",
            "data.character_book.entries[650].insertion_order"
        ]
    );
}

#[test]
fn spec_v3_other_spec_value_is_read_with_a_warning_and_written_as_chara_card_v3() {
    let (c, diags) = card(
        r#"{"spec": "chara_card_v4", "spec_version": "4.0",
            "data": {"name": "Aqua", "first_mes": "hi"}}"#,
    );
    assert_eq!(c.data.name, "Aqua");
    let unknown: Vec<_> = diags.iter().filter(|d| d.code == "unknown-spec").collect();
    assert_eq!(unknown.len(), 1, "{diags:?}");
    assert_eq!(unknown[0].severity, Severity::Warning);
    assert_eq!(unknown[0].path, "spec");
    // Whatever was read, the writer says what it writes.
    assert_eq!(c.to_v3_json()["spec"], "chara_card_v3");
}

/// A complete V3 card (the reader has nothing to say about it) with `fields` added to `data`.
fn v3_with(fields: serde_json::Value) -> String {
    let mut c = json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {
        "name": "A", "description": "", "tags": [], "creator": "", "character_version": "",
        "mes_example": "", "extensions": {}, "system_prompt": "", "post_history_instructions": "",
        "first_mes": "", "alternate_greetings": [], "personality": "", "scenario": "",
        "creator_notes": "", "group_only_greetings": []}});
    for (k, v) in fields.as_object().expect("fields object") {
        c["data"][k] = v.clone();
    }
    c.to_string()
}

/// A complete V3 card whose `character_book` is `book`.
fn v3_book(book: serde_json::Value) -> String {
    v3_with(json!({ "character_book": book }))
}

/// A complete V3 entry with `fields` set (a `null` in `fields` removes the field).
fn entry_with(fields: serde_json::Value) -> serde_json::Value {
    let mut e = json!({"keys": ["k"], "content": "c", "extensions": {}, "enabled": true,
                       "insertion_order": 10, "use_regex": false});
    let obj = e.as_object_mut().unwrap();
    for (k, v) in fields.as_object().expect("fields object") {
        if v.is_null() {
            obj.shift_remove(k);
        } else {
            obj.insert(k.clone(), v.clone());
        }
    }
    e
}

/// The first entry of a card made of one entry, with the reader's diagnostics.
fn read_entry(entry: serde_json::Value) -> (ccv3::Entry, Vec<ccv3::Diagnostic>) {
    let (c, diags) = card(&v3_book(json!({"extensions": {}, "entries": [entry]})));
    let mut book = c.data.character_book.expect("a book");
    assert_eq!(book.entries.len(), 1);
    (book.entries.remove(0), diags)
}

const E0: &str = "data.character_book.entries[0]";

#[test]
fn spec_v3_creator_notes_multilingual_must_be_an_object_else_wrong_type() {
    let (c, diags) = card(&v3_with(
        json!({"creator_notes_multilingual": {"en": "Hi", "de": "Hallo"}}),
    ));
    assert!(diags.is_empty(), "{diags:?}");
    let map = c.data.creator_notes_multilingual.as_ref().unwrap();
    assert_eq!(map["de"], "Hallo");
    // Undefined (absent or null) is allowed and means no map.
    for fields in [json!({}), json!({"creator_notes_multilingual": null})] {
        let (c, diags) = card(&v3_with(fields));
        assert!(diags.is_empty(), "{diags:?}");
        assert!(c.data.creator_notes_multilingual.is_none());
    }
    // Any other type: an error at its path, not used as notes, kept as is for export.
    for bad in [json!("Hallo"), json!(["en", "Hi"]), json!(3)] {
        let (c, diags) = card(&v3_with(json!({
            "creator_notes": "Notes", "creator_notes_multilingual": bad.clone()
        })));
        assert_eq!(
            with_code(&diags, "wrong-type"),
            [("data.creator_notes_multilingual", Severity::Error)]
        );
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert!(c.data.creator_notes_multilingual.is_none());
        assert_eq!(c.data.creator_notes_for("de"), "Notes");
        assert_eq!(c.to_v3_json()["data"]["creator_notes_multilingual"], bad);
    }
}

#[test]
fn spec_v3_source_must_be_an_array_of_strings_else_wrong_type() {
    let (c, diags) = card(&v3_with(
        json!({"source": ["https://x.invalid/c/1", "chub:42"]}),
    ));
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(
        c.data.source.as_deref(),
        Some(&["https://x.invalid/c/1".to_string(), "chub:42".to_string()][..])
    );
    for fields in [json!({}), json!({"source": null})] {
        let (c, diags) = card(&v3_with(fields));
        assert!(diags.is_empty(), "{diags:?}");
        assert!(c.data.source.is_none(), "undefined");
    }
    // A lone string is one source (never split: URLs may hold commas).
    let (c, diags) = card(&v3_with(json!({"source": "https://x.invalid/a,b"})));
    assert_eq!(
        with_code(&diags, "wrong-type"),
        [("data.source", Severity::Error)]
    );
    assert_eq!(c.data.source.unwrap(), ["https://x.invalid/a,b"]);
    // Items that are not strings: a number becomes its text, a null is dropped.
    let (c, diags) = card(&v3_with(json!({"source": ["a", 5, null]})));
    assert_eq!(
        with_code(&diags, "wrong-type"),
        [("data.source[1]", Severity::Error)]
    );
    assert_eq!(
        with_code(&diags, "null-value"),
        [("data.source[2]", Severity::Error)]
    );
    assert_eq!(c.to_v3_json()["data"]["source"], json!(["a", "5"]));
}

#[test]
fn spec_v3_assets_must_be_an_array_of_objects_else_wrong_type() {
    let icon = json!({"type": "icon", "uri": "ccdefault:", "name": "main", "ext": "png"});
    let (c, diags) = card(&v3_with(json!({ "assets": [icon.clone()] })));
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(c.data.assets.as_ref().unwrap().len(), 1);
    let (c, diags) = card(&v3_with(json!({ "assets": null })));
    assert!(diags.is_empty(), "{diags:?}");
    assert!(c.data.assets.is_none(), "null is undefined");
    // Not an array: an error, the card acts as if assets were undefined, the value is kept.
    for bad in [json!(icon.clone()), json!("ccdefault:")] {
        let (c, diags) = card(&v3_with(json!({ "assets": bad.clone() })));
        assert_eq!(
            with_code(&diags, "wrong-type"),
            [("data.assets", Severity::Error)]
        );
        assert_eq!(diags.len(), 1, "{diags:?}");
        assert!(c.data.assets.is_none());
        assert_eq!(c.data.assets_or_default()[0].uri, "ccdefault:");
        assert_eq!(c.to_v3_json()["data"]["assets"], bad);
    }
    // An item that is not an object: an error at the item, which is dropped.
    let (c, diags) = card(&v3_with(json!({ "assets": ["icon.png", icon] })));
    assert_eq!(
        with_code(&diags, "wrong-type"),
        [("data.assets[0]", Severity::Error)]
    );
    let assets = c.data.assets.unwrap();
    assert_eq!(assets.len(), 1);
    assert_eq!(assets[0].name, "main");
}

#[test]
fn spec_v3_asset_type_uri_name_ext_must_be_present_strings() {
    // All four fields missing: one error each, empty strings, the card loads.
    let (c, diags) = card(&v3_with(json!({"assets": [{"x_note": 1}]})));
    assert_eq!(
        with_code(&diags, "missing-required-field"),
        [
            ("data.assets[0].type", Severity::Error),
            ("data.assets[0].uri", Severity::Error),
            ("data.assets[0].name", Severity::Error),
            ("data.assets[0].ext", Severity::Error),
        ]
    );
    let a = &c.data.assets.as_ref().unwrap()[0];
    assert_eq!(
        (
            a.kind.as_str(),
            a.uri.as_str(),
            a.name.as_str(),
            a.ext.as_str()
        ),
        ("", "", "", "")
    );
    // Written back, every asset has the four fields.
    let out = &c.to_v3_json()["data"]["assets"][0];
    for k in ["type", "uri", "name", "ext", "x_note"] {
        assert!(out.get(k).is_some(), "{k}");
    }
    // Other types than strings: an error each, the value's text is used.
    let (c, diags) = card(&v3_with(json!({"assets": [
        {"type": 1, "uri": true, "name": ["a", "b"], "ext": null}
    ]})));
    assert_eq!(
        with_code(&diags, "wrong-type"),
        [
            ("data.assets[0].type", Severity::Error),
            ("data.assets[0].uri", Severity::Error),
            ("data.assets[0].name", Severity::Error),
        ]
    );
    assert_eq!(
        with_code(&diags, "null-value"),
        [("data.assets[0].ext", Severity::Error)]
    );
    let a = &c.data.assets.as_ref().unwrap()[0];
    assert_eq!(
        (
            a.kind.as_str(),
            a.uri.as_str(),
            a.name.as_str(),
            a.ext.as_str()
        ),
        ("1", "true", "a\nb", "")
    );
    // In a V2 card (assets are a V3 field some V2 writers add) the same repairs are warnings.
    let (_, diags) = card(
        r#"{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"A","assets":[{"type":"icon"}]}}"#,
    );
    assert_eq!(
        with_code(&diags, "missing-required-field")
            .into_iter()
            .filter(|(p, _)| p.starts_with("data.assets"))
            .collect::<Vec<_>>(),
        [
            ("data.assets[0].uri", Severity::Warning),
            ("data.assets[0].name", Severity::Warning),
            ("data.assets[0].ext", Severity::Warning),
        ]
    );
}

#[test]
fn spec_v3_creation_and_modification_dates_must_be_numbers_or_undefined() {
    let (c, diags) = card(&v3_with(
        json!({"creation_date": 1_700_000_000u64, "modification_date": 1_700_000_001u64}),
    ));
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(c.data.creation_date.unwrap().as_u64(), Some(1_700_000_000));
    assert_eq!(
        c.data.modification_date.unwrap().as_u64(),
        Some(1_700_000_001)
    );
    for fields in [
        json!({}),
        json!({"creation_date": null, "modification_date": null}),
    ] {
        let (c, diags) = card(&v3_with(fields));
        assert!(diags.is_empty(), "{diags:?}");
        assert!(c.data.creation_date.is_none() && c.data.modification_date.is_none());
    }
    // A number written as text is repaired; anything else is an error and dropped.
    let (c, diags) = card(&v3_with(
        json!({"creation_date": "1700000000", "modification_date": "yesterday"}),
    ));
    assert_eq!(
        with_code(&diags, "wrong-type"),
        [
            ("data.creation_date", Severity::Error),
            ("data.modification_date", Severity::Error)
        ]
    );
    assert_eq!(c.data.creation_date.unwrap().as_u64(), Some(1_700_000_000));
    assert!(c.data.modification_date.is_none());
    let (c, diags) = card(&v3_with(json!({"modification_date": {"t": 1}})));
    assert_eq!(
        with_code(&diags, "wrong-type"),
        [("data.modification_date", Severity::Error)]
    );
    assert!(c.data.modification_date.is_none());
    assert!(c.to_v3_json()["data"].get("modification_date").is_none());
}

#[test]
fn spec_v3_lorebook_name_and_description_must_be_strings_and_recursive_scanning_a_boolean() {
    let (c, diags) = card(&v3_book(json!({"name": "World", "description": "notes",
        "recursive_scanning": false, "extensions": {}, "entries": []})));
    assert!(diags.is_empty(), "{diags:?}");
    let b = c.data.character_book.unwrap();
    assert_eq!(b.name.as_deref(), Some("World"));
    assert_eq!(b.description.as_deref(), Some("notes"));
    assert_eq!(b.recursive_scanning, Some(false));
    // Undefined (absent or null): no value, no diagnostic.
    let (c, diags) = card(&v3_book(json!({"description": null, "extensions": {},
        "recursive_scanning": null, "entries": []})));
    assert!(diags.is_empty(), "{diags:?}");
    let b = c.data.character_book.unwrap();
    assert!(b.name.is_none() && b.description.is_none() && b.recursive_scanning.is_none());
    // Other types: an error at the path; text is taken from numbers, a boolean from "true".
    let (c, diags) = card(&v3_book(json!({"name": 7, "description": ["a", "b"],
        "recursive_scanning": "true", "extensions": {}, "entries": []})));
    assert_eq!(
        with_code(&diags, "wrong-type"),
        [
            ("data.character_book.name", Severity::Error),
            ("data.character_book.description", Severity::Error),
            ("data.character_book.recursive_scanning", Severity::Error),
        ]
    );
    let b = c.data.character_book.unwrap();
    assert_eq!(b.name.as_deref(), Some("7"));
    assert_eq!(b.description.as_deref(), Some("a\nb"));
    assert_eq!(b.recursive_scanning, Some(true));
    // A standalone book reads the same, with its own paths.
    let mut diags = Vec::new();
    let b = ccv3::Lorebook::from_json(
        json!({"name": 7, "recursive_scanning": {}, "extensions": {}, "entries": []}),
        "data",
        true,
        &mut diags,
    )
    .unwrap();
    assert_eq!(
        with_code(&diags, "wrong-type"),
        [
            ("data.name", Severity::Error),
            ("data.recursive_scanning", Severity::Error)
        ]
    );
    assert_eq!(b.name.as_deref(), Some("7"));
    assert_eq!(b.recursive_scanning, None, "an object is no boolean");
}

#[test]
fn spec_v3_lorebook_entries_must_be_a_present_array_of_objects_and_can_be_empty() {
    // CAN be empty.
    let (c, diags) = card(&v3_book(json!({"extensions": {}, "entries": []})));
    assert!(diags.is_empty(), "{diags:?}");
    assert!(c.data.character_book.unwrap().entries.is_empty());
    // MUST be present: an error, read as empty, written back as [].
    let (c, diags) = card(&v3_book(json!({"extensions": {}})));
    assert_eq!(
        with_code(&diags, "missing-required-field"),
        [("data.character_book.entries", Severity::Error)]
    );
    assert!(c.data.character_book.as_ref().unwrap().entries.is_empty());
    assert_eq!(
        c.to_v3_json()["data"]["character_book"]["entries"],
        json!([])
    );
    // An object keyed by id (as World Info writes): its values in file order, with an error
    // (the spec's type is an array).
    let (c, diags) = card(&v3_book(json!({"extensions": {}, "entries": {
        "1": entry_with(json!({"content": "one"})),
        "0": entry_with(json!({"content": "zero"}))
    }})));
    assert_eq!(
        with_code(&diags, "wrong-type"),
        [("data.character_book.entries", Severity::Error)]
    );
    let contents: Vec<String> = c
        .data
        .character_book
        .unwrap()
        .entries
        .into_iter()
        .map(|e| e.content)
        .collect();
    assert_eq!(contents, ["one", "zero"]);
    // Any other type: an error, read as empty; null: as if missing (an error in V3), read as
    // empty.
    let (c, diags) = card(&v3_book(json!({"extensions": {}, "entries": "none"})));
    assert_eq!(
        with_code(&diags, "wrong-type"),
        [("data.character_book.entries", Severity::Error)]
    );
    assert!(c.data.character_book.unwrap().entries.is_empty());
    let (_, diags) = card(&v3_book(json!({"extensions": {}, "entries": null})));
    assert_eq!(
        with_code(&diags, "null-value"),
        [("data.character_book.entries", Severity::Error)]
    );
    // An item that is not an object: an error at the item, which is dropped.
    let (c, diags) = card(&v3_book(json!({"extensions": {}, "entries": [
        "loose text", entry_with(json!({}))
    ]})));
    assert_eq!(with_code(&diags, "wrong-type"), [(E0, Severity::Error)]);
    assert_eq!(c.data.character_book.unwrap().entries.len(), 1);
}

#[test]
fn spec_v3_entry_keys_must_be_an_array_of_strings_and_secondary_keys_strings() {
    let (e, diags) = read_entry(entry_with(
        json!({"keys": ["a", "b"], "secondary_keys": ["x", "y"], "selective": true}),
    ));
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(e.keys, ["a", "b"]);
    assert_eq!(e.secondary_keys.unwrap(), ["x", "y"]);
    // Comma-separated values in one string are split (keys and secondary keys alike).
    let (e, diags) = read_entry(entry_with(
        json!({"keys": "a, b", "secondary_keys": "x,y ,"}),
    ));
    let p = |k: &str| format!("{E0}.{k}");
    let (keys, secondary) = (p("keys"), p("secondary_keys"));
    assert_eq!(
        with_code(&diags, "wrong-type"),
        [
            (secondary.as_str(), Severity::Error),
            (keys.as_str(), Severity::Error)
        ]
    );
    assert_eq!(e.keys, ["a", "b"]);
    assert_eq!(e.secondary_keys.unwrap(), ["x", "y"]);
    // Items that are not strings become their text; absent keys are an error.
    let (e, diags) = read_entry(entry_with(
        json!({"keys": ["a", 1], "secondary_keys": null}),
    ));
    let item = p("keys[1]");
    assert_eq!(
        with_code(&diags, "wrong-type"),
        [(item.as_str(), Severity::Error)]
    );
    assert_eq!(e.keys, ["a", "1"]);
    assert!(
        e.secondary_keys.is_none(),
        "null secondary_keys is undefined"
    );
    let (e, diags) = read_entry(entry_with(json!({"keys": null})));
    assert_eq!(
        with_code(&diags, "missing-required-field"),
        [(keys.as_str(), Severity::Error)]
    );
    assert!(e.keys.is_empty());
}

#[test]
fn spec_v3_entry_selective_use_regex_enabled_case_sensitive_constant_must_be_booleans() {
    let (e, diags) = read_entry(entry_with(json!({"selective": true, "use_regex": true,
        "enabled": false, "case_sensitive": true, "constant": false})));
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(
        (
            e.selective,
            e.use_regex,
            e.enabled,
            e.case_sensitive,
            e.constant
        ),
        (Some(true), true, false, Some(true), Some(false))
    );
    // Optional ones may be undefined.
    let (e, diags) = read_entry(entry_with(json!({})));
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(
        (e.selective, e.case_sensitive, e.constant),
        (None, None, None)
    );
    // Strings and numbers standing for booleans are repaired, with an error each.
    let (e, diags) = read_entry(entry_with(json!({"selective": "true", "use_regex": 1,
        "enabled": "false", "case_sensitive": "yes", "constant": 0})));
    let paths: Vec<String> = [
        "enabled",
        "use_regex",
        "case_sensitive",
        "constant",
        "selective",
    ]
    .iter()
    .map(|k| format!("{E0}.{k}"))
    .collect();
    let mut found = with_code(&diags, "wrong-type");
    found.sort();
    let mut want: Vec<(&str, Severity)> = paths
        .iter()
        .map(|p| (p.as_str(), Severity::Error))
        .collect();
    want.sort();
    assert_eq!(found, want);
    assert_eq!(
        (
            e.selective,
            e.use_regex,
            e.enabled,
            e.case_sensitive,
            e.constant
        ),
        (Some(true), true, false, Some(true), Some(false))
    );
    // enabled and use_regex are required in V3: missing, an error and the default.
    let (e, diags) = read_entry(entry_with(json!({"enabled": null, "use_regex": null})));
    let (enabled, use_regex) = (format!("{E0}.enabled"), format!("{E0}.use_regex"));
    assert_eq!(
        with_code(&diags, "missing-required-field"),
        [
            (enabled.as_str(), Severity::Error),
            (use_regex.as_str(), Severity::Error)
        ]
    );
    assert!(e.enabled && !e.use_regex);
    // V2 entries have no use_regex: nothing to report there.
    let (c, diags) = card(
        r#"{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"A","character_book":{"extensions":{},
        "entries":[{"keys":["k"],"content":"c","extensions":{},"enabled":true,"insertion_order":1}]}}}"#,
    );
    assert!(
        diags.iter().all(|d| !d.path.ends_with("use_regex")),
        "{diags:?}"
    );
    assert!(!c.data.character_book.unwrap().entries[0].use_regex);
}

#[test]
fn spec_v3_entry_content_must_be_a_string() {
    let (e, diags) = read_entry(entry_with(json!({"content": "text"})));
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(e.content, "text");
    let content = format!("{E0}.content");
    let (e, diags) = read_entry(entry_with(json!({"content": 42})));
    assert_eq!(
        with_code(&diags, "wrong-type"),
        [(content.as_str(), Severity::Error)]
    );
    assert_eq!(e.content, "42");
    let (e, diags) = read_entry(entry_with(json!({"content": null})));
    assert_eq!(
        with_code(&diags, "missing-required-field"),
        [(content.as_str(), Severity::Error)]
    );
    assert_eq!(e.content, "");
}

#[test]
fn spec_v3_entry_name_comment_must_be_strings_id_a_string_or_number_priority_a_number() {
    let (e, diags) = read_entry(entry_with(
        json!({"name": "Town", "comment": "about the town", "id": 3, "priority": 5}),
    ));
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(e.name.as_deref(), Some("Town"));
    assert_eq!(e.comment.as_deref(), Some("about the town"));
    assert_eq!(e.id, Some(json!(3)));
    assert_eq!(e.priority.unwrap().as_i64(), Some(5));
    let (e, diags) = read_entry(entry_with(json!({"id": "town-1"})));
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(e.id, Some(json!("town-1")));
    // All four are optional.
    let (e, _) = read_entry(entry_with(json!({})));
    assert!(e.name.is_none() && e.comment.is_none() && e.id.is_none() && e.priority.is_none());
    // Other types: name, comment and priority are repaired with an error; an id of another
    // type is kept as it is (it only identifies the entry), with an error too (issue 13: one
    // policy, wrong types are errors).
    let (e, diags) = read_entry(entry_with(
        json!({"name": 5, "comment": ["a", "b"], "id": true, "priority": "7"}),
    ));
    let p = |k: &str| format!("{E0}.{k}");
    let (name, comment, id, priority) = (p("name"), p("comment"), p("id"), p("priority"));
    assert_eq!(
        with_code(&diags, "wrong-type"),
        [
            (name.as_str(), Severity::Error),
            (comment.as_str(), Severity::Error),
            (id.as_str(), Severity::Error),
            (priority.as_str(), Severity::Error),
        ]
    );
    assert_eq!(e.name.as_deref(), Some("5"));
    assert_eq!(e.comment.as_deref(), Some("a\nb"));
    assert_eq!(e.id, Some(json!(true)));
    assert_eq!(e.priority.unwrap().as_i64(), Some(7));
}
