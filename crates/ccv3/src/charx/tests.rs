//! Tests of the CHARX byte level, named after the rule each one checks.

use std::io::Write;
use std::path::{Component, Path};

use proptest::prelude::*;

use super::*;
use crate::{Error, Result, Severity};

// ---------------------------------------------------------------------------------------------
// A raw zip builder, so hostile archives can be made byte by byte.

#[derive(Clone)]
struct RawEntry {
    name: Vec<u8>,
    payload: Vec<u8>,
    method: u16,
    flags: u16,
    crc: u32,
    csize: u32,
    usize: u32,
    local_name: Option<Vec<u8>>,
    unix_mode: Option<u32>,
    cd_extra: Vec<u8>,
}

fn stored(name: &str, data: &[u8]) -> RawEntry {
    RawEntry {
        name: name.as_bytes().to_vec(),
        payload: data.to_vec(),
        method: 0,
        flags: 0,
        crc: crc32fast::hash(data),
        csize: data.len() as u32,
        usize: data.len() as u32,
        local_name: None,
        unix_mode: None,
        cd_extra: Vec::new(),
    }
}

fn deflated(name: &str, data: &[u8]) -> RawEntry {
    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    let payload = enc.finish().unwrap();
    RawEntry {
        name: name.as_bytes().to_vec(),
        csize: payload.len() as u32,
        payload,
        method: 8,
        flags: 0,
        crc: crc32fast::hash(data),
        usize: data.len() as u32,
        local_name: None,
        unix_mode: None,
        cd_extra: Vec::new(),
    }
}

/// Builds a zip; `base` is added to every stored offset (as a self-extractor that adjusted its
/// offsets would), `zip64_count` writes a zip64 end record announcing that many entries.
fn build_zip_with(entries: &[RawEntry], base: u64, zip64_count: Option<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offsets = Vec::new();
    for e in entries {
        offsets.push(out.len() as u64 + base);
        let local_name = e.local_name.as_ref().unwrap_or(&e.name);
        out.extend_from_slice(b"PK\x03\x04");
        out.extend_from_slice(&20u16.to_le_bytes());
        out.extend_from_slice(&e.flags.to_le_bytes());
        out.extend_from_slice(&e.method.to_le_bytes());
        out.extend_from_slice(&[0, 0, 0x21, 0]);
        out.extend_from_slice(&e.crc.to_le_bytes());
        out.extend_from_slice(&e.csize.to_le_bytes());
        out.extend_from_slice(&e.usize.to_le_bytes());
        out.extend_from_slice(&(local_name.len() as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(local_name);
        out.extend_from_slice(&e.payload);
    }
    let cd_start = out.len() as u64 + base;
    for (e, off) in entries.iter().zip(&offsets) {
        out.extend_from_slice(b"PK\x01\x02");
        // version made by: 2.0 on MS-DOS, or on Unix (host 3) when a Unix mode is given
        out.extend_from_slice(&(if e.unix_mode.is_some() { 0x0314u16 } else { 20 }).to_le_bytes());
        out.extend_from_slice(&20u16.to_le_bytes());
        out.extend_from_slice(&e.flags.to_le_bytes());
        out.extend_from_slice(&e.method.to_le_bytes());
        out.extend_from_slice(&[0, 0, 0x21, 0]);
        out.extend_from_slice(&e.crc.to_le_bytes());
        out.extend_from_slice(&e.csize.to_le_bytes());
        out.extend_from_slice(&e.usize.to_le_bytes());
        out.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
        out.extend_from_slice(&(e.cd_extra.len() as u16).to_le_bytes());
        out.extend_from_slice(&[0; 6]); // comment len, disk, internal attrs
        out.extend_from_slice(&(e.unix_mode.unwrap_or(0) << 16).to_le_bytes());
        out.extend_from_slice(&(*off as u32).to_le_bytes());
        out.extend_from_slice(&e.name);
        out.extend_from_slice(&e.cd_extra);
    }
    let cd_size = out.len() as u64 + base - cd_start;
    let count = zip64_count.unwrap_or(entries.len() as u64);
    if zip64_count.is_some() {
        let rec = out.len() as u64 + base;
        out.extend_from_slice(b"PK\x06\x06");
        out.extend_from_slice(&44u64.to_le_bytes());
        out.extend_from_slice(&45u16.to_le_bytes());
        out.extend_from_slice(&45u16.to_le_bytes());
        out.extend_from_slice(&[0; 8]);
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&cd_size.to_le_bytes());
        out.extend_from_slice(&cd_start.to_le_bytes());
        out.extend_from_slice(b"PK\x06\x07");
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&rec.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
    }
    let small = |v: u64, max: u64| if zip64_count.is_some() { max } else { v };
    out.extend_from_slice(b"PK\x05\x06");
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(small(count, 0xFFFF) as u16).to_le_bytes());
    out.extend_from_slice(&(small(count, 0xFFFF) as u16).to_le_bytes());
    out.extend_from_slice(&(small(cd_size, 0xFFFF_FFFF) as u32).to_le_bytes());
    out.extend_from_slice(&(small(cd_start, 0xFFFF_FFFF) as u32).to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

fn build_zip(entries: &[RawEntry]) -> Vec<u8> {
    build_zip_with(entries, 0, None)
}

const CARD: &[u8] = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"T"}}"#;

