//! The card summary (issue 29, "Library list") agrees with the full read: on every fixture,
//! example and corpus file, from the path and from the bytes, and on hand-made cards that take
//! each of the full reader's repairs (hybrid cards, V2 stashes, wrong types, V1 cards).

use ccv3::{CardSummary, Document, ReadOptions};
use std::path::{Path, PathBuf};

use crate::util;

/// What the full reader makes of `bytes`: the summary of its card, or its error's text.
fn full_of_bytes(bytes: &[u8]) -> Result<CardSummary, String> {
    match ccv3::read_bytes_with(bytes, &ReadOptions::default()) {
        Ok(Document::Card(cf)) => Ok(CardSummary::from_card(&cf.card, cf.container)),
        Ok(Document::Lorebook(_)) => Err("lorebook".into()),
        Err(e) => Err(e.to_string()),
    }
}

fn full_of_file(path: &Path) -> Result<CardSummary, String> {
    match ccv3::read_file_with(path, &ReadOptions::default()) {
        Ok(Document::Card(cf)) => Ok(CardSummary::from_card(&cf.card, cf.container)),
        Ok(Document::Lorebook(_)) => Err("lorebook".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// The summary's answer in the same form: a lorebook's error is "lorebook".
fn summary_of(r: ccv3::Result<CardSummary>) -> Result<CardSummary, String> {
    r.map_err(|e| {
        let text = e.to_string();
        if text.contains("a lorebook, not a character card") {
            "lorebook".into()
        } else {
            text
        }
    })
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(items) = std::fs::read_dir(dir) else {
        return;
    };
    for item in items.flatten() {
        let path = item.path();
        if path.is_dir() {
            files_under(&path, out);
        } else if path.is_file() {
            out.push(path);
        }
    }
}

fn all_files() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        root.join("tests/fixtures"),
        root.join("tests/corpus"),
        root.join("../../examples"),
        util::corpus_dir(),
    ] {
        files_under(&dir, &mut files);
    }
    files.sort();
    files.dedup();
    files
}

/// Issue 29: "a `readCardSummary` ... that returns only what a character list shows": the
/// same values as the full read of every file we have, or the same error.
#[test]
fn summary_agrees_with_the_full_read_on_every_file() {
    let files = all_files();
    assert!(files.len() > 20, "only {} files found", files.len());
    let mut cards = 0;
    for path in &files {
        let full = full_of_file(path);
        let summary = summary_of(ccv3::read_summary_file(path, &ReadOptions::default(), None));
        assert_eq!(summary, full, "{} (from the path)", path.display());
        let bytes = std::fs::read(path).expect("readable");
        let full = full_of_bytes(&bytes);
        let summary = summary_of(ccv3::read_summary_bytes(
            &bytes,
            &ReadOptions::default(),
            None,
        ));
        assert_eq!(summary, full, "{} (from the bytes)", path.display());
        let mut source = std::io::Cursor::new(&bytes);
        let summary = summary_of(ccv3::read_summary_seekable(
            &mut source,
            &ReadOptions::default(),
            None,
        ));
        assert_eq!(summary, full, "{} (from a seekable source)", path.display());
        cards += usize::from(full.is_ok());
    }
    assert!(cards > 10, "only {cards} cards among {} files", files.len());
}

/// Every house input is hostile: cut short anywhere, a card's summary is the full reader's
/// answer (the same values or the same error), with no panic.
#[test]
fn summary_agrees_on_cards_cut_short_and_damaged() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for name in ["ember.json", "ember.png"] {
        let bytes = std::fs::read(root.join(name)).expect("example");
        let step = (bytes.len() / 97).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            let part = &bytes[..cut];
            let summary = summary_of(ccv3::read_summary_bytes(
                part,
                &ReadOptions::default(),
                None,
            ));
            assert_eq!(summary, full_of_bytes(part), "{name} cut at {cut}");
            let mut flipped = bytes.clone();
            flipped[cut] ^= 0x20;
            let summary = summary_of(ccv3::read_summary_bytes(
                &flipped,
                &ReadOptions::default(),
                None,
            ));
            assert_eq!(
                summary,
                full_of_bytes(&flipped),
                "{name} byte {cut} flipped"
            );
        }
    }
}

