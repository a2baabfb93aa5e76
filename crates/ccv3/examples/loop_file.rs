#[global_allocator]
static G: mimalloc::MiMalloc = mimalloc::MiMalloc;
fn main() {
    let p = std::env::args().nth(1).unwrap();
    let n: usize = std::env::args().nth(2).map_or(200, |s| s.parse().unwrap());
    let mut ts = Vec::new();
    for _ in 0..n {
        let t = std::time::Instant::now();
        let d = ccv3::read_file(std::path::Path::new(&p)).unwrap();
        std::hint::black_box(d);
        ts.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let first = ts[0];
    ts.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "first {:.2} ms, median {:.3} ms, min {:.3} ms",
        first,
        ts[n / 2],
        ts[0]
    );
}
