use super::chunk::*;
use super::read::*;
use super::text::*;
use super::write::*;
use crate::Error;
use crate::Severity;
use base64_simd::STANDARD;
use proptest::prelude::*;
use std::cell::Cell;
use std::io::{self, Cursor, Read, Seek, SeekFrom, Write};
use std::rc::Rc;

fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    write_chunk(&mut out, kind, data).unwrap();
    out
}

fn ihdr() -> Vec<u8> {
    let mut d = Vec::new();
    d.extend_from_slice(&1u32.to_be_bytes());
    d.extend_from_slice(&1u32.to_be_bytes());
    d.extend_from_slice(&[8, 0, 0, 0, 0]);
    chunk(b"IHDR", &d)
}

/// CRCs are checked through buffers sized to the chunk (64 bytes, [`SMALL_CHUNK`], 64 KiB;
/// issue 16: zeroing one 64 KiB buffer per small chunk cost a third of `validate DIR`): a
/// good and a corrupt chunk of each size, and one longer than the big buffer, are told
/// apart (PNG spec, 5.3 "Chunk layout": the CRC covers type and data).
#[test]
fn crc_checked_through_buffers_of_every_size() {
    let mut png = SIGNATURE.to_vec();
    png.extend(ihdr());
    let sizes = [13usize, 64, 65, 4096, 4097, 200_000];
    for &n in &sizes {
        let data: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        png.extend(chunk(b"tIME", &data));
        let mut bad = chunk(b"tIME", &data);
        let last = bad.len() - 1;
        bad[last] ^= 1;
        png.extend(bad);
    }
    png.extend(chunk(b"IEND", b""));
    let list = list_chunks(&png).unwrap();
    let checks: Vec<(u32, bool)> = list
        .iter()
        .filter(|c| c.kind == "tIME")
        .map(|c| (c.length, c.crc_ok))
        .collect();
    let want: Vec<(u32, bool)> = sizes
        .iter()
        .flat_map(|&n| [(n as u32, true), (n as u32, false)])
        .collect();
    assert_eq!(checks, want);
}

/// The messages that name a card chunk (its label, now written only when a message needs
/// it; issue 16) read as before: kind, keyword and offset from the start of the PNG
/// (SPEC_V3 "PNG/APNG": `ccv3` in a tEXt chunk, base64 of the card JSON).
#[test]
fn card_chunk_messages_name_kind_keyword_and_offset() {
    let json = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{}}"#;
    let b64 = STANDARD.encode_to_string(json);
    let unpadded = b64.trim_end_matches('=').to_string();
    let png = png_of(&[ztxt("CCV3", unpadded.as_bytes())]);
    let c = read_card_chunks_from_slice(&png).unwrap();
    let messages: Vec<String> = c.diagnostics.iter().map(|d| d.message.clone()).collect();
    assert_eq!(
        messages,
        [
            "zTXt chunk \"CCV3\" at byte 33 is not a tEXt chunk (the spec says tEXt)",
            "zTXt chunk \"CCV3\" at byte 33: keyword is not lowercase",
            "zTXt chunk \"CCV3\" at byte 33 is not canonical base64 (whitespace, padding or \
             alphabet repaired)",
        ]
    );
    let twice = png_of(&[text("ccv3", b64.as_bytes()), text("ccv3", b64.as_bytes())]);
    let c = read_card_chunks_from_slice(&twice).unwrap();
    let dup = c
        .diagnostics
        .iter()
        .find(|d| d.code == "png-duplicate-chunk");
    let at = 33 + 12 + 5 + b64.len();
    assert_eq!(
        dup.map(|d| d.message.as_str()),
        Some(
            format!("tEXt chunk \"ccv3\" at byte {at} repeats an earlier chunk and is ignored")
                .as_str()
        )
    );
}

fn idat() -> Vec<u8> {
    chunk(
        b"IDAT",
        &[0x78, 0x9C, 0x63, 0x68, 0x00, 0x00, 0x00, 0x82, 0x00, 0x81],
    )
}

fn png_of(chunks: &[Vec<u8>]) -> Vec<u8> {
    let mut out = SIGNATURE.to_vec();
    out.extend(ihdr());
    for c in chunks {
        out.extend_from_slice(c);
    }
    out.extend(chunk(b"IEND", b""));
    out
}

