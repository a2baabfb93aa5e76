//! Chats to scan, oldest message first.
//!
//! Three input formats are read by [`parse_chat`]:
//! - a JSON array of `{"role": "user"|"assistant"|"system", "name": ..., "content": ...}`;
//! - an object `{"messages": [{"name": ..., "is_user": bool, "mes": ...}, ...]}`;
//! - a SillyTavern chat `.jsonl`: one JSON object per line; a first line without `mes` is the
//!   metadata (`user_name`, `character_name`); each other line is a message with `name`,
//!   `is_user`, `is_system` and `mes`. Messages with `is_system: true` are hidden messages in
//!   SillyTavern (left out of prompts and scans) and are left out here too.

use crate::LoreError;
use serde_json::Value;

/// The most messages a chat may have.
pub const MAX_MESSAGES: usize = 1_000_000;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The user.
    User,
    /// The character (the greeting included).
    Assistant,
    /// A system or narrator message.
    System,
}

impl Role {
    /// `user`, `assistant` or `system`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
        }
    }
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// The speaker's name when the input gave one.
    pub name: Option<String>,
    /// The text.
    pub content: String,
}

impl Message {
    /// A message without a name.
    pub fn new(role: Role, content: &str) -> Self {
        Message {
            role,
            name: None,
            content: content.to_string(),
        }
    }
}

/// A chat, oldest message first, with the names its file recorded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Chat {
    /// The messages, oldest first.
    pub messages: Vec<Message>,
    /// `user_name` from SillyTavern chat metadata.
    pub user_name: Option<String>,
    /// `character_name` from SillyTavern chat metadata.
    pub character_name: Option<String>,
}

impl Chat {
    /// The number of assistant messages (what `@@activate_only_after`/`_every` count).
    pub fn assistant_count(&self) -> usize {
        self.messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count()
    }
}

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn truthy(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s == "true",
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        _ => false,
    }
}

fn role_message(v: &Value, at: &str) -> Result<Message, LoreError> {
    let obj = v
        .as_object()
        .ok_or_else(|| LoreError::chat(at, "a message must be an object"))?;
    let role = match obj.get("role").and_then(Value::as_str) {
        Some("user") => Role::User,
        Some("assistant") | Some("char") | Some("character") => Role::Assistant,
        Some("system") => Role::System,
        Some(other) => {
            return Err(LoreError::chat(
                at,
                format!("role {other:?} is not user, assistant or system"),
            ))
        }
        None => {
            return st_message(v, at)?
                .ok_or_else(|| LoreError::chat(at, "a message needs a role (or is_user and mes)"))
        }
    };
    let content = text(obj.get("content"))
        .or_else(|| text(obj.get("mes")))
        .ok_or_else(|| LoreError::chat(at, "a message needs a string content"))?;
    Ok(Message {
        role,
        name: text(obj.get("name")),
        content,
    })
}

/// A SillyTavern message, or `None` for a hidden (`is_system`) one.
fn st_message(v: &Value, at: &str) -> Result<Option<Message>, LoreError> {
    let obj = v
        .as_object()
        .ok_or_else(|| LoreError::chat(at, "a message must be an object"))?;
    let content =
        text(obj.get("mes")).ok_or_else(|| LoreError::chat(at, "a message needs a string mes"))?;
    if truthy(obj.get("is_system")) {
        return Ok(None);
    }
    Ok(Some(Message {
        role: if truthy(obj.get("is_user")) {
            Role::User
        } else {
            Role::Assistant
        },
        name: text(obj.get("name")),
        content,
    }))
}

fn check_len(n: usize) -> Result<(), LoreError> {
    if n > MAX_MESSAGES {
        return Err(LoreError::Limit(format!(
            "chat has more than {MAX_MESSAGES} messages"
        )));
    }
    Ok(())
}