fn card() -> RawEntry {
    deflated("card.json", CARD)
}

fn read(bytes: &[u8]) -> Result<CharxArchive> {
    read_charx_from_slice(bytes, &Limits::default())
}

/// The error of reading `bytes`, as (entry, problem) for CHARX errors or ("limit", message).
fn read_err(bytes: &[u8], limits: &Limits) -> (String, String) {
    match read_charx_from_slice(bytes, limits) {
        Ok(_) => panic!("archive was accepted"),
        Err(Error::Charx { entry, problem }) => (entry, problem),
        Err(Error::Limit(msg)) => ("limit".into(), msg),
        Err(other) => panic!("unexpected error kind: {other}"),
    }
}

fn corpus(name: &str) -> Vec<u8> {
    crate::test_corpus::file(&format!("charx/{name}"))
        .and_then(|p| std::fs::read(p).ok())
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Real files.

#[test]
fn spec_charx_corpus_baseline_reads_card_and_one_asset() {
    let bytes = corpus("ca_fixture_baseline_v3_small.charx");
    if bytes.is_empty() {
        return; // corpus not available on this machine
    }
    let a = read(&bytes).unwrap();
    assert!(a.card_json.starts_with(b"{"));
    assert_eq!(a.files.len(), 1, "2 zip entries: card.json + 1 asset");
    assert_eq!(a.files[0].path, "assets/icon/image/1.png");
    assert!(a.files[0].data.starts_with(b"\x89PNG"));
    assert_eq!(a.prefix_len, 0);
    assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
    assert!(looks_like_charx(&bytes));
    assert_eq!(find_zip_start(&bytes), Some(0));
}

#[test]
fn spec_charx_corpus_risuai_keeps_module_risum_and_x_meta() {
    let bytes = corpus("risutoki_night_veil_v2_ko.charx");
    if bytes.is_empty() {
        return;
    }
    let a = read(&bytes).unwrap();
    assert_eq!(a.files.len() + 1, 58, "58 zip entries including card.json");
    let risum = a.file("module.risum").expect("module.risum kept");
    assert!(!risum.data.is_empty());
    let metas = a
        .files
        .iter()
        .filter(|f| f.path.starts_with("x_meta/") && f.path.ends_with(".json"))
        .count();
    assert_eq!(metas, 28);
    assert_eq!(
        a.files
            .iter()
            .filter(|f| f.path.starts_with("assets/"))
            .count(),
        28
    );
    let card: serde_json::Value = serde_json::from_slice(&a.card_json).unwrap();
    assert_eq!(card["spec"], "chara_card_v3");
    // Zip order is kept: the first entry of this archive is an icon.
    assert_eq!(a.files[0].path, "assets/icon/image/iconx_1.png");
}

#[test]
fn charx_card_json_fast_path_matches_full_read() {
    for name in [
        "ca_fixture_baseline_v3_small.charx",
        "risutoki_night_veil_v2_ko.charx",
    ] {
        let bytes = corpus(name);
        if bytes.is_empty() {
            continue;
        }
        let fast = read_charx_card_json(std::io::Cursor::new(&bytes), &Limits::default()).unwrap();
        assert_eq!(fast, read(&bytes).unwrap().card_json, "{name}");
    }
}

#[test]
fn charx_corpus_round_trips_through_writer() {
    let bytes = corpus("risutoki_night_veil_v2_ko.charx");
    if bytes.is_empty() {
        return;
    }
    let a = read(&bytes).unwrap();
    let written = write_charx_to_vec(&a.card_json, &a.files).unwrap();
    let b = read(&written).unwrap();
    assert_eq!(a.card_json, b.card_json);
    assert_eq!(a.files, b.files);
}

// ---------------------------------------------------------------------------------------------
// Prefixed archives (JPEG+zip polyglots, self-extractors).

fn tiny_jpeg() -> Vec<u8> {
    let mut j = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10];
    j.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
    j.extend_from_slice(&[0xAB; 300]); // stands in for image data
    j.extend_from_slice(&[0xFF, 0xD9]);
    j
}

