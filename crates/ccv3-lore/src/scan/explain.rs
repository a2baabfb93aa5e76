//! Rejections and their reasons (step 6 of the scan order), with the reasons of entries the
//! budget cut without checking them when every entry is explained.

use super::context::{Scan, ST_ACTIVE, ST_UNCHECKED};
use super::memo::RegexMemo;
use super::rules::Verdict;
use super::{ExplainSink, RejectReason, Rejected};

/// Budget-cut entries are explained on two threads from this many (with the `parallel`
/// feature).
const PARALLEL_EXPLAIN: usize = 2048;

#[cfg(test)]
thread_local! {
    /// Tests set this to explain budget-cut entries in two halves (`Some(true)`, on two threads
    /// with the `parallel` feature) or in one (`Some(false)`), to compare the two.
    pub(crate) static EXPLAIN_SPLIT: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// Whether `n` budget-cut entries are explained in two halves, each with its own memo: many of
/// them with the `parallel` feature when the scan may start a thread
/// ([`ScanOptions::threads`](super::ScanOptions::threads)), or as a test asks.
fn split_explanations(n: usize, threads: bool) -> bool {
    #[cfg(test)]
    if let Some(split) = EXPLAIN_SPLIT.with(|c| c.get()) {
        return split;
    }
    cfg!(feature = "parallel") && threads && n >= PARALLEL_EXPLAIN
}

impl<'s, 'a> Scan<'s, 'a> {
    /// Finds why each entry the budget cut without checking it would not have been activated
    /// (`explain_all`), as the last pass would have checked it. Many such entries are checked in
    /// two halves (on two threads with the `parallel` feature), each with its own [`RegexMemo`];
    /// the results are the same. With `tok` (for [`super::ScanOptions::explain_cut`]), an entry
    /// that would have been activated carries its token count.
    fn explain_unchecked(&mut self, ranks: &[u32], tok: Option<&dyn ccv3_tokens::Tokenizer>) {
        let todo: Vec<u32> = ranks
            .iter()
            .copied()
            .filter(|&r| self.status[r as usize] == ST_UNCHECKED)
            .collect();
        let (pass, level, skew) = self.last_pass;
        let cb = self.cb;
        let why = |rank: u32, v: Verdict| match v {
            Verdict::Activate(..) => RejectReason::Budget {
                tokens: tok.map(|t| t.count(cb.entries[rank as usize].body)),
            },
            Verdict::Reject(r) => r,
        };
        let mut mine = std::mem::take(&mut self.memo);
        let half = if split_explanations(todo.len(), self.opts.threads) {
            todo.len() / 2
        } else {
            todo.len()
        };
        let (head, tail) = todo.split_at(half);
        let this = &*self;
        let check = |ranks: &[u32], m: &mut RegexMemo| -> Vec<RejectReason> {
            ranks
                .iter()
                .map(|&r| why(r, this.evaluate(m, r, pass, level, skew)))
                .collect()
        };
        let (first, (second, theirs)) = if tail.is_empty() {
            (check(head, &mut mine), (Vec::new(), RegexMemo::default()))
        } else {
            // Each half gets half of the steps the scan has left, so results never depend on
            // which thread runs first.
            let given = mine.steps / 2;
            mine.steps -= given;
            crate::par::both(
                self.opts.threads,
                "ccv3-lore-explain",
                || check(head, &mut mine),
                || {
                    let mut theirs = RegexMemo::with_steps(given);
                    (check(tail, &mut theirs), theirs)
                },
            )
        };
        mine.steps += theirs.steps;
        mine.out_of_steps += theirs.out_of_steps;
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

    /// The rejected entries in book order, each also given to `sink`: the candidates (every
    /// entry with `explain_all`) that were not activated, and how many the budget cut
    /// unchecked (none with `explain_all` or `explain_cut`: their reasons are found).
    pub(super) fn rejections(
        &mut self,
        tok: &dyn ccv3_tokens::Tokenizer,
        sink: &mut dyn ExplainSink,
    ) -> (Vec<Rejected<'a>>, usize) {
        let cb = self.cb;
        let ranks: Vec<u32> = if self.opts.explain_all {
            (0..cb.entries.len() as u32).collect()
        } else {
            self.cands.clone()
        };
        let explained = self.opts.explain_all || self.opts.explain_cut;
        if self.opts.explain_all {
            self.explain_unchecked(&ranks, None);
        } else if self.opts.explain_cut {
            self.explain_unchecked(&ranks, Some(tok));
        }
        let mut rejected = Vec::with_capacity(ranks.len());
        let mut unchecked = 0usize;
        for rank in ranks {
            match self.status[rank as usize] {
                ST_ACTIVE => continue,
                ST_UNCHECKED if !explained => {
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
            Rejected::record(e, reason, sink, &mut rejected);
        }
        // Entries are unique: an unstable sort gives the same order.
        rejected.sort_unstable_by_key(|r| r.entry);
        (rejected, unchecked)
    }
}
