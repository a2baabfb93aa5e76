//! CHARX archives (stub: the real module is being written on its own branch).
#![allow(missing_docs, unused_variables)]
use crate::{Diagnostic, Error, Result};
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
#[derive(Debug, Clone, Default)]
pub struct Limits {
    pub max: u64,
}
#[derive(Debug, Clone)]
pub struct CharxFile {
    pub path: String,
    pub data: Vec<u8>,
}
#[derive(Debug, Clone)]
pub struct CharxArchive {
    pub card_json: Vec<u8>,
    pub files: Vec<CharxFile>,
    pub prefix_len: u64,
    pub diagnostics: Vec<Diagnostic>,
}
pub fn read_charx<R: Read + Seek>(r: R, limits: &Limits) -> Result<CharxArchive> {
    Err(Error::Parameter("charx not yet".into()))
}
pub fn read_charx_from_slice(bytes: &[u8], limits: &Limits) -> Result<CharxArchive> {
    Err(Error::Parameter("charx not yet".into()))
}
pub fn looks_like_charx(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PK\x03\x04")
}
pub fn write_charx_to_vec(card_json: &[u8], files: &[CharxFile]) -> Result<Vec<u8>> {
    Err(Error::Parameter("charx not yet".into()))
}
pub fn asset_dir(asset_type: &str, ext: &str) -> String {
    format!("assets/{asset_type}/other/")
}
pub fn sanitize_file_name(name: &str) -> String {
    name.to_string()
}
pub fn safe_join(root: &Path, zip_path: &str) -> Result<PathBuf> {
    Ok(root.join(zip_path))
}
