//! Byte pair encoding over a compiled vocabulary (see `vocab_layout.rs` for its layout).
//!
//! # The merge rule
//!
//! A piece of text (one match of the encoding's split pattern) becomes tokens this way:
//! - if the whole piece is a token, it is that one token;
//! - otherwise start from its single bytes (every byte is a token) and, while some pair of
//!   adjacent parts concatenates to a token, merge the pair whose concatenation has the lowest
//!   rank, the leftmost such pair if several tie (they cannot: ranks are unique, but a pair of
//!   parts may appear twice);
//! - the ids are the ranks of the parts left, in order.
//!
//! Short pieces (under [`SHORT_PIECE`] bytes) rescan a small array of parts after each merge.
//! Longer ones keep the candidate merges in a binary heap ordered by (rank, start) with the
//! parts as a linked list over byte offsets, so a piece of n bytes costs O(n log n): a megabyte
//! of letters without a space is one piece. Both give the same tokens.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::vocab_layout::{hash, tag, unpack, EMPTY, MAX_TOKEN_LEN};

/// Pieces shorter than this many bytes are merged by rescanning; longer ones through a heap.
pub(crate) const SHORT_PIECE: usize = 128;

/// No merge: a rank no pair can have.
const NONE: u32 = u32::MAX;

/// A compiled vocabulary, borrowed from the blobs built by `build.rs` into the binary or from a
/// registered vocabulary file.
pub(crate) struct Vocab<'a> {
    bytes: &'a [u8],
    slots: &'a [u8],
    mask: usize,
    byte_ranks: [u32; 256],
}

/// One part of a short piece while merging: where it starts, its token, and the rank of it
/// merged with the next part ([`NONE`] if that is no token).
#[derive(Clone, Copy)]
struct Part {
    start: u32,
    rank: u32,
    pair: u32,
}

/// Compares two short byte strings of the same length; a plain loop beats a call to `memcmp`
/// for the few bytes of a token.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

