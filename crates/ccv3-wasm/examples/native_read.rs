//! The native side of the readCard benchmark, timed in-process on a file's bytes:
//! `ccv3_embed::read_card_json` (the whole card as one JSON text) and
//! `ccv3_embed::read_card_parts` (what the npm package's readCard calls: the card without its
//! entries, and the entries).
//! `cargo run --release -p ccv3-wasm --example native_read -- FILE ITERS`
use std::time::Instant;

fn median_min(mut times: Vec<f64>) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], times[0])
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, iters] = args.as_slice() else {
        return Err("usage: native_read FILE ITERS".into());
    };
    let bytes = std::fs::read(file)?;
    let options = ccv3_embed::ReadOptions::default();
    let iters = iters.parse::<usize>()?.max(1);
    let (mut whole, mut parts) = (Vec::new(), Vec::new());
    for _ in 0..iters {
        let t = Instant::now();
        let json = ccv3_embed::read_card_json(&bytes, &options)?;
        whole.push(t.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(json);
        let t = Instant::now();
        let p = ccv3_embed::read_card_parts(std::io::Cursor::new(&bytes), &options)?;
        parts.push(t.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(p);
    }
    let (median_ms, min_ms) = median_min(whole);
    let (parts_median_ms, parts_min_ms) = median_min(parts);
    println!(
        "{{\"median_ms\":{median_ms},\"min_ms\":{min_ms},\"parts_median_ms\":{parts_median_ms},\"parts_min_ms\":{parts_min_ms}}}"
    );
    Ok(())
}
