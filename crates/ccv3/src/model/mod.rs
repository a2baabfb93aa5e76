//! The card and lorebook model: typed fields for everything the specs name, and an ordered map of
//! everything else at every level (card, data, book, entry, asset).

mod asset;
pub(crate) mod book;
mod card;
pub(crate) mod card_as_is;
mod card_read;
mod extensions;
pub(crate) mod fields;
pub(crate) mod raw;
pub(crate) mod stream;
mod transcode;

pub use asset::{Asset, AssetUri};
pub(crate) use book::BOOK_FIELDS;
#[cfg(test)]
pub(crate) use book::ENTRY_FIELDS;
pub use book::{Entry, Lorebook};
pub use card::{Card, CardData, SpecVersion, V2_BACKFILL_WARNING};
pub(crate) use card_read::{raw_is_card, CARD_ONLY_FIELDS, ENTRY_MARKERS};
pub use extensions::{Extensions, STASH_KEY};
pub use fields::{KeyOrder, Object};
pub(crate) use raw::Raw;
