//! The tokenizer a request names by its encoding: one rule for the card, text, lint and scan
//! functions (below all of them, so none imports another for it).

use crate::EmbedError;
use ccv3_tokens::{Tokenizer, TokenizerKind};

/// The tokenizer named `encoding` (`o200k`, the default, `cl100k` or `estimate`).
pub(crate) fn tokenizer(
    encoding: Option<&str>,
) -> Result<std::sync::Arc<dyn Tokenizer>, EmbedError> {
    let name = encoding.unwrap_or(ccv3_prompt::defaults::TOKENIZER);
    let kind: TokenizerKind = name.parse().map_err(|_| {
        EmbedError::bad_input(format!(
            "unknown encoding {name:?}: use o200k, cl100k or estimate"
        ))
    })?;
    if matches!(kind, TokenizerKind::HfFile(_)) {
        return Err(EmbedError::bad_input(format!(
            "unknown encoding {name:?}: use o200k, cl100k or estimate"
        )));
    }
    ccv3_tokens::load(&kind).map_err(|e| EmbedError::new("tokenizer-unavailable", e.to_string()))
}
