//! The facade's functions on the repository's examples, the shared corpus (skipped when absent)
//! and bad input. Behaviour named in issue 11 sections 2 and 3 (the npm and Python packages).

use ccv3_embed::{
    card_entries_at_json, card_entries_json, count_tokens, expand_macros, parse_decorators,
    read_card, read_card_json, read_card_parts, read_lorebook, read_lorebook_json,
    serialize_decorators, validate_card, validate_lorebook, write_card, write_lorebook,
    PartEntries, ReadOptions, Source,
};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn example(name: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const RAW: ReadOptions = ReadOptions {
    parse_decorators: false,
};

fn entries(card: &Value) -> &Vec<Value> {
    card["data"]["character_book"]["entries"]
        .as_array()
        .expect("entries")
}

#[test]
fn read_card_gives_a_v3_object_for_every_container() {
    let json = read_card(&example("ember.json"), &ReadOptions::default()).unwrap();
    for name in ["ember.png", "ember.charx"] {
        let v = read_card(&example(name), &ReadOptions::default()).unwrap();
        assert_eq!(v["spec"], "chara_card_v3", "{name}");
        assert_eq!(v["data"]["name"], json["data"]["name"], "{name}");
        assert_eq!(entries(&v).len(), entries(&json).len(), "{name}");
    }
}

#[test]
fn read_card_splits_decorators_off_entry_content() {
    // Issue 11 section 2, readCard: `parseDecorators` (default true) gives each lorebook entry
    // `decorators` and its content without the decorator lines; with false, raw content.
    let bytes = example("ember.json");
    let parsed = read_card(&bytes, &ReadOptions::default()).unwrap();
    let raw = read_card(&bytes, &RAW).unwrap();
    let mut with_decorators = 0;
    for (p, r) in entries(&parsed).iter().zip(entries(&raw)) {
        assert!(r.get("decorators").is_none());
        let list = p["decorators"]
            .as_array()
            .expect("decorators on every entry");
        let expected = parse_decorators(r["content"].as_str().unwrap());
        assert_eq!(p["content"], expected["content"]);
        assert_eq!(&Value::Array(list.clone()), &expected["decorators"]);
        with_decorators += usize::from(!list.is_empty());
    }
    assert!(with_decorators > 0, "the example has decorated entries");
}

#[test]
fn read_card_json_is_read_card_as_text() {
    for name in ["ember.json", "ember.png", "ember.charx"] {
        let bytes = example(name);
        for o in [ReadOptions::default(), RAW] {
            let text = read_card_json(&bytes, &o).unwrap();
            let v: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v, read_card(&bytes, &o).unwrap(), "{name}");
        }
    }
    let text = read_lorebook_json(&example("world.json"), &ReadOptions::default()).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v,
        read_lorebook(&example("world.json"), &ReadOptions::default()).unwrap()
    );
}

/// `read_card_parts` put back together as the npm wrapper does (for `PartEntries::AsIs`: the
/// array parsed as plain JSON, `decorators: []` added to each entry, the others read again),
/// as compact JSON text (so that key order counts), or the error's code and message.
fn parts_joined(bytes: &[u8], o: &ReadOptions) -> Result<String, (String, String)> {
    let parts =
        read_card_parts(std::io::Cursor::new(bytes), o).map_err(|e| (e.code.into(), e.message))?;
    let mut card: Value = serde_json::from_str(&parts.card).unwrap();
    let entries: Option<Value> = parts.entries.map(|e| match e {
        PartEntries::Json(text) => serde_json::from_str(&text).unwrap(),
        PartEntries::Later(card_text) => {
            serde_json::from_str(&card_entries_json(&card_text, o).unwrap()).unwrap()
        }
        PartEntries::AsIs {
            text,
            range,
            reread,
            ascii,
        } => {
            // Told ASCII only when it is (the npm wrapper then decodes it as Latin-1).
            assert!(!ascii || text[range.clone()].is_ascii());
            let mut list: Vec<Value> = serde_json::from_slice(&text[range.clone()]).unwrap();
            if o.parse_decorators {
                for e in &mut list {
                    e.as_object_mut()
                        .unwrap()
                        .insert("decorators".into(), json!([]));
                }
            }
            let read = card_entries_at_json(&text, range, &reread, o).unwrap();
            let read: Vec<Value> = serde_json::from_str(&read).unwrap();
            assert_eq!(read.len(), reread.len());
            for (at, e) in reread.iter().zip(read) {
                list[*at] = e;
            }
            Value::Array(list)
        }
    });
    match entries {
        Some(list) => {
            let book = &mut card["data"]["character_book"];
            assert_eq!(book["entries"], json!([]));
            book["entries"] = list;
        }
        None => assert!(card["data"].get("character_book").is_none()),
    }
    Ok(serde_json::to_string(&card).unwrap())
}

fn whole(bytes: &[u8], o: &ReadOptions) -> Result<String, (String, String)> {
    let text = read_card_json(bytes, o).map_err(|e| (e.code.into(), e.message))?;
    let v: Value = serde_json::from_str(&text).unwrap();
    Ok(serde_json::to_string(&v).unwrap())
}

#[test]
fn read_card_parts_join_into_read_card_json() {
    // Issue 11 section 5 (Node readCard): the npm package reads a card in two parts (the card
    // without its entries, and the entries) and must give the same object as read_card_json.
    let mut inputs: Vec<Vec<u8>> = ["ember.json", "ember.png", "ember.charx", "world.json"]
        .iter()
        .map(|n| example(n))
        .collect();
    let no_book = json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "A"}});
    inputs.push(write_card(&no_book, "png", None).unwrap());
    inputs.push(b"not a card".to_vec());
    if let Some(dir) = corpus() {
        let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
        for line in manifest.lines().skip(1) {
            if let Some(file) = line.split('\t').next() {
                inputs.push(std::fs::read(dir.join(file)).unwrap());
            }
        }
    }
    for (i, bytes) in inputs.iter().enumerate() {
        for o in [ReadOptions::default(), RAW] {
            assert_eq!(parts_joined(bytes, &o), whole(bytes, &o), "input {i}");
        }
    }
}

/// A PNG whose `ccv3` chunk holds `text` as it is (base64 of it).
fn png_of_text(text: &str) -> Vec<u8> {
    let value = ccv3::png::encode_text_value(text);
    ccv3::png::write_card_chunks(&ccv3::png::plain_image(), &[("ccv3", &value)]).unwrap()
}

