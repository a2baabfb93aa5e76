//! A file read at positions through one small buffer (issue 16: `ccv3 validate` of a folder of
//! 10,000 PNG cards).
//!
//! The PNG reader reads chunk headers of a few bytes and seeks past everything else. Through a
//! `BufReader<File>`, every seek is an `lseek` that throws the buffer away and every header is
//! one more `read`: a dozen system calls per small card, as much time as decoding it. This
//! reader keeps the position itself (a seek is no system call), reads with positional reads
//! (`pread`), serves small reads from one buffer filled at the position asked, and reads what
//! is as large as that buffer straight into the caller's memory.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

/// Bytes read by the first read of a file: the signature and the first chunk headers of a PNG,
/// and all of a small card's chunks when they come before the picture.
pub(crate) const FIRST_READ: usize = 4 * 1024;

/// Bytes read when a small read falls outside the buffer: a chunk header and a text chunk's
/// keyword, without much of the data that follows (image data is seeked past, not read).
pub(crate) const REFILL: usize = 512;

/// A [`File`] read at positions (see the module docs). It never moves the file's own cursor
/// where positional reads exist (Unix, Windows moves it).
pub(crate) struct PosReader<'f> {
    file: &'f File,
    /// The file's length when it was opened (what `SeekFrom::End` counts from).
    len: u64,
    /// The position of the next read.
    pos: u64,
    /// Bytes of the file from `buf_at` on.
    buf: Vec<u8>,
    buf_at: u64,
    /// How many bytes the next refill reads.
    next_fill: usize,
}

impl<'f> PosReader<'f> {
    /// A reader of `file`, `len` bytes long, at position 0.
    pub(crate) fn new(file: &'f File, len: u64) -> Self {
        PosReader {
            file,
            len,
            pos: 0,
            buf: Vec::new(),
            buf_at: 0,
            next_fill: FIRST_READ,
        }
    }

    /// Fills the buffer with up to [`PosReader::next_fill`] bytes from the position.
    fn refill(&mut self) -> io::Result<()> {
        self.buf.resize(self.next_fill, 0);
        let n = read_at(self.file, &mut self.buf, self.pos, self.len)?;
        self.buf.truncate(n);
        self.buf_at = self.pos;
        self.next_fill = REFILL;
        Ok(())
    }
}

impl Read for PosReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        let in_buf = self
            .pos
            .checked_sub(self.buf_at)
            .and_then(|off| usize::try_from(off).ok())
            .filter(|&off| off < self.buf.len());
        let off = match in_buf {
            Some(off) => off,
            None if out.len() >= self.next_fill => {
                let n = read_at(self.file, out, self.pos, self.len)?;
                self.pos += n as u64;
                return Ok(n);
            }
            None => {
                self.refill()?;
                if self.buf.is_empty() {
                    return Ok(0);
                }
                0
            }
        };
        let have = self.buf.get(off..).unwrap_or_default();
        let n = have.len().min(out.len());
        if let (Some(to), Some(from)) = (out.get_mut(..n), have.get(..n)) {
            to.copy_from_slice(from);
        }
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for PosReader<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "invalid seek to a negative or overflowing position",
            )
        })?;
        Ok(self.pos)
    }

    fn stream_position(&mut self) -> io::Result<u64> {
        Ok(self.pos)
    }
}

/// Reads up to `buf.len()` bytes of `file` at `pos` (fewer only at the end of the file). A
/// short read that reaches `len` (the file's length when opened) is not retried: that would be
/// one more system call to learn the end is the end.
fn read_at(file: &File, buf: &mut [u8], pos: u64, len: u64) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        if filled > 0 && pos.saturating_add(filled as u64) >= len {
            break;
        }
        let Some(rest) = buf.get_mut(filled..) else {
            break;
        };
        match read_at_once(file, rest, pos.saturating_add(filled as u64)) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(unix)]
fn read_at_once(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, pos)
}

#[cfg(windows)]
fn read_at_once(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, pos)
}

#[cfg(not(any(unix, windows)))]
fn read_at_once(mut file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    file.seek(SeekFrom::Start(pos))?;
    file.read(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Any mix of reads and seeks gives the bytes a plain `File` gives.
    #[test]
    fn reads_and_seeks_like_the_file() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&data).unwrap();
        let mut r = PosReader::new(&f, data.len() as u64);
        let mut got = Vec::new();
        let mut buf = [0u8; 8];
        // Headers, skips (inside and past the buffer), a big read, the end.
        for (skip, take) in [
            (0, 8),
            (3, 4),
            (5000, 8),
            (10, 2000),
            (40_000, 1),
            (0, 30_000),
        ] {
            r.seek(SeekFrom::Current(skip)).unwrap();
            let at = r.stream_position().unwrap() as usize;
            let mut want = vec![0u8; take];
            r.read_exact(&mut want).unwrap();
            assert_eq!(want, data[at..at + take]);
            got.push(at);
        }
        assert_eq!(r.seek(SeekFrom::End(-4)).unwrap(), 99_996);
        assert_eq!(r.read(&mut buf).unwrap(), 4);
        assert_eq!(buf[..4], data[99_996..]);
        assert_eq!(r.read(&mut buf).unwrap(), 0);
        assert!(r.seek(SeekFrom::Current(-200_000)).is_err());
        r.seek(SeekFrom::Start(200_000)).unwrap();
        assert_eq!(r.read(&mut buf).unwrap(), 0);
    }
}
