//! What the macros read: names, card fields, chat, clock and seed.
//!
//! A [`Context`] carries plain strings (this crate does not depend on the card model). Build it
//! with the `with_*` methods; unset fields are empty strings, and macros reading them expand to
//! an empty string.
//!
//! The clock is a fixed [`Timestamp`] in the context (`with_now`): the crate never reads the
//! system time itself, so expansions are reproducible (and the crate runs where there is no
//! clock, such as `wasm32-unknown-unknown`). Applications pass their own clock (the `ccv3` CLI
//! passes the system clock, or `--now`). Without one, the time macros (`{{time}}`, `{{date}}`,
//! `{{weekday}}`, `{{isotime}}`, `{{isodate}}`, `{{unixtime}}`, `{{idle_duration}}`) expand to
//! an empty string.

use crate::families::st_examples::ExampleFormat;

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
}

impl Timestamp {
    /// Reads unix seconds (`1795273620`, `-5`) or an RFC 3339 date-time
    /// (`2026-11-25T13:00:00Z`, `2026-11-25 13:00:00.5+02:00`; `t`/`z` in either case, fractions
    /// of a second dropped). An offset becomes [`Timestamp::utc_offset_minutes`], the local
    /// offset of the local-time macros.
    ///
    /// # Errors
    /// A message naming the accepted forms.
    ///
    /// ```
    /// use ccv3_cbs::Timestamp;
    /// assert_eq!(Timestamp::parse("2026-11-25T15:00:00+02:00"),
    ///     Ok(Timestamp::utc(1_795_611_600).with_offset(120)));
    /// assert_eq!(Timestamp::parse("1795611600"), Ok(Timestamp::utc(1_795_611_600)));
    /// assert!(Timestamp::parse("tomorrow").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<Timestamp, String> {
        let s = s.trim();
        if let Ok(unix) = s.parse::<i64>() {
            return Ok(Timestamp::utc(unix));
        }
        rfc3339(s).ok_or_else(|| {
            format!(
                "{s:?} is neither unix seconds nor an RFC 3339 date-time like 2026-11-25T13:00:00Z"
            )
        })
    }
}

