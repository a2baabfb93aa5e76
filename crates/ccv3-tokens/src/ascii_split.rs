//! A hand-written matcher for `o200k_base`'s split pattern on ASCII text.
//!
//! Asking the `regex` crate for each piece costs more than merging the piece does: a piece of
//! card text is a word of five bytes or so, and each `find_at` sets up a search. [`match_at`]
//! gives the same match as `O200K_LINEAR` (the published pattern with its lookahead taken out,
//! see `tiktoken.rs`) when every byte it looks at is ASCII, and `None` as soon as it would have
//! to look at a byte that is not, so the caller asks the regex for that piece instead. The
//! matches are tested equal to the regex's on ASCII-heavy text (the tests below) and the counts
//! to `tiktoken-rs`'s (`tiktoken.rs`).
//!
//! How the pattern's alternatives read on ASCII (first alternative that matches wins, as in the
//! pattern; `P` is one character that is not a line break, letter or digit):
//! 1. `P? [A-Z]* [a-z]+ contraction?`
//! 2. `P? [A-Z]+ [a-z]* contraction?`
//! 3. `[0-9]{1,3}`
//! 4. `' '? punct+ [\r\n/]*` (punct: not whitespace, letter or digit)
//! 5. `\s* [\r\n]+`: a whitespace run up to and with its last line break
//! 6. `\s+`: the whole whitespace run
//!
//! The contraction is one of `'s 't 're 've 'm 'll 'd`, any case. Unicode-aware parts (a letter
//! class, `\s`, `\p{N}`, the case-insensitive `s`, which also matches `ſ`) are why any byte
//! above 0x7F at a place the pattern looks gives up.

/// What a position of the text holds, for the matcher.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    /// One ASCII byte.
    Ascii(u8),
    /// A byte of a non-ASCII character: the matcher gives up.
    Other,
    /// The end of the text.
    End,
}

/// Reads position `i` of `text`.
#[inline]
fn at(text: &[u8], i: usize) -> At {
    match text.get(i) {
        Some(&b) if b.is_ascii() => At::Ascii(b),
        Some(_) => At::Other,
        None => At::End,
    }
}

/// `\s` on ASCII (the Unicode White_Space property): tab, line feed, vertical tab, form feed,
/// carriage return, space.
#[inline]
fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ')
}

/// Punctuation for the pattern on ASCII: neither whitespace, a letter nor a digit.
#[inline]
fn is_punct(b: u8) -> bool {
    !is_space(b) && !b.is_ascii_alphanumeric()
}

/// Moves `i` past the bytes for which `keep` holds; `None` if it stops at a non-ASCII byte.
#[inline]
fn run(text: &[u8], mut i: usize, keep: impl Fn(u8) -> bool) -> Option<usize> {
    loop {
        match at(text, i) {
            At::Ascii(b) if keep(b) => i += 1,
            At::Other => return None,
            _ => return Some(i),
        }
    }
}

/// The end of an optional contraction at `i` (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d`, any
/// case); `None` if it cannot be decided on ASCII.
#[inline]
fn contraction(text: &[u8], i: usize) -> Option<usize> {
    if at(text, i) != At::Ascii(b'\'') {
        return Some(i);
    }
    let lower = |j: usize| match at(text, j) {
        At::Ascii(b) => Some(Some(b.to_ascii_lowercase())),
        At::Other => None,
        At::End => Some(None),
    };
    Some(match lower(i + 1)? {
        Some(b's' | b't' | b'm' | b'd') => i + 2,
        Some(b'r') if lower(i + 2)? == Some(b'e') => i + 3,
        Some(b'v') if lower(i + 2)? == Some(b'e') => i + 3,
        Some(b'l') if lower(i + 2)? == Some(b'l') => i + 3,
        _ => i,
    })
}

