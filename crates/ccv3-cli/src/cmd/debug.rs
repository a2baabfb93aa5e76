//! `ccv3 debug chunks FILE`: the chunks of a PNG file.

use super::{print, CliError, CmdResult};
use std::path::Path;

/// Lists a PNG's chunks: type, offset, length, CRC check.
pub fn chunks(path: &Path) -> CmdResult {
    let bytes = crate::output::read_bounded(path, super::max_input(), super::RAISE_HINT)
        .map_err(|e| CliError::file(path, e))?;
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
    print(&out)?;
    Ok(0)
}
