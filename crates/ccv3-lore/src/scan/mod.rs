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
mod context;
mod explain;
mod groups;
mod memo;
mod options;
mod passes;
mod report;
mod result;
mod rules;
mod search;
mod sources;
mod timed;

pub use crate::source::Source;
#[cfg(test)]
pub(crate) use explain::EXPLAIN_SPLIT;
pub use options::{
    Compat, MatchSources, ScanOptions, Trigger, MAX_PASSES, REGEX_KEY_STEPS, REGEX_SCAN_STEPS,
};
pub use result::{
    Activation, ActivationReason, ExplainSink, Explanation, NoSink, RejectReason, Rejected,
    ScanResult, VecSink,
};

use crate::chat::Chat;
use crate::compile::{CompiledBooks, Seen};
use crate::hash::{FxMap, FxSet};
use crate::state::ScanState;
use ccv3_tokens::Tokenizer;
use context::{Pass, Scan, ST_NEW};
use memo::RegexMemo;

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
