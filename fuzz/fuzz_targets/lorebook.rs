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
        // World Info -> V3 -> World Info is exact, and V3 -> World Info -> V3 is exact after
        // one pass (the documented normalisations happen once).
        let wi = ccv3::lorebook::to_worldinfo(&book);
        if let serde_json::Value::Object(obj) = wi.clone() {
            let mut d = Vec::new();
            let back = ccv3::lorebook::from_worldinfo(obj, &mut d);
            assert_eq!(ccv3::lorebook::to_worldinfo(&back), wi);
            if let serde_json::Value::Object(obj2) = ccv3::lorebook::to_worldinfo(&back) {
                let again = ccv3::lorebook::from_worldinfo(obj2, &mut d);
                assert_eq!(again.to_json(), back.to_json());
            }
        }
        let _ = book.to_lorebook_v3();
    }
});
