//! What a scan returns and reports: activations, rejections with their reasons, sinks.

use crate::compile::EntryRef;
use crate::position::Position;
use crate::selective_logic::SelectiveLogic;
use crate::state::ScanState;
use ccv3::decorator::{DecoratorRole, Decorators};
use ccv3::Diagnostic;
use std::fmt;
use std::sync::Arc;

/// Why an entry was activated.
#[derive(Debug, Clone, PartialEq)]
pub enum ActivationReason {
    /// A key matched in a chat message (`message`: index in the chat, oldest = 0).
    Key {
        /// The key as resolved (macros expanded).
        key: Arc<str>,
        /// The newest message containing it.
        message: usize,
    },
    /// A key matched in the content of an activated entry.
    Recursion {
        /// The key.
        key: Arc<str>,
        /// The entry whose content matched.
        from: EntryRef,
    },
    /// A key matched in a text beside the chat that the entry's `match_*` flags add to its
    /// scan text (persona description, character description, ...).
    Source {
        /// The key.
        key: Arc<str>,
        /// The text.
        source: super::Source,
    },
    /// `constant: true`.
    Constant,
    /// A sticky effect from an earlier scan.
    Sticky,
    /// A decorator forced it (`activate`, `keep_activate_after_match`).
    Decorator(&'static str),
}

impl fmt::Display for ActivationReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ActivationReason::Key { key, message } => write!(f, "key {key:?} in message {message}"),
            ActivationReason::Recursion { key, from } => {
                write!(
                    f,
                    "key {key:?} in entry {}#{} (recursion)",
                    from.book, from.index
                )
            }
            ActivationReason::Source { key, source } => {
                write!(f, "key {key:?} in {}", source.as_str())
            }
            ActivationReason::Constant => f.write_str("constant"),
            ActivationReason::Sticky => f.write_str("sticky"),
            ActivationReason::Decorator(d) => write!(f, "decorator @@{d}"),
        }
    }
}

/// Why an entry was not activated (the rule that stopped it).
#[derive(Debug, Clone, PartialEq)]
pub enum RejectReason {
    /// `enabled: false`.
    Disabled,
    /// Its `triggers` do not include this generation type.
    Trigger,
    /// Its character filter excludes this character.
    CharacterFilter,
    /// No primary keys.
    NoKeys,
    /// No key matched.
    NoMatch,
    /// A key matched, but only outside the entry's scan depth.
    ScanDepth {
        /// The key.
        key: Arc<str>,
    },
    /// The secondary keys failed the selective logic.
    SecondaryLogic(SelectiveLogic),
    /// A `@@additional_keys` group had no match, or holds an invalid regex pattern.
    AdditionalKeys,
    /// A `@@exclude_keys` key matched.
    ExcludedKey {
        /// The key.
        key: Arc<str>,
    },
    /// A decorator stopped it.
    Decorator(&'static str),
    /// `delay`: the chat is too short.
    Delay,
    /// `cooldown` is active.
    Cooldown,
    /// `delay_until_recursion`: not in a recursion pass of its level.
    DelayUntilRecursion,
    /// `exclude_recursion`: cannot be activated by recursion.
    NonRecursable,
    /// Matched, but the content (without decorators) is empty.
    EmptyContent,
    /// The probability roll failed.
    Probability {
        /// The roll, in `[0, 100)`.
        roll: f64,
        /// The entry's probability.
        probability: f64,
    },
    /// Another entry won its inclusion group.
    Group {
        /// The group.
        group: String,
        /// The winner.
        winner: Option<EntryRef>,
    },
    /// A regex key ran out of its step budget (or the scan's) before it could say whether it
    /// matches, so it did not match, and no other key activated the entry (issue 12). Shown as
    /// `regex-budget`.
    RegexBudget {
        /// The first key that ran out.
        key: Arc<str>,
    },
    /// Cut by the token budget (or the maximum context).
    Budget {
        /// The entry's tokens (`None` when the budget had already ended and it was not counted).
        tokens: Option<usize>,
    },
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RejectReason::Disabled => f.write_str("disabled"),
            RejectReason::Trigger => f.write_str("trigger"),
            RejectReason::CharacterFilter => f.write_str("character filter"),
            RejectReason::NoKeys => f.write_str("no keys"),
            RejectReason::NoMatch => f.write_str("no key matched"),
            RejectReason::ScanDepth { key } => write!(f, "scan depth (key {key:?} is older)"),
            RejectReason::SecondaryLogic(l) => write!(f, "secondary logic {}", l.as_str()),
            RejectReason::AdditionalKeys => f.write_str("decorator @@additional_keys"),
            RejectReason::ExcludedKey { key } => write!(f, "decorator @@exclude_keys ({key:?})"),
            RejectReason::Decorator(d) => write!(f, "decorator @@{d}"),
            RejectReason::Delay => f.write_str("delay"),
            RejectReason::Cooldown => f.write_str("cooldown"),
            RejectReason::DelayUntilRecursion => f.write_str("delay until recursion"),
            RejectReason::NonRecursable => f.write_str("non-recursable"),
            RejectReason::EmptyContent => f.write_str("empty content"),
            RejectReason::Probability { roll, probability } => {
                write!(f, "probability roll {roll:.1} >= {probability}")
            }
            RejectReason::Group { group, winner } => match winner {
                Some(w) => write!(f, "group {group:?} (won by {}#{})", w.book, w.index),
                None => write!(f, "group {group:?}"),
            },
            RejectReason::RegexBudget { .. } => f.write_str("regex-budget"),
            RejectReason::Budget { tokens: Some(t) } => write!(f, "budget ({t} tokens)"),
            RejectReason::Budget { tokens: None } => f.write_str("budget"),
        }
    }
}

