//! Memoized counts: [`CachedTokenizer`].
//!
//! Lorebook scans and prompt assembly count the same entry texts again and again. The cache maps
//! a key made of the text's 64-bit hash (SipHash with a random key per cache, so collisions cannot
//! be planned from outside) and its byte length to the count; the text itself is not stored.
//!
//! Eviction is by generations: new counts go into the current map; when it holds
//! `capacity / 2` entries it becomes the previous map and the old previous map is dropped. A hit
//! in the previous map is copied back into the current one. So the cache never holds more than
//! `capacity` entries, recently used texts survive, and there is no per-entry bookkeeping. One
//! `Mutex` guards both maps; it is held only for lookups and inserts, never while counting, so
//! two threads may count the same new text at once (both get the same answer).

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Mutex;

use crate::piece_cache::PieceCache;
use crate::tokenizer::Tokenizer;

/// Default number of cached counts.
pub const DEFAULT_CAPACITY: usize = 65_536;

type Key = (u64, usize);

#[derive(Default)]
struct Generations {
    current: HashMap<Key, usize>,
    previous: HashMap<Key, usize>,
}

/// A [`Tokenizer`] that remembers the counts of texts it has seen. Thread-safe.
pub struct CachedTokenizer<T> {
    inner: T,
    hasher: RandomState,
    generation: usize,
    maps: Mutex<Generations>,
}

impl<T: std::fmt::Debug> std::fmt::Debug for CachedTokenizer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedTokenizer")
            .field("inner", &self.inner)
            .field("capacity", &self.capacity())
            .field("len", &self.len())
            .finish()
    }
}

impl<T> CachedTokenizer<T> {
    /// Wraps `inner` with a cache of [`DEFAULT_CAPACITY`] counts.
    pub fn new(inner: T) -> Self {
        CachedTokenizer::with_capacity(inner, DEFAULT_CAPACITY)
    }

    /// Wraps `inner` with a cache of at most `capacity` counts (at least 2).
    pub fn with_capacity(inner: T, capacity: usize) -> Self {
        CachedTokenizer {
            inner,
            hasher: RandomState::new(),
            generation: (capacity / 2).max(1),
            maps: Mutex::new(Generations::default()),
        }
    }

    /// Returns the wrapped tokenizer.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    /// Returns the most counts this cache holds.
    pub fn capacity(&self) -> usize {
        self.generation.saturating_mul(2)
    }

    /// Returns how many counts are cached now.
    pub fn len(&self) -> usize {
        let maps = self.lock();
        maps.current.len().saturating_add(maps.previous.len())
    }

    /// Returns whether no count is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every cached count.
    pub fn clear(&self) {
        let mut maps = self.lock();
        maps.current.clear();
        maps.previous.clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Generations> {
        // A panic elsewhere while holding the lock leaves the maps consistent (each operation is
        // a single insert or lookup), so a poisoned lock is safe to keep using.
        self.maps
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn insert(maps: &mut Generations, generation: usize, key: Key, count: usize) {
        if maps.current.len() >= generation {
            maps.previous = std::mem::take(&mut maps.current);
        }
        maps.current.insert(key, count);
    }
}

impl<T: Tokenizer> CachedTokenizer<T> {
    /// The count of `text` from the cache, or from `count_inner` (then cached).
    fn count_with(&self, text: &str, count_inner: impl FnOnce(&str) -> usize) -> usize {
        if text.is_empty() {
            return 0;
        }
        let key = (self.hasher.hash_one(text), text.len());
        {
            let mut maps = self.lock();
            if let Some(&count) = maps.current.get(&key) {
                return count;
            }
            if let Some(&count) = maps.previous.get(&key) {
                Self::insert(&mut maps, self.generation, key, count);
                return count;
            }
        }
        let count = count_inner(text);
        Self::insert(&mut self.lock(), self.generation, key, count);
        count
    }
}

impl<T: Tokenizer> Tokenizer for CachedTokenizer<T> {
    fn count(&self, text: &str) -> usize {
        self.count_with(text, |t| self.inner.count(t))
    }

    fn count_cached(&self, text: &str, cache: &mut PieceCache) -> usize {
        self.count_with(text, |t| self.inner.count_cached(t, cache))
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn encode(&self, text: &str) -> Option<Vec<u32>> {
        self.inner.encode(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Estimate, Tiktoken};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts calls, answers with the byte length.
    #[derive(Default)]
    struct Probe(AtomicUsize);

    impl Tokenizer for Probe {
        fn count(&self, text: &str) -> usize {
            self.0.fetch_add(1, Ordering::Relaxed);
            text.len()
        }
        fn name(&self) -> &str {
            "probe"
        }
    }

    #[test]
    fn cache_returns_the_same_as_uncached() {
        let plain = Tiktoken::o200k().expect("o200k builds");
        let cached = CachedTokenizer::new(plain.clone());
        for text in [
            "hello world",
            "",
            "こんにちは世界",
            "{{char}} waves.",
            "hello world",
        ] {
            assert_eq!(cached.count(text), plain.count(text), "{text:?}");
            assert_eq!(cached.count(text), plain.count(text), "{text:?} again");
        }
        assert_eq!(cached.name(), "o200k_base");
        let est = CachedTokenizer::new(Estimate);
        assert_eq!(est.count("abcd"), Estimate.count("abcd"));
    }

    #[test]
    fn cache_counts_each_text_once() {
        let cached = CachedTokenizer::new(Probe::default());
        assert_eq!(cached.count("abc"), 3);
        assert_eq!(cached.count("abc"), 3);
        assert_eq!(cached.count("abcd"), 4);
        assert_eq!(cached.inner().0.load(Ordering::Relaxed), 2);
        assert_eq!(cached.len(), 2);
    }

    #[test]
    fn cache_never_holds_more_than_its_capacity() {
        let cached = CachedTokenizer::with_capacity(Probe::default(), 8);
        for i in 0..100 {
            cached.count(&format!("text {i}"));
            assert!(cached.len() <= 8);
        }
        // The most recent texts are still cached.
        let before = cached.inner().0.load(Ordering::Relaxed);
        cached.count("text 99");
        assert_eq!(cached.inner().0.load(Ordering::Relaxed), before);
        cached.clear();
        assert!(cached.is_empty());
    }

    #[test]
    fn cache_is_shared_across_threads() {
        let cached = std::sync::Arc::new(CachedTokenizer::new(Estimate));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let c = std::sync::Arc::clone(&cached);
                std::thread::spawn(move || (0..100).map(|i| c.count(&"x".repeat(i))).sum::<usize>())
            })
            .collect();
        let sums: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap_or(0)).collect();
        assert!(sums.windows(2).all(|w| w[0] == w[1]));
        assert!(sums[0] > 0);
    }
}
