//! The catalog: every macro this crate knows, with its arguments, a one-line description, the
//! dialects it belongs to, and for the few that cannot work outside their application, why.
//!
//! A registry lists its macros from here ([`crate::Registry::macros`]), and a dialect's
//! registry keeps only the names whose row says it belongs to the dialect
//! ([`crate::Registry::dialect`]), so the list `ccv3 cbs --list` prints is the registry itself.
//! A test checks that every registered name has a row.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Serialize;

use crate::dialect::{Dialect, Dialects};
use crate::parse::normalize_name;

/// One macro of the catalog.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MacroInfo {
    /// The name as its application writes it.
    pub name: &'static str,
    /// Other names of the same macro.
    pub aliases: &'static [&'static str],
    /// The arguments as written after the name (`::name::value`), empty for none.
    pub args: &'static str,
    /// One line: what it gives.
    pub description: &'static str,
    /// The dialects it belongs to (`spec`, `sillytavern`, `risu`).
    #[serde(serialize_with = "ser_dialects")]
    pub dialects: Dialects,
    /// `Some(why)` when it cannot work outside its application (it stays text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<&'static str>,
    /// This row is the RisuAI meaning of a name SillyTavern (or this crate) uses differently:
    /// only the `risu` dialect uses it.
    #[serde(skip)]
    pub(crate) risu_meaning: bool,
    /// SillyTavern's argument count (fewest, most; `u8::MAX` for a list): in the
    /// `sillytavern` dialect a call outside it stays as written (its `MacroRegistry`).
    #[serde(skip)]
    pub(crate) st_arity: Option<(u8, u8)>,
}

fn ser_dialects<S: serde::Serializer>(d: &Dialects, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(d.names())
}

impl MacroInfo {
    /// How the macro is written: `{{name::a::b}}`.
    pub fn usage(&self) -> String {
        if self.name.starts_with('<') {
            return self.name.to_owned();
        }
        if self.name.starts_with('#') {
            return format!("{{{{{}{}}}}}...{{{{/}}}}", self.name, self.args);
        }
        format!("{{{{{}{}}}}}", self.name, self.args)
    }
}

const SP: Dialects = Dialects::ALL;
const ST: Dialects = Dialects::SILLYTAVERN;
const RI: Dialects = Dialects::RISU;
const AP: Dialects = Dialects::APPS;
const OWN: Dialects = Dialects::NONE;

const fn row(
    dialects: Dialects,
    name: &'static str,
    aliases: &'static [&'static str],
    args: &'static str,
    description: &'static str,
) -> MacroInfo {
    MacroInfo {
        name,
        aliases,
        args,
        description,
        dialects,
        unavailable: None,
        risu_meaning: false,
        st_arity: None,
    }
}

/// RisuAI's meaning of a shared name.
const fn risu(
    name: &'static str,
    aliases: &'static [&'static str],
    args: &'static str,
    description: &'static str,
) -> MacroInfo {
    MacroInfo {
        name,
        aliases,
        args,
        description,
        dialects: RI,
        unavailable: None,
        risu_meaning: true,
        st_arity: None,
    }
}

/// A RisuAI function that needs RisuAI itself.
const fn na(
    name: &'static str,
    aliases: &'static [&'static str],
    args: &'static str,
    description: &'static str,
    why: &'static str,
) -> MacroInfo {
    MacroInfo {
        name,
        aliases,
        args,
        description,
        dialects: RI,
        unavailable: Some(why),
        risu_meaning: false,
        st_arity: None,
    }
}

/// A SillyTavern macro that needs SillyTavern itself.
const fn st_na(
    name: &'static str,
    aliases: &'static [&'static str],
    args: &'static str,
    description: &'static str,
    why: &'static str,
) -> MacroInfo {
    MacroInfo {
        name,
        aliases,
        args,
        description,
        dialects: ST,
        unavailable: Some(why),
        risu_meaning: false,
        st_arity: None,
    }
}

impl MacroInfo {
    /// SillyTavern's argument count for this row: `min..=max` (`max` `u8::MAX`: a list).
    const fn st(mut self, min: u8, max: u8) -> Self {
        self.st_arity = Some((min, max));
        self
    }
}

