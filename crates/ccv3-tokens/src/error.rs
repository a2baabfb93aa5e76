//! The crate's one error type.

use std::path::PathBuf;

/// Everything that can go wrong while choosing or loading a tokenizer.
///
/// Counting itself never fails: once a [`crate::Tokenizer`] exists, `count` returns a number.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tokenizer name was not recognized (caller mistake).
    #[error("unknown tokenizer {0:?}: expected o200k, o200k_base, cl100k, cl100k_base, estimate or a path ending in .json")]
    UnknownKind(String),
    /// A bundled tiktoken encoding could not be built.
    #[error("tiktoken encoding {encoding}: {problem}")]
    Encoding {
        /// The encoding name, e.g. `o200k_base`.
        encoding: &'static str,
        /// What went wrong.
        problem: String,
    },
    /// A tiktoken encoding's vocabulary is neither bundled (the `bundled` feature is off) nor
    /// registered with [`crate::register_vocabulary`].
    #[error("tiktoken encoding {encoding}: its vocabulary is not loaded (this build bundles none): register the {encoding}.vocab file with ccv3_tokens::register_vocabulary first")]
    VocabularyMissing {
        /// The encoding name, e.g. `o200k_base`.
        encoding: &'static str,
    },
    /// A tokenizer file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A tokenizer file was read but is not a usable tokenizer.
    #[error("{}: {problem}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// A file is larger than the loader accepts.
    #[error("{}: file is {size} bytes, more than the limit of {limit}", path.display())]
    Limit {
        /// The file.
        path: PathBuf,
        /// Its size in bytes.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// The requested backend needs a cargo feature this build does not have.
    #[error("{what} needs the cargo feature {feature:?} of ccv3-tokens")]
    FeatureDisabled {
        /// What was asked for.
        what: String,
        /// The feature to enable.
        feature: &'static str,
    },
}