fn text(keyword: &str, value: &[u8]) -> Vec<u8> {
    let mut d = keyword.as_bytes().to_vec();
    d.push(0);
    d.extend_from_slice(value);
    chunk(b"tEXt", &d)
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

fn ztxt(keyword: &str, value: &[u8]) -> Vec<u8> {
    let mut d = keyword.as_bytes().to_vec();
    d.extend_from_slice(&[0, 0]);
    d.extend(zlib(value));
    chunk(b"zTXt", &d)
}

fn itxt(keyword: &str, value: &[u8], compressed: bool) -> Vec<u8> {
    let mut d = keyword.as_bytes().to_vec();
    d.extend_from_slice(&[0, u8::from(compressed), 0]);
    d.extend_from_slice(b"en\0Card\0");
    if compressed {
        d.extend(zlib(value));
    } else {
        d.extend_from_slice(value);
    }
    chunk(b"iTXt", &d)
}

fn b64(s: &str) -> Vec<u8> {
    encode_text_value(s)
}

fn has_code(c: &CardChunks, code: &str) -> bool {
    c.diagnostics.iter().any(|d| d.code == code)
}

/// Counts the bytes actually read through it.
struct Counting<R> {
    inner: R,
    read: Rc<Cell<u64>>,
}
impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}
impl<R: Seek> Seek for Counting<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// Returns at most one byte per read.
struct OneByte<R>(R);
impl<R: Read> Read for OneByte<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match buf.first_mut() {
            Some(b) => {
                let mut one = [0u8; 1];
                let n = self.0.read(&mut one)?;
                *b = one[0];
                Ok(n)
            }
            None => Ok(0),
        }
    }
}
impl<R: Seek> Seek for OneByte<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.0.seek(pos)
    }
}

#[test]
fn spec_v3_png_reader_returns_both_ccv3_and_chara() {
    let png = png_of(&[
        idat(),
        text("chara", &b64("{\"v\":2}")),
        text("ccv3", &b64("{\"v\":3}")),
    ]);
    let c = read_card_chunks_from_slice(&png).unwrap();
    assert_eq!(c.ccv3.as_deref(), Some("{\"v\":3}"));
    assert_eq!(c.chara.as_deref(), Some("{\"v\":2}"));
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
}

#[test]
fn png_reads_every_corpus_file() {
    let dir = crate::test_corpus::dir().join("png");
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).expect("the test corpus") {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let res = read_card_chunks(file, &Limits::default());
        seen += 1;
        if name.contains("JSON_with_png_extension") {
            assert!(!is_png(&bytes));
            assert!(matches!(res, Err(Error::Png { ref chunk, .. }) if chunk == "signature"));
            continue;
        }
        let c = res.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(c, read_card_chunks_from_slice(&bytes).unwrap(), "{name}");
        assert!(
            list_chunks(&bytes).unwrap().iter().all(|i| i.crc_ok),
            "{name}"
        );
        if name == "choral_invalid-character.png" {
            assert!(c.ccv3.is_none() && c.chara.is_none());
            continue;
        }
        assert!(c.ccv3.is_some() || c.chara.is_some(), "{name}: no card");
        for json in c.ccv3.iter().chain(c.chara.iter()) {
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            assert!(v.is_object(), "{name}");
        }
        if name == "ca_chub_aurelion_spec_v2.png" {
            // Two chara chunks: the first (with the chub extension) is kept.
            assert!(has_code(&c, "png-duplicate-chunk"));
            assert!(c.chara.as_deref().unwrap().contains("\"chub\""));
        } else {
            assert!(c.diagnostics.is_empty(), "{name}: {:?}", c.diagnostics);
        }
        if name.starts_with("st_default_Seraphina.") || name.starts_with("lide_KOF") {
            assert!(c.ccv3.is_some() && c.chara.is_some(), "{name}");
        }
    }
    assert_eq!(seen, if crate::test_corpus::is_full() { 20 } else { 5 });
}

#[test]
fn png_risuai_chunk_is_seeked_past() {
    let Some(path) = crate::test_corpus::file("png/risu_sample_rika.png") else {
        return;
    };
    let read = Rc::new(Cell::new(0));
    let file = Counting {
        inner: std::fs::File::open(path).unwrap(),
        read: read.clone(),
    };
    let c = read_card_chunks(file, &Limits::default()).unwrap();
    assert!(c.chara.is_some());
    // The 3.5 MB risuai chunk and the image data are not read.
    assert!(read.get() < 600_000, "read {} bytes", read.get());
}

