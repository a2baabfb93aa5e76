//! Issue 12 ("Hostile input, part 2"), the container classes: one budget per file for all
//! inflated bytes, linear deduplication, JSON and file sizes bounded with errors that name the
//! option raising them, errors that name the place, lone surrogates repaired. Every input is
//! small and built here; the limits are set low through `ReadOptions` where the real case is big.

use ccv3::{Container, Document, Error, ReadOptions};
use std::io::Write;

const CARD: &str = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#;

fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut out = (data.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut h = crc32fast::Hasher::new();
    h.update(kind);
    h.update(data);
    out.extend_from_slice(&h.finalize().to_be_bytes());
    out
}

/// A 1x1 PNG with `chunks` between IHDR and IDAT.
fn png_of(chunks: &[Vec<u8>]) -> Vec<u8> {
    let mut out = ccv3::png::SIGNATURE.to_vec();
    let mut ihdr = 1u32.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&1u32.to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]);
    out.extend(chunk(b"IHDR", &ihdr));
    for c in chunks {
        out.extend_from_slice(c);
    }
    out.extend(chunk(
        b"IDAT",
        &[0x78, 0x9C, 0x63, 0x68, 0x00, 0x00, 0x00, 0x82, 0x00, 0x81],
    ));
    out.extend(chunk(b"IEND", b""));
    out
}

fn text(keyword: &str, value: &[u8]) -> Vec<u8> {
    let mut d = keyword.as_bytes().to_vec();
    d.push(0);
    d.extend_from_slice(value);
    chunk(b"tEXt", &d)
}

fn ztxt(keyword: &str, value: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(value).unwrap();
    let mut d = keyword.as_bytes().to_vec();
    d.extend_from_slice(&[0, 0]);
    d.extend(enc.finish().unwrap());
    chunk(b"zTXt", &d)
}

fn b64(s: &str) -> Vec<u8> {
    ccv3::png::encode_text_value(s)
}

fn has(diags: &[ccv3::Diagnostic], code: &str) -> bool {
    diags.iter().any(|d| d.code == code)
}

#[test]
fn issue12_png_ztxt_assets_share_one_inflated_budget() {
    // Three zTXt asset chunks of 400 KiB of base64 each, a few hundred bytes compressed: each is
    // under the per-value limit, together over the file's budget (1 MiB here; 256 MiB by default).
    let big = vec![b'A'; 400 << 10];
    let chunks: Vec<Vec<u8>> = std::iter::once(text("ccv3", &b64(CARD)))
        .chain((0..3).map(|i| ztxt(&format!("chara-ext-asset_:{i}"), &big)))
        .collect();
    let png = png_of(&chunks);
    assert!(png.len() < 16 << 10, "the compressed file is small");
    let mut opts = ReadOptions::default();
    opts.png.max_total_text = 1 << 20;
    let err = ccv3::read_bytes_with(&png, &opts).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::Limit(_)), "{msg}");
    assert!(msg.contains("zTXt chunk at byte"), "{msg}");
    assert!(msg.contains("png::Limits::max_total_text"), "{msg}");
    // Raised, the same file reads.
    opts.png.max_total_text = 2 << 20;
    let Document::Card(cf) = ccv3::read_bytes_with(&png, &opts).unwrap() else {
        panic!("a card")
    };
    assert_eq!(cf.files.len(), 3);
}

#[test]
fn issue12_png_duplicate_chunks_are_seeked_past_and_cost_nothing() {
    // 200 copies of a 10 KiB ccv3 chunk under a 64 KiB budget: only the first is read.
    let card = format!(
        r#"{{"spec":"chara_card_v3","spec_version":"3.0","data":{{"name":"A","description":"{}"}}}}"#,
        "d".repeat(10 << 10)
    );
    let one = text("ccv3", &b64(&card));
    let mut chunks = vec![one.clone(); 200];
    // And 200 copies of one asset.
    chunks.extend(std::iter::repeat_n(
        text("chara-ext-asset_:0", b"QUFB"),
        200,
    ));
    let png = png_of(&chunks);
    let mut opts = ReadOptions::default();
    opts.png.max_total_text = 64 << 10;
    let Document::Card(cf) = ccv3::read_bytes_with(&png, &opts).unwrap() else {
        panic!("a card")
    };
    assert_eq!(cf.card.data.description.len(), 10 << 10);
    assert_eq!(cf.files.len(), 1);
    // 398 duplicates: 100 listed, the rest counted in one more (not 398 warnings).
    let dups: Vec<_> = cf
        .diagnostics
        .iter()
        .filter(|d| d.code == "png-duplicate-chunk")
        .collect();
    assert_eq!(dups.len(), 101);
    assert_eq!(dups[100].message, "298 more like the above not listed");
}