/// Cards that take each repair of the full reader (SPEC_V3 "CharacterCard Object" types; issue
/// 13 hybrid cards; the V2 backfill stash of `ccv3::backfill`) give its values.
#[test]
fn summary_agrees_on_repaired_cards() {
    let cards = [
        // Plain V3 and V2.
        r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","nickname":"Al","creator":"c","tags":["x","y"],"first_mes":"hi","alternate_greetings":["a","b"],"character_book":{"entries":[{"keys":["k"],"content":"c"},{}]},"assets":[{"type":"icon","uri":"ccdefault:","name":"main","ext":"png"}]}}"#,
        r#"{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"B","first_mes":"","tags":[]}}"#,
        // Escapes in the shown strings; a BOM.
        "\u{feff}{\"spec\":\"chara_card_v3\",\"data\":{\"name\":\"A\\u00e9\\n\",\"tags\":[\"t\\\"\"]}}",
        // spec_version missing, empty, null, a number.
        r#"{"spec":"chara_card_v2","data":{"name":"B"}}"#,
        r#"{"spec":"chara_card_v3","spec_version":"","data":{"name":"B"}}"#,
        r#"{"spec":"chara_card_v3","spec_version":null,"data":{"name":"B"}}"#,
        r#"{"spec":"chara_card_v3","spec_version":3.1,"data":{"name":"B"}}"#,
        // Wrong types: tags as a string, a number as the name, null lists, non-object entries.
        r#"{"spec":"chara_card_v3","data":{"name":"A","tags":"a, b"}}"#,
        r#"{"spec":"chara_card_v3","data":{"name":12,"creator":null,"nickname":5}}"#,
        r#"{"spec":"chara_card_v3","data":{"name":"A","alternate_greetings":null,"assets":null,"character_book":null}}"#,
        r#"{"spec":"chara_card_v3","data":{"name":"A","alternate_greetings":["a",3],"assets":[1,{}],"character_book":{"entries":[1,{},null]}}}"#,
        r#"{"spec":"chara_card_v3","data":{"name":"A","character_book":{"entries":{"1":{},"2":{}}}}}"#,
        r#"{"spec":"chara_card_v3","data":{"name":"A","character_book":{}}}"#,
        // Duplicate keys.
        r#"{"spec":"chara_card_v3","data":{"name":"A","name":"B"}}"#,
        r#"{"spec":"chara_card_v3","data":{"name":"A"},"data":{"name":"B"}}"#,
        // Hybrid: fields at the top level beside a thin `data`.
        r#"{"spec":"chara_card_v2","name":"Top","tags":["t"],"first_mes":"hi","data":{"extensions":{}}}"#,
        r#"{"spec":"chara_card_v2","name":"Top","data":{"name":"Inner"}}"#,
        // A V2 backfill with its V3 stash.
        r#"{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"A","extensions":{"ccv3":{"nickname":"N","assets":[{"type":"icon","uri":"ccdefault:","name":"main","ext":"png"}]}}}}"#,
        // V1, bare data, odd spec, not a card.
        r#"{"name":"V1","description":"d","first_mes":"hi"}"#,
        r#"{"name":"Bare","creator":"c","alternate_greetings":["a"]}"#,
        r#"{"spec":"chara_card_v9","data":{"name":"A"}}"#,
        r#"{"spec":"chara_card_v3","data":[]}"#,
        r#"{"entries":[{"keys":["k"],"content":"c"}]}"#,
        r#"[1,2]"#,
        "",
        r#"{"spec":"chara_card_v3","data":{"name":"A"}} trailing"#,
    ];
    for text in cards {
        let summary = summary_of(ccv3::read_summary_bytes(
            text.as_bytes(),
            &ReadOptions::default(),
            None,
        ));
        assert_eq!(summary, full_of_bytes(text.as_bytes()), "{text}");
    }
}

