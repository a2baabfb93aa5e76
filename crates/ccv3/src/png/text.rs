//! Keywords and values of card text chunks: which keyword is which, base64 and zlib text
//! decoded (leniently, with a diagnostic) and encoded, the diagnostics of one read.

use super::chunk::{Header, Limits, ASSET_PREFIX};
use std::io::Read;

use base64_simd::STANDARD;

use crate::{Diagnostic, Error, Result};

/// The most diagnostics of one code a PNG read lists; the rest are counted in one more.
pub(super) const PER_CODE: usize = 100;

/// The diagnostics of one read, at most [`PER_CODE`] of each code; the rest are counted and
/// summed up in one last diagnostic of the same code (issue 12: a million duplicate chunks must
/// not make a million warnings).
#[derive(Default)]
pub(super) struct Notes {
    pub(super) list: Vec<Diagnostic>,
    pub(super) counts: std::collections::HashMap<String, usize>,
}

impl Notes {
    pub(super) fn push(&mut self, d: Diagnostic) {
        let n = self.counts.entry(d.code.clone()).or_default();
        *n += 1;
        if *n <= PER_CODE {
            self.list.push(d);
        }
    }

    pub(super) fn extend(&mut self, ds: impl IntoIterator<Item = Diagnostic>) {
        for d in ds {
            self.push(d);
        }
    }

    pub(super) fn finish(mut self) -> Vec<Diagnostic> {
        let mut summaries = Vec::new();
        for d in &self.list {
            let n = self.counts.remove(&d.code).unwrap_or(0);
            if n > PER_CODE {
                summaries.push(Diagnostic::new(
                    d.severity,
                    d.code.clone(),
                    "",
                    format!("{} more like the above not listed", n - PER_CODE),
                ));
            }
        }
        self.list.extend(summaries);
        self.list
    }
}

/// The error for a file whose card text passes [`Limits::max_total_text`].
pub(super) fn over_budget(limits: &Limits, chunk: &str, at: u64) -> Error {
    Error::Limit(format!(
        "the card text chunks of this PNG hold more than {} bytes (read and inflated, all \
         chunks together; reached at the {chunk} chunk at byte {at}; the option \
         png::Limits::max_total_text raises it)",
        limits.max_total_text
    ))
}

/// Which card chunk a keyword names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum CardKey {
    Ccv3,
    Chara,
    Asset(String),
}

/// `tEXt chunk "ccv3" at byte 27805`: a card chunk as messages name it, written only when a
/// message needs it (issue 16: not formatted for every chunk read).
pub(super) struct ChunkLabel<'a> {
    pub(super) header: &'a Header,
    pub(super) keyword: &'a [u8],
    /// The chunk's offset from the start of the PNG.
    pub(super) at: u64,
}

impl std::fmt::Display for ChunkLabel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} chunk {:?} at byte {}",
            self.header.name(),
            latin1(self.keyword),
            self.at
        )
    }
}

pub(super) fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

pub(super) fn classify(keyword: &[u8]) -> Option<CardKey> {
    if keyword.eq_ignore_ascii_case(b"ccv3") {
        return Some(CardKey::Ccv3);
    }
    if keyword.eq_ignore_ascii_case(b"chara") {
        return Some(CardKey::Chara);
    }
    let head = keyword.get(..ASSET_PREFIX.len())?;
    if !head.eq_ignore_ascii_case(ASSET_PREFIX) {
        return None;
    }
    let rest = keyword.get(ASSET_PREFIX.len()..).unwrap_or_default();
    let path = rest.strip_prefix(b":").unwrap_or(rest);
    Some(CardKey::Asset(latin1(path)))
}

/// How a value was decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Leniency {
    Strict,
    Base64Repaired,
    RawJson,
}

