//! The test corpus (tests only): `../shared/corpus` beside the repository when it is there,
//! else the MIT-licensed subset copied into `tests/corpus` (see its `NOTICE.md`).

use std::path::{Path, PathBuf};

/// The full corpus beside the repository.
fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
}

/// True when the full corpus is there (counts of its files hold).
pub(crate) fn is_full() -> bool {
    shared().join("MANIFEST.tsv").is_file()
}

/// The corpus folder in use.
pub(crate) fn dir() -> PathBuf {
    if is_full() {
        shared()
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
    }
}

/// A corpus file (`png/x.png`), or `None` after printing that the test is skipped when the
/// corpus in use does not have it.
pub(crate) fn file(rel: &str) -> Option<PathBuf> {
    let p = dir().join(rel);
    if p.is_file() {
        Some(p)
    } else {
        eprintln!("skipped: {rel} is not in the in-repository corpus (no ../shared/corpus)");
        None
    }
}
