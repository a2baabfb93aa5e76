//! Fuzzes the whole card reader (`ccv3::read_bytes`: sniffing, JSON, the lenient model, every
//! container) and the writers on whatever it accepts: any bytes give `Ok` or `Err`, never a
//! panic; a card that reads must write to JSON, PNG and CHARX and read back.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = ccv3::read_bytes(data) else { return };
    let _ = ccv3::check_document(&doc);
    if let ccv3::Document::Card(cf) = doc {
        let json = ccv3::write_json(&cf, ccv3::CardVersion::V3);
        assert!(ccv3::read_bytes(&json).is_ok(), "written JSON must read back");
        if let Ok(png) = ccv3::write_png(&cf, None, ccv3::CardVersion::V3) {
            assert!(ccv3::read_bytes(&png).is_ok(), "written PNG must read back");
        }
        if let Ok(charx) = ccv3::write_charx(&cf) {
            assert!(ccv3::read_bytes(&charx).is_ok(), "written CHARX must read back");
        }
    }
});
