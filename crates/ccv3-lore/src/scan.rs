//! The scan: which entries a chat activates, in which order, and why the others did not.
//!
//! # Scan order
//!
//! A scan is a pure function of (compiled books, chat, state, options, seed). It runs in passes,
//! as SillyTavern's World Info does:
//!
//! 1. **State.** Timed effects of the previous state are advanced to the chat length `L` (the
//!    number of messages): records that began at a length `>= L` are dropped (the chat did not
//!    advance: a swipe or regenerate); an expired sticky effect (`L > end`) of an entry with a
//!    cooldown starts a protected cooldown `end..end+cooldown`; expired cooldowns end.
//! 2. **Scan text.** The newest messages (as many as the deepest scan depth needs), newest first,
//!    each `name: text` when names are included, trimmed, joined as `\x01msg\n\x01msg...`
//!    (SillyTavern's buffer, so `\x01` anchors a regex to a message start). `{{// }}`,
//!    `{{comment:}}` and `{{hidden_key:}}` are removed. The text is lower-cased once; one pass of
//!    each Aho-Corasick automaton finds every plain key (and regex prefilter literal) and the
//!    newest message each occurs in; only entries with such a hit, constant or forced entries,
//!    sticky entries and regex keys without literals are looked at.
//! 3. **Activation pass.** Each candidate entry, in activation order, is checked in this order
//!    (the first rule that decides wins): `enabled: false` (never, in any case); `triggers`;
//!    `@@activate`; `@@dont_activate_after_match` / `@@keep_activate_after_match` (with match
//!    history); `@@dont_activate`; `@@is_greeting`; `@@activate_only_after`;
//!    `@@activate_only_every`; `@@is_user_icon`; `delay`; `cooldown` (unless sticky);
//!    `delay_until_recursion` (recursion passes at its level); `exclude_recursion` (recursion
//!    passes); `constant`; sticky; then keys: one primary key in the entry's scan window (or in
//!    recursion text when its book recurses), every `@@additional_keys` group (a group holding an
//!    invalid regex pattern never matches), no `@@exclude_keys` key, and the secondary keys by
//!    the selective logic. Matched entries with empty content are rejected (`empty content`).
//! 4. **After each pass:** inclusion groups (sticky members win; an earlier winner blocks the
//!    group; optional scoring; `group_override` takes the highest order; else a weighted roll),
//!    then the probability roll (sticky entries skip it), then the budget: new entries in budget
//!    order (sticky, constant, then by priority, highest first; `@@ignore_on_max_context` last
//!    when a maximum context is set) are counted with the tokenizer; the first entry that does
//!    not fit ends the budget: it and every later entry are cut (`ignore_budget` entries excepted).
//!    Entries outside inclusion groups are checked lazily, in budget order, inside this walk: once
//!    the budget has ended the remaining candidates cannot be activated and are not checked at
//!    all ([`ScanResult::unchecked`] counts them; with [`ScanOptions::explain_all`] they are
//!    checked and reported with their real reason, or `budget`). Group members are always
//!    checked before the walk, so group results never depend on the budget.
//! 5. **Next pass:** recursion (contents of new entries without `prevent_recursion`), when a book
//!    recurses and nothing overflowed; else min activations (one more message per pass, up to
//!    the max depth); else the next `delay_until_recursion` level; bounded by
//!    `max_recursion_steps`.
//! 6. **Result:** activations in prompt order, every rejection with its rule, the token count,
//!    and the next state (new sticky/cooldown effects, match history).

use crate::chat::{Chat, Role};
use crate::compile::{
    Automata, CEntry, CompiledBooks, DepthSpec, EntryRef, KeyKind, Position, SelectiveLogic,
};
use crate::hash::{FxMap, FxSet};
use crate::state::{self, MatchRecord, ScanState, TimedRecord};
use crate::text::{self, clean_scan_text, whole_word_at};
use ccv3::decorator::DecoratorRole;
use ccv3::Diagnostic;
use ccv3_tokens::Tokenizer;
use std::fmt;
use std::sync::Arc;

/// The most passes a scan runs, whatever the options say.
pub const MAX_PASSES: usize = 64;

/// Options of one scan.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Scan depth for books and entries that do not set one (SillyTavern's default: 2).
    pub scan_depth: u64,
    /// Recursion for books whose `recursive_scanning` is unset.
    pub recursive: bool,
    /// The most passes (0: no limit but [`MAX_PASSES`]). 1 disables recursion.
    pub max_recursion_steps: usize,
    /// Scan deeper until this many entries are active (0: off).
    pub min_activations: usize,
    /// The deepest min activations may scan (0: the whole chat).
    pub min_activations_depth_max: u64,
    /// Prefix each message with `name: ` in the scan text (SillyTavern's default: on).
    pub include_names: bool,
    /// Whole-word matching for entries that do not say (SillyTavern's default: on).
    pub match_whole_words: bool,
    /// Group scoring for entries that do not say.
    pub group_scoring: bool,
    /// A budget over all books (each book's `token_budget` applies too).
    pub token_budget: Option<usize>,
    /// The model's maximum context; with it `@@ignore_on_max_context` entries are cut first.
    pub max_context: Option<usize>,
    /// Tokens the rest of the prompt already takes (counted against `max_context`).
    pub context_tokens: usize,
    /// The active greeting (0 = `first_mes`); `None` ignores `@@is_greeting`.
    pub greeting: Option<usize>,
    /// The active user icon's name; `None` ignores `@@is_user_icon`.
    pub user_icon: Option<String>,
    /// The generation type (`normal`, `continue`, ...) for entries with `triggers`.
    pub trigger: Option<String>,
    /// The character's name, for messages without a name.
    pub char_name: String,
    /// The user's name, for messages without a name.
    pub user_name: String,
    /// The seed of every roll (probability, group weights).
    pub seed: u64,
    /// Explain every entry, not only those that had a chance (costs time proportional to the books).
    pub explain_all: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            scan_depth: 2,
            recursive: false,
            max_recursion_steps: 0,
            min_activations: 0,
            min_activations_depth_max: 0,
            include_names: true,
            match_whole_words: true,
            group_scoring: false,
            token_budget: None,
            max_context: None,
            context_tokens: 0,
            greeting: None,
            user_icon: None,
            trigger: None,
            char_name: String::new(),
            user_name: "User".into(),
            seed: 0,
            explain_all: false,
        }
    }
}

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