fn rfc3339(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = b.get(from..from + len)?;
        part.iter().all(u8::is_ascii_digit).then_some(())?;
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    let sep = |at: usize, c: &[u8]| b.get(at).is_some_and(|x| c.contains(x));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    // Second 60 is a leap second: it is read as the next second, as most clocks do.
    if day < 1 || day > days_in_month || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut at = 19;
    if sep(at, b".") {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        if at == start {
            return None;
        }
    }
    let offset_minutes: i64 = match b.get(at)? {
        b'Z' | b'z' if at + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if at + 6 == b.len() && sep(at + 3, b":") => {
            let (h, m) = (num(at + 1, 2)?, num(at + 4, 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            let minutes = h * 60 + m;
            if *sign == b'-' {
                -minutes
            } else {
                minutes
            }
        }
        _ => return None,
    };
    let local = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    let unix = local - offset_minutes * 60;
    Some(Timestamp::utc(unix).with_offset(i32::try_from(offset_minutes).ok()?))
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Renders the text of `{{comment:A}}` in [`crate::Mode::Display`].
pub type CommentRenderer = fn(&str) -> String;

/// The default comment rendering: `<span class="cbs-comment">A</span>` with `A` HTML-escaped.
///
/// ```
/// assert_eq!(
///     ccv3_cbs::html_comment("a < b"),
///     r#"<span class="cbs-comment">a &lt; b</span>"#
/// );
/// ```
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
    /// Character `first_mes` (SillyTavern's `{{greeting}}`).
    pub first_message: String,
    /// Character `alternate_greetings` (`{{greeting::1}}` is the first).
    pub alternate_greetings: Vec<String>,
    /// Character `creator_notes` (`{{charCreatorNotes}}`).
    pub creator_notes: String,
    /// Character `character_version` (`{{charVersion}}`).
    pub char_version: String,
    /// Character `system_prompt`, the card's main prompt override (`{{charPrompt}}`).
    pub system_prompt: String,
    /// Character `post_history_instructions` (`{{charInstruction}}`).
    pub post_history_instructions: String,
    /// The card's depth note (`extensions.depth_prompt.prompt`, `{{charDepthPrompt}}`).
    pub depth_prompt: String,
    /// Names of the group chat's members, empty in a one-character chat (`{{group}}`).
    pub group_members: Vec<String>,
    /// Names of the group members that are muted (left out of `{{groupNotMuted}}`).
    pub muted_members: Vec<String>,
    /// How SillyTavern's `{{mesExamples}}` shapes the example messages (default: chat
    /// completion, blocks headed `<START>`).
    pub example_format: ExampleFormat,
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
            first_message: String::new(),
            alternate_greetings: Vec::new(),
            creator_notes: String::new(),
            char_version: String::new(),
            system_prompt: String::new(),
            post_history_instructions: String::new(),
            depth_prompt: String::new(),
            group_members: Vec::new(),
            muted_members: Vec::new(),
            example_format: ExampleFormat::default(),
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
        /// Sets the first message (`first_mes`).
        with_first_message => first_message;
        /// Sets the creator notes.
        with_creator_notes => creator_notes;
        /// Sets the character version.
        with_char_version => char_version;
        /// Sets the card's main prompt override (`system_prompt`).
        with_system_prompt => system_prompt;
        /// Sets the post-history instructions.
        with_post_history_instructions => post_history_instructions;
        /// Sets the depth note.
        with_depth_prompt => depth_prompt;
    }

    /// Sets the alternate greetings.
    pub fn with_alternate_greetings(mut self, greetings: Vec<String>) -> Self {
        self.alternate_greetings = greetings;
        self
    }

    /// Sets how SillyTavern's `{{mesExamples}}` formats the examples (its API and instruct
    /// settings): see [`crate::families::st_examples`].
    pub fn with_example_format(mut self, format: ExampleFormat) -> Self {
        self.example_format = format;
        self
    }

    /// Sets the group chat's members (names) and which of them are muted.
    pub fn with_group(mut self, members: Vec<String>, muted: Vec<String>) -> Self {
        self.group_members = members;
        self.muted_members = muted;
        self
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prop_assume;

    #[test]
    fn timestamp_parse_reads_unix_seconds_and_rfc3339() {
        assert_eq!(
            Timestamp::parse("1795273620"),
            Ok(Timestamp::utc(1_795_273_620))
        );
        assert_eq!(Timestamp::parse("-1"), Ok(Timestamp::utc(-1)));
        assert_eq!(
            Timestamp::parse("1970-01-01T00:00:00Z"),
            Ok(Timestamp::utc(0))
        );
        // 2026-11-25T13:00:00Z = 1795611600.
        assert_eq!(
            Timestamp::parse("2026-11-25T13:00:00Z"),
            Ok(Timestamp::utc(1_795_611_600))
        );
        assert_eq!(
            Timestamp::parse("2026-11-25T15:00:00+02:00"),
            Ok(Timestamp::utc(1_795_611_600).with_offset(120))
        );
        assert_eq!(
            Timestamp::parse("2026-11-25 08:30:00.25-04:30"),
            Ok(Timestamp::utc(1_795_611_600).with_offset(-270))
        );
        assert_eq!(
            Timestamp::parse("2000-02-29t00:00:00z"),
            Ok(Timestamp::utc(951_782_400))
        );
    }

    #[test]
    fn timestamp_parse_rejects_what_is_not_a_time() {
        for bad in [
            "",
            "now",
            "2026-11-25",
            "2026-11-25T13:00:00",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-11-25T24:00:00Z",
            "2026-11-25T13:00:00+2:00",
            "2026-11-25T13:00:00.Z",
            "2026-11-25T13:00:00Zjunk",
            "２026-11-25T13:00:00Z",
        ] {
            assert!(Timestamp::parse(bad).is_err(), "{bad:?}");
        }
    }

    proptest::proptest! {
        /// Any text: an answer, never a panic.
        #[test]
        fn timestamp_parse_never_panics(text in "\\PC{0,40}") {
            let _ = Timestamp::parse(&text);
        }

        /// The time macros' own calendar (`families::time::civil`) written as RFC 3339 with an
        /// offset reads back as the same instant and offset.
        #[test]
        fn timestamp_parse_round_trips_the_calendar(
            unix in -62_135_596_800i64..253_402_300_799,
            offset in -1439i32..=1439,
        ) {
            let ts = Timestamp::utc(unix).with_offset(offset);
            let c = crate::families::time::civil(ts);
            prop_assume!((0..=9999).contains(&c.year));
            let sign = if offset < 0 { '-' } else { '+' };
            let abs = offset.unsigned_abs();
            let text = format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{sign}{:02}:{:02}",
                c.year, c.month, c.day, c.hour, c.minute, c.second, abs / 60, abs % 60
            );
            proptest::prop_assert_eq!(Timestamp::parse(&text), Ok(ts), "{}", text);
        }
    }
}
