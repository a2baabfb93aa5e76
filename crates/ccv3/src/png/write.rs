//! Writing: the card chunks of a PNG replaced by new ones, every other chunk copied byte for
//! byte ([`write_card_chunks`]), and a plain image for a card that has none.

use super::chunk::{is_png, kind_name, KEYWORD_SCAN, MAX_CHUNK_LENGTH, MAX_KEYWORD, SIGNATURE};
use super::text::classify;
use std::io::Write;

use crate::{Error, Result};

/// Writes one chunk (length, type, data, CRC).
pub(super) fn write_chunk<W: Write>(w: &mut W, kind: &[u8; 4], data: &[u8]) -> Result<()> {
    let length = u32::try_from(data.len())
        .ok()
        .filter(|&l| l <= MAX_CHUNK_LENGTH)
        .ok_or_else(|| Error::Limit(format!("chunk of {} bytes exceeds 2^31-1", data.len())))?;
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(kind);
    hasher.update(data);
    w.write_all(&length.to_be_bytes())?;
    w.write_all(kind)?;
    w.write_all(data)?;
    w.write_all(&hasher.finalize().to_be_bytes())?;
    Ok(())
}

/// Writes one chunk whose data is `parts` one after the other (no copy of them is made).
pub(super) fn write_chunk_parts<W: Write>(
    w: &mut W,
    kind: &[u8; 4],
    parts: &[&[u8]],
) -> Result<()> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let length = u32::try_from(len)
        .ok()
        .filter(|&l| l <= MAX_CHUNK_LENGTH)
        .ok_or_else(|| Error::Limit(format!("chunk of {len} bytes exceeds 2^31-1")))?;
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(kind);
    w.write_all(&length.to_be_bytes())?;
    w.write_all(kind)?;
    for p in parts {
        hasher.update(p);
        w.write_all(p)?;
    }
    w.write_all(&hasher.finalize().to_be_bytes())?;
    Ok(())
}

/// Checks a keyword/value pair for a `tEXt` chunk.
pub(super) fn check_text_chunk(keyword: &str, value: &[u8]) -> Result<()> {
    let ok_keyword = !keyword.is_empty()
        && keyword.len() <= MAX_KEYWORD
        && keyword.bytes().all(|b| (0x20..=0x7E).contains(&b))
        && !keyword.starts_with(' ')
        && !keyword.ends_with(' ')
        && !keyword.contains("  ");
    if !ok_keyword {
        return Err(Error::Parameter(format!(
            "PNG text keyword {keyword:?} must be 1-79 printable ASCII characters without \
             leading, trailing or double spaces"
        )));
    }
    if memchr::memchr(0, value).is_some() {
        return Err(Error::Parameter(format!(
            "value of PNG text chunk {keyword:?} contains NUL"
        )));
    }
    Ok(())
}

/// Replaces the card chunks of a PNG/APNG, streaming the result to `out`.
///
/// Same as [`write_card_chunks`]; nothing is written when the input is rejected (the input is
/// validated completely first).
///
/// ```
/// // A PNG to work with: a card written with ccv3's plain generated picture.
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#)? else { panic!() };
/// let png = ccv3::write_png(&cf, None, ccv3::CardVersion::V3)?;
/// let mut out = Vec::new();
/// ccv3::png::write_card_chunks_to(&png, &[], &mut out)?; // every card chunk removed
/// assert!(matches!(ccv3::read_bytes(&out), Err(_)));
/// // A bad keyword is refused before anything is written.
/// let mut nothing = Vec::new();
/// assert!(ccv3::png::write_card_chunks_to(&png, &[("bad\0key", b"x")], &mut nothing).is_err());
/// assert!(nothing.is_empty());
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn write_card_chunks_to<W: Write>(
    png: &[u8],
    chunks: &[(&str, &[u8])],
    mut out: W,
) -> Result<()> {
    for (keyword, value) in chunks {
        check_text_chunk(keyword, value)?;
    }
    let plan = plan_chunks(png)?;
    out.write_all(&SIGNATURE)?;
    for span in &plan.keep {
        out.write_all(png.get(span.clone()).unwrap_or_default())?;
    }
    for (keyword, value) in chunks {
        let mut data = Vec::with_capacity(keyword.len() + 1 + value.len());
        data.extend_from_slice(keyword.as_bytes());
        data.push(0);
        data.extend_from_slice(value);
        write_chunk(&mut out, b"tEXt", &data)?;
    }
    out.write_all(png.get(plan.iend_and_after..).unwrap_or_default())?;
    Ok(())
}

