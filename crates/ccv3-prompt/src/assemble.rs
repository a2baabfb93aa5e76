//! Assembly: from a card, a chat and lorebook activations to an ordered list of prompt parts,
//! fitted to a maximum context.
//!
//! # Order
//!
//! The parts follow the [`Template`] (see [`crate::template`] for the slots). Inside a slot,
//! lorebook entries are ordered by ascending insertion order (`order`), ties by their place in
//! the input; this is SillyTavern's and RisuAI's behaviour (a higher order sits closer to the
//! chat).
//!
//! # The greeting
//!
//! Greeting `N` is `first_mes` for 0, then `alternate_greetings[N-1]`, then (in group chats only)
//! the `group_only_greetings`. When the chat is empty or does not start with an assistant message,
//! the chosen greeting (macros expanded) becomes the first assistant message of the history; a
//! chat that starts with an assistant message is taken to hold its greeting already. An index past
//! the greetings is an error; an empty greeting adds nothing.
//!
//! # The history and depth insertions
//!
//! The history is the greeting and the chat, oldest first. Chat messages are placed as they are
//! (applications expand macros in a message when it is sent). An entry at `@@depth N` goes before
//! the `N` newest messages of the history as it is *after* fitting: depth 0 after the newest
//! message, a depth larger than the history before the oldest. `@@reverse_depth N` goes before the
//! message at index `N` from the oldest. At one place in the history the author's note block
//! (entries at author's note top, the note, entries at author's note bottom) comes first, then
//! system, user and assistant entries, each by ascending order. Depth-0 assistant entries are the
//! prefill when [`PromptOptions::prefill`] is on (the default), else ordinary depth-0 messages.
//!
//! # The UI prompts
//!
//! The system prompt is the card's `system_prompt` with `{{original}}` standing for the
//! application's own ([`PromptOptions::system_prompt`]); an empty (or blank) card system prompt
//! means the application's own is used. The post-history instructions work the same way with
//! [`PromptOptions::post_history_instructions`]. An active entry with `@@disable_ui_prompt
//! system_prompt` (or `post_history_instructions`) drops that prompt, even if the entry itself is
//! later cut to fit the context (the decision is made from the activations).
//!
//! # Text
//!
//! Every part other than a chat message is trimmed of leading and trailing whitespace after its
//! macros are expanded, and a part left empty is left out (SillyTavern trims prompt pieces the same
//! way). Chat messages are placed exactly as given.
//!
//! # Sections
//!
//! Personality and scenario go through [`PromptOptions::personality_format`] and
//! [`PromptOptions::scenario_format`] (SillyTavern's story-string wording by default). When the
//! card has no personality (or scenario), the `@@position personality` (`scenario`) decorator is
//! ignored, as SPEC_V3 asks, and the entry goes after the character like an entry without a
//! position. `mes_example` is
//! expanded, then split on `<START>` (ASCII case-insensitive); each non-blank block becomes one
//! system part, preceded by [`PromptOptions::example_header`] on its own line.
//!
//! # Fitting
//!
//! With [`PromptOptions::max_context`] set, parts are cut until the sum of the parts' token counts
//! fits, in this order:
//! 1. history messages, oldest first, keeping the newest [`PromptOptions::keep_last_messages`];
//! 2. lorebook entries with `@@ignore_on_max_context`, lowest priority first;
//! 3. the other lorebook entries, lowest priority first (priority defaults to insertion order; ties:
//!    lower order, then the later entry, first);
//! 4. example blocks, the last first.
//!
//! The system prompt, description, personality, scenario, post-history instructions and the kept
//! newest messages are never cut: when they alone exceed the maximum, the prompt is returned with
//! [`Assembled::overflow`] set. The count is the sum of each part's own count plus
//! [`PromptOptions::part_overhead`] per part; the separators added when parts are merged are not
//! counted.

use crate::chat::{ChatMessage, Role};
use crate::error::Error;
use crate::expand::{ExpandContext, Expander};
use crate::lore::{InsertPosition, LoreInsert, UiPrompt};
use crate::template::{Slot, Template};
use crate::tokens::TokenCounter;
use ccv3::CardData;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// SillyTavern's default personality line.
pub const DEFAULT_PERSONALITY_FORMAT: &str = "{{char}}'s personality: {{personality}}";
/// SillyTavern's default scenario line.
pub const DEFAULT_SCENARIO_FORMAT: &str = "Scenario: {{scenario}}";
/// The default line before each example dialogue block.
pub const DEFAULT_EXAMPLE_HEADER: &str = "[Example dialogue]";

