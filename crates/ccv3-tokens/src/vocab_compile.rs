//! Compiles a tiktoken vocabulary (one `base64(token) rank` line per token, ranks 0, 1, 2, ... in
//! order) into the layout of `vocab_layout.rs`. Used by `build.rs`, and by tests that need a
//! vocabulary file when the `bundled` feature is off.

use crate::vocab_layout::{hash, pack, unpack, EMPTY, MAX_TOKEN_LEN, OFFSET_BITS, RANK_BITS};

/// Compiles the vocabulary `text` of encoding `name` into its `bytes` and `slots` blobs; the
/// error names the line or token at fault.
pub fn compile(name: &str, text: &str) -> Result<(Vec<u8>, Vec<u8>), String> {
    let mut bytes: Vec<u8> = Vec::with_capacity(text.len());
    let mut offsets: Vec<u32> = vec![0];
    for (line_no, line) in text.lines().enumerate() {
        let at = || format!("{name} line {}", line_no + 1);
        let (b64, rank) = line
            .split_once(' ')
            .ok_or_else(|| format!("{}: no space", at()))?;
        let rank: usize = rank.parse().map_err(|e| format!("{}: rank: {e}", at()))?;
        if rank != line_no {
            return Err(format!("{name}: ranks must be 0, 1, 2, ... in order"));
        }
        decode_base64(b64, &mut bytes).ok_or_else(|| format!("{}: bad base64", at()))?;
        let end = u32::try_from(bytes.len()).map_err(|_| format!("{name}: over 4 GiB"))?;
        offsets.push(end);
    }
    let n = offsets.len() - 1;
    if n >= (1 << RANK_BITS) - 1 {
        return Err(format!("{name}: too many tokens for the slot layout"));
    }
    if bytes.len() >= (1 << OFFSET_BITS) {
        return Err(format!("{name}: tokens too long for the slot layout"));
    }
    let len = (2 * n).next_power_of_two();
    let mask = len - 1;
    let mut slots = vec![EMPTY; len];
    for (rank, w) in offsets.windows(2).enumerate() {
        let token = &bytes[w[0] as usize..w[1] as usize];
        if token.len() > MAX_TOKEN_LEN {
            return Err(format!("{name}: token {rank} too long"));
        }
        let h = hash(token);
        let mut i = h as usize & mask;
        while slots[i] != EMPTY {
            let (_, other_start, other_len, _) = unpack(slots[i]);
            if &bytes[other_start..other_start + other_len] == token {
                return Err(format!("{name}: duplicate token at rank {rank}"));
            }
            i = (i + 1) & mask;
        }
        slots[i] = pack(rank as u32, w[0] as usize, token.len(), h);
    }
    let slots = slots.iter().flat_map(|w| w.to_le_bytes()).collect();
    Ok((bytes, slots))
}

/// Decodes standard base64 with `=` padding, appending to `out`; `None` on a bad character.
fn decode_base64(text: &str, out: &mut Vec<u8>) -> Option<()> {
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(())
}
