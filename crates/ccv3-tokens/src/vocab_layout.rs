//! The layout of a compiled vocabulary, shared by `build.rs` (which writes it) and `bpe.rs` (which
//! reads it): the hash of a token's bytes and how a hash table slot packs a rank and a tag.
//!
//! A compiled vocabulary is three little-endian blobs:
//! - `bytes`: every token's bytes, concatenated in rank order;
//! - `offsets`: `n + 1` `u32`s, token `r` being `bytes[offsets[r]..offsets[r + 1]]`;
//! - `slots`: an open-addressing hash table of `u32` slots, a power of two at least twice `n`
//!   long, probed linearly from `hash & (len - 1)`. A slot is [`EMPTY`] or
//!   `tag << RANK_BITS | rank`, the tag being the top [`TAG_BITS`] bits of the hash, so that most
//!   probes that miss never read the token's bytes.

/// Bits of a slot that hold the rank: ranks are below `2^18 = 262_144`.
pub const RANK_BITS: u32 = 18;
/// Bits of a slot that hold the tag (the top bits of the hash).
pub const TAG_BITS: u32 = 32 - RANK_BITS;
/// Mask of the rank bits of a slot.
pub const RANK_MASK: u32 = (1 << RANK_BITS) - 1;
/// An empty slot. Its rank bits are `RANK_MASK`, which no token may have.
pub const EMPTY: u32 = u32::MAX;

const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// Hashes a token's bytes: a multiply-xor over 8-byte words, then a full avalanche so that both
/// the low bits (the slot index) and the top bits (the tag) are well mixed.
#[inline]
pub fn hash(bytes: &[u8]) -> u64 {
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let w = u64::from_le_bytes(<[u8; 8]>::try_from(word).unwrap_or([0; 8]));
        h = (h ^ w).wrapping_mul(K).rotate_left(29);
    }
    let mut tail = [0u8; 8];
    for (to, from) in tail.iter_mut().zip(words.remainder()) {
        *to = *from;
    }
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    // murmur3's 64-bit finaliser
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

/// The tag of a hash: its top [`TAG_BITS`] bits.
#[inline]
pub fn tag(hash: u64) -> u32 {
    (hash >> (64 - TAG_BITS)) as u32
}
