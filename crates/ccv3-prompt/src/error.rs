//! The crate's error type.

use std::path::PathBuf;

/// What can go wrong while reading prompt inputs or assembling a prompt.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A prompt template (list of slots) is not valid.
    #[error("prompt template: {0}")]
    Template(String),
    /// An instruct template is not valid.
    #[error("instruct template {name}: {problem}")]
    Instruct {
        /// The template's name or file.
        name: String,
        /// What is wrong.
        problem: String,
    },
    /// A chat, state or book could not be read (the lorebook engine's error: the chat reader
    /// is [`ccv3_lore::chat::parse_chat`]).
    #[error(transparent)]
    Lore(#[from] ccv3_lore::LoreError),
    /// The requested greeting does not exist.
    #[error("greeting {index} does not exist: the card has {available} greeting(s) for this chat")]
    Greeting {
        /// The index asked for.
        index: usize,
        /// How many greetings the card has for this kind of chat.
        available: usize,
    },
    /// An input is larger than the crate accepts.
    #[error("{what} is too large: {size} bytes, the limit is {limit}")]
    Limit {
        /// What was too large.
        what: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
}