#[test]
fn png_ztxt_and_itxt_card_chunks_are_read() {
    let png = png_of(&[
        idat(),
        ztxt("ccv3", &b64("{\"z\":1}")),
        itxt("chara", &b64("{\"i\":1}"), true),
        itxt(
            "chara-ext-asset_:1",
            &STANDARD.encode_to_string(b"\x00\x01").into_bytes(),
            false,
        ),
    ]);
    let c = read_card_chunks_from_slice(&png).unwrap();
    assert_eq!(c.ccv3.as_deref(), Some("{\"z\":1}"));
    assert_eq!(c.chara.as_deref(), Some("{\"i\":1}"));
    assert_eq!(c.assets, vec![("1".to_string(), vec![0u8, 1])]);
    assert!(has_code(&c, "png-compressed-text"));
    assert!(c.diagnostics.iter().all(|d| d.severity == Severity::Info));
}

#[test]
fn png_keywords_match_case_insensitively() {
    let png = png_of(&[text("CCV3", &b64("{}")), text("Chara", &b64("[]"))]);
    let c = read_card_chunks_from_slice(&png).unwrap();
    assert_eq!(c.ccv3.as_deref(), Some("{}"));
    assert_eq!(c.chara.as_deref(), Some("[]"));
    assert!(has_code(&c, "png-keyword-case"));
}

#[test]
fn png_text_chunk_after_idat_is_read() {
    let png = png_of(&[idat(), idat(), text("ccv3", &b64("{\"after\":true}"))]);
    let c = read_card_chunks_from_slice(&png).unwrap();
    assert_eq!(c.ccv3.as_deref(), Some("{\"after\":true}"));
}

#[test]
fn png_asset_keyword_both_spellings_keep_the_path() {
    let a = STANDARD.encode_to_string(b"abc").into_bytes();
    let png = png_of(&[
        text("chara-ext-asset_:0", &a),
        text("chara-ext-asset_images/x.png", &a),
        text("chara-ext-asset_:0", &a),
    ]);
    let c = read_card_chunks_from_slice(&png).unwrap();
    let paths: Vec<&str> = c.assets.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["0", "images/x.png"]);
    assert!(has_code(&c, "png-duplicate-chunk"));
}

#[test]
fn png_duplicate_keyword_keeps_first_and_warns() {
    let png = png_of(&[
        text("chara", &b64("{\"n\":1}")),
        ztxt("chara", &b64("{\"n\":2}")),
    ]);
    let c = read_card_chunks_from_slice(&png).unwrap();
    assert_eq!(c.chara.as_deref(), Some("{\"n\":1}"));
    assert!(c
        .diagnostics
        .iter()
        .any(|d| d.code == "png-duplicate-chunk" && d.severity == Severity::Warning));
}

#[test]
fn png_undecodable_first_chunk_lets_the_next_one_win() {
    let png = png_of(&[
        text("chara", b"!!!not base64!!!"),
        text("chara", &b64("{}")),
    ]);
    let c = read_card_chunks_from_slice(&png).unwrap();
    assert_eq!(c.chara.as_deref(), Some("{}"));
    assert!(has_code(&c, "png-card-chunk-undecodable"));
    // Alone, it is an error naming the chunk.
    let png = png_of(&[text("ccv3", b"!!!not base64!!!")]);
    let err = read_card_chunks_from_slice(&png).unwrap_err();
    assert!(
        matches!(err, Error::Png { ref chunk, offset: 33, .. } if chunk == "tEXt"),
        "{err}"
    );
    // Base64 of bytes that are not UTF-8.
    let png = png_of(&[text(
        "ccv3",
        &STANDARD.encode_to_string([0xFFu8, 0xFE]).into_bytes(),
    )]);
    assert!(read_card_chunks_from_slice(&png).is_err());
}

