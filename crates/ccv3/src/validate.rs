//! Validation (work in progress).

use crate::{Card, Diagnostic, Lorebook};

/// Where the card came from, for checks that need the container.
#[derive(Debug, Clone, Default)]
pub struct ValidateContext {
    /// CHARX file paths.
    pub embedded_paths: Option<Vec<String>>,
    /// PNG `chara-ext-asset_:` paths.
    pub png_asset_paths: Option<Vec<String>>,
}

/// Validates a card.
pub fn validate_card(_card: &Card, _ctx: &ValidateContext) -> Vec<Diagnostic> {
    Vec::new()
}

/// Validates a lorebook.
pub fn validate_lorebook(_book: &Lorebook, _path_prefix: &str) -> Vec<Diagnostic> {
    Vec::new()
}