/// Removes every `ccv3`, `chara` and `chara-ext-asset_*` text chunk (in `tEXt`, `zTXt` and
/// `iTXt` form), then inserts `chunks` as `tEXt` chunks `(keyword, value)` right before `IEND`.
///
/// Values are written as given: a card's value must already be base64 (see
/// [`encode_text_value`](crate::png::encode_text_value)). Every other chunk and any bytes after `IEND` are copied byte for byte
/// in their order (APNG `acTL`/`fcTL`/`fdAT` included).
///
/// # Errors
///
/// [`Error::Png`] when `png` is not a complete PNG with an `IEND` chunk;
/// [`Error::Parameter`] for a keyword that is not 1-79 printable ASCII characters or a value
/// holding NUL.
///
/// ```
/// // A PNG to work with: a card written with ccv3's plain generated picture.
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#)? else { panic!() };
/// let png = ccv3::write_png(&cf, None, ccv3::CardVersion::V3)?;
/// // Replace the card chunks: only a `chara` chunk now.
/// let v2 = ccv3::png::encode_text_value(r#"{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"B"}}"#);
/// let out = ccv3::png::write_card_chunks(&png, &[("chara", &v2)])?;
/// let ccv3::Document::Card(back) = ccv3::read_bytes(&out)? else { panic!() };
/// assert_eq!(back.card.data.name, "B");
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn write_card_chunks(png: &[u8], chunks: &[(&str, &[u8])]) -> Result<Vec<u8>> {
    let extra: usize = chunks.iter().map(|(k, v)| k.len() + v.len() + 13).sum();
    let mut out = Vec::with_capacity(png.len().saturating_add(extra));
    write_card_chunks_to(png, chunks, &mut out)?;
    Ok(out)
}

/// A picture whose chunks were walked once to write a card into it: its bytes and the plan of
/// what to keep (so a card's own picture is checked and written with one walk).
pub(crate) struct Carrier {
    png: Vec<u8>,
    plan: Plan,
}

impl Carrier {
    /// Walks `png`'s chunk headers.
    ///
    /// # Errors
    ///
    /// [`Error::Png`] when `png` cannot carry a card (see [`can_carry_card`]).
    pub(crate) fn new(png: Vec<u8>) -> Result<Carrier> {
        let plan = plan_chunks(&png)?;
        Ok(Carrier { png, plan })
    }
}

/// [`write_card_chunks_to`] into an already walked picture, with each chunk's value asked of
/// `value` (by its index in `keywords`) only when it is written, so the values are never all
/// held at once (issue 12). The keywords are checked before anything is written; a value
/// holding NUL fails when it comes.
pub(crate) fn write_card_chunks_with<W: Write>(
    picture: &Carrier,
    keywords: &[String],
    mut out: W,
    mut value: impl FnMut(usize) -> Result<Vec<u8>>,
) -> Result<()> {
    for keyword in keywords {
        check_text_chunk(keyword, b"")?;
    }
    let (png, plan) = (&picture.png, &picture.plan);
    out.write_all(&SIGNATURE)?;
    for span in &plan.keep {
        out.write_all(png.get(span.clone()).unwrap_or_default())?;
    }
    for (i, keyword) in keywords.iter().enumerate() {
        let v = value(i)?;
        check_text_chunk(keyword, &v)?;
        write_chunk_parts(&mut out, b"tEXt", &[keyword.as_bytes(), b"\0", &v])?;
    }
    out.write_all(png.get(plan.iend_and_after..).unwrap_or_default())?;
    Ok(())
}

/// Byte ranges of a PNG to keep, and where `IEND` starts.
pub(super) struct Plan {
    keep: Vec<std::ops::Range<usize>>,
    iend_and_after: usize,
}

