//! The budget (step 4 of the scan order): each pass's new entries counted in budget order until
//! the budget ends; entries outside inclusion groups are checked lazily inside this walk.

use super::context::{Act, NewAct, Pass, Scan, ST_ACTIVE, ST_FAILED, ST_UNCHECKED};
use super::options::ScanOptions;
use super::RejectReason;
use crate::compile::{CompiledBooks, META_IGNORE_BUDGET};
use crate::hash::FxMap;
use ccv3_tokens::Tokenizer;

/// What the passes have activated and spent so far.
pub(super) struct Tally<'s> {
    /// Activations in the order they were counted.
    pub activated: Vec<Act>,
    /// Each inclusion group's winner (rank), once it has one.
    pub groups: FxMap<&'s str, u32>,
    /// Tokens counted, all books.
    pub used_total: usize,
    /// Tokens counted per book.
    used_book: Vec<usize>,
    /// The budget of all books has ended.
    pub overflow: bool,
    /// The budget of a book has ended.
    book_over: Vec<bool>,
    /// The budget of all books: the option's, capped by the room the maximum context leaves
    /// and by [`ScanOptions::budget_cap`].
    global: Option<usize>,
}

impl<'s> Tally<'s> {
    /// Nothing spent yet, with `n_cands` candidates.
    pub(super) fn new(cb: &CompiledBooks<'_>, opts: &ScanOptions, n_cands: usize) -> Self {
        let mut global = opts.token_budget;
        if let Some(m) = opts.max_context {
            let room = m.saturating_sub(opts.context_tokens);
            global = Some(global.map_or(room, |b| b.min(room)));
        }
        if let Some(cap) = opts.budget_cap {
            global = Some(global.map_or(cap, |b| b.min(cap)));
        }
        Tally {
            activated: Vec::with_capacity(n_cands.min(1 << 16)),
            groups: FxMap::default(),
            used_total: 0,
            used_book: vec![0; cb.books.len()],
            overflow: false,
            book_over: vec![false; cb.books.len()],
            global,
        }
    }

    /// True when the budget of `book` (or of all books) has ended.
    fn ended(&self, book: usize) -> bool {
        self.overflow || self.book_over[book]
    }

    /// Counts `tokens` of an entry of `book` when they fit (always with `ignore_budget`); when
    /// they do not, the budget they exceed ends. "Exceeds" is strict.
    fn spend(
        &mut self,
        cb: &CompiledBooks<'_>,
        book: usize,
        tokens: usize,
        ignore_budget: bool,
    ) -> bool {
        let fits = ignore_budget || {
            let g_ok = self
                .global
                .is_none_or(|g| self.used_total.saturating_add(tokens) <= g);
            let b_ok = cb.books[book]
                .token_budget
                .is_none_or(|g| self.used_book[book].saturating_add(tokens) <= g);
            self.overflow |= !g_ok;
            self.book_over[book] |= !b_ok;
            g_ok && b_ok
        };
        if fits {
            self.used_total = self.used_total.saturating_add(tokens);
            self.used_book[book] = self.used_book[book].saturating_add(tokens);
        }
        fits
    }
}

impl<'s, 'a> Scan<'s, 'a> {
    /// The budget walk of pass number `pass_no` (`at`: its kind, level and skew): the group
    /// members that survived (`new`) and the other candidates (`pending`, checked here, lazily)
    /// in budget order (sticky first, then the order computed at compile time), each counted
    /// with `tok` until the budget ends; returns the ranks activated.
    pub(super) fn walk_budget(
        &mut self,
        tally: &mut Tally<'s>,
        new: &[NewAct],
        pending: &[u32],
        (pass, level, skew): (Pass, Option<u64>, u64),
        pass_no: usize,
        tok: &dyn Tokenizer,
    ) -> Vec<u32> {
        let cb = self.cb;
        let late = self.opts.max_context.is_some();
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
        for &rank in pending {
            let sticky = !self.sticky_ids.is_empty()
                && self.sticky_ids.contains(&cb.id(&cb.entries[rank as usize]));
            items.push((order_of(rank, sticky), rank, u32::MAX));
        }
        items.sort_unstable();
        let mut succeeded: Vec<u32> = Vec::new();
        for (_, rank, ni) in items {
            let m = &cb.meta[rank as usize];
            let ignore_budget = m.flags & META_IGNORE_BUDGET != 0;
            let b = m.book as usize;
            if !ignore_budget && tally.ended(b) {
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
            if !tally.spend(cb, b, tokens, ignore_budget) {
                self.status[rank as usize] = ST_FAILED;
                self.reasons.insert(
                    rank,
                    RejectReason::Budget {
                        tokens: Some(tokens),
                    },
                );
                continue;
            }
            self.status[rank as usize] = ST_ACTIVE;
            self.reasons.remove(&rank);
            for g in &e.rare().groups {
                tally.groups.entry(g.as_str()).or_insert(rank);
            }
            tally.activated.push((rank, hit, tokens, pass_no));
            succeeded.push(rank);
        }
        succeeded
    }
}