#[test]
fn png_base64_leniency_covers_padding_trailing_bits_whitespace_and_url_safe() {
    use super::text::{decode_base64, Leniency};
    let ok = |v: &[u8]| decode_base64(v).map(|(b, how)| (b, how == Leniency::Strict));
    assert_eq!(ok(b"YWJj"), Ok((b"abc".to_vec(), true)));
    assert_eq!(ok(b"YWI="), Ok((b"ab".to_vec(), true)));
    // Missing padding, non-zero trailing bits, whitespace, URL-safe alphabet: repaired.
    assert_eq!(ok(b"YWI"), Ok((b"ab".to_vec(), false)));
    assert_eq!(ok(b"YWJ="), Ok((b"ab".to_vec(), false)));
    assert_eq!(ok(b"YW\nJj"), Ok((b"abc".to_vec(), false)));
    assert_eq!(ok(b"-_-_"), Ok((vec![0xfb, 0xff, 0xbf], false)));
    // Not base64: both alphabets at once, a stray symbol, a lone last symbol, bad padding.
    for bad in [&b"+_AA"[..], b"YW!j", b"YWJjY", b"YW=j", b"Y==="] {
        assert!(decode_base64(bad).is_err(), "{bad:?}");
    }
    assert_eq!(
        decode_base64(b"YW!j").unwrap_err(),
        "value is not base64 (invalid symbol 33, offset 2)"
    );
}

#[test]
fn png_lenient_base64_and_raw_json_are_accepted_with_warnings() {
    let mut spaced = b64("{\"name\":\"x\"}");
    spaced.insert(4, b'\n');
    spaced.retain(|&b| b != b'=');
    let png = png_of(&[text("ccv3", &spaced), text("chara", b" {\"raw\":1} ")]);
    let c = read_card_chunks_from_slice(&png).unwrap();
    assert_eq!(c.ccv3.as_deref(), Some("{\"name\":\"x\"}"));
    assert_eq!(c.chara.as_deref(), Some("{\"raw\":1}"));
    assert!(has_code(&c, "png-base64-lenient"));
    assert!(has_code(&c, "png-text-not-base64"));
    let url = STANDARD
        .encode_to_string("{\"q\":\"??>>\"}")
        .replace('+', "-")
        .replace('/', "_");
    assert_eq!(
        decode_text_value(url.as_bytes()).unwrap().0,
        "{\"q\":\"??>>\"}"
    );
}

#[test]
fn png_bad_crc_on_text_chunk_is_a_warning() {
    let mut t = text("ccv3", &b64("{}"));
    let last = t.len() - 1;
    t[last] ^= 0xFF;
    let c = read_card_chunks_from_slice(&png_of(&[t.clone()])).unwrap();
    assert_eq!(c.ccv3.as_deref(), Some("{}"));
    assert!(c
        .diagnostics
        .iter()
        .any(|d| d.code == "png-bad-crc" && d.severity == Severity::Warning));
    // Unchecked when the reader asks: the same value, no warning.
    let limits = Limits {
        verify_crc: false,
        ..Limits::default()
    };
    let c = read_card_chunks(Cursor::new(png_of(&[t])), &limits).unwrap();
    assert_eq!(c.ccv3.as_deref(), Some("{}"));
    assert!(c.diagnostics.iter().all(|d| d.code != "png-bad-crc"));
}

#[test]
fn png_truncated_before_card_is_an_error() {
    let png = png_of(&[idat(), text("ccv3", &b64("{}"))]);
    let cut = &png[..png.len() - 20];
    let err = read_card_chunks_from_slice(cut).unwrap_err();
    assert!(matches!(err, Error::Png { .. }), "{err}");
    assert!(err.to_string().contains("truncated") || err.to_string().contains("ends"));
}

#[test]
fn png_truncated_after_card_is_a_warning() {
    let png = png_of(&[text("ccv3", &b64("{}")), idat()]);
    let cut = &png[..png.len() - 15];
    let c = read_card_chunks_from_slice(cut).unwrap();
    assert_eq!(c.ccv3.as_deref(), Some("{}"));
    assert!(has_code(&c, "png-truncated"));
    // Missing IEND after the card is also only a warning.
    let cut = &png[..png.len() - 12];
    assert!(has_code(
        &read_card_chunks_from_slice(cut).unwrap(),
        "png-truncated"
    ));
}

