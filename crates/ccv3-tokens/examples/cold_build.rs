//! Measures what a short-lived process pays for one encoding: the time to build it on first use
//! and count a short text, and the growth of the process's peak resident memory (Linux only).
//!
//! Run: `cargo run --release -p ccv3-tokens --example cold_build -- o200k` (or `cl100k`)

use std::time::Instant;

use ccv3_tokens::{Encoding, Tiktoken, Tokenizer};

/// Peak resident set size in KiB from `/proc/self/status`, if readable.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let encoding = match std::env::args().nth(1).as_deref() {
        Some("cl100k") => Encoding::Cl100k,
        _ => Encoding::O200k,
    };
    let before = peak_rss_kib();
    let start = Instant::now();
    let Ok(t) = Tiktoken::new(encoding) else {
        eprintln!("{} does not build", encoding.name());
        return;
    };
    let built = start.elapsed();
    let n = t.count("The innkeeper wiped the counter. 夜の酒場は静かだった。");
    let counted = start.elapsed();
    let after = peak_rss_kib();
    let growth = match (before, after) {
        (Some(b), Some(a)) => format!("{} KiB", a.saturating_sub(b)),
        _ => "unknown".to_string(),
    };
    println!(
        "{}: build {:.2} ms, build + first count {:.2} ms ({n} tokens), peak RSS growth {growth}",
        encoding.name(),
        built.as_secs_f64() * 1e3,
        counted.as_secs_f64() * 1e3,
    );
}
