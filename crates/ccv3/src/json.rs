//! JSON text: decoding card and lorebook files (BOM, UTF-8/UTF-16, position-carrying errors,
//! lone surrogate escapes) and writing them.
//!
//! # Lone surrogates
//! JSON escapes characters outside the Basic Multilingual Plane as a UTF-16 pair
//! (`"\ud83d\ude00"`). Chat applications that cut text by UTF-16 unit leave half a pair behind
//! (`"\ud83d"`, or a reversed `"\ude00\ud83d"`), which `serde_json` (like any strict parser)
//! rejects. Every reader of this project (cards, lorebooks of every format, chats, state files)
//! goes through [`repair_lone_surrogates`]: each lone escape becomes U+FFFD (the escape
//! `\ufffd`, the same length, so error positions stay right) with one warning
//! ([`LONE_SURROGATE`]), instead of the whole file being refused. The repair runs only after the
//! parser reported such an escape, so files without one cost nothing more.

use crate::diag::Diagnostic;
use crate::error::{Error, Result};
use serde::Serialize;
use serde_json::Value;

pub use crate::read_options::{MAX_JSON_LEN, MAX_JSON_VALUES};

/// The diagnostic code of lone surrogate escapes replaced by U+FFFD (see the module docs).
pub const LONE_SURROGATE: &str = "json-lone-surrogate";

/// Parses JSON text from bytes, accepting a UTF-8 BOM or UTF-16 text with a BOM (with a
/// diagnostic each). Errors carry line and column.
///
/// ```
/// let (v, diags) = ccv3::json::parse(b"\xEF\xBB\xBF{\"a\":1}")?;
/// assert_eq!(v["a"], 1);
/// assert_eq!(diags[0].code, "bom");
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn parse(bytes: &[u8]) -> Result<(Value, Vec<Diagnostic>)> {
    parse_with(bytes, &crate::ReadOptions::default())
}

/// [`parse`] within the JSON limits of `opts` ([`crate::ReadOptions::max_json_len`] and
/// [`crate::ReadOptions::max_json_values`]) instead of the defaults.
///
/// ```
/// let mut opts = ccv3::ReadOptions::default();
/// opts.max_json_len = 4;
/// let err = ccv3::json::parse_with(b"[1, 2, 3]", &opts).unwrap_err();
/// assert!(err.to_string().contains("max_json_len"));
/// ```
pub fn parse_with(bytes: &[u8], opts: &crate::ReadOptions) -> Result<(Value, Vec<Diagnostic>)> {
    with_text(Text::Bytes(bytes), opts, |text, mut diags| {
        let (v, repaired) =
            from_slice_repaired::<Value>(text.as_bytes()).map_err(|e| Error::from_json(&e))?;
        diags.extend(repaired);
        Ok((v, diags))
    })
}

/// True when `err` is `serde_json`'s complaint about a lone UTF-16 surrogate escape.
///
/// ```
/// let err = serde_json::from_str::<String>(r#""\ud83d""#).unwrap_err();
/// assert!(ccv3::json::is_lone_surrogate_error(&err));
/// let other = serde_json::from_str::<String>("nope").unwrap_err();
/// assert!(!ccv3::json::is_lone_surrogate_error(&other));
/// ```
pub fn is_lone_surrogate_error(err: &serde_json::Error) -> bool {
    let text = err.to_string();
    text.starts_with("lone leading surrogate in hex escape")
        || text.starts_with("unexpected end of hex escape")
}

/// Parses JSON text into any owned type, replacing lone UTF-16 surrogate escapes by U+FFFD when
/// the parser trips on one; the warning says how many were replaced. Every JSON reader of the
/// project uses this (or [`parse`]), so a chat cut in the middle of an emoji still reads.
///
/// ```
/// let (v, warning) = ccv3::json::from_slice_repaired::<serde_json::Value>(br#"["a\ud800b"]"#)?;
/// assert_eq!(v[0], "a\u{fffd}b");
/// assert_eq!(warning.unwrap().code, ccv3::json::LONE_SURROGATE);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn from_slice_repaired<T: serde::de::DeserializeOwned>(
    text: &[u8],
) -> std::result::Result<(T, Option<Diagnostic>), serde_json::Error> {
    match serde_json::from_slice(text) {
        Ok(v) => Ok((v, None)),
        Err(e) if is_lone_surrogate_error(&e) => match repair_lone_surrogates(text) {
            Some(repair) => {
                let v = serde_json::from_slice(&repair.text)?;
                Ok((v, Some(repair.diagnostic())))
            }
            None => Err(e),
        },
        Err(e) => Err(e),
    }
}