#[test]
fn png_garbage_inputs_are_errors() {
    for bad in [
        &b""[..],
        b"\x89PNG",
        b"GIF89a",
        &SIGNATURE[..],
        b"\x89PNG\r\n\x1a\n\xff\xff\xff\xffIDAT",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\x00I\x00AT\x00\x00\x00\x00",
    ] {
        assert!(read_card_chunks_from_slice(bad).is_err(), "{bad:?}");
        assert!(list_chunks(bad).is_err());
        assert!(write_card_chunks(bad, &[]).is_err());
    }
}

/// Issue 29: a run of image chunks before the card chunk is walked in a loop of its own
/// (`skip_plain_chunks`); the card, the errors and their offsets are those of the chunk-by-chunk walk.
#[test]
fn png_long_runs_of_image_chunks_read_as_chunk_by_chunk() {
    let mut chunks: Vec<Vec<u8>> = (0..300).map(|_| idat()).collect();
    chunks.insert(150, chunk(b"prVt", b"private ancillary"));
    chunks.push(text("ccv3", &b64("{\"after\":300}")));
    let png = png_of(&chunks);
    let c = read_card_chunks_from_slice(&png).unwrap();
    assert_eq!(c.ccv3.as_deref(), Some("{\"after\":300}"));
    // The 201st chunk's type damaged: the error names it and its offset.
    let mut bad = png.clone();
    let at = SIGNATURE.len() + 25 + 200 * idat().len() + chunk(b"prVt", b"private ancillary").len();
    bad[at + 4] = b'1';
    let err = read_card_chunks_from_slice(&bad).unwrap_err().to_string();
    assert!(err.contains("not four ASCII letters"), "{err}");
    assert!(err.contains(&at.to_string()), "{err}");
    // A chunk that runs past the end of the file, among them.
    let mut cut = png[..at + 8].to_vec();
    cut.extend_from_slice(&[0; 2]);
    let err = read_card_chunks_from_slice(&cut).unwrap_err().to_string();
    assert!(
        err.contains("truncated") || err.contains("past the end"),
        "{err}"
    );
}

#[test]
fn png_limits_are_checked_before_allocating() {
    // A text chunk longer than the limit is refused.
    let png = png_of(&[text("ccv3", &b64(&"x".repeat(1000)))]);
    let limits = Limits {
        max_text_chunk: 100,
        ..Limits::default()
    };
    let err = read_card_chunks(Cursor::new(&png), &limits).unwrap_err();
    assert!(matches!(err, Error::Limit(_)), "{err}");
    // A chunk declaring 2 GB in a short file is a truncation, found without allocating.
    let mut lie = SIGNATURE.to_vec();
    lie.extend_from_slice(&0x7FFF_FFF0u32.to_be_bytes());
    lie.extend_from_slice(b"tEXtccv3\0e30=");
    let err = read_card_chunks_from_slice(&lie).unwrap_err();
    assert!(err.to_string().contains("truncated"), "{err}");
    // Chunk count.
    let png = png_of(&[idat(), idat(), idat()]);
    let limits = Limits {
        max_chunks: 2,
        ..Limits::default()
    };
    assert!(matches!(
        read_card_chunks(Cursor::new(&png), &limits),
        Err(Error::Limit(_))
    ));
}

#[test]
fn png_compressed_text_bomb_is_bounded() {
    let zeros = vec![b'A'; 10 << 20];
    let png = png_of(&[ztxt("ccv3", &zeros)]);
    let limits = Limits {
        max_inflated: 1 << 20,
        ..Limits::default()
    };
    let err = read_card_chunks(Cursor::new(&png), &limits).unwrap_err();
    assert!(err.to_string().contains("limit"), "{err}");
}

