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
//!    sticky entries and regex keys without literals are looked at. The extra texts of
//!    entries' `match_*` flags ([`ScanOptions::sources`]) are searched the same way, once,
//!    when the options have some and an entry asks for one (module `sources`).
//! 3. **Activation pass.** Each candidate entry, in activation order, is checked in this order
//!    (the first rule that decides wins): `enabled: false` (never, in any case); `triggers`;
//!    the character filter; `@@activate`; `@@dont_activate_after_match` / `@@keep_activate_after_match` (with match
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
//!
//! # Modules
//! The steps above, one module each: `timed` (1 and the next state), `search` (2), `rules`
//! (the checks of 3), `groups` and `budget` (4), `passes` (the loop of 3-5), `report` (6) and
//! `explain` (reasons for entries the budget cut unchecked).

mod budget;
mod compat;
mod explain;
mod groups;
mod memo;
mod passes;
mod report;
mod result;
mod rules;
mod search;
mod sources;
mod timed;

pub use crate::source::Source;
pub use compat::Compat;
#[cfg(test)]
pub(crate) use explain::EXPLAIN_SPLIT;
pub use result::{
    Activation, ActivationReason, ExplainSink, Explanation, NoSink, RejectReason, Rejected,
    ScanResult, VecSink,
};
pub use sources::MatchSources;

use crate::chat::Chat;
use crate::compile::{Automata, CompiledBooks, Seen};
use crate::hash::{FxMap, FxSet};
use crate::state::ScanState;
use ccv3_tokens::Tokenizer;
use memo::RegexMemo;
use rules::Hit;
use search::PatHit;

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
    /// The generation type: entries whose `triggers` list does not name it are not activated
    /// (SillyTavern's World Info doc, "Triggers"; default [`Trigger::Normal`]).
    pub trigger: Trigger,
    /// A ceiling on the budget of all books, whatever sets it ([`ScanOptions::token_budget`],
    /// the room [`ScanOptions::max_context`] leaves); alone, it is the budget of all books
    /// (SillyTavern's "Budget Cap").
    pub budget_cap: Option<usize>,
    /// The character's name, for messages without a name.
    pub char_name: String,
    /// The user's name, for messages without a name.
    pub user_name: String,
    /// The character's other names (the card's name, its file name without extension), for
    /// entries' character filters; [`ScanOptions::char_name`] counts too.
    pub character_names: Vec<String>,
    /// The character's tags, for entries' character filters.
    pub character_tags: Vec<String>,
    /// The texts beside the chat that entries' `match_*` flags add to their scan text.
    pub sources: MatchSources,
    /// The seed of every roll (probability, group weights).
    pub seed: u64,
    /// Explain every entry, not only those that had a chance (costs time proportional to the books).
    pub explain_all: bool,
    /// Check the candidates the budget cut without checking them (not every entry, as
    /// `explain_all` does): those that would have been activated are rejected as
    /// `budget (N tokens)`, with their token count, the others with their own reason; none is
    /// left [`ScanResult::unchecked`]. What a prompt needs to list every lorebook entry it cut.
    pub explain_cut: bool,
    /// The most steps one regex search may take (one key on one scan window or one piece of
    /// recursion text; see [`crate::jsregex`]): a search that needs more does not match, and its
    /// entry is explained `regex-budget`. The default, [`REGEX_KEY_STEPS`], is far above what
    /// real keys take and is spent in a few tens of milliseconds.
    pub regex_key_steps: u64,
    /// The most steps all regex searches of one scan may take together; once spent, the
    /// remaining regex keys do not match (each entry explained `regex-budget`). The default,
    /// [`REGEX_SCAN_STEPS`], bounds a scan's regex work to well under a second.
    pub regex_scan_steps: u64,
    /// Whose results to reproduce: the spec and SillyTavern's documentation (the default), or
    /// SillyTavern 1.15's code ([`Compat::SillyTavern`]; see `docs/sillytavern-compat.md`).
    pub compat: Compat,
    /// Whether the scan may explain many budget-cut entries on a second thread (default
    /// `false`: everything on the calling thread). Threads start only with the `parallel`
    /// feature.
    pub threads: bool,
}

/// The generation type a scan is for (SillyTavern's World Info doc, "Triggers"): an entry whose
/// `triggers` extension lists generation types is activated only for those.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Trigger {
    /// A regular message generation request.
    #[default]
    Normal,
    /// The Continue button.
    Continue,
    /// The Impersonate button.
    Impersonate,
    /// A generation triggered by swiping.
    Swipe,
    /// The Regenerate button.
    Regenerate,
    /// A background generation (extensions, scripts).
    Quiet,
}

