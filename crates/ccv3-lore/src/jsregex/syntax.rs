//! ECMAScript regex syntax read for the engines: the flag letters of a key ([`Flags`]) and the
//! translation of a pattern into `regex` crate syntax ([`translate`]), whose escape and class
//! readers the backtracking engine reuses.

/// The flags of a regex key that change how it matches, read from its flag letters as ECMAScript
/// names them (`i`, `m`, `s`, `u`, `v`); others (`g`, `y`, `d`) change nothing here and, as in
/// `regress`, unknown letters are skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Flags {
    /// `i`: case-insensitive.
    pub(crate) icase: bool,
    /// `m`: `^` and `$` at line breaks.
    pub(crate) multiline: bool,
    /// `s`: `.` matches line terminators.
    pub(crate) dot_all: bool,
    /// `u`: Unicode mode.
    pub(crate) unicode: bool,
    /// `v`: Unicode sets mode.
    pub(crate) unicode_sets: bool,
}

impl From<&str> for Flags {
    fn from(letters: &str) -> Self {
        let mut f = Flags::default();
        for c in letters.chars() {
            match c {
                'i' => f.icase = true,
                'm' => f.multiline = true,
                's' => f.dot_all = true,
                'u' => f.unicode = true,
                'v' => f.unicode_sets = true,
                _ => {}
            }
        }
        f
    }
}

const JS_SPACE: &str = "\\t\\n\\x0B\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}";
const JS_WORD: &str = "0-9A-Za-z_";

/// Translates an ECMAScript pattern into `regex` crate syntax; `None` when it uses a feature the
/// `regex` crate lacks (lookaround, backreferences) or a construct this translator does not know.
pub(crate) fn translate(pat: &str, f: &Flags) -> Option<String> {
    if f.unicode_sets {
        return None;
    }
    let mut out = String::with_capacity(pat.len() + 16);
    if f.icase {
        out.push_str("(?i)");
    }
    if f.multiline {
        out.push_str("(?m)");
    }
    let cs: Vec<char> = pat.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        match c {
            '\\' => {
                let (s, n) = escape(&cs, i + 1, f.unicode, false)?;
                out.push_str(&s);
                i = n;
                continue;
            }
            '.' => out.push_str(if f.dot_all {
                "(?s:.)"
            } else {
                "[^\\n\\r\\x{2028}\\x{2029}]"
            }),
            '(' => {
                if cs.get(i + 1) == Some(&'?') {
                    match (cs.get(i + 2), cs.get(i + 3)) {
                        (Some(':'), _) => {
                            out.push_str("(?:");
                            i += 3;
                            continue;
                        }
                        (Some('<'), Some(d)) if *d != '=' && *d != '!' => {
                            out.push_str("(?P<");
                            i += 3;
                            continue;
                        }
                        _ => return None,
                    }
                }
                out.push('(');
            }
            '[' => {
                let (s, n) = class(&cs, i + 1, f.unicode)?;
                out.push_str(&s);
                i = n;
                continue;
            }
            '{' => {
                let mut j = i + 1;
                let mut body = String::new();
                while j < cs.len() && cs[j] != '}' {
                    body.push(cs[j]);
                    j += 1;
                }
                let valid = j < cs.len() && {
                    let (lo, hi) = body.split_once(',').unwrap_or((&body, ""));
                    !lo.is_empty()
                        && lo.chars().all(|d| d.is_ascii_digit())
                        && hi.chars().all(|d| d.is_ascii_digit())
                };
                if valid {
                    out.push('{');
                    out.push_str(&body);
                    out.push('}');
                    i = j + 1;
                    continue;
                }
                out.push_str("\\{");
            }
            '}' => out.push_str("\\}"),
            ']' => out.push_str("\\]"),
            '#' | '&' | '~' | '-' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
        i += 1;
    }
    Some(out)
}

pub(super) fn hex(cs: &[char], from: usize, n: usize) -> Option<u32> {
    if from + n > cs.len() {
        return None;
    }
    let s: String = cs[from..from + n].iter().collect();
    u32::from_str_radix(&s, 16).ok()
}