#[test]
fn issue12_png_many_distinct_assets_are_deduplicated_in_linear_time() {
    // 200,000 distinct asset chunks took 32 s (a linear search per chunk); 50,000 here, each
    // found in one hash lookup, and the card keeps every one.
    let mut chunks = vec![text("ccv3", &b64(CARD))];
    chunks.extend((0..50_000).map(|i| text(&format!("chara-ext-asset_:{i}"), b"QUFB")));
    let png = png_of(&chunks);
    let mut opts = ReadOptions::default();
    opts.png.max_assets = 50_000;
    let start = std::time::Instant::now();
    let Document::Card(cf) = ccv3::read_bytes_with(&png, &opts).unwrap() else {
        panic!("a card")
    };
    assert_eq!(cf.files.len(), 50_000);
    // By default at most 20,000 (the CHARX entry limit): more is refused, naming the option.
    let err = ccv3::read_bytes(&png).unwrap_err().to_string();
    assert!(err.contains("png::Limits::max_assets"), "{err}");
    assert!(err.contains("\"chara-ext-asset_:20000\""), "{err}");
    // Generous even for a debug build on a busy machine; the quadratic search took minutes.
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
}

#[test]
fn issue12_bad_ccv3_chunk_error_names_its_type_and_offset() {
    // IHDR is 8 + 25 bytes: the ccv3 chunk starts at byte 33, not "byte 0".
    let png = png_of(&[text("ccv3", &b64(r#"{"spec":"#))]);
    let err = ccv3::read_bytes(&png).unwrap_err().to_string();
    assert!(err.contains("PNG chunk tEXt ccv3 at byte 33"), "{err}");
    assert!(err.contains("line 1 column"), "{err}");
    // A zTXt one says zTXt, after a 25-byte text chunk.
    let png = png_of(&[text("x", b"0123456789a"), ztxt("ccv3", br#"{"spec":"#)]);
    let err = ccv3::read_bytes(&png).unwrap_err().to_string();
    assert!(err.contains("PNG chunk zTXt ccv3 at byte 58"), "{err}");
}

/// A CHARX of `card.json` and `n` files of `size` zero bytes each (deflated to almost nothing).
fn zeros_charx(n: usize, size: usize) -> Vec<u8> {
    let files: Vec<ccv3::charx::CharxFile> = (0..n)
        .map(|i| ccv3::charx::CharxFile {
            path: format!("assets/other/other/f{i}.txt"),
            data: vec![0; size],
        })
        .collect();
    ccv3::charx::write_charx_to_vec(CARD.as_bytes(), &files).unwrap()
}

#[test]
fn issue12_charx_small_entries_share_one_budget() {
    // The attack: 1,900 entries of 1 MiB, each under the ratio check; here 40 of 64 KiB against
    // a 1 MiB budget (the default is 256 MiB).
    let bytes = zeros_charx(40, 64 << 10);
    let mut opts = ReadOptions::default();
    opts.charx.max_total_size = 1 << 20;
    let err = ccv3::read_bytes_with(&bytes, &opts).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::Limit(_)), "{msg}");
    assert!(msg.contains("charx::Limits::max_total_size"), "{msg}");
    assert!(msg.contains("assets/other/other/f"), "{msg}");
    opts.charx.max_total_size = 4 << 20;
    assert!(ccv3::read_bytes_with(&bytes, &opts).is_ok());
}

#[test]
fn issue12_charx_budget_is_checked_while_inflating_not_after() {
    // A central directory that lies (declares 10 bytes for a 64 KiB entry): the entry is cut at
    // the budget while inflating and refused.
    let bytes = zeros_charx(1, 64 << 10);
    let mut lying = bytes;
    let cd = memchr::memmem::rfind(&lying, b"PK\x01\x02").unwrap();
    // The last central header is the asset's; its uncompressed size is at offset 24.
    lying[cd + 24..cd + 28].copy_from_slice(&10u32.to_le_bytes());
    let err = ccv3::charx::read_charx_from_slice(&lying, &ccv3::charx::Limits::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("f0.txt"), "{err}");
    assert!(err.contains("longer than the declared 10 bytes"), "{err}");
}

#[test]
fn issue12_charx_files_are_streamed_and_read_like_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("card.charx");
    std::fs::write(&path, zeros_charx(3, 1000)).unwrap();
    let Document::Card(cf) = ccv3::read_file(&path).unwrap() else {
        panic!("a card")
    };
    assert_eq!(cf.container, Container::Charx);
    assert_eq!(cf.files.len(), 3);
    // A JPEG in front of the zip is streamed too.
    let mut polyglot = vec![0xFF, 0xD8, 0xFF, 0xE0, 0, 2, 0xFF, 0xD9];
    polyglot.extend(zeros_charx(1, 10));
    let path = dir.path().join("card.jpg");
    std::fs::write(&path, polyglot).unwrap();
    let Document::Card(cf) = ccv3::read_file(&path).unwrap() else {
        panic!("a card")
    };
    assert_eq!(cf.container, Container::Charx);
}

#[test]
fn issue12_json_text_over_the_limit_is_refused_before_parsing() {
    // The attack: one 480 MiB string; here 2 KiB against a 1 KiB limit.
    let card = format!(
        r#"{{"spec":"chara_card_v3","spec_version":"3.0","data":{{"name":"{}"}}}}"#,
        "x".repeat(2048)
    );
    let mut opts = ReadOptions::default();
    opts.max_json_len = 1024;
    let err = ccv3::read_bytes_with(card.as_bytes(), &opts).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::Limit(_)), "{msg}");
    assert!(msg.contains("ReadOptions::max_json_len"), "{msg}");
    // The same limit holds inside a PNG chunk.
    let png = png_of(&[text("ccv3", &b64(&card))]);
    let msg = ccv3::read_bytes_with(&png, &opts).unwrap_err().to_string();
    assert!(msg.contains("ReadOptions::max_json_len"), "{msg}");
    assert!(msg.contains("tEXt ccv3 at byte 33"), "{msg}");
}

#[test]
fn issue12_big_files_are_refused_from_their_metadata() {
    // A 3 GiB sparse file costs nothing to make and would cost 3 GiB to read.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.json");
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(3 << 30).unwrap();
    let start = std::time::Instant::now();
    let err = ccv3::read_file(&path).unwrap_err().to_string();
    assert!(err.contains("ReadOptions::max_file_len"), "{err}");
    assert!(start.elapsed().as_secs() < 2);
    // A PNG's picture is kept only within the same limit.
    let path = dir.path().join("card.png");
    std::fs::write(&path, png_of(&[text("ccv3", &b64(CARD))])).unwrap();
    let mut opts = ReadOptions::default().keep_image(true);
    let Document::Card(cf) = ccv3::read_file_with(&path, &opts).unwrap() else {
        panic!("a card")
    };
    assert_eq!(
        cf.image.as_deref(),
        Some(&std::fs::read(&path).unwrap()[..])
    );
    opts.max_file_len = 10;
    let err = ccv3::read_file_with(&path, &opts).unwrap_err().to_string();
    assert!(err.contains("ReadOptions::max_file_len"), "{err}");
}

#[test]
fn issue12_lone_surrogates_become_replacement_characters_with_a_warning() {
    // A lone high surrogate, a reversed pair, one in a key; a real pair stays an emoji.
    let card = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A\ud800",
        "description":"\udc00\ud800 \ud83d\ude00","extensions":{"k\udfff":"\\ud800"}}}"#;
    let Document::Card(cf) = ccv3::read_bytes(card.as_bytes()).unwrap() else {
        panic!("a card")
    };
    assert_eq!(cf.card.data.name, "A\u{fffd}");
    assert_eq!(cf.card.data.description, "\u{fffd}\u{fffd} \u{1f600}");
    let ext = serde_json::to_value(&cf.card.data.extensions).unwrap();
    // An escaped backslash before `ud800` is text, not an escape: untouched.
    assert_eq!(ext["k\u{fffd}"], "\\ud800");
    let w = cf
        .diagnostics
        .iter()
        .find(|d| d.code == ccv3::json::LONE_SURROGATE)
        .expect("a warning");
    assert!(
        w.message.starts_with("4 lone UTF-16 surrogate escapes"),
        "{w}"
    );
    // The same in a PNG chunk and in a lorebook of another format (World Info, slow path).
    let png = png_of(&[text("ccv3", &b64(card))]);
    let Document::Card(cf) = ccv3::read_bytes(&png).unwrap() else {
        panic!("a card")
    };
    assert_eq!(cf.card.data.name, "A\u{fffd}");
    let wi = r#"{"entries":{"0":{"uid":0,"key":["a\ud83d"],"content":"x\ude00"}}}"#;
    let Document::Lorebook(bf) = ccv3::read_bytes(wi.as_bytes()).unwrap() else {
        panic!("a book")
    };
    assert_eq!(bf.book.entries[0].keys, ["a\u{fffd}"]);
    assert_eq!(bf.book.entries[0].content, "x\u{fffd}");
    assert!(has(&bf.diagnostics, ccv3::json::LONE_SURROGATE));
    let mut diags = Vec::new();
    let (book, _) = ccv3::lorebook::read_lorebook_slice(wi.as_bytes(), &mut diags).unwrap();
    assert_eq!(book.entries[0].content, "x\u{fffd}");
    assert!(has(&diags, ccv3::json::LONE_SURROGATE));
    // Files without one take no slow path and get no warning.
    let Document::Card(cf) = ccv3::read_bytes(CARD.as_bytes()).unwrap() else {
        panic!("a card")
    };
    assert!(!has(&cf.diagnostics, ccv3::json::LONE_SURROGATE));
    // Broken JSON keeps its own error and position.
    let err = ccv3::read_bytes(br#"{"spec":"chara_card_v3","data":{"name":"\ud800"#)
        .unwrap_err()
        .to_string();
    assert!(err.contains("EOF"), "{err}");
}

#[test]
fn issue12_card_writers_move_assets_and_match_the_copying_writers() {
    // write_card_to consumes the card (assets moved, output streamed); its bytes are those of
    // write_json / write_png / write_charx.
    let chunks = vec![
        text(
            "ccv3",
            &b64(
                r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","assets":[
            {"type":"icon","uri":"ccdefault:","name":"main","ext":"png"},
            {"type":"emotion","uri":"__asset:0","name":"happy","ext":"webp"},
            {"type":"emotion","uri":"__asset:0","name":"again","ext":"webp"}]}}"#,
            ),
        ),
        text("chara-ext-asset_:0", b"UklGRg=="),
    ];
    let png = png_of(&chunks);
    let Document::Card(cf) = ccv3::read_bytes(&png).unwrap() else {
        panic!("a card")
    };
    for (to, expected) in [
        (
            Container::Json,
            ccv3::write_json(&cf, ccv3::CardVersion::V3),
        ),
        (
            Container::Png,
            ccv3::write_png(&cf, None, ccv3::CardVersion::V3).unwrap(),
        ),
        (Container::Charx, ccv3::write_charx(&cf).unwrap()),
    ] {
        let mut out = std::io::Cursor::new(Vec::new());
        ccv3::write_card_to(cf.clone(), to, ccv3::CardVersion::V3, None, &mut out).unwrap();
        assert_eq!(out.into_inner(), expected, "{to:?}");
    }
    let (json, files) = ccv3::charx_layout(&cf);
    assert_eq!(
        ccv3::into_charx_layout(cf.clone()).unwrap(),
        (json, files.clone())
    );
    // The asset used twice is there twice.
    assert_eq!(files.len(), 3, "{files:?}");
    let mut out = std::io::Cursor::new(Vec::new());
    let err = ccv3::write_card_to(cf, Container::Webp, ccv3::CardVersion::V3, None, &mut out);
    assert!(matches!(err, Err(Error::Parameter(_))));
}

