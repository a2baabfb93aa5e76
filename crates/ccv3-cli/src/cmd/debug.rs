//! `ccv3 debug chunks FILE`: the chunks of a PNG file.

use crate::error::{CliError, CmdResult};
use crate::output::emit;
use std::path::Path;

/// Lists a PNG's chunks: type, offset, length, CRC check (to `-o FILE` when given).
pub fn chunks(path: &Path, output: Option<&Path>) -> CmdResult {
    let bytes = crate::stdio::read_input(
        path,
        "FILE",
        crate::load::max_input(),
        crate::load::RAISE_HINT,
    )?;
    let list = ccv3::png::list_chunks(&bytes).map_err(|e| CliError::file(path, e))?;
    let mut out = String::from("offset      length  type  crc\n");
    for c in list {
        out.push_str(&format!(
            "{:<10}  {:<6}  {}  {}\n",
            c.offset,
            c.length,
            c.kind,
            if c.crc_ok { "ok" } else { "BAD" }
        ));
    }
    emit(output, &out)?;
    Ok(0)
}