impl<'a> Vocab<'a> {
    /// Wraps the two blobs of one vocabulary, checking their shape and that every single byte
    /// is a token. The error names the problem.
    pub(crate) fn new(bytes: &'a [u8], slots: &'a [u8]) -> Result<Vocab<'a>, String> {
        let slot_count = slots.len() / 8;
        if !slots.len().is_multiple_of(8) || !slot_count.is_power_of_two() {
            return Err("hash table length is not a power of two".to_string());
        }
        let mut vocab = Vocab {
            bytes,
            slots,
            mask: slot_count - 1,
            byte_ranks: [0; 256],
        };
        for b in 0..=255u8 {
            let rank = vocab
                .rank(&[b])
                .ok_or_else(|| format!("byte {b:#04x} is not a token"))?;
            if let Some(slot) = vocab.byte_ranks.get_mut(usize::from(b)) {
                *slot = rank;
            }
        }
        Ok(vocab)
    }

    /// Reads slot `i`.
    #[inline]
    fn slot(&self, i: usize) -> Option<u64> {
        let at = i.checked_mul(8)?;
        let w = self.slots.get(at..at.checked_add(8)?)?;
        Some(u64::from_le_bytes(<[u8; 8]>::try_from(w).ok()?))
    }

    /// Returns the rank of the token `bytes`, if they are one.
    #[inline]
    pub(crate) fn rank(&self, bytes: &[u8]) -> Option<u32> {
        if bytes.len() > MAX_TOKEN_LEN {
            return None;
        }
        self.rank_hashed(bytes, hash(bytes))
    }

    /// [`Vocab::rank`] of `bytes` whose [`hash`] `h` the caller has already computed.
    #[inline]
    fn rank_hashed(&self, bytes: &[u8], h: u64) -> Option<u32> {
        let want = tag(h);
        let mut i = h as usize & self.mask;
        // The table is at most half full, so a probe meets an empty slot long before this bound.
        for _ in 0..=self.mask {
            let slot = self.slot(i)?;
            if slot == EMPTY {
                return None;
            }
            let (rank, offset, len, tag) = unpack(slot);
            if tag == want
                && len == bytes.len()
                && self
                    .bytes
                    .get(offset..offset.saturating_add(len))
                    .is_some_and(|token| same_bytes(token, bytes))
            {
                return Some(rank);
            }
            i = (i + 1) & self.mask;
        }
        None
    }

    /// Returns the rank of a pair `bytes` as a merge candidate: its rank, or [`NONE`].
    #[inline]
    fn merge_rank(&self, bytes: Option<&[u8]>) -> u32 {
        bytes.and_then(|b| self.rank(b)).unwrap_or(NONE)
    }

    /// Returns the token of one byte.
    #[inline]
    fn byte_rank(&self, b: u8) -> u32 {
        self.byte_ranks[usize::from(b)]
    }

    /// Appends the tokens of one piece to `out`.
    pub(crate) fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) {
        let rank = self.rank(piece);
        self.encode_ranked(piece, rank, out);
    }

    /// [`Vocab::encode_piece`] of a piece of at most [`MAX_TOKEN_LEN`] bytes whose [`hash`] `h`
    /// the caller has already computed.
    pub(crate) fn encode_piece_hashed(&self, piece: &[u8], h: u64, out: &mut Vec<u32>) {
        let rank = if piece.len() > MAX_TOKEN_LEN {
            None
        } else {
            self.rank_hashed(piece, h)
        };
        self.encode_ranked(piece, rank, out);
    }

    /// Appends the tokens of one piece whose own rank (if it is a token) is `rank`.
    #[inline]
    fn encode_ranked(&self, piece: &[u8], rank: Option<u32>, out: &mut Vec<u32>) {
        if let Some(rank) = rank {
            out.push(rank);
            return;
        }
        let done = if piece.len() < SHORT_PIECE {
            self.merge_short(piece, out)
        } else {
            self.merge_long(piece, out)
        };
        if done.is_none() {
            // Unreachable with a consistent vocabulary; one token per byte rather than a panic.
            out.extend(piece.iter().map(|&b| self.byte_rank(b)));
        }
    }

    /// The merge for short pieces, in a fixed array of parts on the stack (no allocation); the
    /// piece's end is a last, empty part so that every part knows where it ends.
    pub(crate) fn merge_short(&self, piece: &[u8], out: &mut Vec<u32>) -> Option<()> {
        let n = piece.len();
        if n >= SHORT_PIECE {
            return None;
        }
        let end = n as u32;
        let mut parts = [Part {
            start: end,
            rank: NONE,
            pair: NONE,
        }; SHORT_PIECE + 1];
        for (i, (part, &b)) in parts.iter_mut().zip(piece).enumerate() {
            part.start = i as u32;
            part.rank = self.byte_rank(b);
            part.pair = self.merge_rank(piece.get(i..i + 2));
        }
        // Parts 0..count are real; parts[count] marks the end.
        let mut count = n;
        // Each pass merges two parts into one, so there are fewer than n passes.
        for _ in 0..n {
            let mut best = (NONE, 0usize);
            for (i, part) in parts.iter().take(count).enumerate() {
                if part.pair < best.0 {
                    best = (part.pair, i);
                }
            }
            let (rank, i) = best;
            if rank == NONE {
                break;
            }
            // Part i absorbs part i + 1: drop it by rotating it past the end marker.
            parts.get_mut(i)?.rank = rank;
            let tail = parts.get_mut(i + 1..=count)?;
            if !tail.is_empty() {
                tail.rotate_left(1);
            }
            count -= 1;
            // The pairs that touched the merged parts: (i - 1, i) and (i, i + 1).
            let start = parts.get(i)?.start as usize;
            let next_end = parts.get(i + 2).map_or(n, |p| p.start as usize);
            parts.get_mut(i)?.pair = if i + 1 < count {
                self.merge_rank(piece.get(start..next_end))
            } else {
                NONE
            };
            if let Some(prev) = i.checked_sub(1) {
                let prev_start = parts.get(prev)?.start as usize;
                let end = parts.get(i + 1)?.start as usize;
                parts.get_mut(prev)?.pair = self.merge_rank(piece.get(prev_start..end));
            }
        }
        out.extend(parts.iter().take(count).map(|p| p.rank));
        Some(())
    }

    /// The merge for long pieces. Parts are keyed by the byte offset where they start:
    /// `end[s]` is where part `s` ends, `prev[s]` where the part before it starts, `rank[s]` its
    /// token and `pair[s]` the rank of it merged with the next part ([`NONE`] if none, or once
    /// part `s` has been absorbed). Heap entries whose rank no longer matches `pair[s]` are stale.
    /// An entry is one `u64`, the rank above the offset (the order of the pair `(rank, s)` in one
    /// comparison: the heap is most of the time of very long pieces), so a piece must be shorter
    /// than 4 GiB (every text ccv3 reads or expands is far below that; a longer one gets `None`).
    pub(crate) fn merge_long(&self, piece: &[u8], out: &mut Vec<u32>) -> Option<()> {
        let n = piece.len();
        if u32::try_from(n).is_err() {
            return None;
        }
        let key = |r: u32, s: usize| Reverse((u64::from(r) << 32) | s as u64);
        let mut end: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|s| s.wrapping_sub(1)).collect();
        let mut rank: Vec<u32> = piece.iter().map(|&b| self.byte_rank(b)).collect();
        let mut pair: Vec<u32> = vec![NONE; n];
        let mut heap: BinaryHeap<Reverse<u64>> = BinaryHeap::with_capacity(n);
        for s in 0..n.saturating_sub(1) {
            let r = self.merge_rank(piece.get(s..s + 2));
            if r != NONE {
                *pair.get_mut(s)? = r;
                heap.push(key(r, s));
            }
        }
        // Every entry pushed is popped at most once and at most 3n are pushed: bounded.
        while let Some(Reverse(k)) = heap.pop() {
            let (r, s) = ((k >> 32) as u32, (k & u64::from(u32::MAX)) as usize);
            if *pair.get(s)? != r {
                continue;
            }
            // Part s absorbs part t.
            let t = *end.get(s)?;
            let new_end = *end.get(t)?;
            *end.get_mut(s)? = new_end;
            *rank.get_mut(s)? = r;
            *pair.get_mut(t)? = NONE;
            *pair.get_mut(s)? = NONE;
            if new_end < n {
                *prev.get_mut(new_end)? = s;
                let after = *end.get(new_end)?;
                let m = self.merge_rank(piece.get(s..after));
                if m != NONE {
                    *pair.get_mut(s)? = m;
                    heap.push(key(m, s));
                }
            }
            if s > 0 {
                let p = *prev.get(s)?;
                let m = self.merge_rank(piece.get(p..new_end));
                *pair.get_mut(p)? = m;
                if m != NONE {
                    heap.push(key(m, p));
                }
            }
        }
        let mut s = 0;
        while s < n {
            out.push(*rank.get(s)?);
            s = *end.get(s)?;
        }
        Some(())
    }
}
