//! Fuzzes the CHARX reader: any bytes must give `Ok` or `Err`, never a panic, a hang or an
//! allocation beyond the limits. Seed corpus: crates/ccv3/tests/data/charx/regressions/.
#![no_main]

use ccv3::charx::{
    find_zip_start, looks_like_charx, read_charx_card_json, read_charx_from_slice, Limits,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Small limits keep each run fast; the rules are the same as with the defaults.
    let limits = Limits {
        max_entries: 1000,
        max_entry_size: 16 << 20,
        max_total_size: 64 << 20,
        max_ratio: 1000,
    };
    let _ = read_charx_from_slice(data, &limits);
    let _ = read_charx_card_json(std::io::Cursor::new(data), &limits);
    let _ = looks_like_charx(data);
    let _ = find_zip_start(data);
});
