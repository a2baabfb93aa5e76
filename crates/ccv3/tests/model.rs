use crate::util::{card, codes};
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
    assert!(
        diags.iter().all(|d| d.severity != Severity::Error),
        "V2 repairs are warnings"
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
fn entry_position_that_is_not_a_string_is_kept_as_is() {
    let (card, _) = card(
        r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","character_book":{"entries":[{"keys":[],"content":"","position":4}]}}}"#,
    );
    let out = card.to_v3_json();
    assert_eq!(
        out["data"]["character_book"]["entries"][0]["position"],
        json!(4)
    );
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
