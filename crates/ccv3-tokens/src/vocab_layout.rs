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
    fold_mul(h ^ tail_word(words.remainder()), K)
}

/// The last 0 to 7 bytes of a token as a little-endian word, zero-padded: the same value as
/// shifting them in one by one, from two overlapping reads (most tokens are this short).
#[inline]
fn tail_word(rest: &[u8]) -> u64 {
    let n = rest.len();
    let byte_at = |at: usize| rest.get(at).map_or(0, |&b| u64::from(b));
    let u32_at = |at: usize| {
        rest.get(at..at + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map_or(0, |b| u64::from(u32::from_le_bytes(b)))
    };
    match n {
        0 => 0,
        1..=3 => byte_at(0) | byte_at(n / 2) << (8 * (n / 2)) | byte_at(n - 1) << (8 * (n - 1)),
        _ => u32_at(0) | u32_at(n - 4) << (8 * (n - 4)),
    }
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

/// The first bytes of a vocabulary file (see [`file`]).
pub const FILE_MAGIC: &[u8; 8] = b"ccv3voc1";

/// Bytes of a vocabulary file's name field (the encoding name, NUL-padded).
const NAME_LEN: usize = 16;

/// Bytes of a vocabulary file's header.
pub const FILE_HEADER_LEN: usize = FILE_MAGIC.len() + NAME_LEN + 8 + 8;

/// One compiled vocabulary in one file: [`FILE_MAGIC`], the encoding name (NUL-padded to 16
/// bytes), the lengths of `bytes` and `slots` (`u64`, little-endian), then `bytes` and `slots`.
/// Reading it back ([`parse_file`]) is a few length checks: no per-token work.
#[allow(dead_code)]
pub fn file(name: &str, bytes: &[u8], slots: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(FILE_HEADER_LEN + bytes.len() + slots.len());
    out.extend_from_slice(FILE_MAGIC);
    let mut field = [0u8; NAME_LEN];
    for (f, b) in field.iter_mut().zip(name.bytes()) {
        *f = b;
    }
    out.extend_from_slice(&field);
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(&(slots.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
    out.extend_from_slice(slots);
    out
}

/// Splits a vocabulary file (see [`file`]) into its encoding name, `bytes` and `slots`; the
/// error names what is wrong.
#[allow(dead_code)]
pub fn parse_file(file: &[u8]) -> Result<(&str, &[u8], &[u8]), String> {
    if file.len() < FILE_HEADER_LEN || !file.starts_with(FILE_MAGIC) {
        return Err("not a ccv3 vocabulary file (no ccv3voc1 header)".to_string());
    }
    let field = file
        .get(FILE_MAGIC.len()..FILE_MAGIC.len() + NAME_LEN)
        .unwrap_or_default();
    let name_len = field.iter().position(|&b| b == 0).unwrap_or(NAME_LEN);
    let name = std::str::from_utf8(field.get(..name_len).unwrap_or_default())
        .map_err(|_| "the encoding name in the header is not UTF-8".to_string())?;
    let number = |at: usize| {
        file.get(at..at + 8)
            .and_then(|w| <[u8; 8]>::try_from(w).ok())
            .map(u64::from_le_bytes)
            .unwrap_or(u64::MAX)
    };
    let (bytes_len, slots_len) = (
        number(FILE_MAGIC.len() + NAME_LEN),
        number(FILE_HEADER_LEN - 8),
    );
    let body = file.get(FILE_HEADER_LEN..).unwrap_or_default();
    let expected = bytes_len.checked_add(slots_len);
    if expected != Some(body.len() as u64) {
        return Err(format!(
            "the header announces {bytes_len} + {slots_len} bytes, the file holds {}",
            body.len()
        ));
    }
    let (bytes, slots) = body.split_at(bytes_len as usize);
    Ok((name, bytes, slots))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash as first written (a byte at a time for the tail): compiled vocabularies and
    /// registered vocabulary files depend on its values, so the faster tail must not change them.
    fn hash_bytewise(bytes: &[u8]) -> u64 {
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

    #[test]
    fn hash_is_unchanged_by_the_two_read_tail() {
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut bytes = Vec::new();
        for len in 0..64 {
            for _ in 0..50 {
                bytes.clear();
                for _ in 0..len {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    bytes.push(x as u8);
                }
                assert_eq!(hash(&bytes), hash_bytewise(&bytes), "{bytes:?}");
            }
        }
    }
}
