//! The bundled tiktoken encodings by name ([`Encoding`]): a leaf that the encoders
//! ([`crate::Tiktoken`], in `tiktoken.rs`) and the piece cache that remembers which encoding
//! filled it (`piece_cache.rs`) both name.

/// A bundled tiktoken encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// `o200k_base`: GPT-4o, GPT-4.1, o-series, GPT-5. The default.
    O200k,
    /// `cl100k_base`: GPT-3.5-turbo, GPT-4.
    Cl100k,
}

impl Encoding {
    /// Returns the encoding's tiktoken name, e.g. `o200k_base`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200k => "o200k_base",
            Encoding::Cl100k => "cl100k_base",
        }
    }
}