/// A V3 card with a book of `n` entries (over the size from which entries are read later).
fn big_card_text(n: usize) -> String {
    let entries: Vec<Value> = (0..n)
        .map(|i| {
            let content = if i % 3 == 0 {
                format!("@@depth {}\nEntry {i} \u{e9}.", i % 7)
            } else {
                format!("Entry {i} \u{e9}.")
            };
            let mut e = json!({"keys": [format!("k{i}")], "content": content,
                "extensions": {"position": i % 3, "deep": [[{"a": null}]]}, "enabled": i % 2 == 0,
                "insertion_order": i});
            // Half of them with every field the spec requires (read as they stand).
            if i % 2 == 1 {
                e["use_regex"] = json!(false);
            }
            e["zz_extra"] = json!("x".repeat(i % 40));
            e
        })
        .collect();
    serde_json::to_string(&json!({"spec": "chara_card_v3", "spec_version": "3.0",
        "data": {"name": "Big", "description": "d", "character_book": {"name": "B",
            "entries": entries, "after": 1}, "tags": ["t"]}}))
    .unwrap()
}

#[test]
fn read_card_parts_of_big_books_read_entries_later_and_join_into_read_card_json() {
    // Issue 11 section 5 (Node readCard): for a big book the entries are read on first use from
    // the card text; every error must still come from read_card_parts, and odd texts must take
    // the plain path (issue 12: hostile input). Each text's PNG is compared with read_card_json.
    let big = big_card_text(600);
    assert!(big.len() > 64 * 1024);
    let later = |text: &str| {
        let parts = read_card_parts(
            std::io::Cursor::new(png_of_text(text)),
            &ReadOptions::default(),
        );
        matches!(parts, Ok(p) if matches!(p.entries,
            Some(PartEntries::Later(_) | PartEntries::AsIs { .. })))
    };
    assert!(later(&big), "a big book is read later");
    let entries_at = big.find("\"entries\":[").unwrap();
    let tail = format!("\"zz_extra\":\"{}\"}}]", "x".repeat(39));
    assert!(big.contains(&tail));
    let mut texts = vec![
        (big.clone(), true),
        // A key of the path twice, or spelled in another case: the plain path.
        (
            big.replacen(
                "\"data\":{",
                "\"data\":{\"character_book\":{\"entries\":[]},",
                1,
            ),
            false,
        ),
        (
            big.replacen("\"name\":\"B\",", "\"name\":\"B\",\"entries\":[],", 1),
            false,
        ),
        (big.replacen("\"after\":1", "\"Entries\":[]", 1), false),
        (big.replacen("\"spec\":", "\"DATA\":{},\"spec\":", 1), false),
        (
            big.replacen("\"data\":{", "\"data\":{\"name\":\"x\",", 1),
            true,
        ),
        // Escaped keys mean the same key (read at once: where the key ends is not known).
        (
            big.replacen("\"entries\":[", "\"entri\\u0065s\":[", 1),
            false,
        ),
        // The array's last string escaped (read at once), or numbers, literals and nested
        // arrays after its last string.
        (big.replacen(&tail, "\"zz_extra\":\"\\u0078\"}]", 1), false),
        (
            big.replacen(
                &tail,
                "\"zz_extra\":\"x\", \"n\" : [ 1, {\"a\":[[ true ]]}, -2.5e3 ] }\n ]",
                1,
            ),
            true,
        ),
        // Broken texts inside the entries: the same error as read_card_json.
        (big.replacen("Entry 5 ", "Entry \\ud800 ", 1), false),
        (big.replacen("Entry 5 ", "Entry \\x ", 1), false),
        (
            big.replacen("\"insertion_order\":7", "\"insertion_order\":1e999", 1),
            false,
        ),
        (
            big.replacen("\"insertion_order\":7", "\"insertion_order\":\"7\"", 1),
            true,
        ),
        (
            format!(
                "{}{}{},{}",
                &big[..entries_at + 11],
                "[".repeat(200),
                "]".repeat(200),
                &big[entries_at + 11..]
            ),
            false,
        ),
        (
            format!(
                "{}{}{},{}",
                &big[..entries_at + 11],
                "[".repeat(100),
                "]".repeat(100),
                &big[entries_at + 11..]
            ),
            true,
        ),
        (
            big.replacen("{\"keys\":[\"k9\"]", "1,{\"keys\":[\"k9\"]", 1),
            true,
        ),
        (format!("\u{feff}{big}"), false),
        (
            big.replacen("\"entries\":[", "\"entries\":{\"a\":", 1)
                .replacen("],\"after\"", "},\"after\"", 1),
            false,
        ),
        (format!("{big} x"), false),
        (big.replacen("\"spec\":\"chara_card_v3\",", "", 1), true),
    ];
    texts.push((big.replacen("chara_card_v3", "chara_card_v2", 1), true));
    // Around serde_json's nesting limit (128 levels; the array is the 4th).
    for n in 120..128 {
        let nested = format!("{}{}", "[".repeat(n), "]".repeat(n));
        let text = format!(
            "{}{nested},{}",
            &big[..entries_at + 11],
            &big[entries_at + 11..]
        );
        texts.push((text, n <= 123));
    }
    for (i, (text, want_later)) in texts.iter().enumerate() {
        let png = png_of_text(text);
        for o in [ReadOptions::default(), RAW] {
            assert_eq!(parts_joined(&png, &o), whole(&png, &o), "text {i}");
        }
        assert_eq!(later(text), *want_later, "text {i}");
    }
    // A truncated PNG after the card chunk reads the same card.
    let png = png_of_text(&big);
    let cut = &png[..png.len() - 6];
    assert_eq!(parts_joined(cut, &RAW), whole(cut, &RAW));
    // The later entries of a text that is not a card are an error, not a panic.
    assert_eq!(
        card_entries_json(b"{]", &RAW).unwrap_err().code,
        "read-failed"
    );
    assert_eq!(
        card_entries_json(b"{}", &RAW).unwrap_err().code,
        "read-failed"
    );
}

#[test]
fn small_books_read_as_they_stand_only_when_every_entry_is_the_models() {
    // Issue 29 (read + touch everything): a small book goes the later path only when no entry
    // needs the model (nothing to repair, no decorators to split), else the card is read at once;
    // either way the parts join into read_card_json.
    let entries: Vec<Value> = (0..20)
        .map(|i| {
            json!({"keys": [format!("k{i}")], "content": format!("@@depth {i}\nEntry {i} \u{e9}."),
                "extensions": {"position": i % 3}, "enabled": i % 2 == 0, "insertion_order": i,
                "use_regex": false, "zz_extra": i})
        })
        .collect();
    let small = serde_json::to_string(&json!({"spec": "chara_card_v3", "spec_version": "3.0",
        "data": {"name": "Small", "character_book": {"name": "B", "entries": entries}}}))
    .unwrap();
    assert!(small.len() < 64 * 1024);
    let plain = small.replace("@@depth", "depth");
    let path = |text: &str, o: &ReadOptions| {
        let png = png_of_text(text);
        assert_eq!(parts_joined(&png, o), whole(&png, o));
        match read_card_parts(std::io::Cursor::new(&png), o)
            .unwrap()
            .entries
        {
            Some(PartEntries::AsIs { reread, .. }) => {
                assert!(reread.is_empty());
                "as-is"
            }
            Some(PartEntries::Json(_)) => "at once",
            _ => "other",
        }
    };
    assert_eq!(path(&plain, &ReadOptions::default()), "as-is");
    assert_eq!(path(&plain, &RAW), "as-is");
    // Decorator lines: split off (at once), or kept in the content (as they stand).
    assert_eq!(path(&small, &ReadOptions::default()), "at once");
    assert_eq!(path(&small, &RAW), "as-is");
    // A repair (a required field missing), or an item that is not an object: at once.
    let repaired = plain.replacen("\"enabled\":true,", "", 1);
    assert_ne!(repaired, plain);
    assert_eq!(path(&repaired, &RAW), "at once");
    let item = plain.replacen("\"entries\":[", "\"entries\":[1,", 1);
    assert_eq!(path(&item, &RAW), "at once");
}

