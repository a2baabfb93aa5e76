//! Fuzzes the decorator parser: any text must parse without panicking, and the body must be the
//! same as `split`'s body.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let p = ccv3::decorator::parse(s);
        assert_eq!(p.body, ccv3::decorator::split(s).body);
    }
});