#[test]
fn issue12_many_assets_of_one_name_get_paths_in_linear_time() {
    // Each new `main` used to probe main, main-2, ... main-N: quadratic in the number of assets.
    let mut paths = ccv3::charx::PathDeduper::new();
    let start = std::time::Instant::now();
    let mut last = String::new();
    for _ in 0..100_000 {
        last = paths.asset_path("icon", "main", "png");
    }
    assert_eq!(last, "assets/icon/images/main-100000.png");
    assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
    // A name that looks like a suffixed one is still skipped over.
    let mut paths = ccv3::charx::PathDeduper::new();
    assert!(paths.reserve("assets/icon/images/x-2.png"));
    assert_eq!(
        paths.asset_path("icon", "x", "png"),
        "assets/icon/images/x.png"
    );
    assert_eq!(
        paths.asset_path("icon", "x", "png"),
        "assets/icon/images/x-3.png"
    );
}

#[test]
fn issue12_json_with_too_many_values_is_refused_before_parsing() {
    // A 120 MiB array of zeros took 9 GiB (every `0,` a parsed value); here 3,000 values against
    // a limit of 1,000, in a card's field so the fast path would take it.
    let zeros = vec!["0"; 3000].join(",");
    let card = format!(
        r#"{{"spec":"chara_card_v3","spec_version":"3.0","data":{{"name":"A","extensions":{{"z":[{zeros}]}}}}}}"#
    );
    let mut opts = ReadOptions::default();
    opts.max_json_values = 1000;
    let err = ccv3::read_bytes_with(card.as_bytes(), &opts).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::Limit(_)), "{msg}");
    assert!(msg.contains("ReadOptions::max_json_values"), "{msg}");
    // Nested empty arrays count too.
    let nested = format!("[{}]", vec!["[[[]]]"; 1000].join(","));
    let err = ccv3::json::parse_with(nested.as_bytes(), &opts).unwrap_err();
    assert!(err.to_string().contains("max_json_values"), "{err}");
    // Commas, brackets and escaped quotes inside strings are text, not values.
    let text = format!(
        r#"{{"spec":"chara_card_v3","spec_version":"3.0","data":{{"name":"{}"}}}}"#,
        r#"a,[{\",\"\\"#.repeat(1000)
    );
    let Document::Card(cf) = ccv3::read_bytes_with(text.as_bytes(), &opts).unwrap() else {
        panic!("a card")
    };
    assert!(cf.card.data.name.starts_with("a,[{\",\"\\a"));
}

