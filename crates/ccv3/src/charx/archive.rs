//! What a CHARX read gives and what bounds it: the archive's files ([`CharxArchive`],
//! [`CharxFile`]), the [`Limits`] of a read, and where the card lives ([`CARD_JSON`]).

use crate::Diagnostic;
#[allow(unused_imports)] // used by intra-doc links
use crate::Error;

/// The name of the card file at the root of every CHARX.
pub const CARD_JSON: &str = "card.json";

/// Safety limits applied while reading a CHARX.
///
/// The defaults are far above real exports (the biggest real cards are about 60 MB) and keep
/// every read, and every `ccv3` command over a CHARX, under 1 GiB of memory; they stop zip bombs
/// early. [`Limits::max_total_size`] is the budget of one file: every entry's decompressed bytes
/// count against it (small entries too), checked against the declared sizes before anything is
/// decompressed and again while decompressing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most entries (files and directories) the central directory may list. Default 20 000.
    pub max_entries: usize,
    /// Largest decompressed size of one entry, in bytes. Default 256 MiB.
    pub max_entry_size: u64,
    /// Largest decompressed size of all entries read, in bytes. Default 256 MiB.
    pub max_total_size: u64,
    /// Largest decompressed:compressed ratio of an entry over 1 MiB. Default 1000.
    pub max_ratio: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_entries: 20_000,
            max_entry_size: 256 * 1024 * 1024,
            max_total_size: 256 * 1024 * 1024,
            max_ratio: 1000,
        }
    }
}

/// One file of a CHARX other than `card.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharxFile {
    /// The path inside the zip (`assets/icon/images/main.png`), `/`-separated, checked safe.
    pub path: String,
    /// The decompressed bytes.
    pub data: Vec<u8>,
}

/// A CHARX as read: the card JSON bytes, every other file, and what the reader noticed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharxArchive {
    /// The bytes of `card.json`, unchanged.
    pub card_json: Vec<u8>,
    /// Every other file in zip order (directories skipped, duplicates after the first dropped).
    pub files: Vec<CharxFile>,
    /// Bytes in front of the zip (a JPEG or a self-extracting stub); 0 for a plain zip.
    pub prefix_len: u64,
    /// Warnings: non-ASCII paths, duplicate paths, symlinks read as files, a prefix.
    pub diagnostics: Vec<Diagnostic>,
}

impl CharxArchive {
    /// The file at `path` (exact, case-sensitive match), if any.
    pub fn file(&self, path: &str) -> Option<&CharxFile> {
        self.files.iter().find(|f| f.path == path)
    }
}
