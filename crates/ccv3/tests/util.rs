use std::path::PathBuf;

/// The shared corpus folder (`../shared/corpus` from the repository root).
pub fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
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
