//! Reads one file many times in one process and prints the first, median and fastest read: the
//! figure to set beside another reader's in-process loop (the peers harness's `peer_card.py`).
//!
//! `cargo run --release -p ccv3 --example read_loop -- FILE [N]` (N reads, 200 by default)

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: read_loop FILE [N]");
        std::process::exit(2);
    };
    let n: usize = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
        .max(1);
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = std::time::Instant::now();
        match ccv3::read_file(std::path::Path::new(&path)) {
            Ok(doc) => {
                times.push(t.elapsed().as_secs_f64() * 1000.0);
                drop(std::hint::black_box(doc));
            }
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
        }
    }
    let first = times[0];
    times.sort_by(f64::total_cmp);
    println!(
        "{path}: first {first:.2} ms, median {:.3} ms, min {:.3} ms over {n} reads",
        times[n / 2],
        times[0]
    );
}
