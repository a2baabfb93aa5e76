//! Reading: the card chunks of a PNG/APNG stream, of a slice, or left in place for a later
//! write ([`read_card_chunks`]), the list of every chunk, and a TavernAI-era EXIF card.

use super::chunk::{kind_name, CardChunks, ChunkInfo, ChunkPlace, Limits, SIGNATURE};
use super::text::{
    classify, decode_base64, decode_text_inner, latin1, leniency_diagnostic, over_budget,
    text_of_chunk, CardKey, ChunkLabel, Notes, TextFault, PER_CODE,
};
use super::walk::{Mode, Plain, Source, Walker};
use std::io::{Cursor, Read, Seek, SeekFrom};

use crate::{Diagnostic, Error, Result};

/// Reads the card text chunks (`ccv3`, `chara`, `chara-ext-asset_*`) of a PNG/APNG stream.
///
/// Starts at the stream's current position (the PNG signature). Seeks past every non-card chunk;
/// see the module docs for what is accepted and reported.
///
/// # Errors
///
/// [`Error::Png`] when the signature is missing, when the chunk stream is truncated or corrupt
/// before any `ccv3`/`chara` chunk was read, or when card chunks exist but none decodes;
/// [`Error::Limit`] when a [`Limits`] value is exceeded; [`Error::Io`] on I/O failure.
///
/// ```
/// // A PNG to work with: a card written with ccv3's plain generated picture.
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#)? else { panic!() };
/// let png = ccv3::write_png(&cf, None, ccv3::CardVersion::V3)?;
/// let chunks = ccv3::png::read_card_chunks(std::io::Cursor::new(&png), &ccv3::png::Limits::default())?;
/// // The V3 card in `ccv3`, the spec's V2 backfill in `chara`, both base64 as written.
/// assert!(chunks.ccv3.is_some() && chunks.chara.is_some());
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn read_card_chunks<R: Read + Seek>(r: R, limits: &Limits) -> Result<CardChunks> {
    read_card_chunks_impl(Plain(r), limits, false).map(|(chunks, _)| chunks)
}

/// [`read_card_chunks`] from a [`Source`] (the file reader of [`crate::read_file`]).
pub(crate) fn read_card_chunks_from<S: Source>(r: S, limits: &Limits) -> Result<CardChunks> {
    read_card_chunks_impl(r, limits, false).map(|(chunks, _)| chunks)
}

/// Where an asset chunk read by [`read_card_chunks_deferred`] is, to read it again.
#[derive(Debug, Clone)]
pub(crate) struct AssetPlace {
    kind: [u8; 4],
    /// Absolute position of the chunk's length field.
    offset: u64,
    length: u32,
    /// The decoded asset's length.
    size: u64,
}

/// The asset chunks of a PNG read by [`read_card_chunks_deferred`].
#[derive(Debug, Clone, Default)]
pub(crate) struct AssetPlaces {
    places: Vec<AssetPlace>,
    limits: Limits,
}

impl AssetPlaces {
    /// The decoded size of the `i`th asset.
    pub(crate) fn size(&self, i: usize) -> u64 {
        self.places.get(i).map_or(0, |p| p.size)
    }

    /// Reads and decodes the `i`th asset chunk again, as it was read the first time.
    pub(crate) fn load<R: Read + Seek>(&self, r: &mut R, i: usize) -> Result<Vec<u8>> {
        let p = self
            .places
            .get(i)
            .ok_or_else(|| Error::Parameter(format!("no PNG asset chunk number {i}")))?;
        let changed = |problem: String| Error::Png {
            chunk: kind_name(&p.kind),
            offset: p.offset,
            problem,
        };
        r.seek(SeekFrom::Start(p.offset.saturating_add(8)))?;
        let mut data = Vec::new();
        r.by_ref()
            .take(u64::from(p.length))
            .read_to_end(&mut data)?;
        if data.len() as u64 != u64::from(p.length) {
            return Err(changed("the file changed since it was read".into()));
        }
        let text = text_of_chunk(&p.kind, &data, &self.limits, self.limits.max_total_text)
            .map_err(|_| changed("the file changed since it was read".into()))?;
        let (bytes, _) = decode_base64(text.trim_ascii()).map_err(changed)?;
        if bytes.len() as u64 != p.size {
            return Err(changed("the file changed since it was read".into()));
        }
        Ok(bytes)
    }
}

