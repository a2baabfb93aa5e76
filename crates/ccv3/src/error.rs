//! The one error type of the `ccv3` crate.
//!
//! Top-level variants say whose fault it is and where: a container problem names the chunk, the
//! zip entry or the byte offset; a JSON problem names line and column. Non-fatal spec violations
//! are not errors: they are [`Diagnostic`](crate::Diagnostic)s.

use std::fmt;

/// Everything that can stop a card or lorebook from being read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing the underlying file or stream failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// The input is not JSON, or not the JSON shape a card or lorebook has.
    #[error("JSON at line {line} column {column}: {problem}")]
    Json {
        /// 1-based line of the fault (0 when unknown).
        line: usize,
        /// 1-based column of the fault (0 when unknown).
        column: usize,
        /// What is wrong.
        problem: String,
    },
    /// A PNG/APNG chunk stream is broken or holds a broken card chunk.
    #[error("PNG chunk {chunk} at byte {offset}: {problem}")]
    Png {
        /// The chunk type (`tEXt`, `IHDR`, ...) or `signature`.
        chunk: String,
        /// Byte offset of the chunk (or fault) in the file.
        offset: u64,
        /// What is wrong.
        problem: String,
    },
    /// A CHARX (zip) archive or one of its entries is broken or hostile.
    #[error("CHARX entry {entry:?}: {problem}")]
    Charx {
        /// The zip entry name (empty when the archive itself is at fault).
        entry: String,
        /// What is wrong.
        problem: String,
    },
    /// A WebP or JPEG legacy card could not be read.
    #[error("{format} at byte {offset}: {problem}")]
    Image {
        /// `WebP` or `JPEG`.
        format: &'static str,
        /// Byte offset of the fault.
        offset: u64,
        /// What is wrong.
        problem: String,
    },
    /// The input holds no card or lorebook that ccv3 recognises.
    #[error("not a character card or lorebook: {0}")]
    Unrecognized(String),
    /// A data problem that stops reading or writing (for example a card without `data`).
    #[error("{}{problem}", if path.is_empty() { String::new() } else { format!("{path}: ") })]
    Format {
        /// JSON path of the fault (`data.character_book.entries[3]`), or empty.
        path: String,
        /// What is wrong.
        problem: String,
    },
    /// A safety limit was hit (size, count, compression ratio, nesting).
    #[error("limit exceeded: {0}")]
    Limit(String),
    /// The caller asked for something impossible (for example an unknown output format).
    #[error("invalid request: {0}")]
    Parameter(String),
}

impl Error {
    /// Builds an [`Error::Json`] from a `serde_json` error, keeping its position.
    pub fn from_json(err: &serde_json::Error) -> Self {
        let mut problem = err.to_string();
        // serde_json appends " at line L column C"; we print the position ourselves.
        if let Some(idx) = problem.rfind(" at line ") {
            problem.truncate(idx);
        }
        Error::Json {
            line: err.line(),
            column: err.column(),
            problem,
        }
    }

    /// Builds an [`Error::Format`] at a JSON path.
    pub fn format(path: impl fmt::Display, problem: impl Into<String>) -> Self {
        Error::Format {
            path: path.to_string(),
            problem: problem.into(),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
