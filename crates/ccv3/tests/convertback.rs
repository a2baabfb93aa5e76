//! Issue 13 "Writing and converting", "Done when": every card of the corpus and of the
//! repository's fixtures, written to every container (JSON V3, JSON V2, PNG, CHARX) and read
//! back, is the card it was (V2 through the `extensions.ccv3` stash); every lorebook written as
//! `lorebook_v3` and as World Info and read back is the book it was; and every finding about
//! them is a code of `docs/validation.md` with a severity its policy allows.

use crate::util::corpus_dir;
use ccv3::{CardFile, CardVersion, Document};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Every file under `dir`, sorted.
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            files_under(&p, out);
        } else if !matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("tsv" | "md" | "rs")
        ) {
            out.push(p);
        }
    }
}

/// The corpus (the full one beside the repository when it is there) and the repository's
/// fixtures: `examples/`, and every readable file under `crates/ccv3/tests/data` and
/// `crates/ccv3/tests/fixtures` (the regression files that are not cards are skipped).
fn inputs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if !crate::util::corpus_is_full() {
        eprintln!("note: ../shared/corpus is missing; using the in-repository subset");
    }
    files_under(&corpus_dir(), &mut out);
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    files_under(&here.join("tests/data"), &mut out);
    files_under(&here.join("tests/fixtures"), &mut out);
    let root = here.join("../..");
    for f in ["ember.json", "ember.png", "ember.charx", "world.json"] {
        out.push(root.join("examples").join(f));
    }
    out
}

/// A short digest of some bytes (FNV-1a), to compare assets moved between containers.
fn digest(bytes: &[u8]) -> String {
    let h = bytes.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100000001b3)
    });
    format!("bytes:{}:{h:016x}", bytes.len())
}

/// A digest of a picture: for a PNG, of its image chunks only (the text chunks that hold the
/// card change with every write).
fn picture_digest(png: &[u8]) -> String {
    let Ok(chunks) = ccv3::png::list_chunks(png) else {
        return digest(png);
    };
    let mut pixels = Vec::new();
    for c in chunks {
        if matches!(
            c.kind.as_str(),
            "IHDR" | "PLTE" | "IDAT" | "acTL" | "fcTL" | "fdAT"
        ) {
            let start = c.offset as usize + 8;
            pixels.extend_from_slice(&png[start..start + c.length as usize]);
        }
    }
    format!("picture:{}", digest(&pixels))
}

/// The card as V3 JSON with each asset URI replaced by what it stands for (the bytes it
/// carries, whatever container scheme they are reached by), so cards read from different
/// containers compare by content. Absent `assets` stand for the spec's default list; with
/// `picture`, the card's picture stands for the `ccdefault:` icon (SPEC_V3 `assets`): a PNG
/// that can carry a card, or, with `any_picture` (CHARX, whose main icon may be any image), a
/// WebP or JPEG portrait too (issue 13).
fn normalized(cf: &CardFile, picture: bool, any_picture: bool) -> Value {
    let mut v = cf.card.to_v3_json();
    if v["data"].get("assets").is_none() {
        v["data"]["assets"] = Value::Array(
            ccv3::Asset::default_list()
                .iter()
                .map(ccv3::Asset::to_json)
                .collect(),
        );
    }
    let picture = cf
        .image
        .as_deref()
        .filter(|b| picture && (any_picture || ccv3::png::can_carry_card(b)));
    if let Some(Value::Array(assets)) = v["data"].get_mut("assets") {
        for a in assets.iter_mut() {
            let Some(uri) = a.get("uri").and_then(Value::as_str).map(str::to_string) else {
                continue;
            };
            let resolved = match ccv3::asset_bytes(&uri, &cf.files) {
                Some(bytes) if ccv3::png::is_png(&bytes) => picture_digest(&bytes),
                Some(bytes) => digest(&bytes),
                None if uri == "ccdefault:" => match picture {
                    Some(b) if ccv3::png::is_png(b) => picture_digest(b),
                    // A WebP/JPEG portrait goes into a CHARX as it is, named by its type.
                    Some(b) => {
                        let ext = if b.starts_with(b"RIFF") {
                            "webp"
                        } else {
                            "jpeg"
                        };
                        a["ext"] = Value::String(ext.into());
                        digest(b)
                    }
                    None => uri,
                },
                None => uri,
            };
            a["uri"] = Value::String(resolved);
        }
    }
    v
}

fn read_card(bytes: &[u8], what: &str) -> CardFile {
    match ccv3::read_bytes(bytes) {
        Ok(Document::Card(cf)) => cf,
        Ok(Document::Lorebook(_)) => panic!("{what}: read back as a lorebook"),
        Err(e) => panic!("{what}: does not read back: {e}"),
    }
}

