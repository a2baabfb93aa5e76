use crate::util::card;
use ccv3::backfill::{to_v2, BackfillOptions};

const V3: &str = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","creator_notes":"Hello",
  "nickname":"Ay","group_only_greetings":["g"],"creation_date":1700000000,
  "character_book":{"extensions":{},"entries":[{"keys":["k"],"content":"@@depth 4\n@@@instruct_depth 2\n\nBody","extensions":{},"enabled":true,"insertion_order":1,"use_regex":true}]}}}"#;

#[test]
fn spec_v3_backfill_adds_the_warning_line_to_creator_notes() {
    let (card, _) = card(V3);
    let v2 = to_v2(&card, &BackfillOptions::default());
    assert_eq!(v2["spec"], "chara_card_v2");
    assert_eq!(v2["spec_version"], "2.0");
    let notes = v2["data"]["creator_notes"].as_str().unwrap();
    assert!(notes.starts_with(ccv3::V2_BACKFILL_WARNING));
    assert!(notes.ends_with("Hello"));
}

#[test]
fn spec_v3_backfill_for_v2_only_export_has_no_warning() {
    let (card, _) = card(V3);
    let v2 = to_v2(
        &card,
        &BackfillOptions {
            warning: false,
            stash_v3: true,
        },
    );
    assert_eq!(v2["data"]["creator_notes"], "Hello");
}

#[test]
fn spec_v3_backfill_removes_all_decorators() {
    let (card, _) = card(V3);
    let v2 = to_v2(&card, &BackfillOptions::default());
    let entry = &v2["data"]["character_book"]["entries"][0];
    assert_eq!(entry["content"], "Body");
    assert!(entry.get("use_regex").is_none(), "use_regex is V3-only");
}

#[test]
fn backfill_keeps_v3_only_data_in_extensions() {
    let (card, _) = card(V3);
    let v2 = to_v2(&card, &BackfillOptions::default());
    let stash = &v2["data"]["extensions"]["ccv3"];
    assert_eq!(stash["nickname"], "Ay");
    assert_eq!(stash["group_only_greetings"][0], "g");
    assert_eq!(stash["creation_date"], 1700000000);
    let e = &v2["data"]["character_book"]["entries"][0]["extensions"]["ccv3"];
    assert_eq!(e["use_regex"], true);
    // The decorator lines as written, with the blank line before the body.
    assert_eq!(e["decorators"], "@@depth 4\n@@@instruct_depth 2\n\n");
    // V3-only fields never appear at the V2 data level.
    for k in [
        "nickname",
        "group_only_greetings",
        "creation_date",
        "assets",
    ] {
        assert!(v2["data"].get(k).is_none(), "{k}");
    }
}

/// Reads a V2 value back into the model, with the reader's diagnostics.
fn read_v2(v2: serde_json::Value) -> (ccv3::Card, Vec<ccv3::Diagnostic>) {
    let mut diags = Vec::new();
    let card = ccv3::Card::from_json(v2, &mut diags).expect("a card");
    (card, diags)
}

const FULL_V3: &str = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","description":"d",
  "tags":["t"],"creator":"c","character_version":"1","mes_example":"","extensions":{"x":1},
  "system_prompt":"","post_history_instructions":"","first_mes":"Hi","alternate_greetings":[],
  "personality":"","scenario":"","creator_notes":"Hello","group_only_greetings":["g"],
  "character_book":{"extensions":{},"entries":[
    {"keys":["k"],"content":"\n@@depth 4\r\n@@@instruct_depth 2\n\n\nBody","extensions":{"y":2},"enabled":true,"insertion_order":1,"use_regex":true},
    {"keys":["j"],"content":"Plain","extensions":{},"enabled":true,"insertion_order":2,"use_regex":false}]},
  "assets":[{"type":"icon","uri":"ccdefault:","name":"main","ext":"png"}],"nickname":"Ay",
  "creator_notes_multilingual":{"fr":"Salut"},"source":["https://x.invalid/a"],
  "creation_date":1700000000,"modification_date":1700000500}}"#;

#[test]
fn issue13_v3_to_v2_to_v3_gives_back_the_v3_card() {
    let (card, _) = card(FULL_V3);
    for warning in [true, false] {
        let v2 = to_v2(
            &card,
            &BackfillOptions {
                warning,
                stash_v3: true,
            },
        );
        let (back, diags) = read_v2(v2);
        assert_eq!(
            back.to_v3_json(),
            card.to_v3_json(),
            "warning line: {warning}"
        );
        let restored = diags.iter().find(|d| d.code == "v2-stash-restored");
        assert!(restored.is_some(), "{diags:?}");
        assert_eq!(restored.unwrap().severity, ccv3::Severity::Info);
        assert_eq!(
            diags.iter().any(|d| d.code == "backfill-warning-trimmed"),
            warning
        );
    }
}

#[test]
fn issue13_v2_edits_win_over_a_stale_stash() {
    let (card, _) = card(FULL_V3);
    let mut v2 = to_v2(&card, &BackfillOptions::default());
    // A V2 application renamed the card, wrote its own nickname, edited the entry's body and
    // wrote use_regex on it.
    v2["data"]["name"] = "B".into();
    v2["data"]["nickname"] = "Bee".into();
    let e = &mut v2["data"]["character_book"]["entries"][0];
    e["content"] = "New body".into();
    e["use_regex"] = false.into();
    let (back, diags) = read_v2(v2);
    assert_eq!(back.data.name, "B");
    assert_eq!(back.data.nickname.as_deref(), Some("Bee"));
    assert!(diags
        .iter()
        .any(|d| d.code == "v2-stash-overridden" && d.path == "data.extensions.ccv3.nickname"));
    let e = &back.data.character_book.as_ref().unwrap().entries[0];
    assert_eq!(
        e.content,
        "\n@@depth 4\r\n@@@instruct_depth 2\n\n\nNew body"
    );
    assert!(!e.use_regex, "the V2 entry's own use_regex wins");
    // What V2 cannot hold still comes back.
    assert_eq!(back.data.group_only_greetings, ["g"]);
    assert_eq!(back.data.creation_date, Some(1_700_000_000u64.into()));
    assert!(!back.data.extensions.contains_key("ccv3"));
}