#[test]
fn png_huge_idat_is_seeked_past_not_read() {
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(&SIGNATURE).unwrap();
    file.write_all(&ihdr()).unwrap();
    let size: u32 = 42 << 20;
    let block: Vec<u8> = (0..1 << 20)
        .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(b"IDAT");
    file.write_all(&size.to_be_bytes()).unwrap();
    file.write_all(b"IDAT").unwrap();
    for _ in 0..42 {
        file.write_all(&block).unwrap();
        hasher.update(&block);
    }
    file.write_all(&hasher.finalize().to_be_bytes()).unwrap();
    file.write_all(&text("ccv3", &b64("{\"big\":1}"))).unwrap();
    file.write_all(&chunk(b"IEND", b"")).unwrap();
    file.seek(SeekFrom::Start(0)).unwrap();
    let read = Rc::new(Cell::new(0));
    let c = read_card_chunks(
        Counting {
            inner: file,
            read: read.clone(),
        },
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(c.ccv3.as_deref(), Some("{\"big\":1}"));
    assert!(
        read.get() < 200,
        "read {} bytes of a 42 MB file",
        read.get()
    );
}

#[test]
fn png_byte_at_a_time_reader_matches_slice_reader() {
    let cases = [
        png_of(&[
            idat(),
            text("chara", &b64("{\"a\":1}")),
            ztxt("ccv3", &b64("{\"b\":2}")),
        ]),
        png_of(&[
            itxt("chara-ext-asset_:x", b"AAEC", true),
            text("ccv3", b"{}"),
        ]),
    ];
    for png in cases {
        let slow = read_card_chunks(OneByte(Cursor::new(&png)), &Limits::default()).unwrap();
        assert_eq!(slow, read_card_chunks_from_slice(&png).unwrap());
        let cut = &png[..png.len() - 7];
        let slow = read_card_chunks(OneByte(Cursor::new(cut)), &Limits::default());
        assert_eq!(
            format!("{slow:?}"),
            format!("{:?}", read_card_chunks_from_slice(cut))
        );
    }
}

#[test]
fn png_reader_starts_at_the_current_stream_position() {
    let mut bytes = b"prefix".to_vec();
    bytes.extend(png_of(&[text("ccv3", &b64("{}"))]));
    let mut cur = Cursor::new(&bytes);
    cur.seek(SeekFrom::Start(6)).unwrap();
    assert_eq!(
        read_card_chunks(cur, &Limits::default())
            .unwrap()
            .ccv3
            .as_deref(),
        Some("{}")
    );
}

#[test]
fn png_write_then_read_round_trip() {
    let card = "{\"spec\":\"chara_card_v3\",\"data\":{\"name\":\"Zoë 🌸\"}}";
    let v2 = "{\"spec\":\"chara_card_v2\"}";
    let asset = STANDARD.encode_to_string([0u8, 255, 7]).into_bytes();
    let original = png_of(&[idat(), text("ccv3", b"old"), ztxt("chara", b"old")]);
    let out = write_card_chunks(
        &original,
        &[
            ("ccv3", &b64(card)),
            ("chara", &b64(v2)),
            ("chara-ext-asset_:0", &asset),
        ],
    )
    .unwrap();
    let c = read_card_chunks_from_slice(&out).unwrap();
    assert_eq!(c.ccv3.as_deref(), Some(card));
    assert_eq!(c.chara.as_deref(), Some(v2));
    assert_eq!(c.assets, vec![("0".to_string(), vec![0u8, 255, 7])]);
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    // Writing again gives the same bytes.
    let again = write_card_chunks(
        &out,
        &[
            ("ccv3", &b64(card)),
            ("chara", &b64(v2)),
            ("chara-ext-asset_:0", &asset),
        ],
    )
    .unwrap();
    assert_eq!(again, out);
    // Text chunks are placed right before IEND.
    let kinds: Vec<String> = list_chunks(&out)
        .unwrap()
        .into_iter()
        .map(|i| i.kind)
        .collect();
    assert_eq!(kinds, ["IHDR", "IDAT", "tEXt", "tEXt", "tEXt", "IEND"]);
}

#[test]
fn png_write_keeps_other_chunks_byte_identical_apng() {
    let actl = chunk(b"acTL", &[0, 0, 0, 2, 0, 0, 0, 0]);
    let fctl0 = chunk(b"fcTL", &[0u8; 26]);
    let mut f1 = vec![0, 0, 0, 1];
    f1.extend_from_slice(&[1u8; 26]);
    let fctl1 = chunk(b"fcTL", &f1[..26]);
    let fdat = chunk(b"fdAT", &[0, 0, 0, 2, 0x78, 0x9C, 0x63, 0, 0, 0, 1, 0, 1]);
    let other_text = text("Software", b"hand-made");
    let mut bad_crc = chunk(b"tIME", &[7, 230, 1, 2, 3, 4, 5]);
    let n = bad_crc.len();
    bad_crc[n - 1] ^= 1;
    let kept = [actl, fctl0, idat(), other_text, fctl1, fdat, bad_crc];
    let mut with_cards = vec![kept[0].clone(), text("chara", b"e30="), kept[1].clone()];
    with_cards.extend([
        kept[2].clone(),
        itxt("ccv3", b"e30=", true),
        kept[3].clone(),
    ]);
    with_cards.extend([ztxt("chara-ext-asset_:1", b"AA=="), kept[4].clone()]);
    with_cards.extend([kept[5].clone(), kept[6].clone(), text("CHARA", b"e30=")]);
    let mut input = png_of(&with_cards);
    input.extend_from_slice(b"trailing bytes");
    let out = write_card_chunks(&input, &[("ccv3", b"e30=")]).unwrap();
    let mut expected = SIGNATURE.to_vec();
    expected.extend(ihdr());
    for k in &kept {
        expected.extend_from_slice(k);
    }
    expected.extend(text("ccv3", b"e30="));
    expected.extend(chunk(b"IEND", b""));
    expected.extend_from_slice(b"trailing bytes");
    assert_eq!(out, expected);
    let mut streamed = Vec::new();
    write_card_chunks_to(&input, &[("ccv3", b"e30=")], &mut streamed).unwrap();
    assert_eq!(streamed, out);
}

#[test]
fn png_writer_validates_input_and_keywords() {
    let no_iend = {
        let mut v = SIGNATURE.to_vec();
        v.extend(ihdr());
        v
    };
    assert!(matches!(write_card_chunks(&no_iend, &[]),
            Err(Error::Png { ref chunk, .. }) if chunk == "IEND"));
    let png = png_of(&[]);
    assert!(matches!(
        write_card_chunks(&png, &[("", b"x")]),
        Err(Error::Parameter(_))
    ));
    assert!(matches!(
        write_card_chunks(&png, &[("a\0b", b"x")]),
        Err(Error::Parameter(_))
    ));
    assert!(matches!(
        write_card_chunks(&png, &[("ccv3", b"a\0")]),
        Err(Error::Parameter(_))
    ));
    let long = "k".repeat(80);
    assert!(matches!(
        write_card_chunks(&png, &[(&long, b"x")]),
        Err(Error::Parameter(_))
    ));
}

#[test]
fn png_list_chunks_reports_types_offsets_and_crc() {
    let mut bad = text("ccv3", b"e30=");
    let n = bad.len();
    bad[n - 2] ^= 1;
    let png = png_of(&[idat(), bad]);
    let list = list_chunks(&png).unwrap();
    let kinds: Vec<&str> = list.iter().map(|i| i.kind.as_str()).collect();
    assert_eq!(kinds, ["IHDR", "IDAT", "tEXt", "IEND"]);
    assert_eq!(list[0].offset, 8);
    assert_eq!(list[0].length, 13);
    assert_eq!(list[1].offset, 33);
    assert_eq!(list[2].keyword.as_deref(), Some("ccv3"));
    let crc: Vec<bool> = list.iter().map(|i| i.crc_ok).collect();
    assert_eq!(crc, [true, true, false, true]);
}

#[test]
fn png_plain_image_is_a_valid_400x600_png() {
    let png = plain_image();
    let decoder = png::Decoder::new(Cursor::new(&png));
    let reader = decoder.read_info().unwrap();
    assert_eq!((reader.info().width, reader.info().height), (400, 600));
    assert!(list_chunks(&png).unwrap().iter().all(|i| i.crc_ok));
    assert!(list_chunks(&FALLBACK_1X1).unwrap().iter().all(|i| i.crc_ok));
    let c = read_card_chunks_from_slice(&png).unwrap();
    assert!(c.ccv3.is_none() && c.chara.is_none() && c.diagnostics.is_empty());
}

#[test]
fn png_regression_corpus_never_panics() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/png/regressions");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let _ = read_card_chunks_from_slice(&bytes);
        let _ = read_card_chunks(OneByte(Cursor::new(&bytes)), &Limits::default());
        let _ = list_chunks(&bytes);
        let _ = write_card_chunks(&bytes, &[("ccv3", b"e30=")]);
        n += 1;
    }
    assert!(n >= 5);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn png_random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = read_card_chunks_from_slice(&bytes);
        let _ = list_chunks(&bytes);
        let _ = write_card_chunks(&bytes, &[("ccv3", b"e30=")]);
        let mut with_sig = SIGNATURE.to_vec();
        with_sig.extend_from_slice(&bytes);
        let _ = read_card_chunks_from_slice(&with_sig);
        let _ = list_chunks(&with_sig);
        let _ = write_card_chunks(&with_sig, &[]);
    }

    #[test]
    fn png_mutated_card_png_never_panics(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut png = png_of(&[
            idat(),
            ztxt("ccv3", &b64("{\"a\":1}")),
            itxt("chara", &b64("{}"), true),
            text("chara-ext-asset_:0", b"AAAA"),
        ]);
        for (at, byte) in edits {
            let i = at.index(png.len());
            png[i] = byte;
        }
        png.truncate(cut.index(png.len() + 1));
        let _ = read_card_chunks_from_slice(&png);
        let _ = read_card_chunks(OneByte(Cursor::new(&png)), &Limits::default());
        let _ = list_chunks(&png);
        if let Ok(out) = write_card_chunks(&png, &[("ccv3", b"e30=")]) {
            let back = read_card_chunks_from_slice(&out).ok().and_then(|c| c.ccv3);
            prop_assert_eq!(back.as_deref(), Some("{}"));
        }
    }

    /// Issue 16: the decoded card text's UTF-8 check (`simdutf8`) accepts and refuses
    /// exactly what `String::from_utf8` does (RFC 3629), with the same error position:
    /// card-like ASCII text with a few bytes changed anywhere, past the SIMD blocks' edges.
    #[test]
    fn png_card_text_utf8_check_is_the_standard_one(
        text in "[ -~\\n]{0,200}",
        repeat in 0usize..4,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        tail in "\\PC{0,8}",
    ) {
        let mut bytes = text.repeat(repeat + 1).into_bytes();
        bytes.extend_from_slice(tail.as_bytes());
        if !bytes.is_empty() {
            for (at, byte) in edits {
                let i = at.index(bytes.len());
                bytes[i] = byte;
            }
        }
        let ours = utf8_text(bytes.clone()).map_err(|e| e.utf8_error().valid_up_to());
        let std = String::from_utf8(bytes).map_err(|e| e.utf8_error().valid_up_to());
        prop_assert_eq!(ours, std);
    }
}

