//! Fuzzes the TavernAI-era WebP and JPEG EXIF card readers.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ccv3::legacy::read_webp_card(data);
    let _ = ccv3::legacy::read_jpeg_card(data);
    // Also reach the TIFF walker directly behind a valid container header.
    let mut webp = b"RIFF".to_vec();
    webp.extend_from_slice(&(data.len() as u32).saturating_add(12).to_le_bytes());
    webp.extend_from_slice(b"WEBPEXIF");
    webp.extend_from_slice(&(data.len() as u32).to_le_bytes());
    webp.extend_from_slice(data);
    let _ = ccv3::legacy::read_webp_card(&webp);
});
