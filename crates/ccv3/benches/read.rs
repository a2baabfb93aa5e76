//! Measures reading card JSON: serde_json's own rates (to `IgnoredAny` and to `Value`) beside
//! `ccv3::read_bytes` on the same text, for a generated card with a 2,000-entry lorebook
//! (~1.4 MB, the shape of the peers harness's benchmark card).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde_json::{json, Value};

/// A deterministic card with `n` lorebook entries of ~600 bytes each.
pub fn synthetic_card(n: usize) -> Vec<u8> {
    let words = [
        "harbor", "lantern", "ember", "sailor", "storm", "granite", "heather", "gull", "tide",
        "reef",
    ];
    let mut seed = 0x2545F4914F6CDD1Du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut sentence = |len: usize| -> String {
        (0..len)
            .map(|_| words[(next() % words.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(" ")
    };
    let entries: Vec<Value> = (0..n)
        .map(|i| {
            json!({
                "keys": [format!("Name{i}"), sentence(2)],
                "content": sentence(90),
                "extensions": {"position": 0, "depth": 4, "selectiveLogic": 0, "probability": 100, "useProbability": true},
                "enabled": true, "insertion_order": 100 + (i % 50), "case_sensitive": false,
                "use_regex": false, "constant": false, "name": format!("Name{i}"), "priority": 10, "id": i,
                "comment": format!("entry {i}"), "selective": false, "secondary_keys": [], "position": "before_char"
            })
        })
        .collect();
    let card = json!({
        "spec": "chara_card_v3", "spec_version": "3.0",
        "data": {
            "name": "Seraphine", "description": sentence(300), "personality": sentence(30), "scenario": sentence(40),
            "first_mes": sentence(120), "mes_example": sentence(40), "creator_notes": "bench",
            "system_prompt": "", "post_history_instructions": "", "alternate_greetings": [sentence(40)],
            "tags": ["bench"], "creator": "ccv3", "character_version": "1", "extensions": {"talkativeness": "0.5"},
            "group_only_greetings": [],
            "character_book": {"name": "Bench", "scan_depth": 2, "token_budget": 2048, "extensions": {}, "entries": entries}
        }
    });
    serde_json::to_vec(&card).unwrap()
}

fn bench_json(c: &mut Criterion) {
    let text = synthetic_card(2000);
    let mut g = c.benchmark_group("card-json-2000-entries");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function(BenchmarkId::new("serde_json", "IgnoredAny"), |b| {
        b.iter(|| serde_json::from_slice::<serde::de::IgnoredAny>(&text).unwrap())
    });
    g.bench_function(BenchmarkId::new("serde_json", "Value"), |b| {
        b.iter(|| serde_json::from_slice::<Value>(&text).unwrap())
    });
    g.bench_function(BenchmarkId::new("ccv3", "read_bytes"), |b| {
        b.iter(|| ccv3::read_bytes(&text).unwrap())
    });
    g.finish();
}

/// Whole-file reads of real files named in `CCV3_BENCH_FILES` (colon-separated), such as the
/// peers harness's `card_5MB_post.png` (8.6 MB) and `card_40MB_post.png` (44 MB).
fn bench_files(c: &mut Criterion) {
    let Some(list) = std::env::var_os("CCV3_BENCH_FILES") else { return };
    let mut g = c.benchmark_group("read-file");
    for path in std::env::split_paths(&list) {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        g.bench_function(BenchmarkId::new("ccv3::read_file", name), |b| {
            b.iter(|| ccv3::read_file(&path).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, bench_json, bench_files);
criterion_main!(benches);
