//! Whether a V3 card's text is read into the model and written back as the same JSON value
//! (issue 29): the card-level rule beside the entries' [`super::book::EntryAsIs`], so that a
//! binding can build such a card with its own JSON parser while the core only checks it.

use super::book::{Shape, BOOK_FIELDS};
use super::card::{data_field, DATA_FIELDS, REQUIRED_COUNT};

/// Unknown keys of one object are compared pairwise to find one written twice: past this many
/// the card is not taken as it stands (bounded work on hostile input).
const MAX_EXTRA_KEYS: usize = 64;

/// The book fields that must be there for the book to stand as the model keeps it (the reader
/// adds a missing `extensions`), as bits of their places in [`BOOK_FIELDS`]; `entries` is
/// there whenever the caller found it.
const REQUIRED_BOOK_FIELDS: u32 = 1 << 5;

/// Unknown keys of one object, each once and at most [`MAX_EXTRA_KEYS`] of them.
#[derive(Default)]
struct Extras(Vec<String>);

impl Extras {
    /// Notes `key`; false when it was already there or there are too many.
    fn add(&mut self, key: &str) -> bool {
        if self.0.len() >= MAX_EXTRA_KEYS || self.0.iter().any(|k| k == key) {
            return false;
        }
        self.0.push(key.to_string());
        true
    }
}

/// A V3 card's top level, `data` and `data.character_book` (its entries apart), fed their fields
/// in order: the card stands as the model keeps it when `spec` is `"chara_card_v3"`,
/// `spec_version` a string that is not empty, each key occurs once, every field the spec names
/// in `data` and in the book has the spec's type (nothing the reader repairs, drops or
/// converts; `null` included), the required ones are there, and no top-level field fills one
/// that `data` lacks (the reader's hybrid cards).
#[derive(Default)]
pub(crate) struct CardAsIs {
    spec: bool,
    spec_version: bool,
    top_seen: u32,
    top_extra: Extras,
    /// Which of [`DATA_FIELDS`] the top level names (a hybrid card's fields).
    top_fields: u32,
    data_seen: u32,
    data_extra: Extras,
    book_seen: u32,
    book_extra: Extras,
    changed: bool,
}

impl CardAsIs {
    /// Notes a top-level key other than `data`; `text` is the value when it is a string.
    pub(crate) fn add_top(&mut self, key: &str, text: Option<&str>) {
        let bit = match key {
            "spec" => {
                self.spec = text == Some("chara_card_v3");
                1
            }
            "spec_version" => {
                self.spec_version = text.is_some_and(|t| !t.is_empty());
                2
            }
            _ => {
                self.changed |= !self.top_extra.add(key);
                let field = if key == "creatorcomment" {
                    data_field("creator_notes")
                } else {
                    data_field(key)
                };
                if let Some(i) = field {
                    self.top_fields |= 1 << i;
                }
                return;
            }
        };
        self.changed |= self.top_seen & bit != 0;
        self.top_seen |= bit;
    }

    /// Notes a key of `data` with a value of shape `shape` (`assets`: [`Shape::Object`] when
    /// every item is an asset that stands as it is, see [`AssetAsIs`]).
    pub(crate) fn add_data(&mut self, key: &str, shape: Shape) {
        let Some(i) = data_field(key) else {
            self.changed |= !self.data_extra.add(key);
            return;
        };
        let bit = 1u32 << i;
        self.changed |= self.data_seen & bit != 0;
        self.data_seen |= bit;
        let fits = match DATA_FIELDS.get(i).copied().unwrap_or("") {
            "tags" | "alternate_greetings" | "group_only_greetings" | "source" => {
                shape == Shape::Strings
            }
            "extensions" | "character_book" | "creator_notes_multilingual" | "assets" => {
                shape == Shape::Object
            }
            "creation_date" | "modification_date" => shape == Shape::Number,
            _ => matches!(shape, Shape::Str { .. }),
        };
        self.changed |= !fits;
    }

    /// Notes a key of `data.character_book` other than `entries`.
    pub(crate) fn add_book(&mut self, key: &str, shape: Shape) {
        let Some(i) = BOOK_FIELDS.iter().position(|k| *k == key) else {
            self.changed |= !self.book_extra.add(key);
            return;
        };
        let bit = 1u32 << i;
        self.changed |= self.book_seen & bit != 0;
        self.book_seen |= bit;
        let fits = match key {
            "name" | "description" => matches!(shape, Shape::Str { .. }),
            "scan_depth" | "token_budget" => shape == Shape::Number,
            "recursive_scanning" => shape == Shape::Bool,
            "extensions" => shape == Shape::Object,
            _ => false,
        };
        self.changed |= !fits;
    }

    /// Whether the card, all its fields noted, stands as the model keeps it.
    pub(crate) fn as_is(&self) -> bool {
        let required = (1u32 << REQUIRED_COUNT) - 1;
        !self.changed
            && self.spec
            && self.spec_version
            && self.data_seen & required == required
            && self.top_fields & !self.data_seen == 0
            && self.book_seen & REQUIRED_BOOK_FIELDS == REQUIRED_BOOK_FIELDS
    }
}

/// Whether an asset object stands as the model keeps it, fed its fields in order: `type`,
/// `uri`, `name` and `ext` are strings, each there once, other keys once each.
#[derive(Default)]
pub(crate) struct AssetAsIs {
    seen: u8,
    extra: Extras,
    changed: bool,
}

impl AssetAsIs {
    /// Notes the field `key` with a value of shape `shape`.
    pub(crate) fn add(&mut self, key: &str, shape: Shape) {
        let Some(i) = ["type", "uri", "name", "ext"]
            .iter()
            .position(|k| *k == key)
        else {
            self.changed |= !self.extra.add(key);
            return;
        };
        let bit = 1u8 << i;
        self.changed |= self.seen & bit != 0 || !matches!(shape, Shape::Str { .. });
        self.seen |= bit;
    }

    /// Whether the asset, all its fields noted, stands as it is.
    pub(crate) fn as_is(&self) -> bool {
        !self.changed && self.seen == 0b1111
    }
}
