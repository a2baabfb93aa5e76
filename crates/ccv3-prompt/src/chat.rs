//! Chat messages: ccv3's one message type and chat reader, from the lorebook engine
//! ([`ccv3_lore::chat`]), so the engine, prompt assembly, the CLI and the bindings read chats
//! alike. [`ChatMessage`] is [`ccv3_lore::chat::Message`].

pub use ccv3_lore::chat::{
    parse_chat, parse_chat_with, seed_from_messages, Chat, ChatLimits, Message as ChatMessage,
    Role, CHAT_SHAPES, MAX_CHAT_BYTES, MAX_MESSAGES as MAX_CHAT_MESSAGES,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_array_reads_roles_names_and_content() {
        let chat = parse_chat(
            r#"[{"role":"assistant","name":"Bot","content":"Hello"},{"role":"USER","content":"Hi"}]"#,
        )
        .unwrap();
        assert_eq!(
            chat.messages,
            [
                ChatMessage::assistant("Hello").named("Bot"),
                ChatMessage::user("Hi")
            ]
        );
    }

    /// Issue 11: the prompt's reader used to read `{"messages":[...]}` as 0 messages.
    #[test]
    fn chat_messages_object_is_read_not_dropped() {
        let chat = parse_chat(r#"{"messages":[{"role":"user","content":"a"},{"name":"B","is_user":false,"mes":"b"}]}"#)
            .unwrap();
        assert_eq!(chat.messages.len(), 2);
        assert_eq!(chat.messages[1].role, Role::Assistant);
    }

    #[test]
    fn chat_unknown_role_is_an_error_naming_the_element() {
        let err =
            parse_chat(r#"[{"role":"user","content":"a"},{"role":"narrator","content":"b"}]"#)
                .unwrap_err();
        assert!(err.to_string().contains("[1]"), "{err}");
    }

    #[test]
    fn chat_not_json_is_an_error_not_a_panic() {
        assert!(parse_chat("[{").is_err());
        assert!(parse_chat("{\"mes\":1}\nnope").is_err());
        assert!(parse_chat("").is_err());
        assert!(parse_chat("[]").unwrap().messages.is_empty());
    }
}