/// Everything that shapes a prompt besides the card, the chat and the activations; mirrors the
/// options of `ccv3 prompt`.
///
/// `--card`, `--chat`, `--book`, `--state` and `--tokenizer` are inputs the application resolves
/// (the card, the chat, the activations from the lorebook engine, the macro variables, and the
/// [`TokenCounter`]); the rest is here.
#[derive(Debug, Clone)]
pub struct PromptOptions {
    /// `--user`: the user's name for `{{user}}` (default `User`).
    pub user_name: String,
    /// The name for `{{char}}`; `None` uses the card's nickname, else its name.
    pub char_name: Option<String>,
    /// `--greeting N`: 0 = `first_mes`, then `alternate_greetings`, then (group chats)
    /// `group_only_greetings`.
    pub greeting: usize,
    /// Whether to add the greeting when the chat does not start with an assistant message
    /// (default on).
    pub insert_greeting: bool,
    /// Whether this is a group chat (enables `group_only_greetings`).
    pub group_chat: bool,
    /// `--seed`: the chat's seed, for macro engines that pick at random (the built-in expander
    /// does not use it).
    pub seed: u64,
    /// `--system-prompt`: the application's own system prompt (`{{original}}` in the card's).
    pub system_prompt: Option<String>,
    /// The application's own post-history instructions (`{{original}}` in the card's).
    pub post_history_instructions: Option<String>,
    /// `--max-context N`: the most tokens the prompt may hold.
    pub max_context: Option<usize>,
    /// How many of the newest history messages are never cut (default 1).
    pub keep_last_messages: usize,
    /// `--template`: the slot order.
    pub template: Template,
    /// Whether depth-0 assistant entries become the prefill (default on).
    pub prefill: bool,
    /// The personality line; `{{personality}}` is the card's personality.
    pub personality_format: String,
    /// The scenario line; `{{scenario}}` is the card's scenario.
    pub scenario_format: String,
    /// The line before each example block (empty: none).
    pub example_header: String,
    /// An author's note, inserted into the history as a system message.
    pub authors_note: Option<String>,
    /// The author's note depth (default 4, as in SillyTavern).
    pub authors_note_depth: u32,
    /// Tokens added to each part's count for its framing (role tokens, instruct prefixes), e.g. 4
    /// for OpenAI chat messages (default 0). Counted per part, so parts merged into one message
    /// are over-counted, which errs on the safe side when fitting.
    pub part_overhead: usize,
    /// Whether macros in lorebook contents are expanded (default on; turn off when the lorebook
    /// engine returns expanded text).
    pub expand_lore: bool,
    /// The clock for the time macros of [`crate::adapters::CbsExpander`] (`{{time}}`,
    /// `{{date}}`, ...). The library never reads the system clock: `None` (the default) makes
    /// those macros expand to an empty string; the CLI passes the clock (or `--now`).
    pub now: Option<ccv3_cbs::Timestamp>,
    /// Whose macros the card's texts are written in ([`ccv3_cbs::Dialect`], issue 17): `auto`
    /// (the default) takes `risu` for a card with RisuAI extensions, else `sillytavern`
    /// ([`crate::adapters::card_dialect`]).
    pub dialect: ccv3_cbs::Dialect,
    /// How `{{mesExamples}}` shapes the example messages (SillyTavern's chat completion shape
    /// by default; [`crate::InstructTemplate::example_format`] for an instruct template).
    pub example_format: ccv3_cbs::ExampleFormat,
}

impl Default for PromptOptions {
    fn default() -> Self {
        PromptOptions {
            user_name: "User".into(),
            char_name: None,
            greeting: 0,
            insert_greeting: true,
            group_chat: false,
            seed: 0,
            system_prompt: None,
            post_history_instructions: None,
            max_context: None,
            keep_last_messages: 1,
            template: Template::default(),
            prefill: true,
            personality_format: DEFAULT_PERSONALITY_FORMAT.into(),
            scenario_format: DEFAULT_SCENARIO_FORMAT.into(),
            example_header: DEFAULT_EXAMPLE_HEADER.into(),
            authors_note: None,
            authors_note_depth: 4,
            part_overhead: 0,
            expand_lore: true,
            now: None,
            dialect: ccv3_cbs::Dialect::Auto,
            example_format: ccv3_cbs::ExampleFormat::default(),
        }
    }
}

/// What a part of the prompt is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum PartKind {
    /// The system prompt.
    SystemPrompt,
    /// The card's description.
    Description,
    /// The card's personality line.
    Personality,
    /// The card's scenario line.
    Scenario,
    /// One `<START>` block of `mes_example`.
    Example {
        /// The block's index (0-based, blank blocks not counted).
        block: usize,
    },
    /// The greeting added to the history.
    Greeting {
        /// The greeting index.
        index: usize,
    },
    /// A chat message.
    Message {
        /// Its index in the chat as given.
        index: usize,
    },
    /// A lorebook entry.
    Lore {
        /// Its index in the activations as given.
        index: usize,
    },
    /// The author's note.
    AuthorsNote,
    /// The post-history instructions.
    PostHistory,
}

