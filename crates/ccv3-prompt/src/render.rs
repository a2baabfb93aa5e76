//! Output: chat messages, the `ccv3 prompt --json` document, and readable text.
//!
//! # Messages
//!
//! [`Assembled::messages`] turns parts into OpenAI-style messages:
//! - a history message (the greeting or a chat message) is always a message of its own;
//! - any other part joins the previous message when that message has the same role and was not a
//!   history message, so the system prompt, definitions, lore and examples before the history
//!   become one system message, and depth entries of one role at one place become one message
//!   (SillyTavern's "squash system messages");
//! - joined parts are separated by a newline when both are lorebook entries of the same slot (as
//!   SillyTavern joins World Info), else by a blank line;
//! - the prefill (parts of the `prefill` slot, joined by a newline) is kept apart:
//!   [`Assembled::prefill`]; [`Assembled::chat_messages`] appends it as a final assistant message.
//!
//! # `--json`
//!
//! [`PromptReport`] ([`Assembled::report`]) serialises to
//!
//! ```json
//! {"messages": [{"role": "system", "content": "..."}, ...],
//!  "tokens": 1234,
//!  "lore": [{"label": "book/entry", "position": "depth 4 system", "slot": "history", "role": "system", "tokens": 12}],
//!  "cut": [{"kind": "history", "label": "message 0", "tokens": 40, "reason": "max_context"}]}
//! ```
//!
//! `messages` includes the prefill as the last assistant message; `tokens` is
//! [`Assembled::tokens`]; `lore` lists the entries in the prompt in prompt order; `cut` what was
//! left out in the order it was cut (`kind` is `history`, `lore` or `example`; `reason` is
//! `max_context` or `not_in_template`).

use crate::assemble::{Assembled, PartKind};
use crate::chat::Role;
use crate::template::Slot;
use serde::{Deserialize, Serialize};

/// One chat message sent to a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// The text.
    pub content: String,
    /// The speaker's name, for history messages that have one (not part of the `--json` output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Assembled {
    /// The prompt as chat messages, without the prefill (see the module docs).
    pub fn messages(&self) -> Vec<Message> {
        let mut out: Vec<Message> = Vec::new();
        // Whether the last message may take more parts, and the last part's (is_lore, slot).
        let mut open = false;
        let mut last: Option<(bool, Slot)> = None;
        for part in self.parts.iter().filter(|p| p.slot != Slot::Prefill) {
            let history = part.kind.is_history();
            let is_lore = matches!(part.kind, PartKind::Lore { .. });
            if !history && open {
                if let Some(m) = out.last_mut().filter(|m| m.role == part.role) {
                    let sep = match last {
                        Some((true, slot)) if is_lore && slot == part.slot => "\n",
                        _ => "\n\n",
                    };
                    m.content.push_str(sep);
                    m.content.push_str(&part.content);
                    last = Some((is_lore, part.slot));
                    continue;
                }
            }
            out.push(Message {
                role: part.role,
                content: part.content.clone(),
                name: if history { part.name.clone() } else { None },
            });
            open = !history;
            last = Some((is_lore, part.slot));
        }
        out
    }

    /// The prefill: the `prefill` slot's parts joined by a newline, if any.
    pub fn prefill(&self) -> Option<String> {
        let parts: Vec<&str> = self
            .parts
            .iter()
            .filter(|p| p.slot == Slot::Prefill)
            .map(|p| p.content.as_str())
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n"))
    }

    /// [`Assembled::messages`] with the prefill appended as a final assistant message.
    pub fn chat_messages(&self) -> Vec<Message> {
        let mut out = self.messages();
        if let Some(p) = self.prefill() {
            out.push(Message {
                role: Role::Assistant,
                content: p,
                name: None,
            });
        }
        out
    }
}

/// The `ccv3 prompt --json` document: it derives `serde::Serialize`, and its serialisation is
/// that document (see the module docs); the CLI and the bindings serialise this one type.
///
/// ```
/// let report = ccv3_prompt::Assembled::default().report();
/// assert_eq!(serde_json::to_string(&report)?, r#"{"messages":[],"tokens":0,"lore":[],"cut":[]}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptReport {
    /// The prompt as chat messages, the prefill as the last assistant message.
    pub messages: Vec<ReportMessage>,
    /// [`Assembled::tokens`].
    pub tokens: usize,
    /// The lorebook entries in the prompt, in prompt order.
    pub lore: Vec<ReportLore>,
    /// What was left out, in the order it was cut.
    pub cut: Vec<ReportCut>,
    /// [`Assembled::overflow`]: by how many tokens the prompt is still over the maximum
    /// context after every cut; absent (not serialised) when it fits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub over_limit: Option<usize>,
}