/// The end of the match of `O200K_LINEAR` that starts at `start` (every position starts one),
/// or `None` when deciding it would look at a non-ASCII byte or `start` is at the end.
pub(crate) fn match_at(text: &[u8], start: usize) -> Option<usize> {
    let first = match at(text, start) {
        At::Ascii(b) => b,
        _ => return None,
    };
    // 1 and 2: an optional prefix, then letters.
    let letters = if first.is_ascii_alphanumeric() || first == b'\r' || first == b'\n' {
        start
    } else {
        start + 1
    };
    let upper_end = run(text, letters, |b| b.is_ascii_uppercase())?;
    if let At::Ascii(b) = at(text, upper_end) {
        if b.is_ascii_lowercase() {
            let lower_end = run(text, upper_end, |b| b.is_ascii_lowercase())?;
            return contraction(text, lower_end);
        }
    }
    if upper_end > letters {
        return contraction(text, upper_end);
    }
    // 3: one to three digits.
    if first.is_ascii_digit() {
        let mut end = start + 1;
        while end < start + 3 {
            match at(text, end) {
                At::Ascii(b) if b.is_ascii_digit() => end += 1,
                At::Other => return None,
                _ => break,
            }
        }
        return Some(end);
    }
    // 4: an optional space, punctuation, then line breaks and slashes.
    let punct = if first == b' ' { start + 1 } else { start };
    let punct_start = match at(text, punct) {
        At::Ascii(b) if is_punct(b) => Some(punct),
        At::Other => return None,
        _ if is_punct(first) => Some(start),
        _ => None,
    };
    if let Some(p) = punct_start {
        let punct_end = run(text, p, is_punct)?;
        let mut end = punct_end;
        while let At::Ascii(b'\r' | b'\n' | b'/') = at(text, end) {
            end += 1;
        }
        return Some(end);
    }
    // 5 and 6: whitespace.
    if !is_space(first) {
        return None;
    }
    let space_end = run(text, start, is_space)?;
    let last_break = text
        .get(start..space_end)?
        .iter()
        .rposition(|&b| b == b'\r' || b == b'\n');
    Some(last_break.map_or(space_end, |i| start + i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every match of `match_at` equals the regex's at the same place, and it answers on every
    /// position of pure ASCII text.
    fn assert_same_as_regex(text: &str) {
        static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        let re = RE.get_or_init(|| {
            regex::Regex::new(crate::tiktoken::O200K_LINEAR).expect("pattern compiles")
        });
        let bytes = text.as_bytes();
        for start in 0..bytes.len() {
            if !text.is_char_boundary(start) {
                continue;
            }
            let want = re.find_at(text, start).map(|m| (m.start(), m.end()));
            match match_at(bytes, start) {
                Some(end) => assert_eq!(Some((start, end)), want, "{text:?} at {start}"),
                None => assert!(!text.is_ascii(), "{text:?} at {start}: no answer on ASCII"),
            }
        }
    }

    #[test]
    fn matches_equal_the_regex_on_card_like_text() {
        for text in [
            "Hello world, it's {{char}}'s turn.\n\n  She said: \"I'LL go\" -- 123456 apples!\r\n",
            "HELLOworld HEllo hello'S I'M YOU'RE we'Ve they'll he'd x'y 'twas ''",
            "a\t\tb  \n \n  c   d\u{b}\u{c}e ... .abc ./\n/\n/x 12.5kg 1,000,000",
            "<START>\n{{user}}: hi\n{{char}}: hello!!\n\n\n",
            "tab\tthen\t\t\tpunct\t!? space !? end ",
            "",
            " ",
            "'",
            "'l",
            "'L",
            "x'RE",
            "\u{0}\u{1f}\u{7f}abc",
        ] {
            assert_same_as_regex(text);
        }
    }

    #[test]
    fn gives_up_next_to_non_ascii() {
        for text in [
            "café",
            "naïve's",
            "it'ſ",
            "x'\u{17f}",
            " \u{a0}x",
            "12\u{663}",
            "a \u{2014}b",
            "日本 語",
            "é",
        ] {
            assert_same_as_regex(text);
        }
        assert_eq!(match_at("café".as_bytes(), 0), None);
        assert_eq!(match_at("it'ſ".as_bytes(), 0), None);
        assert_eq!(match_at(b"abc", 3), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// On text of ASCII with a few non-ASCII letters, spaces and digits mixed in.
        #[test]
        fn matches_equal_the_regex_on_arbitrary_text(
            text in "[ -~\\t\\n\\r\\x0b\\x0c\\x00\\x7f]{0,80}|[ a-zA-Z'.\\n\\r\\t0-9é\u{a0}\u{17f}\u{663}—]{0,80}"
        ) {
            assert_same_as_regex(&text);
        }
    }
}
