//! What a function is given: a file's bytes or a JSON object ([`Source`]).

/// A card or lorebook given to a function: a file's bytes, or a JSON object.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// The bytes of a file (JSON, PNG/APNG, CHARX, WebP, JPEG, or a lorebook file).
    Bytes(&'a [u8]),
    /// An object as [`read_card`](crate::read_card) or [`read_lorebook`](crate::read_lorebook)
    /// return it (or any JSON card or lorebook).
    Json(&'a serde_json::Value),
}
