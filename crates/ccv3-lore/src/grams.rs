//! Which keys can occur in a text at all, without searching for them: every 4-byte window of the
//! text (a gram) is set in a bit table, and a key one of whose grams is missing from the table
//! cannot occur in the text.
//!
//! A scan done once (a command-line call) builds its key automata from the keys that pass this
//! check against the scan text instead of from every key of the books: on a 50,000-entry book
//! and a 100-message chat, a few thousand keys instead of fifty thousand. The check never drops a
//! key that occurs (every window of an occurrence is a window of the text); it may keep keys
//! that do not (bits are shared by several grams), which the automata then simply do not find.

/// Bits in the table: 2^21 (256 KiB), a few percent full for a chat of 100 messages.
const BITS: u32 = 21;

/// The grams of a text.
pub(crate) struct Grams {
    bits: Vec<u64>,
}

fn slot(gram: &[u8]) -> usize {
    let mut w = [0u8; 4];
    w.copy_from_slice(gram);
    (u32::from_le_bytes(w).wrapping_mul(0x9E37_79B1) >> (32 - BITS)) as usize
}

impl Grams {
    /// The grams of every text in `texts`.
    pub(crate) fn of(texts: &[&[u8]]) -> Grams {
        let mut bits = vec![0u64; 1 << (BITS - 6)];
        for t in texts {
            for g in t.windows(4) {
                let s = slot(g);
                bits[s >> 6] |= 1 << (s & 63);
            }
        }
        Grams { bits }
    }

    /// False only when `key` cannot occur in the texts (keys under 4 bytes always may).
    pub(crate) fn may_contain(&self, key: &[u8]) -> bool {
        key.windows(4).all(|g| {
            let s = slot(g);
            self.bits[s >> 6] & (1 << (s & 63)) != 0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Grams;
    use proptest::prelude::{prop_assert, proptest};

    proptest! {
        #[test]
        fn a_key_that_occurs_is_never_dropped(text in "\\PC{0,200}", from in 0usize..200, len in 0usize..40) {
            // Any substring of the text (on character boundaries) passes the check.
            let chars: Vec<char> = text.chars().collect();
            let from = from.min(chars.len());
            let to = (from + len).min(chars.len());
            let key: String = chars[from..to].iter().collect();
            let g = Grams::of(&[text.as_bytes()]);
            prop_assert!(g.may_contain(key.as_bytes()));
        }
    }

    #[test]
    fn keys_that_occur_always_pass_and_most_others_do_not() {
        let text = "\u{1}the lighthouse keeper trims the lamp\n\u{1}storms from the north-west";
        let g = Grams::of(&[text.as_bytes()]);
        for k in [
            "lamp",
            "lighthouse keeper",
            "north-west",
            "the",
            "a",
            "st",
            "\u{1}the",
        ] {
            assert!(g.may_contain(k.as_bytes()), "{k}");
        }
        for k in ["vaeysmir", "dragonfly", "lampshade"] {
            assert!(!g.may_contain(k.as_bytes()), "{k}");
        }
    }
}