const NONE: u32 = u32::MAX;

/// Where a pattern was found, stored as value + 1 so that a zeroed array means "nowhere" (a
/// zeroed allocation costs nothing until touched): `[chat_any, chat_whole, rec_any, rec_whole]`
/// where chat values are the newest message (newest-first index) containing a match (whole-word
/// match for `chat_whole`), and rec values the first entry whose content contained one.
type PatHit = [u32; 4];

fn get(v: u32) -> u32 {
    v.wrapping_sub(1)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    Initial,
    Recursion,
    MinAct,
}

enum Found {
    Msg(u32),
    Rec(u32),
    Beyond,
    No,
}

/// Why an entry matched, without allocation (turned into an [`ActivationReason`] at the end).
#[derive(Clone, Copy)]
enum Hit {
    Key { ki: u32, msg: u32 },
    Rec { ki: u32, src: u32 },
    Constant,
    Sticky,
    Decorator(&'static str),
}

enum Verdict {
    Activate(Hit, u32),
    Reject(RejectReason),
}

/// Budget-cut entries are explained on two threads from this many.
const PARALLEL_EXPLAIN: usize = 2048;

#[cfg(test)]
thread_local! {
    /// Tests set this to explain on one thread, to compare with two.
    pub(crate) static EXPLAIN_ON_ONE_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// True when a test asked for explanations on one thread.
fn one_thread_for_tests() -> bool {
    #[cfg(test)]
    return EXPLAIN_ON_ONE_THREAD.with(|c| c.get());
    #[cfg(not(test))]
    false
}

const ST_NEW: u8 = 0;
const ST_ACTIVE: u8 = 1;
const ST_FAILED: u8 = 2;
const ST_UNCHECKED: u8 = 3;

struct Scan<'s, 'a> {
    cb: &'s CompiledBooks<'a>,
    opts: &'s ScanOptions,
    len: usize,
    assistant: u64,
    orig: String,
    lower: String,
    ends_o: Vec<usize>,
    ends_l: Vec<usize>,
    chat_idx: Vec<usize>,
    hits: Vec<PatHit>,
    cand_flag: Vec<bool>,
    cands: Vec<u32>,
    status: Vec<u8>,
    reasons: FxMap<u32, RejectReason>,
    /// What regex keys found, by window and in recursion text.
    memo: RegexMemo,
    rec_chunks: Vec<(u32, String)>,
    state: ScanState,
    prev_matched: FxSet<u64>,
    sticky_ids: FxSet<u64>,
    cooldown_ids: FxSet<u64>,
    last_pass: (Pass, Option<u64>, u64),
    /// Automata built for this scan's text alone (see [`crate::LorebookCompiler::single_scan`]).
    own_automata: Option<Automata>,
}

/// Where regex keys matched (each is run once per window and once per new recursion text),
/// and the one diagnostic their runs can give. Kept apart from the scan so that entries can be
/// checked on two threads, each with its own memo.
#[derive(Default)]
struct RegexMemo {
    chat: FxMap<(u32, u32), u32>,
    rec: FxMap<u32, (usize, u32)>,
    capped_warned: bool,
    diags: Vec<Diagnostic>,
}

struct NewAct {
    rank: u32,
    new_index: u32,
    hit: Hit,
    score: u32,
    sticky: bool,
    alive: bool,
}

impl<'a> CompiledBooks<'a> {
    /// Scans `chat` (oldest message first) with the previous `state`; see the module docs.
    ///
    /// Same inputs and seed, same output.
    pub fn scan(
        &self,
        chat: &Chat,
        state: &ScanState,
        opts: &ScanOptions,
        tokenizer: &dyn Tokenizer,
    ) -> ScanResult<'a> {
        self.scan_with(chat, state, opts, tokenizer, &mut NoSink)
    }

    /// Like [`CompiledBooks::scan`], and pushes every explanation into `sink`.
    pub fn scan_with(
        &self,
        chat: &Chat,
        state: &ScanState,
        opts: &ScanOptions,
        tokenizer: &dyn Tokenizer,
        sink: &mut dyn ExplainSink,
    ) -> ScanResult<'a> {
        let n = self.entries.len();
        let len = chat.messages.len();
        let mut s = Scan {
            cb: self,
            opts,
            len,
            assistant: chat.assistant_count() as u64,
            orig: String::new(),
            lower: String::new(),
            ends_o: Vec::new(),
            ends_l: Vec::new(),
            chat_idx: Vec::new(),
            hits: vec![[0u32; 4]; self.fan_off.len()],
            cand_flag: vec![false; n],
            cands: Vec::new(),
            status: vec![ST_NEW; n],
            reasons: FxMap::default(),
            memo: RegexMemo::default(),
            rec_chunks: Vec::new(),
            state: ScanState::default(),
            prev_matched: FxSet::default(),
            sticky_ids: FxSet::default(),
            cooldown_ids: FxSet::default(),
            last_pass: (Pass::Initial, None, 0),
            own_automata: None,
        };
        s.advance_state(state);
        s.build_buffer(chat);
        s.run(tokenizer, sink)
    }
}

impl<'s, 'a> Scan<'s, 'a> {
    fn advance_state(&mut self, prev: &ScanState) {
        let l = self.len as u64;
        for (k, r) in &prev.matched {
            if r.first < l && self.id_of(k).is_some() {
                self.state.matched.insert(k.clone(), r.clone());
                if let Some(id) = self.id_of(k) {
                    self.prev_matched.insert(id);
                }
            }
        }
        for (k, r) in &prev.sticky {
            let Some(rank) = self
                .id_of(k)
                .and_then(|id| self.cb.by_id().get(&id).copied())
            else {
                continue;
            };
            if r.start >= l && !r.protected {
                continue;
            }
            if l > r.end {
                let cd = self.cb.entries[rank as usize].rare().cooldown;
                if cd > 0 {
                    self.state.cooldown.insert(
                        k.clone(),
                        TimedRecord {
                            start: r.end,
                            end: r.end.saturating_add(cd),
                            protected: true,
                            entry: r.entry.clone(),
                        },
                    );
                }
                continue;
            }
            self.state.sticky.insert(k.clone(), r.clone());
        }
        for (k, r) in &prev.cooldown {
            if self
                .id_of(k)
                .and_then(|id| self.cb.by_id().get(&id))
                .is_none()
            {
                continue;
            }
            if (r.start >= l && !r.protected) || l > r.end || self.state.cooldown.contains_key(k) {
                continue;
            }
            self.state.cooldown.insert(k.clone(), r.clone());
        }
        self.sticky_ids = self
            .state
            .sticky
            .keys()
            .filter_map(|k| self.id_of(k))
            .collect();
        self.cooldown_ids = self
            .state
            .cooldown
            .keys()
            .filter_map(|k| self.id_of(k))
            .collect();
    }

