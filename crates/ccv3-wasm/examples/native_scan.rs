//! The native side of `bindings/npm/bench/bench.mjs`: the same facade calls the npm package
//! makes (`CompiledBooks` compiled once, then warm scans), timed in-process.
//!
//! `cargo run --release -p ccv3-wasm --example native_scan -- BOOK CHAT OPTIONS_JSON ITERS`
//! prints `{"compile_ms":C,"scan_median_ms":M,"scan_min_ms":N,"activated":A}`.
use std::time::Instant;

use ccv3_embed::{CompiledBooks, Source};
use serde_json::{json, Value};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [book, chat, options, iters] = args.as_slice() else {
        return Err("usage: native_scan BOOK CHAT OPTIONS_JSON ITERS".into());
    };
    let book = std::fs::read(book)?;
    let chat: Value = serde_json::from_slice(&std::fs::read(chat)?)?;
    let options: Value = serde_json::from_str(options)?;
    let iters: usize = iters.parse()?;

    let t = Instant::now();
    let mut books = CompiledBooks::new(&[Source::Bytes(&book)], &options)?;
    let compile_ms = t.elapsed().as_secs_f64() * 1e3;
    let request = json!({ "chat": chat });
    let mut times = Vec::with_capacity(iters);
    let mut activated = 0;
    for _ in 0..iters.max(1) {
        let t = Instant::now();
        let out = books.scan_json(&request)?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        activated = out.matches("\"reason\"").count();
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{}",
        json!({
            "compile_ms": compile_ms,
            "scan_median_ms": times[times.len() / 2],
            "scan_min_ms": times[0],
            "items": activated,
        })
    );
    Ok(())
}
