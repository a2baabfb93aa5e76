//! Writes the bundled vocabularies as files for builds without the `bundled` feature (the
//! WebAssembly package ships them and registers one on first need):
//! `DIR/o200k_base.vocab` and `DIR/cl100k_base.vocab`, each read back by
//! `ccv3_tokens::register_vocabulary`.
//!
//! Run: `cargo run -p ccv3-tokens --example export_vocab -- DIR`

use std::path::PathBuf;
use std::process::ExitCode;

use ccv3_tokens::{vocabulary_file, Encoding};

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: export_vocab DIR");
        return ExitCode::from(2);
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("{}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    for encoding in [Encoding::O200k, Encoding::Cl100k] {
        let path = dir.join(format!("{}.vocab", encoding.name()));
        let file = vocabulary_file(encoding);
        if let Err(e) = std::fs::write(&path, &file) {
            eprintln!("{}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("{} ({} bytes)", path.display(), file.len());
    }
    ExitCode::SUCCESS
}