/// Translates the escape whose letter is at `cs[i]`; returns the text and the next index.
pub(super) fn escape(
    cs: &[char],
    i: usize,
    unicode: bool,
    in_class: bool,
) -> Option<(String, usize)> {
    let c = *cs.get(i)?;
    let lit = |ch: char| regex::escape(ch.encode_utf8(&mut [0; 4]));
    let s = match c {
        'd' => {
            if in_class {
                "0-9".into()
            } else {
                "[0-9]".into()
            }
        }
        'w' => {
            if in_class {
                JS_WORD.into()
            } else {
                format!("[{JS_WORD}]")
            }
        }
        's' => {
            if in_class {
                JS_SPACE.into()
            } else {
                format!("[{JS_SPACE}]")
            }
        }
        // Negated shorthands inside a class: nested classes (`regex` syntax has them).
        'D' if in_class => "[^0-9]".into(),
        'W' if in_class => format!("[^{JS_WORD}]"),
        'S' if in_class => format!("[^{JS_SPACE}]"),
        'D' => "[^0-9]".into(),
        'W' => format!("[^{JS_WORD}]"),
        'S' => format!("[^{JS_SPACE}]"),
        'b' if in_class => "\\x08".into(),
        'b' => "(?-u:\\b)".into(),
        'B' => "(?-u:\\B)".into(),
        'n' | 'r' | 't' | 'f' | 'v' => format!("\\{c}"),
        '0' if !cs.get(i + 1).is_some_and(|d| d.is_ascii_digit()) => "\\x00".into(),
        '1'..='9' => return None,
        'k' if cs.get(i + 1) == Some(&'<') => return None,
        'x' => {
            let v = hex(cs, i + 1, 2)?;
            return Some((format!("\\x{{{v:X}}}"), i + 3));
        }
        'u' if unicode && cs.get(i + 1) == Some(&'{') => {
            let end = cs[i + 2..].iter().position(|&d| d == '}')? + i + 2;
            let v = hex(cs, i + 2, end - i - 2)?;
            char::from_u32(v)?;
            return Some((format!("\\x{{{v:X}}}"), end + 1));
        }
        'u' => {
            let v = hex(cs, i + 1, 4)?;
            char::from_u32(v)?; // surrogates: leave to regress
            return Some((format!("\\x{{{v:X}}}"), i + 5));
        }
        'c' => {
            let l = *cs.get(i + 1)?;
            if !l.is_ascii_alphabetic() {
                return None;
            }
            return Some((format!("\\x{{{:X}}}", (l as u32) % 32), i + 2));
        }
        'p' | 'P' if unicode => {
            let end = cs[i + 1..].iter().position(|&d| d == '}')? + i + 1;
            let body: String = cs[i..=end].iter().collect();
            return Some((format!("\\{body}"), end + 1));
        }
        _ if c.is_ascii_alphanumeric() && unicode => return None,
        _ => lit(c),
    };
    Some((s, i + 1))
}

/// Translates a class whose first character (after `[`) is at `cs[i]`.
pub(super) fn class(cs: &[char], mut i: usize, unicode: bool) -> Option<(String, usize)> {
    let mut out = String::from("[");
    if cs.get(i) == Some(&'^') {
        if cs.get(i + 1) == Some(&']') {
            return Some(("(?s:.)".into(), i + 2));
        }
        out.push('^');
        i += 1;
    }
    if cs.get(i) == Some(&']') {
        return None; // the empty class
    }
    let mut prev_dash = false;
    while let Some(&c) = cs.get(i) {
        match c {
            ']' => {
                out.push(']');
                return Some((out, i + 1));
            }
            '\\' => {
                let (s, n) = escape(cs, i + 1, unicode, true)?;
                out.push_str(&s);
                i = n;
                prev_dash = false;
                continue;
            }
            '-' if prev_dash => return None,
            '[' | '&' | '~' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
        prev_dash = c == '-';
        i += 1;
    }
    None
}