/// One message of a [`PromptReport`]: `{"role", "content"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportMessage {
    /// Who speaks.
    pub role: Role,
    /// The text.
    pub content: String,
}

/// One lorebook entry of a [`PromptReport`]: `{"label", "position", "slot", "role", "tokens"}`,
/// plus `"position_default": true` for an entry that wrote no position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportLore {
    /// The entry's label (`book/entry`).
    pub label: String,
    /// Its position (`depth 4 system`, `after_char`, ...).
    pub position: String,
    /// The slot it went into.
    pub slot: Slot,
    /// Its role.
    pub role: Role,
    /// Its token count.
    pub tokens: usize,
    /// `true` when the entry wrote no position and went `after_char` by default (issue 14);
    /// left out of the JSON when false.
    #[serde(skip_serializing_if = "is_false")]
    pub position_default: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One cut of a [`PromptReport`]: `{"kind", "label", "tokens", "reason"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportCut {
    /// `history`, `lore` or `example`.
    pub kind: &'static str,
    /// Its label.
    pub label: String,
    /// Its token count.
    pub tokens: usize,
    /// `max_context`, `not_in_template` or `budget`.
    pub reason: &'static str,
}

impl Assembled {
    /// The `ccv3 prompt --json` document of this prompt (see [`PromptReport`]).
    pub fn report(&self) -> PromptReport {
        PromptReport {
            messages: self
                .chat_messages()
                .into_iter()
                .map(|m| ReportMessage {
                    role: m.role,
                    content: m.content,
                })
                .collect(),
            tokens: self.tokens,
            lore: self
                .lore
                .iter()
                .map(|l| ReportLore {
                    label: l.label.clone(),
                    position: l.position.clone(),
                    slot: l.slot,
                    role: l.role,
                    tokens: l.tokens,
                    position_default: l.position_default,
                })
                .collect(),
            cut: self
                .cut
                .iter()
                .map(|c| ReportCut {
                    kind: c.kind.as_str(),
                    label: c.label.clone(),
                    tokens: c.tokens,
                    reason: c.reason.as_str(),
                })
                .collect(),
            over_limit: self.overflow,
        }
    }
}

/// The prompt as readable text: a `── slot ──` line before each slot, each part after it (history
/// messages and lorebook entries tagged with `[role name]` or `[lore label]`), then a summary line
/// and the cuts.
///
/// ```
/// let text = ccv3_prompt::to_text(&ccv3_prompt::Assembled::default());
/// assert_eq!(text, "── 0 tokens ──\n");
/// ```
pub fn to_text(assembled: &Assembled) -> String {
    let mut out = String::new();
    let mut slot: Option<Slot> = None;
    for part in &assembled.parts {
        if slot != Some(part.slot) {
            if slot.is_some() {
                out.push('\n');
            }
            out.push_str("── ");
            out.push_str(part.slot.as_str());
            out.push_str(" ──\n");
            slot = Some(part.slot);
        }
        match &part.kind {
            k if k.is_history() => {
                out.push('[');
                out.push_str(part.role.as_str());
                if let Some(n) = &part.name {
                    out.push(' ');
                    out.push_str(n);
                }
                out.push_str("] ");
            }
            PartKind::Lore { .. } => {
                out.push_str("[lore ");
                out.push_str(&part.label);
                if part.slot == Slot::History {
                    out.push_str(" · ");
                    out.push_str(part.role.as_str());
                }
                out.push_str("] ");
            }
            PartKind::AuthorsNote => out.push_str("[author's note] "),
            _ => {}
        }
        out.push_str(&part.content);
        out.push('\n');
    }
    if !assembled.parts.is_empty() {
        out.push('\n');
    }
    out.push_str(&format!("── {} tokens", assembled.tokens));
    if let Some(max) = assembled.max_context {
        out.push_str(&format!(" of {max}"));
    }
    out.push_str(" ──\n");
    if let Some(over) = assembled.overflow {
        out.push_str(&format!(
            "over the maximum context by {over} tokens: the parts that are never cut do not fit\n"
        ));
    }
    for c in &assembled.cut {
        out.push_str(&format!(
            "cut {} {} ({} tokens, {})\n",
            c.kind.as_str(),
            c.label,
            c.tokens,
            c.reason.as_str()
        ));
    }
    out
}