/// Decodes base64, strictly first, then leniently: without whitespace, padding optional,
/// trailing bits ignored, and the URL-safe alphabet (`-`, `_`) when the value uses it.
pub(super) fn decode_base64(value: &[u8]) -> std::result::Result<(Vec<u8>, Leniency), String> {
    // Card chunks run to megabytes: the SIMD decoder takes the strict, common case.
    if let Ok(bytes) = STANDARD.decode_to_vec(value) {
        return Ok((bytes, Leniency::Strict));
    }
    let mut cleaned: Vec<u8> = value
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    let url_safe = cleaned.iter().any(|&b| b == b'-' || b == b'_');
    let alphabet_ok = |b: u8| {
        b.is_ascii_alphanumeric()
            || b == b'='
            || if url_safe {
                b == b'-' || b == b'_'
            } else {
                b == b'+' || b == b'/'
            }
    };
    if let Some(at) = cleaned.iter().position(|&b| !alphabet_ok(b)) {
        return Err(format!(
            "value is not base64 (invalid symbol {}, offset {at})",
            cleaned[at]
        ));
    }
    if url_safe {
        for b in &mut cleaned {
            *b = match *b {
                b'-' => b'+',
                b'_' => b'/',
                other => other,
            };
        }
    }
    // WHATWG forgiving-base64: optional padding, trailing bits ignored.
    match base64_simd::forgiving_decode_to_vec(&cleaned) {
        Ok(bytes) => Ok((bytes, Leniency::Base64Repaired)),
        Err(_) => Err(format!(
            "value is not base64 (invalid length or padding: {} symbols)",
            cleaned.len()
        )),
    }
}

/// Decodes a card text value (base64 of UTF-8 JSON, or raw JSON) to the JSON text.
pub(super) fn decode_text_inner(value: &[u8]) -> std::result::Result<(String, Leniency), String> {
    let trimmed = value.trim_ascii();
    if trimmed.first() == Some(&b'{') {
        // Raw JSON instead of base64: UTF-8 if it is, else Latin-1 as tEXt defines.
        let text = match std::str::from_utf8(trimmed) {
            Ok(s) => s.to_owned(),
            Err(_) => latin1(trimmed),
        };
        return Ok((text, Leniency::RawJson));
    }
    let (bytes, how) = decode_base64(trimmed)?;
    match utf8_text(bytes) {
        Ok(s) => Ok((s, how)),
        Err(e) => Err(format!(
            "base64-decoded value is not UTF-8 (invalid byte at {})",
            e.utf8_error().valid_up_to()
        )),
    }
}

/// `String::from_utf8`, with the check made by `simdutf8` (32 bytes at a time where the CPU
/// has AVX2, against the standard library's 16 on ASCII and byte by byte elsewhere; issue 16:
/// every PNG card's JSON text is checked once, before it is parsed; in WebAssembly built with
/// simd128, 16 bytes at a time against the standard library's 4: issue 29, where the check was
/// a tenth of the npm `readCardSummary` of a library's PNG cards). The same result as
/// `String::from_utf8` for every input: text `simdutf8` refuses is checked again by the
/// standard library, which gives the error and its position.
pub(super) fn utf8_text(bytes: Vec<u8>) -> std::result::Result<String, std::string::FromUtf8Error> {
    if simdutf8::basic::from_utf8(&bytes).is_err() {
        return String::from_utf8(bytes);
    }
    // SAFETY: `simdutf8` has just checked that `bytes` is UTF-8 (RFC 3629, the rules of
    // `str::from_utf8`).
    #[allow(unsafe_code)]
    Ok(unsafe { String::from_utf8_unchecked(bytes) })
}

/// Encodes a JSON text as a card chunk value: base64 (standard alphabet, padded) of its UTF-8.
///
/// ```
/// assert_eq!(ccv3::png::encode_text_value("{}"), b"e30=".to_vec());
/// ```
pub fn encode_text_value(json: &str) -> Vec<u8> {
    STANDARD.encode_to_string(json.as_bytes()).into_bytes()
}

/// Decodes a card chunk value to its JSON text, as the reader does.
///
/// Accepts base64 with whitespace, without padding or in the URL-safe alphabet, and a raw JSON
/// text; each repair is returned as a warning [`Diagnostic`]. Fails when the value is neither
/// base64 nor JSON, or does not decode to UTF-8.
///
/// ```
/// let (json, diags) = ccv3::png::decode_text_value(b"e30")?;
/// assert_eq!(json, "{}");
/// assert_eq!(diags.len(), 1); // missing padding repaired
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn decode_text_value(value: &[u8]) -> Result<(String, Vec<Diagnostic>)> {
    match decode_text_inner(value) {
        Ok((text, how)) => {
            let diags = leniency_diagnostic(how, &"value").into_iter().collect();
            Ok((text, diags))
        }
        Err(problem) => Err(Error::Png {
            chunk: "tEXt".into(),
            offset: 0,
            problem,
        }),
    }
}

