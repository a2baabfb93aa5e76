//! One scan's working state ([`Scan`]) and the small types its steps share: entry statuses, pass
//! kinds, why an entry matched, where each pattern was found.

use super::memo::RegexMemo;
use super::options::ScanOptions;
use super::RejectReason;
use crate::compile::{Automata, CompiledBooks, Seen};
use crate::hash::{FxMap, FxSet};
use crate::source::Source;
use crate::state::ScanState;

/// "No message" / "no entry" in the scan's `u32` places.
pub(super) const NONE: u32 = u32::MAX;

/// The kind of a pass (see the module docs, step 5).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Pass {
    Initial,
    Recursion,
    MinAct,
}

/// An entry's status in a scan: not decided yet.
pub(super) const ST_NEW: u8 = 0;
/// Activated.
pub(super) const ST_ACTIVE: u8 = 1;
/// Rejected for good (its reason is in `Scan::reasons`).
pub(super) const ST_FAILED: u8 = 2;
/// Cut by the budget without being checked.
pub(super) const ST_UNCHECKED: u8 = 3;

/// One scan's working state: the scan text, what the automata found, each entry's status.
pub(super) struct Scan<'s, 'a> {
    pub(super) cb: &'s CompiledBooks<'a>,
    pub(super) opts: &'s ScanOptions,
    pub(super) len: usize,
    pub(super) assistant: u64,
    pub(super) orig: String,
    pub(super) lower: String,
    pub(super) ends_o: Vec<usize>,
    pub(super) ends_l: Vec<usize>,
    pub(super) chat_idx: Vec<usize>,
    pub(super) hits: Vec<PatHit>,
    pub(super) cand_flag: Vec<bool>,
    pub(super) cands: Vec<u32>,
    pub(super) status: Vec<u8>,
    pub(super) reasons: FxMap<u32, RejectReason>,
    /// What regex keys found, by window and in recursion text.
    pub(super) memo: RegexMemo,
    pub(super) rec_chunks: Vec<(u32, String)>,
    pub(super) state: ScanState,
    pub(super) prev_matched: FxSet<u64>,
    pub(super) sticky_ids: FxSet<u64>,
    pub(super) cooldown_ids: FxSet<u64>,
    pub(super) last_pass: (Pass, Option<u64>, u64),
    /// Automata built for this scan's text alone (see [`crate::LorebookCompiler::single_scan`]).
    pub(super) own_automata: Option<Automata>,
    /// The automata states a search has met (reused from text to text).
    pub(super) seen: Seen,
    /// The extra texts of entries' `match_*` flags, searched (when the options have some).
    pub(super) sources: Option<SourceText>,
}

/// An activation as the passes record it: (rank, why, tokens, pass number).
pub(super) type Act = (u32, Hit, usize, usize);

/// An entry matched in the current pass, before groups, rolls and the budget.
pub(super) struct NewAct {
    pub(super) rank: u32,
    pub(super) new_index: u32,
    pub(super) hit: Hit,
    pub(super) score: u32,
    pub(super) sticky: bool,
    pub(super) alive: bool,
}

/// Why an entry matched, without allocation (turned into an [`ActivationReason`](super::ActivationReason) at the end).
#[derive(Clone, Copy)]
pub(super) enum Hit {
    Key { ki: u32, msg: u32 },
    Rec { ki: u32, src: u32 },
    Src { ki: u32, src: Source },
    Constant,
    Sticky,
    Decorator(&'static str),
}

/// Where a pattern was found, stored as value + 1 so that a zeroed array means "nowhere" (a
/// zeroed allocation costs nothing until touched): `[chat_any, chat_whole, rec_any, rec_whole]`
/// where chat values are the newest message (newest-first index) containing a match (whole-word
/// match for `chat_whole`), and rec values the first entry whose content contained one.
pub(super) type PatHit = [u32; 4];

/// The extra texts of one scan, searched: each source's text (original and lower case) and,
/// per pattern, the sources it occurs in (`[any, whole word]` bit sets).
#[derive(Default)]
pub(super) struct SourceText {
    pub(super) texts: Vec<(Source, String, String)>,
    pub(super) hits: Vec<[u8; 2]>,
}