/// The first place where two JSON values differ, for a readable failure.
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                let p = format!("{path}.{k}");
                match y.get(k) {
                    None => return Some(format!("{p}: missing after the round trip")),
                    Some(vb) => {
                        if let Some(d) = first_difference(va, vb, &p) {
                            return Some(d);
                        }
                    }
                }
            }
            y.keys()
                .find(|k| !x.contains_key(*k))
                .map(|k| format!("{path}.{k}: added by the round trip"))
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (va, vb))| first_difference(va, vb, &format!("{path}[{i}]"))),
        _ if a == b => None,
        _ => Some(format!(
            "{path}: {} became {}",
            cut(&a.to_string()),
            cut(&b.to_string())
        )),
    }
}

fn cut(s: &str) -> String {
    match s.char_indices().nth(160) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// Writes `cf` to one container and reads it back; `None` when it came back the same.
fn card_trip(cf: &CardFile, name: &str, to: &str) -> Option<String> {
    let bytes = match to {
        "JSON V3" => ccv3::write_json(cf, CardVersion::V3),
        "JSON V2" => ccv3::write_json(cf, CardVersion::V2),
        "PNG" => ccv3::write_png(cf, None, CardVersion::V3).expect("png"),
        "PNG V2" => ccv3::write_png(cf, None, CardVersion::V2).expect("png"),
        _ => ccv3::write_charx(cf).expect("charx"),
    };
    let back = read_card(&bytes, &format!("{name} as {to}"));
    // The plain picture a writer makes for a card that had none stands for no picture.
    // A PNG cut short or damaged cannot carry a card: the writer makes the plain picture.
    let had_picture = cf.image.as_deref().is_some_and(ccv3::png::can_carry_card);
    let plain = back
        .image
        .as_deref()
        .is_some_and(|b| picture_digest(b) == picture_digest(&ccv3::png::plain_image()));
    let (mut want, got) = (
        normalized(cf, true, to == "CHARX"),
        normalized(&back, had_picture || !plain, to == "CHARX"),
    );
    if to.starts_with("JSON") {
        // JSON has no picture: the `ccdefault:` icon is the picture of the container the card
        // is read from next (`ccv3 convert` says so when the picture is dropped).
        let orig = cf
            .card
            .data
            .assets
            .clone()
            .unwrap_or_else(ccv3::Asset::default_list);
        for (i, a) in orig.iter().enumerate() {
            if a.uri == "ccdefault:" {
                want["data"]["assets"][i]["uri"] = Value::String(a.uri.clone());
            }
        }
    }
    first_difference(&want, &got, "").map(|d| format!("{name} as {to}: {d}"))
}

/// Issue 13 "Writing and converting": V3 -> V2 -> V3 gives back the V3 card. The V3 JSON
/// ccv3 writes of `cf`, taken down to V2 and back up, is the same text, byte for byte (key
/// order included); `None` when it is.
fn v3_v2_v3_bytes(cf: &CardFile, name: &str) -> Option<String> {
    let v3 = ccv3::write_json(cf, CardVersion::V3);
    let source = read_card(&v3, &format!("{name} as JSON V3"));
    let v2 = ccv3::write_json(&source, CardVersion::V2);
    let back = ccv3::write_json(
        &read_card(&v2, &format!("{name} as JSON V2")),
        CardVersion::V3,
    );
    (back != v3).then(|| {
        let (a, b) = (String::from_utf8_lossy(&v3), String::from_utf8_lossy(&back));
        let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
        let from = at.saturating_sub(60);
        format!(
            "{name}: V3 -> V2 -> V3 is not the same text at byte {at}: {:?} became {:?}",
            a.get(from..(at + 60).min(a.len())).unwrap_or(""),
            b.get(from..(at + 60).min(b.len())).unwrap_or("")
        )
    })
}

/// A book's JSON without its entries' `position` and `extensions.position`.
fn without_position(mut book: Value) -> Value {
    if let Some(Value::Array(entries)) = book.get_mut("entries") {
        for e in entries.iter_mut().filter_map(Value::as_object_mut) {
            e.shift_remove("position");
            if let Some(Value::Object(x)) = e.get_mut("extensions") {
                x.shift_remove("position");
            }
        }
    }
    book
}

#[test]
fn issue13_every_card_and_book_round_trips_through_every_container() {
    let mut failures = Vec::new();
    let (mut cards, mut books) = (0, 0);
    for path in inputs() {
        let name = path.display().to_string();
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let doc = ccv3::read_bytes(&bytes);
        if let Ok(doc) = &doc {
            // Every finding is a documented code, with a severity the policy allows for it.
            for d in ccv3::check_document(doc) {
                match ccv3::code_info(&d.code) {
                    Some(c) if c.severities.contains(&d.severity) => {}
                    _ => failures.push(format!("{name}: finding outside the policy: {d}")),
                }
            }
        }
        match doc {
            Ok(Document::Card(cf)) => {
                cards += 1;
                for to in ["JSON V3", "JSON V2", "PNG", "PNG V2", "CHARX"] {
                    failures.extend(card_trip(&cf, &name, to));
                }
                failures.extend(v3_v2_v3_bytes(&cf, &name));
            }
            Ok(Document::Lorebook(bf)) => {
                books += 1;
                let want = bf.book.to_json();
                let v3 = serde_json::to_vec(&bf.book.to_lorebook_v3()).unwrap();
                let wi = serde_json::to_vec(&ccv3::lorebook::to_worldinfo(&bf.book)).unwrap();
                for (to, text) in [("lorebook_v3", v3), ("World Info", wi)] {
                    // World Info holds one position, SillyTavern's number: a book comes back
                    // from it with `extensions.position` set (as SillyTavern exports it), and a
                    // `position` the spec does not define as `after_char` (as the World Info
                    // module's own round-trip test, `..._modulo_position`, has it).
                    let cmp = |v: Value| {
                        if to == "World Info" {
                            without_position(v)
                        } else {
                            v
                        }
                    };
                    match ccv3::read_bytes(&text) {
                        Ok(Document::Lorebook(back)) => failures.extend(
                            first_difference(&cmp(want.clone()), &cmp(back.book.to_json()), "")
                                .map(|d| format!("{name} as {to}: {d}")),
                        ),
                        _ => failures.push(format!("{name} as {to}: not read back as a book")),
                    }
                }
            }
            // The corpus's negative files (MANIFEST: MALFORMED/negative) are not cards.
            Err(_) => {}
        }
    }
    eprintln!("{cards} cards and {books} books written to every container and read back");
    assert!(cards >= 5 && books >= 3, "{cards} cards, {books} books");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A card whose one entry has the given `position` and `extensions`.
fn card_with_position(position: Value, extensions: Value) -> (ccv3::Card, Vec<ccv3::Diagnostic>) {
    let v = serde_json::json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {
        "name": "A", "character_book": {"extensions": {}, "entries": [{"keys": ["k"],
        "content": "c", "extensions": extensions, "enabled": true, "insertion_order": 1,
        "use_regex": false, "position": position}]}}});
    crate::util::card(&v.to_string())
}