impl PartKind {
    /// Whether the part is a history message (the greeting or a chat message).
    pub fn is_history(&self) -> bool {
        matches!(self, PartKind::Greeting { .. } | PartKind::Message { .. })
    }
}

/// One piece of the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// The slot it belongs to.
    pub slot: Slot,
    /// What it is.
    pub kind: PartKind,
    /// Its role.
    pub role: Role,
    /// The speaker's name (history messages).
    pub name: Option<String>,
    /// A label for reports (`description`, `message 3`, the entry's label, ...).
    pub label: String,
    /// The text, macros expanded.
    pub content: String,
    /// Its token count.
    pub tokens: usize,
}

/// Why a part was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CutReason {
    /// Cut to fit the maximum context.
    MaxContext,
    /// The template has no slot for it.
    NotInTemplate,
    /// A lorebook entry that matched but did not fit the lorebook budget (a book's
    /// `token_budget`, or the room the maximum context leaves): cut by the scan, before
    /// assembly.
    Budget,
}

impl CutReason {
    /// `max_context`, `not_in_template` or `budget`.
    pub fn as_str(self) -> &'static str {
        match self {
            CutReason::MaxContext => "max_context",
            CutReason::NotInTemplate => "not_in_template",
            CutReason::Budget => "budget",
        }
    }
}

/// What kind of thing was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CutKind {
    /// A history message (or the greeting).
    History,
    /// A lorebook entry.
    Lore,
    /// An example block.
    Example,
}

impl CutKind {
    /// `history`, `lore` or `example`.
    pub fn as_str(self) -> &'static str {
        match self {
            CutKind::History => "history",
            CutKind::Lore => "lore",
            CutKind::Example => "example",
        }
    }
}

/// A part left out of the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// What it was.
    pub kind: CutKind,
    /// Its label.
    pub label: String,
    /// Its token count.
    pub tokens: usize,
    /// Why.
    pub reason: CutReason,
}

/// A lorebook entry that made it into the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoreUse {
    /// The entry's label.
    pub label: String,
    /// Its index in the activations as given.
    pub index: usize,
    /// Its position ([`InsertPosition::label`]).
    pub position: String,
    /// The slot it went into.
    pub slot: Slot,
    /// Its role.
    pub role: Role,
    /// Its token count.
    pub tokens: usize,
    /// The entry wrote no position and went `after_char` by default
    /// ([`LoreInsert::position_default`]).
    pub position_default: bool,
}

/// An assembled prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assembled {
    /// The parts, in prompt order.
    pub parts: Vec<Part>,
    /// The sum of the parts' token counts.
    pub tokens: usize,
    /// The lorebook entries in the prompt, in prompt order.
    pub lore: Vec<LoreUse>,
    /// What was left out, in the order it was cut.
    pub cut: Vec<Cut>,
    /// The maximum context, when one was given.
    pub max_context: Option<usize>,
    /// By how many tokens the parts that are never cut exceed the maximum context, if they do.
    pub overflow: Option<usize>,
    /// The UI prompts dropped by `@@disable_ui_prompt`.
    pub disabled: Vec<UiPrompt>,
}

/// Which stage of fitting may cut a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cuttable {
    Never,
    History,
    Lore { ignore_on_max: bool },
    Example,
}

/// Where a history-slot unit goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A history message at this index of the history.
    Message(usize),
    /// `n` messages from the newest.
    Depth(u32),
    /// Before index `n` from the oldest.
    Reverse(u32),
}

struct Unit {
    part: Part,
    cuttable: Cuttable,
    /// For lore: (priority, order, input index); for others unused.
    priority: f64,
    order: f64,
    seq: usize,
    place: Option<Place>,
    /// Rank at one place in the history: 0 author's note block, 1 system, 2 user, 3 assistant.
    rank: u8,
    position: Option<InsertPosition>,
    kept: bool,
    /// For chat messages: the index in the chat (the part's text is filled in at the end).
    chat_index: Option<usize>,
}

