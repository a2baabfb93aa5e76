//! Measures writing cards as V3 JSON text (`Card::write_v3_json`, compact): what every writer
//! and `ccv3 index`'s card hash cost (issue 16). Two cards: the archive benchmark's small card
//! (`scripts/bench-archive.py`: ~6.8 KB, 6 entries with empty `extensions`) and a 2,000-entry
//! book whose entries carry application `extensions` (kept as text by the reader). Beside them,
//! serde_json writing the same card's `Value` tree, and parsing the text, for scale.
//!
//! ```bash
//! cargo bench -p ccv3 --bench write
//! ```
//!
//! The benchmark uses mimalloc, the allocator the `ccv3` binary uses.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde_json::{json, Value};

/// A deterministic sentence source over a few words.
fn sentences() -> impl FnMut(usize) -> String {
    let words = [
        "the",
        "lighthouse",
        "keeper",
        "storm",
        "reef",
        "tide",
        "lamp",
        "island",
        "harbour",
        "boat",
    ];
    let mut seed = 0x2545F4914F6CDD1Du64;
    move |len: usize| {
        (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                words[(seed % words.len() as u64) as usize]
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A card with `n` entries of `words` words; `ext` gives each entry application extensions.
fn card(n: usize, words: usize, ext: bool) -> Vec<u8> {
    let mut sentence = sentences();
    let entries: Vec<Value> = (0..n)
        .map(|i| {
            let extensions = if ext {
                json!({"position": 0, "depth": 4, "selectiveLogic": 0, "probability": 100,
                    "useProbability": true, "group": "", "scan_depth": null, "match_whole_words": null})
            } else {
                json!({})
            };
            json!({
                "keys": [sentence(1), format!("key0_{i}")],
                "content": sentence(words),
                "extensions": extensions,
                "enabled": true, "insertion_order": i, "use_regex": false, "id": i,
                "comment": format!("entry {i}")
            })
        })
        .collect();
    let card = json!({
        "spec": "chara_card_v3", "spec_version": "3.0",
        "data": {
            "name": "Card 0", "description": sentence(420), "personality": sentence(40),
            "scenario": sentence(60), "first_mes": sentence(120),
            "mes_example": format!("<START>\n{{{{user}}}}: {}\n{{{{char}}}}: {}", sentence(20), sentence(40)),
            "creator_notes": sentence(30), "system_prompt": "", "post_history_instructions": "",
            "alternate_greetings": [sentence(30)], "tags": ["sea", "bench"], "creator": "bench",
            "character_version": "1.0", "extensions": {"talkativeness": "0.5", "fav": false},
            "group_only_greetings": [],
            "character_book": {"name": "book 0", "extensions": {}, "entries": entries}
        }
    });
    serde_json::to_vec(&card).unwrap()
}

fn bench_write(c: &mut Criterion) {
    for (name, text) in [
        ("small-6-entries", card(6, 40, false)),
        ("book-2000-entries-ext", card(2000, 90, true)),
    ] {
        let ccv3::Document::Card(cf) = ccv3::read_bytes(&text).unwrap() else {
            panic!("not a card")
        };
        let tree = cf.card.to_v3_json();
        let mut g = c.benchmark_group(format!("write-v3-json-{name}"));
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(BenchmarkId::new("ccv3", "write_v3_json"), |b| {
            b.iter(|| cf.card.write_v3_json(std::io::sink(), false).unwrap())
        });
        g.bench_function(BenchmarkId::new("serde_json", "to_writer(Value)"), |b| {
            b.iter(|| serde_json::to_writer(std::io::sink(), &tree).unwrap())
        });
        g.bench_function(
            BenchmarkId::new("serde_json", "from_slice(IgnoredAny)"),
            |b| b.iter(|| serde_json::from_slice::<serde::de::IgnoredAny>(&text).unwrap()),
        );
        g.finish();
    }
}

criterion_group!(benches, bench_write);
criterion_main!(benches);
