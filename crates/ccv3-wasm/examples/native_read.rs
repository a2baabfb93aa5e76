//! The native side of the readCard benchmark: `ccv3_embed::read_card_json` on a file, timed
//! in-process. `cargo run --release -p ccv3-wasm --example native_read -- FILE ITERS`
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, iters] = args.as_slice() else {
        return Err("usage: native_read FILE ITERS".into());
    };
    let bytes = std::fs::read(file)?;
    let mut times = Vec::new();
    for _ in 0..iters.parse::<usize>()?.max(1) {
        let t = Instant::now();
        let json = ccv3_embed::read_card_json(&bytes, &ccv3_embed::ReadOptions::default())?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(json);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{{\"median_ms\":{},\"min_ms\":{}}}",
        times[times.len() / 2],
        times[0]
    );
    Ok(())
}