/// JSON text whose lone surrogate escapes were replaced, from [`repair_lone_surrogates`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repaired {
    /// The text, every lone `\uD800`-`\uDFFF` escape replaced by `\ufffd` (same length).
    pub text: Vec<u8>,
    /// How many escapes were replaced.
    pub count: usize,
    /// 1-based line and column of the first one.
    pub first: (usize, usize),
}

impl Repaired {
    /// The warning that reports the repair.
    pub fn diagnostic(&self) -> Diagnostic {
        let (line, column) = self.first;
        Diagnostic::warning(
            LONE_SURROGATE,
            "",
            format!(
                "{} lone UTF-16 surrogate escape{} (half of an emoji pair) replaced by U+FFFD, \
                 the first at line {line} column {column}",
                self.count,
                if self.count == 1 { "" } else { "s" }
            ),
        )
    }
}

/// Replaces every lone UTF-16 surrogate escape (`\ud800`-`\udfff` not part of a high-low pair)
/// of JSON text by `\ufffd`, in keys and values alike; `None` when the text has none. Linear in
/// the text: only backslashes are looked at (found with `memchr`).
///
/// ```
/// let r = ccv3::json::repair_lone_surrogates(br#"{"k\udc00\ud800":"\ud83d\ude00"}"#).unwrap();
/// assert_eq!(r.text, br#"{"k\ufffd\ufffd":"\ud83d\ude00"}"#);
/// assert_eq!(r.count, 2);
/// assert!(ccv3::json::repair_lone_surrogates(br#"["\\ud800"]"#).is_none());
/// ```
pub fn repair_lone_surrogates(text: &[u8]) -> Option<Repaired> {
    fn hex4(text: &[u8], at: usize) -> Option<u16> {
        let digits = text.get(at..at + 4)?;
        let s = std::str::from_utf8(digits).ok()?;
        if !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u16::from_str_radix(s, 16).ok()
    }
    let mut out: Option<Vec<u8>> = None;
    let mut count = 0usize;
    let mut first = 0usize;
    let mut i = 0usize;
    while let Some(off) = text.get(i..).and_then(|rest| memchr::memchr(b'\\', rest)) {
        let at = i + off;
        if text.get(at + 1) != Some(&b'u') {
            // `\\`, `\"`, `\n`...: the escaped character is never the start of an escape.
            i = at + 2;
            continue;
        }
        let Some(n) = hex4(text, at + 2) else {
            i = at + 2;
            continue;
        };
        let lone = match n {
            0xD800..=0xDBFF => {
                let paired = text.get(at + 6..at + 8) == Some(&b"\\u"[..])
                    && hex4(text, at + 8).is_some_and(|m| (0xDC00..=0xDFFF).contains(&m));
                if paired {
                    i = at + 12;
                    continue;
                }
                true
            }
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            let buf = out.get_or_insert_with(|| text.to_vec());
            if let Some(slot) = buf.get_mut(at..at + 6) {
                slot.copy_from_slice(b"\\ufffd");
            }
            if count == 0 {
                first = at;
            }
            count += 1;
        }
        i = at + 6;
    }
    let text = out?;
    let before = text.get(..first).unwrap_or_default();
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let column = first - memchr::memrchr(b'\n', before).map_or(0, |p| p + 1) + 1;
    Some(Repaired {
        text,
        count,
        first: (line, column),
    })
}

/// JSON text as the parser gets it: bytes (checked as UTF-8 while they are parsed), or a `str`
/// already checked (parsed without checking again).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Text<'t> {
    /// Bytes not yet known to be UTF-8.
    Bytes(&'t [u8]),
    /// Checked UTF-8.
    Str(&'t str),
}

impl<'t> Text<'t> {
    /// The text's bytes.
    pub(crate) fn as_bytes(self) -> &'t [u8] {
        match self {
            Text::Bytes(b) => b,
            Text::Str(s) => s.as_bytes(),
        }
    }
}

