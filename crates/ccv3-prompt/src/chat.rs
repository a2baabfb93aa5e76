//! Chat messages: the roles, and reading a chat file.
//!
//! A chat file is either
//! - a JSON array of `{"role": "user"|"assistant"|"system", "name": ..., "content": ...}`,
//!   oldest first (`name` optional), or
//! - a SillyTavern chat `.jsonl` file: one JSON object per line; a first line without `mes` is the
//!   chat's metadata and is skipped; every other line is `{"name", "is_user", "is_system", "mes"}`
//!   and becomes a user message (`is_user`), a system message (`is_system`) or an assistant
//!   message.
//!
//! Both are read by [`parse_chat`]: input whose first non-blank character is `[` is the array form.

use crate::error::Error;
use serde::{Deserialize, Serialize};

/// The largest chat file [`parse_chat`] reads (64 MiB).
pub const MAX_CHAT_BYTES: usize = 64 * 1024 * 1024;
/// The most messages [`parse_chat`] reads.
pub const MAX_CHAT_MESSAGES: usize = 1_000_000;

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions and context.
    System,
    /// The human.
    User,
    /// The character (the model).
    Assistant,
}

impl Role {
    /// `system`, `user` or `assistant`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }

    /// Reads `system`, `user` or `assistant` (ASCII case-insensitive); `char`, `bot` and
    /// `model` are read as `assistant`.
    pub fn parse(s: &str) -> Option<Role> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("system") {
            Some(Role::System)
        } else if s.eq_ignore_ascii_case("user") {
            Some(Role::User)
        } else if ["assistant", "char", "bot", "model"]
            .iter()
            .any(|r| s.eq_ignore_ascii_case(r))
        {
            Some(Role::Assistant)
        } else {
            None
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One message of the chat history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who speaks.
    pub role: Role,
    /// The speaker's display name, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The text.
    pub content: String,
}

impl ChatMessage {
    /// A message without a name.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        ChatMessage {
            role,
            name: None,
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    /// Sets the speaker's name.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Reads a chat file (a JSON array or SillyTavern `.jsonl`, see the module docs).
///
/// # Errors
/// [`Error::Limit`] above [`MAX_CHAT_BYTES`] or [`MAX_CHAT_MESSAGES`], [`Error::Chat`] naming the
/// element or line that is not a message.
///
/// ```
/// let chat = ccv3_prompt::parse_chat(r#"[{"role":"user","name":"Ann","content":"Hi"}]"#)?;
/// assert_eq!(chat[0].content, "Hi");
/// let st = "{\"user_name\":\"Ann\"}\n{\"name\":\"Ann\",\"is_user\":true,\"mes\":\"Hi\"}\n";
/// assert_eq!(ccv3_prompt::parse_chat(st)?[0].role, ccv3_prompt::Role::User);
/// # Ok::<(), ccv3_prompt::Error>(())
/// ```
pub fn parse_chat(text: &str) -> Result<Vec<ChatMessage>, Error> {
    if text.len() > MAX_CHAT_BYTES {
        return Err(Error::Limit {
            what: "chat".into(),
            size: text.len() as u64,
            limit: MAX_CHAT_BYTES as u64,
        });
    }
    let text = text.trim_start_matches('\u{feff}');
    if text.trim_start().starts_with('[') {
        parse_array(text)
    } else {
        parse_jsonl(text)
    }
}

fn parse_array(text: &str) -> Result<Vec<ChatMessage>, Error> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| Error::Chat {
        place: format!("line {} column {}", e.line(), e.column()),
        problem: format!("not JSON: {e}"),
    })?;
    let items = match value {
        serde_json::Value::Array(items) => items,
        _ => {
            return Err(Error::Chat {
                place: "top level".into(),
                problem: "expected an array of messages".into(),
            })
        }
    };
    check_count(items.len())?;
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| message_from_object(&item, &format!("[{i}]")))
        .collect()
}

fn check_count(n: usize) -> Result<(), Error> {
    if n > MAX_CHAT_MESSAGES {
        return Err(Error::Limit {
            what: "chat message count".into(),
            size: n as u64,
            limit: MAX_CHAT_MESSAGES as u64,
        });
    }
    Ok(())
}