pub(super) fn leniency_diagnostic(
    how: Leniency,
    what: &dyn std::fmt::Display,
) -> Option<Diagnostic> {
    match how {
        Leniency::Strict => None,
        Leniency::Base64Repaired => Some(Diagnostic::warning(
            "png-base64-lenient",
            "",
            format!("{what} is not canonical base64 (whitespace, padding or alphabet repaired)"),
        )),
        Leniency::RawJson => Some(Diagnostic::warning(
            "png-text-not-base64",
            "",
            format!("{what} holds raw JSON instead of base64"),
        )),
    }
}

/// Why a chunk's text could not be had.
#[derive(Debug)]
pub(super) enum TextFault {
    /// The chunk is malformed (or its one value inflates past [`Limits::max_inflated`]).
    Malformed(String),
    /// Inflating would pass what is left of [`Limits::max_total_text`].
    OverBudget,
}

impl From<String> for TextFault {
    fn from(s: String) -> Self {
        TextFault::Malformed(s)
    }
}

impl From<&str> for TextFault {
    fn from(s: &str) -> Self {
        TextFault::Malformed(s.to_string())
    }
}

/// Extracts the text of a `tEXt`, `zTXt` or `iTXt` chunk's data (keyword included): borrowed
/// from the data unless it had to be inflated (card chunks run to megabytes). Inflating stops at
/// `budget` bytes (what is left of the file's budget).
pub(super) fn text_of_chunk<'d>(
    kind: &[u8; 4],
    data: &'d [u8],
    limits: &Limits,
    budget: u64,
) -> std::result::Result<std::borrow::Cow<'d, [u8]>, TextFault> {
    use std::borrow::Cow;
    let nul = memchr::memchr(0, data).ok_or("no NUL after the keyword")?;
    let after = data.get(nul + 1..).unwrap_or_default();
    match kind {
        b"tEXt" => Ok(Cow::Borrowed(after)),
        b"zTXt" => match after.split_first() {
            Some((0, stream)) => inflate(stream, limits, budget).map(Cow::Owned),
            Some((m, _)) => Err(format!("unknown compression method {m}").into()),
            None => Err("missing compression method".into()),
        },
        b"iTXt" => {
            let (&flag, rest) = after.split_first().ok_or("missing compression flag")?;
            let (&method, rest) = rest.split_first().ok_or("missing compression method")?;
            let lang_end = memchr::memchr(0, rest).ok_or("missing NUL after the language tag")?;
            let rest = rest.get(lang_end + 1..).unwrap_or_default();
            let tk_end =
                memchr::memchr(0, rest).ok_or("missing NUL after the translated keyword")?;
            let text = rest.get(tk_end + 1..).unwrap_or_default();
            match (flag, method) {
                (0, _) => Ok(Cow::Borrowed(text)),
                (1, 0) => inflate(text, limits, budget).map(Cow::Owned),
                (1, m) => Err(format!("unknown compression method {m}").into()),
                (f, _) => Err(format!("invalid compression flag {f}").into()),
            }
        }
        _ => Err("not a text chunk".into()),
    }
}

/// Inflates a zlib stream, never producing more than `limits.max_inflated` bytes nor more than
/// `budget` (checked while inflating: the output stops one byte past the smaller bound).
pub(super) fn inflate(
    stream: &[u8],
    limits: &Limits,
    budget: u64,
) -> std::result::Result<Vec<u8>, TextFault> {
    let mut out = Vec::new();
    let bound = limits.max_inflated.min(budget);
    // `bufread` over the slice: no 32 KiB buffer per chunk (a million tiny zTXt chunks).
    flate2::bufread::ZlibDecoder::new(stream)
        .take(bound.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| format!("compressed text is corrupt ({e})"))?;
    if out.len() as u64 > bound {
        if limits.max_inflated <= budget {
            return Err(TextFault::Malformed(format!(
                "inflated text exceeds the limit of {} bytes (png::Limits::max_inflated)",
                limits.max_inflated
            )));
        }
        return Err(TextFault::OverBudget);
    }
    Ok(out)
}