#[test]
fn issue13_numeric_positions_are_written_as_spec_values_and_kept_in_extensions() {
    for (n, spec) in [(0, "before_char"), (1, "after_char"), (4, "after_char")] {
        let (card, diags) = card_with_position(n.into(), serde_json::json!({"depth": 2}));
        let out = card.to_v3_json();
        let e = &out["data"]["character_book"]["entries"][0];
        assert_eq!(e["position"], spec, "{n}");
        assert_eq!(
            e["extensions"]["position"], n,
            "SillyTavern's place for the number"
        );
        assert_eq!(e["extensions"]["depth"], 2);
        let d = diags
            .iter()
            .find(|d| d.code == "entry-position-number")
            .expect("a finding");
        assert_eq!(d.severity, ccv3::Severity::Warning);
        assert_eq!(d.path, "data.character_book.entries[0].position");
        // Read again, the card is what it was written as, with no finding.
        let (again, diags) = crate::util::card(&out.to_string());
        assert_eq!(again.to_v3_json(), out);
        assert!(diags.iter().all(|d| d.code != "entry-position-number"));
    }
}

#[test]
fn issue13_numeric_position_beside_another_extensions_position_is_kept_in_the_stash() {
    let (card, _) = card_with_position(1.into(), serde_json::json!({"position": 4}));
    let e = &card.data.character_book.as_ref().unwrap().entries[0];
    assert_eq!(e.position.as_deref(), Some("after_char"));
    assert_eq!(e.extensions["position"], 4);
    assert_eq!(e.extensions["ccv3"]["position"], 1);
    // Other types are not guessed at: kept as they were, with the wrong-type finding.
    let (card, diags) = card_with_position(serde_json::json!([0]), serde_json::json!({}));
    let e = &card.to_v3_json()["data"]["character_book"]["entries"][0];
    assert_eq!(e["position"], serde_json::json!([0]));
    assert!(diags.iter().any(|d| d.code == "wrong-type"));
}