/// True when `png` is a PNG whose chunk headers can all be walked up to `IEND`, so a card can be
/// written into it: what the card writers ask of a card's own picture before they keep it (a
/// picture cut short or with a damaged chunk header cannot carry a card, and the writers use the
/// card's PNG main icon or a plain image instead; issue 13). Chunk CRCs are not checked.
///
/// ```
/// let png = ccv3::png::plain_image();
/// assert!(ccv3::png::can_carry_card(&png));
/// assert!(!ccv3::png::can_carry_card(&png[..png.len() - 4]));
/// assert!(!ccv3::png::can_carry_card(b"GIF89a"));
/// ```
pub fn can_carry_card(png: &[u8]) -> bool {
    plan_chunks(png).is_ok()
}

/// Walks an in-memory PNG and decides which chunks to keep.
pub(super) fn plan_chunks(png: &[u8]) -> Result<Plan> {
    if !is_png(png) {
        return Err(Error::Png {
            chunk: "signature".into(),
            offset: 0,
            problem: "not a PNG file: the 8-byte PNG signature is missing".into(),
        });
    }
    let mut keep: Vec<std::ops::Range<usize>> = Vec::new();
    let mut pos = SIGNATURE.len();
    loop {
        let header = png
            .get(pos..pos.saturating_add(8))
            .ok_or_else(|| Error::Png {
                chunk: "IEND".into(),
                offset: pos as u64,
                problem: "file ends without an IEND chunk".into(),
            })?;
        let (len, kind) = header.split_at(4);
        let length = u32::from_be_bytes([len[0], len[1], len[2], len[3]]);
        let kind: [u8; 4] = [kind[0], kind[1], kind[2], kind[3]];
        let name = kind_name(&kind);
        if length > MAX_CHUNK_LENGTH || !kind.iter().all(u8::is_ascii_alphabetic) {
            return Err(Error::Png {
                chunk: name,
                offset: pos as u64,
                problem: "corrupt chunk header (bad length or type)".into(),
            });
        }
        let end = pos
            .checked_add(12 + length as usize)
            .filter(|&e| e <= png.len())
            .ok_or_else(|| Error::Png {
                chunk: name.clone(),
                offset: pos as u64,
                problem: format!("chunk declares {length} data bytes: the file is truncated"),
            })?;
        if &kind == b"IEND" {
            return Ok(Plan {
                keep,
                iend_and_after: pos,
            });
        }
        let data = png.get(pos + 8..end - 4).unwrap_or_default();
        // The keyword is looked for where the reader looks for it.
        let scan = data.get(..KEYWORD_SCAN as usize).unwrap_or(data);
        let drop = matches!(&kind, b"tEXt" | b"zTXt" | b"iTXt")
            && memchr::memchr(0, scan)
                .and_then(|n| scan.get(..n))
                .and_then(classify)
                .is_some();
        if !drop {
            match keep.last_mut() {
                Some(last) if last.end == pos => last.end = end,
                _ => keep.push(pos..end),
            }
        }
        pos = end;
    }
}

/// A small plain PNG (400x600, one solid colour) for cards that have no picture.
///
/// ```
/// let png = ccv3::png::plain_image();
/// assert!(ccv3::png::is_png(&png));
/// assert!(png.len() < 1024);
/// ```
pub fn plain_image() -> Vec<u8> {
    encode_plain(400, 600, [0x4A, 0x55, 0x68]).unwrap_or_else(|_| FALLBACK_1X1.to_vec())
}

/// Encodes a one-colour indexed image of `width` x `height` pixels.
pub(super) fn encode_plain(
    width: u32,
    height: u32,
    rgb: [u8; 3],
) -> std::result::Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, width, height);
    enc.set_color(png::ColorType::Indexed);
    enc.set_depth(png::BitDepth::One);
    enc.set_palette(rgb.to_vec());
    let mut writer = enc.write_header()?;
    let row = width.div_ceil(8) as usize;
    writer.write_image_data(&vec![0u8; row * height as usize])?;
    writer.finish()?;
    Ok(out)
}

/// A 1x1 grey PNG, used only if encoding the plain image failed.
pub(super) const FALLBACK_1X1: [u8; 67] = [
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x00, 0x00, 0x00, 0x3A, 0x7E, 0x9B,
    0x55, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x68, 0x00, 0x00, 0x00,
    0x82, 0x00, 0x81, 0x77, 0xCD, 0x72, 0xB6, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];
