//! The layout of a compiled vocabulary, shared by `build.rs` (which writes it) and `bpe.rs` (which
//! reads it): the hash of a token's bytes and how a hash table slot packs a token.
//!
//! A compiled vocabulary is two little-endian blobs:
//! - `bytes`: every token's bytes, concatenated in rank order;
//! - `slots`: an open-addressing hash table of `u64` slots, a power of two at least twice the
//!   number of tokens long, probed linearly from `hash & (len - 1)`. A slot is [`EMPTY`] or
//!   packs, from the low bits up, the token's rank ([`RANK_BITS`]), the offset of its bytes in
//!   `bytes` ([`OFFSET_BITS`]), their length ([`LEN_BITS`]) and a tag, the top [`TAG_BITS`] bits
//!   of the hash. So one slot read answers a lookup: most misses stop at the tag or the length,
//!   and a hit compares the bytes once.

/// Bits of a slot that hold the rank: ranks are below `2^18 = 262_144`.
pub const RANK_BITS: u32 = 18;
/// Bits of a slot that hold the offset of the token's bytes: the bytes are under 4 MiB.
pub const OFFSET_BITS: u32 = 22;
/// Bits of a slot that hold the length of the token: tokens are under 256 bytes.
pub const LEN_BITS: u32 = 8;
/// Bits of a slot that hold the tag (the top bits of the hash).
pub const TAG_BITS: u32 = 64 - RANK_BITS - OFFSET_BITS - LEN_BITS;
/// An empty slot. Its rank bits are all ones, which no token may have.
pub const EMPTY: u64 = u64::MAX;

/// The longest token the layout can hold.
pub const MAX_TOKEN_LEN: usize = (1 << LEN_BITS) - 1;

const SEED: u64 = 0x243F_6A88_85A3_08D3;
const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// Multiplies to 128 bits and folds the halves together.
#[inline]
fn fold_mul(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

/// Hashes a token's bytes: a folded multiply per 8-byte word (the last one zero-padded).
#[inline]
pub fn hash(bytes: &[u8]) -> u64 {
    let mut h = SEED ^ bytes.len() as u64;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let w = u64::from_le_bytes(<[u8; 8]>::try_from(word).unwrap_or([0; 8]));
        h = fold_mul(h ^ w, K);
    }
    let mut tail = 0u64;
    for (i, &b) in words.remainder().iter().enumerate() {
        tail |= u64::from(b) << (8 * i);
    }
    fold_mul(h ^ tail, K)
}

/// Packs a slot (used by `build.rs` only).
#[allow(dead_code)]
pub fn pack(rank: u32, offset: usize, len: usize, hash: u64) -> u64 {
    let mut slot = u64::from(rank) & ((1 << RANK_BITS) - 1);
    slot |= (offset as u64 & ((1 << OFFSET_BITS) - 1)) << RANK_BITS;
    slot |= (len as u64 & ((1 << LEN_BITS) - 1)) << (RANK_BITS + OFFSET_BITS);
    slot | (tag(hash) << (RANK_BITS + OFFSET_BITS + LEN_BITS))
}

/// The tag of a hash: its top [`TAG_BITS`] bits.
#[inline]
pub fn tag(hash: u64) -> u64 {
    hash >> (64 - TAG_BITS)
}

/// Unpacks a slot into (rank, offset, length, tag).
#[inline]
pub fn unpack(slot: u64) -> (u32, usize, usize, u64) {
    let rank = (slot & ((1 << RANK_BITS) - 1)) as u32;
    let offset = ((slot >> RANK_BITS) & ((1 << OFFSET_BITS) - 1)) as usize;
    let len = ((slot >> (RANK_BITS + OFFSET_BITS)) & ((1 << LEN_BITS) - 1)) as usize;
    (
        rank,
        offset,
        len,
        slot >> (RANK_BITS + OFFSET_BITS + LEN_BITS),
    )
}
