//! Character Card V1/V2/V3: one lossless model, every container of the spec, and validation.
//!
//! *Lenient reader, strict validator.* Reading accepts what real applications write (numbers as
//! strings, missing arrays, `null`s, V1 fields beside `data`, a BOM, `ccv3` and `chara` chunks
//! both present) and records each repair as a [`Diagnostic`]; [`validate`] reports every spec
//! violation with a JSON path. Unknown fields at every level are kept in their original order and
//! written back.
//!
//! # Embedding
//! The crate starts no threads, maps no files and reads no clock unless asked, and builds for
//! `wasm32-unknown-unknown`. Cargo features (both off by default):
//! - `parallel`: a big lorebook's entries are converted on two threads (same results as on one);
//! - `mmap`: [`read_file_with`] maps big files when [`ReadOptions::mmap`] asks for it.
//!
//! Dates come from the caller: [`Card::new`] leaves them unset, [`Card::new_at`] takes "now".
// One module maps files read-only (`mapped`, feature `mmap`); everything else is safe code.
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![deny(rustdoc::broken_intra_doc_links)]

mod diag;
mod document;
mod error;
mod json_text;
mod mapped;
mod model;
mod posread;
mod read_options;
#[cfg(test)]
mod test_corpus;

pub mod agnai;
pub mod backfill;
pub mod byaf;
pub mod charx;
pub mod decorator;
pub mod entries_span;
pub mod faraday;
pub mod json;
pub mod legacy;
pub mod lorebook;
pub mod png;
pub mod regex_check;
pub mod summary;
pub mod textgen;
pub mod validate;
pub mod voxta;
pub mod wrapped;
pub mod yaml;

pub use diag::{code_info, has_errors, Code, Diagnostic, Diagnostics, Severity, CODES};
pub use document::{
    asset_bytes, card_json, charx_layout, charx_layout_deferred, check_document, conversion_notes,
    conversion_notes_deferred, into_charx_layout, media_type, read_bytes, read_bytes_with,
    read_file, read_file_deferred, read_file_with, read_open_file_reusing, read_open_file_with,
    read_seekable, read_seekable_with, write_card_deferred, write_card_to, write_charx, write_json,
    write_lorebook_v3, write_png, BookFile, CardFile, CardVersion, Container, DeferredFiles,
    Document, EmbeddedFile,
};
pub use error::{Error, Result};
pub use model::{
    Asset, AssetUri, Card, CardData, Entry, Extensions, KeyOrder, Lorebook, Object, SpecVersion,
    V2_BACKFILL_WARNING,
};
pub use posread::ReadScratch;
pub use read_options::{ReadOptions, MAX_FILE_LEN};
pub use regex_check::{check_regex_syntax, set_regex_syntax_check, SyntaxCheck};
pub use summary::{
    permanent_tokens, read_summary_bytes, read_summary_file, read_summary_seekable, CardSummary,
    PERMANENT_FIELDS,
};
pub use validate::{validate_card, validate_lorebook};
