//! Round trips: the model keeps every field and key order; containers keep the data.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// A JSON value for unknown fields: small, nested, any kind.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "\\PC{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("x_[a-z]{1,6}", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Unknown keys (prefixed so they never collide with spec names).
fn extras() -> impl Strategy<Value = Vec<(String, Value)>> {
    prop::collection::vec(("zz_[a-z]{1,8}", any_json()), 0..3)
}

fn entry() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec("\\PC{0,10}", 0..3),
        "\\PC{0,40}",
        any::<bool>(),
        -1000i64..1000,
        prop::option::of(any::<bool>()),
        extras(),
    )
        .prop_map(|(keys, content, enabled, order, sel, extra)| {
            let mut m = Map::new();
            for (k, v) in extra {
                m.insert(k, v);
            }
            m.insert("keys".into(), json!(keys));
            m.insert("content".into(), json!(content));
            m.insert("extensions".into(), json!({}));
            m.insert("enabled".into(), json!(enabled));
            m.insert("insertion_order".into(), json!(order));
            m.insert("use_regex".into(), json!(false));
            if let Some(s) = sel {
                m.insert("selective".into(), json!(s));
                m.insert("secondary_keys".into(), json!(["a"]));
            }
            Value::Object(m)
        })
}

fn card() -> impl Strategy<Value = Value> {
    (
        "\\PC{0,20}",
        "\\PC{0,60}",
        prop::collection::vec("\\PC{0,10}", 0..3),
        prop::option::of(prop::collection::vec(entry(), 0..4)),
        extras(),
        extras(),
        prop::option::of("\\PC{0,10}"),
    )
        .prop_map(
            |(name, desc, greetings, entries, data_extra, top_extra, nick)| {
                let mut data = Map::new();
                for (k, v) in data_extra {
                    data.insert(k, v);
                }
                for k in [
                    "creator",
                    "character_version",
                    "mes_example",
                    "system_prompt",
                    "post_history_instructions",
                    "first_mes",
                    "personality",
                    "scenario",
                    "creator_notes",
                ] {
                    data.insert(k.into(), json!(""));
                }
                data.insert("name".into(), json!(name));
                data.insert("description".into(), json!(desc));
                data.insert("tags".into(), json!([]));
                data.insert("extensions".into(), json!({"depth_prompt": {"depth": 4}}));
                data.insert("alternate_greetings".into(), json!(greetings));
                data.insert("group_only_greetings".into(), json!([]));
                if let Some(n) = nick {
                    data.insert("nickname".into(), json!(n));
                }
                if let Some(e) = entries {
                    data.insert(
                        "character_book".into(),
                        json!({"extensions": {}, "entries": e}),
                    );
                }
                let mut top = Map::new();
                for (k, v) in top_extra {
                    top.insert(k, v);
                }
                top.insert("spec".into(), json!("chara_card_v3"));
                top.insert("spec_version".into(), json!("3.0"));
                top.insert("data".into(), Value::Object(data));
                Value::Object(top)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// A complete V3 card is written back byte for byte (same keys, same order, same values).
    #[test]
    fn prop_v3_json_round_trip_is_exact(input in card()) {
        let mut diags = Vec::new();
        let card = ccv3::Card::from_json(input.clone(), &mut diags).unwrap();
        prop_assert!(diags.is_empty(), "{:?}", diags);
        let out = card.to_v3_json();
        prop_assert_eq!(serde_json::to_string(&out).unwrap(), serde_json::to_string(&input).unwrap());
    }

    /// Writing straight from the model gives the text of the tree, indented and compact.
    #[test]
    fn prop_streamed_v3_text_is_the_tree_text(input in card()) {
        let card = ccv3::Card::from_json(input, &mut Vec::new()).unwrap();
        let tree = card.to_v3_json();
        for pretty in [true, false] {
            let mut text = Vec::new();
            card.write_v3_json(&mut text, pretty).unwrap();
            let want = if pretty {
                serde_json::to_vec_pretty(&tree).unwrap()
            } else {
                serde_json::to_vec(&tree).unwrap()
            };
            prop_assert_eq!(String::from_utf8(text).unwrap(), String::from_utf8(want).unwrap());
        }
    }

    /// Reading what we wrote gives the same model (any input, repaired or not).
    #[test]
    fn prop_write_then_read_is_stable(input in card()) {
        let mut diags = Vec::new();
        let first = ccv3::Card::from_json(input, &mut diags).unwrap();
        let text = first.to_v3_json();
        let second = ccv3::Card::from_json(text.clone(), &mut Vec::new()).unwrap();
        prop_assert_eq!(second.to_v3_json(), text);
    }

    /// The reader never panics on arbitrary JSON.
    #[test]
    fn prop_reader_never_panics(v in any_json()) {
        let _ = ccv3::Card::from_json(v, &mut Vec::new());
    }
}

/// The card without asset URIs (which each container rewrites to its own scheme).
///
/// An absent `assets` is the spec's default list (one `ccdefault:` main icon), which is what a
/// container holding the card's picture writes out.
fn comparable(card: &ccv3::Card) -> Value {
    let mut v = card.to_v3_json();
    if v["data"].get("assets").is_none() {
        let default: Vec<Value> = ccv3::Asset::default_list()
            .iter()
            .map(|a| a.to_json())
            .collect();
        v["data"]["assets"] = Value::Array(default);
    }
    if let Some(assets) = v["data"].get_mut("assets").and_then(Value::as_array_mut) {
        for a in assets.iter_mut() {
            if let Some(o) = a.as_object_mut() {
                o.remove("uri");
                o.remove("ext");
            }
        }
    }
    v
}

/// Every asset's bytes, in asset order (None for remote or default assets).
fn asset_payloads(cf: &ccv3::CardFile) -> Vec<Option<Vec<u8>>> {
    cf.card
        .data
        .assets
        .iter()
        .flatten()
        .map(|a| ccv3::asset_bytes(&a.uri, &cf.files))
        .collect()
}

fn card_of(doc: ccv3::Document) -> ccv3::CardFile {
    match doc {
        ccv3::Document::Card(cf) => cf,
        ccv3::Document::Lorebook(_) => panic!("expected a card"),
    }
}

#[test]
fn roundtrip_corpus_cards_json_png_charx_json_keep_the_data() {
    let dir = crate::util::corpus_dir();
    let mut checked = 0;
    for sub in ["json", "png", "charx", "webp"] {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        let mut paths: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let Ok(ccv3::Document::Card(original)) = ccv3::read_file(&path) else {
                continue;
            };
            let name = path.display().to_string();
            let bytes = std::fs::read(&path).unwrap();
            let start = card_of(ccv3::read_bytes(&bytes).unwrap());
            // JSON -> PNG -> CHARX -> JSON
            let json1 = ccv3::write_json(&start, ccv3::CardVersion::V3);
            let a = card_of(ccv3::read_bytes(&json1).unwrap_or_else(|e| panic!("{name}: {e}")));
            let png = ccv3::write_png(&a, None, ccv3::CardVersion::V3)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let b = card_of(ccv3::read_bytes(&png).unwrap_or_else(|e| panic!("{name}: {e}")));
            let charx = ccv3::write_charx(&b).unwrap_or_else(|e| panic!("{name}: {e}"));
            let c = card_of(ccv3::read_bytes(&charx).unwrap_or_else(|e| panic!("{name}: {e}")));
            let json2 = ccv3::write_json(&c, ccv3::CardVersion::V3);
            let d = card_of(ccv3::read_bytes(&json2).unwrap());
            let want = comparable(&original.card);
            for (step, got) in [("json", &a), ("png", &b), ("charx", &c), ("json again", &d)] {
                if let Some(diff) = first_difference(&want, &comparable(&got.card), "") {
                    panic!("{name}: data changed after {step}: {diff}");
                }
            }
            // Embedded asset bytes survive every container.
            let before: Vec<_> = asset_payloads(&start).into_iter().flatten().collect();
            let after: Vec<_> = asset_payloads(&d).into_iter().flatten().collect();
            assert!(after.len() >= before.len(), "{name}: lost asset bytes");
            for p in &before {
                assert!(after.contains(p), "{name}: an asset's bytes changed");
            }
            checked += 1;
        }
    }
    let least = if crate::util::corpus_is_full() {
        30
    } else {
        10
    };
    assert!(checked >= least, "checked {checked} corpus cards");
}

#[test]
fn roundtrip_png_rewrite_keeps_the_image_bytes() {
    let Some(path) = crate::util::corpus_file("png/st_default_Seraphina.png") else {
        return;
    };
    let bytes = std::fs::read(&path).unwrap();
    let cf = card_of(ccv3::read_bytes(&bytes).unwrap());
    let out = ccv3::write_png(&cf, None, ccv3::CardVersion::V3).unwrap();
    let idat = |b: &[u8]| -> Vec<(String, u32)> {
        ccv3::png::list_chunks(b)
            .unwrap()
            .into_iter()
            .filter(|c| c.kind == "IDAT" || c.kind == "IHDR")
            .map(|c| (c.kind, c.length))
            .collect()
    };
    assert_eq!(idat(&bytes), idat(&out));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// Sniffing and reading arbitrary bytes never panics.
    #[test]
    fn prop_read_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = ccv3::read_bytes(&bytes);
    }
}

