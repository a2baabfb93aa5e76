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
//! count; a new piece takes its slot from whatever was there. A piece is held as a [`Key`]: its
//! bytes as four zero-padded little-endian words with its length in the last, so a probe is one
//! multiply for the slot and four word compares, with no loop over the bytes and no branch on
//! the piece's length. Its memory is fixed when it is
//! made (256 KiB by default), whatever is counted. It is not shared between threads: each thread
//! owns its own and passes it to [`Tokenizer::count_cached`](crate::Tokenizer::count_cached),
//! so there is no lock on the path. A cache remembers which encoding filled it and starts empty
//! when another encoding uses it, so counts of two encodings never mix.

use crate::encoding::Encoding;

/// The longest piece (in bytes) the cache holds; longer pieces are counted every time.
pub const MAX_PIECE: usize = 30;

/// Slots of a cache made with [`PieceCache::new`] (256 KiB).
pub const DEFAULT_SLOTS: usize = 8_192;

/// Fewest and most slots [`PieceCache::with_slots`] makes.
const SLOT_RANGE: (usize, usize) = (16, 1 << 20);

/// One cached piece: the words of its [`Key`], the last with the count in its top byte (all
/// zero: an empty slot, which no key of a piece of one byte or more equals).
#[derive(Clone, Copy)]
#[repr(align(32))]
struct Slot([u64; 4]);

const EMPTY: Slot = Slot([0; 4]);

/// Where a key's length sits in its last word (the byte after the piece's last 6 bytes).
const LEN_SHIFT: u32 = 48;
/// Where a slot's count sits in its last word (the top byte).
const COUNT_SHIFT: u32 = 56;
/// The bits of a slot's last word that belong to the key.
const KEY_BITS: u64 = (1 << COUNT_SHIFT) - 1;

/// A piece of at most [`MAX_PIECE`] bytes as the cache compares it: its bytes as four
/// little-endian words, zero past its end, and its length in bits 48-55 of the last word
/// (bytes 24-29 of the piece fill that word's low 48 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Key([u64; 4]);

/// For each piece length, the bits of a key's four words that hold the piece's bytes.
const PIECE_BITS: [[u64; 4]; MAX_PIECE + 1] = {
    let mut masks = [[0u64; 4]; MAX_PIECE + 1];
    let mut len = 0;
    while len <= MAX_PIECE {
        let mut k = 0;
        while k < 4 {
            let bytes = len.saturating_sub(8 * k);
            masks[len][k] = if bytes >= 8 {
                u64::MAX
            } else {
                (1u64 << (8 * bytes)) - 1
            };
            k += 1;
        }
        len += 1;
    }
    masks
};

impl Key {
    /// The key of `piece`, if it is 1 to [`MAX_PIECE`] bytes long (an empty key would equal an
    /// empty slot).
    pub(crate) fn new(piece: &[u8]) -> Option<Key> {
        if piece.is_empty() || piece.len() > MAX_PIECE {
            return None;
        }
        let mut padded = [0u8; 32];
        padded.get_mut(..piece.len())?.copy_from_slice(piece);
        let mut words = [0u64; 4];
        for (word, bytes) in words.iter_mut().zip(padded.chunks_exact(8)) {
            *word = u64::from_le_bytes(<[u8; 8]>::try_from(bytes).ok()?);
        }
        words[3] |= (piece.len() as u64) << LEN_SHIFT;
        Some(Key(words))
    }