/// Assembles the prompt for `card`, `chat` and the active lorebook entries `lore`.
///
/// Texts are expanded with `expander` in prompt order and counted with `counter`. See the module
/// docs for the order, the greeting, depth insertions and fitting.
///
/// # Errors
/// [`Error::Greeting`] when [`PromptOptions::greeting`] names a greeting the card does not have.
///
/// ```
/// use ccv3_prompt::{assemble, ChatMessage, LoreInsert, InsertPosition, PromptOptions, Role,
///     SimpleExpander, TokenCounter};
/// let mut card = ccv3::Card::new("Aqua").data;
/// card.description = "{{char}} is a goddess.".into();
/// card.first_mes = "Hello, {{user}}!".into();
/// let chat = [ChatMessage::user("Hi")];
/// let lore = [LoreInsert::new("axis", "Axis is a town.", InsertPosition::Depth { depth: 0, role: Role::System })];
/// let opts = PromptOptions { user_name: "Kazuma".into(), ..Default::default() };
/// let counter = TokenCounter::new(ccv3_tokens::Estimate);
/// let prompt = assemble(&card, &chat, &lore, &opts, &mut SimpleExpander, &counter)?;
/// let texts: Vec<&str> = prompt.parts.iter().map(|p| p.content.as_str()).collect();
/// assert_eq!(texts, ["Aqua is a goddess.", "Hello, Kazuma!", "Hi", "Axis is a town."]);
/// # Ok::<(), ccv3_prompt::Error>(())
/// ```
pub fn assemble(
    card: &CardData,
    chat: &[ChatMessage],
    lore: &[LoreInsert],
    opts: &PromptOptions,
    expander: &mut dyn Expander,
    counter: &TokenCounter,
) -> Result<Assembled, Error> {
    let char_name = opts
        .char_name
        .as_deref()
        .unwrap_or_else(|| card.char_name())
        .to_string();
    let user_name = opts.user_name.as_str();

    let greeting = choose_greeting(card, opts)?;
    let disabled = disabled_prompts(lore);
    let mut b = Builder {
        units: Vec::new(),
        cut: Vec::new(),
        expander,
        counter,
        char_name: &char_name,
        user_name,
        expand_lore: opts.expand_lore,
        overhead: opts.part_overhead,
    };
    let by_slot = lore_by_slot(card, lore, opts.prefill);
    b.cut_outside_template(lore, &by_slot, opts);
    for &slot in opts.template.slots() {
        let entries = by_slot.entries_for(slot);
        match slot {
            Slot::System => {
                if !disabled.contains(&UiPrompt::SystemPrompt) {
                    let text =
                        b.ui_prompt(&card.system_prompt, opts.system_prompt.as_deref(), slot);
                    b.fixed(slot, PartKind::SystemPrompt, "system_prompt", text);
                }
            }
            Slot::PostHistory => {
                if !disabled.contains(&UiPrompt::PostHistoryInstructions) {
                    let text = b.ui_prompt(
                        &card.post_history_instructions,
                        opts.post_history_instructions.as_deref(),
                        slot,
                    );
                    b.fixed(
                        slot,
                        PartKind::PostHistory,
                        "post_history_instructions",
                        text,
                    );
                }
            }
            Slot::LoreBeforeChar | Slot::LoreAfterChar | Slot::Prefill => {
                for i in entries {
                    b.lore(slot, lore, i);
                }
            }
            Slot::Description => b.description(card, lore, entries),
            Slot::Personality | Slot::Scenario => b.section(slot, card, lore, entries, opts),
            Slot::Examples => b.examples(card, lore, entries, opts),
            Slot::History => {
                b.history(chat, greeting, &char_name, opts);
                b.history_lore(lore, entries, opts);
            }
        }
    }
    let Builder {
        mut units, mut cut, ..
    } = b;
    let overflow = fit(&mut units, &mut cut, opts);
    let parts_order = layout(&units, opts.template.slots());
    let out = Assembled {
        max_context: opts.max_context,
        overflow,
        disabled,
        cut,
        ..Default::default()
    };
    Ok(finish(out, units, parts_order, chat, lore))
}

/// The UI prompts that active entries drop (`@@disable_ui_prompt`), sorted, once each.
fn disabled_prompts(lore: &[LoreInsert]) -> Vec<UiPrompt> {
    let mut disabled: Vec<UiPrompt> = lore
        .iter()
        .flat_map(|l| l.disable_ui_prompt.iter().copied())
        .collect();
    disabled.sort();
    disabled.dedup();
    disabled
}

/// Lorebook entries by slot, each list sorted by ascending order (stable).
struct BySlot(Vec<(Slot, Vec<usize>)>);

impl BySlot {
    /// The entries (indices into the lore) of `slot`, in order.
    fn entries_for(&self, slot: Slot) -> Vec<usize> {
        self.0
            .iter()
            .find(|(s, _)| *s == slot)
            .map(|(_, l)| l.clone())
            .unwrap_or_default()
    }
}

