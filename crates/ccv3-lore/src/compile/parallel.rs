//! Compiling every entry into one key table, on the calling thread or split between two.
//!
//! Split (big books with the `parallel` feature), this thread compiles from the front in small
//! steps into the main table; the other from the back in shrinking chunks, each with a table of
//! its own. They meet wherever their speeds put the boundary (a thread that starts with cold
//! memory is slower), and the back chunks are then merged in book order ([`Builder::absorb`]:
//! ids assigned as if one table had met every entry in order). Without the feature a split
//! compile runs the back chunks first on the calling thread, with the same result.

use super::entry::CEntry;
use super::input::{BookInput, LorebookCompiler};
use super::keys::Builder;
use std::ops::Range;
use std::sync::Mutex;

/// Books with at least this many entries are compiled on two threads (with the `parallel`
/// feature, when the compiler may start threads: [`LorebookCompiler::threads`]).
pub(super) const PARALLEL_COMPILE: usize = 2048;

/// Entries the first compiling thread claims at a time (the other claims a quarter of what is
/// left, never fewer than this).
const COMPILE_STEP: usize = 256;

/// A back chunk: its table, its entries and their deepest scan depth.
type Chunk<'a> = (Builder<'a>, Vec<CEntry<'a>>, u64);

impl LorebookCompiler {
    /// Compiles every entry of `books`, in book order, into one table (`split`: shared with a
    /// second worker, see the module docs); returns the table, the entries and the deepest scan
    /// depth an entry sets.
    pub(super) fn compile_entries<'a>(
        &self,
        books: &[BookInput<'a>],
        split: bool,
    ) -> (Builder<'a>, Vec<CEntry<'a>>, u64) {
        let total: usize = books.iter().map(|b| b.book.entries.len()).sum();
        // Sized up front: growing tables of this size copies them and touches fresh memory
        // twice, which costs more than the counting.
        let n_keys: usize = books
            .iter()
            .flat_map(|b| &b.book.entries)
            .map(|e| e.keys.len() + e.secondary_keys.as_ref().map_or(0, Vec::len))
            .sum();
        let mut b = Builder::with_capacity(n_keys);
        let mut entries: Vec<CEntry<'a>> = Vec::with_capacity(total);
        let mut max_depth = 0u64;
        if !(split && total > 1) {
            self.compile_range(books, &mut b, 0..total, &mut max_depth, &mut entries);
            return (b, entries, max_depth);
        }
        let unclaimed = Mutex::new(0..total);
        let claim = |from_back: bool| {
            let mut left = unclaimed.lock().unwrap_or_else(|e| e.into_inner());
            let n = left.len();
            if n == 0 {
                return None;
            }
            Some(if from_back {
                let take = (n / 4).max(COMPILE_STEP).min(n);
                left.end -= take;
                left.end..left.end + take
            } else {
                let take = COMPILE_STEP.min(n);
                left.start += take;
                left.start - take..left.start
            })
        };
        let back = || {
            let mut chunks: Vec<Chunk<'a>> = Vec::new();
            while let Some(range) = claim(true) {
                // The chunk's share of the keys.
                let mut b2 = Builder::with_capacity(n_keys.saturating_mul(range.len()) / total);
                let mut depth = 0u64;
                let mut out = Vec::with_capacity(range.len());
                self.compile_range(books, &mut b2, range, &mut depth, &mut out);
                chunks.push((b2, out, depth));
            }
            chunks
        };
        let ((), mut chunks) = crate::par::both(
            self.threads,
            "ccv3-lore-compile",
            || {
                while let Some(range) = claim(false) {
                    self.compile_range(books, &mut b, range, &mut max_depth, &mut entries);
                }
            },
            back,
        );
        // Claimed from the back: the last chunk claimed comes first in the book.
        chunks.reverse();
        for (b2, mut part, depth) in chunks {
            max_depth = max_depth.max(depth);
            let key_base = b.absorb(b2);
            for e in &mut part {
                e.shift_keys(key_base);
            }
            entries.extend(part);
        }
        (b, entries, max_depth)
    }

    /// Compiles the entries at flat places `range` (every entry of `books` numbered in order)
    /// with the table `b` into `out`, raising `max_depth` to their scan depths.
    fn compile_range<'a>(
        &self,
        books: &[BookInput<'a>],
        b: &mut Builder<'a>,
        range: Range<usize>,
        max_depth: &mut u64,
        out: &mut Vec<CEntry<'a>>,
    ) {
        let names = (
            self.char_name.as_str(),
            self.user_name.as_str(),
            self.dialect,
        );
        let mut first = 0usize;
        for (bi, input) in books.iter().enumerate() {
            let n = input.book.entries.len();
            let (lo, hi) = (range.start.max(first), range.end.min(first + n));
            for flat in lo..hi {
                let ei = flat - first;
                let e = &input.book.entries[ei];
                out.push(self.compile_entry(b, (bi, ei, input.name.as_str()), e, names, max_depth));
            }
            first += n;
        }
    }
}
