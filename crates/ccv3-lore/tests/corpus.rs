//! Data-driven tests: the decorator regression corpus and the scan cases in `tests/data/lore`
//! (format in `tests/data/README.md`).

use ccv3::Lorebook;
use ccv3_lore::chat::parse_chat;
use ccv3_lore::{BookInput, BookKind, LorebookCompiler, ScanOptions};
use serde_json::Value;
use std::path::Path;

fn files(dir: &str, ext: &str) -> Vec<std::path::PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir);
    let mut v: Vec<_> = std::fs::read_dir(&d)
        .expect("data dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

#[test]
fn decorator_corpus_parses_without_panic() {
    for path in files("decorators", "txt") {
        let bytes = std::fs::read(&path).expect("read");
        let text = String::from_utf8_lossy(&bytes);
        let p = ccv3::decorator::parse(&text);
        assert_eq!(
            p.body,
            ccv3::decorator::split(&text).body,
            "{}",
            path.display()
        );
        // And as an entry's content, compiled and scanned.
        let mut book = Lorebook::default();
        book.entries.push(ccv3::Entry::new(&["x"], &text));
        let c = LorebookCompiler::new().compile(&[BookInput {
            book: &book,
            kind: BookKind::Global,
            name: "c".into(),
            world_info: false,
        }]);
        let chat = parse_chat(r#"[{"role":"user","content":"x"}]"#).expect("chat");
        let _ = c.scan(
            &chat,
            &Default::default(),
            &ScanOptions::default(),
            &ccv3_tokens::Estimate,
        );
    }
}

#[test]
fn lore_cases_from_data_files() {
    let cases = files("lore", "json");
    assert!(!cases.is_empty());
    for path in cases {
        let case: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        let name = path.display().to_string();
        let book = Lorebook::from_json(case["book"].clone(), "book", false, &mut Vec::new())
            .expect("book");
        let chat = parse_chat(&case["chat"].to_string()).expect("chat");
        let o = &case["options"];
        let mut opts = ScanOptions {
            explain_all: true,
            ..Default::default()
        };
        if let Some(d) = o["scan_depth"].as_u64() {
            opts.scan_depth = d;
        }
        if let Some(r) = o["recursive"].as_bool() {
            opts.recursive = r;
        }
        if let Some(s) = o["seed"].as_u64() {
            opts.seed = s;
        }
        if let Some(g) = o["greeting"].as_u64() {
            opts.greeting = Some(g as usize);
        }
        if let Some(w) = o["match_whole_words"].as_bool() {
            opts.match_whole_words = w;
        }
        let c = LorebookCompiler::new().compile(&[BookInput {
            book: &book,
            kind: BookKind::Global,
            name: "b".into(),
            world_info: false,
        }]);
        let r = c.scan(&chat, &Default::default(), &opts, &ccv3_tokens::Estimate);
        let got: Vec<usize> = r.activated.iter().map(|a| a.entry.index).collect();
        let want: Vec<usize> = case["expect"]["activated"]
            .as_array()
            .expect("activated")
            .iter()
            .filter_map(Value::as_u64)
            .map(|i| i as usize)
            .collect();
        assert_eq!(got, want, "{name}: {}", case["rule"]);
        for (idx, prefix) in case["expect"]["rejected"]
            .as_object()
            .cloned()
            .unwrap_or_default()
        {
            let idx: usize = idx.parse().expect("index");
            let reason = r
                .rejected
                .iter()
                .find(|x| x.entry.index == idx)
                .map(|x| x.reason.to_string())
                .unwrap_or_default();
            let prefix = prefix.as_str().unwrap_or("");
            assert!(
                reason.starts_with(prefix),
                "{name}: entry {idx}: {reason:?} does not start with {prefix:?}"
            );
        }
    }
}
