use std::path::PathBuf;

/// The full corpus (`../shared/corpus` from the repository root).
fn shared_corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
}

/// True when the full corpus is there (counts of its files hold).
pub fn corpus_is_full() -> bool {
    shared_corpus().join("MANIFEST.tsv").is_file()
}

/// The corpus folder in use: `../shared/corpus` when it is there, else the MIT-licensed subset
/// in `tests/corpus` (see its `NOTICE.md`).
pub fn corpus_dir() -> PathBuf {
    if corpus_is_full() {
        shared_corpus()
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
    }
}

/// A corpus file (`png/x.png`), or `None` after printing that the test is skipped when the
/// corpus in use does not have it.
pub fn corpus_file(rel: &str) -> Option<PathBuf> {
    let p = corpus_dir().join(rel);
    if p.is_file() {
        Some(p)
    } else {
        eprintln!("skipped: {rel} is not in the in-repository corpus (no ../shared/corpus)");
        None
    }
}

/// Reads a card from JSON text, returning it with the reader's diagnostics.
pub fn card(text: &str) -> (ccv3::Card, Vec<ccv3::Diagnostic>) {
    let v: serde_json::Value = serde_json::from_str(text).expect("test JSON");
    let mut diags = Vec::new();
    let card = ccv3::Card::from_json(v, &mut diags).expect("a card");
    (card, diags)
}

/// The codes of a diagnostic list.
pub fn codes(diags: &[ccv3::Diagnostic]) -> Vec<&str> {
    diags.iter().map(|d| d.code.as_str()).collect()
}

/// The path and severity of each diagnostic with `code`, in order.
pub fn with_code<'a>(diags: &'a [ccv3::Diagnostic], code: &str) -> Vec<(&'a str, ccv3::Severity)> {
    diags
        .iter()
        .filter(|d| d.code == code)
        .map(|d| (d.path.as_str(), d.severity))
        .collect()
}
