//! Reading the files the crate is pointed at (templates, instruct templates), capped in size.

use crate::error::Error;

/// Reads a UTF-8 file of at most `limit` bytes.
pub(crate) fn read_capped(
    path: &std::path::Path,
    limit: usize,
    what: &str,
) -> Result<String, Error> {
    use std::io::Read;
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    // The size from the metadata first, so an oversized file is named with its real size.
    let size = file.metadata().map_err(io)?.len();
    if size > limit as u64 {
        return Err(Error::Limit {
            what: format!("{what} {}", path.display()),
            size,
            limit: limit as u64,
        });
    }
    let mut buf = Vec::new();
    file.take(limit as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(io)?;
    if buf.len() > limit {
        return Err(Error::Limit {
            what: format!("{what} {}", path.display()),
            size: buf.len() as u64,
            limit: limit as u64,
        });
    }
    String::from_utf8(buf).map_err(|e| {
        io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8: {e}"),
        ))
    })
}
