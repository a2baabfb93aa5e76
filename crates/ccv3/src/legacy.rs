//! TavernAI-era WebP and JPEG cards: the card JSON in the EXIF `UserComment` tag.
//!
//! # Where the card is
//!
//! Before PNG text chunks became the norm, TavernAI saved cards as WebP (and some tools as JPEG)
//! with the card JSON in the EXIF `UserComment` tag (`0x9286`).
//!
//! * **WebP** is a RIFF container: `"RIFF"`, a little-endian u32 size, `"WEBP"`, then chunks of
//!   `FourCC, u32 LE size, data`, each padded to an even length. The `EXIF` chunk holds the EXIF
//!   data, starting either with `"Exif\0\0"` or directly with the TIFF header.
//! * **JPEG** is a sequence of segments `FF marker [u16 BE length, data]` after `FF D8` (SOI); the
//!   EXIF data is in an APP1 segment (`FF E1`) whose data starts with `"Exif\0\0"`. Segments end at
//!   SOS (`FF DA`, start of the compressed image) or EOI (`FF D9`).
//!
//! EXIF data is a TIFF structure: a header (`"II*\0"` little-endian or `"MM\0*"` big-endian, then
//! the u32 offset of IFD0), then IFDs: a u16 entry count, 12-byte entries (`tag u16`, `type u16`,
//! `count u32`, value or offset u32: values of 4 bytes or less are stored inline) and the u32
//! offset of the next IFD (0 for none). All offsets count from the TIFF header. `UserComment`
//! belongs in the Exif sub-IFD (pointed to by tag `0x8769`); TavernAI actually wrote it in IFD0.
//!
//! `UserComment` starts with an 8-byte character code: `"ASCII\0\0\0"`, `"UNICODE\0"`
//! (UTF-16), `"JIS\0\0\0\0\0"` or eight zero bytes (undefined). TavernAI stored the card as `ASCII`
//! text made of the UTF-8 bytes of the JSON written as comma-separated decimal numbers
//! (`123,34,110,...`).
//!
//! # Choices
//!
//! * `UserComment` is looked for in the Exif sub-IFD first, then in IFD0 and the IFDs chained
//!   after it; the first one that holds JSON wins.
//! * `UNICODE` text uses the byte order of its BOM if it has one, otherwise the order its zero
//!   bytes show, otherwise the TIFF byte order.
//! * Undefined and unknown character codes are read as UTF-8 (Latin-1 if not valid UTF-8); a value
//!   without a character code is read whole.
//! * Decimal lists whose numbers are all at most 255 are bytes (UTF-8, else Latin-1); lists with
//!   larger numbers (up to 65535) are UTF-16 code units.
//! * The text returned starts with `{` after trimming whitespace, NULs and a BOM; it is not parsed.
//! * The RIFF size field is ignored (chunks are walked to the end of the data).
//! * IFD walking is bounded: at most 16 IFDs, each visited once, at most 4096 entries each.
//!
//! ```
//! // A JPEG with no EXIF data is refused with the place and the reason.
//! let err = ccv3::legacy::read_jpeg_card(&[0xFF, 0xD8, 0xFF, 0xD9]).unwrap_err();
//! assert!(err.to_string().starts_with("JPEG at byte"));
//! ```

use crate::{Error, Result};

/// EXIF tag of the Exif sub-IFD pointer.
const TAG_EXIF_IFD: u16 = 0x8769;
/// EXIF tag `UserComment`.
const TAG_USER_COMMENT: u16 = 0x9286;
/// Most IFDs visited in one TIFF structure.
const MAX_IFDS: usize = 16;
/// Most entries read from one IFD.
const MAX_ENTRIES: usize = 4096;
/// Most RIFF chunks or JPEG segments walked.
const MAX_SEGMENTS: usize = 100_000;

const WEBP: &str = "WebP";
const JPEG: &str = "JPEG";
const PNG_EXIF: &str = "PNG eXIf";