/// The first place two JSON values differ, as a path and the two values (shortened).
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                match y.get(k) {
                    None => return Some(format!("{path}.{k} missing")),
                    Some(w) => {
                        if let Some(d) = first_difference(v, w, &format!("{path}.{k}")) {
                            return Some(d);
                        }
                    }
                }
            }
            y.keys()
                .find(|k| !x.contains_key(*k))
                .map(|k| format!("{path}.{k} added"))
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (v, w))| first_difference(v, w, &format!("{path}[{i}]"))),
        _ if a == b => None,
        _ => {
            let short = |v: &Value| v.to_string().chars().take(120).collect::<String>();
            Some(format!("{path}: {} != {}", short(a), short(b)))
        }
    }
}

#[test]
fn world_info_written_from_a_named_described_book_reads_back_as_a_lorebook() {
    // Issue 15 (the web page downloads "the lorebook alone as SillyTavern World Info"): a book
    // with a name and a description, written as World Info, has top-level `name` and
    // `description` beside `entries`; it is a lorebook, not a V1 card.
    let v = json!({"name": "Skerrow", "description": "Places.", "entries": [
        {"keys": ["reef"], "content": "The Teeth.", "extensions": {}, "enabled": true,
         "insertion_order": 1, "use_regex": false}]});
    let mut diags = Vec::new();
    let (book, _) = ccv3::lorebook::read_lorebook_value(v, &mut diags).unwrap();
    let wi = ccv3::json::to_pretty(&ccv3::lorebook::to_worldinfo(&book));
    match ccv3::read_bytes(&wi).unwrap() {
        ccv3::Document::Lorebook(bf) => {
            assert_eq!(bf.book.name.as_deref(), Some("Skerrow"));
            assert_eq!(bf.book.entries.len(), 1);
            assert_eq!(bf.format, ccv3::lorebook::BookFormat::WorldInfo);
        }
        ccv3::Document::Card(_) => panic!("World Info read as a card"),
    }
    // A V1 card with a description and other card fields is still a card, `entries` or not.
    let v1 = br#"{"name": "A", "description": "d", "first_mes": "hi", "entries": {}}"#;
    assert!(matches!(
        ccv3::read_bytes(v1).unwrap(),
        ccv3::Document::Card(_)
    ));
}