    fn id_of(&self, k: &str) -> Option<u64> {
        u64::from_str_radix(k, 16)
            .ok()
            .filter(|id| self.cb.by_id().contains_key(id))
    }

    fn buffer_depth(&self) -> usize {
        let mut need = self.cb.max_depth.max(self.opts.scan_depth);
        if self.opts.min_activations > 0 {
            need = if self.opts.min_activations_depth_max > 0 {
                need.max(self.opts.min_activations_depth_max)
            } else {
                self.len as u64
            };
        }
        need.min(self.len as u64) as usize
    }

    fn build_buffer(&mut self, chat: &Chat) {
        let depth = self.buffer_depth();
        for k in 0..depth {
            let ci = self.len - 1 - k;
            let m = &chat.messages[ci];
            if k > 0 {
                self.orig.push('\n');
                self.lower.push('\n');
            }
            self.orig.push('\x01');
            self.lower.push('\x01');
            let raw = m.content.as_str();
            let cleaned = clean_scan_text(raw, false);
            let content = cleaned.as_deref().unwrap_or(raw);
            let start_o = self.orig.len();
            if self.opts.include_names {
                let name = match (&m.name, m.role) {
                    (Some(n), _) => n.as_str(),
                    (None, Role::User) => self.opts.user_name.as_str(),
                    (None, Role::Assistant) => self.opts.char_name.as_str(),
                    (None, Role::System) => "",
                };
                if !name.is_empty() {
                    self.orig.push_str(name);
                    self.orig.push_str(": ");
                }
            }
            self.orig.push_str(content);
            let trimmed_len = self.orig[start_o..].trim_end().len();
            self.orig.truncate(start_o + trimmed_len);
            let lead = self.orig[start_o..].len() - self.orig[start_o..].trim_start().len();
            if lead > 0 {
                self.orig.replace_range(start_o..start_o + lead, "");
            }
            let piece = &self.orig[start_o..];
            self.lower.push_str(&piece.to_lowercase());
            self.ends_o.push(self.orig.len());
            self.ends_l.push(self.lower.len());
            self.chat_idx.push(ci);
        }
        self.search_chat();
    }

    fn msg_of(ends: &[usize], pos: usize) -> u32 {
        ends.partition_point(|&e| e < pos) as u32
    }

    fn record(&mut self, p: u32, chat_k: Option<u32>, rec: Option<u32>, whole: bool) {
        let Some(h) = self.hits.get_mut(p as usize) else {
            return;
        };
        let fresh = *h == [0; 4];
        if let Some(k) = chat_k {
            h[0] = h[0].wrapping_sub(1).min(k).wrapping_add(1);
            if whole {
                h[1] = h[1].wrapping_sub(1).min(k).wrapping_add(1);
            }
        }
        if let Some(src) = rec {
            if h[2] == 0 {
                h[2] = src + 1;
            }
            if whole && h[3] == 0 {
                h[3] = src + 1;
            }
        }
        if fresh {
            let cb = self.cb;
            let lo = cb.fan_off[p as usize] as usize;
            let hi = cb.fan_off[p as usize + 1] as usize;
            for &r in &cb.fan[lo..hi] {
                if !self.cand_flag[r as usize] {
                    self.cand_flag[r as usize] = true;
                    self.cands.push(r);
                }
            }
        }
    }

    fn search_text(
        &mut self,
        lower: &str,
        orig: &str,
        ends: Option<(&[usize], &[usize])>,
        rec: Option<u32>,
    ) {
        let cb = self.cb;
        let aut = match &self.own_automata {
            Some(a) => a,
            None => cb.automata(),
        };
        let id = |ids: &[u32], p: u32| ids.get(p as usize).copied().unwrap_or(p);
        let mut found: Vec<(u32, Option<u32>, bool)> = Vec::new();
        if let Some(ac) = &aut.ci {
            for m in ac.find_overlapping_iter(lower) {
                let k = ends.map(|(_, el)| Self::msg_of(el, m.end()));
                found.push((
                    id(&aut.ci_ids, m.pattern().as_u32()),
                    k,
                    whole_word_at(lower, m.start(), m.end()),
                ));
            }
        }
        if let Some(ac) = &aut.cs {
            for m in ac.find_overlapping_iter(orig) {
                let k = ends.map(|(eo, _)| Self::msg_of(eo, m.end()));
                found.push((
                    cb.n_ci + id(&aut.cs_ids, m.pattern().as_u32()),
                    k,
                    whole_word_at(orig, m.start(), m.end()),
                ));
            }
        }
        for (p, k, whole) in found {
            self.record(p, k, rec, whole);
        }
    }

    fn search_chat(&mut self) {
        let lower = std::mem::take(&mut self.lower);
        let orig = std::mem::take(&mut self.orig);
        // Compiled for a single scan: when no entry content can be scanned (no recursion), the
        // chat is all this scan searches, and only the keys that can occur in it are needed.
        let recursion = self.any_book_recursive() || !self.cb.levels.is_empty();
        if self.cb.single_scan && !recursion && self.cb.automata.get().is_none() {
            self.own_automata = Some(Automata::build(&self.cb.patterns, Some((&lower, &orig))));
        }
        let eo = std::mem::take(&mut self.ends_o);
        let el = std::mem::take(&mut self.ends_l);
        self.search_text(&lower, &orig, Some((&eo, &el)), None);
        self.lower = lower;
        self.orig = orig;
        self.ends_o = eo;
        self.ends_l = el;
        for &r in &self.cb.always {
            if !self.cand_flag[r as usize] {
                self.cand_flag[r as usize] = true;
                self.cands.push(r);
            }
        }
        let sticky: Vec<u32> = self
            .state
            .sticky
            .keys()
            .filter_map(|k| u64::from_str_radix(k, 16).ok())
            .filter_map(|id| self.cb.by_id().get(&id).copied())
            .collect();
        for r in sticky {
            if !self.cand_flag[r as usize] {
                self.cand_flag[r as usize] = true;
                self.cands.push(r);
            }
        }
    }