impl Trigger {
    /// Every generation type, in the documentation's order.
    pub const ALL: [Trigger; 6] = [
        Trigger::Normal,
        Trigger::Continue,
        Trigger::Impersonate,
        Trigger::Swipe,
        Trigger::Regenerate,
        Trigger::Quiet,
    ];

    /// The name SillyTavern writes in `triggers`: `normal`, `continue`, `impersonate`, `swipe`,
    /// `regenerate`, `quiet`.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Normal => "normal",
            Trigger::Continue => "continue",
            Trigger::Impersonate => "impersonate",
            Trigger::Swipe => "swipe",
            Trigger::Regenerate => "regenerate",
            Trigger::Quiet => "quiet",
        }
    }

    /// The generation type named `s` (as [`Trigger::as_str`] writes it, any case).
    pub fn parse(s: &str) -> Option<Trigger> {
        Trigger::ALL
            .into_iter()
            .find(|t| t.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

/// The default of [`ScanOptions::regex_key_steps`].
pub const REGEX_KEY_STEPS: u64 = 2_000_000;

/// The default of [`ScanOptions::regex_scan_steps`].
pub const REGEX_SCAN_STEPS: u64 = 40_000_000;

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
            trigger: Trigger::Normal,
            budget_cap: None,
            char_name: String::new(),
            user_name: "User".into(),
            character_names: Vec::new(),
            character_tags: Vec::new(),
            sources: MatchSources::default(),
            seed: 0,
            explain_all: false,
            explain_cut: false,
            regex_key_steps: REGEX_KEY_STEPS,
            regex_scan_steps: REGEX_SCAN_STEPS,
            compat: Compat::Spec,
            threads: false,
        }
    }
}

/// "No message" / "no entry" in the scan's `u32` places.
const NONE: u32 = u32::MAX;

/// The kind of a pass (see the module docs, step 5).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    Initial,
    Recursion,
    MinAct,
}

/// An entry's status in a scan: not decided yet.
const ST_NEW: u8 = 0;
/// Activated.
const ST_ACTIVE: u8 = 1;
/// Rejected for good (its reason is in `Scan::reasons`).
const ST_FAILED: u8 = 2;
/// Cut by the budget without being checked.
const ST_UNCHECKED: u8 = 3;

/// One scan's working state: the scan text, what the automata found, each entry's status.
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
    /// The automata states a search has met (reused from text to text).
    seen: Seen,
    /// The extra texts of entries' `match_*` flags, searched (when the options have some).
    sources: Option<sources::SourceText>,
}

/// An activation as the passes record it: (rank, why, tokens, pass number).
type Act = (u32, Hit, usize, usize);

/// An entry matched in the current pass, before groups, rolls and the budget.
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
        if opts.compat == Compat::SillyTavern {
            return compat::scan(self, chat, state, opts, tokenizer, sink);
        }
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
            memo: RegexMemo::with_steps(opts.regex_scan_steps),
            rec_chunks: Vec::new(),
            state: ScanState::default(),
            prev_matched: FxSet::default(),
            sticky_ids: FxSet::default(),
            cooldown_ids: FxSet::default(),
            last_pass: (Pass::Initial, None, 0),
            own_automata: None,
            seen: Seen::default(),
            sources: None,
        };
        s.advance_state(state);
        s.build_buffer(chat);
        s.run(tokenizer, sink)
    }
}

impl<'s, 'a> Scan<'s, 'a> {
    /// The identity and rank of the entry a state record names (`k`: its identity in hex;
    /// `label`: `book#index`, where it was), when it is one of these books' entries. The entry
    /// at the label is tried first, so that a state costs the identities of its own entries,
    /// not of every entry (an identity hashes the whole entry); else all entries are looked up.
    fn resolve(&self, k: &str, label: &str) -> Option<(u64, u32)> {
        let id = u64::from_str_radix(k, 16).ok()?;
        if let Some(rank) = self.cb.rank_at_label(label) {
            if self.cb.id(&self.cb.entries[rank as usize]) == id {
                return Some((id, rank));
            }
        }
        self.cb.by_id().get(&id).map(|&rank| (id, rank))
    }

    /// True when some book's entries are scanned for keys once activated.
    fn any_book_recursive(&self) -> bool {
        (0..self.cb.books.len()).any(|b| self.book_recursive(b))
    }

    /// True when `book`'s entries are scanned for keys in recursion passes.
    fn book_recursive(&self, book: usize) -> bool {
        self.cb.books[book].recursive.unwrap_or(self.opts.recursive)
    }
}
