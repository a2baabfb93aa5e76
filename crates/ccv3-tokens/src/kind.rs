//! Choosing a tokenizer by name: [`TokenizerKind`] and [`load`].

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use crate::encoding::Encoding;
use crate::estimate::Estimate;
use crate::hf::HfTokenizer;
use crate::tiktoken::Tiktoken;
use crate::tokenizer::Tokenizer;
use crate::Error;

/// Which tokenizer to use. Parse one from a command-line or config string with [`FromStr`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum TokenizerKind {
    /// tiktoken `o200k_base`, the default.
    #[default]
    O200k,
    /// tiktoken `cl100k_base`.
    Cl100k,
    /// SillyTavern's character-count estimate.
    Estimate,
    /// A HuggingFace `tokenizer.json` file (needs the `hf` feature to load).
    HfFile(PathBuf),
}

impl FromStr for TokenizerKind {
    type Err = Error;

    /// Accepts `o200k`, `o200k_base`, `cl100k`, `cl100k_base`, `estimate` (names ignore ASCII
    /// case and surrounding spaces) or a path ending in `.json`.
    fn from_str(s: &str) -> Result<Self, Error> {
        let name = s.trim();
        match name.to_ascii_lowercase().as_str() {
            "o200k" | "o200k_base" => Ok(TokenizerKind::O200k),
            "cl100k" | "cl100k_base" => Ok(TokenizerKind::Cl100k),
            "estimate" => Ok(TokenizerKind::Estimate),
            lower if lower.ends_with(".json") => Ok(TokenizerKind::HfFile(PathBuf::from(s))),
            _ => Err(Error::UnknownKind(s.to_string())),
        }
    }
}

impl std::fmt::Display for TokenizerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenizerKind::O200k => f.write_str("o200k_base"),
            TokenizerKind::Cl100k => f.write_str("cl100k_base"),
            TokenizerKind::Estimate => f.write_str("estimate"),
            TokenizerKind::HfFile(path) => write!(f, "{}", path.display()),
        }
    }
}

/// Returns a shareable tokenizer of the given kind.
///
/// tiktoken encodings are built once per process and shared; loading one again is cheap.
///
/// # Errors
/// [`Error::Encoding`] if a bundled encoding cannot be built; for [`TokenizerKind::HfFile`], the
/// errors of [`HfTokenizer::from_file`].
///
/// ```
/// use ccv3_tokens::{load, TokenizerKind};
/// // SillyTavern's estimate needs no vocabulary: ceil(11 UTF-16 units / 3.35) = 4.
/// let estimate = load(&TokenizerKind::Estimate)?;
/// assert_eq!(estimate.count("hello world"), 4);
/// # #[cfg(feature = "bundled")] {
/// let o200k = load(&"o200k".parse()?)?;
/// assert_eq!(o200k.count("hello world"), 2);
/// # }
/// # Ok::<(), ccv3_tokens::Error>(())
/// ```
pub fn load(kind: &TokenizerKind) -> Result<Arc<dyn Tokenizer>, Error> {
    Ok(match kind {
        TokenizerKind::O200k => Arc::new(Tiktoken::new(Encoding::O200k)?),
        TokenizerKind::Cl100k => Arc::new(Tiktoken::new(Encoding::Cl100k)?),
        TokenizerKind::Estimate => Arc::new(Estimate),
        TokenizerKind::HfFile(path) => Arc::new(HfTokenizer::from_file(path)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<TokenizerKind, Error> {
        s.parse()
    }

    #[test]
    fn from_str_accepts_short_and_tiktoken_names() {
        assert_eq!(parse("o200k").ok(), Some(TokenizerKind::O200k));
        assert_eq!(parse("o200k_base").ok(), Some(TokenizerKind::O200k));
        assert_eq!(parse("cl100k").ok(), Some(TokenizerKind::Cl100k));
        assert_eq!(parse("cl100k_base").ok(), Some(TokenizerKind::Cl100k));
        assert_eq!(parse("estimate").ok(), Some(TokenizerKind::Estimate));
        assert_eq!(parse(" O200K_Base ").ok(), Some(TokenizerKind::O200k));
    }

    #[test]
    fn from_str_takes_json_paths_as_hf_files() {
        assert_eq!(
            parse("models/llama/tokenizer.json").ok(),
            Some(TokenizerKind::HfFile(PathBuf::from(
                "models/llama/tokenizer.json"
            )))
        );
        assert_eq!(
            parse("T.JSON").ok(),
            Some(TokenizerKind::HfFile(PathBuf::from("T.JSON")))
        );
    }

    #[test]
    fn from_str_rejects_unknown_names() {
        for bad in ["", "gpt2", "p50k_base", "tokenizer.txt", "o200k_basex"] {
            let err = parse(bad).unwrap_err();
            assert!(matches!(err, Error::UnknownKind(_)), "{bad:?}");
            assert!(err.to_string().starts_with("unknown tokenizer"), "{err}");
        }
    }

    #[test]
    fn default_kind_is_o200k() {
        assert_eq!(TokenizerKind::default(), TokenizerKind::O200k);
    }

    #[test]
    fn display_round_trips_through_from_str() {
        for kind in [
            TokenizerKind::O200k,
            TokenizerKind::Cl100k,
            TokenizerKind::Estimate,
        ] {
            assert_eq!(parse(&kind.to_string()).ok(), Some(kind));
        }
    }

    #[test]
    fn load_gives_named_tokenizers() {
        let t = load(&TokenizerKind::O200k).expect("o200k loads");
        assert_eq!((t.name(), t.count("hello world")), ("o200k_base", 2));
        let t = load(&TokenizerKind::Cl100k).expect("cl100k loads");
        assert_eq!(t.name(), "cl100k_base");
        let t = load(&TokenizerKind::Estimate).expect("estimate loads");
        assert_eq!((t.name(), t.count("abcd")), ("estimate", 2));
    }

    #[test]
    fn load_hf_file_needs_the_hf_feature() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/wordlevel.json");
        let kind: TokenizerKind = path.parse().expect("json path parses");
        let loaded = load(&kind);
        if cfg!(feature = "hf") {
            assert_eq!(loaded.map(|t| t.count("hello world")).ok(), Some(2));
        } else {
            assert!(matches!(
                loaded,
                Err(Error::FeatureDisabled { feature: "hf", .. })
            ));
        }
    }
}