/// Reads a chat in any of the formats of the module docs.
///
/// # Errors
/// [`LoreError::Chat`] naming the message (`[3]` or `line 4`) and the problem.
///
/// ```
/// let chat = ccv3_lore::chat::parse_chat(r#"[{"role":"user","content":"hi"},{"role":"assistant","name":"Aqua","content":"hello"}]"#)?;
/// assert_eq!(chat.messages.len(), 2);
/// assert_eq!(chat.assistant_count(), 1);
/// # Ok::<(), ccv3_lore::LoreError>(())
/// ```
pub fn parse_chat(input: &str) -> Result<Chat, LoreError> {
    let input = input.trim_start_matches('\u{feff}');
    let trimmed = input.trim_start();
    if let Ok(v) = serde_json::from_str::<Value>(input) {
        match v {
            Value::Array(items) => {
                check_len(items.len())?;
                let mut chat = Chat::default();
                for (i, m) in items.iter().enumerate() {
                    chat.messages.push(role_message(m, &format!("[{i}]"))?);
                }
                return Ok(chat);
            }
            Value::Object(ref o) if o.contains_key("messages") => {
                let items = o
                    .get("messages")
                    .and_then(Value::as_array)
                    .ok_or_else(|| LoreError::chat("messages", "must be an array"))?;
                check_len(items.len())?;
                let mut chat = Chat {
                    user_name: text(o.get("user_name")),
                    character_name: text(o.get("character_name")),
                    ..Default::default()
                };
                for (i, m) in items.iter().enumerate() {
                    let at = format!("messages[{i}]");
                    if m.get("role").is_some() {
                        chat.messages.push(role_message(m, &at)?);
                    } else if let Some(msg) = st_message(m, &at)? {
                        chat.messages.push(msg);
                    }
                }
                return Ok(chat);
            }
            Value::Object(_) => {} // a one-line .jsonl
            _ => {
                return Err(LoreError::chat(
                    "",
                    "a chat must be a JSON array, an object with messages, or JSON lines",
                ))
            }
        }
    } else if trimmed.starts_with('[') {
        let e = serde_json::from_str::<Value>(input).err();
        return Err(LoreError::chat(
            "",
            format!(
                "invalid JSON: {}",
                e.map(|e| e.to_string()).unwrap_or_default()
            ),
        ));
    }
    let mut chat = Chat::default();
    for (n, line) in input.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let at = format!("line {}", n + 1);
        let v: Value = serde_json::from_str(line)
            .map_err(|e| LoreError::chat(&at, format!("invalid JSON: {e}")))?;
        if v.get("mes").is_none() && v.get("content").is_none() {
            if chat.messages.is_empty() {
                chat.user_name = text(v.get("user_name"));
                chat.character_name = text(v.get("character_name"));
                continue;
            }
            return Err(LoreError::chat(&at, "a message needs mes"));
        }
        let msg = if v.get("role").is_some() {
            Some(role_message(&v, &at)?)
        } else {
            st_message(&v, &at)?
        };
        if let Some(m) = msg {
            chat.messages.push(m);
            check_len(chat.messages.len())?;
        }
    }
    Ok(chat)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_json_array_with_roles() {
        let c = parse_chat(
            r#"[{"role":"system","content":"s"},{"role":"user","name":"K","content":"u"}]"#,
        )
        .unwrap();
        assert_eq!(c.messages[0].role, Role::System);
        assert_eq!(c.messages[1].name.as_deref(), Some("K"));
    }

    #[test]
    fn chat_sillytavern_jsonl_skips_hidden_messages() {
        let s = "{\"user_name\":\"You\",\"character_name\":\"Aqua\",\"chat_metadata\":{}}\n\
                 {\"name\":\"Aqua\",\"is_user\":false,\"mes\":\"Hello\"}\n\
                 {\"name\":\"You\",\"is_user\":true,\"mes\":\"Hi\"}\n\
                 {\"name\":\"Narrator\",\"is_user\":false,\"is_system\":true,\"mes\":\"hidden\"}\n";
        let c = parse_chat(s).unwrap();
        assert_eq!(c.messages.len(), 2);
        assert_eq!(c.user_name.as_deref(), Some("You"));
        assert_eq!(c.messages[1].role, Role::User);
    }

    #[test]
    fn chat_peers_messages_object() {
        let c = parse_chat(r#"{"messages":[{"name":"User","is_user":true,"mes":"a"},{"name":"S","is_user":false,"mes":"b"}]}"#).unwrap();
        assert_eq!(c.assistant_count(), 1);
    }

    #[test]
    fn chat_errors_name_the_message() {
        let e = parse_chat(r#"[{"role":"robot","content":"x"}]"#).unwrap_err();
        assert!(e.to_string().contains("[0]"), "{e}");
        let e = parse_chat("{\"mes\":\"a\"}\nnot json").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
    }
}