/// True when `bytes` starts with a RIFF header of type `WEBP`.
///
/// ```
/// assert!(ccv3::legacy::is_webp(b"RIFF\x24\0\0\0WEBPVP8 "));
/// assert!(!ccv3::legacy::is_webp(b"\x89PNG\r\n\x1a\n"));
/// ```
pub fn is_webp(bytes: &[u8]) -> bool {
    bytes.len() >= 12 && bytes.starts_with(b"RIFF") && bytes.get(8..12) == Some(b"WEBP")
}

/// True when `bytes` starts with a JPEG start-of-image marker (`FF D8 FF`).
///
/// ```
/// assert!(ccv3::legacy::is_jpeg(&[0xFF, 0xD8, 0xFF, 0xE1]));
/// assert!(!ccv3::legacy::is_jpeg(b"RIFF"));
/// ```
pub fn is_jpeg(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0xFF, 0xD8, 0xFF])
}

fn image_error(format: &'static str, offset: usize, problem: impl Into<String>) -> Error {
    Error::Image {
        format,
        offset: offset as u64,
        problem: problem.into(),
    }
}

fn u32_le(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([
        *s.first()?,
        *s.get(1)?,
        *s.get(2)?,
        *s.get(3)?,
    ]))
}

/// Reads the card JSON text of a TavernAI WebP card (EXIF `UserComment`).
///
/// # Errors
///
/// [`Error::Image`] with format `WebP` when the file is not a WebP, has no `EXIF` chunk, or its
/// EXIF data holds no JSON `UserComment`.
///
/// ```
/// // A WebP without EXIF holds no card: the error says what is missing.
/// let err = ccv3::legacy::read_webp_card(b"RIFF\x0c\0\0\0WEBPVP8 \0\0\0\0").unwrap_err();
/// assert!(matches!(err, ccv3::Error::Image { .. }));
/// ```
pub fn read_webp_card(bytes: &[u8]) -> Result<String> {
    if !is_webp(bytes) {
        return Err(image_error(
            WEBP,
            0,
            "not a WebP file: the RIFF/WEBP header is missing",
        ));
    }
    // The RIFF size is often wrong in the wild: the walk goes to the end of the data instead.
    let end = bytes.len();
    let mut pos = 12usize;
    for _ in 0..MAX_SEGMENTS {
        if pos.saturating_add(8) > end {
            break;
        }
        let fourcc = bytes.get(pos..pos + 4).unwrap_or_default();
        let size = u32_le(bytes, pos + 4).unwrap_or(0) as usize;
        let start = pos + 8;
        let Some(stop) = start.checked_add(size).filter(|&s| s <= bytes.len()) else {
            return Err(image_error(
                WEBP,
                pos,
                format!(
                    "chunk {:?} declares {size} bytes but the file ends: truncated",
                    String::from_utf8_lossy(fourcc)
                ),
            ));
        };
        if fourcc.eq_ignore_ascii_case(b"EXIF") {
            let exif = bytes.get(start..stop).unwrap_or_default();
            let (tiff, base) = match exif.strip_prefix(b"Exif\0\0") {
                Some(t) => (t, start + 6),
                None => (exif, start),
            };
            return read_tiff_card(tiff, base, WEBP);
        }
        pos = stop.saturating_add(size & 1);
    }
    Err(image_error(
        WEBP,
        end,
        "no EXIF chunk: this WebP holds no card",
    ))
}

