//! The cheap estimate: SillyTavern's "guesstimate".
//!
//! SillyTavern falls back to `Math.ceil(text.length / 3.35)` when no real tokenizer is at hand
//! (`CHARACTERS_PER_TOKEN_RATIO = 3.35`). JavaScript's `length` counts UTF-16 code units, so this
//! backend counts UTF-16 code units too (a CJK character is one unit, an emoji outside the BMP is
//! two). The division is done in integers, `ceil(units * 100 / 335)`, so results are exact and the
//! same on every platform. The empty string is 0 tokens.

use crate::tokenizer::Tokenizer;

/// SillyTavern's guesstimate: `ceil(utf16_units / 3.35)`. No tables, no allocation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Estimate;

impl Estimate {
    /// Returns the estimated token count of `text`.
    pub fn estimate(text: &str) -> usize {
        let units = text.encode_utf16().count() as u128;
        let tokens = (units * 100).div_ceil(335);
        // tokens <= units, and units fits in usize.
        usize::try_from(tokens).unwrap_or(usize::MAX)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_is_ceil_of_utf16_units_over_3_35() {
        assert_eq!(Estimate.count(""), 0);
        assert_eq!(Estimate.count("a"), 1);
        assert_eq!(Estimate.count("abc"), 1);
        assert_eq!(Estimate.count("abcd"), 2);
        // 67 / 3.35 = 20 exactly.
        assert_eq!(Estimate.count(&"x".repeat(67)), 20);
        assert_eq!(Estimate.count(&"x".repeat(68)), 21);
        assert_eq!(Estimate.count(&"x".repeat(335)), 100);
    }

    #[test]
    fn estimate_counts_utf16_units_like_javascript_length() {
        // Seven BMP characters: 7 units.
        assert_eq!(Estimate.count("こんにちは世界"), 3);
        // One astral emoji is two UTF-16 units, four UTF-8 bytes.
        assert_eq!("😀".encode_utf16().count(), 2);
        assert_eq!(Estimate.count(&"😀".repeat(67)), 40);
    }
}
