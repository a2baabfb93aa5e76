//! Helpers shared by the command's integration tests: the binary, the repository's examples and
//! corpus, and an output's text.
#![allow(dead_code)] // each test file uses some of them

use std::path::PathBuf;
use std::process::{Command, Output};

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A file of `examples/`.
pub fn example(name: &str) -> PathBuf {
    root().join("examples").join(name)
}

/// A corpus file: from `../shared/corpus` beside the repository when it is there, else from the
/// MIT-licensed subset in `crates/ccv3/tests/corpus`.
pub fn corpus(rel: &str) -> PathBuf {
    let shared = root().join("../shared/corpus");
    if shared.join("MANIFEST.tsv").is_file() {
        shared.join(rel)
    } else {
        root().join("crates/ccv3/tests/corpus").join(rel)
    }
}

/// Runs the `ccv3` binary with `args` and waits for it.
pub fn ccv3(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ccv3"));
    for a in args {
        cmd.arg(a);
    }
    cmd.output().expect("run ccv3")
}

/// An output's stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// An output's stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
