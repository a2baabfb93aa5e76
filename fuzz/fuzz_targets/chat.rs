//! Fuzzes ccv3's one chat reader (`ccv3_lore::chat::parse_chat_with`) with small limits: any
//! input is a chat within the limits or an error, never a panic; a chat read back from its own
//! JSON has the same roles and contents (issue 12).
#![no_main]

use ccv3_lore::chat::{parse_chat_with, ChatLimits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let limits = ChatLimits {
        max_bytes: 1 << 20,
        max_messages: 64,
    };
    let Ok(chat) = parse_chat_with(text, &limits) else {
        return;
    };
    assert!(chat.messages.len() <= limits.max_messages);
    let _ = chat.seed();
    let json = serde_json::to_string(&chat.messages).expect("messages serialise");
    let back = parse_chat_with(&json, &ChatLimits::default()).expect("own JSON reads back");
    let shape = |c: &ccv3_lore::chat::Chat| -> Vec<(ccv3_lore::chat::Role, String)> {
        c.messages
            .iter()
            .map(|m| (m.role, m.content.clone()))
            .collect()
    };
    assert_eq!(shape(&back), shape(&chat));
});
