//! Container choices made by the document reader (SPEC_V3 "Embedding Methods").

fn png_with(chunks: &[(&str, &str)]) -> Vec<u8> {
    let encoded: Vec<(String, Vec<u8>)> = chunks
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                base64_simd::STANDARD.encode_to_string(v).into_bytes(),
            )
        })
        .collect();
    let refs: Vec<(&str, &[u8])> = encoded
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_slice()))
        .collect();
    ccv3::png::write_card_chunks(&ccv3::png::plain_image(), &refs).unwrap()
}

const V2: &str = r#"{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"From chara"}}"#;
const V3: &str = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"From ccv3"}}"#;

fn name(bytes: &[u8]) -> (String, Vec<ccv3::Diagnostic>) {
    match ccv3::read_bytes(bytes).unwrap() {
        ccv3::Document::Card(cf) => (cf.card.data.name, cf.diagnostics),
        _ => panic!("not a card"),
    }
}

#[test]
fn spec_v3_png_ccv3_chunk_wins_over_chara_in_either_order() {
    assert_eq!(
        name(&png_with(&[("chara", V2), ("ccv3", V3)])).0,
        "From ccv3"
    );
    assert_eq!(
        name(&png_with(&[("ccv3", V3), ("chara", V2)])).0,
        "From ccv3"
    );
}

#[test]
fn spec_v3_png_chara_alone_is_read() {
    assert_eq!(name(&png_with(&[("chara", V2)])).0, "From chara");
}

#[test]
fn png_broken_ccv3_beside_good_chara_reads_chara_with_a_warning() {
    let (n, diags) = name(&png_with(&[("chara", V2), ("ccv3", "{ not json")]));
    assert_eq!(n, "From chara");
    assert!(
        diags.iter().any(|d| d.code == "png-ccv3-chunk-broken"),
        "{diags:?}"
    );
}

#[test]
fn spec_v3_png_asset_chunks_resolve_as_asset_uris() {
    let card = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A",
        "assets":[{"type":"emotion","uri":"__asset:0","name":"happy","ext":"png"}]}}"#;
    let bytes = png_with(&[("ccv3", card), ("chara-ext-asset_:0", "PIXELS")]);
    let ccv3::Document::Card(cf) = ccv3::read_bytes(&bytes).unwrap() else {
        panic!()
    };
    let uri = &cf.card.data.assets.as_ref().unwrap()[0].uri;
    assert_eq!(
        ccv3::asset_bytes(uri, &cf.files).as_deref(),
        Some(&b"PIXELS"[..])
    );
    // Moved to CHARX, the asset lands at the spec's folder and its URI follows.
    let charx = ccv3::write_charx(&cf).unwrap();
    let ccv3::Document::Card(back) = ccv3::read_bytes(&charx).unwrap() else {
        panic!()
    };
    let a = &back.card.data.assets.as_ref().unwrap()[0];
    assert_eq!(a.uri, "embeded://assets/emotion/images/happy.png");
    assert_eq!(
        ccv3::asset_bytes(&a.uri, &back.files).as_deref(),
        Some(&b"PIXELS"[..])
    );
}

#[test]
fn spec_v3_png_write_has_ccv3_and_a_backfilled_chara() {
    let ccv3::Document::Card(cf) = ccv3::read_bytes(V3.as_bytes()).unwrap() else {
        panic!()
    };
    let png = ccv3::write_png(&cf, None, ccv3::CardVersion::V3).unwrap();
    let chunks = ccv3::png::read_card_chunks_from_slice(&png).unwrap();
    assert!(chunks.ccv3.unwrap().contains("chara_card_v3"));
    let chara = chunks.chara.unwrap();
    assert!(
        chara.contains("chara_card_v2")
            && chara.contains("This character card is Character Card V3")
    );
    // V2-only export: a chara chunk alone, without the warning.
    let png = ccv3::write_png(&cf, None, ccv3::CardVersion::V2).unwrap();
    let chunks = ccv3::png::read_card_chunks_from_slice(&png).unwrap();
    assert!(chunks.ccv3.is_none());
    assert!(!chunks
        .chara
        .unwrap()
        .contains("This character card is Character Card V3"));
}