/// Any number of arguments (SillyTavern's list macros).
const LIST: u8 = u8::MAX;
const ST_UI: &str = "needs SillyTavern's user interface";
const ST_APP: &str = "reads SillyTavern's own settings, which a card does not carry";
const ST_INSTRUCT: &str = "reads SillyTavern's instruct and context template settings";

const UI: &str = "needs RisuAI's user interface";
const APP: &str = "reads RisuAI's own settings, which a card does not carry";
const ASSET: &str = "drawn by RisuAI's asset display when the message is shown";

/// Every macro, in families.
pub static CATALOG: &[MacroInfo] = &[
    // The spec set.
    row(SP, "char", &["bot", "<char>", "<bot>"], "", "the character's nickname, else its name").st(0, 0),
    row(SP, "user", &[], "", "the user's name").st(0, 0),
    row(SP, "random", &[], "::A::B", "one of the choices (or one argument split on commas), at random; sillytavern: empty without choices").st(0, LIST),
    row(SP, "pick", &[], "::A::B", "one of the choices, the same every time for this chat and place").st(0, LIST),
    row(SP, "roll", &[], "::XdY+Z", "dice: N, dN, XdY, XdY+Z, XdY-Z; sillytavern: empty for other formulas").st(1, 1),
    row(SP, "//", &[], " note", "nothing: a comment, never expanded"),
    row(SP, "hidden_key", &[], "::A", "nothing in prompts, A when the lorebook scans"),
    row(SP, "comment", &[], "::A", "nothing in prompts, A shown in display"),
    row(SP, "reverse", &[], "::A", "A reversed").st(1, 1),
    risu("random", &[], "::A::B", "one of the arguments, or of one argument split on , and :; no argument: a number in [0, 1)"),
    risu("pick", &[], "::A::B", "like random, but the same for this chat and place"),
    risu("roll", &[], "::XdY", "the sum of X dice of Y sides; no argument: 1; bad dice: NaN"),
    // V2 and legacy markers.
    row(ST, "original", &[], "", "the application's own prompt text, once").st(0, 0),
    row(AP, "<user>", &[], "", "the user's name (legacy marker)").st(0, 0),
    // Character fields.
    row(AP, "description", &[], "", "the character's description, its macros expanded").st(0, 0),
    row(AP, "personality", &[], "", "the character's personality").st(0, 0),
    row(AP, "scenario", &[], "", "the scenario").st(0, 0),
    row(AP, "persona", &[], "", "the user's persona text").st(0, 0),
    row(ST, "charDescription", &[], "", "the character's description").st(0, 0),
    row(ST, "charPersonality", &[], "", "the character's personality").st(0, 0),
    row(ST, "charScenario", &[], "", "the scenario").st(0, 0),
    row(ST, "mesExamples", &[], "", "the example messages in <START> blocks, shaped for chat, text or instruct completion").st(0, 0),
    row(ST, "mesExamplesRaw", &[], "", "the example messages as written, trimmed").st(0, 0),
    row(RI, "chardesc", &[], "", "the character's description"),
    row(RI, "charpersona", &[], "", "the character's personality"),
    row(RI, "userpersona", &[], "", "the user's persona text"),
    row(RI, "exampledialogue", &["examplemessage", "example_dialogue"], "", "the example messages"),
    // Chat.
    row(AP, "lastMessage", &[], "", "the text of the last message").st(0, 0),
    row(AP, "lastUserMessage", &[], "", "the text of the last user message").st(0, 0),
    row(AP, "lastCharMessage", &[], "", "the text of the last character message").st(0, 0),
    row(AP, "lastMessageId", &[], "", "the index of the last message").st(0, 0),
    row(RI, "previoususerchat", &[], "", "the text of the last user message"),
    row(RI, "previouscharchat", &[], "", "the text of the last character message"),
    row(RI, "lastmessageindex", &[], "", "the index of the last message"),
    row(OWN, "firstmsgindex", &["firstmessageindex", "first_msg_index"], "", "the greeting in use (0 = first message)"),
    risu("firstmsgindex", &["firstmessageindex", "first_msg_index"], "", "the greeting in use (-1 = first message, then the alternates from 0)"),
    row(RI, "chatindex", &["chat_index"], "", "the index of the message being rendered: -1 in prompts"),
    row(RI, "messagetime", &["message_time"], "", "the rendered message's time: [Cannot get time] in prompts"),
    row(RI, "messagedate", &["message_date"], "", "the rendered message's date: [Cannot get time] in prompts"),
    row(RI, "messageidleduration", &["message_idle_duration"], "", "time between the rendered and previous user messages: [No user message found] in prompts"),
    row(RI, "messageunixtimearray", &["message_unixtime_array"], "", "the messages' times in milliseconds, a JSON array"),
    row(RI, "role", &[], "", "the rendered message's role: null in prompts"),
    row(RI, "isfirstmsg", &["isfirstmessage"], "", "1 when rendering the greeting: 0 in prompts"),
    row(RI, "previouschatlog", &["previous_chat_log"], "::N", "message N's text, else Out of range"),
    row(RI, "history", &["messages"], "::role", "the messages as a JSON array ({role,data} objects; with role, \"role: text\")"),
    row(RI, "userhistory", &["usermessages", "user_history"], "", "the user's messages as {role,data} objects, a JSON array"),
    row(RI, "charhistory", &["charmessages", "char_history"], "", "the character's messages as {role,data} objects, a JSON array"),
    row(RI, "mainprompt", &["systemprompt", "main_prompt"], "", "the application's system prompt"),
    row(RI, "metadata", &[], "::KEY", "imateapot; keys about the running RisuAI stay text; others: RisuAI's error text"),
    // Time.
    row(ST, "time", &[], "::UTC+N", "local time, h:mm AM; with UTC+N / UTC-N, the time at that offset (hours)").st(0, 1),
    row(ST, "time_UTC", &[], "+N", "legacy form of {{time::UTC+N}} (also time_UTC-N)").st(0, 0),
    row(ST, "datetimeformat", &[], "::FORMAT", "the clock in a moment.js format (YYYY-MM-DD HH:mm:ss, LLLL, ...)").st(1, 1),
    row(ST, "timeDiff", &[], "::LEFT::RIGHT", "how long from RIGHT to LEFT, in words (in 3 hours, 3 hours ago); dates as moment.js reads them").st(2, 2),
    row(ST, "date", &[], "", "local date, MMMM D, YYYY").st(0, 0),
    row(ST, "weekday", &[], "", "local weekday").st(0, 0),
    row(ST, "isotime", &[], "", "local time, HH:mm").st(0, 0),
    row(ST, "isodate", &[], "", "local date, YYYY-MM-DD").st(0, 0),
    row(RI, "unixtime", &[], "", "seconds since 1970"),
    row(ST, "idle_duration", &["idleDuration"], "", "time since the last user message, in words").st(0, 0),
    risu("time", &[], "::FORMAT::MS", "local time H:M:S; with a format, the clock (or MS) formatted"),
    risu("date", &["datetimeformat"], "::FORMAT::MS", "local date Y-M-D; with a format (YYYY MM DD HH mm ss ...), the clock (or MS) formatted"),
    risu("isotime", &[], "", "UTC time, H:M:S"),
    risu("isodate", &[], "", "UTC date, Y-M-D"),
    risu("idle_duration", &["idleduration"], "", "time since the last message, H:MM:SS"),
    // Text.
    row(AP, "newline", &[], "::N", "a newline, or N").st(0, 1),
    row(RI, "br", &[], "", "a newline"),
    row(ST, "space", &[], "::N", "one space, or N (within the output limit)").st(0, 1),
    row(ST, "trim", &[], "", "removes the newlines around it (also with ::A, which is dropped); {{trim}}A{{/trim}}: A trimmed").st(0, 1),
    risu("trim", &[], "::A", "A without surrounding whitespace"),
    row(ST, "noop", &[], "", "nothing").st(0, 0),
    row(RI, "blank", &["none"], "", "nothing"),
    // Variables.
    row(ST, "setvar", &[], "::name::value", "sets a chat variable").st(2, 2),
    row(ST, "getvar", &[], "::name", "a chat variable, empty if unset").st(1, 1),
    row(ST, "addvar", &[], "::name::value", "adds a number, else appends the text").st(2, 2),
    row(ST, "incvar", &[], "::name", "adds 1; the new value").st(1, 1),
    row(ST, "decvar", &[], "::name", "subtracts 1; the new value").st(1, 1),
    row(ST, "setglobalvar", &[], "::name::value", "sets a global variable").st(2, 2),
    row(ST, "getglobalvar", &[], "::name", "a global variable, empty if unset").st(1, 1),
    row(ST, "addglobalvar", &[], "::name::value", "adds to a global variable").st(2, 2),
    row(ST, "incglobalvar", &[], "::name", "adds 1 to a global variable").st(1, 1),
    row(ST, "decglobalvar", &[], "::name", "subtracts 1 from a global variable").st(1, 1),
    row(ST, "hasvar", &["varexists"], "::name", "true if the chat variable exists, else false").st(1, 1),
    row(ST, "deletevar", &["flushvar"], "::name", "deletes a chat variable").st(1, 1),
    row(ST, "setvarkey", &["setvarindex"], "::name::key::value", "sets a key (or index) of the chat variable's JSON object (or array)").st(3, 3),
    row(ST, "getvarkey", &["getvarindex"], "::name::key", "a key (or index) of the chat variable's JSON object (or array)").st(2, 2),
    row(ST, "hasglobalvar", &["globalvarexists"], "::name", "true if the global variable exists, else false").st(1, 1),
    row(ST, "deleteglobalvar", &["flushglobalvar"], "::name", "deletes a global variable").st(1, 1),
    row(ST, "setglobalvarkey", &["setglobalvarindex"], "::name::key::value", "sets a key (or index) of the global variable's JSON object (or array)").st(3, 3),
    row(ST, "getglobalvarkey", &["getglobalvarindex"], "::name::key", "a key (or index) of the global variable's JSON object (or array)").st(2, 2),
    row(OWN, "setdefaultvar", &[], "::name::value", "sets a chat variable if unset or empty"),
    row(OWN, "setdefaultglobalvar", &[], "::name::value", "sets a global variable if unset or empty"),
    row(OWN, "tempvar", &["gettempvar"], "::name", "a variable of this expansion"),
    row(OWN, "settempvar", &[], "::name::value", "sets a variable of this expansion"),
    risu("setvar", &[], "::name::value", "sets a chat variable"),
    risu("getvar", &[], "::name", "a chat variable, null if unset"),
    risu("addvar", &[], "::name::N", "adds N to a chat variable as numbers (NaN when unset)"),
    risu("setdefaultvar", &[], "::name::value", "sets a chat variable whose value is empty (an unset one reads null)"),
    risu("getglobalvar", &[], "::name", "a global variable, null if unset"),
    risu("tempvar", &["gettempvar"], "::name", "a variable of this expansion"),
    risu("settempvar", &[], "::name::value", "sets a variable of this expansion"),
    // SillyTavern: names, card fields and chat.
    row(ST, "group", &["charIfNotGroup", "<group>", "<charifnotgroup>"], "", "the group's member names joined with \", \" (muted too), else the character's name").st(0, 0),
    row(ST, "groupNotMuted", &[], "", "the group's unmuted member names, else the character's name").st(0, 0),
    row(ST, "notChar", &[], "", "the group's other member names, else the user's name").st(0, 0),
    row(ST, "charPrompt", &[], "", "the card's main prompt override (system_prompt)").st(0, 0),
    row(ST, "charInstruction", &[], "", "the card's post-history instructions").st(0, 0),
    row(ST, "charDepthPrompt", &[], "", "the card's depth note").st(0, 0),
    row(ST, "charCreatorNotes", &["creatorNotes"], "", "the card's creator notes").st(0, 0),
    row(ST, "charVersion", &["version"], "", "the card's version").st(0, 0),
    row(ST, "charFirstMessage", &["greeting"], "::N", "the first message; with N >= 1, alternate greeting N; else empty").st(0, 1),
    row(ST, "allChatRange", &[], "", "0-LAST, the range of the chat's message indexes (empty chat: empty)").st(0, 0),
    // SillyTavern macros that need SillyTavern.
    st_na("input", &[], "", "the text in the send box", ST_UI),
    st_na("isMobile", &[], "", "true on a mobile device", ST_UI),
    st_na("firstDisplayedMessageId", &[], "", "the index of the first message shown", ST_UI),
    st_na("maxPrompt", &["maxPromptTokens"], "", "the prompt size in tokens", ST_APP),
    st_na("maxContext", &["maxContextTokens"], "", "the context size in tokens", ST_APP),
    st_na("maxResponse", &["maxResponseTokens"], "", "the response size in tokens", ST_APP),
    st_na("model", &[], "", "the chosen model", ST_APP),
    st_na("systemPrompt", &[], "", "the system prompt setting (or the card's override)", ST_APP),
    st_na("hasExtension", &[], "::NAME", "true if an extension is on", "needs SillyTavern's extensions"),
    st_na("lastGenerationType", &[], "", "the kind of the last generation (normal, swipe, ...)", "tracks SillyTavern's generation events"),
    st_na("firstIncludedMessageId", &[], "", "the index of the first message in the context", "known only after SillyTavern has fitted the chat into its context"),
    st_na("lastSwipeId", &[], "", "the number of swipes of the last message", "needs SillyTavern's swipes, which a chat message here does not carry"),
    st_na("currentSwipeId", &[], "", "the 1-based swipe shown for the last message", "needs SillyTavern's swipes, which a chat message here does not carry"),
    st_na("banned", &[], "::WORD", "bans a word for the Text Completion backend", "adds to SillyTavern's Text Completion banned words"),
    st_na("outlet", &[], "::KEY", "the world info outlet's text", "filled by SillyTavern's world info outlet entries during generation"),
    st_na("instructStoryStringPrefix", &[], "", "instruct story string prefix", ST_INSTRUCT),
    st_na("instructStoryStringSuffix", &[], "", "instruct story string suffix", ST_INSTRUCT),
    st_na("instructUserPrefix", &["instructInput"], "", "instruct user prefix", ST_INSTRUCT),
    st_na("instructUserSuffix", &[], "", "instruct user suffix", ST_INSTRUCT),
    st_na("instructAssistantPrefix", &["instructOutput"], "", "instruct assistant prefix", ST_INSTRUCT),
    st_na("instructAssistantSuffix", &["instructSeparator"], "", "instruct assistant suffix", ST_INSTRUCT),
    st_na("instructSystemPrefix", &[], "", "instruct system prefix", ST_INSTRUCT),
    st_na("instructSystemSuffix", &[], "", "instruct system suffix", ST_INSTRUCT),
    st_na("instructFirstAssistantPrefix", &["instructFirstOutputPrefix"], "", "instruct first assistant prefix", ST_INSTRUCT),
    st_na("instructLastAssistantPrefix", &["instructLastOutputPrefix"], "", "instruct last assistant prefix", ST_INSTRUCT),
    st_na("instructStop", &[], "", "instruct stop sequence", ST_INSTRUCT),
    st_na("instructUserFiller", &[], "", "instruct user alignment filler", ST_INSTRUCT),
    st_na("instructSystemInstructionPrefix", &[], "", "instruct system instruction prefix", ST_INSTRUCT),
    st_na("instructFirstUserPrefix", &["instructFirstInput"], "", "instruct first user prefix", ST_INSTRUCT),
    st_na("instructLastUserPrefix", &["instructLastInput"], "", "instruct last user prefix", ST_INSTRUCT),
    st_na("defaultSystemPrompt", &["instructSystem", "instructSystemPrompt"], "", "the default system prompt", ST_INSTRUCT),
    st_na("exampleSeparator", &["chatSeparator"], "", "the separator between example chats", ST_INSTRUCT),
    st_na("chatStart", &[], "", "the chat start marker", ST_INSTRUCT),
    // Math and comparison.
    row(RI, "calc", &[], "::EXPR", "the arithmetic expression's value"),
    row(RI, "?", &[], " EXPR", "the arithmetic expression's value"),
    row(OWN, "equal", &[], "::A::B", "1 if equal, else 0"),
    row(OWN, "not_equal", &[], "::A::B", "1 if different, else 0"),
    row(RI, "greater", &[], "::A::B", "1 if A > B as numbers"),
    row(RI, "greater_equal", &[], "::A::B", "1 if A >= B as numbers"),
    row(RI, "less", &[], "::A::B", "1 if A < B as numbers"),
    row(RI, "less_equal", &[], "::A::B", "1 if A <= B as numbers"),
    row(OWN, "and", &[], "::A::B", "1 if every argument is 1 or true"),
    row(OWN, "or", &[], "::A::B", "1 if some argument is 1 or true"),
    row(OWN, "not", &[], "::A", "1 unless A is 1 or true"),
    risu("equal", &[], "::A::B", "1 if the texts are equal"),
    risu("not_equal", &["notequal"], "::A::B", "1 if the texts differ"),
    risu("and", &[], "::A::B", "1 if both are 1"),
    risu("or", &[], "::A::B", "1 if either is 1"),
    risu("not", &[], "::A", "0 if A is 1, else 1"),
    // Blocks.
    row(RI, "#if", &[], " COND", "the body if COND is 1 or true, else the {{:else}} part"),
    row(RI, "#if_pure", &[], " COND", "like #if, whitespace kept"),
    row(RI, "#when", &[], "::A::OP::B", "the body if the condition holds (is, isnot, >, <, and, or, not, var, toggle, keep, legacy, ...)"),
    row(RI, "#each", &[], " LIST as x", "the body once per item, {{slot::x}} the item"),
    row(RI, "#puredisplay", &["#pure_display"], "", "the body as written, no macro expanded, braces escaped"),
    row(RI, "#pure", &[], "", "the body as written, no macro expanded"),
    row(RI, "slot", &[], "::x", "the current #each item"),
    // SillyTavern's macro engine (1.19): conditionals and the variable shorthand.
    row(ST, "if", &[], " COND", "{{if COND}}A{{else}}B{{/if}} or {{if::COND::A}}: A if COND is not empty, false, off or 0 (!COND inverts; .name/$name read a variable, a macro name is expanded), else B; only that part runs"),
    row(ST, "else", &[], "", "inside {{if}}...{{/if}}: starts the part used when the condition is false"),
    row(ST, ".name", &["$name"], " OP VALUE", "variable shorthand, .name local and $name global: get; = += -= ++ -- set; || ?? ||= ??= defaults; == != > >= < <= give true/false"),
    // Dice.
    row(OWN, "dice", &[], "::XdY", "like roll"),
    risu("dice", &[], "::XdY", "the sum of X dice of Y sides; NaN if not numbers"),
    // RisuAI strings.
    row(RI, "startswith", &[], "::A::B", "1 if A starts with B"),
    row(RI, "endswith", &[], "::A::B", "1 if A ends with B"),
    row(RI, "contains", &[], "::A::B", "1 if A contains B"),
    row(RI, "replace", &[], "::A::B::C", "A with every B replaced by C"),
    row(RI, "split", &[], "::A::B", "A split on B, a JSON array"),
    row(RI, "join", &[], "::ARRAY::B", "the items joined with B"),
    row(RI, "spread", &[], "::ARRAY", "the items joined with ::"),
    row(RI, "length", &[], "::A", "A's length in UTF-16 units"),
    row(RI, "lower", &[], "::A", "A in lower case"),
    row(RI, "upper", &[], "::A", "A in upper case"),
    row(RI, "capitalize", &[], "::A", "A with its first character in upper case"),
    row(RI, "tonumber", &[], "::A", "the digits, dots and spaces of A"),
    row(RI, "iserror", &[], "::A", "1 if A starts with error: (any case)"),
    row(RI, "unicode_encode", &[], "::A::I", "the UTF-16 code of A at I (default 0)"),
    row(RI, "unicode_decode", &[], "::N", "the character of UTF-16 code N"),
    row(RI, "u", &["unicodedecodefromhex"], "::HEX", "the character of a hex code"),
    row(RI, "ue", &["unicodeencodefromhex"], "::HEX", "the character of a hex code"),
    row(RI, "fromhex", &[], "::HEX", "hex to decimal"),
    row(RI, "tohex", &[], "::N", "decimal to hex"),
    row(RI, "hash", &[], "::A", "a 7-digit number from A, the same for the same A"),
    row(RI, "xor", &["xorencrypt", "xorencode", "xore"], "::A", "A's UTF-8 bytes xor 0xFF, as base64"),
    row(RI, "xordecrypt", &["xordecode", "xord"], "::BASE64", "the inverse of xor"),
    row(RI, "crypt", &["crypto", "caesar", "encrypt", "decrypt"], "::A::N", "A's UTF-16 units shifted by N (default 32768, its own inverse)"),
    // RisuAI numbers.
    row(RI, "round", &[], "::N", "N rounded (halves up)"),
    row(RI, "floor", &[], "::N", "N rounded down"),
    row(RI, "ceil", &[], "::N", "N rounded up"),
    row(RI, "abs", &[], "::N", "N without sign"),
    row(RI, "remaind", &[], "::A::B", "the remainder of A / B"),
    row(RI, "pow", &[], "::A::B", "A to the power B"),
    row(RI, "fixnum", &["fixnumber"], "::N::D", "N with D decimals"),
    row(RI, "randint", &[], "::MIN::MAX", "a random whole number in MIN..=MAX"),
    row(RI, "rollp", &["rollpick"], "::XdY", "dice, the same for this chat and place"),
    // RisuAI arrays and dictionaries.
    row(RI, "makearray", &["array", "a"], "::A::B", "a JSON array of the arguments"),
    row(RI, "makedict", &["dict", "d", "makeobject", "object", "o"], "::K=V::K=V", "a JSON object of the pairs"),
    row(RI, "arraylength", &[], "::ARRAY", "the number of items"),
    row(RI, "arrayelement", &[], "::ARRAY::I", "item I (negative from the end), else null"),
    row(RI, "dictelement", &["objectelement"], "::DICT::K", "the value of K, else null"),
    row(RI, "element", &["ele"], "::JSON::K1::K2", "the value down the path, else null"),
    row(RI, "objectassert", &["dictassert", "object_assert"], "::DICT::K::V", "DICT with K set to V unless it has a value"),
    row(RI, "arrayshift", &[], "::ARRAY", "without the first item"),
    row(RI, "arraypop", &[], "::ARRAY", "without the last item"),
    row(RI, "arraypush", &[], "::ARRAY::V", "with V appended"),
    row(RI, "arraysplice", &[], "::ARRAY::START::N::V", "N items from START replaced by V"),
    row(RI, "arrayassert", &[], "::ARRAY::I::V", "with V at I if I is past the end"),
    row(RI, "range", &[], "::[START,END,STEP]", "the numbers from START below END, a JSON array"),
    row(RI, "filter", &[], "::ARRAY::all|nonempty|unique", "the array without empty and/or repeated items"),
    row(RI, "all", &[], "::A::B", "1 if every item is 1"),
    row(RI, "any", &[], "::A::B", "1 if some item is 1"),
    row(RI, "min", &[], "::A::B", "the smallest number"),
    row(RI, "max", &[], "::A::B", "the largest number"),
    row(RI, "sum", &[], "::A::B", "the sum"),
    row(RI, "average", &[], "::A::B", "the mean"),
    // RisuAI markup and escapes.
    row(RI, "cbr", &["cnl", "cnewline"], "::N", "the characters \\n, N times"),
    row(RI, "decbo", &["displayescapedcurlybracketopen"], "", "{"),
    row(RI, "decbc", &["displayescapedcurlybracketclose"], "", "}"),
    row(RI, "bo", &["ddecbo", "doubledisplayescapedcurlybracketopen"], "", "{{"),
    row(RI, "bc", &["ddecbc", "doubledisplayescapedcurlybracketclose"], "", "}}"),
    row(RI, "debo", &["displayescapedbracketopen", "("], "", "("),
    row(RI, "debc", &["displayescapedbracketclose", ")"], "", ")"),
    row(RI, "deabo", &["displayescapedanglebracketopen", "<"], "", "&lt;"),
    row(RI, "deabc", &["displayescapedanglebracketclose", ">"], "", "&gt;"),
    row(RI, "dec", &["displayescapedcolon", ":"], "", ":"),
    row(RI, ";", &["displayescapedsemicolon"], "", ";"),
    row(RI, "tex", &["latex", "katex"], "::A", "$$A$$"),
    row(RI, "ruby", &["furigana"], "::BASE::RUBY", "a <ruby> element"),
    row(RI, "codeblock", &[], "::LANG::CODE", "an HTML code block"),
    row(RI, "button", &[], "::LABEL::TRIGGER", "a <button> running a RisuAI trigger"),
    row(RI, "risu", &[], "::SIZE", "RisuAI's logo, an <img>"),
    row(RI, "file", &[], "::NAME::BASE64", "the decoded text (display: the name in a box)"),
    // RisuAI functions that need RisuAI.
    na("trigger_id", &["triggerid"], "", "the id of the clicked element that ran the trigger", UI),
    na("screenwidth", &["screen_width"], "", "the window's width", UI),
    na("screenheight", &["screen_height"], "", "the window's height", UI),
    na("model", &[], "", "the chosen AI model", APP),
    na("axmodel", &[], "", "the chosen auxiliary model", APP),
    na("maxcontext", &[], "", "the context size setting", APP),
    na("jbtoggled", &[], "", "1 if the jailbreak prompt is on", APP),
    na("prefillsupported", &["prefill_supported", "prefill"], "", "1 if the model takes a prefill", APP),
    na("jb", &["jailbreak"], "", "the jailbreak prompt", APP),
    na("globalnote", &["systemnote", "ujb"], "", "the global note", APP),
    na("lorebook", &["worldinfo"], "", "every lorebook entry as JSON", "needs RisuAI's lorebook objects (character, chat and module books)"),
    na("emotionlist", &[], "", "the character's emotion image names", "needs RisuAI's emotion images"),
    na("assetlist", &[], "", "the character's asset names", "needs RisuAI's asset list"),
    na("chardisplayasset", &[], "", "the asset names shown by prebuilt asset commands", "needs RisuAI's asset list"),
    na("moduleenabled", &["module_enabled"], "::NAMESPACE", "1 if a module is on", "needs RisuAI's modules"),
    na("moduleassetlist", &["module_assetlist"], "::NAMESPACE", "a module's asset names", "needs RisuAI's modules"),
    na("return", &[], "::VALUE", "ends a trigger script with a value", "ends a RisuAI trigger script (Lua and trigger runtime)"),
    na("#code", &[], "", "the body with whitespace removed and escapes read", "RisuAI's script editing blocks"),
    na("#escape", &[], "", "the body with braces escaped for display", "RisuAI's display pass"),
    na("#func", &["call"], " NAME ARGS", "defines / calls a CBS function", "RisuAI's trigger runtime"),
    na("position", &[], "::NAME", "a place for @@position entries", "handled by the prompt assembler's decorators, not a macro"),
    na("asset", &[], "::NAME", "shows an additional asset", ASSET),
    na("emotion", &[], "::NAME", "shows an emotion image", ASSET),
    na("audio", &[], "::NAME", "plays an audio asset", ASSET),
    na("bg", &[], "::NAME", "sets a background image", ASSET),
    na("bgm", &[], "::NAME", "plays background music", ASSET),
    na("video", &[], "::NAME", "shows a video asset", ASSET),
    na("video-img", &[], "::NAME", "shows a video asset as an image", ASSET),
    na("image", &[], "::NAME", "shows an image asset", ASSET),
    na("img", &[], "::NAME", "shows an unstyled image", ASSET),
    na("path", &["raw"], "::NAME", "an asset's path", ASSET),
    na("inlay", &[], "::NAME", "shows an inlay asset", ASSET),
    na("inlayed", &[], "::NAME", "shows a styled inlay asset", ASSET),
    na("inlayeddata", &[], "::NAME", "shows a styled inlay asset, also sent to the model", ASSET),
    na("source", &[], "::user|char", "the profile image URL", ASSET),
    na("__", &[], "::ARGS", "RisuAI's internal function", "internal to RisuAI"),
];

