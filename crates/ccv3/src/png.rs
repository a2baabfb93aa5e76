//! PNG and APNG card chunks (stub: the real module is being written on its own branch).
#![allow(missing_docs, unused_variables)]
use crate::{Diagnostic, Error, Result};
use std::io::{Read, Seek};
#[derive(Debug, Clone, Default)]
pub struct Limits {
    pub max: u64,
}
#[derive(Debug, Clone, Default)]
pub struct CardChunks {
    pub ccv3: Option<String>,
    pub chara: Option<String>,
    pub assets: Vec<(String, Vec<u8>)>,
    pub diagnostics: Vec<Diagnostic>,
}
pub fn is_png(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x89PNG\r\n\x1a\n")
}
pub fn read_card_chunks<R: Read + Seek>(r: R, limits: &Limits) -> Result<CardChunks> {
    Err(Error::Parameter("png not yet".into()))
}
pub fn read_card_chunks_from_slice(bytes: &[u8]) -> Result<CardChunks> {
    Err(Error::Parameter("png not yet".into()))
}
pub fn write_card_chunks(png: &[u8], chunks: &[(&str, &[u8])]) -> Result<Vec<u8>> {
    Err(Error::Parameter("png not yet".into()))
}
pub fn plain_image() -> Vec<u8> {
    Vec::new()
}
pub fn encode_text_value(json: &str) -> Vec<u8> {
    Vec::new()
}
#[derive(Debug, Clone)]
pub struct ChunkInfo {
    pub chunk_type: String,
    pub offset: u64,
    pub length: u32,
    pub crc_ok: bool,
}
pub fn list_chunks(bytes: &[u8]) -> Result<Vec<ChunkInfo>> {
    Err(Error::Parameter("png not yet".into()))
}