fn message_from_object(item: &serde_json::Value, place: &str) -> Result<ChatMessage, Error> {
    let obj = item.as_object().ok_or_else(|| Error::Chat {
        place: place.to_string(),
        problem: "a message must be an object".into(),
    })?;
    let role = match obj.get("role") {
        Some(serde_json::Value::String(r)) => Role::parse(r).ok_or_else(|| Error::Chat {
            place: format!("{place}.role"),
            problem: format!("unknown role {r:?}; expected user, assistant or system"),
        })?,
        Some(_) => {
            return Err(Error::Chat {
                place: format!("{place}.role"),
                problem: "role must be a string".into(),
            })
        }
        None => {
            return Err(Error::Chat {
                place: place.to_string(),
                problem: "missing role".into(),
            })
        }
    };
    let content = match obj.get("content") {
        Some(serde_json::Value::String(c)) => c.clone(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(_) => {
            return Err(Error::Chat {
                place: format!("{place}.content"),
                problem: "content must be a string".into(),
            })
        }
    };
    let name = obj.get("name").and_then(|n| n.as_str()).map(str::to_string);
    Ok(ChatMessage {
        role,
        name,
        content,
    })
}

fn parse_jsonl(text: &str) -> Result<Vec<ChatMessage>, Error> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let place = format!("line {}", i + 1);
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| Error::Chat {
            place: place.clone(),
            problem: format!("not JSON: {e}"),
        })?;
        let obj = v.as_object().ok_or_else(|| Error::Chat {
            place: place.clone(),
            problem: "each line must be a JSON object".into(),
        })?;
        let Some(mes) = obj.get("mes") else {
            if out.is_empty() {
                continue; // the metadata header
            }
            return Err(Error::Chat {
                place,
                problem: "missing mes".into(),
            });
        };
        let content = mes.as_str().unwrap_or_default().to_string();
        let flag = |k: &str| obj.get(k).and_then(|b| b.as_bool()).unwrap_or(false);
        let role = if flag("is_user") {
            Role::User
        } else if flag("is_system") {
            Role::System
        } else {
            Role::Assistant
        };
        let name = obj.get("name").and_then(|n| n.as_str()).map(str::to_string);
        out.push(ChatMessage {
            role,
            name,
            content,
        });
        check_count(out.len())?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_array_reads_roles_names_and_content() {
        let chat = parse_chat(
            r#"[{"role":"assistant","name":"Bot","content":"Hello"},{"role":"USER","content":"Hi"}]"#,
        )
        .unwrap();
        assert_eq!(chat.len(), 2);
        assert_eq!(chat[0], ChatMessage::assistant("Hello").named("Bot"));
        assert_eq!(chat[1], ChatMessage::user("Hi"));
    }

    #[test]
    fn chat_unknown_role_is_an_error_naming_the_element() {
        let err =
            parse_chat(r#"[{"role":"user","content":"a"},{"role":"narrator","content":"b"}]"#)
                .unwrap_err();
        assert!(err.to_string().contains("[1].role"), "{err}");
    }

    #[test]
    fn chat_sillytavern_jsonl_skips_metadata_header() {
        let st = concat!(
            "{\"user_name\":\"Ann\",\"character_name\":\"Bot\"}\n",
            "{\"name\":\"Bot\",\"is_user\":false,\"mes\":\"Hello\"}\n",
            "{\"name\":\"Ann\",\"is_user\":true,\"mes\":\"Hi\"}\n",
            "{\"name\":\"Note\",\"is_system\":true,\"mes\":\"sys\"}\n"
        );
        let chat = parse_chat(st).unwrap();
        let roles: Vec<Role> = chat.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::Assistant, Role::User, Role::System]);
    }

    #[test]
    fn chat_not_json_is_an_error_not_a_panic() {
        assert!(parse_chat("[{").is_err());
        assert!(parse_chat("{\"mes\":1}\nnope").is_err());
        assert!(parse_chat("").unwrap().is_empty());
    }
}
