//! Small text helpers: key macros, scan-text cleaning, word boundaries, hashing, the seeded roll.

/// Resolves the name macros in a key: `{{char}}`, `{{user}}` and the legacy `<char>`, `<bot>`,
/// `<user>` (case-insensitive). Other text is kept as is.
///
/// ```
/// assert_eq!(ccv3_lore::resolve_key_macros("{{Char}} and <USER>", "Aqua", "Kazuma"), "Aqua and Kazuma");
/// ```
pub fn resolve_key_macros(key: &str, char_name: &str, user_name: &str) -> String {
    resolve_key_macros_cow(key, char_name, user_name, ccv3_cbs::Dialect::Auto).into_owned()
}

/// [`resolve_key_macros`] in a dialect, borrowing the key when it has no macro.
pub(crate) fn resolve_key_macros_cow<'k>(
    key: &'k str,
    char_name: &str,
    user_name: &str,
    dialect: ccv3_cbs::Dialect,
) -> std::borrow::Cow<'k, str> {
    if !key.contains(['{', '<']) {
        return std::borrow::Cow::Borrowed(key);
    }
    // The same CBS engine as prompts (`ccv3-cbs`): `{{char}}`, `{{user}}`, `<char>`, `<bot>`,
    // `<user>` and the rest of the dialect's set, with a fixed seed so keys stay the same.
    let ctx = ccv3_cbs::Context::new()
        .with_char_name(char_name.to_string())
        .with_user_name(user_name.to_string());
    let limits = key_macro_limits(key.len(), char_name.len() + user_name.len());
    let expanded = ccv3_cbs::Template::parse_with(key, &limits).expand_with(
        ccv3_cbs::Registry::dialect_ref(dialect),
        &limits,
        &ctx,
        &mut ccv3_cbs::Variables::new(),
        ccv3_cbs::Mode::Prompt,
    );
    std::borrow::Cow::Owned(expanded.text)
}

/// The CBS limits of one key's macros: its expansion may grow to twice its own length
/// (plus the names), so the keys of a book expand to text linear in the book (issue 12: keys
/// whose macros each expanded to 1 MiB took 1.2 GiB), and the work and steps are bounded the
/// same way.
fn key_macro_limits(key_len: usize, names_len: usize) -> ccv3_cbs::Limits {
    let out = key_len
        .saturating_mul(2)
        .saturating_add(names_len.saturating_mul(4))
        .saturating_add(256);
    ccv3_cbs::Limits {
        max_output: out,
        max_work: out.saturating_mul(4),
        max_steps: (key_len as u64).saturating_add(10_000),
        max_variable_len: out,
        ..ccv3_cbs::Limits::default()
    }
}

/// Cleans text for scanning: `{{// ...}}` and `{{comment:...}}` are removed; `{{hidden_key:X}}`
/// becomes `X` when `recursive` (text from entries' contents) and is removed otherwise.
/// Returns `None` when there is nothing to change (no `{{`).
pub(crate) fn clean_scan_text(text: &str, recursive: bool) -> Option<String> {
    memchr::memmem::find(text.as_bytes(), b"{{")?;
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(p) = rest.find("{{") {
        out.push_str(&rest[..p]);
        let after = &rest[p + 2..];
        let lower_start: String = after
            .chars()
            .take(11)
            .collect::<String>()
            .to_ascii_lowercase();
        let kind = if lower_start.starts_with("//") || lower_start.starts_with("comment:") {
            Some(0)
        } else if lower_start.starts_with("hidden_key:") {
            Some(11)
        } else {
            None
        };
        match (kind, after.find("}}")) {
            (Some(skip), Some(end)) => {
                if skip > 0 && recursive && after.is_char_boundary(skip) && skip <= end {
                    out.push_str(&after[skip..end]);
                }
                rest = &after[end + 2..];
            }
            _ => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Some(out)
}

/// Scripts written without spaces between words: a character of these never forms a word
/// boundary problem (every position next to one counts as a boundary).
fn no_space_script(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF      // Thai, Lao
        | 0x1000..=0x109F    // Myanmar
        | 0x1780..=0x17FF    // Khmer
        | 0x2E80..=0x9FFF    // CJK radicals, kana, CJK ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0xFF00..=0xFFEF    // half/full-width forms
        | 0x20000..=0x3FFFF) // CJK extensions
}

/// A word character for whole-word matching: a letter, digit or `_`, except in scripts written
/// without spaces.
pub(crate) fn is_word_char(c: char) -> bool {
    (c.is_alphanumeric() || c == '_') && !no_space_script(c)
}

/// True when `text[start..end]` is a whole word: the characters around it are not word characters.
pub(crate) fn whole_word_at(text: &str, start: usize, end: usize) -> bool {
    let before = text.get(..start).and_then(|s| s.chars().next_back());
    let after = text.get(end..).and_then(|s| s.chars().next());
    !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char)
}

/// FNV-1a, 64 bits: a stable hash (the same on every platform and version).
#[derive(Clone, Copy)]
pub(crate) struct Fnv(pub u64);

impl Fnv {
    pub(crate) fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    pub(crate) fn bytes(mut self, b: &[u8]) -> Self {
        for &x in b {
            self.0 ^= u64::from(x);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // A separator so ("ab","c") and ("a","bc") differ.
        self.0 ^= 0xff;
        self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        self
    }
    pub(crate) fn str(self, s: &str) -> Self {
        self.bytes(s.as_bytes())
    }
}

/// SplitMix64: one well-mixed 64-bit value from a seed.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A reproducible roll in `[0, 100)` from the scan seed, a subject and the chat length.
pub(crate) fn roll(seed: u64, subject: u64, chat_len: usize, salt: u64) -> f64 {
    let v = mix(mix(seed ^ mix(subject) ^ salt).wrapping_add(chat_len as u64));
    (v >> 11) as f64 / (1u64 << 53) as f64 * 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_hidden_key_counts_only_in_recursive_scans() {
        let t = "a {{hidden_key:Dragon}} b {{// note}} c {{comment: x}} d {{char}}";
        assert_eq!(clean_scan_text(t, false).unwrap(), "a  b  c  d {{char}}");
        assert_eq!(
            clean_scan_text(t, true).unwrap(),
            "a Dragon b  c  d {{char}}"
        );
        assert!(clean_scan_text("plain", true).is_none());
        assert_eq!(
            clean_scan_text("{{hidden_key:é", true).unwrap(),
            "{{hidden_key:é"
        );
    }

    #[test]
    fn whole_words_ascii_unicode_and_cjk() {
        assert!(whole_word_at("long live the king", 14, 18));
        assert!(!whole_word_at("liking", 2, 6));
        assert!(!whole_word_at("cafés", 0, 3)); // é is a letter
        assert!(whole_word_at("東京都に", 0, 6)); // CJK: no spaces between words
    }

    #[test]
    fn roll_is_stable() {
        assert_eq!(roll(1, 2, 3, 0), roll(1, 2, 3, 0));
        assert_ne!(roll(1, 2, 3, 0), roll(1, 2, 4, 0));
        let r = roll(7, 8, 9, 1);
        assert!((0.0..100.0).contains(&r));
    }
}