#[test]
fn json_file_named_png_is_read_as_json() {
    let Some(path) = crate::util::corpus_file("png/lide_akerodia_zh_JSON_with_png_extension.png")
    else {
        return;
    };
    let ccv3::Document::Card(cf) = ccv3::read_file(&path).unwrap() else {
        panic!()
    };
    assert_eq!(cf.container, ccv3::Container::Json);
}

#[test]
fn spec_v3_backfilled_chara_is_trimmed_on_import() {
    let ccv3::Document::Card(mut cf) = ccv3::read_bytes(V3.as_bytes()).unwrap() else {
        panic!()
    };
    cf.card.data.creator_notes = "Notes".into();
    let png = ccv3::write_png(&cf, None, ccv3::CardVersion::V3).unwrap();
    // Drop the ccv3 chunk: what a V2-only tool would leave behind.
    let chunks = ccv3::png::read_card_chunks_from_slice(&png).unwrap();
    let only_chara = png_with(&[("chara", &chunks.chara.unwrap())]);
    let ccv3::Document::Card(back) = ccv3::read_bytes(&only_chara).unwrap() else {
        panic!()
    };
    assert_eq!(back.card.data.creator_notes, "Notes");
    assert!(back
        .diagnostics
        .iter()
        .any(|d| d.code == "backfill-warning-trimmed"));
}

#[test]
fn spec_v3_creator_notes_multilingual_picks_the_language() {
    let mut d = ccv3::CardData {
        creator_notes: "EN notes".into(),
        ..Default::default()
    };
    assert_eq!(
        d.creator_notes_for("de"),
        "EN notes",
        "no map: creator_notes"
    );
    d.creator_notes_multilingual =
        Some(serde_json::from_str(r#"{"de":"Hallo","en":"English"}"#).unwrap());
    assert_eq!(d.creator_notes_for("de"), "Hallo");
    assert_eq!(
        d.creator_notes_for("en"),
        "English",
        "map has en: creator_notes ignored"
    );
    d.creator_notes_multilingual = Some(serde_json::from_str(r#"{"de":"Hallo"}"#).unwrap());
    assert_eq!(
        d.creator_notes_for("en"),
        "EN notes",
        "no en in map: creator_notes is en"
    );
}

#[test]
fn spec_v3_new_card_has_a_creation_date_in_seconds() {
    // SPEC_V3 creation_date: seconds since the epoch, from the caller's clock (the library reads
    // none: `Card::new` leaves the dates unset).
    let now = 1_700_000_123;
    let card = ccv3::Card::new_at("A", now);
    let t = card.data.creation_date.as_ref().and_then(|n| n.as_u64());
    assert_eq!(t, Some(now));
    assert_eq!(
        card.data
            .modification_date
            .as_ref()
            .and_then(|n| n.as_u64()),
        Some(now)
    );
    assert!(ccv3::validate_card(&card, &Default::default())
        .iter()
        .all(|d| !d.code.starts_with("date-")));
    let undated = ccv3::Card::new("A");
    assert_eq!(undated.data.creation_date, None);
    assert_eq!(undated.data.modification_date, None);
}

fn card_file(bytes: &[u8]) -> ccv3::CardFile {
    match ccv3::read_bytes(bytes).unwrap() {
        ccv3::Document::Card(cf) => cf,
        _ => panic!("not a card"),
    }
}

/// A valid PNG that carries `label` in a `Comment` text chunk, to tell pictures apart.
fn labelled_png(label: &str) -> Vec<u8> {
    ccv3::png::write_card_chunks(&ccv3::png::plain_image(), &[("Comment", label.as_bytes())])
        .unwrap()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn spec_v3_ccdefault_user_icon_is_not_the_png_itself() {
    let card = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","assets":[
        {"type":"icon","uri":"ccdefault:","name":"main","ext":"png"},
        {"type":"user_icon","uri":"ccdefault:","name":"User","ext":"png"}]}}"#;
    let cf = card_file(&png_with(&[("ccv3", card)]));
    let picture = cf.image.clone().unwrap();
    // Moved to CHARX, the icon's default is the PNG picture; the user icon's is not.
    let (json, files) = ccv3::charx_layout(&cf);
    assert_eq!(files.len(), 1, "only the icon is stored");
    assert_eq!(files[0].path, "assets/icon/images/main.png");
    assert_eq!(files[0].data, picture);
    let out: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(
        out["data"]["assets"][0]["uri"],
        "embeded://assets/icon/images/main.png"
    );
    assert_eq!(out["data"]["assets"][1]["uri"], "ccdefault:");
    let back = card_file(&ccv3::write_charx(&cf).unwrap());
    let user = &back.card.data.assets.as_ref().unwrap()[1];
    assert_eq!(
        (user.kind.as_str(), user.uri.as_str()),
        ("user_icon", "ccdefault:")
    );
}

#[test]
fn spec_v3_icon_named_main_is_the_main_icon_and_becomes_the_png_picture() {
    // Two icons in a CHARX, the main one second: writing PNG takes it, not the first icon.
    let card = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","assets":[
        {"type":"icon","uri":"embeded://assets/icon/images/alt.png","name":"alt","ext":"png"},
        {"type":"icon","uri":"embeded://assets/icon/images/main.png","name":"main","ext":"png"}]}}"#;
    let (alt, main) = (labelled_png("alt picture"), labelled_png("main picture"));
    let files = [
        ccv3::charx::CharxFile {
            path: "assets/icon/images/alt.png".into(),
            data: alt.clone(),
        },
        ccv3::charx::CharxFile {
            path: "assets/icon/images/main.png".into(),
            data: main,
        },
    ];
    let cf = card_file(&ccv3::charx::write_charx_to_vec(card.as_bytes(), &files).unwrap());
    let png = ccv3::write_png(&cf, None, ccv3::CardVersion::V3).unwrap();
    assert!(contains(&png, b"Comment\0main picture"));
    assert!(!contains(&png, b"Comment\0alt picture"));
    let back = card_file(&png);
    let assets = back.card.data.assets.as_ref().unwrap();
    assert_eq!(
        (assets[1].name.as_str(), assets[1].uri.as_str()),
        ("main", "ccdefault:")
    );
    assert_eq!(
        (assets[0].name.as_str(), assets[0].uri.as_str()),
        ("alt", "__asset:0")
    );
    assert_eq!(ccv3::asset_bytes(&assets[0].uri, &back.files), Some(alt));
}

