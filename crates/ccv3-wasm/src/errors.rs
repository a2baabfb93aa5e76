//! Failures as JavaScript `Error`s with a stable `code` (used by both cores' exports).

use ccv3_embed::EmbedError;
use wasm_bindgen::prelude::*;

/// A failure as a JS `Error` whose `message` names the problem and whose `code` is stable.
pub(crate) fn js_error(code: &str, message: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    // Setting a property on a fresh Error object cannot fail; if it ever did, the message stays.
    let _ = js_sys::Reflect::set(&error, &JsValue::from_str("code"), &JsValue::from_str(code));
    error.into()
}

/// The facade's error as a JS `Error` with its code.
pub(crate) fn to_js(e: EmbedError) -> JsValue {
    js_error(e.code, &e.message)
}