/// The error for JSON text over `max_len` bytes.
pub(crate) fn too_long(len: u64, max_len: u64) -> Error {
    Error::Limit(format!(
        "JSON text of {len} bytes is over the limit of {max_len} bytes (the option \
         ReadOptions::max_json_len raises it)"
    ))
}

/// An upper bound of [`count_values`], strings included: one vectorised pass, so a big book
/// (whose strings hold few commas) is usually let through without the exact count.
fn rough_count(text: &[u8]) -> u64 {
    let mut n: u64 = 1;
    // Blocks of 255 bytes: the count of one fits a u8, so the loop runs on byte lanes.
    for block in text.chunks(255) {
        let c = block.iter().fold(0u8, |acc, &b| {
            acc.wrapping_add(u8::from(matches!(b, b',' | b':' | b'[' | b'{')))
        });
        n += u64::from(c);
    }
    n
}

/// About how many JSON values and object keys `text` holds: every `,`, `:`, `[` and `{` outside
/// strings, plus one (each value but the first follows a comma or a colon, opens a container, or
/// is the first item of one). Strings are skipped with `memchr`, so card text (mostly strings)
/// costs little; structure is counted byte by byte.
pub(crate) fn count_values(text: &[u8], stop_above: u64) -> u64 {
    let mut n: u64 = 1;
    let mut i = 0usize;
    while i < text.len() {
        let rest = text.get(i..).unwrap_or_default();
        let quote = memchr::memchr(b'"', rest).unwrap_or(rest.len());
        n += rest
            .get(..quote)
            .unwrap_or_default()
            .iter()
            .filter(|&&b| matches!(b, b',' | b':' | b'[' | b'{'))
            .count() as u64;
        if n > stop_above {
            return n;
        }
        // Inside a string: to the closing quote, stepping over escapes.
        i += quote + 1;
        while let Some(off) = text.get(i..).and_then(|r| memchr::memchr2(b'"', b'\\', r)) {
            let at = i + off;
            if text.get(at) == Some(&b'\\') {
                i = at + 2;
            } else {
                i = at + 1;
                break;
            }
        }
        if i >= text.len() {
            break;
        }
    }
    n
}

/// Checks size, value count and encoding, then calls `f` with UTF-8 JSON text and the
/// diagnostics so far.
pub(crate) fn with_text<T>(
    input: Text<'_>,
    opts: &crate::ReadOptions,
    f: impl FnOnce(Text<'_>, Vec<Diagnostic>) -> Result<T>,
) -> Result<T> {
    let bytes = input.as_bytes();
    let max_len = opts.max_json_len;
    if bytes.len() as u64 > max_len {
        return Err(too_long(bytes.len() as u64, max_len));
    }
    let mut diags = Vec::new();
    let utf16;
    let text: Text<'_> = if bytes.starts_with(b"\xEF\xBB\xBF") {
        diags.push(Diagnostic::warning(
            "bom",
            "",
            "file starts with a UTF-8 byte order mark; ignored it",
        ));
        match input {
            Text::Bytes(b) => Text::Bytes(b.get(3..).unwrap_or_default()),
            Text::Str(s) => Text::Str(s.strip_prefix('\u{feff}').unwrap_or(s)),
        }
    } else if bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF") {
        let le = bytes[0] == 0xFF;
        let units: Vec<u16> = bytes[2..]
            .chunks_exact(2)
            .map(|c| {
                if le {
                    u16::from_le_bytes([c[0], c[1]])
                } else {
                    u16::from_be_bytes([c[0], c[1]])
                }
            })
            .collect();
        // Half a surrogate pair in the file's own UTF-16 becomes U+FFFD too (issue 12).
        utf16 = match String::from_utf16(&units) {
            Ok(s) => s,
            Err(_) => {
                diags.push(Diagnostic::warning(
                    LONE_SURROGATE,
                    "",
                    "the UTF-16 text holds lone surrogates; replaced them by U+FFFD",
                ));
                String::from_utf16_lossy(&units)
            }
        };
        drop(units);
        diags.push(Diagnostic::warning(
            "utf16",
            "",
            "file is UTF-16 text; decoded it",
        ));
        Text::Str(&utf16)
    } else {
        input
    };
    // A value takes at least two text of text (`0,`): shorter texts cannot pass the count.
    let max_values = opts.max_json_values;
    let raw = text.as_bytes();
    if raw.len() as u64 / 2 > max_values && rough_count(raw) > max_values {
        let n = count_values(raw, max_values);
        if n > max_values {
            return Err(Error::Limit(format!(
                "JSON text holds more than {max_values} values (the option \
                 ReadOptions::max_json_values raises it)"
            )));
        }
    }
    // serde_json checks the UTF-8 of bytes as it parses and reports where it is broken.
    f(text, diags)
}