    /// The key of `text[start..end]` read in word loads from `text`, which must hold 8 bytes
    /// from `start` for a piece of up to 8 bytes and 32 for a longer one (else `None`, and the
    /// caller takes [`Key::new`]; the same key).
    #[inline]
    pub(crate) fn in_text(text: &[u8], start: usize, end: usize) -> Option<Key> {
        let len = end.checked_sub(start).filter(|&n| n > 0)?;
        let bits = PIECE_BITS.get(len)?;
        if len <= 8 {
            // Most pieces: one load.
            let word: [u8; 8] = text.get(start..start.checked_add(8)?)?.try_into().ok()?;
            let word = u64::from_le_bytes(word) & bits[0];
            return Some(Key([word, 0, 0, (len as u64) << LEN_SHIFT]));
        }
        let window: &[u8; 32] = text.get(start..start.checked_add(32)?)?.try_into().ok()?;
        let word = |k: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&window[8 * k..8 * k + 8]);
            u64::from_le_bytes(w)
        };
        Some(Key([
            word(0) & bits[0],
            word(1) & bits[1],
            word(2) & bits[2],
            word(3) & bits[3] | (len as u64) << LEN_SHIFT,
        ]))
    }

    /// The piece's slot among `mask + 1`: a multiply of its words folded together.
    #[inline]
    fn slot(&self, mask: usize) -> usize {
        let [a, b, c, d] = self.0;
        let mixed = (a ^ b.rotate_left(16) ^ c.rotate_left(32) ^ d.rotate_left(24))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (mixed >> 40) as usize & mask
    }
}

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

    /// The count of the piece of `key`, if cached.
    #[inline]
    pub(crate) fn get(&self, key: &Key) -> Option<usize> {
        let Slot([a, b, c, d]) = *self.slots.get(key.slot(self.slots.len() - 1))?;
        let [x, y, z, w] = key.0;
        // One test of all four words: no branch per word.
        let differ = (a ^ x) | (b ^ y) | (c ^ z) | ((d & KEY_BITS) ^ w);
        (differ == 0).then_some((d >> COUNT_SHIFT) as usize)
    }

    /// Remembers that the piece of `key` has `count` tokens (counts above 255 are not kept).
    #[inline]
    pub(crate) fn put(&mut self, key: &Key, count: usize) {
        let Ok(count) = u8::try_from(count) else {
            return;
        };
        let at = key.slot(self.slots.len() - 1);
        if let Some(slot) = self.slots.get_mut(at) {
            let [a, b, c, d] = key.0;
            *slot = Slot([a, b, c, d | u64::from(count) << COUNT_SHIFT]);
        }
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

    fn key(piece: &[u8]) -> Key {
        Key::new(piece).expect("short piece")
    }

    #[test]
    fn a_hit_is_the_same_bytes_not_the_same_slot() {
        let mut c = PieceCache::with_slots(16);
        c.put(&key(b" the"), 1);
        assert_eq!(c.get(&key(b" the")), Some(1));
        // Other bytes, or the same bytes cut shorter or padded with NUL: a miss, whatever slot.
        for other in [&b" tha"[..], b" th", b" the\0", b"\0 the"] {
            assert_eq!(c.get(&key(other)), None, "{other:?}");
        }
        // Too long to keep, or empty (never a piece).
        assert_eq!(Key::new(&[b'a'; MAX_PIECE + 1]), None);
        assert_eq!(Key::new(b""), None);
        let longest = [b'z'; MAX_PIECE];
        c.put(&key(&longest), 255);
        assert_eq!(c.get(&key(&longest)), Some(255));
        c.put(&key(b"x"), 256);
        assert_eq!(c.get(&key(b"x")), None);
        c.clear();
        assert_eq!(c.get(&key(b" the")), None);
    }

    /// Issue 16: the key read in word loads from the text equals the key of the piece copied
    /// out, for every length up to [`MAX_PIECE`] and every start, with bytes of every value
    /// after the piece (they must not leak into the key).
    #[test]
    fn keys_read_from_the_text_equal_keys_of_the_piece() {
        let text: Vec<u8> = (0..100u8).map(|i| i.wrapping_mul(37) | 0x80).collect();
        for start in 0..text.len() {
            for end in start..text.len().min(start + MAX_PIECE + 2) {
                let piece = &text[start..end];
                match Key::in_text(&text, start, end) {
                    Some(k) => assert_eq!(Some(k), Key::new(piece), "{start}..{end}"),
                    None => assert!(
                        start + if piece.len() <= 8 { 8 } else { 32 } > text.len()
                            || piece.is_empty()
                            || piece.len() > MAX_PIECE
                    ),
                }
            }
        }
        assert_eq!(PIECE_BITS[0], [0; 4]);
        assert_eq!(PIECE_BITS[3], [0xFF_FFFF, 0, 0, 0]);
        assert_eq!(PIECE_BITS[8], [u64::MAX, 0, 0, 0]);
        assert_eq!(
            PIECE_BITS[30],
            [u64::MAX, u64::MAX, u64::MAX, 0xFFFF_FFFF_FFFF]
        );
    }

    #[test]
    fn another_encoding_empties_the_cache() {
        let mut c = PieceCache::new();
        c.claim(Encoding::O200k);
        c.put(&key(b"x"), 1);
        c.claim(Encoding::O200k);
        assert_eq!(c.get(&key(b"x")), Some(1));
        c.claim(Encoding::Cl100k);
        assert_eq!(c.get(&key(b"x")), None);
    }
}