/// [`read_card_chunks`] without keeping the assets: each asset chunk is read, inflated and
/// decoded as [`read_card_chunks`] does (same errors, same warnings), then dropped; the assets
/// come back with empty data and [`AssetPlaces`] reads any of them again (issue 12).
pub(crate) fn read_card_chunks_deferred<S: Source>(
    r: S,
    limits: &Limits,
) -> Result<(CardChunks, AssetPlaces)> {
    read_card_chunks_impl(r, limits, true)
}

/// The read behind [`read_card_chunks`] and [`read_card_chunks_deferred`] (`defer`: asset chunks
/// are placed, not read): walks the chunks and keeps the card keywords' values by the rules of
/// the module docs (first decodable wins, duplicates and leniency noted, one text budget).
///
/// Longer than 150 lines on purpose: one loop over the walked chunks whose branches (card text,
/// asset, other chunk, end, fault) share the notes, the budget and what was kept so far; the
/// decisions that do not need that state are already apart (`text.rs`).
pub(super) fn read_card_chunks_impl<S: Source>(
    r: S,
    limits: &Limits,
    defer: bool,
) -> Result<(CardChunks, AssetPlaces)> {
    let mut places = AssetPlaces {
        places: Vec::new(),
        limits: *limits,
    };
    let mut walker = Walker::new(r, Mode::CardText, limits)?;
    let mut out = CardChunks::default();
    let mut first_bad: Option<Error> = None;
    let mut notes = Notes::default();
    // Broken `ccv3`/`chara` chunks: errors, unless another card chunk reads (issue 13).
    let mut card_faults: Vec<Diagnostic> = Vec::new();
    loop {
        let walked = match walker.next_chunk() {
            Ok(Some(w)) => w,
            Ok(None) => break,
            Err(fault) => {
                if fault.structural && (out.ccv3.is_some() || out.chara.is_some()) {
                    notes.push(Diagnostic::warning(
                        "png-truncated",
                        "",
                        format!("after the card chunks: {}", fault.error),
                    ));
                    break;
                }
                return Err(fault.error);
            }
        };
        if walked.data.is_none() && walked.crc_ok == Some(false) {
            let keyword = walked
                .keyword
                .as_deref()
                .map(|k| format!(" {:?}", latin1(k)))
                .unwrap_or_default();
            notes.push(Diagnostic::warning(
                "png-bad-crc",
                "",
                format!(
                    "{} chunk{keyword} at byte {} has a bad CRC; the chunk is not card data and was ignored",
                    walked.header.name(),
                    walker.rel(walked.header.offset)
                ),
            ));
        }
        if &walked.header.kind == b"IEND" {
            let trailing = walker.remaining();
            if trailing > 0 {
                notes.push(Diagnostic::warning(
                    "png-data-after-iend",
                    "",
                    format!(
                        "{trailing} bytes after the IEND chunk at byte {} (from byte {}) ignored",
                        walker.rel(walked.header.offset),
                        walker.rel(walker.pos)
                    ),
                ));
            }
            break;
        }
        let Some(keyword) = walked.keyword else {
            continue;
        };
        let Some(key) = classify(&keyword) else {
            continue;
        };
        let header = walked.header;
        let at = walker.rel(header.offset);
        let label = ChunkLabel {
            header: &header,
            keyword: &keyword,
            at,
        };
        let Some(data) = walked.data else {
            if walker.done.contains(&key) {
                // Seeked past: a later chunk of a key already read (issue 12: duplicates cost
                // nothing, and finding them is one hash lookup).
                let what = match &key {
                    CardKey::Asset(path) => format!("repeats asset {path:?}"),
                    _ => "repeats an earlier chunk".to_string(),
                };
                notes.push(Diagnostic::warning(
                    "png-duplicate-chunk",
                    "",
                    format!("{label} {what} and is ignored"),
                ));
            } else if key == CardKey::Chara && !limits.read_chara {
                out.chara_skipped = true;
            }
            continue;
        };
        if walked.crc_ok == Some(false) {
            notes.push(Diagnostic::warning(
                "png-bad-crc",
                "",
                format!("{label} has a bad CRC; its value is used anyway"),
            ));
        }
        if &header.kind != b"tEXt" {
            notes.push(Diagnostic::info(
                "png-compressed-text",
                "",
                format!("{label} is not a tEXt chunk (the spec says tEXt)"),
            ));
        }
        let lower = matches!(key, CardKey::Ccv3 | CardKey::Chara)
            && keyword.iter().any(u8::is_ascii_uppercase);
        if lower {
            notes.push(Diagnostic::info(
                "png-keyword-case",
                "",
                format!("{label}: keyword is not lowercase"),
            ));
        }
        let budget = limits.max_total_text.saturating_sub(walker.held);
        let text = match text_of_chunk(&header.kind, &data, limits, budget) {
            Ok(t) => t,
            Err(TextFault::OverBudget) => return Err(over_budget(limits, &header.name(), at)),
            Err(TextFault::Malformed(problem)) => {
                let d = Diagnostic::error(
                    "png-text-chunk-malformed",
                    "",
                    format!("{label}: {problem}"),
                );
                if matches!(key, CardKey::Asset(_)) {
                    notes.push(d);
                } else if card_faults.len() < PER_CODE {
                    card_faults.push(d);
                }
                if !matches!(key, CardKey::Asset(_)) && first_bad.is_none() {
                    first_bad = Some(Error::Png {
                        chunk: header.name(),
                        offset: at,
                        problem,
                    });
                }
                continue;
            }
        };
        if let std::borrow::Cow::Owned(inflated) = &text {
            walker.held = walker.held.saturating_add(inflated.len() as u64);
        }
        match key {
            CardKey::Ccv3 | CardKey::Chara => {
                let (slot, place) = if key == CardKey::Ccv3 {
                    (&mut out.ccv3, &mut out.ccv3_chunk)
                } else {
                    (&mut out.chara, &mut out.chara_chunk)
                };
                match decode_text_inner(&text) {
                    Ok((json, how)) => {
                        *slot = Some(json);
                        *place = Some(ChunkPlace {
                            kind: header.name(),
                            offset: at,
                        });
                        walker.done.insert(key);
                        notes.extend(leniency_diagnostic(how, &label));
                    }
                    Err(problem) => {
                        if card_faults.len() < PER_CODE {
                            card_faults.push(Diagnostic::error(
                                "png-card-chunk-undecodable",
                                "",
                                format!("{label}: {problem}"),
                            ));
                        }
                        if first_bad.is_none() {
                            first_bad = Some(Error::Png {
                                chunk: header.name(),
                                offset: at,
                                problem,
                            });
                        }
                    }
                }
            }
            CardKey::Asset(path) => {
                if out.assets.len() >= limits.max_assets {
                    return Err(Error::Limit(format!(
                        "the PNG holds more than {} asset chunks (reached at the {label}; the \
                         option png::Limits::max_assets raises it)",
                        limits.max_assets
                    )));
                }
                if path.is_empty() {
                    notes.push(Diagnostic::warning(
                        "png-asset-undecodable",
                        "",
                        format!("{label}: asset keyword has an empty path; ignored"),
                    ));
                    continue;
                }
                match decode_base64(text.trim_ascii()) {
                    Ok((bytes, how)) => {
                        notes.extend(leniency_diagnostic(how, &label));
                        walker.done.insert(CardKey::Asset(path.clone()));
                        if defer {
                            places.places.push(AssetPlace {
                                kind: header.kind,
                                offset: header.offset,
                                length: header.length,
                                size: bytes.len() as u64,
                            });
                            out.assets.push((path, Vec::new()));
                        } else {
                            out.assets.push((path, bytes));
                        }
                    }
                    Err(problem) => notes.push(Diagnostic::warning(
                        "png-asset-undecodable",
                        "",
                        format!("{label}: {problem}; asset ignored"),
                    )),
                }
            }
        }
    }
    let read_one = out.ccv3.is_some() || out.chara.is_some();
    if !read_one && !out.chara_skipped {
        if let Some(err) = first_bad {
            return Err(err);
        }
    }
    for mut d in card_faults {
        if read_one {
            d.severity = crate::Severity::Warning;
            d.message
                .push_str("; the card was read from the other card chunk");
        }
        notes.push(d);
    }
    out.diagnostics = notes.finish();
    Ok((out, places))
}