/// Normalised name to the rows that carry it (name or alias).
fn index() -> &'static HashMap<String, Vec<usize>> {
    static INDEX: OnceLock<HashMap<String, Vec<usize>>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut map: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, info) in CATALOG.iter().enumerate() {
            for n in std::iter::once(&info.name).chain(info.aliases) {
                map.entry(normalize_name(n)).or_default().push(i);
            }
        }
        map
    })
}

/// The row of a normalised name in a dialect: for `auto` the shared meaning, else the row
/// whose dialects include it.
pub(crate) fn lookup(dialect: Dialect, normalized: &str) -> Option<&'static MacroInfo> {
    let rows = index().get(normalized)?;
    let mut found = rows.iter().filter_map(|i| CATALOG.get(*i));
    match dialect {
        Dialect::Auto => found.find(|r| !r.risu_meaning),
        Dialect::Risu => {
            let rows: Vec<&MacroInfo> = found.filter(|r| r.dialects.contains(dialect)).collect();
            rows.iter()
                .find(|r| r.risu_meaning)
                .or_else(|| rows.first())
                .copied()
        }
        d => found.find(|r| r.dialects.contains(d)),
    }
}

/// The rows that cannot work outside their application, in a dialect.
pub(crate) fn unavailable(dialect: Dialect) -> impl Iterator<Item = &'static MacroInfo> {
    CATALOG
        .iter()
        .filter(move |r| r.unavailable.is_some() && r.dialects.contains(dialect))
}
