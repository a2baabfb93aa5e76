//! Whole files without a copy: big files are mapped read-only instead of read into memory.
//!
//! Reading a 40 MB lorebook with `read` costs a fresh 40 MB buffer, and on the virtual machines
//! this project runs on, touching fresh memory for the first time costs more than parsing it.
//! A read-only map shares the page cache's pages, so nothing is copied or zeroed.
//!
//! The one `unsafe` of the crate is here. A map is only sound while no one changes the file, and
//! another process can: a file truncated while it is being parsed ends the process with `SIGBUS`,
//! and one rewritten in place can give text that was never in any version of it (still checked
//! as UTF-8 and JSON like any other input, so never undefined memory). Command-line tools that
//! map their inputs (ripgrep among them) accept the same trade; small files are read as usual.

use std::fs::File;
use std::io::Read;
use std::ops::Deref;

/// Files at least this big are mapped; smaller ones are read.
const MAP_FROM: u64 = 1 << 20;

/// A file's bytes: mapped, or read into memory.
pub(crate) enum FileBytes {
    /// A read-only map of the whole file.
    Mapped(memmap2::Mmap),
    /// The file read into memory.
    Read(Vec<u8>),
}

impl Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(m) => m,
            FileBytes::Read(v) => v,
        }
    }
}

/// The whole of `file` (whose length is `len`, already checked against the caller's limit):
/// mapped when it is big, read otherwise, and read too when mapping fails (a pipe, say).
pub(crate) fn whole_file(file: &mut File, len: u64, limit: u64) -> std::io::Result<FileBytes> {
    if len >= MAP_FROM {
        // SAFETY: the map is read-only and private; see the module docs for what a concurrent
        // change to the file can do.
        #[allow(unsafe_code)]
        if let Ok(map) = unsafe { memmap2::Mmap::map(&*file) } {
            if map.len() as u64 == len {
                return Ok(FileBytes::Mapped(map));
            }
        }
    }
    let mut bytes = Vec::with_capacity(len.min(limit) as usize);
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(FileBytes::Read(bytes))
}
