//! Token counting for prompt parts: any [`ccv3_tokens::Tokenizer`], with counts cached per text
//! by [`ccv3_tokens::CachedTokenizer`].

use ccv3_tokens::{CachedTokenizer, Tokenizer};
use std::sync::Arc;

/// A tokenizer with a cache of counts per text (bounded; see [`ccv3_tokens::CachedTokenizer`]).
///
/// Reuse one counter across prompts of the same chat: the card texts and the older messages are
/// then counted once. Safe to share between threads.
///
/// ```
/// use ccv3_prompt::TokenCounter;
/// let counter = TokenCounter::new(ccv3_tokens::Estimate);
/// assert_eq!(counter.count("hello world"), counter.count("hello world"));
/// assert_eq!(counter.cached(), 1);
/// ```
pub struct TokenCounter {
    cache: CachedTokenizer<Arc<dyn Tokenizer>>,
}

impl std::fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenCounter")
            .field("tokenizer", &self.name())
            .field("cached", &self.cached())
            .finish()
    }
}

impl TokenCounter {
    /// A counter over `tokenizer`.
    pub fn new(tokenizer: impl Tokenizer + 'static) -> Self {
        Self::from_arc(Arc::new(tokenizer))
    }

    /// A counter over a shared tokenizer (what [`ccv3_tokens::load`] returns).
    pub fn from_arc(tokenizer: Arc<dyn Tokenizer>) -> Self {
        TokenCounter {
            cache: CachedTokenizer::new(tokenizer),
        }
    }

    /// The tokenizer's name.
    pub fn name(&self) -> &str {
        self.cache.inner().name()
    }

    /// The token count of `text` (0 for the empty text), from the cache when possible.
    pub fn count(&self, text: &str) -> usize {
        self.cache.count(text)
    }

    /// How many counts are cached.
    pub fn cached(&self) -> usize {
        self.cache.len()
    }
}

impl Tokenizer for TokenCounter {
    fn count(&self, text: &str) -> usize {
        TokenCounter::count(self, text)
    }
    fn name(&self) -> &str {
        TokenCounter::name(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Counting(Arc<AtomicUsize>);
    impl Tokenizer for Counting {
        fn count(&self, text: &str) -> usize {
            self.0.fetch_add(1, Ordering::SeqCst);
            text.len()
        }
        fn name(&self) -> &str {
            "counting"
        }
    }

    #[test]
    fn tokens_counts_are_cached_per_text() {
        let calls = Arc::new(AtomicUsize::new(0));
        let c = TokenCounter::new(Counting(calls.clone()));
        assert_eq!(c.count("abc"), 3);
        assert_eq!(c.count("abc"), 3);
        assert_eq!(c.count("de"), 2);
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(c.count(""), 0);
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(c.name(), "counting");
    }

    #[test]
    fn tokens_real_tokenizer_through_the_counter() {
        let tok = ccv3_tokens::load(&"o200k".parse().unwrap()).unwrap();
        let c = TokenCounter::from_arc(tok);
        assert_eq!(c.count("hello world"), 2);
        assert_eq!(c.name(), "o200k_base");
    }
}