#[test]
fn issue13_v2_content_with_its_own_decorators_is_not_given_a_second_header() {
    let (card, _) = card(FULL_V3);
    let mut v2 = to_v2(&card, &BackfillOptions::default());
    v2["data"]["character_book"]["entries"][0]["content"] = "@@depth 1\nMine".into();
    let (back, _) = read_v2(v2);
    let e = &back.data.character_book.as_ref().unwrap().entries[0];
    assert_eq!(e.content, "@@depth 1\nMine");
}

#[test]
fn issue13_stash_of_older_writers_and_odd_stashes() {
    // Older writers kept the decorator lines trimmed; unknown stash keys and values of the
    // wrong type stay in the stash.
    let v2 = serde_json::json!({"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": "A", "extensions": {"ccv3": {"nickname": 5, "future": true, "source": ["s"]}},
        "character_book": {"extensions": {}, "entries": [{"keys": ["k"], "content": "Body",
            "extensions": {"ccv3": {"use_regex": true, "decorators": "@@depth 4"}},
            "enabled": true, "insertion_order": 1}]}}});
    let (back, diags) = read_v2(v2);
    let e = &back.data.character_book.as_ref().unwrap().entries[0];
    assert_eq!(e.content, "@@depth 4\nBody");
    assert!(e.use_regex);
    assert!(!e.extensions.contains_key("ccv3"));
    assert_eq!(back.data.source.as_deref(), Some(&["s".to_string()][..]));
    assert_eq!(back.data.nickname, None);
    assert_eq!(
        back.data.extensions["ccv3"],
        serde_json::json!({"nickname": 5, "future": true})
    );
    let odd = diags
        .iter()
        .find(|d| d.code == "v2-stash-unreadable")
        .unwrap();
    assert_eq!(odd.path, "data.extensions.ccv3.nickname");
}

#[test]
fn issue13_v3_cards_keep_an_extensions_ccv3_as_it_is() {
    // Only V2 cards are restored: a V3 card's extensions are its own.
    let (card, diags) = crate::util::card(
        r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","extensions":{"ccv3":{"nickname":"N"}}}}"#,
    );
    assert_eq!(card.data.nickname, None);
    assert_eq!(card.data.extensions["ccv3"]["nickname"], "N");
    assert!(diags.iter().all(|d| !d.code.starts_with("v2-stash")));
}

/// Issue 13 "Writing and converting": V3 -> V2 -> V3 gives back the V3 card with its key
/// order (the V3-only fields where they stood, `use_regex` where it stood in each entry),
/// byte for byte; the order is stashed only when the way back up would not find it.
#[test]
fn issue13_v3_to_v2_to_v3_keeps_the_key_order() {
    let v3 = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","nickname":"Ay",
      "description":"d","x_app":1,"group_only_greetings":[],"tags":[],"creator":"","character_version":"",
      "mes_example":"","extensions":{},"system_prompt":"","post_history_instructions":"",
      "first_mes":"Hi","alternate_greetings":[],"personality":"","scenario":"","creator_notes":"",
      "character_book":{"extensions":{},"entries":[{"keys":["k"],"content":"c","extensions":{},
      "enabled":true,"insertion_order":1,"use_regex":false,"name":"n","id":1}]}}}"#;
    let (ordered, _) = card(v3);
    let want = serde_json::to_string(&ordered.to_v3_json()).unwrap();
    let v2 = to_v2(&ordered, &BackfillOptions::default());
    assert_eq!(v2["data"]["extensions"]["ccv3"]["key_order"][1], "nickname");
    let e = &v2["data"]["character_book"]["entries"][0];
    assert_eq!(e["extensions"]["ccv3"]["use_regex_before"], "name");
    let (back, _) = read_v2(v2);
    assert_eq!(serde_json::to_string(&back.to_v3_json()).unwrap(), want);
    assert!(back.data.extensions.is_empty());
    // A card in the order the way back up finds by itself (a new card: V3-only fields last,
    // entries' `use_regex` last) stashes no order.
    let mut plain = ccv3::Card::new("A");
    plain.data.nickname = Some("Ay".into());
    plain.data.assets = Some(ccv3::Asset::default_list());
    let (book, _) = card(FULL_V3);
    plain.data.character_book = book.data.character_book;
    let v2 = to_v2(&plain, &BackfillOptions::default());
    assert!(v2["data"]["extensions"]["ccv3"].get("key_order").is_none());
    for e in v2["data"]["character_book"]["entries"].as_array().unwrap() {
        assert!(e["extensions"]["ccv3"].get("use_regex_before").is_none());
    }
    let (back, _) = read_v2(v2);
    assert_eq!(
        back.to_v3_json().to_string(),
        plain.to_v3_json().to_string()
    );
    // A stashed order that is not a list of strings stays in the stash.
    let mut odd = to_v2(&ordered, &BackfillOptions::default());
    odd["data"]["extensions"]["ccv3"]["key_order"] = serde_json::json!([1]);
    let (back, _) = read_v2(odd);
    assert_eq!(
        back.data.extensions["ccv3"],
        serde_json::json!({"key_order": [1]})
    );
}
