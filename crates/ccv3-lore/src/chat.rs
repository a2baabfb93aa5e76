//! Chats, oldest message first: the one message type and the one chat reader of ccv3 (the
//! engine, prompt assembly, the CLI and the bindings all read chats here).
//!
//! [`parse_chat`] reads three shapes:
//! - a JSON array of `{"role": "user"|"assistant"|"system", "name": ..., "content": ...}`
//!   (`name` optional; roles are ASCII case-insensitive, and `char`, `character`, `bot` and
//!   `model` mean `assistant`; a `null` content is an empty message);
//! - an object `{"messages": [...]}` whose items are such messages or SillyTavern messages
//!   (`{"name", "is_user", "is_system", "mes"}`), with optional `user_name` and
//!   `character_name`;
//! - a SillyTavern chat `.jsonl`: one JSON object per line; a first line without `mes` is the
//!   metadata (`user_name`, `character_name`, `chat_metadata`, `create_date`); each other line
//!   is a message.
//!
//! Messages with `is_system: true` are hidden messages in SillyTavern (left out of prompts and
//! scans) and are left out here too. Anything else (an empty input, a number, an object that is
//! neither `{"messages": [...]}`, a message nor SillyTavern metadata, ...) is a
//! [`LoreError::Chat`] naming the shapes read. Inputs are capped at [`MAX_CHAT_BYTES`] and
//! [`MAX_MESSAGES`] ([`LoreError::Limit`]).

use crate::error::LoreError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most messages a chat may have.
pub const MAX_MESSAGES: usize = 1_000_000;

/// The largest chat text [`parse_chat`] reads (64 MiB).
pub const MAX_CHAT_BYTES: usize = 64 * 1024 * 1024;

/// The bounds of [`parse_chat_with`]; the default is [`MAX_CHAT_BYTES`] and [`MAX_MESSAGES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChatLimits {
    /// The largest chat text read, in bytes.
    pub max_bytes: usize,
    /// The most messages (counted while the JSON is read, so a chat of millions of empty
    /// messages is refused before they are all held).
    pub max_messages: usize,
}

impl Default for ChatLimits {
    fn default() -> Self {
        ChatLimits {
            max_bytes: MAX_CHAT_BYTES,
            max_messages: MAX_MESSAGES,
        }
    }
}

/// The shapes [`parse_chat`] reads, as its errors name them.
pub const CHAT_SHAPES: &str = "a chat is a JSON array of {role, name, content}, an object \
{\"messages\": [...]}, or SillyTavern .jsonl lines";

/// Who wrote a message. Serialised as `system`, `user` or `assistant`; deserialised with
/// [`Role::parse`] (so `char`, `bot`, `USER` are read as in chat files).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A system or narrator message (instructions and context in a prompt).
    System,
    /// The user.
    User,
    /// The character (the greeting included; the model in a prompt).
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

    /// Reads `system`, `user` or `assistant` (ASCII case-insensitive, surrounding blanks
    /// ignored); `char`, `character`, `bot` and `model` are read as `assistant`.
    ///
    /// ```
    /// use ccv3_lore::chat::Role;
    /// assert_eq!(Role::parse(" USER "), Some(Role::User));
    /// assert_eq!(Role::parse("char"), Some(Role::Assistant));
    /// assert_eq!(Role::parse("narrator"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Role> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("system") {
            Some(Role::System)
        } else if s.eq_ignore_ascii_case("user") {
            Some(Role::User)
        } else if ["assistant", "char", "character", "bot", "model"]
            .iter()
            .any(|r| s.eq_ignore_ascii_case(r))
        {
            Some(Role::Assistant)
        } else {
            None
        }
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Role::parse(&s).ok_or_else(|| {
            serde::de::Error::custom(format!("role {s:?} is not user, assistant or system"))
        })
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One chat message. Serialised as `{"role", "name", "content"}` (`name` left out when unknown).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// The speaker's name when the input gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The text.
    pub content: String,
}

impl Message {
    /// A message without a name.
    pub fn new(role: Role, content: impl AsRef<str>) -> Self {
        Message {
            role,
            name: None,
            content: content.as_ref().to_owned(),
        }
    }

    /// A user message.
    pub fn user(content: impl AsRef<str>) -> Self {
        Self::new(Role::User, content)
    }

    /// An assistant message.
    pub fn assistant(content: impl AsRef<str>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// A system message.
    pub fn system(content: impl AsRef<str>) -> Self {
        Self::new(Role::System, content)
    }

    /// Sets the speaker's name.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// A chat, oldest message first, with the names its file recorded.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Chat {
    /// The messages, oldest first.
    pub messages: Vec<Message>,
    /// `user_name` from SillyTavern chat metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_name: Option<String>,
    /// `character_name` from SillyTavern chat metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub character_name: Option<String>,
}

impl From<Vec<Message>> for Chat {
    fn from(messages: Vec<Message>) -> Self {
        Chat {
            messages,
            ..Default::default()
        }
    }
}

impl Chat {
    /// The number of assistant messages (what `@@activate_only_after`/`_every` count).
    pub fn assistant_count(&self) -> usize {
        self.messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count()
    }

