//! Issue 12 (the chat reader reads messages without a JSON tree): every shape the reader
//! accepts, and every error it gives, on 54 inputs (three ways: `parse_chat_with_warnings`,
//! `parse_chat_with` under a 3-message limit, `chat_from_value`), compared with
//! `tests/data/chat_shapes.txt`, the output of the tree-based reader it replaced. Set
//! `CCV3_BLESS=1` to rewrite the file.

#[test]
fn chat_reader_keeps_every_shape_and_error() {
    use ccv3_lore::chat::{chat_from_value, parse_chat_with, ChatLimits};
    let inputs: Vec<&str> = vec![
        r#"[{"role":"user","content":"hi"},{"role":"assistant","name":"A","content":"yo"}]"#,
        r#"[{"role":"USER","content":null},{"role":"char","content":5},{"role":"bot","mes":"m"}]"#,
        r#"[{"role":null,"mes":"x","is_user":true},{"mes":"y","is_system":"true"}]"#,
        r#"[{"role":5,"content":"x"}]"#,
        r#"[{"role":"narrator","content":"x"}]"#,
        r#"[{"role":"user"}]"#,
        r#"[{"role":"user","content":[1,2]}]"#,
        r#"[{"role":"user","content":{"a":1},"mes":"fallback"}]"#,
        r#"[1, {"role":"user","content":"x"}]"#,
        r#"[{"role":"user","content":"x"}, [1]]"#,
        r#"[{"role":"user","content":"x","name":7}]"#,
        r#"[{"role":"user","content":"x","name":[1]}]"#,
        r#"[{"role":"user","content":1.5e3}]"#,
        r#"[{"role":"user","content":-0}]"#,
        r#"[{"role":"user","content":12345678901234567890}]"#,
        r#"[{"role":"user","content":"x"},"#,
        r#"[{"role":5},"#,
        r#"{"messages":[{"role":"user","content":"a"},{"name":"B","is_user":false,"mes":"b"},{"mes":"h","is_system":1}],"user_name":"U","character_name":"C"}"#,
        r#"{"messages":5}"#,
        r#"{"messages":{"a":1}}"#,
        r#"{"messages":[5]}"#,
        r#"{"messages":[{"role":null,"mes":"q"}]}"#,
        r#"{"messages":[{"is_user":true}]}"#,
        r#"{"messages":[],"user_name":5,"character_name":null}"#,
        r#"{"messages":[{"role":"user","content":"a"}],"messages":[{"role":"user","content":"b"}]}"#,
        r#"{"user_name":"Sam","chat_metadata":{}}"#,
        r#"{"create_date":"x"}"#,
        r#"{"foo":1}"#,
        r#"{"mes":"hi","is_user":true,"name":"N"}"#,
        r#"{"content":"hi","role":"user"}"#,
        r#"{"content":"hi"}"#,
        "{\"user_name\":\"U\",\"character_name\":\"C\"}\n{\"name\":\"U\",\"is_user\":true,\"mes\":\"hello\"}\n\n{\"name\":\"C\",\"is_user\":false,\"mes\":\"hi\",\"extra\":{\"x\":[1,2]}}\n{\"mes\":\"hidden\",\"is_system\":true}",
        "{\"name\":\"U\",\"is_user\":true,\"mes\":\"first\"}\n{\"role\":\"assistant\",\"content\":\"r\"}",
        "{\"foo\":1}\n{\"mes\":\"x\"}",
        "{\"user_name\":\"U\"}\n{\"foo\":1}",
        "{\"user_name\":\"U\"}\n[1]",
        "{\"user_name\":\"U\"}\n5",
        "{\"user_name\":\"U\"}\n{bad",
        "{bad\n{\"mes\":\"x\"}",
        "{\"mes\":\"x\"}\n{\"mes\":5,\"role\":\"user\"}",
        "{\"mes\":\"x\"}\n{\"mes\":\"y\",\"role\":7}",
        r#"[{"role":"user","content":"a\ud800b"}]"#,
        "{\"mes\":\"a\\ud800\"}\n{\"mes\":\"\\udc00b\"}",
        r#"5"#, r#""s""#, r#"null"#, r#"true"#, "", "   ", "\u{feff}[]", "[]", "{}",
        r#"[{"role":"user","content":"x","role":"assistant"}]"#,
        r#"[{"role":"user","content":"x","content":null}]"#,
        r#"[{"role":"user","mes":"m","content":5}]"#,
        r#"{"messages":[{"role":"user","content":"a"}],"mes":"z"}"#,
        r#"[{"role":"user","content":"a","is_user":true,"is_system":true}]"#,
        r#"{"messages":[{"mes":"a","is_system":0.0},{"mes":"b","is_user":"true"},{"mes":"c","is_user":"yes"}]}"#,
    ];
    let limits = ChatLimits {
        max_messages: 3,
        ..ChatLimits::default()
    };
    let mut out = String::new();
    for i in &inputs {
        let r = ccv3_lore::chat::parse_chat_with_warnings(i, &ChatLimits::default());
        out.push_str(&format!(
            "{i:?}\n  => {:?}\n",
            r.map(|(c, w)| (c, w.iter().map(|d| d.message.clone()).collect::<Vec<_>>()))
                .map_err(|e| e.to_string())
        ));
        out.push_str(&format!(
            "  limited => {:?}\n",
            parse_chat_with(i, &limits)
                .map(|c| c.messages.len())
                .map_err(|e| e.to_string())
        ));
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(i) {
            out.push_str(&format!(
                "  value => {:?}\n",
                chat_from_value(&v).map_err(|e| e.to_string())
            ));
        }
    }
    let many = format!("[{}]", [r#"{"role":"user","content":""}"#; 4].join(","));
    out.push_str(&format!(
        "many => {:?}\n",
        parse_chat_with(&many, &limits)
            .map(|c| c.messages.len())
            .map_err(|e| e.to_string())
    ));
    let many = format!("[{},5,", [r#"{"role":"user","content":""}"#; 4].join(","));
    out.push_str(&format!(
        "many broken => {:?}\n",
        parse_chat_with(&many, &limits)
            .map(|c| c.messages.len())
            .map_err(|e| e.to_string())
    ));
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/chat_shapes.txt");
    if std::env::var_os("CCV3_BLESS").is_some() {
        std::fs::write(&path, &out).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap();
    for (n, (a, b)) in expected.lines().zip(out.lines()).enumerate() {
        assert_eq!(a, b, "line {}", n + 1);
    }
    assert_eq!(expected.lines().count(), out.lines().count());
}
