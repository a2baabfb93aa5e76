//! Lorebook activations as prompt assembly receives them.
//!
//! The lorebook engine decides *which* entries are active; this crate decides *where* their text
//! goes. Each active entry arrives as a [`LoreInsert`]: its content (decorators removed), an
//! [`InsertPosition`], its insertion order and priority, and the decorator facts that matter here
//! (`@@ignore_on_max_context`, `@@disable_ui_prompt`).

use crate::chat::Role;
use serde::{Deserialize, Serialize};

/// Where an active entry's content goes (SPEC_V3 `@@position`, `@@depth`, `@@role`, and the
/// SillyTavern World Info positions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum InsertPosition {
    /// Before the character definitions (V2 `position: before_char`), slot `lore_before_char`.
    BeforeChar,
    /// After the character definitions (V2 `position: after_char`, the default), slot
    /// `lore_after_char`.
    AfterChar,
    /// `@@position before_desc`: just before the description.
    BeforeDesc,
    /// `@@position after_desc`: just after the description.
    AfterDesc,
    /// `@@position personality`: in the personality section (dropped when there is none).
    Personality,
    /// `@@position scenario`: in the scenario section (dropped when there is none).
    Scenario,
    /// Before the example messages.
    ExamplesTop,
    /// After the example messages.
    ExamplesBottom,
    /// Before the author's note (at the author's note depth).
    AuthorsNoteTop,
    /// After the author's note (at the author's note depth).
    AuthorsNoteBottom,
    /// `@@depth N` with `@@role`: inside the chat history, `depth` messages from the newest
    /// (0 = after the newest message; more than the history = before the oldest). Depth 0 with
    /// role assistant is the prefill when prefill is on.
    Depth {
        /// Messages counted from the newest.
        depth: u32,
        /// The role of the inserted message.
        role: Role,
    },
    /// `@@reverse_depth N` with `@@role`: inside the chat history, before the message at index
    /// `depth` counted from the oldest (past the newest = after the newest).
    ReverseDepth {
        /// Messages counted from the oldest.
        depth: u32,
        /// The role of the inserted message.
        role: Role,
    },
}

impl InsertPosition {
    /// A short name for reports: `before_char`, `depth 4 system`, ...
    pub fn label(&self) -> String {
        match self {
            InsertPosition::BeforeChar => "before_char".into(),
            InsertPosition::AfterChar => "after_char".into(),
            InsertPosition::BeforeDesc => "before_desc".into(),
            InsertPosition::AfterDesc => "after_desc".into(),
            InsertPosition::Personality => "personality".into(),
            InsertPosition::Scenario => "scenario".into(),
            InsertPosition::ExamplesTop => "examples_top".into(),
            InsertPosition::ExamplesBottom => "examples_bottom".into(),
            InsertPosition::AuthorsNoteTop => "authors_note_top".into(),
            InsertPosition::AuthorsNoteBottom => "authors_note_bottom".into(),
            InsertPosition::Depth { depth, role } => format!("depth {depth} {role}"),
            InsertPosition::ReverseDepth { depth, role } => format!("reverse_depth {depth} {role}"),
        }
    }

    /// Reads a SPEC_V3 `@@position` value (`before_desc`, `after_desc`, `personality`,
    /// `scenario`) or a V2 entry `position` (`before_char`, `after_char`); `None` otherwise.
    pub fn from_position_value(value: &str) -> Option<InsertPosition> {
        Some(match value.trim() {
            "before_char" => InsertPosition::BeforeChar,
            "after_char" => InsertPosition::AfterChar,
            "before_desc" => InsertPosition::BeforeDesc,
            "after_desc" => InsertPosition::AfterDesc,
            "personality" => InsertPosition::Personality,
            "scenario" => InsertPosition::Scenario,
            _ => return None,
        })
    }
}

/// A UI prompt that `@@disable_ui_prompt` can switch off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UiPrompt {
    /// The system prompt (card `system_prompt` or the application's own).
    SystemPrompt,
    /// The post-history instructions (card `post_history_instructions` or the application's own).
    PostHistoryInstructions,
}

impl UiPrompt {
    /// Reads `system_prompt` or `post_history_instructions`; other values are not UI prompts this
    /// crate knows (the spec says to ignore them).
    pub fn parse(value: &str) -> Option<UiPrompt> {
        match value.trim() {
            "system_prompt" => Some(UiPrompt::SystemPrompt),
            "post_history_instructions" => Some(UiPrompt::PostHistoryInstructions),
            _ => None,
        }
    }
}

/// One active lorebook entry, ready to be placed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoreInsert {
    /// The text to insert (decorators removed; macros are expanded by the assembler unless
    /// [`PromptOptions::expand_lore`](crate::PromptOptions::expand_lore) is off).
    pub content: String,
    /// Where it goes.
    pub position: InsertPosition,
    /// `insertion_order`: lower goes earlier within its position.
    pub order: f64,
    /// `priority` (`@@priority`); when the context is full, lower priority is cut first.
    /// `None` means "same as `order`".
    pub priority: Option<f64>,
    /// `@@ignore_on_max_context`: cut before every other entry when the context is full.
    pub ignore_on_max_context: bool,
    /// `@@disable_ui_prompt` values of this entry.
    pub disable_ui_prompt: Vec<UiPrompt>,
    /// A label for reports: the entry's name or comment, with its book (`book/entry`).
    pub label: String,
    /// The entry wrote no position and went `after_char` by default
    /// (`ccv3_lore::Activation::position_default`, issue 14).
    pub position_default: bool,
}

impl LoreInsert {
    /// An insert with order 100, no priority and no decorator facts.
    pub fn new(
        label: impl Into<String>,
        content: impl Into<String>,
        position: InsertPosition,
    ) -> Self {
        LoreInsert {
            content: content.into(),
            position,
            order: 100.0,
            priority: None,
            ignore_on_max_context: false,
            disable_ui_prompt: Vec::new(),
            label: label.into(),
            position_default: false,
        }
    }

    /// Sets the insertion order.
    pub fn with_order(mut self, order: f64) -> Self {
        self.order = order;
        self
    }

    /// Sets the priority.
    pub fn with_priority(mut self, priority: f64) -> Self {
        self.priority = Some(priority);
        self
    }

    /// Marks the entry `@@ignore_on_max_context`.
    pub fn ignore_on_max_context(mut self) -> Self {
        self.ignore_on_max_context = true;
        self
    }

    /// Adds a `@@disable_ui_prompt` value.
    pub fn disabling(mut self, prompt: UiPrompt) -> Self {
        self.disable_ui_prompt.push(prompt);
        self
    }

    /// The priority used when cutting: `priority`, else `order`.
    pub fn effective_priority(&self) -> f64 {
        self.priority.unwrap_or(self.order)
    }
}
