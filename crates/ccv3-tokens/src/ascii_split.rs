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
//!
//! Most pieces of card text are a word with the space (or quote, asterisk...) before it, and
//! most words are shorter than 8 letters. [`word_at`] takes those first: it reads the 8 bytes
//! after the prefix as one word, marks its upper- and lowercase letters with a few integer
//! operations on all 8 bytes at once, and finds where the letters end by counting trailing
//! bits, with no loop over the bytes (and no mispredicted loop exit per piece). Whatever it does
//! not decide (a word of 8 letters or more, a contraction, a non-ASCII byte, the last 8 bytes of
//! the text) goes the byte-at-a-time way below, which gives the same match.

/// Byte classes, as bits of [`CLASS`].
const UPPER: u8 = 1;
/// `a-z`.
const LOWER: u8 = 2;
/// `0-9`.
const DIGIT: u8 = 4;
/// `\s` on ASCII (the Unicode White_Space property): tab, line feed, vertical tab, form feed,
/// carriage return, space.
const SPACE: u8 = 8;
/// Neither whitespace, a letter nor a digit.
const PUNCT: u8 = 16;
/// A byte of a non-ASCII character: the matcher gives up when it has to look at one.
const OTHER: u8 = 32;

/// The class of every byte value.
const CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = if !c.is_ascii() {
            OTHER
        } else if c.is_ascii_uppercase() {
            UPPER
        } else if c.is_ascii_lowercase() {
            LOWER
        } else if c.is_ascii_digit() {
            DIGIT
        } else if matches!(c, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ') {
            SPACE
        } else {
            PUNCT
        };
        b += 1;
    }
    table
};

/// The class of position `i` of `text`; 0 at the end.
#[inline]
fn class(text: &[u8], i: usize) -> u8 {
    text.get(i).map_or(0, |&b| CLASS[usize::from(b)])
}

/// Moves `i` past the bytes of the classes `keep`; `None` if it stops at a non-ASCII byte.
#[inline]
fn run(text: &[u8], mut i: usize, keep: u8) -> Option<usize> {
    loop {
        let c = class(text, i);
        if c & keep == 0 {
            return if c == OTHER { None } else { Some(i) };
        }
        i += 1;
    }
}

/// The end of an optional contraction at `i` (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d`, any
/// case); `None` if it cannot be decided on ASCII.
#[inline]
fn contraction(text: &[u8], i: usize) -> Option<usize> {
    if text.get(i) != Some(&b'\'') {
        return Some(i);
    }
    let lower = |j: usize| match text.get(j) {
        Some(&b) if b.is_ascii() => Some(Some(b.to_ascii_lowercase())),
        Some(_) => None,
        None => Some(None),
    };
    Some(match lower(i + 1)? {
        Some(b's' | b't' | b'm' | b'd') => i + 2,
        Some(b'r') if lower(i + 2)? == Some(b'e') => i + 3,
        Some(b'v') if lower(i + 2)? == Some(b'e') => i + 3,
        Some(b'l') if lower(i + 2)? == Some(b'l') => i + 3,
        _ => i,
    })
}

/// [`WORD_START`]: the letters of a word start at this byte (a letter).
const AT: u8 = 0;
/// [`WORD_START`]: this byte may be the prefix of a word (not a line break, letter or digit),
/// whose letters start after it.
const AFTER: u8 = 1;
/// [`WORD_START`]: no word starts here (a digit, a line break, a non-ASCII byte).
const NO_WORD: u8 = 2;

/// Where the letters of a match starting at a byte would start, for [`word_at`].
const WORD_START: [u8; 256] = {
    let mut table = [NO_WORD; 256];
    let mut b = 0;
    while b < 256 {
        let class = CLASS[b];
        table[b] = if class & (UPPER | LOWER) != 0 {
            AT
        } else if class & (PUNCT | SPACE) != 0 && b != 0x0D && b != 0x0A {
            AFTER
        } else {
            NO_WORD
        };
        b += 1;
    }
    table
};