#[test]
fn big_books_entries_read_as_they_stand_are_the_models_entries() {
    // Issue 29 (npm readCard, every value touched): entries the model keeps as they are are
    // parsed from the card text by the wrapper's JSON parser; each kind of entry the model
    // repairs, converts, drops a field of or reorders must be read through the model instead,
    // so that the joined entries are read_card_json's, key order included.
    let base: Vec<(&str, &str)> = vec![
        ("keys", r#"["a","b"]"#),
        ("content", r#""Text é \u00e9 \ud83d\ude00.""#),
        ("extensions", r#"{"depth":4,"x":{"y":[1,null]}}"#),
        ("enabled", "true"),
        ("insertion_order", "100"),
        ("case_sensitive", "false"),
        ("use_regex", "false"),
        ("constant", "false"),
        ("name", r#""n""#),
        ("priority", "10"),
        ("id", "7"),
        ("comment", r#""c""#),
        ("selective", "true"),
        ("secondary_keys", r#"["s"]"#),
        ("position", r#""before_char""#),
    ];
    let object = |pairs: &[(&str, &str)]| {
        let fields: Vec<String> = pairs.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
        format!("{{{}}}", fields.join(","))
    };
    let values = [
        "null",
        "0",
        "-0",
        "1.5",
        "1e2",
        "12345678901234567890",
        "\"\"",
        "\"7\"",
        "\"a,b\"",
        "true",
        "[]",
        "[\"x\"]",
        "[\"x\",null]",
        "[1]",
        "{}",
        "{\"a\":1,\"a\":2}",
        "\"@@depth 2\\nBody\"",
        "\"a @@ b\"",
        "\"before_char\"",
    ];
    let mut kinds: Vec<String> = vec![object(&base)];
    for (i, (k, _)) in base.iter().enumerate() {
        // The field left out, and the field with each value.
        let mut without = base.clone();
        without.remove(i);
        kinds.push(object(&without));
        for v in values {
            let mut with = base.clone();
            with[i] = (k, v);
            with.push(("zz", "1"));
            kinds.push(object(&with));
        }
    }
    let with_extra = |extra: &[(&str, &str)], first: bool| {
        let mut pairs = base.clone();
        if first {
            pairs.splice(0..0, extra.iter().copied());
        } else {
            pairs.extend(extra.iter().copied());
        }
        object(&pairs)
    };
    let many: Vec<(String, String)> = (0..20).map(|i| (format!("e{i}"), i.to_string())).collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut moved = base.clone();
    moved.rotate_left(5);
    kinds.extend([
        with_extra(&[("zz", "1")], true),
        with_extra(&[("keys", "[\"again\"]")], false),
        with_extra(&[("zz", "1"), ("zz", "2")], false),
        with_extra(&[("decorators", "[]")], false),
        with_extra(&[("decorators", "\"x\"")], false),
        with_extra(&[("k\\u0065ys", "[\"escaped\"]")], false),
        with_extra(&many, false),
        object(&moved),
        "\n {\"content\" : \"spaced\" , \"keys\" : [ ] , \"extensions\" : { } , \"enabled\" : false , \"insertion_order\" : -3.25 , \"use_regex\" : true } ".to_string(),
    ]);
    // Enough of them for the later path (64 KiB), each kind many times over.
    let n = kinds.len();
    let all: Vec<&str> = (0..n * 3).map(|i| kinds[i % n].as_str()).collect();
    let text = format!(
        "{{\"spec\":\"chara_card_v3\",\"spec_version\":\"3.0\",\"data\":{{\"name\":\"V\",\"character_book\":{{\"entries\":[{}]}}}}}}",
        all.join(",")
    );
    assert!(text.len() > 64 * 1024);
    let png = png_of_text(&text);
    for o in [ReadOptions::default(), RAW] {
        let parts = read_card_parts(std::io::Cursor::new(&png), &o).unwrap();
        let Some(PartEntries::AsIs { reread, .. }) = &parts.entries else {
            panic!("entries read as they stand");
        };
        assert!(!reread.is_empty() && reread.len() < all.len());
        let (joined, whole) = (parts_joined(&png, &o).unwrap(), whole(&png, &o).unwrap());
        let entries_of = |text: &str| {
            let card: Value = serde_json::from_str(text).unwrap();
            let list = entries(&card).clone();
            list.iter()
                .map(|e| serde_json::to_string(e).unwrap())
                .collect::<Vec<_>>()
        };
        for (i, (a, b)) in entries_of(&joined)
            .iter()
            .zip(entries_of(&whole))
            .enumerate()
        {
            assert_eq!(*a, b, "entry {i}: {}", all[i]);
        }
        assert_eq!(joined, whole);
    }
    // An item that is not an object: every entry read through the model.
    let png = png_of_text(&text.replacen("\"entries\":[", "\"entries\":[1,", 1));
    let parts = read_card_parts(std::io::Cursor::new(&png), &RAW).unwrap();
    assert!(matches!(parts.entries, Some(PartEntries::Later(_))));
    assert_eq!(parts_joined(&png, &RAW), whole(&png, &RAW));
    // Places that are not the text's: an error, not a panic.
    let t = text.as_bytes();
    let at = text.find("\"entries\":[").unwrap() + 10;
    let end = t.len() - 3;
    assert!(card_entries_at_json(t, at..end, &[0, 2], &RAW).is_ok());
    for (range, places) in [
        (at + 1..end, vec![0]),
        (at..end - 1, vec![0]),
        (at..t.len(), vec![0]),
        (0..5, vec![0]),
        (at..end, vec![1, 0]),
        (at..end, vec![0, 0]),
        (at..end, vec![all.len()]),
        (t.len()..t.len() + 1, vec![0]),
    ] {
        assert!(card_entries_at_json(t, range, &places, &RAW).is_err());
    }
}

#[test]
fn write_then_read_round_trips_in_every_format() {
    // Issue 11 section 2, writeCard: decorators are written back to `@@` lines.
    let card = read_card(&example("ember.json"), &ReadOptions::default()).unwrap();
    for format in ["png", "charx", "json"] {
        let bytes = write_card(&card, format, None).unwrap();
        let back = read_card(&bytes, &ReadOptions::default()).unwrap();
        assert_eq!(
            back["data"]["character_book"], card["data"]["character_book"],
            "{format}"
        );
        assert_eq!(back["data"]["description"], card["data"]["description"]);
    }
}

#[test]
fn written_png_carries_ccv3_and_chara_backfill() {
    let card = read_card(&example("ember.json"), &ReadOptions::default()).unwrap();
    let png = write_card(&card, "png", None).unwrap();
    let find = |key: &[u8]| png.windows(key.len()).any(|w| w == key);
    assert!(find(b"tEXtccv3\0") && find(b"tEXtchara\0"));
    // A given picture is used.
    let picture = ccv3::png::plain_image();
    let with_image = write_card(&card, "png", Some(&picture)).unwrap();
    assert!(with_image.starts_with(b"\x89PNG"));
}

#[test]
fn write_card_accepts_v1_and_v2_json() {
    let v1 = json!({"name": "Aqua", "description": "a goddess", "first_mes": "Hi"});
    let back = read_card(&write_card(&v1, "json", None).unwrap(), &RAW).unwrap();
    assert_eq!(back["spec"], "chara_card_v3");
    assert_eq!(back["data"]["name"], "Aqua");
    let v2 = json!({"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "B",
        "character_book": {"entries": [{"keys": ["k"], "content": "@@depth 1\nX",
        "enabled": true, "insertion_order": 0}]}}});
    let back = read_card(
        &write_card(&v2, "png", None).unwrap(),
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(
        entries(&back)[0]["decorators"],
        json!([{"type": "depth", "value": 1}])
    );
}

#[test]
fn lorebooks_read_from_any_format_and_write_back() {
    let book = read_lorebook(&example("world.json"), &ReadOptions::default()).unwrap();
    let n = book["entries"].as_array().unwrap().len();
    assert!(n > 0);
    let v3 = write_lorebook(&book, None).unwrap();
    let back = read_lorebook(&v3, &ReadOptions::default()).unwrap();
    assert_eq!(back["entries"], book["entries"]);
    let wi = write_lorebook(&book, Some("worldinfo")).unwrap();
    let back = read_lorebook(&wi, &ReadOptions::default()).unwrap();
    assert_eq!(back["entries"].as_array().unwrap().len(), n);
    // The same bytes as the library's writer (what `ccv3 convert` writes).
    let (model, _) =
        ccv3::lorebook::read_lorebook_slice(&example("world.json"), &mut Vec::new()).unwrap();
    assert_eq!(v3, ccv3::write_lorebook_v3(&model));
    // A card's bytes give its character book; a lorebook_v3 wrapper object is accepted too.
    let cb = read_lorebook(&example("ember.png"), &ReadOptions::default()).unwrap();
    assert!(!cb["entries"].as_array().unwrap().is_empty());
    let wrapped = json!({"spec": "lorebook_v3", "data": cb});
    assert_eq!(
        write_lorebook(&wrapped, None).unwrap(),
        write_lorebook(&cb, None).unwrap()
    );
}

#[test]
fn validate_reports_severity_code_path_message() {
    let card = json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": {"name": "A",
        "assets": [{"type": "icon", "uri": "https://example.com/a.png", "name": "main", "ext": ".PNG"}]}});
    let out = validate_card(Source::Json(&card)).unwrap();
    let items = out.as_array().unwrap();
    assert!(items.iter().any(|d| d["path"] == "data.assets[0].ext"));
    for d in items {
        let keys: Vec<&String> = d.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["severity", "code", "path", "message"]);
        assert!(["error", "warning", "info"].contains(&d["severity"].as_str().unwrap()));
    }
    // Bytes: the same findings as ccv3::check_document (what `ccv3 validate --json` prints).
    let bytes = serde_json::to_vec(&card).unwrap();
    let doc = ccv3::read_bytes(&bytes).unwrap();
    assert_eq!(
        validate_card(Source::Bytes(&bytes)).unwrap(),
        serde_json::to_value(ccv3::check_document(&doc)).unwrap()
    );
    let book = read_lorebook(&example("world.json"), &ReadOptions::default()).unwrap();
    assert!(validate_lorebook(Source::Json(&book)).unwrap().is_array());
    assert!(validate_lorebook(Source::Bytes(&example("world.json")))
        .unwrap()
        .is_array());
}

#[test]
fn decorators_round_trip_through_json() {
    // Issue 11 section 2: parseDecorators(serializeDecorators(d, c)) gives back {d, c}.
    let text = "@@depth 4\n@@role system\n@@x_risu 1\n@@@activate\n@@additional_keys a, b\nBody";
    let v = parse_decorators(text);
    let again = serialize_decorators(&v["decorators"], v["content"].as_str().unwrap()).unwrap();
    assert_eq!(parse_decorators(&again), v);
    assert_eq!(
        v["decorators"][2],
        json!({"type": "unknown", "name": "x_risu", "value": "1", "fallbacks": [{"type": "activate"}]})
    );
    assert_eq!(serialize_decorators(&Value::Null, "B").unwrap(), "B");
}

#[test]
fn bad_input_is_an_error_with_a_code_never_a_panic() {
    let card = read_card(&example("ember.json"), &ReadOptions::default()).unwrap();
    let code = |r: Result<Vec<u8>, ccv3_embed::EmbedError>| r.unwrap_err().code;
    assert_eq!(code(write_card(&card, "gif", None)), "bad-input");
    assert_eq!(
        code(write_card(&card, "png", Some(b"not a png"))),
        "bad-input"
    );
    assert_eq!(code(write_card(&json!([1]), "json", None)), "bad-input");
    assert_eq!(
        code(write_card(&json!({"spec": "chara_card_v3"}), "json", None)),
        "bad-input"
    );
    let mut bad = card.clone();
    bad["data"]["character_book"]["entries"][0]["decorators"] = json!([{"type": "depth"}]);
    let e = write_card(&bad, "json", None).unwrap_err();
    assert_eq!(e.code, "bad-input");
    assert!(e.message.contains("entries[0].decorators"), "{}", e.message);
    assert_eq!(
        code(write_lorebook(&json!({"entries": []}), Some("nai"))),
        "bad-input"
    );
    assert_eq!(code(write_lorebook(&json!("x"), None)), "bad-input");
    assert_eq!(read_card(b"garbage", &RAW).unwrap_err().code, "read-failed");
    assert_eq!(read_card(b"", &RAW).unwrap_err().code, "read-failed");
    assert_eq!(
        read_card(&example("world.json"), &RAW).unwrap_err().code,
        "read-failed"
    );
    assert_eq!(read_lorebook(b"{}", &RAW).unwrap_err().code, "read-failed");
    assert_eq!(
        validate_card(Source::Bytes(&example("world.json")))
            .unwrap_err()
            .code,
        "read-failed"
    );
    assert_eq!(
        validate_lorebook(Source::Bytes(&example("ember.json")))
            .unwrap_err()
            .code,
        "read-failed"
    );
    assert_eq!(
        validate_card(Source::Json(&json!(3))).unwrap_err().code,
        "bad-input"
    );
    assert_eq!(
        serialize_decorators(&json!({"type": "depth"}), "")
            .unwrap_err()
            .code,
        "bad-input"
    );
    assert_eq!(
        count_tokens("x", Some("gpt2")).unwrap_err().code,
        "bad-input"
    );
    assert_eq!(
        count_tokens("x", Some("a.json")).unwrap_err().code,
        "bad-input"
    );
    assert_eq!(expand_macros("x", &json!(5)).unwrap_err().code, "bad-input");
    assert_eq!(
        expand_macros("x", &json!({"chat": 5})).unwrap_err().code,
        "chat"
    );
    assert_eq!(
        expand_macros("x", &json!({"chat": [{"role": "wizard", "content": "x"}]}))
            .unwrap_err()
            .code,
        "chat"
    );
    assert_eq!(
        expand_macros("x", &json!({"now": "yesterday"}))
            .unwrap_err()
            .code,
        "bad-input"
    );
}

#[test]
fn expand_macros_reads_card_chat_user_variables_and_now() {
    let card = read_card(&example("ember.json"), &ReadOptions::default()).unwrap();
    let chat: Value = serde_json::from_slice(&example("chat.json")).unwrap();
    let ctx = json!({"card": card, "chat": chat, "user": "Sam",
        "variables": {"mood": "calm"}, "now": 0});
    let out = expand_macros(
        "{{char}}/{{user}}/{{getvar::mood}}/{{lastMessage}}/{{isodate}}",
        &ctx,
    )
    .unwrap();
    assert_eq!(
        out,
        "Ember/Sam/calm/When does the supply boat come? I think a storm is coming./1970-01-01"
    );
    let ctx = json!({"variables": {"local": {"a": 1}, "global": {"b": "2"}}, "char": "Z"});
    assert_eq!(
        expand_macros("{{char}}{{getvar::a}}{{getglobalvar::b}}", &ctx).unwrap(),
        "Z12"
    );
    let ctx = json!({"now": "2026-11-25T13:00:00+02:00"});
    assert_eq!(expand_macros("{{isodate}}", &ctx).unwrap(), "2026-11-25");
    // Without a clock, time macros are empty (the library reads no clock).
    assert_eq!(expand_macros("[{{time}}]", &Value::Null).unwrap(), "[]");
    // The same chat gives the same picks (the seed comes from the chat).
    let ctx = json!({"chat": chat});
    let a = expand_macros("{{pick::a,b,c,d,e,f,g}}", &ctx).unwrap();
    assert_eq!(a, expand_macros("{{pick::a,b,c,d,e,f,g}}", &ctx).unwrap());
}

#[test]
fn count_tokens_knows_o200k_cl100k_and_estimate() {
    assert_eq!(count_tokens("hello world", None).unwrap(), 2);
    assert_eq!(count_tokens("hello world", Some("o200k")).unwrap(), 2);
    assert_eq!(count_tokens("hello world", Some("cl100k")).unwrap(), 2);
    assert_eq!(count_tokens("", Some("estimate")).unwrap(), 0);
    assert!(count_tokens("hello world", Some("estimate")).unwrap() > 0);
}

fn corpus() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    if p.join("MANIFEST.tsv").is_file() {
        Some(p)
    } else {
        eprintln!("skipped: no shared corpus at {}", p.display());
        None
    }
}

#[test]
fn corpus_files_read_and_decorators_survive_a_write() {
    let Some(dir) = corpus() else { return };
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    let mut cards = 0;
    for line in manifest.lines().skip(1) {
        let mut cols = line.split('\t');
        let (Some(file), Some(kind)) = (cols.next(), cols.next()) else {
            continue;
        };
        let bytes = std::fs::read(dir.join(file)).unwrap();
        if kind == "lorebook" {
            let book = read_lorebook(&bytes, &ReadOptions::default());
            let book = book.unwrap_or_else(|e| panic!("{file}: {e}"));
            let back = read_lorebook(
                &write_lorebook(&book, None).unwrap(),
                &ReadOptions::default(),
            )
            .unwrap();
            assert_eq!(back["entries"], book["entries"], "{file}");
            continue;
        }
        let Ok(card) = read_card(&bytes, &ReadOptions::default()) else {
            // Files the manifest marks as broken are read-failed errors, not panics.
            assert!(line.contains("invalid"), "{file}");
            continue;
        };
        cards += 1;
        let raw = read_card(&bytes, &RAW).unwrap();
        let written = write_card(&card, "json", None).unwrap_or_else(|e| panic!("{file}: {e}"));
        let again = read_card(&written, &RAW).unwrap();
        let (Some(a), Some(b)) = (
            raw["data"]["character_book"]["entries"].as_array(),
            again["data"]["character_book"]["entries"].as_array(),
        ) else {
            continue;
        };
        assert_eq!(a.len(), b.len(), "{file}");
        for (x, y) in a.iter().zip(b) {
            let (x, y) = (
                x["content"].as_str().unwrap(),
                y["content"].as_str().unwrap(),
            );
            assert_eq!(parse_decorators(x), parse_decorators(y), "{file}");
        }
        assert!(validate_card(Source::Bytes(&bytes)).is_ok(), "{file}");
    }
    assert!(cards > 10);
}

proptest! {
    #[test]
    fn no_input_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200), text in "[ -~\n]{0,60}") {
        let _ = read_card(&bytes, &ReadOptions::default());
        // Issue 12 (hostile input): the two-part reader fails exactly where the whole one does.
        prop_assert_eq!(
            parts_joined(&bytes, &ReadOptions::default()),
            whole(&bytes, &ReadOptions::default())
        );
        let _ = read_lorebook(&bytes, &ReadOptions::default());
        let _ = validate_card(Source::Bytes(&bytes));
        let _ = parse_decorators(&text);
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            let _ = write_card(&v, "png", None);
            let _ = write_lorebook(&v, None);
            let _ = serialize_decorators(&v, "x");
            let _ = expand_macros(&text, &v);
        }
        let _ = expand_macros(&text, &Value::Null);
    }
}

