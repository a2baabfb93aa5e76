//! ccv3-tokens (temporary minimal version for the lorebook engine's worktree; the lead replaces
//! it with the real crate at merge).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// Counts tokens of a text.
pub trait Tokenizer: Send + Sync {
    /// The number of tokens in `text`.
    fn count(&self, text: &str) -> usize;
    /// The tokenizer's name.
    fn name(&self) -> &str;
}

/// A cheap estimate: one token per 3.35 characters, rounded up.
#[derive(Debug, Clone, Copy, Default)]
pub struct Estimate;

impl Tokenizer for Estimate {
    fn count(&self, text: &str) -> usize {
        let chars = text.chars().count() as f64;
        (chars / 3.35).ceil() as usize
    }
    fn name(&self) -> &str {
        "estimate"
    }
}