#[test]
fn spec_v3_asset_without_its_data_is_kept_and_reported_by_validation() {
    // Neither asset has bytes in a JSON card: writers keep both entries and their URIs, and
    // validating the written file reports each one whose data is missing.
    let card = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","assets":[
        {"type":"icon","uri":"embeded://assets/icon/images/gone.png","name":"main","ext":"png"},
        {"type":"x_sound","uri":"__asset:9","name":"bell","ext":"mp3"}]}}"#;
    let cf = card_file(card.as_bytes());
    let uris = |cf: &ccv3::CardFile| -> Vec<String> {
        let assets = cf.card.data.assets.as_ref().unwrap();
        assets.iter().map(|a| a.uri.clone()).collect()
    };
    let want = ["embeded://assets/icon/images/gone.png", "__asset:9"];
    let missing = |doc: &ccv3::Document| -> Vec<(String, String, ccv3::Severity)> {
        ccv3::check_document(doc)
            .into_iter()
            .filter(|d| d.code.starts_with("asset-"))
            .map(|d| (d.code, d.path, d.severity))
            .collect()
    };
    let charx = ccv3::write_charx(&cf).unwrap();
    assert_eq!(uris(&card_file(&charx)), want);
    assert_eq!(
        missing(&ccv3::read_bytes(&charx).unwrap()),
        [
            (
                "asset-embedded-missing".to_string(),
                "data.assets[0].uri".to_string(),
                ccv3::Severity::Error
            ),
            (
                "asset-embedded-missing".to_string(),
                "data.assets[1].uri".to_string(),
                ccv3::Severity::Error
            ),
        ]
    );
    let png = ccv3::write_png(&cf, None, ccv3::CardVersion::V3).unwrap();
    assert_eq!(uris(&card_file(&png)), want);
    assert_eq!(
        missing(&ccv3::read_bytes(&png).unwrap()),
        [(
            "asset-png-chunk-missing".to_string(),
            "data.assets[1].uri".to_string(),
            ccv3::Severity::Error
        )]
    );
    let json = ccv3::write_json(&cf, ccv3::CardVersion::V3);
    assert_eq!(uris(&card_file(&json)), want);
}

