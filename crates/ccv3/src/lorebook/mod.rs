//! Standalone lorebooks (stub: the real module is being written on its own branch).
#![allow(missing_docs, unused_variables)]
use crate::{Diagnostic, Error, Lorebook, Result};
use serde_json::Value;
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BookFormat {
    LorebookV3,
    CharacterBook,
    WorldInfo,
    NovelAi,
    Agnai,
    Risu,
}
pub fn looks_like_lorebook(v: &Value) -> bool {
    v.get("spec").and_then(Value::as_str) == Some("lorebook_v3")
}
pub fn read_lorebook_value(
    v: Value,
    diags: &mut Vec<Diagnostic>,
) -> Result<(Lorebook, BookFormat)> {
    match v {
        Value::Object(mut m) => {
            let data = m.remove("data").unwrap_or(Value::Null);
            let b = Lorebook::from_json(data, "data", true, diags)
                .ok_or_else(|| Error::format("data", "no lorebook"))?;
            Ok((b, BookFormat::LorebookV3))
        }
        _ => Err(Error::format("", "no lorebook")),
    }
}
pub fn to_worldinfo(book: &Lorebook) -> Value {
    Value::Null
}
