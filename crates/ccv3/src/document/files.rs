//! What a read gives: the [`Document`] (a [`CardFile`] or a [`BookFile`]), the [`Container`] it
//! came from and the files read beside a card ([`EmbeddedFile`]).

use crate::diag::Diagnostic;
use crate::lorebook::BookFormat;
use crate::model::{Card, Lorebook};

/// The container a card was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Container {
    /// A JSON file.
    Json,
    /// A PNG or APNG image with card text chunks.
    Png,
    /// A CHARX zip archive.
    Charx,
    /// A TavernAI-era WebP image (EXIF).
    Webp,
    /// A TavernAI-era JPEG image (EXIF).
    Jpeg,
    /// A Backyard AI archive (`.byaf`, a zip with `manifest.json`), read only ([`crate::byaf`]).
    Byaf,
    /// A Voxta package (`.voxpkg`, a zip with `Characters/{id}/character.json`), read only
    /// ([`crate::voxta`]).
    Voxta,
}

impl Container {
    /// `JSON`, `PNG`, `CHARX`, `WebP`, `JPEG`, `BYAF` or `Voxta`.
    pub fn label(self) -> &'static str {
        match self {
            Container::Json => "JSON",
            Container::Png => "PNG",
            Container::Charx => "CHARX",
            Container::Webp => "WebP",
            Container::Jpeg => "JPEG",
            Container::Byaf => "BYAF",
            Container::Voxta => "Voxta",
        }
    }
}

/// A file stored beside the card: a CHARX entry or a PNG `chara-ext-asset_:` chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedFile {
    /// The path inside the CHARX, or the PATH of `chara-ext-asset_:PATH`.
    pub path: String,
    /// The file's bytes.
    pub data: Vec<u8>,
}

/// A card with everything read alongside it.
#[derive(Debug, Clone)]
pub struct CardFile {
    /// The card.
    pub card: Card,
    /// Where it was read from.
    pub container: Container,
    /// Embedded files (CHARX entries other than `card.json`, or PNG asset chunks).
    pub files: Vec<EmbeddedFile>,
    /// The picture the card was embedded in (PNG, JPEG or WebP bytes), when read from bytes.
    pub image: Option<Vec<u8>>,
    /// What the reader repaired or noticed.
    pub diagnostics: Vec<Diagnostic>,
}

impl CardFile {
    /// A card read from JSON text: no embedded files, no picture.
    pub(super) fn json(card: Card, diagnostics: Vec<Diagnostic>) -> Self {
        CardFile {
            card,
            container: Container::Json,
            files: Vec::new(),
            image: None,
            diagnostics,
        }
    }
}

/// A standalone lorebook with its format.
#[derive(Debug, Clone)]
pub struct BookFile {
    /// The book, in the V3 model.
    pub book: Lorebook,
    /// The format it was read from.
    pub format: BookFormat,
    /// What the reader repaired or noticed.
    pub diagnostics: Vec<Diagnostic>,
}

/// Whatever a file holds.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum Document {
    /// A character card.
    Card(CardFile),
    /// A standalone lorebook.
    Lorebook(BookFile),
}

impl Document {
    /// The diagnostics of either kind.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            Document::Card(c) => &c.diagnostics,
            Document::Lorebook(b) => &b.diagnostics,
        }
    }
}
