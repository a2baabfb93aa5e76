//! The [`Tokenizer`] trait every backend implements, and its forwarding impls for references,
//! boxes and `Arc`s.

use crate::piece_cache::PieceCache;
use std::sync::Arc;

/// Counts the tokens of a text for one model's tokenizer.
///
/// Implementers write [`count`](Tokenizer::count) and [`name`](Tokenizer::name); the rest is
/// defaulted. `count` must not panic on any `&str` and must return 0 for the empty string.
pub trait Tokenizer: Send + Sync {
    /// Returns the number of tokens in `text`.
    fn count(&self, text: &str) -> usize;

    /// Returns a short name for the tokenizer, e.g. `o200k_base`.
    fn name(&self) -> &str;

    /// Returns the token ids of `text`, if this backend has ids (the estimate does not).
    fn encode(&self, _text: &str) -> Option<Vec<u32>> {
        None
    }

    /// Returns [`count`](Tokenizer::count) of `text`, taking the counts of pieces seen before
    /// from `cache` and keeping new ones there (the tiktoken encodings; other backends ignore
    /// the cache). The answer is always the same as `count`'s.
    fn count_cached(&self, text: &str, cache: &mut PieceCache) -> usize {
        let _ = cache;
        self.count(text)
    }

    /// Returns the summed counts of `texts`, saturating instead of overflowing.
    fn count_all(&self, texts: &[&str]) -> usize {
        texts
            .iter()
            .fold(0usize, |sum, text| sum.saturating_add(self.count(text)))
    }
}

impl<T: Tokenizer + ?Sized> Tokenizer for &T {
    fn count(&self, text: &str) -> usize {
        (**self).count(text)
    }
    fn count_cached(&self, text: &str, cache: &mut PieceCache) -> usize {
        (**self).count_cached(text, cache)
    }
    fn name(&self) -> &str {
        (**self).name()
    }
    fn encode(&self, text: &str) -> Option<Vec<u32>> {
        (**self).encode(text)
    }
}

impl<T: Tokenizer + ?Sized> Tokenizer for Box<T> {
    fn count(&self, text: &str) -> usize {
        (**self).count(text)
    }
    fn count_cached(&self, text: &str, cache: &mut PieceCache) -> usize {
        (**self).count_cached(text, cache)
    }
    fn name(&self) -> &str {
        (**self).name()
    }
    fn encode(&self, text: &str) -> Option<Vec<u32>> {
        (**self).encode(text)
    }
}

impl<T: Tokenizer + ?Sized> Tokenizer for Arc<T> {
    fn count(&self, text: &str) -> usize {
        (**self).count(text)
    }
    fn count_cached(&self, text: &str, cache: &mut PieceCache) -> usize {
        (**self).count_cached(text, cache)
    }
    fn name(&self) -> &str {
        (**self).name()
    }
    fn encode(&self, text: &str) -> Option<Vec<u32>> {
        (**self).encode(text)
    }
}