/// Reads the card JSON text of a PNG's `eXIf` chunk (EXIF `UserComment`), as Backyard AI's
/// Faraday-era PNG exports keep it ([`crate::faraday`]).
///
/// # Errors
///
/// [`Error::Image`] with format `PNG eXIf` when the data is not EXIF or no `UserComment`
/// holds JSON (plain, as a decimal list, or base64 as Faraday writes it).
///
/// ```
/// // A Backyard AI (Faraday-era) PNG export: the character is in the EXIF chunk.
/// let png = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/wild/backyard_faraday_legacy.png"));
/// let exif = ccv3::png::read_exif_chunk(std::io::Cursor::new(&png[..]), 1 << 20)?.expect("an eXIf chunk");
/// let json = ccv3::legacy::read_png_exif_card(&exif)?;
/// assert!(json.contains("aiName") || json.contains("character"));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn read_png_exif_card(exif: &[u8]) -> Result<String> {
    let tiff = exif.strip_prefix(b"Exif\0\0").unwrap_or(exif);
    read_tiff_card(tiff, 0, PNG_EXIF)
}

/// Reads the card JSON text of a JPEG card (EXIF `UserComment` in an APP1 segment).
///
/// # Errors
///
/// [`Error::Image`] with format `JPEG` when the file is not a JPEG, the segments are broken
/// before the EXIF data, or no EXIF `UserComment` holds JSON.
///
/// ```
/// // A JPEG without an EXIF UserComment holds no card.
/// let err = ccv3::legacy::read_jpeg_card(&[0xFF, 0xD8, 0xFF, 0xD9]).unwrap_err();
/// assert!(matches!(err, ccv3::Error::Image { .. }));
/// ```
pub fn read_jpeg_card(bytes: &[u8]) -> Result<String> {
    if !is_jpeg(bytes) {
        return Err(image_error(
            JPEG,
            0,
            "not a JPEG file: the FF D8 start marker is missing",
        ));
    }
    let mut pos = 2usize;
    let mut last_problem: Option<Error> = None;
    for _ in 0..MAX_SEGMENTS {
        match bytes.get(pos) {
            Some(0xFF) => {}
            Some(_) => {
                return Err(last_problem.unwrap_or_else(|| {
                    image_error(
                        JPEG,
                        pos,
                        "expected a segment marker (FF): the file is corrupt",
                    )
                }))
            }
            None => break,
        }
        // Fill bytes: any number of FF before the marker.
        while bytes.get(pos) == Some(&0xFF) {
            pos += 1;
        }
        let Some(&marker) = bytes.get(pos) else { break };
        let marker_at = pos - 1;
        pos += 1;
        match marker {
            0xD8 | 0x01 | 0xD0..=0xD7 => continue,
            0xD9 | 0xDA => break,
            _ => {}
        }
        let Some(len) = bytes
            .get(pos..pos + 2)
            .map(|s| usize::from(u16::from_be_bytes([s[0], s[1]])))
        else {
            break;
        };
        if len < 2 {
            return Err(image_error(
                JPEG,
                marker_at,
                format!("segment length {len} is below 2"),
            ));
        }
        let Some(data) = bytes.get(pos + 2..pos + len) else {
            return Err(last_problem.unwrap_or_else(|| {
                image_error(
                    JPEG,
                    marker_at,
                    format!("segment FF{marker:02X} declares {len} bytes: the file is truncated"),
                )
            }));
        };
        if marker == 0xE1 && data.starts_with(b"Exif\0") && data.len() >= 6 {
            let tiff = data.get(6..).unwrap_or_default();
            match read_tiff_card(tiff, pos + 8, JPEG) {
                Ok(card) => return Ok(card),
                Err(e) => last_problem = last_problem.or(Some(e)),
            }
        }
        pos += len;
    }
    Err(last_problem
        .unwrap_or_else(|| image_error(JPEG, pos, "no EXIF APP1 segment: this JPEG holds no card")))
}

/// Byte order of a TIFF structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    Little,
    Big,
}

impl Order {
    fn u16(self, b: &[u8], at: usize) -> Option<u16> {
        let s = b.get(at..at.checked_add(2)?)?;
        let a = [*s.first()?, *s.get(1)?];
        Some(match self {
            Order::Little => u16::from_le_bytes(a),
            Order::Big => u16::from_be_bytes(a),
        })
    }
    fn u32(self, b: &[u8], at: usize) -> Option<u32> {
        let s = b.get(at..at.checked_add(4)?)?;
        let a = [*s.first()?, *s.get(1)?, *s.get(2)?, *s.get(3)?];
        Some(match self {
            Order::Little => u32::from_le_bytes(a),
            Order::Big => u32::from_be_bytes(a),
        })
    }
}

