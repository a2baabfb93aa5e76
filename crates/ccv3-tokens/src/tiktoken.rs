//! OpenAI's BPE encodings through `tiktoken-rs`: `o200k_base` (GPT-4o and later) and
//! `cl100k_base` (GPT-3.5/GPT-4).
//!
//! The vocabularies ship inside the `tiktoken-rs` crate (`include_str!` of its `assets/`), so
//! nothing is fetched at build or run time. Building an encoding parses its vocabulary into a hash
//! map: 0.1 to 0.6 s for o200k and 0.05 to 0.2 s for cl100k in release builds on a busy 2-core
//! machine (debug builds are several times slower). So each encoding is built at most once per
//! process, on first use, and shared by every [`Tiktoken`] through a `OnceLock`. Counting then
//! runs at about 8 to 10 MiB/s of mixed English and CJK text (`benches/tokens.rs`).
//!
//! Choices:
//! - Special tokens such as `<|endoftext|>` are counted as ordinary text (`encode_ordinary`):
//!   card and chat text is data, and SillyTavern does not let it open special tokens either.
//! - `tiktoken-rs` panics when its regex gives up on a run of about a million whitespace characters
//!   without a line break. To never panic on hostile input, runs of whitespace longer than
//!   [`MAX_WHITESPACE_RUN`] characters are cut into pieces of that many characters and the
//!   pieces are counted one after the other. Text without such a run is counted exactly; text with
//!   one may be off by a token or two per cut.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

use crate::{Error, Tokenizer};

/// Longest run of whitespace characters counted in one piece; longer runs are cut.
pub const MAX_WHITESPACE_RUN: usize = 65_536;

/// A bundled tiktoken encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// `o200k_base`: GPT-4o, GPT-4.1, o-series, GPT-5. The default.
    O200k,
    /// `cl100k_base`: GPT-3.5-turbo, GPT-4.
    Cl100k,
}

impl Encoding {
    /// Returns the encoding's tiktoken name, e.g. `o200k_base`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200k => "o200k_base",
            Encoding::Cl100k => "cl100k_base",
        }
    }

    /// Returns the shared encoder, building it on first use.
    fn core(self) -> Result<&'static CoreBPE, Error> {
        static O200K: OnceLock<Result<CoreBPE, String>> = OnceLock::new();
        static CL100K: OnceLock<Result<CoreBPE, String>> = OnceLock::new();
        let cell = match self {
            Encoding::O200k => {
                O200K.get_or_init(|| tiktoken_rs::o200k_base().map_err(|e| e.to_string()))
            }
            Encoding::Cl100k => {
                CL100K.get_or_init(|| tiktoken_rs::cl100k_base().map_err(|e| e.to_string()))
            }
        };
        cell.as_ref().map_err(|problem| Error::Encoding {
            encoding: self.name(),
            problem: problem.clone(),
        })
    }
}

/// A tiktoken encoding as a [`Tokenizer`]. Cheap to clone: the encoder is shared.
#[derive(Clone)]
pub struct Tiktoken {
    encoding: Encoding,
    core: &'static CoreBPE,
}

impl std::fmt::Debug for Tiktoken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tiktoken")
            .field("encoding", &self.encoding)
            .finish()
    }
}

impl Tiktoken {
    /// Returns a tokenizer for `encoding`, building the shared encoder if this is the first use.
    ///
    /// # Errors
    /// [`Error::Encoding`] if the bundled vocabulary cannot be built (a broken `tiktoken-rs`).
    pub fn new(encoding: Encoding) -> Result<Self, Error> {
        Ok(Tiktoken {
            encoding,
            core: encoding.core()?,
        })
    }

    /// Returns `o200k_base`, the default encoding.
    ///
    /// # Errors
    /// As [`Tiktoken::new`].
    pub fn o200k() -> Result<Self, Error> {
        Tiktoken::new(Encoding::O200k)
    }

    /// Returns `cl100k_base`.
    ///
    /// # Errors
    /// As [`Tiktoken::new`].
    pub fn cl100k() -> Result<Self, Error> {
        Tiktoken::new(Encoding::Cl100k)
    }

    /// Returns which encoding this is.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Returns the token ids of `text` (special tokens counted as text, long whitespace cut).
    pub fn encode_ids(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        for piece in Pieces::new(text) {
            ids.extend(self.core.encode_ordinary(piece));
        }
        ids
    }
}

impl Tokenizer for Tiktoken {
    fn count(&self, text: &str) -> usize {
        Pieces::new(text)
            .map(|piece| self.core.encode_ordinary(piece).len())
            .sum()
    }