/// Sorts the entries into their slots (see [`BySlot`]).
fn lore_by_slot(card: &CardData, lore: &[LoreInsert], prefill_on: bool) -> BySlot {
    let mut by_slot: Vec<(Slot, Vec<usize>)> = Slot::ALL.iter().map(|s| (*s, Vec::new())).collect();
    let mut sorted: Vec<usize> = (0..lore.len()).collect();
    sorted.sort_by(|a, b| cmp_f64(lore[*a].order, lore[*b].order).then(a.cmp(b)));
    for &i in &sorted {
        // SPEC_V3 `@@position`: without a personality (scenario) section the decorator is
        // ignored, so the entry goes where entries without a position go: after the character.
        let position = match &lore[i].position {
            InsertPosition::Personality if card.personality.trim().is_empty() => {
                &InsertPosition::AfterChar
            }
            InsertPosition::Scenario if card.scenario.trim().is_empty() => {
                &InsertPosition::AfterChar
            }
            p => p,
        };
        let slot = slot_of(position, prefill_on);
        if let Some((_, list)) = by_slot.iter_mut().find(|(s, _)| *s == slot) {
            list.push(i);
        }
    }
    BySlot(by_slot)
}

/// The prompt's parts in `parts_order` (chat messages filled in now), their tokens and the
/// entries used, into `out`.
fn finish(
    mut out: Assembled,
    units: Vec<Unit>,
    parts_order: Vec<usize>,
    chat: &[ChatMessage],
    lore: &[LoreInsert],
) -> Assembled {
    let mut units: Vec<Option<Unit>> = units.into_iter().map(Some).collect();
    for idx in parts_order {
        let Some(mut u) = units.get_mut(idx).and_then(Option::take) else {
            continue;
        };
        if let Some(m) = u.chat_index.and_then(|i| chat.get(i)) {
            u.part.content = m.content.clone();
            u.part.name = m.name.clone();
            u.part.label = u.label();
        }
        out.tokens = out.tokens.saturating_add(u.part.tokens);
        if let (PartKind::Lore { index }, Some(position)) = (&u.part.kind, &u.position) {
            out.lore.push(LoreUse {
                label: u.part.label.clone(),
                index: *index,
                position: position.label(),
                slot: u.part.slot,
                role: u.part.role,
                tokens: u.part.tokens,
                position_default: lore.get(*index).is_some_and(|l| l.position_default),
            });
        }
        out.parts.push(u.part);
    }
    out
}

/// The greeting text for the options, or `None` when greetings are off.
fn choose_greeting<'c>(card: &'c CardData, opts: &PromptOptions) -> Result<Option<&'c str>, Error> {
    if !opts.insert_greeting {
        return Ok(None);
    }
    let mut all: Vec<&str> = Vec::with_capacity(1 + card.alternate_greetings.len());
    all.push(&card.first_mes);
    all.extend(card.alternate_greetings.iter().map(String::as_str));
    if opts.group_chat {
        all.extend(card.group_only_greetings.iter().map(String::as_str));
    }
    match all.get(opts.greeting) {
        Some(g) => Ok(Some(*g)),
        None => Err(Error::Greeting {
            index: opts.greeting,
            available: all.len(),
        }),
    }
}

fn slot_of(position: &InsertPosition, prefill: bool) -> Slot {
    match position {
        InsertPosition::BeforeChar => Slot::LoreBeforeChar,
        InsertPosition::AfterChar => Slot::LoreAfterChar,
        InsertPosition::BeforeDesc | InsertPosition::AfterDesc => Slot::Description,
        InsertPosition::Personality => Slot::Personality,
        InsertPosition::Scenario => Slot::Scenario,
        InsertPosition::ExamplesTop | InsertPosition::ExamplesBottom => Slot::Examples,
        InsertPosition::Depth {
            depth: 0,
            role: Role::Assistant,
        } if prefill => Slot::Prefill,
        InsertPosition::AuthorsNoteTop
        | InsertPosition::AuthorsNoteBottom
        | InsertPosition::Depth { .. }
        | InsertPosition::ReverseDepth { .. } => Slot::History,
    }
}

/// Splits expanded `mes_example` text on `<START>` (ASCII case-insensitive) into trimmed,
/// non-blank blocks.
///
/// ```
/// let blocks = ccv3_prompt::assemble::split_examples("<START>\nA: hi\n<start>\n\n<START>B: bye ");
/// assert_eq!(blocks, ["A: hi", "B: bye"]);
/// ```
pub fn split_examples(text: &str) -> Vec<&str> {
    const MARK: &[u8] = b"<start>";
    let bytes = text.as_bytes();
    let mut blocks = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + MARK.len() <= bytes.len() {
        if bytes[i] == b'<' && bytes[i..i + MARK.len()].eq_ignore_ascii_case(MARK) {
            blocks.push(&text[start..i]);
            i += MARK.len();
            start = i;
        } else {
            i += 1;
        }
    }
    blocks.push(&text[start..]);
    blocks
        .into_iter()
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .collect()
}

/// `text` without leading and trailing whitespace (no copy when there is none).
fn trimmed(text: String) -> String {
    let t = text.trim();
    if t.len() == text.len() {
        text
    } else {
        t.to_string()
    }
}

fn cmp_f64(a: f64, b: f64) -> Ordering {
    a.total_cmp(&b)
}

