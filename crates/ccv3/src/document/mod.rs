//! Reading any card or lorebook file, and writing cards to every container.
//!
//! [`read_bytes`] sniffs the container from the bytes, never from a file name: PNG/APNG (by
//! signature), CHARX (a zip, possibly behind a JPEG or self-extracting stub), TavernAI-era JPEG and
//! WebP (EXIF), else JSON (a card, or a lorebook in any supported format).
//!
//! # Assets across containers
//! Embedded assets move with the card and their URIs are rewritten to the target's scheme:
//! - to CHARX, every asset with bytes (`embeded://` files, `__asset:` chunks, `data:` URLs, and
//!   the PNG image itself for a `ccdefault:` icon) is stored at the spec's
//!   `assets/{type}/{images|audio|...}/` path and its URI becomes `embeded://PATH`; other archive
//!   files (RisuAI's `module.risum`, `x_meta/`) are kept at their paths;
//! - to PNG, the main icon becomes the image (its URI `ccdefault:`) when it is a PNG, and other
//!   embedded assets become `chara-ext-asset_:N` chunks with URIs `__asset:N`;
//! - to JSON, embedded assets become `data:` URLs, so nothing is lost.
//!
//! `http(s)` URLs and `ccdefault:` are never fetched or changed.
//!
//! The work is in four modules, as `png` keeps its decoder and encoder apart: [`files`] (what a
//! read gives), `read`, `write` and `notes` (conversion notes and checks); their items are
//! re-exported here, so every path is `crate::document::NAME`.

mod files;
mod notes;
mod read;
pub(crate) use read::{card_from_card_json, card_from_image_text};
mod write;

pub use files::{BookFile, CardFile, Container, Document, EmbeddedFile};
pub use notes::{check_document, conversion_notes, conversion_notes_deferred};
pub use read::{
    read_bytes, read_bytes_with, read_file, read_file_deferred, read_file_with,
    read_open_file_reusing, read_open_file_with, read_seekable, read_seekable_with, DeferredFiles,
};
pub use write::{
    asset_bytes, card_json, charx_layout, charx_layout_deferred, into_charx_layout, media_type,
    write_card_deferred, write_card_to, write_charx, write_json, write_lorebook_v3, write_png,
    CardVersion,
};
