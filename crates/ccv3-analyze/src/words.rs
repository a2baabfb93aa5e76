//! The common English words of `lore-key-too-broad`, kept in `common_words.txt` with its source.

use std::collections::HashSet;
use std::sync::LazyLock;

/// The list's text (comment lines start with `#`).
const LIST: &str = include_str!("common_words.txt");

static WORDS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    LIST.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
});

/// True when `key` (any case) is one of the common words.
pub(crate) fn is_common(key: &str) -> bool {
    key.len() <= 16 && WORDS.contains(key.to_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_list_has_the_hundred_most_frequent_words() {
        // Issue 27: "a list of at least the 100 most frequent words".
        assert!(super::WORDS.len() >= 100);
        assert!(super::is_common("The") && super::is_common("people"));
        assert!(!super::is_common("dragon"));
    }
}