impl Unit {
    fn new(part: Part, cuttable: Cuttable) -> Self {
        Unit {
            part,
            cuttable,
            priority: 0.0,
            order: 0.0,
            seq: 0,
            place: None,
            rank: 1,
            position: None,
            kept: true,
            chat_index: None,
        }
    }

    fn label(&self) -> String {
        match self.chat_index {
            Some(i) => format!("message {i}"),
            None => self.part.label.clone(),
        }
    }
}

struct Builder<'a> {
    units: Vec<Unit>,
    cut: Vec<Cut>,
    expander: &'a mut dyn Expander,
    counter: &'a TokenCounter,
    char_name: &'a str,
    user_name: &'a str,
    expand_lore: bool,
    overhead: usize,
}

impl Builder<'_> {
    /// The entries of slots the template leaves out, cut as `NotInTemplate`.
    fn cut_outside_template(
        &mut self,
        lore: &[LoreInsert],
        by_slot: &BySlot,
        opts: &PromptOptions,
    ) {
        for slot in Slot::ALL {
            if !opts.template.contains(slot) {
                for i in by_slot.entries_for(slot) {
                    let tokens = self.counter.count(&lore[i].content);
                    self.cut.push(Cut {
                        kind: CutKind::Lore,
                        label: lore[i].label.clone(),
                        tokens,
                        reason: CutReason::NotInTemplate,
                    });
                }
            }
        }
    }

    /// The description slot: `before_desc` entries, the description, the other entries.
    fn description(&mut self, card: &CardData, lore: &[LoreInsert], entries: Vec<usize>) {
        let slot = Slot::Description;
        let (before, after): (Vec<usize>, Vec<usize>) = entries
            .into_iter()
            .partition(|i| lore[*i].position == InsertPosition::BeforeDesc);
        for i in before {
            self.lore(slot, lore, i);
        }
        let text = self.expand(&card.description, None, slot);
        self.fixed(slot, PartKind::Description, "description", text);
        for i in after {
            self.lore(slot, lore, i);
        }
    }

    /// The personality or scenario slot: the section in its format, then its entries.
    fn section(
        &mut self,
        slot: Slot,
        card: &CardData,
        lore: &[LoreInsert],
        entries: Vec<usize>,
        opts: &PromptOptions,
    ) {
        let (field, format, kind, name) = if slot == Slot::Personality {
            (
                &card.personality,
                &opts.personality_format,
                PartKind::Personality,
                "{{personality}}",
            )
        } else {
            (
                &card.scenario,
                &opts.scenario_format,
                PartKind::Scenario,
                "{{scenario}}",
            )
        };
        // Entries for an empty section were routed after the character (`lore_by_slot`).
        if !field.trim().is_empty() {
            let line = format.replace(name, field);
            let text = self.expand(&line, None, slot);
            self.fixed(slot, kind, slot.as_str(), text);
            for i in entries {
                self.lore(slot, lore, i);
            }
        }
    }

    /// The examples slot: `examples_top` entries, one part per example block, the others.
    fn examples(
        &mut self,
        card: &CardData,
        lore: &[LoreInsert],
        entries: Vec<usize>,
        opts: &PromptOptions,
    ) {
        let slot = Slot::Examples;
        let overhead = self.overhead;
        let (top, bottom): (Vec<usize>, Vec<usize>) = entries
            .into_iter()
            .partition(|i| lore[*i].position == InsertPosition::ExamplesTop);
        for i in top {
            self.lore(slot, lore, i);
        }
        let expanded = self.expand(&card.mes_example, None, slot);
        for (block, text) in split_examples(&expanded).into_iter().enumerate() {
            let content = if opts.example_header.is_empty() {
                text.to_string()
            } else {
                format!("{}\n{}", opts.example_header, text)
            };
            let tokens = self.counter.count(&content).saturating_add(overhead);
            self.units.push(Unit::new(
                Part {
                    slot,
                    kind: PartKind::Example { block },
                    role: Role::System,
                    name: None,
                    label: format!("example {block}"),
                    content,
                    tokens,
                },
                Cuttable::Example,
            ));
        }
        for i in bottom {
            self.lore(slot, lore, i);
        }
    }

    /// The history: the greeting (when the chat does not start with the assistant) and the
    /// chat's messages, oldest first.
    fn history(
        &mut self,
        chat: &[ChatMessage],
        greeting: Option<&str>,
        char_name: &str,
        opts: &PromptOptions,
    ) {
        let slot = Slot::History;
        let overhead = self.overhead;
        let starts_with_assistant = chat.first().is_some_and(|m| m.role == Role::Assistant);
        let mut index = 0usize;
        if opts.insert_greeting && !starts_with_assistant {
            if let Some(g) = greeting {
                let text = trimmed(self.expand(g, None, slot));
                if !text.is_empty() {
                    let tokens = self.counter.count(&text).saturating_add(overhead);
                    let mut u = Unit::new(
                        Part {
                            slot,
                            kind: PartKind::Greeting {
                                index: opts.greeting,
                            },
                            role: Role::Assistant,
                            name: Some(char_name.to_string()),
                            label: "greeting".into(),
                            content: text,
                            tokens,
                        },
                        Cuttable::History,
                    );
                    u.place = Some(Place::Message(index));
                    self.units.push(u);
                    index += 1;
                }
            }
        }
        for (i, m) in chat.iter().enumerate() {
            // Text, name and label are filled in only for kept or cut messages.
            let tokens = self.counter.count(&m.content).saturating_add(overhead);
            let mut u = Unit::new(
                Part {
                    slot,
                    kind: PartKind::Message { index: i },
                    role: m.role,
                    name: None,
                    label: String::new(),
                    content: String::new(),
                    tokens,
                },
                Cuttable::History,
            );
            u.chat_index = Some(i);
            u.place = Some(Place::Message(index));
            self.units.push(u);
            index += 1;
        }
    }

    /// The history's insertions: the author's note block (top entries, the note, bottom
    /// entries) at its depth, then the depth entries with their roles.
    fn history_lore(&mut self, lore: &[LoreInsert], entries: Vec<usize>, opts: &PromptOptions) {
        let slot = Slot::History;
        let an_depth = opts.authors_note_depth;
        for i in entries
            .iter()
            .copied()
            .filter(|i| lore[*i].position == InsertPosition::AuthorsNoteTop)
        {
            if let Some(u) = self.lore(slot, lore, i) {
                u.place = Some(Place::Depth(an_depth));
                u.rank = 0;
            }
        }
        if let Some(note) = opts.authors_note.as_deref() {
            let text = self.expand(note, None, slot);
            if let Some(u) = self.fixed(slot, PartKind::AuthorsNote, "authors_note", text) {
                u.place = Some(Place::Depth(an_depth));
                u.rank = 0;
            }
        }
        for i in entries
            .iter()
            .copied()
            .filter(|i| lore[*i].position == InsertPosition::AuthorsNoteBottom)
        {
            if let Some(u) = self.lore(slot, lore, i) {
                u.place = Some(Place::Depth(an_depth));
                u.rank = 0;
            }
        }
        for i in entries {
            let (place, role) = match lore[i].position {
                InsertPosition::Depth { depth, role } => (Place::Depth(depth), role),
                InsertPosition::ReverseDepth { depth, role } => (Place::Reverse(depth), role),
                _ => continue,
            };
            if let Some(u) = self.lore(slot, lore, i) {
                u.place = Some(place);
                u.part.role = role;
                u.rank = match role {
                    Role::System => 1,
                    Role::User => 2,
                    Role::Assistant => 3,
                };
            }
        }
    }

    fn expand(&mut self, text: &str, original: Option<&str>, slot: Slot) -> String {
        if text.is_empty() {
            return String::new();
        }
        let ctx = ExpandContext {
            char_name: self.char_name,
            user_name: self.user_name,
            original,
            slot,
        };
        self.expander.expand(text, &ctx)
    }

    /// The card's UI prompt with `{{original}}` = the application's, or the application's own.
    fn ui_prompt(&mut self, card_text: &str, app: Option<&str>, slot: Slot) -> String {
        let app = app.unwrap_or("");
        if card_text.trim().is_empty() {
            self.expand(app, None, slot)
        } else {
            self.expand(card_text, Some(app), slot)
        }
    }

    /// Adds a part that fitting never cuts; blank text adds nothing.
    fn fixed(
        &mut self,
        slot: Slot,
        kind: PartKind,
        label: &str,
        text: String,
    ) -> Option<&mut Unit> {
        let text = trimmed(text);
        if text.is_empty() {
            return None;
        }
        let tokens = self.counter.count(&text).saturating_add(self.overhead);
        self.units.push(Unit::new(
            Part {
                slot,
                kind,
                role: Role::System,
                name: None,
                label: label.to_string(),
                content: text,
                tokens,
            },
            Cuttable::Never,
        ));
        self.units.last_mut()
    }

    /// Adds lorebook entry `i`; blank content adds nothing.
    fn lore(&mut self, slot: Slot, lore: &[LoreInsert], i: usize) -> Option<&mut Unit> {
        let entry = lore.get(i)?;
        let content = if self.expand_lore {
            self.expand(&entry.content, None, slot)
        } else {
            entry.content.clone()
        };
        let content = trimmed(content);
        if content.is_empty() {
            return None;
        }
        let tokens = self.counter.count(&content).saturating_add(self.overhead);
        let role = match (&entry.position, slot) {
            (InsertPosition::Depth { role, .. }, Slot::Prefill) => *role,
            _ => Role::System,
        };
        let mut u = Unit::new(
            Part {
                slot,
                kind: PartKind::Lore { index: i },
                role,
                name: None,
                label: entry.label.clone(),
                content,
                tokens,
            },
            Cuttable::Lore {
                ignore_on_max: entry.ignore_on_max_context,
            },
        );
        u.priority = entry.effective_priority();
        u.order = entry.order;
        u.seq = i;
        u.position = Some(entry.position.clone());
        self.units.push(u);
        self.units.last_mut()
    }
}

