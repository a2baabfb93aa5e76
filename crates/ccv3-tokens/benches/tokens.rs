//! Measures token counting throughput (bytes of text per second) on a ~1 MB mix of English prose
//! and CJK text with the bundled o200k_base and cl100k_base encodings (and with `tiktoken-rs`'s
//! `encode_ordinary` for comparison), the cost of a cached
//! re-count of the same text (hash lookup only), and the one-time cost of building each encoding
//! (ours, and `tiktoken-rs`'s for comparison). `count_card` counts the fields and lorebook
//! entries of a card one text at a time, as `ccv3 index` and `ccv3 tokens` do (issue 16).
//!
//! Run: `cargo bench -p ccv3-tokens -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use ccv3_tokens::{CachedTokenizer, Encoding, PieceCache, Tiktoken, Tokenizer};
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};

const ENGLISH: &str = "The innkeeper wiped the counter and glanced at the door. \"Another storm \
tonight,\" she said, pouring a mug of cider for the traveller. {{char}} nodded, shaking rain \
from a cloak that had seen better days, and asked whether the northern road was still open.\n";
const CJK: &str = "夜の酒場は静かだった。旅人は窓辺に座り、雨の音を聞きながら古い地図を広げた。\
北の道はまだ通れるのだろうか。店主は首を振り、温かいスープを差し出した。\n";

/// About 1 MiB: English and Japanese paragraphs, alternating, cut at a char boundary.
fn corpus() -> String {
    let mut text = String::with_capacity(1 << 20);
    while text.len() < (1 << 20) {
        text.push_str(ENGLISH);
        text.push_str(CJK);
    }
    text
}

fn counting(c: &mut Criterion) {
    let text = corpus();
    let mut group = c.benchmark_group("count_1mb");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(10);
    for encoding in [Encoding::O200k, Encoding::Cl100k] {
        let t = Tiktoken::new(encoding).expect("bundled encoding builds");
        group.bench_function(encoding.name(), |b| b.iter(|| t.count(black_box(&text))));
    }
    // The reference implementation on the same text, for comparison.
    let reference = tiktoken_rs::o200k_base().expect("tiktoken-rs builds o200k_base");
    group.bench_function("tiktoken_rs_o200k_base", |b| {
        b.iter(|| reference.encode_ordinary(black_box(&text)).len())
    });
    let reference = tiktoken_rs::cl100k_base().expect("tiktoken-rs builds cl100k_base");
    group.bench_function("tiktoken_rs_cl100k_base", |b| {
        b.iter(|| reference.encode_ordinary(black_box(&text)).len())
    });
    let cached = CachedTokenizer::new(Tiktoken::new(Encoding::O200k).expect("o200k builds"));
    cached.count(&text);
    group.bench_function("o200k_base_cached_recount", |b| {
        b.iter(|| cached.count(black_box(&text)))
    });
    group.finish();
}

/// The texts of a card as `ccv3 index` counts them: a description, a greeting, an example
/// dialogue and 200 lorebook entries of a few sentences (English, some Japanese and names).
fn card_texts() -> Vec<String> {
    let mut texts = vec![
        ENGLISH.repeat(12),
        format!("*{{{{char}}}} looks up.* {}", ENGLISH.repeat(3)),
        format!("<START>\n{{{{user}}}}: Hi!\n{{{{char}}}}: {}", ENGLISH),
        CJK.repeat(2),
    ];
    for i in 0..200 {
        texts.push(format!(
            "[Entry {i}: Captain O'Neil's ship, the \"Storm-{i:03}\"] {}{}",
            ENGLISH,
            if i % 10 == 0 { CJK } else { "" }
        ));
    }
    texts
}