fn chat() -> Value {
    serde_json::from_slice(&example("chat.json")).unwrap()
}

#[test]
fn scan_lorebook_reports_and_carries_state_across_turns() {
    // Issue 11 section 2, scanLorebook: {activated, rejected, tokens, state}; the state goes
    // back in on the next turn.
    let card = example("ember.png");
    let world = read_lorebook(&example("world.json"), &ReadOptions::default()).unwrap();
    let books = [Source::Bytes(&card), Source::Json(&world)];
    let out = ccv3_embed::scan_lorebook(&books, &json!({"chat": chat(), "user": "Sam"})).unwrap();
    let keys: Vec<&String> = out.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["activated", "rejected", "tokens", "state"]);
    let activated = out["activated"].as_array().unwrap();
    assert!(!activated.is_empty());
    assert!(activated.iter().any(|a| a["book"] == "Skerrow"));
    // Issue 28 (the SillyTavern inspector shows it): each activated item has its scan step,
    // after `reason` (0: the first step), which `ccv3 lore scan --json` leaves out.
    for a in activated {
        let keys: Vec<&String> = a.as_object().unwrap().keys().collect();
        assert_eq!(keys.last().map(|k| k.as_str()), Some("step"));
        assert!(a["step"].as_u64().is_some());
    }
    assert!(activated.iter().any(|a| a["step"] == 0));
    // Decorators are not in the activated content.
    assert!(activated
        .iter()
        .all(|a| !a["content"].as_str().unwrap().starts_with("@@")));
    // Same inputs, same output (the seed comes from the chat); an explicit seed is accepted.
    let again = ccv3_embed::scan_lorebook(&books, &json!({"chat": chat(), "user": "Sam"})).unwrap();
    assert_eq!(again, out);
    assert!(ccv3_embed::scan_lorebook(&books, &json!({"chat": chat(), "seed": 7})).is_ok());
    // Next turn: the chat grows and the state goes back in (camelCase and snake_case keys).
    let mut longer = chat();
    longer
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "assistant", "content": "Soon."}));
    longer
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "user", "content": "And the lamp?"}));
    let next = ccv3_embed::scan_lorebook(
        &books,
        &json!({"chat": longer, "state": out["state"], "scanDepth": 4}),
    )
    .unwrap();
    assert!(next["state"].is_object());
    let _: ccv3_lore::ScanState = serde_json::from_value(next["state"].clone()).unwrap();
    // A book as object read with decorators, and the same book's bytes, scan alike.
    let as_object = read_lorebook(&card, &ReadOptions::default()).unwrap();
    let a =
        ccv3_embed::scan_lorebook(&[Source::Json(&as_object)], &json!({"chat": chat()})).unwrap();
    let b = ccv3_embed::scan_lorebook(
        &[Source::Bytes(&card)],
        &json!({"chat": chat(), "char": "Ember"}),
    )
    .unwrap();
    assert_eq!(
        a["activated"].as_array().unwrap().len(),
        b["activated"].as_array().unwrap().len()
    );
}

