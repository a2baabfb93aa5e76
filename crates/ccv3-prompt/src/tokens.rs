//! Token counting for prompt parts, through [`ccv3_tokens::Tokenizer`], with counts cached per text.

use ccv3_tokens::Tokenizer;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Most texts kept in the cache before it is emptied.
pub const CACHE_ENTRIES: usize = 65_536;
/// Most bytes of text kept in the cache before it is emptied (64 MiB).
pub const CACHE_BYTES: usize = 64 * 1024 * 1024;

/// A tokenizer with a cache of counts keyed by text.
///
/// Reuse one counter across prompts of the same chat: the card texts and the older messages are
/// then counted once. The cache is bounded ([`CACHE_ENTRIES`], [`CACHE_BYTES`]) and emptied when
/// full. Safe to share between threads.
///
/// ```
/// use ccv3_prompt::TokenCounter;
/// let counter = TokenCounter::new(ccv3_tokens::Estimate);
/// assert_eq!(counter.count("hello world"), counter.count("hello world"));
/// assert_eq!(counter.cached(), 1);
/// ```
pub struct TokenCounter {
    tokenizer: Arc<dyn Tokenizer>,
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    counts: HashMap<String, usize>,
    bytes: usize,
}

impl std::fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenCounter")
            .field("tokenizer", &self.tokenizer.name())
            .field("cached", &self.cached())
            .finish()
    }
}

impl TokenCounter {
    /// A counter over `tokenizer`.
    pub fn new(tokenizer: impl Tokenizer + 'static) -> Self {
        Self::from_arc(Arc::new(tokenizer))
    }

    /// A counter over a shared tokenizer (what `ccv3_tokens::load` returns).
    pub fn from_arc(tokenizer: Arc<dyn Tokenizer>) -> Self {
        TokenCounter {
            tokenizer,
            cache: Mutex::new(Cache::default()),
        }
    }

    /// The tokenizer's name.
    pub fn name(&self) -> &str {
        self.tokenizer.name()
    }

    /// The token count of `text` (0 for the empty text), from the cache when possible.
    pub fn count(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&n) = cache.counts.get(text) {
            return n;
        }
        let n = self.tokenizer.count(text);
        if text.len() <= CACHE_BYTES {
            if cache.counts.len() >= CACHE_ENTRIES
                || cache.bytes.saturating_add(text.len()) > CACHE_BYTES
            {
                cache.counts.clear();
                cache.bytes = 0;
            }
            cache.bytes = cache.bytes.saturating_add(text.len());
            cache.counts.insert(text.to_string(), n);
        }
        n
    }

    /// How many texts are cached.
    pub fn cached(&self) -> usize {
        self.cache.lock().map(|c| c.counts.len()).unwrap_or(0)
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
    }
}