#[test]
fn spec_charx_jpeg_prefixed_archive_reads_and_reports_prefix() {
    let files = vec![CharxFile {
        path: "assets/icon/images/main.png".into(),
        data: b"\x89PNG....".to_vec(),
    }];
    let zip = write_charx_to_vec(CARD, &files).unwrap();
    let mut bytes = tiny_jpeg();
    let jpeg_len = bytes.len();
    bytes.extend_from_slice(&zip);
    let a = read(&bytes).unwrap();
    assert_eq!(a.card_json, CARD);
    assert_eq!(a.files, files);
    assert_eq!(a.prefix_len, jpeg_len as u64);
    assert!(a
        .diagnostics
        .iter()
        .any(|d| d.code == "charx-prefix" && d.severity == Severity::Info));
    assert_eq!(find_zip_start(&bytes), Some(jpeg_len));
    assert!(looks_like_charx(&bytes));
    assert!(!looks_like_charx(&tiny_jpeg()));
    assert_eq!(
        read_charx_card_json(std::io::Cursor::new(&bytes), &Limits::default()).unwrap(),
        CARD
    );
}

#[test]
fn charx_zip_crate_also_finds_prefixed_zip() {
    // Checked once: the zip crate detects prepended data on its own and reports it as offset().
    let zip = write_charx_to_vec(CARD, &[]).unwrap();
    let mut bytes = tiny_jpeg();
    bytes.extend_from_slice(&zip);
    let archive = zip::ZipArchive::new(std::io::Cursor::new(&bytes)).unwrap();
    assert_eq!(archive.offset(), tiny_jpeg().len() as u64);
}

#[test]
fn charx_self_extractor_with_adjusted_offsets_reads() {
    let stub = b"MZ this is a self-extracting stub\0\0\0".to_vec();
    let mut bytes = stub.clone();
    bytes.extend_from_slice(&build_zip_with(
        &[card(), stored("a.txt", b"hi")],
        stub.len() as u64,
        None,
    ));
    let a = read(&bytes).unwrap();
    assert_eq!(a.card_json, CARD);
    assert_eq!(a.prefix_len, stub.len() as u64);
    assert_eq!(find_zip_start(&bytes), Some(stub.len()));
}

#[test]
fn charx_zip64_end_record_is_understood() {
    let bytes = build_zip_with(&[card(), stored("a.txt", b"hi")], 0, Some(2));
    let a = read(&bytes).unwrap();
    assert_eq!(a.files.len(), 1);
}

