//! Fuzzes the PNG chunk walker, card chunk decoding, chunk listing and the chunk writer.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ccv3::png::read_card_chunks_from_slice(data);
    let _ = ccv3::png::list_chunks(data);
    if let Ok(out) = ccv3::png::write_card_chunks(data, &[("ccv3", b"e30=")]) {
        // Whatever the writer accepts, the reader must read back.
        let back = ccv3::png::read_card_chunks_from_slice(&out).expect("writer output reads");
        assert_eq!(back.ccv3.as_deref(), Some("{}"));
    }
    let _ = ccv3::png::decode_text_value(data);
});