#[test]
fn build_prompt_returns_the_prompt_report_and_state() {
    let card_bytes = example("ember.png");
    let card = read_card(&card_bytes, &ReadOptions::default()).unwrap();
    let req = json!({"chat": chat(), "user": "Sam", "maxContext": 4096, "now": 0});
    let from_bytes = ccv3_embed::build_prompt(Source::Bytes(&card_bytes), &[], &req).unwrap();
    let keys: Vec<&String> = from_bytes.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["messages", "tokens", "lore", "cut", "state"]);
    assert!(from_bytes["tokens"].as_u64().unwrap() > 0);
    assert!(!from_bytes["lore"].as_array().unwrap().is_empty());
    // The card as the object readCard returns (decorators as lists) gives the same prompt.
    let from_object = ccv3_embed::build_prompt(Source::Json(&card), &[], &req).unwrap();
    assert_eq!(from_object["messages"], from_bytes["messages"]);
    // Global books and an instruct template.
    let world = example("world.json");
    let req = json!({"chat": chat(), "instruct": "chatml", "user": "Sam"});
    let out =
        ccv3_embed::build_prompt(Source::Json(&card), &[Source::Bytes(&world)], &req).unwrap();
    assert!(out["text"].as_str().unwrap().contains("<|im_start|>"));
    assert!(out["state"].is_object());
}