    fn add_recursion(&mut self, src: u32) {
        let body = self.cb.entries[src as usize].body;
        let text = clean_scan_text(body, true).unwrap_or_else(|| body.to_string());
        let lower = text.to_lowercase();
        self.search_text(&lower, &text, None, Some(src));
        self.rec_chunks.push((src, text));
    }

    fn window(&self, e: &CEntry<'_>, skew: u64) -> u32 {
        let d = match e.scan_depth {
            Some(d) => d,
            None => self.cb.books[e.at.book]
                .scan_depth
                .unwrap_or(self.opts.scan_depth)
                .saturating_add(skew),
        };
        d.min(self.ends_o.len() as u64) as u32
    }

    fn regex_window(&self, m: &mut RegexMemo, rx: u32, depth: u32) -> u32 {
        if depth == 0 {
            return NONE;
        }
        if let Some(&k) = m.chat.get(&(rx, depth)) {
            return k;
        }
        let r = &self.cb.regexes[rx as usize];
        let pre_ok = r.lits.is_empty()
            || r.lits
                .iter()
                .any(|&l| self.hits.get(l as usize).is_some_and(|h| get(h[0]) < depth));
        let mut k = NONE;
        if pre_ok {
            if let Ok(engine) = &r.engine {
                let end = self.ends_o[depth as usize - 1];
                let hay = &self.orig[..end];
                if engine.is_backtracking()
                    && hay.len() > crate::jsregex::BACKTRACK_HAYSTACK_CAP
                    && !m.capped_warned
                {
                    m.capped_warned = true;
                    m.diags.push(Diagnostic::warning(
                        "lore-regex-capped",
                        "",
                        format!(
                            "a backtracking regex key ran on the newest {} bytes of the scan text only",
                            crate::jsregex::BACKTRACK_HAYSTACK_CAP
                        ),
                    ));
                }
                if let Some(pos) = engine.find(hay) {
                    k = Self::msg_of(&self.ends_o, pos + 1).min(depth - 1);
                }
            }
        }
        m.chat.insert((rx, depth), k);
        k
    }

    fn regex_recursion(&self, m: &mut RegexMemo, rx: u32) -> u32 {
        let (mut checked, mut hit) = m.rec.get(&rx).copied().unwrap_or((0, NONE));
        if hit == NONE && checked < self.rec_chunks.len() {
            let r = &self.cb.regexes[rx as usize];
            let pre_ok = r.lits.is_empty()
                || r.lits
                    .iter()
                    .any(|&l| self.hits.get(l as usize).is_some_and(|h| h[2] != 0));
            if pre_ok {
                if let Ok(engine) = &r.engine {
                    for (src, text) in &self.rec_chunks[checked..] {
                        if engine.find(text).is_some() {
                            hit = *src;
                            break;
                        }
                    }
                }
            }
            checked = self.rec_chunks.len();
            m.rec.insert(rx, (checked, hit));
        }
        hit
    }

    fn find_key(
        &self,
        m: &mut RegexMemo,
        key: KeyKind,
        whole: bool,
        depth: u32,
        rec_ok: bool,
    ) -> Found {
        match key {
            KeyKind::Plain { pat, multiword } => {
                let Some(h) = self.hits.get(pat as usize) else {
                    return Found::No;
                };
                let w = whole && !multiword;
                let k = get(if w { h[1] } else { h[0] });
                if k < depth {
                    return Found::Msg(k);
                }
                let r = get(if w { h[3] } else { h[2] });
                if rec_ok && r != NONE {
                    return Found::Rec(r);
                }
                if k != NONE {
                    Found::Beyond
                } else {
                    Found::No
                }
            }
            KeyKind::Regex(rx) => {
                let k = self.regex_window(m, rx, depth);
                if k != NONE {
                    return Found::Msg(k);
                }
                if rec_ok && !self.rec_chunks.is_empty() {
                    let r = self.regex_recursion(m, rx);
                    if r != NONE {
                        return Found::Rec(r);
                    }
                }
                Found::No
            }
            KeyKind::Invalid => Found::No,
        }
    }

    fn any_found(
        &self,
        m: &mut RegexMemo,
        keys: &[KeyKind],
        whole: bool,
        depth: u32,
        rec_ok: bool,
    ) -> Option<usize> {
        (0..keys.len()).find(|&i| {
            matches!(
                self.find_key(m, keys[i], whole, depth, rec_ok),
                Found::Msg(_) | Found::Rec(_)
            )
        })
    }

    /// True when some book's entries are scanned for keys once activated.
    fn any_book_recursive(&self) -> bool {
        (0..self.cb.books.len()).any(|b| self.book_recursive(b))
    }

    fn book_recursive(&self, book: usize) -> bool {
        self.cb.books[book].recursive.unwrap_or(self.opts.recursive)
    }

