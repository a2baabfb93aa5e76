//! Chat macros, [`crate::Family::Chat`].
//!
//! | macro (aliases) | result |
//! |---|---|
//! | `{{lastMessage}}` | content of the last message, any role |
//! | `{{lastUserMessage}}` (`previoususerchat`) | content of the last user message |
//! | `{{lastCharMessage}}` (`previouscharchat`) | content of the last character message |
//! | `{{lastMessageId}}` (`lastmessageindex`) | 0-based index of the last message |
//! | `{{firstMsgIndex}}` (`firstmessageindex`) | the greeting index (0 = `first_mes`) |
//!
//! Empty when there is no such message. Message text is inserted as it is (not expanded).
//!
//! ```
//! use ccv3_cbs::{expand, Context, Message, Role};
//! let ctx = Context::new()
//!     .with_message(Message::new(Role::Char, "Alice", "Hello"))
//!     .with_message(Message::new(Role::User, "Bob", "Hi {{char}}"))
//!     .with_message(Message::new(Role::System, "", "[note]"))
//!     .with_greeting_index(2);
//! assert_eq!(expand("{{lastMessage}}", &ctx), "[note]");
//! assert_eq!(expand("{{lastUserMessage}}", &ctx), "Hi {{char}}");
//! assert_eq!(expand("{{lastCharMessage}}", &ctx), "Hello");
//! assert_eq!(expand("{{lastMessageId}}", &ctx), "2");
//! assert_eq!(expand("{{firstMsgIndex}} {{first_message_index}}", &ctx), "2 2");
//! assert_eq!(expand("{{lastMessageIndex}}", &ctx), "2");
//! assert_eq!(expand("{{previous_char_chat}}|{{previous_user_chat}}", &ctx), "Hello|Hi {{char}}");
//! assert_eq!(expand("[{{lastMessageId}}]", &Context::new()), "[]");
//! ```

use crate::context::Role;
use crate::registry::{Family, Registry};

/// Adds the chat macros.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::chat::register(&mut registry);
/// assert!(registry.contains("lastmessage"));
/// ```
pub fn register(r: &mut Registry) {
    let f = Family::Chat;
    r.register_all(f, &["lastmessage"], |c| {
        Some(
            c.context()
                .messages
                .last()
                .map(|m| m.content.clone())
                .unwrap_or_default(),
        )
    });
    for (names, role) in [
        (&["lastusermessage", "previoususerchat"], Role::User),
        (&["lastcharmessage", "previouscharchat"], Role::Char),
    ] {
        r.register_all(f, names, move |c| {
            Some(
                c.context()
                    .messages
                    .iter()
                    .rev()
                    .find(|m| m.role == role)
                    .map(|m| m.content.clone())
                    .unwrap_or_default(),
            )
        });
    }
    r.register_all(f, &["lastmessageid", "lastmessageindex"], |c| {
        Some(
            c.context()
                .messages
                .len()
                .checked_sub(1)
                .map(|i| i.to_string())
                .unwrap_or_default(),
        )
    });
    r.register_all(f, &["firstmsgindex", "firstmessageindex"], |c| {
        Some(
            c.context()
                .greeting_index
                .map(|i| i.to_string())
                .unwrap_or_else(|| "0".to_owned()),
        )
    });
}
