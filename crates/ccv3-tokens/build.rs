//! Compiles the bundled tiktoken vocabularies (`data/*.tiktoken`: one `base64(token) rank` line per
//! token, ranks 0, 1, 2, ... in order) into the ready-to-use layout of `src/vocab_layout.rs`, so
//! that a process maps them from its own binary instead of decoding them at start-up.

use std::fs;
use std::path::{Path, PathBuf};

#[path = "src/vocab_layout.rs"]
#[allow(dead_code)]
mod vocab_layout;

use vocab_layout::{hash, pack, unpack, EMPTY, MAX_TOKEN_LEN, OFFSET_BITS, RANK_BITS};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/vocab_layout.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for name in ["o200k_base", "cl100k_base"] {
        let source = format!("data/{name}.tiktoken");
        println!("cargo:rerun-if-changed={source}");
        let text = fs::read_to_string(&source).unwrap_or_else(|e| panic!("{source}: {e}"));
        compile(name, &text, &out);
    }
}

fn compile(name: &str, text: &str, out: &Path) {
    let mut bytes: Vec<u8> = Vec::with_capacity(text.len());
    let mut offsets: Vec<u32> = vec![0];
    for (line_no, line) in text.lines().enumerate() {
        let (b64, rank) = line
            .split_once(' ')
            .unwrap_or_else(|| panic!("{name} line {}: no space", line_no + 1));
        let rank: usize = rank
            .parse()
            .unwrap_or_else(|e| panic!("{name} line {}: rank: {e}", line_no + 1));
        assert_eq!(rank, line_no, "{name}: ranks must be 0, 1, 2, ... in order");
        decode_base64(b64, &mut bytes)
            .unwrap_or_else(|| panic!("{name} line {}: bad base64", line_no + 1));
        offsets.push(u32::try_from(bytes.len()).expect("vocabulary under 4 GiB"));
    }
    let n = offsets.len() - 1;
    assert!(
        n < (1 << RANK_BITS) - 1,
        "{name}: too many tokens for the slot layout"
    );
    assert!(
        bytes.len() < (1 << OFFSET_BITS),
        "{name}: tokens too long for the slot layout"
    );
    let len = (2 * n).next_power_of_two();
    let mask = len - 1;
    let mut slots = vec![EMPTY; len];
    for rank in 0..n {
        let (start, end) = (offsets[rank] as usize, offsets[rank + 1] as usize);
        let token = &bytes[start..end];
        assert!(
            token.len() <= MAX_TOKEN_LEN,
            "{name}: token {rank} too long"
        );
        let h = hash(token);
        let mut i = h as usize & mask;
        while slots[i] != EMPTY {
            let (_, other_start, other_len, _) = unpack(slots[i]);
            let other = &bytes[other_start..other_start + other_len];
            assert_ne!(other, token, "{name}: duplicate token at rank {rank}");
            i = (i + 1) & mask;
        }
        slots[i] = pack(rank as u32, start, token.len(), h);
        assert_ne!(slots[i], EMPTY);
    }
    let write = |suffix: &str, data: &[u8]| {
        let path = out.join(format!("{name}.{suffix}"));
        fs::write(&path, data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    };
    write("bytes", &bytes);
    let slots: Vec<u8> = slots.iter().flat_map(|w| w.to_le_bytes()).collect();
    write("slots", &slots);
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
