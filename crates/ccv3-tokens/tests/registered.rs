//! Vocabularies registered at run time (`register_vocabulary`), as the WebAssembly package loads
//! them: the file format is what `build.rs` compiles, and a registered encoding counts exactly as
//! the bundled one (which is tested equal to tiktoken-rs) and as tiktoken-rs itself.

#[path = "../src/vocab_layout.rs"]
#[allow(dead_code)]
mod vocab_layout;

#[path = "../src/vocab_compile.rs"]
mod vocab_compile;

use ccv3_tokens::{Encoding, Tokenizer};

/// The vocabulary file of `encoding` compiled from the crate's `data/`, as `build.rs` does.
fn compiled_file(encoding: Encoding) -> Vec<u8> {
    let path = format!(
        "{}/data/{}.tiktoken",
        env!("CARGO_MANIFEST_DIR"),
        encoding.name()
    );
    let text = std::fs::read_to_string(&path).expect("the crate's vocabulary source");
    let (bytes, slots) = vocab_compile::compile(encoding.name(), &text).expect("compiles");
    vocab_layout::file(encoding.name(), &bytes, &slots)
}

const TEXTS: [&str; 6] = [
    "hello world",
    "{{char}} smiles at {{user}}. \"Welcome to the tavern,\" she says.\n\n",
    "こんにちは世界。吾輩は猫である。",
    "emoji 😀😃 flags 🇯🇵 family 👨‍👩‍👧‍👦",
    "fn main() {\n    println!(\"{x:?}\");\n}\n",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
];

#[cfg(feature = "bundled")]
#[test]
fn exported_files_are_the_vocabularies_build_rs_compiles() {
    for encoding in [Encoding::O200k, Encoding::Cl100k] {
        assert!(
            ccv3_tokens::vocabulary_file(encoding) == compiled_file(encoding),
            "{}",
            encoding.name()
        );
        assert!(ccv3_tokens::has_vocabulary(encoding));
        // Registering over the bundled vocabulary checks the file and changes nothing.
        ccv3_tokens::register_vocabulary(encoding, compiled_file(encoding)).expect("registers");
        let reference = match encoding {
            Encoding::O200k => tiktoken_rs::o200k_base(),
            Encoding::Cl100k => tiktoken_rs::cl100k_base(),
        }
        .expect("builds");
        let t = ccv3_tokens::Tiktoken::new(encoding).expect("bundled");
        for text in TEXTS {
            assert_eq!(
                t.count(text),
                reference.encode_ordinary(text).len(),
                "{text:?}"
            );
        }
    }
}

/// Without the bundled vocabularies: missing is a clear error, then the registered file counts
/// as tiktoken-rs does.
#[cfg(not(feature = "bundled"))]
fn missing_then_registered(encoding: Encoding, reference: tiktoken_rs::CoreBPE) {
    use ccv3_tokens::{has_vocabulary, load, register_vocabulary, Error, Tiktoken, TokenizerKind};
    let kind = match encoding {
        Encoding::O200k => TokenizerKind::O200k,
        Encoding::Cl100k => TokenizerKind::Cl100k,
    };
    assert!(!has_vocabulary(encoding));
    let e = Tiktoken::new(encoding).unwrap_err();
    assert!(matches!(e, Error::VocabularyMissing { .. }), "{e}");
    assert!(e.to_string().contains("register_vocabulary"), "{e}");
    assert!(load(&kind).is_err());
    // Estimates need no vocabulary.
    assert!(load(&TokenizerKind::Estimate).is_ok());

    let file = compiled_file(encoding);
    let mut truncated = file.clone();
    truncated.pop();
    assert!(register_vocabulary(encoding, truncated).is_err());
    assert!(!has_vocabulary(encoding));
    register_vocabulary(encoding, file.clone()).expect("registers");
    assert!(has_vocabulary(encoding));
    // Registering again keeps the first and is not an error.
    register_vocabulary(encoding, file).expect("registers again");

    let t = load(&kind).expect("loads once registered");
    assert_eq!(t.name(), encoding.name());
    for text in TEXTS {
        let want = reference.encode_ordinary(text);
        assert_eq!(t.count(text), want.len(), "{text:?}");
        assert_eq!(t.encode(text), Some(want), "{text:?}");
    }
}

#[cfg(not(feature = "bundled"))]
#[test]
fn o200k_is_missing_until_registered_then_counts_as_tiktoken_rs() {
    missing_then_registered(Encoding::O200k, tiktoken_rs::o200k_base().expect("builds"));
}

#[cfg(not(feature = "bundled"))]
#[test]
fn cl100k_is_missing_until_registered_then_counts_as_tiktoken_rs() {
    missing_then_registered(
        Encoding::Cl100k,
        tiktoken_rs::cl100k_base().expect("builds"),
    );
}
