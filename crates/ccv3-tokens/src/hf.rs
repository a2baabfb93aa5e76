//! HuggingFace `tokenizer.json` files (cargo feature `hf`).
//!
//! A `tokenizer.json` holds a whole tokenization pipeline (normalizer, pre-tokenizer, model,
//! post-processor). It is loaded by path with the pure-Rust build of the `tokenizers` crate
//! (`fancy-regex`, no oniguruma C library, no network). Counting encodes without adding special
//! tokens (no BOS/EOS), since the text being counted is a fragment of a prompt. If the pipeline
//! fails on some text, the count falls back to the [`Estimate`](crate::Estimate) of that text
//! rather than failing.
//!
//! Without the `hf` feature, [`HfTokenizer::from_file`] returns [`Error::FeatureDisabled`].

use std::path::Path;

use crate::tokenizer::Tokenizer;
use crate::Error;

/// Largest `tokenizer.json` accepted, in bytes (the largest common ones are about 35 MB).
pub const MAX_FILE_SIZE: u64 = 128 * 1024 * 1024;

/// A HuggingFace tokenizer loaded from a `tokenizer.json` file.
pub struct HfTokenizer {
    name: String,
    #[cfg(feature = "hf")]
    inner: tokenizers::Tokenizer,
}

impl std::fmt::Debug for HfTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HfTokenizer")
            .field("name", &self.name)
            .finish()
    }
}

impl HfTokenizer {
    /// Loads the `tokenizer.json` at `path`. The tokenizer's name is the path as given.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be read, [`Error::Limit`] if it is larger than
    /// [`MAX_FILE_SIZE`], [`Error::Format`] if it is not a valid tokenizer, and
    /// [`Error::FeatureDisabled`] when built without the `hf` feature.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        load(path)
    }
}

#[cfg(feature = "hf")]
fn load(path: &Path) -> Result<HfTokenizer, Error> {
    use std::io::Read;

    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    if size > MAX_FILE_SIZE {
        return Err(Error::Limit {
            path: path.to_path_buf(),
            size,
            limit: MAX_FILE_SIZE,
        });
    }
    let mut bytes = Vec::new();
    // The size may change under us: read at most one byte past the limit.
    file.take(MAX_FILE_SIZE + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    let read = bytes.len() as u64;
    if read > MAX_FILE_SIZE {
        return Err(Error::Limit {
            path: path.to_path_buf(),
            size: read,
            limit: MAX_FILE_SIZE,
        });
    }
    let inner = tokenizers::Tokenizer::from_bytes(&bytes).map_err(|e| Error::Format {
        path: path.to_path_buf(),
        problem: format!("not a usable tokenizer.json: {e}"),
    })?;
    Ok(HfTokenizer {
        name: path.display().to_string(),
        inner,
    })
}

#[cfg(not(feature = "hf"))]
fn load(path: &Path) -> Result<HfTokenizer, Error> {
    Err(Error::FeatureDisabled {
        what: format!("loading {}", path.display()),
        feature: "hf",
    })
}

impl Tokenizer for HfTokenizer {
    fn count(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        self.encode(text)
            .map_or_else(|| crate::Estimate::estimate(text), |ids| ids.len())
    }

    fn name(&self) -> &str {
        &self.name
    }

    #[cfg(feature = "hf")]
    fn encode(&self, text: &str) -> Option<Vec<u32>> {
        self.inner
            .encode(text, false)
            .ok()
            .map(|enc| enc.get_ids().to_vec())
    }
}

#[cfg(all(test, not(feature = "hf")))]
mod tests {
    use super::*;

    #[test]
    fn hf_without_feature_is_a_clear_error() {
        let err = HfTokenizer::from_file("tests/data/wordlevel.json").unwrap_err();
        assert!(matches!(err, Error::FeatureDisabled { feature: "hf", .. }));
        assert!(err.to_string().contains("feature \"hf\""), "{err}");
    }
}

#[cfg(all(test, feature = "hf"))]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn data(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name)
    }

    #[test]
    fn hf_wordlevel_counts_one_token_per_known_or_unknown_word() {
        let t = HfTokenizer::from_file(data("wordlevel.json")).expect("test tokenizer loads");
        assert_eq!(t.count(""), 0);
        assert_eq!(t.count("hello world"), 2);
        assert_eq!(t.count("hello, world!"), 4);
        // Unknown words become [UNK], still one token each.
        assert_eq!(t.count("hello stranger"), 2);
        assert_eq!(t.encode("hello world"), Some(vec![1, 2]));
        assert_eq!(t.encode("hello stranger"), Some(vec![1, 0]));
    }

    #[test]
    fn hf_bpe_merges_known_pairs() {
        let t = HfTokenizer::from_file(data("bpe.json")).expect("test tokenizer loads");
        // "low" merges fully, "lower" is "low" + "er".
        assert_eq!(t.count("low"), 1);
        assert_eq!(t.count("lower"), 2);
        assert_eq!(t.count("low lower"), 3);
    }

    #[test]
    fn hf_missing_file_is_io_error_naming_the_path() {
        let err = HfTokenizer::from_file(data("no-such-file.json")).unwrap_err();
        assert!(matches!(err, Error::Io { .. }));
        assert!(err.to_string().contains("no-such-file.json"), "{err}");
    }

    #[test]
    fn hf_invalid_json_is_format_error() {
        let err = HfTokenizer::from_file(data("not-a-tokenizer.json")).unwrap_err();
        assert!(matches!(err, Error::Format { .. }), "{err}");
    }

    #[test]
    fn hf_bytelevel_bpe_counts_gpt2_style() {
        let t = HfTokenizer::from_file(data("bytelevel.json")).expect("test tokenizer loads");
        assert_eq!(t.count("hello world"), 2);
    }

    #[test]
    fn hf_whitespace_run_of_a_million_does_not_panic() {
        let text = format!("a{}b", " ".repeat(1 << 20));
        for file in ["bytelevel.json", "wordlevel.json", "bpe.json"] {
            let t = HfTokenizer::from_file(data(file)).expect("test tokenizer loads");
            let _ = t.count(&text);
        }
    }
}