/// Serialises a value as pretty JSON (two-space indent, UTF-8, no escaping of non-ASCII).
///
/// ```
/// let v = serde_json::json!({"name": "Émile", "tags": ["a"]});
/// let text = String::from_utf8(ccv3::json::to_pretty(&v)).unwrap();
/// assert_eq!(text, "{\n  \"name\": \"Émile\",\n  \"tags\": [\n    \"a\"\n  ]\n}\n");
/// ```
pub fn to_pretty<T: Serialize + ?Sized>(v: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    // Writing to memory cannot fail, and every key of what is written here is a string.
    let _ = write(&mut out, v, true);
    out.push(b'\n');
    out
}

/// Writes `v` to `w` as JSON text: indented as [`to_pretty`] indents (without its final line
/// break), or compact as [`to_compact`].
pub(crate) fn write<W: std::io::Write, T: Serialize + ?Sized>(
    w: W,
    v: &T,
    pretty: bool,
) -> std::io::Result<()> {
    use crate::json_text::TextSerializer;
    let result = if pretty {
        let fmt = serde_json::ser::PrettyFormatter::with_indent(b"  ");
        v.serialize(&mut TextSerializer::new(w, fmt))
    } else {
        v.serialize(&mut TextSerializer::new(
            w,
            serde_json::ser::CompactFormatter,
        ))
    };
    result.map_err(std::io::Error::from)
}

/// Serialises a value as compact JSON.
///
/// ```
/// let v = serde_json::json!({"name": "Émile", "tags": ["a"]});
/// assert_eq!(ccv3::json::to_compact(&v), r#"{"name":"Émile","tags":["a"]}"#.as_bytes());
/// ```
pub fn to_compact<T: Serialize + ?Sized>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

/// A short name of a JSON value's type, for messages: `null`, `a boolean`, `a number`,
/// `a string`, `an array` or `an object`.
///
/// ```
/// assert_eq!(ccv3::json::type_name(&serde_json::json!([1])), "an array");
/// ```
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What reading `text` gives: the tree as a value and the diagnostics' codes and messages,
    /// or the error's text.
    fn read(text: Text<'_>) -> std::result::Result<(Value, Vec<String>), String> {
        let opts = crate::ReadOptions::default();
        crate::model::stream::with_raw_text(text, &opts, false, |raw, diags| {
            let notes = diags
                .iter()
                .map(|d| format!("{} {}", d.code, d.message))
                .collect();
            Ok((raw.into_value(), notes))
        })
        .map_err(|e| e.to_string())
    }

    /// Issue 16: a card chunk's text, already checked as UTF-8, is parsed from the `str`
    /// without a second UTF-8 pass; it reads exactly as its bytes do (RFC 8259 JSON text, the
    /// BOM and lone-surrogate repairs of this module, and the same error positions).
    #[test]
    fn str_text_reads_as_its_bytes() {
        let texts = [
            r#"{"spec":"chara_card_v3","data":{"name":"Ünïcode ✓","tags":["a"]}}"#,
            "\u{feff}{\"a\":1}",
            r#"{"a":"x\ud800y","b":"\ud83d\ude00"}"#,
            r#"{"spec":"chara_card_v3","data":{"character_book":{"entries":[{"keys":["k"],"content":"c"}]}}}"#,
            "{\"a\":\n  [1, 2,, 3]}",
            "{\"a\": \"unterminated",
            "",
        ];
        for t in texts {
            let from_str = read(Text::Str(t));
            assert_eq!(from_str, read(Text::Bytes(t.as_bytes())), "{t:?}");
        }
        let (_, notes) = read(Text::Str("\u{feff}{}")).unwrap();
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("bom "), "{notes:?}");
        let (v, notes) = read(Text::Str(r#"["\ud800"]"#)).unwrap();
        assert_eq!(v[0], "\u{fffd}");
        assert!(notes[0].starts_with(LONE_SURROGATE), "{notes:?}");
    }
}