/// A byte with only its low bit set, in each of a word's 8 bytes.
const ONES: u64 = 0x0101_0101_0101_0101;
/// The high bit of each of a word's 8 bytes.
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` that is an ASCII letter. Setting bit 5 of each byte
/// folds `A-Z` onto `a-z` and moves no other byte into that range; each byte's high bit is set
/// before subtracting, so no subtraction borrows from the next byte.
#[inline]
fn letters(word: u64) -> u64 {
    let raised = word | HIGHS | (ONES * 0x20);
    let at_least_a = raised.wrapping_sub(ONES * u64::from(b'a'));
    let above_z = raised.wrapping_sub(ONES * u64::from(b'z' + 1));
    at_least_a & !above_z & !word & HIGHS
}

/// How many of the low bytes of `marks` (high bits, as from [`letters`]) are marked in a
/// row: 0 to 8.
#[inline]
fn marked_run(marks: u64) -> usize {
    ((!marks & HIGHS).trailing_zeros() / 8) as usize
}

/// The match at `start` when it is a run of ASCII letters shorter than 8 bytes, after an
/// optional prefix (alternatives 1 and 2: `P? [A-Z]* [a-z]+` or `P? [A-Z]+ [a-z]*`), followed
/// by a byte that is ASCII and no apostrophe; `None` for anything else, which [`match_at`]
/// then decides byte by byte. Both alternatives take letters up to an uppercase letter that
/// follows a lowercase one (`helloWorld` is `hello`, then `World`).
#[inline]
fn word_at(text: &[u8], start: usize) -> Option<Match> {
    let letters_at = match WORD_START[usize::from(*text.get(start)?)] {
        AT => start,
        AFTER => start + 1,
        _ => return None,
    };
    let bytes: [u8; 8] = text
        .get(letters_at..letters_at.checked_add(8)?)?
        .try_into()
        .ok()?;
    let word = u64::from_le_bytes(bytes);
    let alpha = letters(word);
    // Bit 5 of a letter (moved to its byte's high bit): set in lowercase, clear in uppercase.
    let case = word << 2;
    let upper_after_lower = alpha & !case & ((alpha & case) << 8);
    let len = marked_run(alpha).min((upper_after_lower.trailing_zeros() / 8) as usize);
    if len == 0 || len >= 8 {
        return None;
    }
    // The byte after the letters: a contraction or a non-ASCII byte needs the slow path.
    let next = *bytes.get(len)?;
    if next == b'\'' || !next.is_ascii() {
        return None;
    }
    Some(Match {
        end: letters_at + len,
        bare_space: false,
    })
}

/// One match of [`match_at`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Match {
    /// Where the match ends (exclusive).
    pub(crate) end: usize,
    /// The match is whitespace without a line break (the last alternative, `\s+`).
    pub(crate) bare_space: bool,
}

/// The match of `O200K_LINEAR` that starts at `start` (every position starts one), or `None`
/// when deciding it would look at a non-ASCII byte or `start` is at the end.
#[inline]
pub(crate) fn match_at(text: &[u8], start: usize) -> Option<Match> {
    word_at(text, start).or_else(|| match_bytewise(text, start))
}

/// [`match_at`] one byte at a time: every alternative, as the module docs list them.
fn match_bytewise(text: &[u8], start: usize) -> Option<Match> {
    let found = |end| {
        Some(Match {
            end,
            bare_space: false,
        })
    };
    let first = *text.get(start)?;
    let first_class = CLASS[usize::from(first)];
    if first_class == OTHER {
        return None;
    }
    // 1 and 2: an optional prefix (not a line break, letter or digit), then letters.
    let letters = if first_class & (PUNCT | SPACE) != 0 && first != b'\r' && first != b'\n' {
        start + 1
    } else {
        start
    };
    let upper_end = run(text, letters, UPPER)?;
    if class(text, upper_end) == LOWER {
        let lower_end = run(text, upper_end, LOWER)?;
        return found(contraction(text, lower_end)?);
    }
    if upper_end > letters {
        return found(contraction(text, upper_end)?);
    }
    // 3: one to three digits.
    if first_class == DIGIT {
        let mut end = start + 1;
        while end < start + 3 {
            match class(text, end) {
                DIGIT => end += 1,
                OTHER => return None,
                _ => break,
            }
        }
        return found(end);
    }
    // 4: an optional space, punctuation, then line breaks and slashes.
    let punct_start = match class(text, start + 1) {
        PUNCT if first == b' ' => Some(start + 1),
        OTHER if first == b' ' => return None,
        _ if first_class == PUNCT => Some(start),
        _ => None,
    };
    if let Some(p) = punct_start {
        let mut end = run(text, p, PUNCT)?;
        while let Some(b'\r' | b'\n' | b'/') = text.get(end) {
            end += 1;
        }
        return found(end);
    }
    // 5 and 6: whitespace, up to and with its last line break if it has one.
    if first_class != SPACE {
        return None;
    }
    let space_end = run(text, start, SPACE)?;
    let last_break = text
        .get(start..space_end)?
        .iter()
        .rposition(|&b| b == b'\r' || b == b'\n');
    Some(match last_break {
        Some(i) => Match {
            end: start + i + 1,
            bare_space: false,
        },
        None => Match {
            end: space_end,
            bare_space: true,
        },
    })
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
            // Both ways of matching, each on its own: the word fast path where it answers,
            // and the byte-at-a-time path everywhere.
            if let Some(m) = word_at(bytes, start) {
                assert_eq!(Some((start, m.end)), want, "word_at: {text:?} at {start}");
                assert!(!m.bare_space);
            }
            let bytewise = match_bytewise(bytes, start);
            assert!(bytewise.is_none() || bytewise == match_at(bytes, start));
            match match_at(bytes, start) {
                Some(m) => {
                    assert_eq!(Some((start, m.end)), want, "{text:?} at {start}");
                    let piece = text.get(start..m.end).unwrap_or_default();
                    let bare =
                        piece.chars().all(char::is_whitespace) && !piece.contains(['\r', '\n']);
                    assert_eq!(m.bare_space, bare, "{text:?} at {start}");
                }
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
            // Words around the fast path's 8-byte window: 7, 8 and 9 letters after a prefix,
            // case changes, an apostrophe or a line break right after, at the text's end.
            " abcdefg abcdefgh abcdefghi Abcdefg ABCDEFG ABCdefgh aBcDeFg \"quoted\" *acts*\n",
            "word's words' WORD'S Word'll x'y  two  spaces\ttab\r\nnext {{char}}: go.",
            "lighthouse keeper, the storm; reef/tide lamp.island harbour-boat rope@salt",
            "ABCDEFGH abcdefgh\rabcdefg\n",
            // Long runs, with a case change or a contraction late in them.
            " abcdefghijklmnop abcdefghijklmnopq abcdefghijklmnopqrstuvwx",
            " ABCDEFGHIJKLMNOPQ abcdefghIjkl abcdefgHijkl ABCDEFGHijklmnopQrs",
            "abcdefghijklmnopqrstuvwxyzabcdefghijklmnop's abcdefghijklm'S abcdefghijé.",
            "abc",
            " abcdefg",
            " abcdefgh",
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
            " wordé wordé!",
            " abcdefg\u{e9}xxxxxxxx",
            " ABCDEFé xxxxxxxxxxxx",
            "\u{a0}word word\u{a0} tail",
        ] {
            assert_same_as_regex(text);
        }
        assert_eq!(match_at("café".as_bytes(), 0), None);
        assert_eq!(match_at("it'ſ".as_bytes(), 0), None);
        assert_eq!(match_at(b"abc", 3), None);
        assert_eq!(
            match_at(b"  x", 0),
            Some(Match {
                end: 2,
                bare_space: true
            })
        );
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