#[test]
fn scan_and_prompt_refuse_bad_requests() {
    let card = example("ember.png");
    let books = [Source::Bytes(&card)];
    let code = |r: Result<Value, ccv3_embed::EmbedError>| r.unwrap_err().code;
    let scan = |req: Value| ccv3_embed::scan_lorebook(&books, &req);
    assert_eq!(code(scan(json!([]))), "bad-input");
    assert_eq!(code(scan(json!({"chat": 3}))), "chat");
    assert_eq!(code(scan(json!({"chat": {"foo": 1}}))), "chat");
    assert_eq!(code(scan(json!({"state": "x"}))), "bad-input");
    assert_eq!(code(scan(json!({"state": {"sticky": 3}}))), "bad-input");
    assert_eq!(code(scan(json!({"strategy": "random"}))), "bad-input");
    assert_eq!(code(scan(json!({"scanDepth": -1}))), "bad-input");
    assert_eq!(code(scan(json!({"tokenizer": "gpt2"}))), "bad-input");
    assert_eq!(
        code(ccv3_embed::scan_lorebook(
            &[Source::Bytes(b"nope")],
            &Value::Null
        )),
        "read-failed"
    );
    let e = ccv3_embed::scan_lorebook(&[Source::Json(&json!(1))], &Value::Null).unwrap_err();
    assert!(e.message.starts_with("books[0]"), "{}", e.message);
    let prompt = |req: Value| ccv3_embed::build_prompt(Source::Bytes(&card), &[], &req);
    assert_eq!(code(prompt(json!({"greeting": 99}))), "bad-input");
    assert_eq!(code(prompt(json!({"instruct": "nope"}))), "bad-input");
    assert_eq!(code(prompt(json!({"template": ["nope"]}))), "bad-input");
    assert_eq!(
        code(ccv3_embed::build_prompt(
            Source::Bytes(&example("world.json")),
            &[],
            &Value::Null
        )),
        "read-failed"
    );
}

#[test]
fn compiled_books_scan_like_scan_lorebook_turn_after_turn() {
    // The handle behind scanLorebook on big books: compiled once, the same results.
    let card = example("ember.png");
    let world = example("world.json");
    let books = [Source::Bytes(&card), Source::Bytes(&world)];
    let options = json!({"user": "Sam", "scan_depth": 3});
    let mut compiled = ccv3_embed::CompiledBooks::new(&books, &options).unwrap();
    assert_eq!(compiled.book_names().len(), 2);
    let mut state = Value::Null;
    let mut messages: Vec<Value> = Vec::new();
    for (i, m) in chat().as_array().unwrap().iter().enumerate() {
        messages.push(m.clone());
        let mut req = options.clone();
        req["chat"] = Value::Array(messages.clone());
        req["state"] = state.clone();
        req["seed"] = json!(i);
        let one = ccv3_embed::scan_lorebook(&books, &req).unwrap();
        let many = compiled.scan(&req).unwrap();
        assert_eq!(one, many, "turn {i}");
        let text = compiled.scan_json(&req).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), many);
        let text = ccv3_embed::scan_lorebook_json(&books, &req).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), one);
        state = one["state"].clone();
    }
    assert_eq!(compiled.scan(&json!({"chat": 1})).unwrap_err().code, "chat");
    let card_v = read_card(&card, &ReadOptions::default()).unwrap();
    let req = json!({"chat": chat(), "instruct": "alpaca"});
    let v = ccv3_embed::build_prompt(Source::Json(&card_v), &[], &req).unwrap();
    let t = ccv3_embed::build_prompt_json(Source::Json(&card_v), &[], &req).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&t).unwrap(), v);
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["messages", "tokens", "lore", "cut", "text", "state"]);
}

