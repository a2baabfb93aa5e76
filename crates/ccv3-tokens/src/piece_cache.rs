//! A bounded piece -> token count cache that the caller owns: [`PieceCache`].
//!
//! Counting a text with a BPE encoding cuts it into pieces (a word and the space before it,
//! a number, a run of punctuation) and looks each piece up in the vocabulary: a hash table of
//! several megabytes, so a lookup is one or two cache misses, and a piece that is no token is
//! merged byte pair by byte pair. Real text repeats its pieces all the time (" the", " and",
//! "{{", a name), so a small table of recently counted short pieces answers most of them from
//! memory the CPU already holds (issue 16: `ccv3 index` counts every field of every card).
//!
//! The cache is direct-mapped: [`PieceCache::slots`] slots of 32 bytes, each holding one piece
//! of at most [`MAX_PIECE`] bytes (compared whole: a hit is exact, never a hash match) and its
//! count; a new piece takes its slot from whatever was there. Its memory is fixed when it is
//! made (256 KiB by default), whatever is counted. It is not shared between threads: each thread
//! owns its own and passes it to [`Tokenizer::count_cached`](crate::Tokenizer::count_cached),
//! so there is no lock on the path. A cache remembers which encoding filled it and starts empty
//! when another encoding uses it, so counts of two encodings never mix.

use crate::tiktoken::Encoding;

/// The longest piece (in bytes) the cache holds; longer pieces are counted every time.
pub const MAX_PIECE: usize = 30;

/// Slots of a cache made with [`PieceCache::new`] (256 KiB).
pub const DEFAULT_SLOTS: usize = 8_192;

/// Fewest and most slots [`PieceCache::with_slots`] makes.
const SLOT_RANGE: (usize, usize) = (16, 1 << 20);

/// One cached piece: its bytes (zero-padded), its length (0: empty slot) and its count.
#[derive(Clone, Copy)]
#[repr(align(32))]
struct Slot {
    key: [u8; MAX_PIECE],
    len: u8,
    count: u8,
}

const EMPTY: Slot = Slot {
    key: [0; MAX_PIECE],
    len: 0,
    count: 0,
};

/// Token counts of short pieces, owned by one caller (see the module docs). Pass it to
/// [`Tokenizer::count_cached`](crate::Tokenizer::count_cached); backends without pieces
/// ignore it.
///
/// ```
/// # #[cfg(feature = "bundled")] {
/// use ccv3_tokens::{PieceCache, Tiktoken, Tokenizer};
/// let t = Tiktoken::o200k()?;
/// let mut cache = PieceCache::new();
/// let text = "the lighthouse keeper trims the lamp";
/// assert_eq!(t.count_cached(text, &mut cache), t.count(text));
/// assert_eq!(t.count_cached(text, &mut cache), t.count(text)); // now from the cache
/// # }
/// # Ok::<(), ccv3_tokens::Error>(())
/// ```
#[derive(Clone)]
pub struct PieceCache {
    slots: Box<[Slot]>,
    encoding: Option<Encoding>,
}

impl std::fmt::Debug for PieceCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PieceCache")
            .field("slots", &self.slots.len())
            .field("encoding", &self.encoding)
            .finish()
    }
}

impl Default for PieceCache {
    fn default() -> Self {
        PieceCache::new()
    }
}

impl PieceCache {
    /// An empty cache of [`DEFAULT_SLOTS`] slots.
    pub fn new() -> Self {
        PieceCache::with_slots(DEFAULT_SLOTS)
    }

    /// An empty cache of `slots` slots (32 bytes each), rounded up to a power of two and kept
    /// between 16 and 2^20.
    pub fn with_slots(slots: usize) -> Self {
        let n = slots
            .clamp(SLOT_RANGE.0, SLOT_RANGE.1)
            .checked_next_power_of_two()
            .unwrap_or(SLOT_RANGE.1);
        PieceCache {
            slots: vec![EMPTY; n].into_boxed_slice(),
            encoding: None,
        }
    }

    /// How many slots (pieces) the cache holds at most.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Forgets every piece.
    pub fn clear(&mut self) {
        self.slots.fill(EMPTY);
        self.encoding = None;
    }

    /// Makes the cache `encoding`'s: emptied when another encoding filled it.
    pub(crate) fn claim(&mut self, encoding: Encoding) {
        if self.encoding != Some(encoding) {
            self.clear();
            self.encoding = Some(encoding);
        }
    }

    /// The slot of a piece with hash `h`.
    #[inline]
    fn index(&self, h: u64) -> usize {
        // The vocabulary table probes from the low bits; these come from the high ones.
        (h >> 40) as usize & (self.slots.len() - 1)
    }

    /// The count of `piece` (hash `h`), if cached.
    #[inline]
    pub(crate) fn get(&self, h: u64, piece: &[u8]) -> Option<usize> {
        let slot = self.slots.get(self.index(h))?;
        // A byte loop, not `==` on slices: that is a call to `memcmp`, which costs more than
        // comparing the few bytes of a piece.
        let same =
            usize::from(slot.len) == piece.len() && slot.key.iter().zip(piece).all(|(a, b)| a == b);
        same.then_some(usize::from(slot.count))
    }

    /// Remembers that `piece` (hash `h`) has `count` tokens; pieces longer than
    /// [`MAX_PIECE`] (or counts above 255) are not kept.
    #[inline]
    pub(crate) fn put(&mut self, h: u64, piece: &[u8], count: usize) {
        let (Ok(len), Ok(count)) = (u8::try_from(piece.len()), u8::try_from(count)) else {
            return;
        };
        let at = self.index(h);
        let Some(slot) = self.slots.get_mut(at) else {
            return;
        };
        let Some(key) = slot.key.get_mut(..piece.len()) else {
            return;
        };
        key.copy_from_slice(piece);
        slot.len = len;
        slot.count = count;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_bounded_powers_of_two() {
        assert_eq!(PieceCache::new().slots(), DEFAULT_SLOTS);
        assert_eq!(PieceCache::with_slots(0).slots(), 16);
        assert_eq!(PieceCache::with_slots(100).slots(), 128);
        assert_eq!(PieceCache::with_slots(usize::MAX).slots(), 1 << 20);
        assert_eq!(std::mem::size_of::<Slot>(), 32);
    }

    #[test]
    fn a_hit_is_the_same_bytes_not_the_same_hash() {
        let mut c = PieceCache::with_slots(16);
        c.put(7, b" the", 1);
        assert_eq!(c.get(7, b" the"), Some(1));
        // Same slot, other bytes: a miss.
        assert_eq!(c.get(7, b" tha"), None);
        assert_eq!(c.get(7, b" th"), None);
        // Too long to keep.
        let long = [b'a'; MAX_PIECE + 1];
        c.put(9, &long, 3);
        assert_eq!(c.get(9, &long), None);
        c.clear();
        assert_eq!(c.get(7, b" the"), None);
    }

    #[test]
    fn another_encoding_empties_the_cache() {
        let mut c = PieceCache::new();
        c.claim(Encoding::O200k);
        c.put(1, b"x", 1);
        c.claim(Encoding::O200k);
        assert_eq!(c.get(1, b"x"), Some(1));
        c.claim(Encoding::Cl100k);
        assert_eq!(c.get(1, b"x"), None);
    }
}
