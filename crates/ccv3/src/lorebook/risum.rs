//! RisuAI `.risum` files: a RisuAI module ([`super::risu_module`]) in RisuAI's binary container.
//!
//! The layout (RisuAI `src/ts/process/modules.ts`, `exportModule`/`importModule`):
//!
//! ```text
//! 111            one byte, the magic
//! 0              one byte, the version
//! u32 LE, bytes  the main block: RPack-encoded UTF-8 JSON {"type": "risuModule", "module": {...}}
//! then, for each asset of module.assets, in order:
//! 1, u32 LE, bytes   an asset block: the asset's RPack-encoded bytes
//! 0              the end
//! ```
//!
//! RPack is a byte-for-byte substitution: every byte is replaced through a 256-entry table.
//! ccv3 reads with [`RpackTable::RISUAI`], the table observed by running RisuAI's own encoder
//! (`scripts/risum-table/observe.mjs` ran its `encode`/`decode` on every byte value and wrote
//! [`super::risum_table`]; nothing of RisuAI's source is copied). A caller can give another
//! table with [`crate::ReadOptions::rpack`] ([`RpackTable::from_map_file`] reads a 512-byte
//! `rpack_map.bin` layout, encoding then decoding table, or a bare decoding table), should a
//! RisuAI release change it.
//!
//! Reading is bounded: each block's length must fit in what is left of the input, at most
//! [`MAX_ASSETS`] asset blocks are read, and the main block is JSON read under the usual JSON
//! limits. Asset blocks are kept, decoded, in the book's `extensions.risuai.risum_assets` as
//! base64 text (a lorebook has no other place for files).

use crate::error::{Error, Result};
use serde_json::Value;

/// The first byte of a `.risum` file.
pub const MAGIC: u8 = 111;

/// The most asset blocks read from one file.
pub const MAX_ASSETS: usize = 10_000;

/// RPack's decoding table: byte `b` of an encoded block stands for `table[b]`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RpackTable(pub [u8; 256]);

impl std::fmt::Debug for RpackTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RpackTable(..)")
    }
}

impl RpackTable {
    /// RisuAI's table, as observed from its encoder ([`super::risum_table::RISUAI_DECODE`]);
    /// what `.risum` files are read with unless [`crate::ReadOptions::rpack`] gives another.
    pub const RISUAI: RpackTable = RpackTable(super::risum_table::RISUAI_DECODE);

    /// A decoding table from RisuAI's `rpack_map.bin` (512 bytes: the encoding table, then the
    /// decoding table) or from a 256-byte decoding table.
    ///
    /// # Errors
    ///
    /// [`Error::Parameter`] when the bytes are neither, or the table is not a permutation (two
    /// bytes would decode to the same byte).
    pub fn from_map_file(bytes: &[u8]) -> Result<Self> {
        let decode = match bytes.len() {
            512 => bytes.get(256..),
            256 => Some(bytes),
            _ => None,
        };
        let Some(decode) = decode else {
            return Err(Error::Parameter(format!(
                "an RPack table is 512 bytes (RisuAI's rpack_map.bin) or 256 bytes, not {}",
                bytes.len()
            )));
        };
        let mut table = [0u8; 256];
        table.copy_from_slice(decode);
        let mut seen = [false; 256];
        for b in table {
            if std::mem::replace(&mut seen[usize::from(b)], true) {
                return Err(Error::Parameter(format!(
                    "not an RPack table: byte {b} is the decoding of two bytes"
                )));
            }
        }
        Ok(RpackTable(table))
    }

    /// Decodes an RPack block.
    pub fn decode(&self, block: &[u8]) -> Vec<u8> {
        block.iter().map(|b| self.0[usize::from(*b)]).collect()
    }
}

/// True when `bytes` start as a `.risum` file does (magic, version 0, room for a length).
///
/// ```
/// assert!(ccv3::lorebook::risum::is_risum(&[111, 0, 2, 0, 0, 0]));
/// assert!(!ccv3::lorebook::risum::is_risum(b"{\"type\": \"risuModule\"}"));
/// ```
pub fn is_risum(bytes: &[u8]) -> bool {
    bytes.len() >= 6 && bytes.first() == Some(&MAGIC) && bytes.get(1) == Some(&0)
}

