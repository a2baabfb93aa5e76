//! TavernAI-era WebP and JPEG cards (stub: the real module is being written on its own branch).
#![allow(missing_docs, unused_variables)]
use crate::{Error, Result};
pub fn is_webp(bytes: &[u8]) -> bool {
    bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WEBP"
}
pub fn is_jpeg(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0xFF, 0xD8, 0xFF])
}
pub fn read_webp_card(bytes: &[u8]) -> Result<String> {
    Err(Error::Parameter("webp not yet".into()))
}
pub fn read_jpeg_card(bytes: &[u8]) -> Result<String> {
    Err(Error::Parameter("jpeg not yet".into()))
}
