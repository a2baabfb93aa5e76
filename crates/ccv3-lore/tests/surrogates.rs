//! Issue 12: a lone UTF-16 surrogate escape (chat apps split emoji pairs) becomes U+FFFD with a
//! warning instead of rejecting a whole chat or state file.

use ccv3_lore::chat::{parse_chat, parse_chat_with_warnings};

#[test]
fn issue12_chat_json_array_with_lone_surrogates_reads() {
    let text = r#"[{"role":"user","content":"cut \ud83d"},{"role":"assistant","content":"\ude00\ud83d x"}]"#;
    let (chat, warnings) =
        parse_chat_with_warnings(text, &ccv3_lore::chat::ChatLimits::default()).unwrap();
    assert_eq!(chat.messages[0].content, "cut \u{fffd}");
    assert_eq!(chat.messages[1].content, "\u{fffd}\u{fffd} x");
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].code, ccv3::json::LONE_SURROGATE);
    assert!(warnings[0].message.starts_with("3 lone"), "{}", warnings[0]);
    // parse_chat keeps its signature and reads the same chat.
    assert_eq!(parse_chat(text).unwrap(), chat);
}

#[test]
fn issue12_sillytavern_jsonl_with_lone_surrogates_reads_with_one_warning() {
    let text = concat!(
        r#"{"user_name":"U","character_name":"C"}"#,
        "\n",
        r#"{"name":"U","is_user":true,"mes":"a\ud83d"}"#,
        "\n",
        r#"{"name":"C","is_user":false,"mes":"b\udc00"}"#,
        "\n"
    );
    let (chat, warnings) =
        parse_chat_with_warnings(text, &ccv3_lore::chat::ChatLimits::default()).unwrap();
    assert_eq!(chat.messages.len(), 2);
    assert_eq!(chat.messages[0].content, "a\u{fffd}");
    assert_eq!(chat.messages[1].content, "b\u{fffd}");
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].message.starts_with("line 2: "),
        "{}",
        warnings[0]
    );
}

#[test]
fn issue12_state_file_with_a_lone_surrogate_reads() {
    // A key cut in the middle of a pair (entry identities are card text).
    let text = r#"{"sticky":{},"cooldown":{},"matched":{"k\ud800":{"turn":1}}}"#;
    match ccv3_lore::ScanState::from_json(text) {
        Ok(state) => assert!(state.matched.contains_key("k\u{fffd}")),
        // The record's own shape may differ; the surrogate is never the reason.
        Err(e) => assert!(!e.to_string().contains("surrogate"), "{e}"),
    }
    let state = ccv3_lore::ScanState::from_json(r#"{"sticky":{"\udc00":{"start":1,"end":2}}}"#);
    if let Err(e) = &state {
        assert!(!e.to_string().contains("surrogate"), "{e}");
    }
}