/// An activated entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Activation<'a> {
    /// Where the entry is.
    pub entry: EntryRef,
    /// The entry's `name`, else its `comment`.
    pub name: Option<&'a str>,
    /// The content without decorators.
    pub content: &'a str,
    /// Where it goes.
    pub position: Position,
    /// True when the entry wrote no position (no `position` field, no position decorator, no
    /// SillyTavern `position` number): it went `after_char` by default, as SillyTavern's card
    /// import places it (issue 14).
    pub position_default: bool,
    /// The depth for [`Position::AtDepth`].
    pub depth: Option<u64>,
    /// The role (at-depth entries, or `@@role`).
    pub role: Option<DecoratorRole>,
    /// The insertion order used (`@@order` or `insertion_order`).
    pub order: f64,
    /// Tokens of `content`.
    pub tokens: usize,
    /// Why.
    pub reason: ActivationReason,
    /// The pass that activated it (0: the first).
    pub pass: usize,
    /// The entry's decorators as the books were compiled with them (`None`: it has none), so
    /// that users of an activation need not parse its content again.
    pub decorators: Option<Arc<Decorators>>,
}

/// An entry that was not activated.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected<'a> {
    /// Where the entry is.
    pub entry: EntryRef,
    /// The entry's `name`, else its `comment`.
    pub name: Option<&'a str>,
    /// The rule that stopped it.
    pub reason: RejectReason,
}

impl<'a> Rejected<'a> {
    /// The rejection of compiled entry `e`, told to `sink` (a budget cut as cut, anything else as
    /// suppressed) and added to `into`.
    pub(crate) fn record(
        e: &crate::compile::CEntry<'a>,
        reason: RejectReason,
        sink: &mut dyn ExplainSink,
        into: &mut Vec<Rejected<'a>>,
    ) {
        let r = Rejected {
            entry: e.at,
            name: e.display_name(),
            reason,
        };
        if matches!(r.reason, RejectReason::Budget { .. }) {
            sink.on_cut(&r);
        } else {
            sink.on_suppressed(&r);
        }
        into.push(r);
    }
}

/// Receives explanations as the scan produces them (push style). All methods default to nothing.
pub trait ExplainSink {
    /// An entry was activated.
    fn on_activated(&mut self, _a: &Activation<'_>) {}
    /// An entry was stopped by a rule other than the budget.
    fn on_suppressed(&mut self, _r: &Rejected<'_>) {}
    /// An entry matched but the budget cut it.
    fn on_cut(&mut self, _r: &Rejected<'_>) {}
}

/// A sink that ignores everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoSink;
impl ExplainSink for NoSink {}

/// One explanation, owned (what [`VecSink`] collects).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    /// The entry.
    pub entry: EntryRef,
    /// `activated`, `suppressed` or `cut`.
    pub outcome: &'static str,
    /// The reason, as text.
    pub reason: String,
}

/// A sink collecting every explanation in a `Vec`.
#[derive(Debug, Default, Clone)]
pub struct VecSink {
    /// The explanations, in the order they came.
    pub events: Vec<Explanation>,
}

impl ExplainSink for VecSink {
    fn on_activated(&mut self, a: &Activation<'_>) {
        self.events.push(Explanation {
            entry: a.entry,
            outcome: "activated",
            reason: a.reason.to_string(),
        });
    }
    fn on_suppressed(&mut self, r: &Rejected<'_>) {
        self.events.push(Explanation {
            entry: r.entry,
            outcome: "suppressed",
            reason: r.reason.to_string(),
        });
    }
    fn on_cut(&mut self, r: &Rejected<'_>) {
        self.events.push(Explanation {
            entry: r.entry,
            outcome: "cut",
            reason: r.reason.to_string(),
        });
    }
}

/// What a scan returns.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanResult<'a> {
    /// Activated entries in prompt order (by position, then insertion order, lowest first).
    pub activated: Vec<Activation<'a>>,
    /// Entries that had a chance and were stopped (every entry with `explain_all`), in book order.
    pub rejected: Vec<Rejected<'a>>,
    /// Candidates left unchecked because the budget had ended before their turn (they cannot be
    /// activated; with `explain_all` they are checked and listed in `rejected` instead).
    pub unchecked: usize,
    /// Tokens of all activated contents.
    pub tokens: usize,
    /// The state for the next scan.
    pub state: ScanState,
    /// `@@disable_ui_prompt` values of activated entries.
    pub disabled_ui_prompts: Vec<String>,
    /// Problems met while scanning (a backtracking regex cut to its haystack cap, say).
    pub diagnostics: Vec<Diagnostic>,
}
