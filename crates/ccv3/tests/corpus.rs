//! Every file in `../shared/corpus/` (or the in-repository subset, `tests/corpus/`) loads, or
//! fails with the clear error its MANIFEST notes lead us to expect (`MALFORMED/negative`).

use crate::util::{corpus_dir, corpus_is_full};

struct Row {
    file: String,
    notes: String,
}

fn manifest() -> Vec<Row> {
    let text = std::fs::read_to_string(corpus_dir().join("MANIFEST.tsv")).expect("MANIFEST.tsv");
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            Some(Row {
                file: cols.first()?.to_string(),
                notes: cols.get(6).unwrap_or(&"").to_string(),
            })
        })
        .collect()
}

#[test]
fn corpus_every_file_loads_or_fails_as_the_manifest_says() {
    let rows = manifest();
    let least = if corpus_is_full() { 40 } else { 16 };
    assert!(rows.len() >= least, "manifest rows: {}", rows.len());
    let mut failures = Vec::new();
    for row in &rows {
        let path = corpus_dir().join(&row.file);
        let negative = row.notes.contains("MALFORMED/negative");
        match ccv3::read_file(&path) {
            Ok(_) if negative => failures.push(format!(
                "{}: loaded but the manifest says it is malformed",
                row.file
            )),
            Ok(_) => {}
            Err(e) if negative => {
                let msg = e.to_string();
                assert!(
                    msg.len() > 10 && !msg.contains("panic"),
                    "{}: unclear error {msg}",
                    row.file
                );
            }
            Err(e) => failures.push(format!("{}: {e}", row.file)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn corpus_streamed_json_is_the_tree_json() {
    // Cards and books written straight from the model read as the tree would write them.
    for row in manifest() {
        let doc = match ccv3::read_file(&corpus_dir().join(&row.file)) {
            Ok(doc) => doc,
            Err(_) => continue,
        };
        let mut text = Vec::new();
        let tree = match &doc {
            ccv3::Document::Card(cf) => {
                cf.card.write_v3_json(&mut text, true).unwrap();
                cf.card.to_v3_json()
            }
            ccv3::Document::Lorebook(bf) => {
                bf.book.write_lorebook_v3(&mut text, true).unwrap();
                bf.book.to_lorebook_v3()
            }
        };
        assert_eq!(
            text,
            serde_json::to_vec_pretty(&tree).unwrap(),
            "{}",
            row.file
        );
    }
}

#[test]
fn corpus_card_names_match_the_manifest() {
    for row in manifest() {
        let Some(start) = row.notes.find("name='") else {
            continue;
        };
        let rest = &row.notes[start + 6..];
        let Some(end) = rest.find('\'') else { continue };
        let expected = &rest[..end];
        let path = corpus_dir().join(&row.file);
        if let Ok(ccv3::Document::Card(cf)) = ccv3::read_file(&path) {
            assert_eq!(cf.card.data.name, expected, "{}", row.file);
        }
    }
}