    /// The chat's default seed: [`seed_from_messages`] of its messages.
    pub fn seed(&self) -> u64 {
        seed_from_messages(&self.messages)
    }
}

/// A seed that is the same for the same chat: FNV-1a 64 over each message's content followed by
/// a zero byte, oldest first (roles and names do not count). It is the default seed of lorebook
/// probability rolls, group weights and `{{random}}`/`{{pick}}`/`{{roll}}`, so the same chat
/// activates the same entries and gives the same prompt every time.
///
/// ```
/// use ccv3_lore::chat::{seed_from_messages, Message};
/// assert_eq!(seed_from_messages(&[]), 0xcbf2_9ce4_8422_2325);
/// let a = seed_from_messages(&[Message::user("hi")]);
/// assert_eq!(a, seed_from_messages(&[Message::assistant("hi")]));
/// assert_ne!(a, seed_from_messages(&[Message::user("hi"), Message::user("")]));
/// ```
pub fn seed_from_messages(messages: &[Message]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for m in messages {
        for b in m.content.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// One field of a message (or of a chat object) as read: the reader only tells text, numbers
/// and flags from the rest, so arrays and objects are skipped while they are read.
#[derive(Debug, Default)]
enum Field {
    /// The key was not there.
    #[default]
    Absent,
    Null,
    Bool(bool),
    Str(String),
    Num(serde_json::Number),
    /// An array or an object (skipped).
    Other,
}

impl Field {
    fn of(v: Option<&Value>) -> Field {
        match v {
            None => Field::Absent,
            Some(Value::Null) => Field::Null,
            Some(Value::Bool(b)) => Field::Bool(*b),
            Some(Value::String(s)) => Field::Str(s.clone()),
            Some(Value::Number(n)) => Field::Num(n.clone()),
            Some(_) => Field::Other,
        }
    }

    fn present(&self) -> bool {
        !matches!(self, Field::Absent)
    }

    /// A string as it is, a number as its JSON text.
    fn text(self) -> Option<String> {
        match self {
            Field::Str(s) => Some(s),
            Field::Num(n) => Some(n.to_string()),
            _ => None,
        }
    }

    fn truthy(&self) -> bool {
        match self {
            Field::Bool(b) => *b,
            Field::Str(s) => s == "true",
            Field::Num(n) => n.as_f64().is_some_and(|f| f != 0.0),
            _ => false,
        }
    }
}

/// The keys of a message, and of a chat object or SillyTavern's metadata line, that the reader
/// looks at; the others are skipped.
#[derive(Debug, Default)]
struct Fields {
    role: Field,
    name: Field,
    content: Field,
    mes: Field,
    is_user: Field,
    is_system: Field,
    user_name: Field,
    character_name: Field,
    chat_metadata: bool,
    create_date: bool,
}

impl Fields {
    fn of(o: &serde_json::Map<String, Value>) -> Fields {
        Fields {
            role: Field::of(o.get("role")),
            name: Field::of(o.get("name")),
            content: Field::of(o.get("content")),
            mes: Field::of(o.get("mes")),
            is_user: Field::of(o.get("is_user")),
            is_system: Field::of(o.get("is_system")),
            user_name: Field::of(o.get("user_name")),
            character_name: Field::of(o.get("character_name")),
            chat_metadata: o.contains_key("chat_metadata"),
            create_date: o.contains_key("create_date"),
        }
    }

    /// True for SillyTavern chat metadata (the first line of a `.jsonl` chat).
    fn is_metadata(&self) -> bool {
        self.user_name.present()
            || self.character_name.present()
            || self.chat_metadata
            || self.create_date
    }
}

/// A message of a message array: an object's fields, or something else (an error).
#[derive(Debug)]
enum Item {
    Object(Box<Fields>),
    Other,
}

/// Which rule reads the items of a message array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// A top-level array: every item is a `{role, name, content}` message (`[i]`).
    Array,
    /// `messages` of a chat object: items with a `role` key are such messages, the others
    /// SillyTavern messages (`messages[i]`).
    Messages,
}

impl Shape {
    /// Reads the `i`th item: `None` for a hidden SillyTavern message.
    fn message(self, item: Item, i: usize) -> Result<Option<Message>, LoreError> {
        match self {
            Shape::Array => role_message(item, &format!("[{i}]")).map(Some),
            Shape::Messages => {
                let at = format!("messages[{i}]");
                match item {
                    Item::Object(f) if f.role.present() => {
                        role_message(Item::Object(f), &at).map(Some)
                    }
                    other => st_message(other, &at),
                }
            }
        }
    }
}

fn role_message(item: Item, at: &str) -> Result<Message, LoreError> {
    let Item::Object(mut f) = item else {
        return Err(LoreError::chat(at, "a message must be an object"));
    };
    let role = match std::mem::take(&mut f.role) {
        Field::Str(r) => Role::parse(&r).ok_or_else(|| {
            LoreError::chat(at, format!("role {r:?} is not user, assistant or system"))
        })?,
        Field::Null | Field::Absent => {
            return st_message(Item::Object(f), at)?
                .ok_or_else(|| LoreError::chat(at, "a message needs a role (or is_user and mes)"))
        }
        _ => return Err(LoreError::chat(at, "role must be a string")),
    };
    let content = match std::mem::take(&mut f.content) {
        Field::Null => Some(String::new()),
        c => c.text(),
    }
    .or_else(|| std::mem::take(&mut f.mes).text())
    .ok_or_else(|| LoreError::chat(at, "a message needs a string content"))?;
    Ok(Message {
        role,
        name: std::mem::take(&mut f.name).text(),
        content,
    })
}

/// A SillyTavern message, or `None` for a hidden (`is_system`) one.
fn st_message(item: Item, at: &str) -> Result<Option<Message>, LoreError> {
    let Item::Object(mut f) = item else {
        return Err(LoreError::chat(at, "a message must be an object"));
    };
    let content = std::mem::take(&mut f.mes)
        .text()
        .ok_or_else(|| LoreError::chat(at, "a message needs a string mes"))?;
    if f.is_system.truthy() {
        return Ok(None);
    }
    Ok(Some(Message {
        role: if f.is_user.truthy() {
            Role::User
        } else {
            Role::Assistant
        },
        name: std::mem::take(&mut f.name).text(),
        content,
    }))
}

fn check_len(n: usize, max: usize) -> Result<(), LoreError> {
    if n > max {
        return Err(too_many(max));
    }
    Ok(())
}

fn too_many(max: usize) -> LoreError {
    LoreError::Limit(format!("chat has more than {max} messages"))
}

/// A whole chat document (or one `.jsonl` line) as read.
#[derive(Debug)]
enum Doc {
    /// A top-level array, its items read into messages.
    Array(Result<Vec<Message>, LoreError>),
    /// An object: its own fields, and its `messages` when it has that key.
    Object {
        fields: Box<Fields>,
        messages: Option<Messages>,
    },
    /// Anything else, by its JSON type name.
    Scalar(&'static str),
}

/// The `messages` of a chat object.
#[derive(Debug)]
enum Messages {
    Read(Result<Vec<Message>, LoreError>),
    NotArray,
}

/// Reads a chat's JSON straight into messages, without a tree: each message object is read
/// into its [`Fields`] (only the keys the reader looks at; arrays and objects inside skipped)
/// and turned into a [`Message`] at once, and the message arrays (the top-level array, or
/// `messages` of a top-level object) are cut off at `max` items while they are read. A chat of
/// a million tiny messages is held as its messages only (issue 12: a tree per message took
/// 1.3 GB beside a big book); a chat of millions of empty messages is refused before they are
/// all held. `over` is set when the cut happened. The first message that cannot be read is
/// kept as the array's error and reported once the whole text has parsed, so broken JSON
/// still wins over it, as when a tree was read first.
mod capped {
    use super::{Doc, Field, Fields, Item, Message, Messages, Shape};
    use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use std::cell::Cell;
    use std::fmt;

    /// The keys looked at.
    enum Key {
        Role,
        Name,
        Content,
        Mes,
        IsUser,
        IsSystem,
        UserName,
        CharacterName,
        ChatMetadata,
        CreateDate,
        Messages,
        Other,
    }

    impl Key {
        fn of(k: &str) -> Key {
            match k {
                "role" => Key::Role,
                "name" => Key::Name,
                "content" => Key::Content,
                "mes" => Key::Mes,
                "is_user" => Key::IsUser,
                "is_system" => Key::IsSystem,
                "user_name" => Key::UserName,
                "character_name" => Key::CharacterName,
                "chat_metadata" => Key::ChatMetadata,
                "create_date" => Key::CreateDate,
                "messages" => Key::Messages,
                _ => Key::Other,
            }
        }
    }

    /// A key, classified without allocating it.
    struct KeySeed;
    impl<'de> DeserializeSeed<'de> for KeySeed {
        type Value = Key;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Key, D::Error> {
            d.deserialize_str(self)
        }
    }
    impl<'de> Visitor<'de> for KeySeed {
        type Value = Key;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a key")
        }
        fn visit_str<E>(self, v: &str) -> Result<Key, E> {
            Ok(Key::of(v))
        }
    }

    macro_rules! scalars {
        ($out:ty, $wrap:expr) => {
            fn visit_bool<E>(self, v: bool) -> Result<$out, E> {
                Ok($wrap(Field::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<$out, E> {
                Ok($wrap(Field::Num(v.into())))
            }
            fn visit_u64<E>(self, v: u64) -> Result<$out, E> {
                Ok($wrap(Field::Num(v.into())))
            }
            fn visit_f64<E>(self, v: f64) -> Result<$out, E> {
                Ok($wrap(
                    serde_json::Number::from_f64(v).map_or(Field::Null, Field::Num),
                ))
            }
            fn visit_str<E>(self, v: &str) -> Result<$out, E> {
                Ok($wrap(Field::Str(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<$out, E> {
                Ok($wrap(Field::Str(v)))
            }
            fn visit_unit<E>(self) -> Result<$out, E> {
                Ok($wrap(Field::Null))
            }
        };
    }

    /// One field's value: scalars as they are; arrays and objects skipped.
    struct FieldSeed;
    impl<'de> DeserializeSeed<'de> for FieldSeed {
        type Value = Field;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Field, D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for FieldSeed {
        type Value = Field;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Field, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Field::Other)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Field, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Field::Other)
        }
        scalars!(Field, |f| f);
    }

    /// Reads the value of `key` into `fields`; false when the key is not one of them.
    fn field<'de, A: MapAccess<'de>>(
        fields: &mut Fields,
        key: &Key,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        let slot = match key {
            Key::Role => &mut fields.role,
            Key::Name => &mut fields.name,
            Key::Content => &mut fields.content,
            Key::Mes => &mut fields.mes,
            Key::IsUser => &mut fields.is_user,
            Key::IsSystem => &mut fields.is_system,
            Key::UserName => &mut fields.user_name,
            Key::CharacterName => &mut fields.character_name,
            Key::ChatMetadata => {
                map.next_value::<IgnoredAny>()?;
                fields.chat_metadata = true;
                return Ok(true);
            }
            Key::CreateDate => {
                map.next_value::<IgnoredAny>()?;
                fields.create_date = true;
                return Ok(true);
            }
            Key::Messages | Key::Other => return Ok(false),
        };
        *slot = map.next_value_seed(FieldSeed)?;
        Ok(true)
    }

    /// One item of a message array.
    struct ItemSeed;
    impl<'de> DeserializeSeed<'de> for ItemSeed {
        type Value = Item;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Item, D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for ItemSeed {
        type Value = Item;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a message")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Item, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Item::Other)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Item, A::Error> {
            let mut fields = Box::<Fields>::default();
            while let Some(key) = map.next_key_seed(KeySeed)? {
                let known = !matches!(
                    key,
                    Key::UserName | Key::CharacterName | Key::ChatMetadata | Key::CreateDate
                ) && field(&mut fields, &key, &mut map)?;
                if !known {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(Item::Object(fields))
        }
        scalars!(Item, |_| Item::Other);
    }

    /// A message array: its items read into messages as they come.
    struct ArraySeed<'c> {
        shape: Shape,
        max: usize,
        over: &'c Cell<bool>,
    }
    impl<'de> Visitor<'de> for ArraySeed<'_> {
        type Value = Result<Vec<Message>, crate::error::LoreError>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an array of messages")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            let mut first_err = None;
            let mut n = 0usize;
            while let Some(item) = seq.next_element_seed(ItemSeed)? {
                if n == self.max {
                    self.over.set(true);
                    return Err(de::Error::custom("too many messages"));
                }
                if first_err.is_none() {
                    match self.shape.message(item, n) {
                        Ok(Some(m)) => out.push(m),
                        Ok(None) => {}
                        Err(e) => {
                            first_err = Some(e);
                            out = Vec::new();
                        }
                    }
                }
                n += 1;
            }
            Ok(first_err.map_or(Ok(out), Err))
        }
    }

    /// `messages` of a chat object: an array, or anything else (skipped).
    struct MessagesSeed<'c>(ArraySeed<'c>);
    impl<'de> DeserializeSeed<'de> for MessagesSeed<'_> {
        type Value = Messages;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Messages, D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for MessagesSeed<'_> {
        type Value = Messages;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("messages")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Messages, A::Error> {
            self.0.visit_seq(seq).map(Messages::Read)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Messages, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Messages::NotArray)
        }
        scalars!(Messages, |_| Messages::NotArray);
    }

    /// The top level (or one `.jsonl` line).
    pub(super) struct Top<'c> {
        pub max: usize,
        pub over: &'c Cell<bool>,
    }
    impl<'de> DeserializeSeed<'de> for Top<'_> {
        type Value = Doc;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Doc, D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Top<'_> {
        type Value = Doc;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a chat")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Doc, A::Error> {
            let items = ArraySeed {
                shape: Shape::Array,
                max: self.max,
                over: self.over,
            };
            items.visit_seq(seq).map(Doc::Array)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Doc, A::Error> {
            let mut fields = Box::<Fields>::default();
            let mut messages = None;
            while let Some(key) = map.next_key_seed(KeySeed)? {
                if matches!(key, Key::Messages) {
                    let items = MessagesSeed(ArraySeed {
                        shape: Shape::Messages,
                        max: self.max,
                        over: self.over,
                    });
                    messages = Some(map.next_value_seed(items)?);
                } else if !field(&mut fields, &key, &mut map)? {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(Doc::Object { fields, messages })
        }
        fn visit_bool<E>(self, _: bool) -> Result<Doc, E> {
            Ok(Doc::Scalar("a boolean"))
        }
        fn visit_i64<E>(self, _: i64) -> Result<Doc, E> {
            Ok(Doc::Scalar("a number"))
        }
        fn visit_u64<E>(self, _: u64) -> Result<Doc, E> {
            Ok(Doc::Scalar("a number"))
        }
        fn visit_f64<E>(self, _: f64) -> Result<Doc, E> {
            Ok(Doc::Scalar("a number"))
        }
        fn visit_str<E>(self, _: &str) -> Result<Doc, E> {
            Ok(Doc::Scalar("a string"))
        }
        fn visit_unit<E>(self) -> Result<Doc, E> {
            Ok(Doc::Scalar("null"))
        }
    }

    /// Reads `text` as one JSON document (a whole chat, or one `.jsonl` line).
    pub(super) fn read(text: &str, max: usize, over: &Cell<bool>) -> serde_json::Result<Doc> {
        let mut de = serde_json::Deserializer::from_str(text);
        let v = Top { max, over }.deserialize(&mut de)?;
        de.end()?;
        Ok(v)
    }
}

fn not_a_chat(what: &str) -> LoreError {
    LoreError::chat("", format!("{what}: {CHAT_SHAPES}"))
}

/// Reads a chat already parsed as JSON: an array of messages, an object
/// `{"messages": [...]}`, or one object of a SillyTavern `.jsonl` chat (a message, or the
/// metadata line: an empty chat). The same rules and errors as [`parse_chat`], for callers that
/// hold JSON values (the bindings).
///
/// # Errors
/// As [`parse_chat`].
///
/// ```
/// let v = serde_json::json!([{"role": "user", "content": "hi"}]);
/// assert_eq!(ccv3_lore::chat::chat_from_value(&v)?.messages.len(), 1);
/// assert!(ccv3_lore::chat::chat_from_value(&serde_json::json!(5)).is_err());
/// # Ok::<(), ccv3_lore::LoreError>(())
/// ```
pub fn chat_from_value(v: &Value) -> Result<Chat, LoreError> {
    let item = |v: &Value| match v {
        Value::Object(o) => Item::Object(Box::new(Fields::of(o))),
        _ => Item::Other,
    };
    let read = |items: &[Value], shape: Shape| -> Result<Vec<Message>, LoreError> {
        check_len(items.len(), MAX_MESSAGES)?;
        let mut out = Vec::with_capacity(items.len());
        for (i, m) in items.iter().enumerate() {
            out.extend(shape.message(item(m), i)?);
        }
        Ok(out)
    };
    let doc = match v {
        Value::Array(items) => Doc::Array(read(items, Shape::Array)),
        Value::Object(o) => Doc::Object {
            fields: Box::new(Fields::of(o)),
            messages: o.get("messages").map(|m| match m {
                Value::Array(items) => Messages::Read(read(items, Shape::Messages)),
                _ => Messages::NotArray,
            }),
        },
        other => Doc::Scalar(ccv3::json::type_name(other)),
    };
    chat_from_doc(doc, MAX_MESSAGES)
}

fn chat_from_doc(doc: Doc, max: usize) -> Result<Chat, LoreError> {
    match doc {
        Doc::Array(messages) => Ok(Chat::from(messages?)),
        Doc::Object {
            fields,
            messages: Some(messages),
        } => {
            let Messages::Read(messages) = messages else {
                return Err(LoreError::chat("messages", "must be an array"));
            };
            let messages = messages?;
            check_len(messages.len(), max)?;
            let Fields {
                user_name,
                character_name,
                ..
            } = *fields;
            Ok(Chat {
                messages,
                user_name: user_name.text(),
                character_name: character_name.text(),
            })
        }
        doc @ Doc::Object { .. } => {
            // One line of .jsonl.
            let mut chat = Chat::default();
            jsonl_line(&mut chat, doc, "", true, max)?;
            Ok(chat)
        }
        Doc::Scalar(what) => Err(not_a_chat(what)),
    }
}

/// Reads one object of a `.jsonl` chat into `chat` (`first`: the first line, which may be the
/// metadata).
fn jsonl_line(
    chat: &mut Chat,
    doc: Doc,
    at: &str,
    first: bool,
    max: usize,
) -> Result<(), LoreError> {
    let Doc::Object { mut fields, .. } = doc else {
        return Err(LoreError::chat(at, "each line must be a JSON object"));
    };
    if !fields.mes.present() && !fields.content.present() {
        if first && fields.is_metadata() {
            chat.user_name = std::mem::take(&mut fields.user_name).text();
            chat.character_name = std::mem::take(&mut fields.character_name).text();
            return Ok(());
        }
        if first {
            return Err(LoreError::chat(
                at,
                format!("neither a message nor SillyTavern chat metadata: {CHAT_SHAPES}"),
            ));
        }
        return Err(LoreError::chat(at, "a message needs mes"));
    }
    let msg = if fields.role.present() {
        Some(role_message(Item::Object(fields), at)?)
    } else {
        st_message(Item::Object(fields), at)?
    };
    if let Some(m) = msg {
        check_len(chat.messages.len() + 1, max)?;
        chat.messages.push(m);
    }
    Ok(())
}

/// Reads a chat in any of the shapes of the module docs.
///
/// # Errors
/// [`LoreError::Chat`] naming the message (`[3]`, `messages[2]` or `line 4`) and the problem, or
/// naming the accepted shapes when the input is none of them; [`LoreError::Limit`] above
/// [`MAX_CHAT_BYTES`] or [`MAX_MESSAGES`].
///
/// ```
/// let chat = ccv3_lore::chat::parse_chat(r#"[{"role":"user","content":"hi"},{"role":"assistant","name":"Aqua","content":"hello"}]"#)?;
/// assert_eq!(chat.messages.len(), 2);
/// assert_eq!(chat.assistant_count(), 1);
/// let err = ccv3_lore::chat::parse_chat(r#"{"foo":1}"#).unwrap_err();
/// assert!(err.to_string().contains("SillyTavern .jsonl"));
/// # Ok::<(), ccv3_lore::LoreError>(())
/// ```
pub fn parse_chat(input: &str) -> Result<Chat, LoreError> {
    parse_chat_with(input, &ChatLimits::default())
}

/// [`parse_chat`] within `limits` instead of the default ones.
///
/// # Errors
/// As [`parse_chat`], with [`LoreError::Limit`] above `limits`.
///
/// ```
/// use ccv3_lore::chat::{parse_chat_with, ChatLimits};
/// let limits = ChatLimits { max_messages: 2, ..ChatLimits::default() };
/// let three = r#"[{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"user","content":"c"}]"#;
/// let err = parse_chat_with(three, &limits).unwrap_err();
/// assert_eq!(err.to_string(), "limit: chat has more than 2 messages");
/// ```
pub fn parse_chat_with(input: &str, limits: &ChatLimits) -> Result<Chat, LoreError> {
    parse_chat_with_warnings(input, limits).map(|(chat, _)| chat)
}

/// [`parse_chat_with`], also returning what was repaired: lone UTF-16 surrogate escapes (half of
/// an emoji pair, as chat applications that cut text by UTF-16 unit leave behind) become U+FFFD
/// with one [`ccv3::json::LONE_SURROGATE`] warning instead of rejecting the chat (issue 12).
///
/// # Errors
/// As [`parse_chat_with`].
///
/// ```
/// use ccv3_lore::chat::{parse_chat_with_warnings, ChatLimits};
/// let (chat, warnings) = parse_chat_with_warnings(r#"[{"role":"user","content":"a\ud83d"}]"#, &ChatLimits::default())?;
/// assert_eq!(chat.messages[0].content, "a\u{fffd}");
/// assert_eq!(warnings[0].code, ccv3::json::LONE_SURROGATE);
/// # Ok::<(), ccv3_lore::LoreError>(())
/// ```
pub fn parse_chat_with_warnings(
    input: &str,
    limits: &ChatLimits,
) -> Result<(Chat, Vec<ccv3::Diagnostic>), LoreError> {
    let mut warnings = Vec::new();
    if input.len() > limits.max_bytes {
        return Err(LoreError::Limit(format!(
            "chat is {} bytes, more than {}",
            input.len(),
            limits.max_bytes
        )));
    }
    let max = limits.max_messages;
    let input = input.trim_start_matches('\u{feff}');
    let trimmed = input.trim_start();
    if trimmed.is_empty() {
        return Err(not_a_chat("empty input"));
    }
    let over = std::cell::Cell::new(false);
    let parsed = read_repaired(input, max, &over);
    if over.get() {
        return Err(too_many(max));
    }
    match parsed {
        Ok((doc, repaired)) => {
            warnings.extend(repaired);
            return chat_from_doc(doc, max).map(|chat| (chat, warnings));
        }
        Err(e) if trimmed.starts_with('[') => {
            return Err(LoreError::chat("", format!("invalid JSON: {e}")))
        }
        Err(_) => {} // perhaps .jsonl
    }
    let mut chat = Chat::default();
    let mut first = true;
    for (n, line) in input.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let at = format!("line {}", n + 1);
        let (v, repaired) = read_repaired(line, max, &over).map_err(|e| {
            if first {
                LoreError::chat(&at, format!("invalid JSON ({e}): {CHAT_SHAPES}"))
            } else {
                LoreError::chat(&at, format!("invalid JSON: {e}"))
            }
        })?;
        if over.get() {
            return Err(too_many(max));
        }
        if let Some(mut w) = repaired {
            // One warning per chat, for the first line that needed it.
            if !warnings
                .iter()
                .any(|d| d.code == ccv3::json::LONE_SURROGATE)
            {
                w.message = format!("{at}: {}", w.message);
                warnings.push(w);
            }
        }
        let was_first = std::mem::replace(&mut first, false);
        jsonl_line(&mut chat, v, &at, was_first, max)?;
    }
    Ok((chat, warnings))
}

/// [`capped::read`], retried with lone surrogate escapes replaced when the parser trips on one.
fn read_repaired(
    text: &str,
    max: usize,
    over: &std::cell::Cell<bool>,
) -> serde_json::Result<(Doc, Option<ccv3::Diagnostic>)> {
    match capped::read(text, max, over) {
        Ok(v) => Ok((v, None)),
        Err(e) if ccv3::json::is_lone_surrogate_error(&e) => {
            let Some(repair) = ccv3::json::repair_lone_surrogates(text.as_bytes()) else {
                return Err(e);
            };
            // The repair replaces ASCII escapes by ASCII escapes: still UTF-8.
            let Ok(fixed) = std::str::from_utf8(&repair.text) else {
                return Err(e);
            };
            over.set(false);
            let v = capped::read(fixed, max, over)?;
            Ok((v, Some(repair.diagnostic())))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 12, sizes: the message limit holds in every shape, and it is counted while the
    /// JSON is read (a chat of millions of empty messages is refused before they are held).
    #[test]
    fn issue12_chat_message_limit_in_every_shape() {
        let limits = ChatLimits {
            max_messages: 3,
            ..ChatLimits::default()
        };
        let msg = r#"{"role":"user","content":""}"#;
        let array = |n: usize| format!("[{}]", vec![msg; n].join(","));
        assert_eq!(
            parse_chat_with(&array(3), &limits).unwrap().messages.len(),
            3
        );
        let err = parse_chat_with(&array(4), &limits).unwrap_err();
        assert_eq!(err.to_string(), "limit: chat has more than 3 messages");
        let object = |n: usize| format!(r#"{{"user_name":"U","messages":{}}}"#, array(n));
        assert_eq!(
            parse_chat_with(&object(3), &limits).unwrap().messages.len(),
            3
        );
        assert!(matches!(
            parse_chat_with(&object(4), &limits),
            Err(LoreError::Limit(_))
        ));
        let jsonl = |n: usize| vec![r#"{"mes":"","is_user":true}"#; n].join("\n");
        assert_eq!(
            parse_chat_with(&jsonl(3), &limits).unwrap().messages.len(),
            3
        );
        assert!(matches!(
            parse_chat_with(&jsonl(4), &limits),
            Err(LoreError::Limit(_))
        ));
        // Broken JSON past the limit is still a limit error (it was counted first), and broken
        // JSON within it is a JSON error.
        assert!(matches!(
            parse_chat_with(&format!("{},", &array(5)[..array(5).len() - 1]), &limits),
            Err(LoreError::Limit(_))
        ));
        assert!(parse_chat_with("[{\"role\":\"user\",", &limits)
            .unwrap_err()
            .to_string()
            .contains("invalid JSON"));
        // Keys the reader does not use are skipped as they are read: padding, nested junk and
        // containers in known keys change nothing but the errors they always gave.
        let padded = r#"[{"role":"user","x":[[1,2],{"a":[3]}],"content":"hi","y":{"z":[]}},
            {"name":"N","is_user":false,"mes":"yo","extra":[1,2,3]}]"#;
        let c = parse_chat(padded).unwrap();
        assert_eq!(c.messages[0], Message::user("hi"));
        assert_eq!(c.messages[1], Message::assistant("yo").named("N"));
        let jsonl = "{\"user_name\":\"U\",\"chat_metadata\":{\"big\":[1,2,3]}}\n{\"mes\":\"a\",\"is_user\":true,\"junk\":[{}]}";
        let c = parse_chat(jsonl).unwrap();
        assert_eq!(c.user_name.as_deref(), Some("U"));
        assert_eq!(c.messages, [Message::user("a")]);
        assert!(parse_chat(r#"[{"role":"user","content":["a"]}]"#)
            .unwrap_err()
            .to_string()
            .contains("a message needs a string content"));
        assert!(parse_chat(r#"[{"role":{"a":1},"content":"x"}]"#)
            .unwrap_err()
            .to_string()
            .contains("role must be a string"));
        assert!(parse_chat(r#"[[1,2,3]]"#)
            .unwrap_err()
            .to_string()
            .contains("must be an object"));
        let bytes = ChatLimits {
            max_bytes: 10,
            ..ChatLimits::default()
        };
        assert!(matches!(
            parse_chat_with(&array(1), &bytes),
            Err(LoreError::Limit(_))
        ));
    }

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
    fn chat_roles_are_case_insensitive_with_aliases_and_null_content_is_empty() {
        let c = parse_chat(
            r#"[{"role":"USER","content":"a"},{"role":"bot","content":null},{"role":"Model","content":"c"}]"#,
        )
        .unwrap();
        let roles: Vec<Role> = c.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant, Role::Assistant]);
        assert_eq!(c.messages[1].content, "");
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
    fn chat_sillytavern_metadata_alone_is_an_empty_chat() {
        let c = parse_chat("{\"user_name\":\"You\",\"character_name\":\"Aqua\"}\n").unwrap();
        assert!(c.messages.is_empty());
        assert_eq!(c.character_name.as_deref(), Some("Aqua"));
        assert!(parse_chat("[]").unwrap().messages.is_empty());
    }

    #[test]
    fn chat_peers_messages_object() {
        let c = parse_chat(r#"{"messages":[{"name":"User","is_user":true,"mes":"a"},{"name":"S","is_user":false,"mes":"b"}]}"#).unwrap();
        assert_eq!(c.assistant_count(), 1);
        assert_eq!(c.messages.len(), 2);
        let c = parse_chat(r#"{"messages":[{"role":"user","content":"a"}]}"#).unwrap();
        assert_eq!(c.messages, [Message::user("a")]);
    }

    /// Issue 11: any other shape is a clear error that names the shapes read.
    #[test]
    fn chat_other_shapes_are_errors_naming_the_shapes() {
        for bad in [
            r#"{"foo":1}"#,
            "",
            "  \n",
            "5",
            "\"text\"",
            "null",
            "true",
            "not json at all",
            "{\"foo\":1}\n{\"mes\":\"a\"}",
        ] {
            let e = parse_chat(bad).expect_err(bad).to_string();
            assert!(e.contains(CHAT_SHAPES), "{bad:?}: {e}");
        }
        let e = parse_chat(r#"{"messages":5}"#).unwrap_err().to_string();
        assert!(e.contains("messages"), "{e}");
    }

    #[test]
    fn chat_from_value_reads_the_same_shapes() {
        use serde_json::json;
        let c = chat_from_value(&json!({"name": "A", "is_user": true, "mes": "hi"})).unwrap();
        assert_eq!(c.messages, [Message::user("hi").named("A")]);
        let c = chat_from_value(&json!({"user_name": "Sam"})).unwrap();
        assert_eq!(c.user_name.as_deref(), Some("Sam"));
        let e = chat_from_value(&json!({"foo": 1})).unwrap_err().to_string();
        assert!(e.starts_with("chat: ") && e.contains(CHAT_SHAPES), "{e}");
        // A pretty-printed single message is one message, not lines.
        let c = parse_chat("{\n  \"role\": \"user\",\n  \"content\": \"x\"\n}").unwrap();
        assert_eq!(c.messages, [Message::user("x")]);
    }

    #[test]
    fn chat_limits() {
        let big = " ".repeat(MAX_CHAT_BYTES + 1);
        assert!(matches!(parse_chat(&big), Err(LoreError::Limit(_))));
    }

    #[test]
    fn chat_errors_name_the_message() {
        let e = parse_chat(r#"[{"role":"robot","content":"x"}]"#).unwrap_err();
        assert!(e.to_string().contains("[0]"), "{e}");
        let e = parse_chat("{\"mes\":\"a\"}\nnot json").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        let e = parse_chat("[{").unwrap_err();
        assert!(e.to_string().contains("invalid JSON"), "{e}");
    }

    #[test]
    fn chat_messages_serialise_as_role_name_content() {
        let m = Message::assistant("hi").named("Aqua");
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"role":"assistant","name":"Aqua","content":"hi"}"#
        );
        let back: Message = serde_json::from_str(r#"{"role":"user","content":"x"}"#).unwrap();
        assert_eq!(back, Message::user("x"));
        let back: Message = serde_json::from_str(r#"{"role":"Char","content":"x"}"#).unwrap();
        assert_eq!(back, Message::assistant("x"));
        assert!(serde_json::from_str::<Message>(r#"{"role":"robot","content":"x"}"#).is_err());
    }

    #[test]
    fn chat_seed_is_fnv_over_contents() {
        let c = parse_chat(r#"[{"role":"user","content":"a"}]"#).unwrap();
        // FNV-1a 64 of "a\0".
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in [b'a', 0] {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        assert_eq!(c.seed(), h);
    }
}
