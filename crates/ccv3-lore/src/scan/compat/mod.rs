//! `Compat::SillyTavern`: the scan as SillyTavern 1.15's `checkWorldInfo` runs it, including
//! where its code departs from its documentation (issue 14). The default scan follows the spec
//! and the documentation; every difference is listed in `docs/sillytavern-compat.md`.
//!
//! This is its own small loop over the compiled entries (in the same activation order): one
//! pass over every entry per scan step, SillyTavern's key matching (`/regex/flags` keys, an
//! invalid pattern falling back to plain text, ASCII `\W` word boundaries), its timed-effect
//! records (`start`, `end = start + N`, active while the chat length is below `end`), its
//! inclusion groups (groups split on commas, "already activated" compared with the whole group
//! text, a member of two groups removed twice), its budget walk (contents joined with a newline
//! each, counted with the recursion text, stopping at `>=`), and its prompt order (order lowest
//! first, equal orders in reverse activation order). Rolls (probability, group weights) come from
//! the seed, the entry and the chat length instead of `Math.random`.
//!
//! The scan's passes, one module each, in the order [`scan`] runs them:
//! 1. `entry`: every entry read as SillyTavern reads it.
//! 2. `timed`: timed effects carried over from the state (`checkTimedEffects`).
//! 3. `steps`: the scan steps, each a check of every entry (`matching`), the inclusion groups
//!    (`groups`) and the budget walk, until no recursion, min activations or delay level asks
//!    for another.
//! 4. `timed`: the next state's records (`setTimedEffects`).
//! 5. `outcome`: activations in prompt order, and the rejections.

mod entry;
mod groups;
mod matching;
mod outcome;
mod prefilter;
mod shared;
mod steps;
mod timed;

use super::{ExplainSink, ScanOptions, ScanResult};
use crate::chat::Chat;
use crate::compile::CompiledBooks;
use crate::state::ScanState;
use ccv3_tokens::Tokenizer;
use entry::StEntry;
use matching::{Buffer, St};

/// Runs SillyTavern's `checkWorldInfo` on compiled books (see the module docs).
pub(super) fn scan<'a>(
    cb: &CompiledBooks<'a>,
    chat: &Chat,
    prev: &ScanState,
    opts: &ScanOptions,
    tok: &dyn Tokenizer,
    sink: &mut dyn ExplainSink,
) -> ScanResult<'a> {
    let len = chat.messages.len();
    let entries: Vec<StEntry<'a>> = st_order(cb)
        .into_iter()
        .map(|r| StEntry::new(cb, r, opts, len))
        .collect();
    let mut st = St {
        opts,
        regex: &cb.st_regex,
        entries,
        global_case: cb.case_sensitive,
        lower: (None, String::new()),
        regex_left: opts.regex_scan_steps,
        filter: None,
    };
    let mut buf = Buffer {
        depth: Buffer::messages(chat, opts),
        recurse: Vec::new(),
        recurse_from: Vec::new(),
        skew: 0,
    };
    let mut timed = timed::Timed::check(&st.entries, prev, len);
    let out = steps::run(cb, &mut st, &mut buf, &timed, opts, tok, len);
    timed.set(cb, &st.entries, &out.activated, len);
    outcome::result(cb, &st.entries, out, timed.state, opts, tok, sink)
}

/// The entries' ranks in SillyTavern's order (`getSortedEntries`, `world-info.js` of 1.19.0,
/// lines 4608-4625): the compiled activation order (chat lore, persona lore, then character
/// and global lore as the strategy says, each sorted by `order`, highest first, stably), except
/// that "evenly" sorts `[...globalLore, ...characterLore]`: on equal `order` a global entry
/// goes before a character one.
fn st_order(cb: &CompiledBooks<'_>) -> Vec<u32> {
    use crate::compile::BookKind;
    let ranks: Vec<u32> = (0..cb.entries.len() as u32).collect();
    let kind = |r: u32| cb.books[cb.entries[r as usize].at.book].kind;
    // Ranks (bits) held by character and by global entries: shared under "evenly" only.
    let (mut chars, mut globals) = (0u8, 0u8);
    for e in &cb.entries {
        match cb.books[e.at.book].kind {
            BookKind::Character => chars |= 1 << e.kind_rank.min(7),
            BookKind::Global => globals |= 1 << e.kind_rank.min(7),
            _ => {}
        }
    }
    let evenly = chars & globals != 0;
    if evenly {
        // The ranks are in (kind rank, order, place) order already: within each run of equal
        // kind rank and order, the global entries go first (no sort: it would grow the
        // WebAssembly core).
        let key = |r: u32| {
            let e = &cb.entries[r as usize];
            (e.kind_rank, crate::compile::total_key(e.order))
        };
        let mut out = Vec::with_capacity(ranks.len());
        let mut start = 0;
        while start < ranks.len() {
            let k = key(ranks[start]);
            let end = start + ranks[start..].iter().take_while(|&&r| key(r) == k).count();
            let run = &ranks[start..end];
            out.extend(run.iter().filter(|&&r| kind(r) != BookKind::Character));
            out.extend(run.iter().filter(|&&r| kind(r) == BookKind::Character));
            start = end;
        }
        return out;
    }
    ranks
}