fn counting_a_card(c: &mut Criterion) {
    let texts = card_texts();
    let (mut group, t) = texts_group(c, "count_card", &texts);
    group.bench_function("o200k_base", |b| {
        b.iter(|| texts.iter().map(|x| t.count(black_box(x))).sum::<usize>())
    });
    bench_piece_cache(&mut group, &t, &texts);
    let reference = tiktoken_rs::o200k_base().expect("tiktoken-rs builds o200k_base");
    group.bench_function("tiktoken_rs_o200k_base", |b| {
        b.iter(|| {
            texts
                .iter()
                .map(|x| reference.encode_ordinary(black_box(x)).len())
                .sum::<usize>()
        })
    });
    group.finish();
}

/// The archive benchmark's card texts (`scripts/bench-archive.py`): words drawn from the same
/// 29 English words, a description of 420 words, the other fields and 6 lorebook entries of 30
/// words; 100 such cards, counted one text at a time through one piece cache, as a `ccv3 index`
/// worker counts them (issue 16). A fixed sequence stands in for Python's random draws.
fn archive_texts() -> Vec<String> {
    const WORDS: [&str; 29] = [
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
        "rope",
        "salt",
        "wind",
        "night",
        "silver",
        "old",
        "young",
        "quiet",
        "brave",
        "sea",
        "gull",
        "stone",
        "path",
        "garden",
        "tea",
        "letter",
        "map",
        "song",
        "fire",
    ];
    let mut state = 16u64;
    let mut text = |n: usize| {
        let mut words = Vec::with_capacity(n);
        for _ in 0..n {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            words.push(WORDS[(state >> 33) as usize % WORDS.len()]);
        }
        words.join(" ")
    };
    let mut texts = Vec::new();
    for _ in 0..100 {
        for n in [420, 40, 60, 120] {
            texts.push(text(n));
        }
        texts.push(format!(
            "<START>\n{{{{user}}}}: {}\n{{{{char}}}}: {}",
            text(20),
            text(40)
        ));
        texts.push(text(30));
        for _ in 0..6 {
            texts.push(text(30));
        }
    }
    texts
}

fn counting_archive_cards(c: &mut Criterion) {
    let texts = archive_texts();
    let (mut group, t) = texts_group(c, "count_archive_cards", &texts);
    bench_piece_cache(&mut group, &t, &texts);
    group.finish();
}

/// A group measuring `texts` in bytes per second (20 samples), and the o200k tokenizer.
fn texts_group<'a>(
    c: &'a mut Criterion,
    name: &str,
    texts: &[String],
) -> (BenchmarkGroup<'a, WallTime>, Tiktoken) {
    let bytes: usize = texts.iter().map(String::len).sum();
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(20);
    let t = Tiktoken::new(Encoding::O200k).expect("bundled encoding builds");
    (group, t)
}

/// Counts `texts` as `ccv3 index` does: one piece cache per thread, kept from card to card.
fn bench_piece_cache(group: &mut BenchmarkGroup<'_, WallTime>, t: &Tiktoken, texts: &[String]) {
    let mut cache = PieceCache::new();
    group.bench_function("o200k_base_piece_cache", |b| {
        b.iter(|| {
            texts
                .iter()
                .map(|x| t.count_cached(black_box(x), &mut cache))
                .sum::<usize>()
        })
    });
}

fn loading(c: &mut Criterion) {
    let mut group = c.benchmark_group("build_encoding_once");
    group.sample_size(10);
    for encoding in [Encoding::O200k, Encoding::Cl100k] {
        group.bench_function(encoding.name(), |b| {
            b.iter(|| ccv3_tokens::build_uncached(black_box(encoding)))
        });
    }
    // The reference implementation, for comparison.
    group.bench_function("tiktoken_rs_o200k_base", |b| {
        b.iter(|| tiktoken_rs::o200k_base().is_ok())
    });
    group.bench_function("tiktoken_rs_cl100k_base", |b| {
        b.iter(|| tiktoken_rs::cl100k_base().is_ok())
    });
    group.finish();
}

criterion_group!(
    benches,
    counting,
    counting_a_card,
    counting_archive_cards,
    loading
);
criterion_main!(benches);