/// Issue 17: the `dialect` option of expandMacros and buildPrompt (npm and Python).
#[test]
fn issue17_dialect_option_picks_the_macros() {
    let text = "{{upper::a}}[{{getvar::x}}]";
    let with = |d: &str| expand_macros(text, &json!({ "dialect": d })).unwrap();
    assert_eq!(with("risu"), "A[null]");
    assert_eq!(with("sillytavern"), "{{upper::a}}[]");
    assert_eq!(with("spec"), "{{upper::a}}[{{getvar::x}}]");
    // Without a card `auto` is every built-in macro.
    assert_eq!(expand_macros(text, &Value::Null).unwrap(), "A[]");
    let err = expand_macros(text, &json!({"dialect": "klingon"})).unwrap_err();
    assert_eq!(err.code, "bad-input");
    assert!(err
        .message
        .contains("expected auto, risu, sillytavern or spec"));
    // A card: `auto` is its application's dialect.
    let mut card = read_card(&example("ember.json"), &ReadOptions::default()).unwrap();
    card["data"]["description"] = json!("D={{upper::quiet}}");
    let prompt = |card: &Value, req: Value| {
        ccv3_embed::build_prompt(Source::Json(card), &[], &req).unwrap()["messages"].to_string()
    };
    assert!(prompt(&card, json!({"chat": chat()})).contains("D={{upper::quiet}}"));
    assert!(prompt(&card, json!({"chat": chat(), "dialect": "risu"})).contains("D=QUIET"));
    card["data"]["extensions"]["risuai"] = json!({});
    assert!(prompt(&card, json!({"chat": chat()})).contains("D=QUIET"));
}

#[test]
fn issue13_read_card_of_a_v2_backfill_gives_back_the_v3_card() {
    // V3 -> V2 (a V2 JSON file, or the `chara` chunk of a V2 PNG) -> read_card gives the V3
    // card: the bindings read V2 cards as the library does.
    let v3 = example("ember.json");
    let want = read_card(&v3, &RAW).unwrap();
    let ccv3::Document::Card(cf) = ccv3::read_bytes(&v3).unwrap() else {
        panic!("a card")
    };
    for v2 in [
        ccv3::write_json(&cf, ccv3::CardVersion::V2),
        ccv3::write_png(&cf, None, ccv3::CardVersion::V2).unwrap(),
    ] {
        let got = read_card(&v2, &RAW).unwrap();
        assert_eq!(got["data"], want["data"]);
        let found = validate_card(Source::Bytes(&v2)).unwrap();
        let codes: Vec<&str> = found
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|d| d["code"].as_str())
            .collect();
        assert_eq!(codes, ["v2-stash-restored"], "{found}");
    }
}

/// Issue 14: `compat: "sillytavern"` reaches the engine (equal orders come out in SillyTavern's
/// reversed activation order); an unknown mode is a bad-input error.
#[test]
fn scan_lorebook_takes_compat_sillytavern() {
    let book = json!({"entries": {
        "0": {"uid": 0, "key": ["apple"], "content": "A", "order": 100, "position": 0},
        "1": {"uid": 1, "key": ["pear"], "content": "B", "order": 100, "position": 0}}});
    let books = [ccv3_embed::Source::Json(&book)];
    let chat = json!([{"role": "user", "name": "User", "content": "apple pear"}]);
    let names = |v: &Value| -> Vec<String> {
        v["activated"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["content"].as_str().unwrap().to_string())
            .collect()
    };
    let spec = ccv3_embed::scan_lorebook(&books, &json!({"chat": chat})).unwrap();
    let st =
        ccv3_embed::scan_lorebook(&books, &json!({"chat": chat, "compat": "sillytavern"})).unwrap();
    assert_eq!(names(&spec), ["A", "B"]);
    assert_eq!(names(&st), ["B", "A"]);
    assert!(ccv3_embed::scan_lorebook(&books, &json!({"chat": chat, "compat": "nope"})).is_err());
}

/// A V3 card that stands as the model keeps it (issue 29): SillyTavern's top-level copies of
/// the fields, every `data` field the spec names of its type, a book with extensions, assets,
/// unknown fields at each level, a key twice inside `extensions`, escapes and odd numbers.
fn card_as_it_stands() -> String {
    r#"{"name":"Top","description":"top desc","creatorcomment":"c","avatar":"none","tags":["t"],
 "spec":"chara_card_v3","spec_version":"3.0","zz_top":{"a":[1,2.5e3,-0.0]},
 "data":{"name":"Ex\u00e9 \"q\"","description":"d","personality":"p","scenario":"s",
  "first_mes":"hi","mes_example":"ex","creator_notes":"cn","system_prompt":"","post_history_instructions":"",
  "alternate_greetings":["a","b"],"tags":[],"creator":"me","character_version":"1",
  "extensions":{"talkativeness":"0.5","fav":false,"depth_prompt":{"depth":4,"prompt":"x"},"dup":1,"dup":2,
   "big":123456789012345678901234567890,"f":1.0},
  "group_only_greetings":[],"nickname":"","creator_notes_multilingual":{"fr":"bonjour"},
  "source":["https://example.invalid"],"creation_date":1700000000,"modification_date":1.5,
  "assets":[{"type":"icon","uri":"ccdefault:","name":"main","ext":"png","x":1}],
  "zz_data":null,
  "character_book":{"name":"B","description":"","scan_depth":3,"token_budget":512,
   "recursive_scanning":false,"extensions":{},"zz_book":[null],
   "entries":[{"keys":["k"],"content":"c","extensions":{},"enabled":true,"insertion_order":0,
    "use_regex":false}]}}}"#
        .to_string()
}