/// Size in bytes of one value of a TIFF field type.
fn type_size(kind: u16) -> Option<usize> {
    match kind {
        1 | 2 | 6 | 7 => Some(1),
        3 | 8 => Some(2),
        4 | 9 | 11 | 13 => Some(4),
        5 | 10 | 12 => Some(8),
        _ => None,
    }
}

/// Finds the card in the `UserComment` tags of a TIFF structure; `base` is its file offset.
fn read_tiff_card(tiff: &[u8], base: usize, format: &'static str) -> Result<String> {
    let order = match tiff.get(..4) {
        Some(b"II*\0") => Order::Little,
        Some(b"MM\0*") => Order::Big,
        _ => {
            return Err(image_error(
                format,
                base,
                "EXIF data does not start with a TIFF header",
            ))
        }
    };
    let first = order.u32(tiff, 4).unwrap_or(0);
    // (offset, is the Exif sub-IFD)
    let mut queue: Vec<(u32, bool)> = vec![(first, false)];
    let mut visited: Vec<u32> = Vec::new();
    // (is in the Exif sub-IFD, value, file offset)
    let mut comments: Vec<(bool, &[u8], usize)> = Vec::new();
    let mut problem: Option<Error> = None;
    while let Some((ifd, is_exif)) = queue.pop() {
        if ifd == 0 || visited.contains(&ifd) || visited.len() >= MAX_IFDS {
            continue;
        }
        visited.push(ifd);
        let at = ifd as usize;
        let Some(count) = order.u16(tiff, at) else {
            problem.get_or_insert(image_error(
                format,
                base + at,
                "IFD offset is past the data",
            ));
            continue;
        };
        let count = usize::from(count).min(MAX_ENTRIES);
        for i in 0..count {
            let entry = at + 2 + 12 * i;
            let (Some(tag), Some(kind), Some(n)) = (
                order.u16(tiff, entry),
                order.u16(tiff, entry + 2),
                order.u32(tiff, entry + 4),
            ) else {
                problem.get_or_insert(image_error(format, base + entry, "IFD entry is truncated"));
                break;
            };
            match tag {
                TAG_EXIF_IFD => {
                    if let Some(off) = order.u32(tiff, entry + 8) {
                        queue.push((off, true));
                    }
                }
                TAG_USER_COMMENT => {
                    let size = type_size(kind).and_then(|s| s.checked_mul(n as usize));
                    let value = match size {
                        Some(s) if s <= 4 => {
                            tiff.get(entry + 8..entry + 8 + s).map(|v| (v, entry + 8))
                        }
                        Some(s) => order.u32(tiff, entry + 8).and_then(|off| {
                            let off = off as usize;
                            tiff.get(off..off.checked_add(s)?).map(|v| (v, off))
                        }),
                        None => None,
                    };
                    match value {
                        Some((v, off)) => comments.push((is_exif, v, base + off)),
                        None => {
                            problem.get_or_insert(image_error(
                                format,
                                base + entry,
                                "UserComment value lies outside the EXIF data",
                            ));
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(next) = order.u32(tiff, at + 2 + 12 * count) {
            queue.insert(0, (next, false));
        }
    }
    // The Exif sub-IFD first (where the EXIF standard puts UserComment), then the others.
    comments.sort_by_key(|(is_exif, _, _)| !*is_exif);
    for (_, value, off) in &comments {
        match decode_user_comment(value, order) {
            Ok(text) => return Ok(text),
            Err(p) => {
                problem.get_or_insert(image_error(format, *off, p));
            }
        }
    }
    Err(problem.unwrap_or_else(|| {
        image_error(format, base, "no UserComment tag in the EXIF data: no card")
    }))
}

fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

fn utf8_or_latin1(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => latin1(bytes),
    }
}

/// Decodes UTF-16 text, choosing the byte order from a BOM, the zero bytes, or `order`.
fn decode_utf16(body: &[u8], order: Order) -> std::result::Result<String, String> {
    let (body, big) = match body {
        [0xFE, 0xFF, rest @ ..] => (rest, true),
        [0xFF, 0xFE, rest @ ..] => (rest, false),
        _ => {
            let sample = body.get(..body.len().min(4096)).unwrap_or(body);
            let even_zeros = sample.iter().step_by(2).filter(|&&b| b == 0).count();
            let odd_zeros = sample
                .iter()
                .skip(1)
                .step_by(2)
                .filter(|&&b| b == 0)
                .count();
            let big = match even_zeros.cmp(&odd_zeros) {
                std::cmp::Ordering::Greater => true,
                std::cmp::Ordering::Less => false,
                std::cmp::Ordering::Equal => order == Order::Big,
            };
            (body, big)
        }
    };
    let units: Vec<u16> = body
        .chunks_exact(2)
        .map(|p| {
            let a = [p[0], p[1]];
            if big {
                u16::from_be_bytes(a)
            } else {
                u16::from_le_bytes(a)
            }
        })
        .collect();
    String::from_utf16(&units).map_err(|_| "UNICODE UserComment is not valid UTF-16".to_string())
}

/// Decodes a TavernAI decimal list (`123,34,...`), or `None` when `text` is not one.
fn decode_decimal_list(text: &str) -> Option<std::result::Result<String, String>> {
    let mut numbers = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() || part.len() > 5 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        numbers.push(part.parse::<u32>().ok()?);
    }
    if numbers.iter().all(|&n| n <= 0xFF) {
        let bytes: Vec<u8> = numbers.iter().map(|&n| n as u8).collect();
        return Some(Ok(utf8_or_latin1(&bytes)));
    }
    if numbers.iter().any(|&n| n > 0xFFFF) {
        return Some(Err("UserComment decimal list has values above 65535".into()));
    }
    let units: Vec<u16> = numbers.iter().map(|&n| n as u16).collect();
    Some(String::from_utf16(&units).map_err(|_| "UserComment decimal list is not UTF-16".into()))
}

/// A `UserComment` that is base64 of a JSON object (Backyard AI's Faraday-era PNG exports):
/// the JSON text, or `None`.
fn decode_base64_json(text: &str) -> Option<String> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.len() < 4
        || !compact
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=-_".contains(&b))
    {
        return None;
    }
    let standard = compact.replace('-', "+").replace('_', "/");
    let trimmed = standard.trim_end_matches('=');
    let bytes = base64_simd::STANDARD_NO_PAD
        .decode_to_vec(trimmed.as_bytes())
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let card = trim_card(&text);
    card.starts_with('{').then(|| card.to_owned())
}

fn trim_card(text: &str) -> &str {
    text.trim_matches(|c: char| c == '\0' || c == '\u{feff}' || c.is_whitespace())
}

/// Decodes a `UserComment` value to the card JSON text.
fn decode_user_comment(value: &[u8], order: Order) -> std::result::Result<String, String> {
    let (code, body) = match value.split_at_checked(8) {
        Some((code, body)) => (Some(code), body),
        None => (None, value),
    };
    let text = match code {
        Some(b"UNICODE\0") => decode_utf16(body, order)?,
        Some(b"ASCII\0\0\0") | Some(b"JIS\0\0\0\0\0") | Some([0, 0, 0, 0, 0, 0, 0, 0]) => {
            utf8_or_latin1(body)
        }
        _ => utf8_or_latin1(value),
    };
    let trimmed = trim_card(&text);
    if trimmed.starts_with('{') {
        return Ok(trimmed.to_owned());
    }
    if let Some(json) = decode_base64_json(trimmed) {
        return Ok(json);
    }
    match decode_decimal_list(trimmed) {
        Some(Ok(decoded)) => {
            let card = trim_card(&decoded);
            if card.starts_with('{') {
                Ok(card.to_owned())
            } else {
                Err("UserComment decimal list does not decode to a JSON object".into())
            }
        }
        Some(Err(p)) => Err(p),
        None => Err("UserComment holds no JSON card".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A TIFF structure with one UserComment, in IFD0 or in the Exif sub-IFD.
    fn tiff(big: bool, comment: &[u8], in_subifd: bool) -> Vec<u8> {
        let u16b = |v: u16| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let u32b = |v: u32| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let mut t = if big {
            b"MM\0*".to_vec()
        } else {
            b"II*\0".to_vec()
        };
        t.extend(u32b(8));
        let entry = |t: &mut Vec<u8>, tag: u16, kind: u16, n: u32, v: u32| {
            t.extend(u16b(tag));
            t.extend(u16b(kind));
            t.extend(u32b(n));
            t.extend(u32b(v));
        };
        // IFD0 at 8: one entry, next 0 -> 26.
        t.extend(u16b(1));
        if in_subifd {
            entry(&mut t, TAG_EXIF_IFD, 4, 1, 26);
            t.extend(u32b(0));
            // Exif IFD at 26 -> data at 44.
            t.extend(u16b(1));
            entry(&mut t, TAG_USER_COMMENT, 7, comment.len() as u32, 44);
            t.extend(u32b(0));
        } else {
            entry(&mut t, TAG_USER_COMMENT, 7, comment.len() as u32, 26);
            t.extend(u32b(0));
        }
        t.extend_from_slice(comment);
        t
    }

    fn webp(exif: &[u8]) -> Vec<u8> {
        let mut body = b"WEBP".to_vec();
        body.extend_from_slice(b"VP8X");
        body.extend(10u32.to_le_bytes());
        body.extend([0u8; 10]);
        // An odd-sized image chunk, padded.
        body.extend_from_slice(b"VP8 ");
        body.extend(5u32.to_le_bytes());
        body.extend([1u8, 2, 3, 4, 5, 0]);
        body.extend_from_slice(b"EXIF");
        body.extend((exif.len() as u32).to_le_bytes());
        body.extend_from_slice(exif);
        if exif.len() % 2 == 1 {
            body.push(0);
        }
        let mut out = b"RIFF".to_vec();
        out.extend((body.len() as u32).to_le_bytes());
        out.extend(body);
        out
    }

    fn jpeg(tiff: &[u8]) -> Vec<u8> {
        let mut out = vec![0xFF, 0xD8];
        out.extend([0xFF, 0xE0, 0, 16]);
        out.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
        // An XMP APP1 first, then the Exif APP1 (after fill bytes).
        let xmp = b"http://ns.adobe.com/xap/1.0/\0<x/>";
        out.extend([0xFF, 0xE1]);
        out.extend(((xmp.len() + 2) as u16).to_be_bytes());
        out.extend_from_slice(xmp);
        out.extend([0xFF, 0xFF, 0xE1]);
        out.extend(((tiff.len() + 8) as u16).to_be_bytes());
        out.extend_from_slice(b"Exif\0\0");
        out.extend_from_slice(tiff);
        out.extend([0xFF, 0xDA, 0, 2, 0x12, 0x34, 0xFF, 0xD9]);
        out
    }

    fn decimal(json: &str) -> Vec<u8> {
        let list: Vec<String> = json.bytes().map(|b| b.to_string()).collect();
        let mut v = b"ASCII\0\0\0".to_vec();
        v.extend_from_slice(list.join(",").as_bytes());
        v
    }

    const CARD: &str = "{\"name\":\"Zoë\",\"description\":\"a\"}";

    #[test]
    fn legacy_reads_every_corpus_webp() {
        if !crate::test_corpus::is_full() {
            eprintln!("skipped: no WebP cards in the in-repository corpus (no ../shared/corpus)");
            return;
        }
        let dir = crate::test_corpus::dir().join("webp");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).expect("the test corpus") {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap();
            assert!(is_webp(&bytes) && !is_jpeg(&bytes));
            let json = read_webp_card(&bytes).unwrap_or_else(|e| panic!("{stem}: {e}"));
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            let want = stem.trim_start_matches("tavernai_").replace('_', " ");
            assert_eq!(v["name"].as_str(), Some(want.as_str()), "{stem}");
            n += 1;
        }
        assert_eq!(n, 11);
    }

    #[test]
    fn legacy_webp_user_comment_decimal_list_in_ifd0() {
        let mut exif = b"Exif\0\0".to_vec();
        exif.extend(tiff(false, &decimal(CARD), false));
        assert_eq!(read_webp_card(&webp(&exif)).unwrap(), CARD);
    }

    #[test]
    fn legacy_webp_exif_without_prefix_and_big_endian_subifd() {
        let t = tiff(true, &decimal(CARD), true);
        assert_eq!(read_webp_card(&webp(&t)).unwrap(), CARD);
    }

    #[test]
    fn legacy_user_comment_charsets() {
        let mut ascii = b"ASCII\0\0\0".to_vec();
        ascii.extend_from_slice(CARD.as_bytes());
        ascii.push(0);
        let mut undefined = vec![0u8; 8];
        undefined.extend_from_slice(CARD.as_bytes());
        let utf16 = |big: bool, bom: bool| {
            let mut v = b"UNICODE\0".to_vec();
            if bom {
                v.extend(if big { [0xFE, 0xFF] } else { [0xFF, 0xFE] });
            }
            for u in CARD.encode_utf16() {
                v.extend(if big {
                    u.to_be_bytes()
                } else {
                    u.to_le_bytes()
                });
            }
            v
        };
        let decimal_utf16 = {
            let list: Vec<String> = CARD.encode_utf16().map(|u| u.to_string()).collect();
            let mut v = b"ASCII\0\0\0".to_vec();
            v.extend_from_slice(list.join(", ").as_bytes());
            v
        };
        let cases = [
            ("ascii", ascii, false),
            ("undefined", undefined, true),
            ("no code", CARD.as_bytes().to_vec(), false),
            ("utf16 le tiff be", utf16(false, false), true),
            ("utf16 be tiff le", utf16(true, false), false),
            ("utf16 bom", utf16(true, true), false),
            ("decimal utf16", decimal_utf16, true),
        ];
        for (name, comment, big) in cases {
            let got = read_jpeg_card(&jpeg(&tiff(big, &comment, true)));
            assert_eq!(got.ok().as_deref(), Some(CARD), "{name}");
        }
    }

    #[test]
    fn legacy_jpeg_app1_exif_card() {
        let jpg = jpeg(&tiff(false, &decimal(CARD), false));
        assert!(is_jpeg(&jpg) && !is_webp(&jpg));
        assert_eq!(read_jpeg_card(&jpg).unwrap(), CARD);
    }

    #[test]
    fn legacy_subifd_comment_wins_over_ifd0() {
        // IFD0 holds a non-card comment and the Exif pointer; the sub-IFD holds the card.
        let mut t = b"II*\0".to_vec();
        t.extend(8u32.to_le_bytes());
        t.extend(2u16.to_le_bytes());
        for (tag, kind, n, v) in [
            (TAG_USER_COMMENT, 7u16, 4u32, 0x6968_6968u32),
            (TAG_EXIF_IFD, 4, 1, 38),
        ] {
            t.extend(tag.to_le_bytes());
            t.extend(kind.to_le_bytes());
            t.extend(n.to_le_bytes());
            t.extend(v.to_le_bytes());
        }
        t.extend(0u32.to_le_bytes());
        assert_eq!(t.len(), 38);
        t.extend(1u16.to_le_bytes());
        t.extend(TAG_USER_COMMENT.to_le_bytes());
        t.extend(7u16.to_le_bytes());
        t.extend((CARD.len() as u32).to_le_bytes());
        t.extend(56u32.to_le_bytes());
        t.extend(0u32.to_le_bytes());
        t.extend_from_slice(CARD.as_bytes());
        assert_eq!(read_webp_card(&webp(&t)).unwrap(), CARD);
    }

    #[test]
    fn legacy_ifd_loops_are_bounded() {
        // IFD0 whose next pointer and Exif pointer both point back to IFD0.
        let mut t = b"II*\0".to_vec();
        t.extend(8u32.to_le_bytes());
        t.extend(1u16.to_le_bytes());
        t.extend(TAG_EXIF_IFD.to_le_bytes());
        t.extend(4u16.to_le_bytes());
        t.extend(1u32.to_le_bytes());
        t.extend(8u32.to_le_bytes());
        t.extend(8u32.to_le_bytes());
        let err = read_webp_card(&webp(&t)).unwrap_err();
        assert!(err.to_string().contains("no UserComment"), "{err}");
    }

    #[test]
    fn legacy_errors_name_format_offset_and_problem() {
        let err = read_webp_card(b"RIFF\0\0\0\0WEBPVP8 ").unwrap_err();
        assert!(matches!(err, Error::Image { format: "WebP", .. }), "{err}");
        assert!(matches!(
            read_webp_card(b"\xFF\xD8\xFF"),
            Err(Error::Image { offset: 0, .. })
        ));
        assert!(matches!(
            read_jpeg_card(b"RIFF"),
            Err(Error::Image {
                format: "JPEG",
                offset: 0,
                ..
            })
        ));
        let mut not_card = b"ASCII\0\0\0".to_vec();
        not_card.extend_from_slice(b"made with a camera");
        let err = read_jpeg_card(&jpeg(&tiff(false, &not_card, true))).unwrap_err();
        assert!(err.to_string().contains("no JSON card"), "{err}");
        // Truncated EXIF chunk.
        let mut w = webp(&tiff(false, &decimal(CARD), false));
        w.truncate(w.len() - 10);
        assert!(read_webp_card(&w)
            .unwrap_err()
            .to_string()
            .contains("truncated"));
    }

    #[test]
    fn legacy_garbage_never_panics_on_fixed_inputs() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/png/legacy_regressions"
        );
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            let _ = read_webp_card(&bytes);
            let _ = read_jpeg_card(&bytes);
            n += 1;
        }
        assert!(n >= 5);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn legacy_random_bytes_never_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..256),
        ) {
            let _ = read_webp_card(&bytes);
            let _ = read_jpeg_card(&bytes);
            let mut w = b"RIFF\xff\xff\xff\xffWEBPEXIF\x40\0\0\0II*\0".to_vec();
            w.extend_from_slice(&bytes);
            let _ = read_webp_card(&w);
            let mut j = vec![0xFF, 0xD8, 0xFF, 0xE1, 0x01, 0x00];
            j.extend_from_slice(b"Exif\0\0MM\0*");
            j.extend_from_slice(&bytes);
            let _ = read_jpeg_card(&j);
        }

        #[test]
        fn legacy_mutated_cards_never_panic(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
            cut in any::<prop::sample::Index>(),
        ) {
            let files = [
                webp(&tiff(false, &decimal(CARD), true)),
                jpeg(&tiff(true, &decimal(CARD), false)),
            ];
            for mut file in files {
                for (at, byte) in &edits {
                    let i = at.index(file.len());
                    file[i] = *byte;
                }
                file.truncate(cut.index(file.len() + 1));
                let _ = read_webp_card(&file);
                let _ = read_jpeg_card(&file);
            }
        }
    }
}
