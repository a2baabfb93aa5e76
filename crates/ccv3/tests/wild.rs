//! Issue 13 "Reading": shapes real applications write, one fixture each in `tests/fixtures/wild/`
//! (made for these tests; `README.md` there says what each file is and which application writes
//! the shape).

use ccv3::{Container, Diagnostic, Document, Severity};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/wild")
        .join(name)
}

fn read(name: &str) -> Document {
    ccv3::read_file(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn card(name: &str) -> ccv3::CardFile {
    match read(name) {
        Document::Card(cf) => cf,
        Document::Lorebook(_) => panic!("{name}: read as a lorebook"),
    }
}

fn diag<'a>(diags: &'a [Diagnostic], code: &str) -> &'a Diagnostic {
    diags
        .iter()
        .find(|d| d.code == code)
        .unwrap_or_else(|| panic!("no {code} in {diags:#?}"))
}

fn no_errors(name: &str, diags: &[Diagnostic]) {
    assert!(
        diags.iter().all(|d| d.severity != Severity::Error),
        "{name}: {diags:#?}"
    );
}

// --- PNG: a card chunk that reads, beside damage elsewhere (issue 13) ---------------------------

#[test]
fn wild_png_bad_crc_after_the_card_is_a_warning_naming_chunk_and_offset() {
    for (name, kind, at) in [
        ("png_bad_crc_after_card.png", "tIME", "9878"),
        ("png_bad_iend_crc.png", "IEND", "9878"),
    ] {
        let cf = card(name);
        assert_eq!(cf.card.data.name, "Ember Vale");
        let d = diag(&cf.diagnostics, "png-bad-crc");
        assert_eq!(d.severity, Severity::Warning);
        assert!(d.message.contains(kind) && d.message.contains(at), "{d}");
        no_errors(name, &cf.diagnostics);
    }
}

#[test]
fn wild_png_truncated_after_the_card_reads_with_a_warning() {
    let cf = card("png_truncated_after_card.png");
    assert_eq!(cf.card.data.name, "Ember Vale");
    let d = diag(&cf.diagnostics, "png-truncated");
    assert_eq!(d.severity, Severity::Warning);
    assert!(d.message.contains("IDAT at byte 9579"), "{d}");
}

#[test]
fn wild_png_junk_after_iend_is_a_warning_naming_where() {
    let cf = card("png_junk_after_iend.png");
    assert_eq!(cf.card.data.name, "Ember Vale");
    let d = diag(&cf.diagnostics, "png-data-after-iend");
    assert_eq!(d.severity, Severity::Warning);
    assert!(
        d.message.contains("IEND chunk at byte 9878") && d.message.contains("70 bytes"),
        "{d}"
    );
}

#[test]
fn wild_png_broken_ccv3_beside_a_good_chara_reads_chara_with_a_warning() {
    for (name, code) in [
        ("png_ccv3_bad_base64.png", "png-card-chunk-undecodable"),
        ("png_ccv3_bad_json.png", "png-ccv3-chunk-broken"),
    ] {
        let cf = card(name);
        assert_eq!(cf.card.data.name, "Ember Vale", "{name}");
        let d = diag(&cf.diagnostics, code);
        assert_eq!(d.severity, Severity::Warning, "{name}");
        assert!(
            d.message.contains("tEXt") && d.message.contains("5229"),
            "{d}"
        );
        no_errors(name, &ccv3::check_document(&Document::Card(cf.clone())));
        // The same from bytes and from a random-access source.
        let bytes = std::fs::read(fixture(name)).unwrap();
        for doc in [
            ccv3::read_bytes(&bytes),
            ccv3::read_seekable(std::io::Cursor::new(&bytes)),
        ] {
            let Ok(Document::Card(cf)) = doc else {
                panic!("{name}: {doc:?}")
            };
            assert_eq!(cf.container, Container::Png);
            assert_eq!(cf.card.data.name, "Ember Vale");
        }
    }
}
