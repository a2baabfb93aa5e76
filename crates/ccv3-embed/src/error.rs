//! The one error type of the facade, with stable codes for the bindings.

use std::fmt;

/// Why a facade function failed: a stable kebab-case `code` and a lowercase `message`.
///
/// Codes (the bindings expose them as `error.code`):
/// - `bad-input`: the caller's value has the wrong shape or an unknown option value;
/// - `read-failed`: the bytes are not a card or lorebook ccv3 can read;
/// - `limit`: a size or count limit was hit;
/// - `write-failed`: the card or lorebook could not be written;
/// - `tokenizer-unavailable`: the tokenizer could not be loaded;
/// - `chat`: the chat is not in a shape the chat reader accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedError {
    /// A stable kebab-case code (see the type's docs).
    pub code: &'static str,
    /// What went wrong, naming the value concerned.
    pub message: String,
}

impl EmbedError {
    /// A new error with `code` and `message`.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        EmbedError {
            code,
            message: message.into(),
        }
    }

    /// A `bad-input` error.
    pub fn bad_input(message: impl Into<String>) -> Self {
        Self::new("bad-input", message)
    }

    /// A `read-failed` error.
    pub fn read_failed(message: impl Into<String>) -> Self {
        Self::new("read-failed", message)
    }

    /// A `write-failed` error.
    pub fn write_failed(message: impl Into<String>) -> Self {
        Self::new("write-failed", message)
    }

    /// The error of reading with `ccv3`: `limit` for a limit, else `read-failed`.
    pub(crate) fn from_read(e: &ccv3::Error) -> Self {
        match e {
            ccv3::Error::Limit(_) => Self::new("limit", e.to_string()),
            _ => Self::read_failed(e.to_string()),
        }
    }

    /// The error of a caller's JSON value that `ccv3` could not read as a card or lorebook.
    pub(crate) fn from_value(e: &ccv3::Error) -> Self {
        match e {
            ccv3::Error::Limit(_) => Self::new("limit", e.to_string()),
            _ => Self::bad_input(e.to_string()),
        }
    }
}

impl fmt::Display for EmbedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for EmbedError {}