/// Cuts units until the kept ones fit; returns the overflow of what cannot be cut.
fn fit(units: &mut [Unit], cut: &mut Vec<Cut>, opts: &PromptOptions) -> Option<usize> {
    let max = opts.max_context?;
    let mut total: usize = units
        .iter()
        .fold(0usize, |s, u| s.saturating_add(u.part.tokens));
    if total <= max {
        return None;
    }
    let mut order: Vec<usize> = Vec::new();
    // 1. history, oldest first, keeping the newest `keep_last_messages`.
    let history: Vec<usize> = units
        .iter()
        .enumerate()
        .filter(|(_, u)| u.cuttable == Cuttable::History)
        .map(|(i, _)| i)
        .collect();
    let cuttable_history = history.len().saturating_sub(opts.keep_last_messages);
    order.extend(history.iter().take(cuttable_history));
    // 2. and 3. lore, ignore_on_max_context first, then by priority.
    for ignore in [true, false] {
        let mut lore: Vec<usize> = units
            .iter()
            .enumerate()
            .filter(|(_, u)| {
                u.cuttable
                    == Cuttable::Lore {
                        ignore_on_max: ignore,
                    }
            })
            .map(|(i, _)| i)
            .collect();
        lore.sort_by(|a, b| {
            let (ua, ub) = (&units[*a], &units[*b]);
            cmp_f64(ua.priority, ub.priority)
                .then(cmp_f64(ua.order, ub.order))
                .then(ub.seq.cmp(&ua.seq))
        });
        order.extend(lore);
    }
    // 4. examples, last first.
    let mut examples: Vec<usize> = units
        .iter()
        .enumerate()
        .filter(|(_, u)| u.cuttable == Cuttable::Example)
        .map(|(i, _)| i)
        .collect();
    examples.reverse();
    order.extend(examples);

    for i in order {
        if total <= max {
            break;
        }
        let Some(u) = units.get_mut(i) else { continue };
        u.kept = false;
        total = total.saturating_sub(u.part.tokens);
        cut.push(Cut {
            kind: match u.cuttable {
                Cuttable::History => CutKind::History,
                Cuttable::Example => CutKind::Example,
                _ => CutKind::Lore,
            },
            label: u.label(),
            tokens: u.part.tokens,
            reason: CutReason::MaxContext,
        });
    }
    (total > max).then(|| total - max)
}