/// Issue 16: a card chunk whose base64 decodes to bytes that are not UTF-8 is refused with
/// the place of the first bad byte, as before the vectorised check (PNG tEXt card chunks
/// hold base64 of UTF-8 JSON: SPEC_V3.md, "Embedding Methods", "PNG/APNG").
#[test]
fn card_text_not_utf8_names_the_first_bad_byte() {
    let value = STANDARD.encode_to_string(b"{\"name\":\"a\xffb\"}");
    let err = decode_text_inner(value.as_bytes()).unwrap_err();
    assert_eq!(
        err,
        "base64-decoded value is not UTF-8 (invalid byte at 10)"
    );
    let long = format!("{{\"name\":\"{}\u{e9}\"}}", "x".repeat(100));
    let (text, _) = decode_text_inner(STANDARD.encode_to_string(&long).as_bytes()).unwrap();
    assert_eq!(text, long);
}

/// A card chunk's data is appended after the keyword read before it, in blocks of zeroes filled
/// by reads (issue 29: no byte-by-byte zeroing); a stream that ends early gives what it had.
#[test]
fn chunk_data_is_appended_after_the_keyword_whole_or_up_to_the_end() {
    let data: Vec<u8> = (0..40_000u32).map(|i| (i % 251) as u8 + 1).collect();
    let mut v = b"ccv3\0".to_vec();
    let got = super::append_by_reads(&mut Cursor::new(&data), &mut v, data.len()).unwrap();
    assert_eq!(got, data.len());
    assert_eq!(&v[..5], b"ccv3\0");
    assert_eq!(&v[5..], &data[..]);

    let mut short = b"chara\0".to_vec();
    let got = super::append_by_reads(&mut Cursor::new(&data[..100]), &mut short, 20_000).unwrap();
    assert_eq!(got, 100);
    assert_eq!(short.len(), 106);
    assert_eq!(&short[6..], &data[..100]);
}