/// [`read_card_chunks`] over an in-memory PNG with the default [`Limits`].
///
/// ```
/// let err = ccv3::png::read_card_chunks_from_slice(b"not a png").unwrap_err();
/// assert!(err.to_string().contains("signature"));
/// ```
pub fn read_card_chunks_from_slice(bytes: &[u8]) -> Result<CardChunks> {
    read_card_chunks(Cursor::new(bytes), &Limits::default())
}

/// Lists every chunk of an in-memory PNG (type, offset, length, CRC check, text keyword), for
/// debugging. Every chunk's CRC is checked; no data is kept.
///
/// # Errors
///
/// [`Error::Png`] when the signature is missing or the chunk stream is truncated or corrupt.
///
/// ```
/// // A PNG to work with: a card written with ccv3's plain generated picture.
/// let ccv3::Document::Card(cf) = ccv3::read_bytes(br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#)? else { panic!() };
/// let png = ccv3::write_png(&cf, None, ccv3::CardVersion::V3)?;
/// let chunks = ccv3::png::list_chunks(&png)?;
/// assert_eq!(chunks[0].kind, "IHDR");
/// assert_eq!(chunks.last().unwrap().kind, "IEND");
/// assert!(chunks.iter().all(|c| c.crc_ok));
/// assert!(chunks.iter().any(|c| c.keyword.as_deref() == Some("ccv3")));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn list_chunks(bytes: &[u8]) -> Result<Vec<ChunkInfo>> {
    let limits = Limits::default();
    let mut walker = Walker::new(Plain(Cursor::new(bytes)), Mode::VerifyAll, &limits)?;
    let mut out = Vec::new();
    loop {
        match walker.next_chunk() {
            Ok(Some(w)) => out.push(ChunkInfo {
                kind: w.header.name(),
                offset: w.header.offset,
                length: w.header.length,
                crc_ok: w.crc_ok.unwrap_or(false),
                keyword: w.keyword.as_deref().map(latin1),
            }),
            Ok(None) => return Ok(out),
            Err(fault) => return Err(fault.error),
        }
    }
}

