//! `ccv3 lore graph` agrees with the engine (issue 27, "Done when"): over generated books, for
//! every edge A -> B a scan in which only A is activated (constant) with recursion on activates
//! B in a recursion step, and every entry a recursion step activates has an edge into it from
//! the entry the engine names as its source.

use ccv3::{Entry, Lorebook};
use ccv3_lore::{ActivationReason, BookInput, BookKind, LorebookCompiler, ScanOptions};
use proptest::prelude::*;
use serde_json::json;

/// Keys: plain, multi-word, cased, regex (valid and not); contents are made of the same words,
/// glued to others or not (whole-word rules), with a cleaned-away `{{// ...}}` comment.
const KEYS: &[&str] = &[
    "ash", "Ash", "oak", "oak tree", "elm", "/o+k/i", "/a(/", "fir", "é",
];
const WORDS: &[&str] = &[
    "ash",
    "ASH",
    "oak",
    "oaken",
    "oak tree",
    "elm",
    "elms",
    "ooook",
    "fir",
    "café",
    "é",
    "stone",
    "{{// oak}}",
    "(a",
    "Ash",
    "tree",
];

#[derive(Debug, Clone)]
struct Spec {
    keys: Vec<usize>,
    words: Vec<usize>,
    glue: bool,
    enabled: bool,
    case_sensitive: Option<bool>,
    whole: Option<bool>,
    exclude: bool,
    prevent: bool,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        proptest::collection::vec(0..KEYS.len(), 0..3),
        proptest::collection::vec(0..WORDS.len(), 0..5),
        any::<bool>(),
        prop::bool::weighted(0.9),
        prop::option::of(any::<bool>()),
        prop::option::of(any::<bool>()),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.15),
    )
        .prop_map(
            |(keys, words, glue, enabled, case_sensitive, whole, exclude, prevent)| Spec {
                keys,
                words,
                glue,
                enabled,
                case_sensitive,
                whole,
                exclude,
                prevent,
            },
        )
}

fn build(specs: &[Spec], recursive: Option<bool>) -> Lorebook {
    let entries = specs
        .iter()
        .map(|s| {
            let keys: Vec<&str> = s.keys.iter().map(|&k| KEYS[k]).collect();
            let words: Vec<&str> = s.words.iter().map(|&w| WORDS[w]).collect();
            let content = words.join(if s.glue { "" } else { " " });
            let mut e = Entry::new(&keys, &content);
            e.enabled = s.enabled;
            e.case_sensitive = s.case_sensitive;
            if let Some(w) = s.whole {
                e.extensions.insert("match_whole_words".into(), json!(w));
            }
            if s.exclude {
                e.extensions.insert("exclude_recursion".into(), json!(true));
            }
            if s.prevent {
                e.extensions.insert("prevent_recursion".into(), json!(true));
            }
            e
        })
        .collect();
    Lorebook {
        entries,
        recursive_scanning: recursive,
        ..Default::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn graph_edges_are_the_engines_recursion(
        specs in proptest::collection::vec(spec(), 1..8),
        recursive in prop::option::of(prop::bool::weighted(0.8)),
    ) {
        let book = build(&specs, recursive);
        let graph = ccv3_analyze::lore_graph(&book);
        for a in 0..book.entries.len() {
            // Only A activated: A constant, no other constant, an empty chat, recursion on.
            let mut only_a = book.clone();
            for (i, e) in only_a.entries.iter_mut().enumerate() {
                e.constant = Some(i == a);
            }
            let input = [BookInput { book: &only_a, kind: BookKind::Character, name: String::new(), world_info: false  }];
            let compiled = LorebookCompiler::new().compile(&input);
            let opts = ScanOptions { recursive: true, ..ScanOptions::default() };
            let r = compiled.scan(&Default::default(), &Default::default(), &opts, &ccv3_tokens::Estimate);
            let active: Vec<usize> = r.activated.iter().map(|x| x.entry.index).collect();
            if !active.contains(&a) {
                // A itself did not fire (disabled or blank): it has no edges out.
                prop_assert!(graph.edges.iter().all(|e| e.from != a) || !book.entries[a].enabled || ccv3::decorator::split(&book.entries[a].content).body.trim().is_empty());
                continue;
            }
            for e in graph.edges.iter().filter(|e| e.from == a) {
                prop_assert!(active.contains(&e.to), "edge {} -> {} ({:?}) but the scan activated {:?}", e.from, e.to, e.key, active);
            }
            for x in &r.activated {
                if x.entry.index == a {
                    continue;
                }
                match &x.reason {
                    ActivationReason::Recursion { from, .. } => prop_assert!(
                        graph.edges.iter().any(|e| e.from == from.index && e.to == x.entry.index),
                        "the engine activated #{} from #{} in recursion; no such edge in {:?}",
                        x.entry.index, from.index, graph.edges
                    ),
                    other => prop_assert!(false, "#{} activated by {other}", x.entry.index),
                }
            }
        }
    }
}
