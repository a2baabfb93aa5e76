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
    assert_eq!(e["decorators"], "@@depth 4\n@@@instruct_depth 2");
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