/// The limits of [`ReadOptions`] hold for the summary as for the full read (issue 12).
#[test]
fn summary_keeps_the_read_limits() {
    let text = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A"}}"#;
    let mut opts = ReadOptions::default();
    opts.max_json_len = 10;
    let err = ccv3::read_summary_bytes(text, &opts, None).expect_err("over the limit");
    assert!(
        err.to_string().contains("ReadOptions::max_json_len"),
        "{err}"
    );
}

/// The summary's JSON field names are the contract of `ccv3 inspect --summary --json` and the
/// bindings (issue 29).
#[test]
fn summary_serializes_with_the_listed_names() {
    let text =
        br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","first_mes":"x"}}"#;
    let s = ccv3::read_summary_bytes(text, &ReadOptions::default(), None).expect("a card");
    let v = serde_json::to_value(&s).expect("serialized");
    let keys: Vec<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "name",
            "nickname",
            "creator",
            "tags",
            "spec",
            "spec_version",
            "container",
            "greetings",
            "entries",
            "assets"
        ]
    );
    assert_eq!(v["greetings"], 1);
    assert_eq!(v["container"], "JSON");
}

/// A token counter for the tests: one token per byte, so that every character of every
/// permanent field shows in the count.
fn bytes_count(text: &str) -> usize {
    text.len()
}