    fn evaluate(
        &self,
        m: &mut RegexMemo,
        rank: u32,
        pass: Pass,
        level: Option<u64>,
        skew: u64,
    ) -> Verdict {
        use RejectReason as R;
        let cb = self.cb;
        let e = &cb.entries[rank as usize];
        if !e.enabled {
            return Verdict::Reject(R::Disabled);
        }
        if !e.rare().triggers.is_empty() {
            if let Some(t) = &self.opts.trigger {
                if !e.rare().triggers.iter().any(|x| x == t) {
                    return Verdict::Reject(R::Trigger);
                }
            }
        }
        let d = &e.dec;
        let body_empty = e.body_empty;
        let activate = |reason: Hit, score: u32| {
            if body_empty {
                Verdict::Reject(R::EmptyContent)
            } else {
                Verdict::Activate(reason, score)
            }
        };
        if d.activate {
            return activate(Hit::Decorator("activate"), 0);
        }
        let before = !self.prev_matched.is_empty() && self.prev_matched.contains(&self.cb.id(e));
        if d.dont_activate_after_match && before {
            return Verdict::Reject(R::Decorator("dont_activate_after_match"));
        }
        if d.keep_activate_after_match && before {
            return activate(Hit::Decorator("keep_activate_after_match"), 0);
        }
        if d.dont_activate {
            return Verdict::Reject(R::Decorator("dont_activate"));
        }
        if let (Some(g), Some(a)) = (d.is_greeting, self.opts.greeting) {
            if g != a as u64 {
                return Verdict::Reject(R::Decorator("is_greeting"));
            }
        }
        if let Some(n) = d.activate_only_after {
            if self.assistant < n {
                return Verdict::Reject(R::Decorator("activate_only_after"));
            }
        }
        if let Some(n) = d.activate_only_every {
            if n > 0 && !self.assistant.is_multiple_of(n) {
                return Verdict::Reject(R::Decorator("activate_only_every"));
            }
        }
        if let (Some(i), Some(u)) = (&d.is_user_icon, &self.opts.user_icon) {
            if i != u {
                return Verdict::Reject(R::Decorator("is_user_icon"));
            }
        }
        if (self.len as u64) < e.rare().delay {
            return Verdict::Reject(R::Delay);
        }
        let sticky = !self.sticky_ids.is_empty() && self.sticky_ids.contains(&self.cb.id(e));
        if !sticky && !self.cooldown_ids.is_empty() && self.cooldown_ids.contains(&self.cb.id(e)) {
            return Verdict::Reject(R::Cooldown);
        }
        if let Some(lv) = e.rare().delay_until_recursion {
            let eligible = pass == Pass::Recursion && level.is_some_and(|c| lv <= c);
            if !(sticky || eligible) {
                return Verdict::Reject(R::DelayUntilRecursion);
            }
        }
        if pass == Pass::Recursion && e.exclude_recursion && !sticky {
            return Verdict::Reject(R::NonRecursable);
        }
        if e.constant {
            return activate(Hit::Constant, 0);
        }
        if sticky {
            return activate(Hit::Sticky, 0);
        }
        if e.primary.is_empty() {
            return Verdict::Reject(R::NoKeys);
        }
        let primary = cb.keys_of(e.primary);
        let whole = e.whole_words.unwrap_or(self.opts.match_whole_words);
        let depth = self.window(e, skew);
        let rec_ok = pass == Pass::Recursion && self.book_recursive(e.at.book);
        let scoring = !e.rare().groups.is_empty()
            && e.rare().group_scoring.unwrap_or(self.opts.group_scoring);
        let mut first: Option<(usize, Found)> = None;
        let mut beyond = None;
        let mut score = 0u32;
        for (i, key) in primary.iter().enumerate() {
            match self.find_key(m, *key, whole, depth, rec_ok) {
                f @ (Found::Msg(_) | Found::Rec(_)) => {
                    score += 1;
                    if first.is_none() {
                        first = Some((i, f));
                    }
                    if !scoring {
                        break;
                    }
                }
                Found::Beyond => {
                    beyond.get_or_insert(i);
                }
                Found::No => {}
            }
        }
        let Some((ki, found)) = first else {
            return Verdict::Reject(match beyond {
                Some(i) => R::ScanDepth {
                    key: cb.key_arc(e.primary, i),
                },
                None => R::NoMatch,
            });
        };
        // SPEC_V3 `@@additional_keys`: a value with an invalid regex pattern makes the entry not
        // a match, whatever its other patterns find.
        for &g in &e.rare().additional {
            let group = cb.keys_of(g);
            if group.iter().any(|k| matches!(k, KeyKind::Invalid))
                || self.any_found(m, group, whole, depth, rec_ok).is_none()
            {
                return Verdict::Reject(R::AdditionalKeys);
            }
        }
        let exclude = cb.keys_of(e.exclude);
        if let Some(i) = self.any_found(m, exclude, whole, depth, rec_ok) {
            return Verdict::Reject(R::ExcludedKey {
                key: cb.key_arc(e.exclude, i),
            });
        }
        if e.selective && !e.secondary.is_empty() {
            let secondary = cb.keys_of(e.secondary);
            let total = secondary.len();
            let mut hit = 0usize;
            for key in secondary {
                if matches!(
                    self.find_key(m, *key, whole, depth, rec_ok),
                    Found::Msg(_) | Found::Rec(_)
                ) {
                    hit += 1;
                }
            }
            let ok = match e.logic {
                SelectiveLogic::AndAny => hit > 0,
                SelectiveLogic::NotAll => hit < total,
                SelectiveLogic::NotAny => hit == 0,
                SelectiveLogic::AndAll => hit == total,
            };
            if !ok {
                return Verdict::Reject(R::SecondaryLogic(e.logic));
            }
            match e.logic {
                SelectiveLogic::AndAny => score += hit as u32,
                SelectiveLogic::AndAll => score += total as u32,
                _ => {}
            }
        }
        let ki = ki as u32;
        let reason = match found {
            Found::Msg(msg) => Hit::Key { ki, msg },
            Found::Rec(src) => Hit::Rec { ki, src },
            Found::Beyond | Found::No => return Verdict::Reject(R::NoMatch),
        };
        activate(reason, score)
    }

