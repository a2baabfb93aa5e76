//! `read_card_files`, `write_card_with_files` and the `json-v2` format of `write_card`: what the
//! web page for card creators needs to show a card's assets and to download it again keeping
//! them (issue 15: "Download as PNG (keeping the portrait and assets), CHARX, V3 JSON, V2 JSON").

use ccv3_embed::{read_card, read_card_files, write_card, write_card_with_files, ReadOptions};
use std::path::Path;

fn example(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn corpus(name: &str) -> Option<Vec<u8>> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus")
        .join(name);
    std::fs::read(p).ok()
}

#[test]
fn json_v2_is_the_v2_backfill() {
    // SPEC_V3 "PNG/APNG": the V2 backfill; `ccv3 convert --to v2` writes the same.
    let card = read_card(&example("ember.json"), &ReadOptions::default()).unwrap();
    let v2 = write_card(&card, "json-v2", None).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&v2).unwrap();
    assert_eq!(v["spec"], "chara_card_v2");
    assert_eq!(v["data"]["name"], card["data"]["name"]);
    // Read back, the card is the same character.
    let back = read_card(&v2, &ReadOptions::default()).unwrap();
    assert_eq!(back["data"]["first_mes"], card["data"]["first_mes"]);
    let err = write_card(&card, "json-v9", None).unwrap_err();
    assert_eq!(err.code, "bad-input");
}

#[test]
fn files_of_json_and_lorebooks() {
    assert!(read_card_files(&example("ember.json")).unwrap().is_empty());
    let err = read_card_files(&example("world.json")).unwrap_err();
    assert_eq!(err.code, "read-failed");
    assert_eq!(read_card_files(b"\x89PNG").unwrap_err().code, "read-failed");
}

#[test]
fn charx_assets_survive_a_write_with_their_files() {
    let Some(bytes) = corpus("charx/ca_fixture_baseline_v3_small.charx") else {
        eprintln!("skipped: ../shared/corpus is missing");
        return;
    };
    let files = read_card_files(&bytes).unwrap();
    assert!(!files.is_empty(), "the fixture has an asset");
    let card = read_card(&bytes, &ReadOptions::default()).unwrap();
    // The main icon becomes the PNG's picture: the PNG differs from one written without it.
    let png = write_card_with_files(&card, "png", None, files.clone()).unwrap();
    assert_ne!(png, write_card(&card, "png", None).unwrap());
    assert_eq!(
        read_card(&png, &ReadOptions::default()).unwrap()["data"]["name"],
        card["data"]["name"]
    );
    {
        let format = "charx";
        let written = write_card_with_files(&card, format, None, files.clone()).unwrap();
        let again = read_card_files(&written).unwrap();
        for (path, data) in &files {
            assert!(
                again.iter().any(|(_, d)| d == data),
                "{format}: {path} was not carried"
            );
        }
        let back = read_card(&written, &ReadOptions::default()).unwrap();
        assert_eq!(back["data"]["name"], card["data"]["name"], "{format}");
    }
    // Without the files the CHARX carries none of them.
    let bare = write_card(&card, "charx", None).unwrap();
    assert!(read_card_files(&bare)
        .unwrap()
        .iter()
        .all(|(_, d)| files.iter().all(|(_, f)| f != d)));
}

#[test]
fn charx_takes_the_portrait_of_a_png_card() {
    // A card read from a PNG points its icon at `ccdefault:` (the picture it came in); written
    // as CHARX with that picture, the CHARX carries it as the icon.
    let png = example("ember.png");
    let card = read_card(&png, &ReadOptions::default()).unwrap();
    let bare = write_card(&card, "charx", None).unwrap();
    assert!(read_card_files(&bare).unwrap().is_empty());
    let charx = write_card_with_files(&card, "charx", Some(&png), Vec::new()).unwrap();
    let files = read_card_files(&charx).unwrap();
    assert!(
        files
            .iter()
            .any(|(p, d)| p.ends_with(".png") && d.starts_with(b"\x89PNG")),
        "{:?}",
        files.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    let err = write_card_with_files(&card, "json", Some(&png), Vec::new()).unwrap_err();
    assert_eq!(err.code, "bad-input");
}

#[test]
fn scans_without_the_rejected_list() {
    // Issue 15: the web page's tester scans a 10,000-entry book as someone types; `rejected:
    // false` leaves out the list of entries that did not activate, nothing else changes.
    use ccv3_embed::{scan_lorebook, CompiledBooks, Source};
    use serde_json::json;
    let book = example("world.json");
    let chat = json!([{"role": "user", "name": "User", "content": "The mainland and Harrowport."}]);
    let full = scan_lorebook(&[Source::Bytes(&book)], &json!({"chat": chat})).unwrap();
    let lean = scan_lorebook(
        &[Source::Bytes(&book)],
        &json!({"chat": chat, "rejected": false}),
    )
    .unwrap();
    assert_eq!(lean["activated"], full["activated"]);
    assert_eq!(lean["tokens"], full["tokens"]);
    assert_eq!(lean["state"], full["state"]);
    assert_eq!(lean["rejected"], json!([]));
    assert!(full["rejected"].as_array().is_some_and(|r| !r.is_empty()));
    let mut compiled = CompiledBooks::new(&[Source::Bytes(&book)], &json!({})).unwrap();
    let lean = compiled
        .scan(&json!({"chat": chat, "rejected": false}))
        .unwrap();
    assert_eq!(lean["activated"], full["activated"]);
    assert_eq!(lean["rejected"], json!([]));
    assert_eq!(
        compiled.scan(&json!({"chat": chat})).unwrap()["rejected"],
        full["rejected"]
    );
    let err = scan_lorebook(&[Source::Bytes(&book)], &json!({"rejected": 1})).unwrap_err();
    assert_eq!(err.code, "bad-input");
}