#[test]
fn issue12_one_file_named_by_many_assets_is_not_copied_without_bound() {
    // One 1 MiB file named by 300 assets: each output needs a copy per asset (300 MiB, or 10 TB
    // for 100 MiB and 100,000 assets); past 256 MiB of copies the writers refuse.
    let assets: Vec<String> = (0..300)
        .map(|i| format!(r#"{{"type":"other","uri":"embeded://a.bin","name":"a{i}","ext":"bin"}}"#))
        .collect();
    let card = format!(
        r#"{{"spec":"chara_card_v3","spec_version":"3.0","data":{{"name":"A","assets":[{}]}}}}"#,
        assets.join(",")
    );
    let files = vec![ccv3::charx::CharxFile {
        path: "a.bin".into(),
        data: vec![7; 1 << 20],
    }];
    let bytes = ccv3::charx::write_charx_to_vec(card.as_bytes(), &files).unwrap();
    let Document::Card(cf) = ccv3::read_bytes(&bytes).unwrap() else {
        panic!("a card")
    };
    for to in [Container::Json, Container::Png, Container::Charx] {
        let mut out = std::io::Cursor::new(Vec::new());
        let err = ccv3::write_card_to(cf.clone(), to, ccv3::CardVersion::V3, None, &mut out);
        assert!(matches!(err, Err(Error::Limit(_))), "{to:?}: {err:?}");
    }
    assert!(matches!(ccv3::write_charx(&cf), Err(Error::Limit(_))));
    assert!(matches!(
        ccv3::write_png(&cf, None, ccv3::CardVersion::V3),
        Err(Error::Limit(_))
    ));
    assert!(ccv3::into_charx_layout(cf.clone()).is_err());
    // The infallible layout stops copying at the bound: the rest keep their URIs.
    let (_, files) = ccv3::charx_layout(&cf);
    assert!(files.len() < 300);
}

/// Every output of a card read with its files deferred (`read_file_deferred`, then
/// `write_card_deferred` / `charx_layout_deferred`) against the same card read whole and
/// written by `write_card_to` / `into_charx_layout`.
fn assert_deferred_writes_match(path: &std::path::Path) {
    let opts = ReadOptions::default().keep_image(true);
    let Document::Card(whole) = ccv3::read_file_with(path, &opts).unwrap() else {
        panic!("a card")
    };
    let (doc, mut files) = ccv3::read_file_deferred(path, &opts).unwrap();
    let Document::Card(cf) = doc else {
        panic!("a card")
    };
    assert!(!whole.files.is_empty());
    assert_eq!(cf.files.len(), whole.files.len());
    assert!(
        cf.files.iter().all(|f| f.data.is_empty()),
        "files are left in the file"
    );
    assert_eq!(cf.diagnostics, whole.diagnostics);
    for version in [ccv3::CardVersion::V3, ccv3::CardVersion::V2] {
        for to in [Container::Json, Container::Png, Container::Charx] {
            let mut expected = std::io::Cursor::new(Vec::new());
            let a = ccv3::write_card_to(whole.clone(), to, version, None, &mut expected);
            let mut got = std::io::Cursor::new(Vec::new());
            let b = ccv3::write_card_deferred(cf.clone(), &mut files, to, version, None, &mut got);
            assert_eq!(a.is_ok(), b.is_ok(), "{to:?} {version:?}");
            assert_eq!(
                got.into_inner(),
                expected.into_inner(),
                "{to:?} {version:?}"
            );
        }
    }
    let mut laid = Vec::new();
    let json = ccv3::charx_layout_deferred(cf, &mut files, |f| {
        laid.push(f);
        Ok(())
    })
    .unwrap();
    assert_eq!((json, laid), ccv3::into_charx_layout(whole).unwrap());
}

#[test]
fn issue12_deferred_files_write_the_same_bytes() {
    // Issue 12 ("assets stream to disk on extract/convert"): PNG asset chunks (tEXt, zTXt, one
    // used twice, one broken and ignored) and CHARX entries (assets and a kept extra file).
    let icon = base64_of(&png_of(&[]));
    let chunks = vec![
        text(
            "ccv3",
            &b64(
                r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","assets":[
            {"type":"icon","uri":"__asset:icon","name":"main","ext":""},
            {"type":"emotion","uri":"__asset:0","name":"happy","ext":"webp"},
            {"type":"emotion","uri":"__asset:0","name":"again","ext":"webp"},
            {"type":"other","uri":"__asset:1","name":"packed","ext":"unknown"},
            {"type":"other","uri":"__asset:bad","name":"bad","ext":"bin"}]}}"#,
            ),
        ),
        text("chara-ext-asset_:icon", &icon),
        text("chara-ext-asset_:0", b"UklGRg=="),
        ztxt("chara-ext-asset_:1", &base64_of(&[7u8; 5000])),
        text("chara-ext-asset_:bad", b"!!!"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("card.png");
    std::fs::write(&png, png_of(&chunks)).unwrap();
    assert_deferred_writes_match(&png);
    // The same card as a CHARX, plus a file no asset names (kept at its path).
    let Document::Card(cf) = ccv3::read_file(&png).unwrap() else {
        panic!("a card")
    };
    let (json, mut files) = ccv3::into_charx_layout(cf).unwrap();
    files.push(ccv3::charx::CharxFile {
        path: "module.risum".into(),
        data: vec![1, 2, 3],
    });
    let charx = dir.path().join("card.charx");
    std::fs::write(
        &charx,
        ccv3::charx::write_charx_to_vec(&json, &files).unwrap(),
    )
    .unwrap();
    assert_deferred_writes_match(&charx);
}

fn base64_of(bytes: &[u8]) -> Vec<u8> {
    base64_simd::STANDARD.encode_to_string(bytes).into_bytes()
}

/// Issue 13 (Backyard AI's Faraday PNGs): a PNG without card chunks is read from its `eXIf`
/// chunk; an `eXIf` chunk that declares more than the file holds, or more than the text budget,
/// is refused without allocating what it declares.
#[test]
fn hostile_exif_chunk_lengths_are_bounded() {
    let mut huge = ccv3::png::SIGNATURE.to_vec();
    huge.extend(u32::MAX.to_be_bytes());
    huge.extend(b"eXIf");
    huge.extend(b"II*\0");
    let err = ccv3::read_bytes(&huge).unwrap_err();
    assert!(err.to_string().contains("at byte 8"), "{err}");
    // Over the budget: refused from the declared length.
    let png = png_of(&[chunk(b"eXIf", &[0u8; 100])]);
    let err = ccv3::png::read_exif_chunk(std::io::Cursor::new(&png), 50).unwrap_err();
    assert!(matches!(err, Error::Limit(_)), "{err}");
    // Declared 1 MiB, 4 bytes there: no eXIf read, the error says what the PNG lacks.
    let mut short = ccv3::png::SIGNATURE.to_vec();
    short.extend((1u32 << 20).to_be_bytes());
    short.extend(b"eXIf");
    short.extend(b"II*\0");
    let err = ccv3::read_bytes(&short).unwrap_err().to_string();
    assert!(
        err.contains("eXIf at byte 8") && err.contains("truncated"),
        "{err}"
    );
    let read = ccv3::png::read_exif_chunk(std::io::Cursor::new(&short), 1 << 30).unwrap();
    assert_eq!(read, None);
    // An eXIf chunk that is not EXIF.
    let png = png_of(&[chunk(b"eXIf", b"not exif at all")]);
    let err = ccv3::read_bytes(&png).unwrap_err().to_string();
    assert!(err.contains("eXIf chunk holds no card"), "{err}");
}

/// Issue 16: `read_open_file_reusing` takes the length from a caller that has the file's
/// metadata. A wrong one (the file changed since, or a caller's bug) is hostile input like any
/// other: no panic, no read past the file, no allocation beyond the limits; the right one reads
/// exactly as `read_file` does, with one scratch reused for every file.
#[test]
fn issue16_a_wrong_length_from_the_caller_is_survived() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("card.png");
    std::fs::write(
        &png,
        png_of(&[text("chara", &b64(CARD)), text("ccv3", &b64(CARD))]),
    )
    .unwrap();
    let json = dir.path().join("card.json");
    std::fs::write(&json, CARD).unwrap();
    let mut scratch = ccv3::ReadScratch::new();
    let opts = ReadOptions::default();
    for path in [&png, &json] {
        let real = std::fs::metadata(path).unwrap().len();
        for len in [0, 1, 16, real - 1, real + 1, real * 2, 1 << 40, u64::MAX] {
            let file = std::fs::File::open(path).unwrap();
            // Either a document or an error; never a panic or an abort.
            let _ = ccv3::read_open_file_reusing(file, Some(len), &opts, &mut scratch);
        }
        for len in [None, Some(real)] {
            let file = std::fs::File::open(path).unwrap();
            let doc = ccv3::read_open_file_reusing(file, len, &opts, &mut scratch).unwrap();
            let plain = ccv3::read_file(path).unwrap();
            assert_eq!(
                format!("{doc:?}"),
                format!("{plain:?}"),
                "{}",
                path.display()
            );
        }
    }
}
