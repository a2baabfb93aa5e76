//! JSON text: decoding card and lorebook files (BOM, UTF-8/UTF-16, position-carrying errors) and
//! writing them.

use crate::diag::Diagnostic;
use crate::error::{Error, Result};
use crate::model::Raw;
use serde::Serialize;
use serde_json::Value;

/// The most JSON text we decode (1 GiB): bigger inputs are refused before any allocation.
pub const MAX_JSON_LEN: usize = 1 << 30;

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
    with_text(bytes, |text, diags| {
        let v: Value = serde_json::from_slice(text).map_err(|e| Error::from_json(&e))?;
        Ok((v, diags))
    })
}

/// Parses JSON text into the model's fast raw tree and hands it to `f` (the tree borrows the
/// text, which may have been decoded from UTF-16 here). Lorebook entries are converted while
/// parsing where their place is known (see `model::stream`); `bare_books` adds the guess for a
/// top-level `entries` array.
pub(crate) fn with_raw<T>(
    bytes: &[u8],
    bare_books: bool,
    f: impl FnOnce(Raw<'_>, Vec<Diagnostic>) -> Result<T>,
) -> Result<T> {
    with_text(bytes, |text, diags| {
        let raw =
            crate::model::stream::parse(text, bare_books).map_err(|e| Error::from_json(&e))?;
        f(raw, diags)
    })
}

/// Checks size and encoding, then calls `f` with UTF-8 JSON text and the diagnostics so far.
fn with_text<T>(bytes: &[u8], f: impl FnOnce(&[u8], Vec<Diagnostic>) -> Result<T>) -> Result<T> {
    if bytes.len() > MAX_JSON_LEN {
        return Err(Error::Limit(format!(
            "JSON text of {} bytes is over the {MAX_JSON_LEN}-byte limit",
            bytes.len()
        )));
    }
    let mut diags = Vec::new();
    let utf16;
    let text: &[u8] = if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        diags.push(Diagnostic::warning(
            "bom",
            "",
            "file starts with a UTF-8 byte order mark; ignored it",
        ));
        rest
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
        utf16 = String::from_utf16(&units).map_err(|_| Error::Json {
            line: 0,
            column: 0,
            problem: "invalid UTF-16 text".into(),
        })?;
        diags.push(Diagnostic::warning(
            "utf16",
            "",
            "file is UTF-16 text; decoded it",
        ));
        utf16.as_bytes()
    } else {
        bytes
    };
    // serde_json checks UTF-8 as it parses and reports where it is broken.
    f(text, diags)
}

/// Serialises a value as pretty JSON (two-space indent, UTF-8, no escaping of non-ASCII).
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
    let result = if pretty {
        let fmt = serde_json::ser::PrettyFormatter::with_indent(b"  ");
        v.serialize(&mut serde_json::Serializer::with_formatter(w, fmt))
    } else {
        v.serialize(&mut serde_json::Serializer::new(w))
    };
    result.map_err(std::io::Error::from)
}

/// Serialises a value as compact JSON.
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
