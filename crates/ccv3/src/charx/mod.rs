//! CHARX archives: the zip container of Character Card V3, at the level of bytes and paths.
//!
//! # Layout (`SPEC_V3.md`, "CHARX")
//!
//! A `.charx` file is a zip archive:
//!
//! ```text
//! card.json                          the CharacterCardV3 object (MUST, at the root)
//! assets/{type}/{kind}/{name}.{ext}  embedded assets, referenced as `embeded://assets/...`
//! module.risum                       RisuAI module (lorebook, regex, triggers), opaque to us
//! x_meta/{name}.json                 RisuAI per-asset metadata, opaque to us
//! *.json                             other application data at the root (MAY), opaque to us
//! ```
//!
//! * `{type}` is where the asset is used: `icon`, `background`, `emotion`, `user_icon`, `other`,
//!   or an application type (`x_...`). `{kind}` is chosen by file extension: `images`, `audio`,
//!   `video`, `l2d`, `3d`, `ai`, `fonts`, `code` or `other` (see [`asset_dir`]).
//! * Paths are case sensitive and separated by `/`. The card refers to an asset with the URI
//!   `embeded://path/inside/zip` (the spec's spelling); readers also accept `embedded://`.
//!   Resolving URIs is the card model's job; this module deals in zip paths and bytes.
//! * SillyTavern-style files may carry a JPEG (a "CHARX-JPEG" polyglot) or a self-extracting
//!   stub in front of the zip. The reader finds the zip through its end-of-central-directory
//!   record and reports the number of bytes in front of it as [`CharxArchive::prefix_len`].
//!
//! [`read_charx`] returns `card.json` and every other file (zip order, directories skipped),
//! so an application can write back what it does not understand; [`read_charx_card_json`]
//! decompresses `card.json` alone. [`write_charx`] writes `card.json` first, then the files, with
//! fixed timestamps so the same input always gives the same bytes.
//!
//! # Safety rules
//!
//! Every archive is hostile until read. The reader parses the zip records itself (end of central
//! directory, zip64 records, central directory, local headers) and decompresses one entry at a
//! time:
//!
//! * **Paths.** An entry name is rejected (an [`Error::Charx`] naming it) when it is empty, longer
//!   than 4096 bytes, absolute (`/x`), starts with a drive letter (`C:x`), contains a backslash,
//!   a NUL or another control character, or has an empty, `.` or `..` segment (a trailing `/`
//!   marks a directory and is allowed). Names that are not UTF-8 (and not flagged as such) are
//!   read as code page 437, as the zip format says. Non-ASCII names are accepted with a
//!   `charx-non-ascii-path` warning, since the spec says paths SHOULD be ASCII.
//! * **Entries.** Encrypted entries, compression methods other than stored (0) and deflate (8),
//!   and multi-disk archives are rejected. A duplicate name keeps the first entry and adds a
//!   `charx-duplicate-path` warning. A missing `card.json` is an error naming it.
//! * **Limits** ([`Limits`], each an [`Error::Limit`]): the number of entries is checked against
//!   the end record before the central directory is read; declared sizes are checked per entry
//!   and in total before anything is decompressed; a declared compression ratio above
//!   [`Limits::max_ratio`] is refused for entries over 1 MiB. Declared sizes are then *not
//!   trusted*: the decompressor stops one byte after the declared size, a short or long entry is
//!   an error, and the CRC-32 must match. Memory therefore stays within the limits whatever
//!   the headers say.
//! * **Extraction.** [`safe_join`] maps a zip path to a file under a root directory and can never
//!   leave it. The writer refuses the same unsafe paths the reader refuses.
//!
//! # Choices where the spec is silent
//!
//! * Symlink entries are kept as plain files holding the link text (warning
//!   `charx-symlink-as-file`); nothing is ever created as a link.
//! * A `card.json` that is not at the root (`folder/card.json`) does not count; the error says
//!   where one was found. `Card.json` (other case) does not count either (paths are case sensitive).
//! * Written archives use deflate for text-like files and store already-compressed media
//!   (png, jpg, webp, mp3, mp4, zip, ...), with 1980-01-01 timestamps and Unix mode 0644.
//! * `prefix_len` is the offset of the first local file header, so it covers a JPEG or a stub
//!   whether the writer of the stub adjusted the zip offsets or not.
//!
//! # Example
//!
//! ```
//! use ccv3::charx::{read_charx_from_slice, write_charx_to_vec, CharxFile, Limits};
//!
//! let files = vec![CharxFile { path: "assets/icon/images/main.png".into(), data: vec![0x89, b'P'] }];
//! let bytes = write_charx_to_vec(br#"{"spec":"chara_card_v3"}"#, &files)?;
//! let archive = read_charx_from_slice(&bytes, &Limits::default())?;
//! assert_eq!(archive.card_json, br#"{"spec":"chara_card_v3"}"#);
//! assert_eq!(archive.files, files);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod archive;
mod paths;
mod read;
mod write;

#[cfg(test)]
mod tests;

pub use archive::{CharxArchive, CharxFile, Limits, CARD_JSON};
pub use paths::{
    asset_dir, asset_kind, safe_join, sanitize_file_name, validate_zip_path, PathDeduper,
};
pub use read::{
    find_zip_start, looks_like_charx, read_charx, read_charx_card_json, read_charx_each,
    read_charx_from_slice, read_zip_files, reader_lists_card_json, CharxInfo,
};
pub(crate) use read::{read_charx_deferred, CharxPlaces};
pub(crate) use write::write_charx_with;
pub use write::{write_charx, write_charx_to_vec};

#[allow(unused_imports)] // used by intra-doc links
use crate::Error;
