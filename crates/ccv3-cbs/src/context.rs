//! What the macros read: names, card fields, chat, clock and seed.
//!
//! A [`Context`] carries plain strings (this crate does not depend on the card model). Build it
//! with the `with_*` methods; unset fields are empty strings, and macros reading them expand to
//! an empty string.
//!
//! The clock is a fixed [`Timestamp`] in the context (`with_now`): the crate never reads the
//! system time itself, so expansions are reproducible. Applications call [`Timestamp::now`] (or
//! build one from their own clock) when they assemble a real prompt.

/// Who wrote a chat message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The user (or persona).
    User,
    /// The character.
    Char,
    /// A system or narrator message.
    System,
}

/// One chat message, as the chat macros see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// The display name of the writer.
    pub name: String,
    /// The text.
    pub content: String,
    /// When it was sent, in unix seconds, if known (used by `{{idle_duration}}`).
    pub time: Option<i64>,
}

impl Message {
    /// A message without a timestamp.
    pub fn new(role: Role, name: impl Into<String>, content: impl Into<String>) -> Self {
        Message {
            role,
            name: name.into(),
            content: content.into(),
            time: None,
        }
    }

    /// The same message with a send time (unix seconds).
    pub fn at(mut self, unix_seconds: i64) -> Self {
        self.time = Some(unix_seconds);
        self
    }
}

/// A moment in time: unix seconds plus the local offset from UTC used for local formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timestamp {
    /// Seconds since 1970-01-01T00:00:00Z.
    pub unix: i64,
    /// Local offset from UTC in minutes (e.g. `-300` for UTC-5); `time`, `date`, `weekday`,
    /// `isotime` and `isodate` use local time.
    pub utc_offset_minutes: i32,
}

impl Timestamp {
    /// A UTC timestamp.
    pub fn utc(unix: i64) -> Self {
        Timestamp {
            unix,
            utc_offset_minutes: 0,
        }
    }

    /// The same instant with a local offset in minutes.
    pub fn with_offset(mut self, minutes: i32) -> Self {
        self.utc_offset_minutes = minutes;
        self
    }

    /// The current system time in UTC (for applications; the crate itself never calls it).
    pub fn now() -> Self {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
            .unwrap_or(0);
        Timestamp::utc(secs)
    }
}

/// Renders the text of `{{comment:A}}` in [`crate::Mode::Display`].
pub type CommentRenderer = fn(&str) -> String;

/// The default comment rendering: `<span class="cbs-comment">A</span>` with `A` HTML-escaped.
pub fn html_comment(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 32);
    out.push_str("<span class=\"cbs-comment\">");
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out.push_str("</span>");
    out
}

/// Everything the macros read.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Context {
    /// The character's `name`.
    pub char_name: String,
    /// The character's `nickname` (wins over `name` in `{{char}}` when not empty).
    pub nickname: String,
    /// The user's display name or persona name (`{{user}}`).
    pub user_name: String,
    /// Character `description`.
    pub description: String,
    /// Character `personality`.
    pub personality: String,
    /// Character `scenario`.
    pub scenario: String,
    /// The user's persona text.
    pub persona: String,
    /// Character `mes_example`.
    pub mes_examples: String,
    /// Chat messages, oldest first.
    pub messages: Vec<Message>,
    /// The application's original prompt text for `{{original}}` (empty if none).
    pub original: String,
    /// Stable seed of the chat (used by `{{pick}}`, and with `nonce` by `random`/`roll`).
    /// `pick` mixes it with the macro's byte offset (and, inside an expanded card field, a
    /// hash of the field): to keep two separately expanded texts (e.g. two lorebook entries)
    /// from choosing alike, give each its own seed derived from the chat seed and an id.
    pub seed: u64,
    /// Per-generation number mixed into the `random`/`roll` stream (default 0).
    pub nonce: u64,
    /// The clock: the time macros read this; `None` makes them expand to an empty string.
    pub now: Option<Timestamp>,
    /// Index of the greeting in use (0 = `first_mes`, 1.. = alternate greetings).
    pub greeting_index: Option<usize>,
    /// How `{{comment:A}}` is shown in display mode (default [`html_comment`]).
    pub comment_renderer: CommentRenderer,
}

impl Default for Context {
    fn default() -> Self {
        Context {
            char_name: String::new(),
            nickname: String::new(),
            user_name: String::new(),
            description: String::new(),
            personality: String::new(),
            scenario: String::new(),
            persona: String::new(),
            mes_examples: String::new(),
            messages: Vec::new(),
            original: String::new(),
            seed: 0,
            nonce: 0,
            now: None,
            greeting_index: None,
            comment_renderer: html_comment,
        }
    }
}

macro_rules! setter {
    ($(#[$doc:meta] $name:ident => $field:ident;)*) => {
        $(
            #[$doc]
            pub fn $name(mut self, value: impl Into<String>) -> Self {
                self.$field = value.into();
                self
            }
        )*
    };
}

impl Context {
    /// An empty context (no names, no chat, seed 0, no clock).
    pub fn new() -> Self {
        Self::default()
    }

    setter! {
        /// Sets the character name.
        with_char_name => char_name;
        /// Sets the character nickname.
        with_nickname => nickname;
        /// Sets the user name.
        with_user_name => user_name;
        /// Sets the character description.
        with_description => description;
        /// Sets the character personality.
        with_personality => personality;
        /// Sets the scenario.
        with_scenario => scenario;
        /// Sets the user persona text.
        with_persona => persona;
        /// Sets the example messages.
        with_mes_examples => mes_examples;
        /// Sets the original prompt text.
        with_original => original;
    }

    /// Appends a chat message.
    pub fn with_message(mut self, message: Message) -> Self {
        self.messages.push(message);
        self
    }

    /// Replaces the chat messages.
    pub fn with_messages(mut self, messages: Vec<Message>) -> Self {
        self.messages = messages;
        self
    }

    /// Sets the chat seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets the per-generation nonce.
    pub fn with_nonce(mut self, nonce: u64) -> Self {
        self.nonce = nonce;
        self
    }

    /// Sets the clock.
    pub fn with_now(mut self, now: Timestamp) -> Self {
        self.now = Some(now);
        self
    }

    /// Sets the greeting index.
    pub fn with_greeting_index(mut self, index: usize) -> Self {
        self.greeting_index = Some(index);
        self
    }

    /// Sets how comments are shown in display mode.
    pub fn with_comment_renderer(mut self, renderer: CommentRenderer) -> Self {
        self.comment_renderer = renderer;
        self
    }

    /// The name `{{char}}` expands to: the nickname, else the name.
    pub fn char_display_name(&self) -> &str {
        if self.nickname.is_empty() {
            &self.char_name
        } else {
            &self.nickname
        }
    }
}
