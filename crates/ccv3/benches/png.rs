//! Measures `ccv3::png::read_card_chunks` on generated PNG files of about 4 MB and 44 MB whose
//! card (a `ccv3` tEXt chunk of ~1.5 MB base64) sits AFTER the image data, to show that the reader
//! seeks past the image data instead of reading it: 44 MB should cost about what 4 MB does.
//! Also: the same 44 MB split into 64 KiB IDAT chunks (many seeks), and a naive baseline that reads
//! the whole 44 MB file into memory first. Files are generated once into a temporary directory.

use std::fs::File;
use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};

use ccv3::png::{encode_text_value, read_card_chunks, read_card_chunks_from_slice, Limits};
use criterion::{criterion_group, criterion_main, Criterion};

fn write_chunk(out: &mut impl Write, kind: &[u8; 4], parts: &[&[u8]]) {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(kind);
    out.write_all(&(len as u32).to_be_bytes()).unwrap();
    out.write_all(kind).unwrap();
    for p in parts {
        hasher.update(p);
        out.write_all(p).unwrap();
    }
    out.write_all(&hasher.finalize().to_be_bytes()).unwrap();
}

/// A PNG with `image_mb` MiB of pseudo-random IDAT data in chunks of `idat_chunk` bytes, then a
/// ~1.5 MB `ccv3` text chunk, then IEND.
fn generate(dir: &Path, name: &str, image_mb: usize, idat_chunk: usize) -> PathBuf {
    let path = dir.join(name);
    let mut out = std::io::BufWriter::new(File::create(&path).unwrap());
    out.write_all(&ccv3::png::SIGNATURE).unwrap();
    let mut ihdr = Vec::new();
    ihdr.extend(4096u32.to_be_bytes());
    ihdr.extend(4096u32.to_be_bytes());
    ihdr.extend([8, 6, 0, 0, 0]);
    write_chunk(&mut out, b"IHDR", &[&ihdr]);
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let block: Vec<u8> = (0..idat_chunk)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    for _ in 0..(image_mb << 20) / idat_chunk {
        write_chunk(&mut out, b"IDAT", &[&block]);
    }
    let description = "A long character description. ".repeat(36_000);
    let card = format!(
        "{{\"spec\":\"chara_card_v3\",\"spec_version\":\"3.0\",\"data\":{{\"name\":\"Bench\",\
         \"description\":\"{description}\"}}}}"
    );
    let value = encode_text_value(&card);
    write_chunk(&mut out, b"tEXt", &[b"ccv3\0", &value]);
    write_chunk(&mut out, b"IEND", &[]);
    out.flush().unwrap();
    path
}

fn read(path: &Path) -> usize {
    let file = File::open(path).unwrap();
    let chunks = read_card_chunks(file, &Limits::default()).unwrap();
    chunks.ccv3.map_or(0, |c| c.len())
}

fn bench_png(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let small = generate(dir.path(), "small.png", 4, 4 << 20);
    let big = generate(dir.path(), "big.png", 44, 44 << 20);
    let split = generate(dir.path(), "split.png", 44, 64 << 10);
    for (name, path) in [
        ("4mb_one_idat", &small),
        ("44mb_one_idat", &big),
        ("44mb_64k_idats", &split),
    ] {
        let size = std::fs::metadata(path).unwrap().len();
        eprintln!("{name}: {size} bytes");
        assert!(read(path) > 1_000_000);
    }
    let mut group = c.benchmark_group("png_read_card_chunks");
    group.sample_size(10);
    group.bench_function("4mb_one_idat", |b| b.iter(|| black_box(read(&small))));
    group.bench_function("44mb_one_idat", |b| b.iter(|| black_box(read(&big))));
    group.bench_function("44mb_64k_idats", |b| b.iter(|| black_box(read(&split))));
    group.bench_function("44mb_naive_read_whole_file", |b| {
        b.iter(|| {
            let bytes = std::fs::read(&big).unwrap();
            black_box(
                read_card_chunks_from_slice(&bytes)
                    .unwrap()
                    .ccv3
                    .map_or(0, |c| c.len()),
            )
        })
    });
    group.finish();
}

criterion_group!(benches, bench_png);
criterion_main!(benches);
