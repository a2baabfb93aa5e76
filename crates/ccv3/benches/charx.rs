//! Measures CHARX reading: `card.json` alone (the inspect/validate fast path) versus the whole
//! archive, on a generated CHARX with about 50 MB of assets (48 stored 1 MiB "images", 16
//! deflated 128 KiB text files, a 200 KB card).

use std::hint::black_box;
use std::io::Cursor;

use ccv3::charx::{
    read_charx_card_json, read_charx_from_slice, write_charx_to_vec, CharxFile, Limits,
};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// Deterministic pseudo-random bytes (xorshift), incompressible like real image data.
fn noise(len: usize, mut state: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.extend_from_slice(&state.to_le_bytes());
    }
    out.truncate(len);
    out
}

fn sample() -> Vec<u8> {
    let mut files = Vec::new();
    for i in 0..48u64 {
        files.push(CharxFile {
            path: format!("assets/other/images/img{i}.png"),
            data: noise(1 << 20, i + 1),
        });
    }
    for i in 0..16 {
        let text = format!("{{\"line\":{i},\"text\":\"the quick brown fox\"}}\n").repeat(3000);
        files.push(CharxFile {
            path: format!("x_meta/meta{i}.json"),
            data: text.into_bytes(),
        });
    }
    let card = format!(
        "{{\"spec\":\"chara_card_v3\",\"spec_version\":\"3.0\",\"data\":{{\"name\":\"Bench\",\"description\":\"{}\"}}}}",
        "lorem ipsum ".repeat(16_000)
    );
    write_charx_to_vec(card.as_bytes(), &files).expect("sample archive")
}

fn bench(c: &mut Criterion) {
    let bytes = sample();
    let limits = Limits::default();
    let mut group = c.benchmark_group("charx_read");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.sample_size(10);
    group.bench_function("card_json_only", |b| {
        b.iter(|| read_charx_card_json(Cursor::new(black_box(&bytes)), &limits).expect("card"))
    });
    group.bench_function("whole_archive", |b| {
        b.iter(|| read_charx_from_slice(black_box(&bytes), &limits).expect("archive"))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
