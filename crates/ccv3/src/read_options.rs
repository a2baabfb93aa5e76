//! How a card or lorebook is read: [`ReadOptions`], the file access and safety limits every
//! reader takes, and the default limits ([`MAX_FILE_LEN`], [`MAX_JSON_LEN`],
//! [`MAX_JSON_VALUES`]). It sits below every reader (JSON, PNG, CHARX, `.risum`, the model's
//! streaming parser), which all take these options, so that none of them imports the reading
//! entry points back.

use crate::lorebook::risum::RpackTable;
use crate::{charx, png};

/// The largest file [`read_file`](crate::read_file) reads whole into memory by default
/// (256 MiB; a JSON file, a JPEG or WebP card, a PNG whose picture is kept):
/// [`ReadOptions::max_file_len`] changes it.
/// PNGs are otherwise never read whole, and CHARX archives are streamed.
pub const MAX_FILE_LEN: u64 = 256 << 20;

/// The most JSON text decoded by default (128 MiB; [`ReadOptions::max_json_len`] changes
/// it): bigger inputs are refused before any allocation. Real cards and books are far smaller
/// (the biggest cards are about 60 MB with their images, big lorebooks 40 MB), and a text's
/// strings are held a few times over while a card is converted (parsed, copied into a PNG's
/// two chunks, base64), which this bound keeps under 1 GiB.
pub const MAX_JSON_LEN: usize = 128 << 20;

/// The most JSON values (strings, numbers, objects, arrays, ...) and object keys a text may hold
/// by default ([`ReadOptions::max_json_values`] changes it). A parsed value costs tens
/// to hundreds of bytes however short its text (`0,` is two bytes), so a 120 MiB array of zeros
/// took 9 GiB; a 50,000-entry lorebook holds 2.5 million values and keys.
pub const MAX_JSON_VALUES: u64 = 3_000_000;

/// How [`read_file_with`](crate::read_file_with) and [`read_bytes_with`](crate::read_bytes_with)
/// read: file access and the safety limits.
///
/// Every limit has a default far above real cards and books (the biggest cards are about 60 MB)
/// that keeps a read, and every `ccv3` command, under 1 GiB of memory; each error for a limit
/// names the option that raises it (issue 12). The struct is `non_exhaustive`: start from
/// `ReadOptions::default()` and set fields.
///
/// ```
/// let opts = ccv3::ReadOptions::default().mmap(true).keep_image(true);
/// assert!(opts.mmap && opts.keep_image);
/// let mut bigger = ccv3::ReadOptions::default();
/// bigger.charx.max_total_size = 1 << 30;
/// bigger.png.max_total_text = 1 << 30;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Map big files (1 MiB and more, not PNGs) read-only instead of reading them into memory
    /// (default `false`). Needs the crate's `mmap` feature; without it the file is read. A map
    /// saves a copy, but a file truncated by another process while it is being read ends the
    /// process with `SIGBUS`: ask for it only where that trade is acceptable (a command-line tool,
    /// say).
    pub mmap: bool,
    /// [`read_file_with`](crate::read_file_with) keeps the picture of a PNG card in
    /// [`CardFile::image`](crate::CardFile::image) (read whole, at most
    /// [`ReadOptions::max_file_len`] bytes), as [`read_bytes`](crate::read_bytes) does; default
    /// `false`: the picture is only seeked past. Converting a card to another PNG or to CHARX
    /// needs it.
    pub keep_image: bool,
    /// The largest file read whole into memory, in bytes (a JSON file, a JPEG or WebP card, a
    /// PNG whose picture is kept); bigger files are refused from their metadata. Default
    /// [`MAX_FILE_LEN`] (256 MiB).
    pub max_file_len: u64,
    /// The largest JSON text decoded, in bytes, wherever it comes from (a file, a PNG chunk,
    /// a CHARX's `card.json`). Default [`MAX_JSON_LEN`] (128 MiB).
    pub max_json_len: u64,
    /// The most values (strings, numbers, objects, arrays, ...) and keys one JSON text may hold;
    /// texts of at least twice as many bytes are counted (strings skipped with `memchr`) before
    /// parsing. Default [`MAX_JSON_VALUES`] (3 million; a 50,000-entry lorebook holds 2.5
    /// million).
    pub max_json_values: u64,
    /// The limits of the PNG reader, among them the budget of all text read and inflated from
    /// one file ([`png::Limits::max_total_text`]).
    pub png: png::Limits,
    /// The limits of the CHARX reader, among them the budget of all bytes decompressed from one
    /// archive ([`charx::Limits::max_total_size`]).
    pub charx: charx::Limits,
    /// An RPack decoding table for `.risum` modules in place of RisuAI's
    /// ([`RpackTable::RISUAI`], observed from RisuAI's encoder), should a RisuAI
    /// release change it ([`RpackTable::from_map_file`] reads a table file);
    /// default `None`: RisuAI's table.
    pub rpack: Option<RpackTable>,
    /// Convert a big lorebook's entries (past the first 64) on a second thread as well as on the
    /// calling one (default `false`: the library starts no thread unless asked). Needs the
    /// crate's `parallel` feature; without it this is ignored. The result is the same either
    /// way. Worth it where one file is read and a core is idle (a command reading one card);
    /// not where the caller already reads files on every core (issue 16: `ccv3 validate DIR`).
    pub entry_thread: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            mmap: false,
            keep_image: false,
            max_file_len: MAX_FILE_LEN,
            max_json_len: MAX_JSON_LEN as u64,
            max_json_values: MAX_JSON_VALUES,
            png: png::Limits::default(),
            charx: charx::Limits::default(),
            rpack: None,
            entry_thread: false,
        }
    }
}

impl ReadOptions {
    /// These options with [`ReadOptions::mmap`] set to `on`.
    pub fn mmap(mut self, on: bool) -> Self {
        self.mmap = on;
        self
    }

    /// These options with [`ReadOptions::keep_image`] set to `on`.
    pub fn keep_image(mut self, on: bool) -> Self {
        self.keep_image = on;
        self
    }

    /// These options with [`ReadOptions::entry_thread`] set to `on`.
    pub fn entry_thread(mut self, on: bool) -> Self {
        self.entry_thread = on;
        self
    }
}