    /// Finds why each entry the budget cut without checking it would not have been activated
    /// (`explain_all`), as the last pass would have checked it. Many such entries are checked on
    /// two threads, each half with its own [`RegexMemo`]; the results are the same.
    fn explain_unchecked(&mut self, ranks: &[u32]) {
        let todo: Vec<u32> = ranks
            .iter()
            .copied()
            .filter(|&r| self.status[r as usize] == ST_UNCHECKED)
            .collect();
        let (pass, level, skew) = self.last_pass;
        let why = |v: Verdict| match v {
            Verdict::Activate(..) => RejectReason::Budget { tokens: None },
            Verdict::Reject(r) => r,
        };
        let mut mine = std::mem::take(&mut self.memo);
        let half = if todo.len() >= PARALLEL_EXPLAIN && !one_thread_for_tests() {
            todo.len() / 2
        } else {
            todo.len()
        };
        let (head, tail) = todo.split_at(half);
        let this = &*self;
        let check = |ranks: &[u32], m: &mut RegexMemo| -> Vec<RejectReason> {
            ranks
                .iter()
                .map(|&r| why(this.evaluate(m, r, pass, level, skew)))
                .collect()
        };
        let (first, (second, theirs)) = std::thread::scope(|scope| {
            let worker = if tail.is_empty() {
                None
            } else {
                std::thread::Builder::new()
                    .name("ccv3-lore-explain".into())
                    .spawn_scoped(scope, || {
                        let mut theirs = RegexMemo::default();
                        (check(tail, &mut theirs), theirs)
                    })
                    .ok()
            };
            let first = check(head, &mut mine);
            let second = match worker.map(|w| w.join()) {
                Some(Ok(done)) => done,
                Some(Err(e)) => std::panic::resume_unwind(e),
                // No second thread: this one checks the rest too.
                None => (check(tail, &mut mine), RegexMemo::default()),
            };
            (first, second)
        });
        // The capped-regex warning is given once per scan, by whichever half met it first.
        if !mine.capped_warned && theirs.capped_warned {
            mine.capped_warned = true;
            mine.diags.extend(theirs.diags);
        }
        self.memo = mine;
        for (&rank, r) in todo.iter().zip(first.into_iter().chain(second)) {
            self.reasons.insert(rank, r);
        }
    }

    /// Checks one entry; a match becomes a [`NewAct`], a rejection is recorded.
    fn check(&mut self, rank: u32, pass: Pass, level: Option<u64>, skew: u64) -> Option<NewAct> {
        let mut m = std::mem::take(&mut self.memo);
        let verdict = self.evaluate(&mut m, rank, pass, level, skew);
        self.memo = m;
        match verdict {
            Verdict::Activate(hit, score) => {
                let sticky = !self.sticky_ids.is_empty()
                    && self
                        .sticky_ids
                        .contains(&self.cb.id(&self.cb.entries[rank as usize]));
                Some(NewAct {
                    rank,
                    new_index: 0,
                    hit,
                    score,
                    sticky,
                    alive: true,
                })
            }
            Verdict::Reject(r) => {
                if !(r == RejectReason::NonRecursable && self.reasons.contains_key(&rank)) {
                    self.reasons.insert(rank, r);
                }
                None
            }
        }
    }

    /// The probability roll; a failure is final for this scan.
    fn roll_passes(&mut self, rank: u32) -> bool {
        let e = &self.cb.entries[rank as usize];
        match e.probability {
            Some(p) if p < 100.0 => {
                let r = text::roll(self.opts.seed, self.cb.id(e), self.len, 1);
                if r >= p {
                    self.status[rank as usize] = ST_FAILED;
                    self.reasons.insert(
                        rank,
                        RejectReason::Probability {
                            roll: r,
                            probability: p,
                        },
                    );
                    false
                } else {
                    true
                }
            }
            _ => true,
        }
    }

