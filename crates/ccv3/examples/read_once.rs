//! Reads each file named on the command line once, in a fresh process, and prints the time the
//! read took and the process's peak memory: what a command-line call pays, cold.
//!
//! `cargo run --release -p ccv3 --example read_once -- FILE...`

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn peak_kb() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l.trim_start_matches("VmHWM:").trim().to_string())
        })
        .unwrap_or_else(|| "?".into())
}

fn main() {
    for path in std::env::args().skip(1) {
        let t = std::time::Instant::now();
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let read_ms = t.elapsed().as_secs_f64() * 1000.0;
        let t = std::time::Instant::now();
        let doc = ccv3::read_bytes(&bytes);
        let parse_ms = t.elapsed().as_secs_f64() * 1000.0;
        let what = match &doc {
            Ok(ccv3::Document::Card(c)) => format!(
                "card, {} entries",
                c.card
                    .data
                    .character_book
                    .as_ref()
                    .map_or(0, |b| b.entries.len())
            ),
            Ok(ccv3::Document::Lorebook(b)) => {
                format!("lorebook, {} entries", b.book.entries.len())
            }
            Err(e) => format!("error: {e}"),
        };
        println!(
            "{path}: file {read_ms:.2} ms, parse {parse_ms:.2} ms, peak {}, {what}",
            peak_kb()
        );
    }
}