/// A `.risum` file's blocks, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Risum {
    /// The main block's JSON (`{"type": "risuModule", "module": {...}}`), not yet parsed.
    pub main: Vec<u8>,
    /// The asset blocks, in order.
    pub assets: Vec<Vec<u8>>,
}

/// Splits a `.risum` file into its blocks and decodes them with `table`.
///
/// # Errors
///
/// [`Error::Format`] naming the byte offset when the file is cut short or a block marker is
/// neither 0 nor 1; [`Error::Limit`] past [`MAX_ASSETS`] blocks.
///
/// ```
/// use ccv3::lorebook::risum::{is_risum, read_risum, RpackTable};
/// // A module written by RisuAI's own exporter.
/// let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/wild/risu_module.risum"));
/// assert!(is_risum(bytes));
/// let risum = read_risum(bytes, &RpackTable::RISUAI)?;
/// let main: serde_json::Value = serde_json::from_slice(&risum.main).unwrap();
/// assert_eq!(main["type"], "risuModule");
/// assert_eq!(main["module"]["name"], "Lighthouse Module");
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn read_risum(bytes: &[u8], table: &RpackTable) -> Result<Risum> {
    if !is_risum(bytes) {
        return Err(Error::format(
            "byte 0",
            "not a RisuAI module: a .risum file starts with bytes 111 and 0",
        ));
    }
    let mut at = 2usize;
    let block = |at: &mut usize, what: &str| -> Result<&[u8]> {
        let len = bytes
            .get(*at..*at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or_else(|| {
                Error::format(
                    format!("byte {at}"),
                    format!("the {what} length is cut short"),
                )
            })?;
        let start = *at + 4;
        let data = start
            .checked_add(len)
            .and_then(|end| bytes.get(start..end))
            .ok_or_else(|| {
                Error::format(
                    format!("byte {at}"),
                    format!(
                        "the {what} says {len} bytes, but {} are left",
                        bytes.len().saturating_sub(start)
                    ),
                )
            })?;
        *at = start + len;
        Ok(data)
    };
    let main = table.decode(block(&mut at, "main block")?);
    let mut assets = Vec::new();
    loop {
        match bytes.get(at) {
            None | Some(0) => break,
            Some(1) => {
                if assets.len() >= MAX_ASSETS {
                    return Err(Error::Limit(format!(
                        "a .risum file with more than {MAX_ASSETS} asset blocks"
                    )));
                }
                at += 1;
                assets.push(table.decode(block(&mut at, "asset block")?));
            }
            Some(other) => {
                return Err(Error::format(
                    format!("byte {at}"),
                    format!("a .risum block marker is 1 (an asset) or 0 (the end), not {other}"),
                ))
            }
        }
    }
    Ok(Risum { main, assets })
}

/// The asset blocks as JSON for `extensions.risuai.risum_assets`: one base64 string each.
pub(crate) fn assets_json(assets: &[Vec<u8>]) -> Value {
    Value::Array(
        assets
            .iter()
            .map(|a| Value::String(base64_simd::STANDARD.encode_to_string(a)))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A made-up RPack-like table for tests (not RisuAI's): decode(b) = 167 * b + 13 mod 256.
    pub(crate) fn test_table() -> RpackTable {
        let mut t = [0u8; 256];
        for (i, slot) in t.iter_mut().enumerate() {
            *slot = ((i * 167 + 13) % 256) as u8;
        }
        RpackTable(t)
    }

    /// Encodes with the inverse of `table`.
    pub(crate) fn encode(table: &RpackTable, data: &[u8]) -> Vec<u8> {
        let mut inv = [0u8; 256];
        for (i, b) in table.0.iter().enumerate() {
            inv[usize::from(*b)] = i as u8;
        }
        data.iter().map(|b| inv[usize::from(*b)]).collect()
    }

    /// A `.risum` file of `main` and `assets`, encoded with `table`.
    pub(crate) fn risum_bytes(table: &RpackTable, main: &[u8], assets: &[&[u8]]) -> Vec<u8> {
        let mut out = vec![MAGIC, 0];
        out.extend((main.len() as u32).to_le_bytes());
        out.extend(encode(table, main));
        for a in assets {
            out.push(1);
            out.extend((a.len() as u32).to_le_bytes());
            out.extend(encode(table, a));
        }
        out.push(0);
        out
    }

    #[test]
    fn risum_blocks_decode_with_the_given_table() {
        let t = test_table();
        let file = risum_bytes(&t, br#"{"type":"risuModule"}"#, &[b"\x89PNG", b"abc"]);
        let r = read_risum(&file, &t).unwrap();
        assert_eq!(r.main, br#"{"type":"risuModule"}"#);
        assert_eq!(r.assets, [b"\x89PNG".to_vec(), b"abc".to_vec()]);
        // No end marker: the end of the input ends the blocks too.
        let r2 = read_risum(&file[..file.len() - 1], &t).unwrap();
        assert_eq!(r2, r);
    }

    #[test]
    fn risum_risuai_table_is_a_permutation_and_reads_risuai_export_bytes() {
        // The table observed from RisuAI's encoder (scripts/risum-table/observe.mjs, RisuAI
        // src/ts/rpack/rpack_bg.wasm): a bijection, accepted as a bare 256-byte table.
        let t = RpackTable::RISUAI;
        assert_eq!(RpackTable::from_map_file(&t.0).unwrap(), t);
        // RisuAI's exportModule starts the main block with `{"module":` (JSON.stringify of
        // {module, type}); these are the bytes its encoder gives for `{\n  "module"`.
        let encoded = [
            0xe6, 0x6e, 0x61, 0x61, 0x20, 0x2d, 0x40, 0xe2, 0xb2, 0x4c, 0x05, 0x20,
        ];
        let file = [&[MAGIC, 0, 12, 0, 0, 0][..], &encoded, &[0]].concat();
        assert_eq!(read_risum(&file, &t).unwrap().main, b"{\n  \"module\"");
    }

    #[test]
    fn risum_hostile_lengths_and_markers_are_errors_naming_the_byte() {
        let t = test_table();
        let mut big = vec![MAGIC, 0];
        big.extend(u32::MAX.to_le_bytes());
        big.extend(b"xy");
        let err = read_risum(&big, &t).unwrap_err().to_string();
        assert!(
            err.contains("byte 2") && err.contains("4294967295"),
            "{err}"
        );
        let mut bad = risum_bytes(&t, b"{}", &[]);
        let n = bad.len();
        bad[n - 1] = 7;
        let err = read_risum(&bad, &t).unwrap_err().to_string();
        assert!(err.contains("not 7"), "{err}");
        let mut cut = risum_bytes(&t, b"{}", &[b"abcdef"]);
        cut.truncate(cut.len() - 3);
        assert!(read_risum(&cut, &t).is_err());
        assert!(read_risum(b"{}", &t).is_err());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        #[test]
        fn risum_random_blocks_never_panic(tail in proptest::collection::vec(0u8..4, 0..64)) {
            let mut file = vec![MAGIC, 0];
            file.extend(tail);
            let _ = read_risum(&file, &test_table());
            let _ = crate::read_bytes_with(&file, &crate::ReadOptions {
                rpack: Some(test_table()),
                ..crate::ReadOptions::default()
            });
        }
    }

    #[test]
    fn risum_table_comes_from_risuai_map_file_shapes_only() {
        let t = test_table();
        let mut file = vec![0u8; 256];
        file.extend(t.0);
        assert_eq!(RpackTable::from_map_file(&file).unwrap(), t);
        assert_eq!(RpackTable::from_map_file(&t.0).unwrap(), t);
        assert!(RpackTable::from_map_file(&[0u8; 100]).is_err());
        assert!(
            RpackTable::from_map_file(&[0u8; 256]).is_err(),
            "not a permutation"
        );
    }
}
