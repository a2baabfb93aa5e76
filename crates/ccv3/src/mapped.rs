//! Whole files without a copy: with the `mmap` feature, and when the caller asks for it
//! ([`crate::ReadOptions::mmap`]), big files are mapped read-only instead of read into memory.
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
#[cfg(feature = "mmap")]
const MAP_FROM: u64 = 1 << 20;

/// A file's bytes: mapped, or read into memory.
pub(crate) enum FileBytes {
    /// A read-only map of the whole file.
    #[cfg(feature = "mmap")]
    Mapped(memmap2::Mmap),
    /// The file read into memory.
    Read(Vec<u8>),
}

impl Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            #[cfg(feature = "mmap")]
            FileBytes::Mapped(m) => m,
            FileBytes::Read(v) => v,
        }
    }
}

/// The whole of `file` (whose length is `len`, already checked against the caller's limit):
/// mapped when `map` is asked, the `mmap` feature is on and the file is big; read otherwise, and
/// read too when mapping fails (a pipe, say).
pub(crate) fn whole_file(
    file: &mut File,
    len: u64,
    limit: u64,
    map: bool,
) -> std::io::Result<FileBytes> {
    #[cfg(not(feature = "mmap"))]
    let _ = map;
    #[cfg(feature = "mmap")]
    if map && len >= MAP_FROM {
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
