//! Token counting behind one trait, for the lorebook budget and prompt assembly.
//!
//! # What it is
//!
//! - [`Tokenizer`]: `count(text) -> usize` and `name()`, nothing more is required. Counting never
//!   fails and never panics, whatever the text.
//! - Backends:
//!   - [`Tiktoken`]: OpenAI's `o200k_base` (the default) and `cl100k_base`, bundled in the
//!     binary (no download at build or run time), each built once per process on first use.
//!     Without the `bundled` feature (on by default) the crate holds no vocabulary: an encoding
//!     is available once its file is passed to [`register_vocabulary`] (files written by
//!     `cargo run -p ccv3-tokens --example export_vocab -- DIR`), and is a clear
//!     [`Error::VocabularyMissing`] before.
//!   - [`Estimate`]: SillyTavern's guesstimate, `ceil(utf16_units / 3.35)`, for when speed or a
//!     model-independent figure matters more than accuracy.
//!   - [`HfTokenizer`]: a HuggingFace `tokenizer.json` loaded by path, with the `hf` feature.
//! - [`CachedTokenizer`]: wraps any tokenizer and remembers counts per text, bounded in size.
//! - [`PieceCache`]: a fixed-size table of short pieces and their counts that one thread owns
//!   and passes to [`Tokenizer::count_cached`] (the same counts, fewer vocabulary lookups).
//! - [`TokenizerKind`] + [`load`]: pick a backend from a string such as `"cl100k"` or
//!   `"path/to/tokenizer.json"`.
//!
//! # What it is not
//!
//! Not a chat template: it counts the text it is given, with no per-message overhead, BOS/EOS or
//! role tokens; prompt assembly adds those. Special-token strings such as `<|endoftext|>` in the
//! text are counted as plain text. Not a decoder: [`Tokenizer::encode`] exists for inspection,
//! there is no way back from ids to text.
//!
//! # Example
//!
//! ```
//! use ccv3_tokens::{load, CachedTokenizer, Tokenizer, TokenizerKind};
//!
//! # #[cfg(feature = "bundled")] {
//! let kind: TokenizerKind = "o200k".parse()?;
//! let tokenizer = CachedTokenizer::new(load(&kind)?);
//! assert_eq!(tokenizer.count("hello world"), 2);
//! assert_eq!(tokenizer.count(""), 0);
//! assert_eq!(tokenizer.name(), "o200k_base");
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(rustdoc::broken_intra_doc_links)]

mod ascii_split;
mod bpe;
mod cache;
mod encoding;
mod error;
mod estimate;
mod hf;
mod kind;
mod piece_cache;
mod tiktoken;
mod tokenizer;
#[cfg(all(test, not(feature = "bundled")))]
mod vocab_compile;
mod vocab_layout;

pub use cache::{CachedTokenizer, DEFAULT_CAPACITY};
pub use encoding::Encoding;
pub use error::Error;
pub use estimate::Estimate;
pub use hf::{HfTokenizer, MAX_FILE_SIZE};
pub use kind::{load, TokenizerKind};
pub use piece_cache::{PieceCache, DEFAULT_SLOTS, MAX_PIECE};
#[doc(hidden)]
#[cfg(feature = "bundled")]
pub use tiktoken::build_uncached;
#[cfg(feature = "bundled")]
pub use tiktoken::vocabulary_file;
pub use tiktoken::{has_vocabulary, register_vocabulary, Tiktoken, MAX_WHITESPACE_RUN};
pub use tokenizer::Tokenizer;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_backend_counts_empty_string_as_zero() {
        for kind in [
            TokenizerKind::O200k,
            TokenizerKind::Cl100k,
            TokenizerKind::Estimate,
        ] {
            let t = load(&kind).expect("bundled backends load");
            assert_eq!(t.count(""), 0, "{kind}");
        }
    }

    #[test]
    fn count_all_sums_counts() {
        assert_eq!(Estimate.count_all(&["abcd", "abc", ""]), 3);
    }

    #[test]
    fn estimate_has_no_ids() {
        assert_eq!(Estimate.encode("abc"), None);
    }
}