/// The data of a PNG's first `eXIf` chunk (EXIF), or `None` when it has none (Backyard AI's
/// Faraday-era PNG exports keep their character there, [`crate::faraday`]). Only chunk headers
/// are read until the chunk is found; reading stops at `IEND`, after [`MAX_EXIF_WALK`] chunks,
/// or at the end of the data.
///
/// # Errors
///
/// [`Error::Limit`] for an `eXIf` chunk over `max_len` bytes; [`Error::Io`] when reading fails.
///
/// ```
/// // A Backyard AI (Faraday-era) PNG export: the character is in the EXIF chunk.
/// let png = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/wild/backyard_faraday_legacy.png"));
/// let exif = ccv3::png::read_exif_chunk(std::io::Cursor::new(&png[..]), 1 << 20)?.expect("an eXIf chunk");
/// let json = ccv3::legacy::read_png_exif_card(&exif)?;
/// assert!(json.contains("aiName") || json.contains("character"));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn read_exif_chunk<R: Read + Seek>(mut r: R, max_len: u64) -> Result<Option<Vec<u8>>> {
    let mut sig = [0u8; 8];
    if r.read_exact(&mut sig).is_err() || sig != SIGNATURE {
        return Ok(None);
    }
    for _ in 0..MAX_EXIF_WALK {
        let mut head = [0u8; 8];
        if r.read_exact(&mut head).is_err() {
            return Ok(None);
        }
        let len = u64::from(u32::from_be_bytes([head[0], head[1], head[2], head[3]]));
        match &head[4..8] {
            b"eXIf" => {
                if len > max_len {
                    return Err(Error::Limit(format!(
                        "eXIf chunk of {len} bytes is over the limit of {max_len} bytes"
                    )));
                }
                // The length is what the file says: grow as bytes arrive.
                let mut data = Vec::with_capacity(len.min(64 * 1024) as usize);
                r.by_ref().take(len).read_to_end(&mut data)?;
                return Ok((data.len() as u64 == len).then_some(data));
            }
            b"IEND" => return Ok(None),
            _ => {
                r.seek(SeekFrom::Current(len as i64 + 4))?;
            }
        }
    }
    Ok(None)
}

/// The most chunk headers [`read_exif_chunk`] reads.
pub const MAX_EXIF_WALK: usize = 100_000;
