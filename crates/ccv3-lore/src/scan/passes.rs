//! The passes (steps 3-5 of the scan order): each pass checks the new candidates, resolves
//! groups, walks the budget, then plans the next pass (recursion, min activations, the next
//! `delay_until_recursion` level) or ends the scan.

use super::budget::Tally;
use super::context::{Pass, Scan, ST_NEW};
use super::options::MAX_PASSES;
use super::{ExplainSink, ScanResult};
use crate::compile::META_GROUP;
use ccv3_tokens::Tokenizer;

/// Where the passes are: the kind of the next one, the extra messages of min-activations
/// passes, the `delay_until_recursion` level and whether the levels were tried.
struct Plan {
    pass: Pass,
    skew: u64,
    level_idx: usize,
    level_tried: bool,
}

impl<'s, 'a> Scan<'s, 'a> {
    /// Runs the passes and builds the result.
    pub(super) fn run(mut self, tok: &dyn Tokenizer, sink: &mut dyn ExplainSink) -> ScanResult<'a> {
        let cb = self.cb;
        let opts = self.opts;
        let mut plan = Plan {
            pass: Pass::Initial,
            skew: 0,
            level_idx: 0,
            level_tried: false,
        };
        let mut tally = Tally::new(cb, opts, self.cands.len());
        let mut passes = 0usize;
        loop {
            let at = (plan.pass, cb.levels.get(plan.level_idx).copied(), plan.skew);
            let (grouped, pending) = self.new_candidates();
            let new = self.check_groups(&grouped, at, &tally.groups);
            let succeeded = self.walk_budget(&mut tally, &new, &pending, at, passes, tok);
            self.last_pass = at;
            passes += 1;
            if passes >= MAX_PASSES
                || (opts.max_recursion_steps > 0 && passes >= opts.max_recursion_steps)
            {
                break;
            }
            if !self.next_pass(&mut plan, at.1, &succeeded, &tally) {
                break;
            }
        }
        let used = tally.used_total;
        self.finish(tally.activated, used, tok, sink)
    }

    /// The candidates not decided yet: those in inclusion groups (checked first, in rank
    /// order: a group is resolved among all its matched members) and the others (checked
    /// lazily in budget order, so once the budget has ended the rest need no check at all).
    fn new_candidates(&self) -> (Vec<u32>, Vec<u32>) {
        let mut grouped: Vec<u32> = Vec::new();
        let mut pending: Vec<u32> = Vec::new();
        for &rank in &self.cands {
            if self.status[rank as usize] != ST_NEW {
                continue;
            }
            if self.cb.meta[rank as usize].flags & META_GROUP != 0 {
                grouped.push(rank);
            } else {
                pending.push(rank);
            }
        }
        grouped.sort_unstable();
        (grouped, pending)
    }

    /// Plans the pass after one at recursion `level` that activated `succeeded`: recursion
    /// (their contents, when a book recurses and nothing overflowed), else min activations (one
    /// more message), else the next `delay_until_recursion` level. False when the scan ends.
    fn next_pass(
        &mut self,
        plan: &mut Plan,
        level: Option<u64>,
        succeeded: &[u32],
        tally: &Tally<'_>,
    ) -> bool {
        let cb = self.cb;
        let opts = self.opts;
        let overflow = tally.overflow;
        let any_recursive = self.any_book_recursive();
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
            plan.pass = Pass::Recursion;
            plan.level_tried |= level.is_some();
            return true;
        }
        let max_skew_depth = if opts.min_activations_depth_max > 0 {
            opts.min_activations_depth_max.min(self.ends_o.len() as u64)
        } else {
            self.ends_o.len() as u64
        };
        if opts.min_activations > 0
            && tally.activated.len() < opts.min_activations
            && !overflow
            && opts.scan_depth + plan.skew < max_skew_depth
        {
            plan.skew += 1;
            plan.pass = Pass::MinAct;
            return true;
        }
        if !cb.levels.is_empty() && !overflow {
            if !plan.level_tried {
                plan.level_tried = true;
                plan.pass = Pass::Recursion;
                return true;
            }
            if plan.level_idx + 1 < cb.levels.len() {
                plan.level_idx += 1;
                plan.pass = Pass::Recursion;
                return true;
            }
        }
        false
    }
}