#[test]
fn charx_looks_like_rejects_other_data() {
    assert!(!looks_like_charx(b""));
    assert!(!looks_like_charx(b"\x89PNG\r\n\x1a\n"));
    assert!(!looks_like_charx(br#"{"spec":"chara_card_v3"}"#));
    assert_eq!(find_zip_start(b"no zip here"), None);
}

// ---------------------------------------------------------------------------------------------
// Hostile archives.

#[test]
fn charx_rejects_parent_dir_path() {
    let (entry, problem) = read_err(
        &build_zip(&[card(), stored("../evil", b"x")]),
        &Limits::default(),
    );
    assert_eq!(entry, "../evil");
    assert!(problem.contains(".."), "{problem}");
    let (entry, _) = read_err(
        &build_zip(&[card(), stored("assets/../../evil", b"x")]),
        &Limits::default(),
    );
    assert_eq!(entry, "assets/../../evil");
}

#[test]
fn charx_rejects_absolute_path() {
    let (entry, problem) = read_err(
        &build_zip(&[card(), stored("/etc/passwd", b"x")]),
        &Limits::default(),
    );
    assert_eq!(entry, "/etc/passwd");
    assert!(problem.contains("absolute"), "{problem}");
}

#[test]
fn charx_rejects_drive_letter_and_backslash_paths() {
    let (_, problem) = read_err(
        &build_zip(&[card(), stored("C:\\x", b"x")]),
        &Limits::default(),
    );
    assert!(problem.contains("backslash"), "{problem}");
    let (_, problem) = read_err(
        &build_zip(&[card(), stored("C:x", b"x")]),
        &Limits::default(),
    );
    assert!(problem.contains("drive letter"), "{problem}");
    let (_, problem) = read_err(
        &build_zip(&[card(), stored("assets\\..\\..\\x", b"x")]),
        &Limits::default(),
    );
    assert!(problem.contains("backslash"), "{problem}");
}

#[test]
fn charx_rejects_nul_and_control_characters_in_names() {
    let (_, problem) = read_err(
        &build_zip(&[card(), stored("a.png\0.txt", b"x")]),
        &Limits::default(),
    );
    assert!(problem.contains("nul"), "{problem}");
    let (_, problem) = read_err(
        &build_zip(&[card(), stored("a\nb", b"x")]),
        &Limits::default(),
    );
    assert!(problem.contains("control"), "{problem}");
}

#[test]
fn charx_rejects_empty_and_dot_segments() {
    for bad in ["", "a//b", "./a", "a/./b"] {
        let (entry, _) = read_err(&build_zip(&[card(), stored(bad, b"x")]), &Limits::default());
        assert_eq!(entry, bad);
    }
}

#[test]
fn spec_charx_rejects_encrypted_entry() {
    let mut e = stored("assets/icon/images/a.png", b"secret");
    e.flags = 1;
    let (entry, problem) = read_err(&build_zip(&[card(), e]), &Limits::default());
    assert_eq!(entry, "assets/icon/images/a.png");
    assert!(problem.contains("encrypted"), "{problem}");
}

#[test]
fn charx_rejects_unsupported_compression_method() {
    let mut e = stored("a.bin", b"data");
    e.method = 12; // bzip2
    let (_, problem) = read_err(&build_zip(&[card(), e]), &Limits::default());
    assert!(problem.contains("compression method 12"), "{problem}");
}

#[test]
fn charx_limit_too_many_entries_is_refused_before_reading_them() {
    let entries: Vec<RawEntry> = std::iter::once(card())
        .chain((0..100_000).map(|i| stored(&format!("f/{i}"), b"")))
        .collect();
    let bytes = build_zip_with(&entries, 0, Some(entries.len() as u64));
    let (kind, msg) = read_err(&bytes, &Limits::default());
    assert_eq!(kind, "limit");
    assert!(msg.contains("100001 entries"), "{msg}");
    // The same rule with a small limit and a plain (non-zip64) archive.
    let small = build_zip(&[card(), stored("a", b""), stored("b", b"")]);
    let limits = Limits {
        max_entries: 2,
        ..Limits::default()
    };
    assert_eq!(read_err(&small, &limits).0, "limit");
}

/// A raw deflate stream of `1 + 258 * matches` zero bytes in a fixed-Huffman block, built
/// directly so a gigabyte costs a few megabytes and no gigabyte is ever held in memory.
fn zeros_deflate(matches: u64) -> Vec<u8> {
    struct Bits {
        out: Vec<u8>,
        acc: u64,
        n: u32,
    }
    impl Bits {
        fn put(&mut self, value: u64, count: u32) {
            self.acc |= value << self.n;
            self.n += count;
            while self.n >= 8 {
                self.out.push(self.acc as u8);
                self.acc >>= 8;
                self.n -= 8;
            }
        }
        /// Huffman codes go most significant bit first.
        fn code(&mut self, code: u64, len: u32) {
            let mut rev = 0;
            for i in 0..len {
                rev |= ((code >> i) & 1) << (len - 1 - i);
            }
            self.put(rev, len);
        }
    }
    let mut b = Bits {
        out: Vec::with_capacity((matches * 13 / 8 + 16) as usize),
        acc: 0,
        n: 0,
    };
    b.put(1, 1); // BFINAL
    b.put(1, 2); // BTYPE = fixed Huffman
    b.code(0x30, 8); // literal 0
    for _ in 0..matches {
        b.code(0xC5, 8); // length code 285 = 258 bytes
        b.code(0, 5); // distance code 0 = distance 1
    }
    b.code(0, 7); // end of block
    b.put(0, 7);
    b.out
}

fn bomb(declared: u32, matches: u64) -> RawEntry {
    let payload = zeros_deflate(matches);
    RawEntry {
        name: b"assets/other/other/bomb.bin".to_vec(),
        csize: payload.len() as u32,
        payload,
        method: 8,
        flags: 0,
        crc: 0,
        usize: declared,
        local_name: None,
        unix_mode: None,
        cd_extra: Vec::new(),
    }
}

#[test]
fn charx_limit_gigabyte_of_zeros_bomb_is_refused() {
    let matches = (1u64 << 30) / 258;
    let size = 1 + 258 * matches; // just under 1 GiB of zeros
    let e = bomb(size as u32, matches);
    assert!(e.payload.len() < 8 * 1024 * 1024);
    let bytes = build_zip(&[card(), e.clone()]);
    let (kind, msg) = read_err(&bytes, &Limits::default());
    assert_eq!(kind, "limit");
    assert!(msg.contains("per-entry limit"), "{msg}");
    // With a generous size limit the declared ratio (~158:1) still trips a stricter ratio limit.
    let limits = Limits {
        max_entry_size: 2 << 30,
        max_total_size: 4 << 30,
        max_ratio: 100,
        ..Limits::default()
    };
    let (kind, msg) = read_err(&bytes, &limits);
    assert_eq!(kind, "limit");
    assert!(msg.contains("compression ratio"), "{msg}");
    // The card-only path refuses it as well: the whole directory is checked.
    assert!(read_charx_card_json(std::io::Cursor::new(&bytes), &Limits::default()).is_err());
}

#[test]
fn charx_limit_lying_size_stops_decompression_at_declared_size() {
    // The header claims 1000 bytes; the data would inflate to 1 GiB. Reading must stop early.
    let matches = (1u64 << 30) / 258;
    let bytes = build_zip(&[card(), bomb(1000, matches)]);
    let started = std::time::Instant::now();
    let (entry, problem) = read_err(&bytes, &Limits::default());
    assert_eq!(entry, "assets/other/other/bomb.bin");
    assert!(
        problem.contains("longer than the declared 1000 bytes"),
        "{problem}"
    );
    assert!(started.elapsed().as_secs() < 20);
}

#[test]
fn charx_limit_total_size_is_enforced() {
    let bytes = build_zip(&[card(), stored("a", &[1; 600]), stored("b", &[2; 600])]);
    let limits = Limits {
        max_total_size: 1000,
        ..Limits::default()
    };
    let (kind, msg) = read_err(&bytes, &limits);
    assert_eq!(kind, "limit");
    assert!(msg.contains("\"b\""), "{msg}");
}

#[test]
fn charx_rejects_short_entry_and_crc_mismatch() {
    let mut short = deflated("a.txt", b"hello hello hello");
    short.usize += 5;
    let (_, problem) = read_err(&build_zip(&[card(), short]), &Limits::default());
    assert!(problem.contains("shorter"), "{problem}");
    let mut bad_crc = deflated("a.txt", b"hello");
    bad_crc.crc ^= 1;
    let (_, problem) = read_err(&build_zip(&[card(), bad_crc]), &Limits::default());
    assert!(problem.contains("crc-32"), "{problem}");
    let mut stored_mismatch = stored("a.txt", b"hello");
    stored_mismatch.usize = 3;
    let (_, problem) = read_err(&build_zip(&[card(), stored_mismatch]), &Limits::default());
    assert!(problem.contains("stored entry"), "{problem}");
}

#[test]
fn charx_rejects_corrupt_deflate_data() {
    let mut e = deflated("a.txt", b"some text to compress");
    e.payload = vec![0xFF; e.payload.len()];
    let (entry, _) = read_err(&build_zip(&[card(), e]), &Limits::default());
    assert_eq!(entry, "a.txt");
}

#[test]
fn charx_rejects_local_header_name_differing_from_directory() {
    let mut e = stored("assets/a.png", b"x");
    e.local_name = Some(b"../../a.png".to_vec());
    let (entry, problem) = read_err(&build_zip(&[card(), e]), &Limits::default());
    assert_eq!(entry, "assets/a.png");
    assert!(problem.contains("local file header"), "{problem}");
}

#[test]
fn spec_charx_missing_card_json_is_an_error_naming_it() {
    let (entry, problem) = read_err(&build_zip(&[stored("a.txt", b"x")]), &Limits::default());
    assert_eq!(entry, "card.json");
    assert!(problem.contains("no card.json"), "{problem}");
    let (_, problem) = read_err(&build_zip(&[stored("Card.json", CARD)]), &Limits::default());
    assert!(problem.contains("found \"Card.json\""), "{problem}");
    let (_, problem) = read_err(
        &build_zip(&[stored("mychar/card.json", CARD)]),
        &Limits::default(),
    );
    assert!(problem.contains("mychar/card.json"), "{problem}");
    let err = read_charx_card_json(
        std::io::Cursor::new(build_zip(&[stored("a", b"")])),
        &Limits::default(),
    );
    assert!(matches!(err, Err(Error::Charx { entry, .. }) if entry == "card.json"));
}

#[test]
fn charx_rejects_truncated_and_non_zip_input() {
    let good = write_charx_to_vec(
        CARD,
        &[CharxFile {
            path: "a.txt".into(),
            data: vec![7; 5000],
        }],
    )
    .unwrap();
    for cut in [0, 10, 21, good.len() / 2, good.len() - 1] {
        assert!(read(&good[..cut]).is_err(), "cut at {cut}");
    }
    assert!(read(b"PK\x03\x04 not really a zip").is_err());
}

#[test]
fn charx_duplicate_path_warns_and_keeps_first() {
    let bytes = build_zip(&[
        card(),
        stored("a.txt", b"first"),
        stored("a.txt", b"second"),
        stored("card.json", b"{}"),
    ]);
    let a = read(&bytes).unwrap();
    assert_eq!(a.card_json, CARD);
    assert_eq!(
        a.files,
        vec![CharxFile {
            path: "a.txt".into(),
            data: b"first".to_vec()
        }]
    );
    let dups: Vec<_> = a
        .diagnostics
        .iter()
        .filter(|d| d.code == "charx-duplicate-path")
        .collect();
    assert_eq!(dups.len(), 2);
    assert!(dups.iter().all(|d| d.severity == Severity::Warning));
}

#[test]
fn spec_charx_non_ascii_path_is_read_with_a_warning() {
    let mut e = stored("assets/emotion/images/미소.png", b"x");
    e.flags = 0x0800;
    let a = read(&build_zip(&[card(), e])).unwrap();
    assert_eq!(a.files[0].path, "assets/emotion/images/미소.png");
    assert!(a
        .diagnostics
        .iter()
        .any(|d| d.code == "charx-non-ascii-path" && d.message.contains("미소")));
}

#[test]
fn charx_cp437_names_are_decoded_when_not_utf8() {
    let mut e = stored("x", b"x");
    e.name = b"caf\x82.txt".to_vec(); // 0x82 is 'é' in code page 437
    let a = read(&build_zip(&[card(), e])).unwrap();
    assert_eq!(a.files[0].path, "café.txt");
    let mut flagged = stored("x", b"x");
    flagged.name = b"caf\x82.txt".to_vec();
    flagged.flags = 0x0800;
    let (_, problem) = read_err(&build_zip(&[card(), flagged]), &Limits::default());
    assert!(problem.contains("utf-8"), "{problem}");
}

#[test]
fn charx_symlink_entry_is_kept_as_plain_file_with_warning() {
    let mut link = stored("assets/link.png", b"/etc/passwd");
    link.unix_mode = Some(0o120777);
    let mut plain = stored("assets/plain.png", b"x");
    plain.unix_mode = Some(0o100644);
    let a = read(&build_zip(&[card(), link, plain])).unwrap();
    assert_eq!(a.file("assets/link.png").unwrap().data, b"/etc/passwd");
    let warned: Vec<_> = a
        .diagnostics
        .iter()
        .filter(|d| d.code == "charx-symlink-as-file")
        .collect();
    assert_eq!(warned.len(), 1);
    assert!(warned[0].message.contains("assets/link.png"));
}

#[test]
fn charx_info_zip_unicode_path_field_names_the_entry() {
    let mut e = stored("x", b"x");
    e.name = b"emotion_?.png".to_vec();
    let utf8 = "emotion_\u{bbf8}.png".as_bytes();
    let mut body = vec![1u8];
    body.extend_from_slice(&crc32fast::hash(&e.name).to_le_bytes());
    body.extend_from_slice(utf8);
    e.cd_extra = [
        &0x7075u16.to_le_bytes()[..],
        &(body.len() as u16).to_le_bytes(),
        &body,
    ]
    .concat();
    let a = read(&build_zip(&[card(), e.clone()])).unwrap();
    assert_eq!(a.files[0].path, "emotion_\u{bbf8}.png");
    // A stale field (its CRC does not match the header name) is ignored.
    e.cd_extra[5] ^= 0xFF;
    let a = read(&build_zip(&[card(), e])).unwrap();
    assert_eq!(a.files[0].path, "emotion_?.png");
}

#[test]
fn charx_read_each_streams_files_in_zip_order() {
    let bytes = build_zip(&[stored("a.txt", b"1"), card(), stored("b.txt", b"2")]);
    let mut seen = Vec::new();
    let info = read_charx_each(std::io::Cursor::new(&bytes), &Limits::default(), |f| {
        seen.push(f.path);
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, ["a.txt", "card.json", "b.txt"]);
    assert_eq!(info.prefix_len, 0);
    // An error from the callback stops the walk and comes back unchanged.
    let mut calls = 0;
    let err = read_charx_each(std::io::Cursor::new(&bytes), &Limits::default(), |_| {
        calls += 1;
        Err(Error::Parameter("stop".into()))
    });
    assert!(matches!(err, Err(Error::Parameter(_))));
    assert_eq!(calls, 1);
    // A missing card.json is found before any file is handed out.
    let no_card = build_zip(&[stored("a.txt", b"1")]);
    let err = read_charx_each(std::io::Cursor::new(&no_card), &Limits::default(), |_| {
        panic!("called")
    });
    assert!(matches!(err, Err(Error::Charx { entry, .. }) if entry == "card.json"));
}

#[test]
fn charx_directory_entries_are_skipped() {
    let a = read(&build_zip(&[
        stored("assets/", b""),
        card(),
        stored("assets/a.txt", b"x"),
    ]))
    .unwrap();
    assert_eq!(a.files.len(), 1);
    assert_eq!(a.files[0].path, "assets/a.txt");
}

// ---------------------------------------------------------------------------------------------
// Writing.

fn sample_files() -> Vec<CharxFile> {
    vec![
        CharxFile {
            path: "assets/icon/images/main.png".into(),
            data: b"\x89PNG\r\n\x1a\nfake".to_vec(),
        },
        CharxFile {
            path: "assets/other/audio/voice.mp3".into(),
            data: vec![0x49; 2048],
        },
        CharxFile {
            path: "module.risum".into(),
            data: (0..=255u8).cycle().take(10_000).collect(),
        },
        CharxFile {
            path: "x_meta/main.json".into(),
            data: br#"{"type":"png"}"#.to_vec(),
        },
        CharxFile {
            path: "assets/emotion/images/happy face (1).webp".into(),
            data: vec![],
        },
        CharxFile {
            path: "assets/x_custom/other/한글.bin".into(),
            data: vec![0; 100],
        },
    ]
}

#[test]
fn charx_write_read_round_trip_keeps_every_path_and_byte() {
    let files = sample_files();
    let bytes = write_charx_to_vec(CARD, &files).unwrap();
    let a = read(&bytes).unwrap();
    assert_eq!(a.card_json, CARD);
    assert_eq!(a.files, files);
    assert_eq!(a.prefix_len, 0);
    // The zip crate agrees with our reader on the writer's output.
    let z = zip::ZipArchive::new(std::io::Cursor::new(&bytes)).unwrap();
    assert_eq!(z.len(), files.len() + 1);
}

#[test]
fn charx_write_is_deterministic_and_card_json_first() {
    let a = write_charx_to_vec(CARD, &sample_files()).unwrap();
    let b = write_charx_to_vec(CARD, &sample_files()).unwrap();
    assert_eq!(a, b);
    assert_eq!(
        &a[30..39],
        b"card.json",
        "first local header names card.json"
    );
}

#[test]
fn charx_write_stores_media_and_deflates_text() {
    let bytes = write_charx_to_vec(CARD, &sample_files()).unwrap();
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(&bytes)).unwrap();
    let method = |z: &mut zip::ZipArchive<_>, name: &str| z.by_name(name).unwrap().compression();
    assert_eq!(
        method(&mut z, "assets/icon/images/main.png"),
        zip::CompressionMethod::Stored
    );
    assert_eq!(
        method(&mut z, "assets/other/audio/voice.mp3"),
        zip::CompressionMethod::Stored
    );
    assert_eq!(
        method(&mut z, "x_meta/main.json"),
        zip::CompressionMethod::Deflated
    );
    assert_eq!(
        method(&mut z, "card.json"),
        zip::CompressionMethod::Deflated
    );
}

#[test]
fn charx_write_refuses_unsafe_duplicate_and_reserved_paths() {
    for bad in [
        "../evil",
        "/abs",
        "C:x",
        "a\\b",
        "a\0b",
        "dir/",
        "card.json",
        "",
    ] {
        let files = vec![CharxFile {
            path: bad.into(),
            data: vec![],
        }];
        match write_charx_to_vec(CARD, &files) {
            Err(Error::Charx { entry, .. }) => assert_eq!(entry, bad),
            other => panic!("{bad:?} was not refused: {other:?}"),
        }
    }
    let twice = vec![
        CharxFile {
            path: "a".into(),
            data: vec![],
        },
        CharxFile {
            path: "a".into(),
            data: vec![1],
        },
    ];
    assert!(write_charx_to_vec(CARD, &twice).is_err());
}

// ---------------------------------------------------------------------------------------------
// Paths: the folder rule, sanitising, de-duplication, safe joining.

#[test]
fn spec_charx_asset_dir_follows_folder_rule() {
    let table = [
        ("icon", "png", "assets/icon/images/"),
        ("icon", "PNG", "assets/icon/images/"),
        ("background", "avif", "assets/background/images/"),
        ("emotion", "webp", "assets/emotion/images/"),
        ("user_icon", "jpeg", "assets/user_icon/images/"),
        ("other", "mp3", "assets/other/audio/"),
        ("other", "opus", "assets/other/audio/"),
        ("other", "mp4", "assets/other/video/"),
        ("other", "webm", "assets/other/video/"),
        ("x_live2d", "moc3", "assets/x_live2d/l2d/"),
        ("x_live2d", "model3.json", "assets/x_live2d/l2d/"),
        ("other", "mmd", "assets/other/3d/"),
        ("other", "obj", "assets/other/3d/"),
        ("other", "vrm", "assets/other/3d/"),
        ("other", "safetensors", "assets/other/ai/"),
        ("other", "ckpt", "assets/other/ai/"),
        ("other", "onnx", "assets/other/ai/"),
        ("other", "otf", "assets/other/fonts/"),
        ("other", "ttf", "assets/other/fonts/"),
        ("other", "lua", "assets/other/code/"),
        ("other", "js", "assets/other/code/"),
        ("other", "json", "assets/other/other/"),
        ("other", "unknown", "assets/other/other/"),
        ("other", "", "assets/other/other/"),
        ("x-risu-asset", ".png", "assets/x-risu-asset/images/"),
        ("", "png", "assets/other/images/"),
        ("../..", "png", "assets/_____/images/"),
        ("아이콘", "png", "assets/___/images/"),
    ];
    for (ty, ext, want) in table {
        assert_eq!(asset_dir(ty, ext), want, "asset_dir({ty:?}, {ext:?})");
        assert!(validate_zip_path(want).is_ok(), "{want}");
    }
}

#[test]
fn charx_sanitize_file_name_is_safe_ascii_and_non_empty() {
    let table = [
        ("main", "main"),
        ("happy face.png", "happy_face.png"),
        ("../../etc/passwd", "etc_passwd"),
        ("..", "asset"),
        ("", "asset"),
        ("미소", "asset"),
        ("미소 smile", "smile"),
        ("CON", "_CON"),
        ("nul.txt", "_nul.txt"),
        ("a\\b:c*d", "a_b_c_d"),
        (".hidden", "hidden"),
    ];
    for (input, want) in table {
        assert_eq!(
            sanitize_file_name(input),
            want,
            "sanitize_file_name({input:?})"
        );
    }
    assert!(sanitize_file_name(&"x".repeat(1000)).len() <= 100);
}

#[test]
fn charx_path_deduper_never_collides() {
    let mut d = PathDeduper::new();
    assert!(d.reserve("assets/icon/images/main.png"));
    assert_eq!(
        d.asset_path("icon", "main", "png"),
        "assets/icon/images/main-2.png"
    );
    assert_eq!(
        d.asset_path("icon", "MAIN", "PNG"),
        "assets/icon/images/MAIN-3.png"
    );
    assert_eq!(
        d.asset_path("emotion", "미소", "png"),
        "assets/emotion/images/asset.png"
    );
    assert_eq!(
        d.asset_path("emotion", "슬픔", "png"),
        "assets/emotion/images/asset-2.png"
    );
    assert_eq!(d.unique_path("", "notes", ""), "notes");
}

#[test]
fn charx_safe_join_stays_under_root() {
    let root = Path::new("/tmp/out");
    assert_eq!(
        safe_join(root, "assets/icon/images/a.png").unwrap(),
        root.join("assets/icon/images/a.png")
    );
    assert_eq!(safe_join(root, "assets/").unwrap(), root.join("assets"));
    for bad in [
        "../x",
        "a/../../x",
        "/etc/passwd",
        "C:x",
        "a\\..\\x",
        "a\0",
        "",
        "a//b",
        ".",
    ] {
        assert!(safe_join(root, bad).is_err(), "{bad:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn charx_safe_join_never_escapes_root(path in "[a-zA-Z0-9./\\\\:_ \\x00-\\x1f\u{e9}\u{bbf8}-]{0,40}") {
        let root = Path::new("/srv/root");
        if let Ok(joined) = safe_join(root, &path) {
            let rest = joined.strip_prefix(root).expect("joined path starts with root");
            prop_assert!(rest.components().all(|c| matches!(c, Component::Normal(_))), "{:?}", joined);
        }
    }

    #[test]
    fn charx_random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = read(&bytes);
        let _ = read_charx_card_json(std::io::Cursor::new(&bytes), &Limits::default());
        let _ = looks_like_charx(&bytes);
        let _ = find_zip_start(&bytes);
    }

    #[test]
    fn charx_mutated_archive_never_panics(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut bytes = write_charx_to_vec(CARD, &sample_files()).unwrap();
        for (at, value) in flips {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        let _ = read(&bytes);
        let _ = read_charx_card_json(std::io::Cursor::new(&bytes), &Limits::default());
        let _ = looks_like_charx(&bytes);
        let _ = find_zip_start(&bytes);
    }

    #[test]
    fn charx_sanitized_names_are_valid_segments(name in "\\PC{0,60}") {
        let s = sanitize_file_name(&name);
        prop_assert!(!s.is_empty() && s.is_ascii() && s.len() <= 101);
        prop_assert!(validate_zip_path(&s).is_ok());
        prop_assert!(!s.contains('/'));
    }
}

// ---------------------------------------------------------------------------------------------
// Regression corpus (also the fuzz seed corpus): every file must be read without a panic.

#[test]
fn charx_regression_corpus_never_panics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/charx/regressions");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let full = read(&bytes);
        let fast = read_charx_card_json(std::io::Cursor::new(&bytes), &Limits::default());
        let _ = (looks_like_charx(&bytes), find_zip_start(&bytes));
        // A file named ok-* must read; every other file must be refused.
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("ok-") {
            assert!(full.is_ok() && fast.is_ok(), "{name}: {:?}", full.err());
        } else {
            assert!(full.is_err(), "{name} was accepted");
        }
        n += 1;
    }
    assert!(n >= 5, "regression corpus has {n} files");
}
