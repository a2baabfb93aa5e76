//! With the `bundled` feature (on by default), compiles the tiktoken vocabularies
//! (`data/*.tiktoken`: one `base64(token) rank` line per token, ranks 0, 1, 2, ... in order) into
//! the ready-to-use layout of `src/vocab_layout.rs`, so that a process maps them from its own
//! binary instead of decoding them at start-up. Without it, nothing is compiled in: callers
//! register vocabulary files at run time.

use std::fs;
use std::path::PathBuf;

#[path = "src/vocab_layout.rs"]
#[allow(dead_code)]
mod vocab_layout;

#[path = "src/vocab_compile.rs"]
mod vocab_compile;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/vocab_layout.rs");
    println!("cargo:rerun-if-changed=src/vocab_compile.rs");
    if std::env::var_os("CARGO_FEATURE_BUNDLED").is_none() {
        return;
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for name in ["o200k_base", "cl100k_base"] {
        let source = format!("data/{name}.tiktoken");
        println!("cargo:rerun-if-changed={source}");
        let text = fs::read_to_string(&source).unwrap_or_else(|e| panic!("{source}: {e}"));
        let (bytes, slots) = vocab_compile::compile(name, &text).unwrap_or_else(|e| panic!("{e}"));
        let write = |suffix: &str, data: &[u8]| {
            let path = out.join(format!("{name}.{suffix}"));
            fs::write(&path, data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        };
        write("bytes", &bytes);
        write("slots", &slots);
    }
}