    fn name(&self) -> &str {
        self.encoding.name()
    }

    fn encode(&self, text: &str) -> Option<Vec<u32>> {
        Some(self.encode_ids(text))
    }
}

/// Splits text so that no piece holds more than [`MAX_WHITESPACE_RUN`] whitespace characters in
/// a row. Text without such a run is one piece. The empty string is no piece.
struct Pieces<'a> {
    rest: &'a str,
}

impl<'a> Pieces<'a> {
    fn new(text: &'a str) -> Self {
        Pieces { rest: text }
    }
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        let mut run = 0usize;
        let mut cut = self.rest.len();
        for (at, c) in self.rest.char_indices() {
            if c.is_whitespace() {
                if run == MAX_WHITESPACE_RUN {
                    cut = at;
                    break;
                }
                run += 1;
            } else {
                run = 0;
            }
        }
        let (piece, rest) = self.rest.split_at(cut);
        self.rest = rest;
        Some(piece)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o200k() -> Tiktoken {
        Tiktoken::o200k().expect("bundled o200k_base builds")
    }

    fn cl100k() -> Tiktoken {
        Tiktoken::cl100k().expect("bundled cl100k_base builds")
    }

    // Counts pinned from tiktoken-rs 0.12.1 itself.
    #[test]
    fn o200k_known_counts() {
        let t = o200k();
        assert_eq!(t.count("hello world"), 2);
        assert_eq!(t.count("Hello, world!"), 4);
        assert_eq!(t.count("こんにちは世界"), 2);
        assert_eq!(t.count("The quick brown fox jumps over the lazy dog."), 10);
        assert_eq!(t.count("{{char}} smiles at {{user}}."), 9);
        assert_eq!(t.name(), "o200k_base");
    }

    #[test]
    fn cl100k_known_counts() {
        let t = cl100k();
        assert_eq!(t.count("hello world"), 2);
        assert_eq!(t.count("Hello, world!"), 4);
        assert_eq!(t.count("こんにちは世界"), 4);
        assert_eq!(t.count("The quick brown fox jumps over the lazy dog."), 10);
        assert_eq!(t.count("{{char}} smiles at {{user}}."), 9);
        assert_eq!(t.name(), "cl100k_base");
    }

    #[test]
    fn empty_string_is_zero_tokens() {
        assert_eq!(o200k().count(""), 0);
        assert_eq!(cl100k().count(""), 0);
        assert_eq!(o200k().encode_ids(""), Vec::<u32>::new());
    }

    #[test]
    fn special_tokens_are_counted_as_ordinary_text() {
        // `<|endoftext|>` would be one special token; as text it is seven.
        assert_eq!(o200k().count("<|endoftext|>"), 7);
        assert_eq!(cl100k().count("<|endoftext|>"), 7);
    }

    #[test]
    fn encode_agrees_with_count() {
        let t = o200k();
        let text = "Lorebook entry: the tavern at the edge of 森.";
        assert_eq!(t.encode(text).map(|ids| ids.len()), Some(t.count(text)));
    }

    #[test]
    fn whitespace_run_of_a_million_does_not_panic() {
        // tiktoken-rs alone panics on this input (regex stack overflow).
        let text = format!("a{}b", " ".repeat(1 << 20));
        assert!(o200k().count(&text) > 0);
        assert!(cl100k().count(&text) > 0);
        let tabs = format!("{}x", " \t".repeat(600_000));
        assert!(o200k().count(&tabs) > 0);
    }

    #[test]
    fn text_without_long_whitespace_run_is_one_piece() {
        let text = format!("a{}b\n\nc", " ".repeat(MAX_WHITESPACE_RUN));
        assert_eq!(Pieces::new(&text).count(), 1);
        assert_eq!(Pieces::new("").count(), 0);
    }

    #[test]
    fn long_whitespace_run_is_cut_at_the_limit() {
        let text = format!("a{}b", " ".repeat(MAX_WHITESPACE_RUN * 2 + 1));
        let pieces: Vec<&str> = Pieces::new(&text).collect();
        assert_eq!(pieces.len(), 3);
        assert_eq!(pieces.concat(), text);
        assert!(pieces.iter().all(|p| p.len() <= MAX_WHITESPACE_RUN + 1));
    }

    #[test]
    fn shared_encoder_is_built_once() {
        let a = o200k();
        let b = o200k();
        assert!(std::ptr::eq(a.core, b.core));
    }
}