    fn run(mut self, tok: &dyn Tokenizer, sink: &mut dyn ExplainSink) -> ScanResult<'a> {
        let cb = self.cb;
        let opts = self.opts;
        let any_recursive = self.any_book_recursive();
        let mut pass = Pass::Initial;
        let mut skew = 0u64;
        let mut level_idx = 0usize;
        let mut level_tried = false;
        let mut passes = 0usize;
        let mut overflow = false;
        let mut used_total = 0usize;
        let mut used_book = vec![0usize; cb.books.len()];
        let mut book_over = vec![false; cb.books.len()];
        let mut global_budget = opts.token_budget;
        if let Some(m) = opts.max_context {
            let room = m.saturating_sub(opts.context_tokens);
            global_budget = Some(global_budget.map_or(room, |b| b.min(room)));
        }
        let mut activated: Vec<(u32, Hit, usize, usize)> =
            Vec::with_capacity(self.cands.len().min(1 << 16));
        let mut active_groups: FxMap<&str, u32> = FxMap::default();
        loop {
            let level = cb.levels.get(level_idx).copied();
            let late = opts.max_context.is_some();
            // Entries in inclusion groups are checked first (a group is resolved among all its
            // matched members); every other candidate is checked lazily in budget order, so once
            // the budget has ended the rest need no check at all.
            let mut grouped: Vec<u32> = Vec::new();
            let mut pending: Vec<u32> = Vec::new();
            for &rank in &self.cands {
                if self.status[rank as usize] != ST_NEW {
                    continue;
                }
                if cb.meta[rank as usize].flags & crate::compile::META_GROUP != 0 {
                    grouped.push(rank);
                } else {
                    pending.push(rank);
                }
            }
            grouped.sort_unstable();
            let mut new: Vec<NewAct> = Vec::new();
            for rank in grouped {
                if let Some(a) = self.check(rank, pass, level, skew) {
                    new.push(NewAct {
                        new_index: new.len() as u32,
                        ..a
                    });
                }
            }
            self.resolve_groups(&mut new, &active_groups);
            for a in new.iter_mut() {
                if a.alive && !a.sticky && !self.roll_passes(a.rank) {
                    a.alive = false;
                }
            }
            // Budget order: sticky first, then the order computed at compile time.
            let order_of = |rank: u32, sticky: bool| -> u64 {
                let m = &cb.meta[rank as usize];
                (u64::from(!sticky) << 40)
                    | u64::from(if late {
                        m.budget_pos_late
                    } else {
                        m.budget_pos
                    })
            };
            let mut items: Vec<(u64, u32, u32)> = Vec::with_capacity(new.len() + pending.len());
            for a in new.iter().filter(|a| a.alive) {
                items.push((order_of(a.rank, a.sticky), a.rank, a.new_index));
            }
            for &rank in &pending {
                let sticky = !self.sticky_ids.is_empty()
                    && self.sticky_ids.contains(&cb.id(&cb.entries[rank as usize]));
                items.push((order_of(rank, sticky), rank, u32::MAX));
            }
            items.sort_unstable();
            let mut succeeded: Vec<u32> = Vec::new();
            for (_, rank, ni) in items {
                let m = &cb.meta[rank as usize];
                let ignore_budget = m.flags & crate::compile::META_IGNORE_BUDGET != 0;
                let b = m.book as usize;
                if !ignore_budget && (overflow || book_over[b]) {
                    // The budget already ended: cut without checking or counting.
                    if ni == u32::MAX {
                        self.status[rank as usize] = ST_UNCHECKED;
                    } else {
                        self.status[rank as usize] = ST_FAILED;
                        self.reasons
                            .insert(rank, RejectReason::Budget { tokens: None });
                    }
                    continue;
                }
                let hit = if ni == u32::MAX {
                    let Some(a) = self.check(rank, pass, level, skew) else {
                        continue;
                    };
                    if !a.sticky && !self.roll_passes(rank) {
                        continue;
                    }
                    a.hit
                } else {
                    new[ni as usize].hit
                };
                let e = &cb.entries[rank as usize];
                let tokens = tok.count(e.body);
                let fits = ignore_budget || {
                    let g_ok = global_budget.is_none_or(|g| used_total.saturating_add(tokens) <= g);
                    let b_ok = cb.books[b]
                        .token_budget
                        .is_none_or(|g| used_book[b].saturating_add(tokens) <= g);
                    overflow |= !g_ok;
                    book_over[b] |= !b_ok;
                    g_ok && b_ok
                };
                if !fits {
                    self.status[rank as usize] = ST_FAILED;
                    self.reasons.insert(
                        rank,
                        RejectReason::Budget {
                            tokens: Some(tokens),
                        },
                    );
                    continue;
                }
                used_total = used_total.saturating_add(tokens);
                used_book[b] = used_book[b].saturating_add(tokens);
                self.status[rank as usize] = ST_ACTIVE;
                self.reasons.remove(&rank);
                for g in &e.rare().groups {
                    active_groups.entry(g.as_str()).or_insert(rank);
                }
                activated.push((rank, hit, tokens, passes));
                succeeded.push(rank);
            }
            self.last_pass = (pass, level, skew);
            passes += 1;
            if passes >= MAX_PASSES
                || (opts.max_recursion_steps > 0 && passes >= opts.max_recursion_steps)
            {
                break;
            }
            let recursable: Vec<u32> = succeeded
                .iter()
                .copied()
                .filter(|&r| !cb.entries[r as usize].prevent_recursion)
                .collect();
            if (any_recursive || !cb.levels.is_empty()) && !overflow {
                for &r in &recursable {
                    self.add_recursion(r);
                }
            }
            if any_recursive && !overflow && !recursable.is_empty() {
                pass = Pass::Recursion;
                level_tried |= level.is_some();
                continue;
            }
            let max_skew_depth = if opts.min_activations_depth_max > 0 {
                opts.min_activations_depth_max.min(self.ends_o.len() as u64)
            } else {
                self.ends_o.len() as u64
            };
            if opts.min_activations > 0
                && activated.len() < opts.min_activations
                && !overflow
                && opts.scan_depth + skew < max_skew_depth
            {
                skew += 1;
                pass = Pass::MinAct;
                continue;
            }
            if !cb.levels.is_empty() && !overflow {
                if !level_tried {
                    level_tried = true;
                    pass = Pass::Recursion;
                    continue;
                }
                if level_idx + 1 < cb.levels.len() {
                    level_idx += 1;
                    pass = Pass::Recursion;
                    continue;
                }
            }
            break;
        }
        self.finish(activated, used_total, sink)
    }

    fn resolve_groups(&mut self, new: &mut [NewAct], active: &FxMap<&str, u32>) {
        let cb = self.cb;
        let mut names: Vec<&str> = Vec::new();
        for a in new.iter() {
            for g in &cb.entries[a.rank as usize].rare().groups {
                if !names.contains(&g.as_str()) {
                    names.push(g);
                }
            }
        }
        for g in names {
            let members: Vec<usize> = (0..new.len())
                .filter(|&i| {
                    new[i].alive
                        && cb.entries[new[i].rank as usize]
                            .rare()
                            .groups
                            .iter()
                            .any(|x| x == g)
                })
                .collect();
            if members.is_empty() {
                continue;
            }
            let lose = |this: &mut Self, new: &mut [NewAct], i: usize, winner: Option<u32>| {
                new[i].alive = false;
                this.status[new[i].rank as usize] = ST_FAILED;
                this.reasons.insert(
                    new[i].rank,
                    RejectReason::Group {
                        group: g.to_string(),
                        winner: winner.map(|w| cb.entries[w as usize].at),
                    },
                );
            };
            if let Some(&w) = active.get(g) {
                for &i in &members {
                    lose(self, new, i, Some(w));
                }
                continue;
            }
            if members.len() < 2 {
                continue;
            }
            let stickies: Vec<usize> = members.iter().copied().filter(|&i| new[i].sticky).collect();
            if !stickies.is_empty() {
                let w = new[stickies[0]].rank;
                for &i in &members {
                    if !new[i].sticky {
                        lose(self, new, i, Some(w));
                    }
                }
                continue;
            }
            let mut pool = members.clone();
            let scoring = pool.iter().any(|&i| {
                cb.entries[new[i].rank as usize]
                    .rare()
                    .group_scoring
                    .unwrap_or(self.opts.group_scoring)
            });
            if scoring {
                let best = pool.iter().map(|&i| new[i].score).max().unwrap_or(0);
                let w = pool
                    .iter()
                    .copied()
                    .find(|&i| new[i].score == best)
                    .map(|i| new[i].rank);
                for &i in &pool {
                    if new[i].score < best {
                        lose(self, new, i, w);
                    }
                }
                pool.retain(|&i| new[i].score == best);
            }
            if pool.len() < 2 {
                continue;
            }
            let overrides: Vec<usize> = pool
                .iter()
                .copied()
                .filter(|&i| cb.entries[new[i].rank as usize].rare().group_override)
                .collect();
            let winner = if !overrides.is_empty() {
                let mut w = overrides[0];
                for &i in &overrides[1..] {
                    if cb.entries[new[i].rank as usize].order
                        > cb.entries[new[w].rank as usize].order
                    {
                        w = i;
                    }
                }
                w
            } else {
                let total: f64 = pool
                    .iter()
                    .map(|&i| cb.entries[new[i].rank as usize].rare().group_weight)
                    .sum();
                let mut w = pool[0];
                if total > 0.0 {
                    let subject = text::Fnv::new().str(g).0;
                    let mut r = text::roll(self.opts.seed, subject, self.len, 2) / 100.0 * total;
                    for &i in &pool {
                        let wt = cb.entries[new[i].rank as usize].rare().group_weight;
                        if r < wt {
                            w = i;
                            break;
                        }
                        r -= wt;
                    }
                }
                w
            };
            let wr = new[winner].rank;
            for &i in &pool {
                if i != winner {
                    lose(self, new, i, Some(wr));
                }
            }
        }
    }

    fn finish(
        mut self,
        activated: Vec<(u32, Hit, usize, usize)>,
        tokens: usize,
        sink: &mut dyn ExplainSink,
    ) -> ScanResult<'a> {
        let cb = self.cb;
        let l = self.len as u64;
        let mut disabled = Vec::new();
        // State first (only entries with timed effects or after-match decorators need it).
        for &(rank, ..) in &activated {
            let e: &CEntry<'a> = &cb.entries[rank as usize];
            let after_match = e.dec.keep_activate_after_match || e.dec.dont_activate_after_match;
            if e.rare().sticky > 0 || e.rare().cooldown > 0 || after_match {
                let key = state::key(cb.id(e));
                let label = format!("{}#{}", cb.books[e.at.book].name, e.at.index);
                if e.rare().sticky > 0 && !self.state.sticky.contains_key(&key) {
                    let r = TimedRecord {
                        start: l,
                        end: l.saturating_add(e.rare().sticky),
                        protected: false,
                        entry: label.clone(),
                    };
                    self.state.sticky.insert(key.clone(), r);
                } else if e.rare().sticky == 0
                    && e.rare().cooldown > 0
                    && !self.state.cooldown.contains_key(&key)
                {
                    let r = TimedRecord {
                        start: l,
                        end: l.saturating_add(e.rare().cooldown),
                        protected: false,
                        entry: label.clone(),
                    };
                    self.state.cooldown.insert(key.clone(), r);
                }
                if after_match {
                    let m = self.state.matched.entry(key).or_insert(MatchRecord {
                        first: l,
                        count: 0,
                        entry: label,
                    });
                    m.count = m.count.saturating_add(1);
                }
            }
            if let Some(p) = &e.dec.disable_ui_prompt {
                if !disabled.contains(p) {
                    disabled.push(p.clone());
                }
            }
        }
        let depth_of = |e: &CEntry<'a>| match e.depth {
            DepthSpec::None => None,
            DepthSpec::Fixed(d) => Some(d),
            DepthSpec::Reverse(r) => Some((self.len as i64).saturating_sub(r).max(0) as u64),
        };
        // Prompt order: sort small keys, then build each activation once, in place.
        let mut keys: Vec<(u8, u64, u64, u32, usize)> = activated
            .iter()
            .enumerate()
            .map(|(i, &(rank, ..))| {
                let e = &cb.entries[rank as usize];
                let bits = e.order.to_bits();
                let ordered = if bits >> 63 == 1 {
                    !bits
                } else {
                    bits | (1 << 63)
                };
                (
                    e.position.prompt_rank(),
                    u64::MAX - depth_of(e).unwrap_or(0),
                    ordered,
                    rank,
                    i,
                )
            })
            .collect();
        keys.sort_unstable();
        let mut result: Vec<Activation<'a>> = Vec::with_capacity(keys.len());
        for k in &keys {
            let Some(&(rank, hit, tok, pass)) = activated.get(k.4) else {
                continue;
            };
            let e: &CEntry<'a> = &cb.entries[rank as usize];
            let key_text = |ki: u32| {
                if ki < e.primary.len {
                    cb.key_arc(e.primary, ki as usize)
                } else {
                    Arc::from("")
                }
            };
            let reason = match hit {
                Hit::Key { ki, msg } => ActivationReason::Key {
                    key: key_text(ki),
                    message: self.chat_idx.get(msg as usize).copied().unwrap_or(0),
                },
                Hit::Rec { ki, src } => ActivationReason::Recursion {
                    key: key_text(ki),
                    from: cb.entries[src as usize].at,
                },
                Hit::Constant => ActivationReason::Constant,
                Hit::Sticky => ActivationReason::Sticky,
                Hit::Decorator(d) => ActivationReason::Decorator(d),
            };
            let role = match e.position {
                Position::AtDepth => Some(e.role.unwrap_or(DecoratorRole::System)),
                _ => e.dec.role,
            };
            result.push(Activation {
                entry: e.at,
                name: e.display_name(),
                content: e.body,
                position: e.position.clone(),
                depth: depth_of(e),
                role,
                order: e.order,
                tokens: tok,
                reason,
                pass,
            });
        }
        let activated = result;
        for a in &activated {
            sink.on_activated(a);
        }
        let ranks: Vec<u32> = if self.opts.explain_all {
            (0..cb.entries.len() as u32).collect()
        } else {
            self.cands.clone()
        };
        if self.opts.explain_all {
            self.explain_unchecked(&ranks);
        }
        let mut rejected = Vec::with_capacity(ranks.len());
        let mut unchecked = 0usize;
        for rank in ranks {
            match self.status[rank as usize] {
                ST_ACTIVE => continue,
                ST_UNCHECKED if !self.opts.explain_all => {
                    unchecked += 1;
                    continue;
                }
                _ => {}
            }
            let e = &cb.entries[rank as usize];
            let reason = self.reasons.remove(&rank).unwrap_or(if !e.enabled {
                RejectReason::Disabled
            } else if e.primary.is_empty() && !e.constant {
                RejectReason::NoKeys
            } else {
                RejectReason::NoMatch
            });
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
            rejected.push(r);
        }
        // Entries are unique: an unstable sort gives the same order.
        rejected.sort_unstable_by_key(|r| r.entry);
        ScanResult {
            activated,
            rejected,
            unchecked,
            tokens,
            state: self.state,
            disabled_ui_prompts: disabled,
            diagnostics: self.memo.diags,
        }
    }
}