/// What the full reader's card gives with its permanent tokens counted.
fn full_counted_of_bytes(bytes: &[u8]) -> Result<CardSummary, String> {
    match ccv3::read_bytes_with(bytes, &ReadOptions::default()) {
        Ok(Document::Card(cf)) => Ok(CardSummary {
            permanent_tokens: Some(ccv3::permanent_tokens(&cf.card, &bytes_count)),
            ..CardSummary::from_card(&cf.card, cf.container)
        }),
        Ok(Document::Lorebook(_)) => Err("lorebook".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Issue 29: "the token count of the permanent fields if asked": from the path, the bytes and a
/// seekable source, the count the full read's card gives, on every file we have.
#[test]
fn permanent_tokens_agree_with_the_full_read_on_every_file() {
    let opts = ReadOptions::default();
    let mut counted = 0;
    for path in &all_files() {
        let bytes = std::fs::read(path).expect("readable");
        let full = full_counted_of_bytes(&bytes);
        let summary = summary_of(ccv3::read_summary_bytes(&bytes, &opts, Some(&bytes_count)));
        assert_eq!(summary, full, "{} (from the bytes)", path.display());
        let summary = summary_of(ccv3::read_summary_file(path, &opts, Some(&bytes_count)));
        assert_eq!(summary, full, "{} (from the path)", path.display());
        let summary = summary_of(ccv3::read_summary_seekable(
            std::io::Cursor::new(&bytes),
            &opts,
            Some(&bytes_count),
        ));
        assert_eq!(summary, full, "{} (from a seekable source)", path.display());
        counted += usize::from(full.is_ok_and(|s| s.permanent_tokens.unwrap_or(0) > 0));
    }
    assert!(counted > 10, "only {counted} cards with permanent text");
}

/// The permanent fields are SillyTavern's (1.19.0 `public/index.html`: the counters marked
/// `data-token-permanent="true"`): name, description, personality, scenario and the character's
/// note; not the greetings, examples, system prompt or post-history instructions. Each field is
/// counted on its own; wrong types and `null` give the full reader's values.
#[test]
fn permanent_tokens_count_sillytaverns_permanent_fields() {
    let opts = ReadOptions::default();
    let card = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"Ab","description":"ccc","personality":"dddd","scenario":"e\u00e9","first_mes":"xxxxxxxxxx","mes_example":"xxxxxxxxxx","system_prompt":"xxxxxxxxxx","post_history_instructions":"xxxxxxxxxx","creator_notes":"xxxxxxxxxx","alternate_greetings":["xxxxxxxxxx"],"extensions":{"depth_prompt":{"prompt":"ffffff","depth":4}}}}"#;
    let s = ccv3::read_summary_bytes(card.as_bytes(), &opts, Some(&bytes_count)).expect("a card");
    // 2 + 3 + 4 + ("e" + U+00E9 in UTF-8: 3 bytes) + 6.
    assert_eq!(s.permanent_tokens, Some(18));
    // Each field on its own: a counter of calls sees five non-empty texts.
    let calls = std::cell::Cell::new(0);
    let one = |_: &str| {
        calls.set(calls.get() + 1);
        1
    };
    let s = ccv3::read_summary_bytes(card.as_bytes(), &opts, Some(&one)).expect("a card");
    assert_eq!((s.permanent_tokens, calls.get()), (Some(5), 5));
    assert_eq!(
        ccv3::PERMANENT_FIELDS,
        [
            "name",
            "description",
            "personality",
            "scenario",
            "extensions.depth_prompt.prompt"
        ]
    );
    // Fields of other types, null, a depth_prompt without a string prompt, V1, hybrid and
    // stashed cards: the full reader's card decides.
    for text in [
        r#"{"spec":"chara_card_v3","data":{"name":"A","description":null}}"#,
        r#"{"spec":"chara_card_v3","data":{"name":"A","description":5,"scenario":["s"]}}"#,
        r#"{"spec":"chara_card_v3","data":{"name":"A","extensions":{"depth_prompt":{"prompt":7}}}}"#,
        r#"{"spec":"chara_card_v3","data":{"name":"A","extensions":{"depth_prompt":"p"}}}"#,
        r#"{"spec":"chara_card_v3","data":{"name":"A","extensions":null}}"#,
        r#"{"spec":"chara_card_v3","data":{"name":"A\n","description":"d\u00e9","extensions":{"depth_prompt":{"prompt":"p\"q"}}}}"#,
        r#"{"spec":"chara_card_v3","data":{"name":"A","description":"a","description":"b"}}"#,
        r#"{"spec":"chara_card_v3","data":{"name":"A","extensions":{"depth_prompt":{"prompt":"a"},"depth_prompt":{"prompt":"bb"}}}}"#,
        r#"{"spec":"chara_card_v3","data":{"name":"A","extensions":{"depth_prompt":{"prompt":"a"}},"extensions":{}}}"#,
        r#"{"spec":"chara_card_v3","data":{"name":"A","description":"d"}} trailing"#,
        r#"{"name":"V1","description":"desc","personality":"p","scenario":"s","first_mes":"hi"}"#,
        r#"{"spec":"chara_card_v2","name":"Top","description":"top","data":{"extensions":{}}}"#,
        r#"{"spec":"chara_card_v2","spec_version":"2.0","data":{"name":"A","description":"d","extensions":{"ccv3":{"nickname":"N"}}}}"#,
    ] {
        let summary = summary_of(ccv3::read_summary_bytes(
            text.as_bytes(),
            &opts,
            Some(&bytes_count),
        ));
        assert_eq!(summary, full_counted_of_bytes(text.as_bytes()), "{text}");
    }
}

/// Without the count, the summary's JSON stays as it was (no `permanent_tokens` key); with it,
/// the key comes last.
#[test]
fn permanent_tokens_are_serialized_only_when_asked() {
    let text = br#"{"spec":"chara_card_v3","data":{"name":"A","description":"dd"}}"#;
    let opts = ReadOptions::default();
    let plain = ccv3::read_summary_bytes(text, &opts, None).expect("a card");
    let v = serde_json::to_value(&plain).expect("serialized");
    assert!(v.get("permanent_tokens").is_none());
    let counted = ccv3::read_summary_bytes(text, &opts, Some(&bytes_count)).expect("a card");
    let v = serde_json::to_value(&counted).expect("serialized");
    let keys: Vec<&String> = v.as_object().expect("object").keys().collect();
    assert_eq!(keys.last().map(|k| k.as_str()), Some("permanent_tokens"));
    assert_eq!(v["permanent_tokens"], 3);
}
