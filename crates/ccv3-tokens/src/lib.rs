//! ccv3-tokens (temporary minimal stand-in on the `wip-prompt` branch: only the `Tokenizer` trait
//! and the `Estimate` backend, so `ccv3-prompt` compiles; the lead replaces this file at merge).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// Counts the tokens of a text for one model's tokenizer.
pub trait Tokenizer: Send + Sync {
    /// Returns the number of tokens in `text`.
    fn count(&self, text: &str) -> usize;
    /// Returns a short name for the tokenizer.
    fn name(&self) -> &str;
}

/// SillyTavern's guesstimate: `ceil(utf16_units / 3.35)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Estimate;

impl Estimate {
    /// Returns the estimated token count of `text`.
    pub fn estimate(text: &str) -> usize {
        let units = text.encode_utf16().count() as u128;
        usize::try_from((units * 100).div_ceil(335)).unwrap_or(usize::MAX)
    }
}

impl Tokenizer for Estimate {
    fn count(&self, text: &str) -> usize {
        Estimate::estimate(text)
    }
    fn name(&self) -> &str {
        "estimate"
    }
}
