//! Fuzz target: any bytes -> JSON -> `read_lorebook_value` -> validation and World Info writing.
//!
//! Run: `cargo fuzz run lorebook -- -max_total_time=60` (seed it with
//! `crates/ccv3/tests/data/lorebook/` and `../shared/corpus/lorebook/`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let _ = ccv3::lorebook::looks_like_lorebook(&value);
    let mut diags = Vec::new();
    if let Ok((book, _format)) = ccv3::lorebook::read_lorebook_value(value, &mut diags) {
        let _ = ccv3::validate_lorebook(&book, "data");
        // World Info round trip must hold for whatever was read.
        let wi = ccv3::lorebook::to_worldinfo(&book);
        if let serde_json::Value::Object(obj) = wi.clone() {
            let mut d = Vec::new();
            let back = ccv3::lorebook::from_worldinfo(obj, &mut d);
            assert_eq!(ccv3::lorebook::to_worldinfo(&back), wi);
        }
        let _ = book.to_lorebook_v3();
    }
});