/// The indices of the kept units in prompt order.
fn layout(units: &[Unit], slots: &[Slot]) -> Vec<usize> {
    let mut out = Vec::with_capacity(units.len());
    for &slot in slots {
        if slot != Slot::History {
            out.extend(
                units
                    .iter()
                    .enumerate()
                    .filter(|(_, u)| u.kept && u.part.slot == slot)
                    .map(|(i, _)| i),
            );
            continue;
        }
        let messages: Vec<usize> = units
            .iter()
            .enumerate()
            .filter(|(_, u)| u.kept && matches!(u.place, Some(Place::Message(_))))
            .map(|(i, _)| i)
            .collect();
        let len = messages.len();
        // (point, rank, order, seq, unit index); point p = before kept message p.
        let mut inserts: Vec<(usize, u8, f64, usize, usize)> = units
            .iter()
            .enumerate()
            .filter(|(_, u)| u.kept && u.part.slot == Slot::History)
            .filter_map(|(i, u)| {
                let point = match u.place? {
                    Place::Message(_) => return None,
                    Place::Depth(d) => len.saturating_sub(usize::try_from(d).unwrap_or(usize::MAX)),
                    Place::Reverse(d) => usize::try_from(d).unwrap_or(usize::MAX).min(len),
                };
                Some((point, u.rank, u.order, u.seq, i))
            })
            .collect();
        // The author's note block keeps its build order (top, note, bottom).
        inserts.sort_by(|a, b| {
            a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(if a.1 == 0 {
                a.4.cmp(&b.4)
            } else {
                cmp_f64(a.2, b.2).then(a.3.cmp(&b.3))
            })
        });
        let mut next = inserts.iter().peekable();
        for p in 0..=len {
            while let Some(ins) = next.next_if(|ins| ins.0 == p) {
                out.push(ins.4);
            }
            if let Some(&m) = messages.get(p) {
                out.push(m);
            }
        }
    }
    out
}
