//! PNG and APNG card chunks: reading, listing and rewriting the text chunks that hold a card.
//!
//! # The PNG chunk layout
//!
//! A PNG (and an APNG, which is a PNG with extra chunks) is an 8-byte signature
//! `89 50 4E 47 0D 0A 1A 0A` followed by chunks. Every chunk is
//!
//! ```text
//! +----------------+--------------+--------------------+----------------------------+
//! | length: u32 BE | type: 4 ASCII| data: length bytes | CRC-32 of type+data: u32 BE |
//! +----------------+--------------+--------------------+----------------------------+
//! ```
//!
//! `length` counts the data only and is at most 2^31-1. The type is four ASCII letters; a
//! lowercase first letter marks an *ancillary* chunk (one a decoder may ignore). `IHDR` comes
//! first, `IEND` (empty) ends the stream; image data lives in `IDAT` (and APNG frames in
//! `fdAT`, with `acTL`/`fcTL` control chunks). Text chunks are ancillary and may sit anywhere
//! between `IHDR` and `IEND`, including after the image data.
//!
//! # The three text chunk forms
//!
//! * `tEXt`: `keyword NUL text`. Keyword is 1-79 Latin-1 bytes; text is Latin-1, uncompressed.
//! * `zTXt`: `keyword NUL method text`, where `method` is 0 (zlib/deflate) and `text` is the
//!   zlib stream of Latin-1 text.
//! * `iTXt`: `keyword NUL flag method language NUL translated-keyword NUL text`, where `flag` 1
//!   means `text` is a zlib stream (method 0) and the text is UTF-8.
//!
//! # Where a card lives
//!
//! Character Card V3 (section "PNG/APNG") stores the card in a `tEXt` chunk with keyword `ccv3`
//! whose value is base64 of the UTF-8 JSON of the V3 card. Older tools (and V3 applications
//! backfilling V2) write keyword `chara` with the same encoding, holding a V2, V1 or even V3 card.
//! Chunks named `chara-ext-asset_:PATH` hold base64 binary data reachable as `__asset:PATH`.
//!
//! # Reading
//!
//! [`read_card_chunks`] walks the chunk stream with an explicit state machine
//! (`Signature -> Length -> Type -> Keyword -> Data | Skip -> Crc`) over any `Read + Seek`. Only
//! text chunks are looked into: their keyword is read first, and only card keywords have their
//! data read. Every other chunk (`IDAT`, `fdAT`, a multi-megabyte `risuai` text chunk, ...) is
//! *seeked past*: image data is never read or inflated, so a 44 MB picture costs what a 4 MB one
//! does. Sizes are checked against [`Limits`] and against the stream length before anything is
//! allocated.
//!
//! Choices where the spec is silent (following what SillyTavern and other readers accept):
//!
//! * `tEXt`, `zTXt` and `iTXt` are all accepted; keywords match ASCII case-insensitively.
//! * Both `ccv3` and `chara` are returned; choosing between them is the caller's job (the spec
//!   says `ccv3` SHOULD win).
//! * When a keyword occurs twice, the first chunk (in file order) whose value decodes is kept and
//!   the others are reported as a warning (`png-duplicate-chunk`); once a key is read, its later
//!   chunks are seeked past like image data (found with one hash lookup, never read or inflated).
//! * One budget per file ([`Limits::max_total_text`]) covers every card text chunk read and
//!   everything its zTXt/iTXt text inflates to, checked while inflating; at most
//!   [`Limits::max_assets`] asset chunks are read; at most 100 diagnostics of one code are listed,
//!   then one counts the rest (issue 12).
//! * Values are base64; whitespace inside, missing padding and the URL-safe alphabet are accepted
//!   with a warning (`png-base64-lenient`); a raw JSON text (starting with `{`) instead of
//!   base64 is accepted with a warning (`png-text-not-base64`).
//! * Asset keywords `chara-ext-asset_:PATH` and `chara-ext-asset_PATH` both give `PATH`.
//! * A bad CRC on a card text chunk is a warning (`png-bad-crc`): text chunks are ancillary.
//!   The CRCs of the other small chunks (up to [`SMALL_CHUNK`] bytes: `IEND`, `tIME`, other
//!   text chunks, ...) are checked too, and a mismatch is the same warning, naming the chunk
//!   type and byte offset; image data (`IDAT`, `fdAT`) and big chunks are seeked past unchecked.
//! * A stream that is truncated or corrupt *after* a `ccv3` or `chara` chunk was read gives the
//!   card and a warning (`png-truncated`, naming the chunk type and byte offset); before that it
//!   is an [`Error::Png`](crate::Error::Png).
//! * Bytes after `IEND` are ignored with a warning (`png-data-after-iend`, naming where they
//!   start).
//! * A card chunk whose value cannot be decoded (bad base64, broken compression) is an error
//!   (`png-card-chunk-undecodable`) only when no other card chunk reads; when the other one
//!   (`chara` beside a broken `ccv3`, say) reads, it is a warning and the card is read from it
//!   (issue 13).
//!
//! # Writing
//!
//! [`write_card_chunks`] removes every `ccv3`, `chara` and `chara-ext-asset_*` chunk in all three
//! forms, inserts the given chunks as `tEXt` right before `IEND`, and copies every other chunk
//! (including APNG `acTL`/`fcTL`/`fdAT`) and any bytes after `IEND` byte for byte, in order.
//!
//! ```
//! let png = ccv3::png::plain_image();
//! let value = ccv3::png::encode_text_value(r#"{"spec":"chara_card_v3"}"#);
//! let out = ccv3::png::write_card_chunks(&png, &[("ccv3", &value)])?;
//! let chunks = ccv3::png::read_card_chunks_from_slice(&out)?;
//! assert_eq!(chunks.ccv3.as_deref(), Some(r#"{"spec":"chara_card_v3"}"#));
//! # Ok::<(), ccv3::Error>(())
//! ```
//!
//! The work is in five modules, as image-rs/png keeps its decoder and encoder apart: `chunk`
//! (the layout and what a read gives), `walk` (the chunk walker), `text` (keywords and values),
//! `read` and `write`; their public items are re-exported here (`crate::png::NAME`).

mod chunk;
mod read;
#[cfg(test)]
mod tests;
mod text;
mod walk;
mod write;

pub use chunk::{is_png, CardChunks, ChunkInfo, ChunkPlace, Limits, SIGNATURE, SMALL_CHUNK};
pub use read::{
    list_chunks, read_card_chunks, read_card_chunks_from_slice, read_exif_chunk, MAX_EXIF_WALK,
};
pub(crate) use read::{read_card_chunks_deferred, read_card_chunks_from, AssetPlaces};
pub use text::{decode_text_value, encode_text_value};
pub(crate) use walk::{append_by_reads, Source};
pub use write::{can_carry_card, plain_image, write_card_chunks, write_card_chunks_to};
pub(crate) use write::{write_card_chunks_with, Carrier};