#[test]
fn read_file_with_mmap_reads_a_big_file_as_read_file_does() {
    // Over the 1 MiB size from which a map is used (with the `mmap` feature; read otherwise).
    let entries: Vec<serde_json::Value> = (0..3000)
        .map(|i| serde_json::json!({"keys": [format!("k{i}")], "content": "x".repeat(400)}))
        .collect();
    let text = serde_json::to_vec(&serde_json::json!({"spec": "lorebook_v3",
        "data": {"name": "B", "entries": entries}}))
    .unwrap();
    assert!(text.len() > 1 << 20);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("book.json");
    std::fs::write(&path, &text).unwrap();
    let plain = ccv3::read_file(&path).unwrap();
    let mapped = ccv3::read_file_with(&path, &ccv3::ReadOptions::default().mmap(true)).unwrap();
    let book = |d: ccv3::Document| match d {
        ccv3::Document::Lorebook(bf) => (bf.book, bf.diagnostics),
        ccv3::Document::Card(_) => panic!("not a lorebook"),
    };
    let (plain, mapped) = (book(plain), book(mapped));
    assert_eq!(plain.0.entries.len(), 3000);
    assert_eq!(plain, book(ccv3::read_bytes(&text).unwrap()));
    assert_eq!(mapped, plain);
}

/// A source that hands out at most 3 bytes per read and counts the bytes it hands out.
struct Trickle<'a> {
    bytes: &'a [u8],
    pos: u64,
    read: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let at = usize::try_from(self.pos)
            .unwrap_or(usize::MAX)
            .min(self.bytes.len());
        let n = buf.len().min(3).min(self.bytes.len() - at);
        buf[..n].copy_from_slice(&self.bytes[at..at + n]);
        self.pos += n as u64;
        self.read += n;
        Ok(n)
    }
}

impl std::io::Seek for Trickle<'_> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.pos = match to {
            std::io::SeekFrom::Start(n) => n,
            std::io::SeekFrom::End(d) => (self.bytes.len() as u64).saturating_add_signed(d),
            std::io::SeekFrom::Current(d) => self.pos.saturating_add_signed(d),
        };
        Ok(self.pos)
    }
}

#[test]
fn read_seekable_reads_what_read_bytes_reads_and_seeks_past_png_image_data() {
    // Issue 11 section 5 (Node readCard): a PNG card is read through a random-access source
    // without copying its image data; other containers are read whole, then as read_bytes does.
    let card = |d: ccv3::Document| match d {
        ccv3::Document::Card(cf) => (cf.card, cf.container, cf.files, cf.diagnostics),
        ccv3::Document::Lorebook(_) => panic!("not a card"),
    };
    let mut image = ccv3::png::plain_image();
    // A big IDAT-like chunk the reader must seek past (an unknown ancillary chunk here).
    let big = vec![7u8; 200_000];
    let mut chunk = (big.len() as u32).to_be_bytes().to_vec();
    chunk.extend_from_slice(b"zzzz");
    chunk.extend_from_slice(&big);
    chunk.extend_from_slice(&crc32fast::hash(&[b"zzzz".as_slice(), &big].concat()).to_be_bytes());
    image.splice(33..33, chunk);
    let cf = card_file(&png_with(&[("ccv3", V3)]));
    let png = ccv3::write_png(&cf, Some(&image), ccv3::CardVersion::V3).unwrap();
    let json = ccv3::write_json(&cf, ccv3::CardVersion::V3);
    for bytes in [png.as_slice(), json.as_slice()] {
        let mut source = Trickle {
            bytes,
            pos: 0,
            read: 0,
        };
        let doc = ccv3::read_seekable(&mut source).unwrap();
        if ccv3::png::is_png(bytes) {
            assert!(source.read < 10_000, "read {} bytes", source.read);
            let ccv3::Document::Card(cf) = &doc else {
                panic!()
            };
            assert_eq!(cf.image, None);
        }
        assert_eq!(card(doc), card(ccv3::read_bytes(bytes).unwrap()));
    }
    // Truncated and broken inputs are the same errors as from read_bytes.
    for cut in [0, 8, 40, png.len() / 2, png.len() - 1] {
        let short = &png[..cut];
        let a = ccv3::read_seekable(std::io::Cursor::new(short)).map(|d| card(d).0.data.name);
        let b = ccv3::read_bytes(short).map(|d| card(d).0.data.name);
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "cut at {cut}");
    }
}