#[test]
fn cards_that_stand_as_the_model_keeps_them_are_not_read_through_it() {
    // Issue 29 (read + touch everything on small cards): a V3 card whose every field the model
    // would keep as it is (SPEC_V3 "CharacterCard Object" types, required fields present, each
    // key once) is handed out as its own text; any change the reader makes (a V2 card is
    // upgraded, a missing field added, a wrong type converted, a key twice, a hybrid card's
    // field taken from the top level) sends it through the model. Either way the parts join
    // into read_card_json.
    let base = card_as_it_stands();
    let pretty =
        serde_json::to_string_pretty(&serde_json::from_str::<Value>(&base).unwrap()).unwrap();
    let edit = |from: &str, to: &str| {
        assert!(base.contains(from), "{from}");
        base.replacen(from, to, 1)
    };
    let cases: Vec<(&str, String, bool)> = vec![
        ("as it stands", base.clone(), true),
        ("pretty-printed", pretty, true),
        ("V2", edit("chara_card_v3", "chara_card_v2"), false),
        (
            "required field missing",
            edit(r#""creator":"me","#, ""),
            false,
        ),
        (
            "wrong type",
            edit(r#""tags":[],"#, r#""tags":"a, b","#),
            false,
        ),
        (
            "number as a string",
            edit("1700000000", r#""1700000000""#),
            false,
        ),
        (
            "null field",
            edit(r#""nickname":"","#, r#""nickname":null,"#),
            false,
        ),
        (
            "key twice in data",
            edit(r#""scenario":"s","#, r#""scenario":"s","scenario":"t","#),
            false,
        ),
        (
            "key twice at the top",
            edit(r#""avatar":"none","#, r#""avatar":"none","avatar":"x","#),
            false,
        ),
        (
            "unknown key twice",
            edit(r#""zz_data":null,"#, r#""zz_data":null,"zz_data":1,"#),
            false,
        ),
        (
            "empty spec_version",
            edit(r#""spec_version":"3.0""#, r#""spec_version":"""#),
            false,
        ),
        (
            "numeric spec_version",
            edit(r#""spec_version":"3.0""#, r#""spec_version":3.0"#),
            false,
        ),
        (
            "extensions not an object",
            edit(
                r#""extensions":{"talkativeness""#,
                r#""extensions":"{}","x":{"talkativeness""#,
            ),
            false,
        ),
        (
            "hybrid field",
            edit(r#""nickname":"","#, "").replacen(r#""avatar""#, r#""nickname":"N","avatar""#, 1),
            false,
        ),
        (
            "book without extensions",
            edit(r#""extensions":{},"zz_book""#, r#""zz_book""#),
            false,
        ),
        (
            "book number as a string",
            edit(r#""scan_depth":3"#, r#""scan_depth":"3""#),
            false,
        ),
        ("asset without ext", edit(r#","ext":"png""#, ""), false),
        (
            "asset uri a number",
            edit(r#""uri":"ccdefault:""#, r#""uri":7"#),
            false,
        ),
        (
            "asset not an object",
            edit(r#""assets":[{"#, r#""assets":[1,{"#),
            false,
        ),
        (
            "assets not an array",
            edit(
                r#""assets":[{"type":"icon","uri":"ccdefault:","name":"main","ext":"png","x":1}]"#,
                r#""assets":{}"#,
            ),
            false,
        ),
        (
            "spec twice",
            edit(
                r#""spec":"chara_card_v3","#,
                r#""spec":"chara_card_v3","spec":"chara_card_v3","#,
            ),
            false,
        ),
    ];
    for (name, text, as_is_card) in cases {
        let span = ccv3::entries_span::character_book_entries(&text).expect(name);
        assert_eq!(span.card_as_is, as_is_card, "{name}");
        let png = png_of_text(&text);
        for o in [ReadOptions::default(), RAW] {
            assert_eq!(parts_joined(&png, &o), whole(&png, &o), "{name}");
            // The whole card read as its text (the Python package builds it from that).
            let as_is = ccv3_embed::read_card_as_is(std::io::Cursor::new(&png), &o);
            assert_eq!(as_is.is_some(), as_is_card, "{name}");
            if let Some(card) = as_is {
                let joined = serde_json::to_string(&as_is_joined(&card)).unwrap();
                assert_eq!(Ok(joined), whole(&png, &o), "{name}");
            }
        }
    }
}

/// The value of a card read as its text ([`ccv3_embed::read_card_as_is`]): each entry given
/// `"decorators": []` when they are split off, as the Python package builds it.
fn as_is_joined(card: &ccv3_embed::AsIsCard) -> Value {
    let mut v: Value = serde_json::from_str(&card.text).unwrap();
    if card.decorators {
        let entries = &mut v["data"]["character_book"]["entries"];
        for e in entries.as_array_mut().unwrap() {
            e.as_object_mut()
                .unwrap()
                .insert("decorators".into(), json!([]));
        }
    }
    v
}

/// The value at `path` (object keys, or array places as numbers) in `v`.
fn field_at<'v>(v: &'v mut Value, path: &[&str]) -> &'v mut Value {
    let mut cur = v;
    for p in path {
        cur = match p.parse::<usize>() {
            Ok(i) => &mut cur[i],
            Err(_) => &mut cur[*p],
        };
    }
    cur
}

#[test]
fn every_field_of_any_type_or_missing_joins_into_read_card_json() {
    // Issue 29: whichever way a card is read (as it stands or through the model), the parts
    // must join into read_card_json. Each field of the card as it stands, at the top level, in
    // `data`, in the book and in an asset, is given every JSON type in turn, or removed.
    let base: Value = serde_json::from_str(&card_as_it_stands()).unwrap();
    let values = [
        json!(null),
        json!(1),
        json!(2.5),
        json!("1"),
        json!(""),
        json!("chara_card_v3"),
        json!(true),
        json!([]),
        json!(["a"]),
        json!([1]),
        json!({}),
        json!({"a": 1}),
    ];
    let at: [&[&str]; 4] = [
        &[],
        &["data"],
        &["data", "character_book"],
        &["data", "assets", "0"],
    ];
    let mut cards = Vec::new();
    for path in at {
        let keys: Vec<String> = field_at(&mut base.clone(), path)
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| !matches!(k.as_str(), "data" | "character_book" | "entries"))
            .cloned()
            .collect();
        for key in keys {
            let mut gone = base.clone();
            field_at(&mut gone, path)
                .as_object_mut()
                .unwrap()
                .shift_remove(&key);
            cards.push(gone);
            for v in &values {
                let mut card = base.clone();
                field_at(&mut card, path)[key.as_str()] = v.clone();
                cards.push(card);
            }
        }
    }
    assert!(cards.len() > 400);
    let mut as_is = 0;
    for card in cards {
        let text = serde_json::to_string(&card).unwrap();
        as_is += usize::from(
            ccv3::entries_span::character_book_entries(&text).is_some_and(|s| s.card_as_is),
        );
        let png = png_of_text(&text);
        for o in [ReadOptions::default(), RAW] {
            assert_eq!(parts_joined(&png, &o), whole(&png, &o), "{text}");
        }
    }
    // Some stand as they are (an unknown field of any type, a string for a string), most not.
    assert!(as_is > 20, "{as_is}");
}
