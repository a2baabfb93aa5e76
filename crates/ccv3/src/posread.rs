//! A file read at positions through one small buffer (issue 16: `ccv3 validate` of a folder of
//! 10,000 PNG cards).
//!
//! The PNG reader reads chunk headers of a few bytes and seeks past everything else. Through a
//! `BufReader<File>`, every seek is an `lseek` that throws the buffer away and every header is
//! one more `read`: a dozen system calls per small card, as much time as decoding it. This
//! reader keeps the position itself (a seek is no system call), reads with positional reads
//! (`pread`), serves small reads from one buffer filled at the position asked, and reads what
//! is as large as that buffer straight into the caller's memory.
//!
//! Reading a file costs a system call per read and a copy per byte, so a small card is read in
//! three calls (issue 16; 1,024 bytes at 0, 512 at the `chara` chunk, which is seeked past, and
//! the rest from the `ccv3` chunk's header to the end):
//!
//! - a refill (not the first read) that starts within [`TAIL`] bytes of the end reads to the
//!   end: card chunks usually come last, just before `IEND` (writers insert them there). The
//!   first read never does this, so a picture is read only where it lies within the last
//!   [`TAIL`] bytes of the file;
//! - a read straight into the caller's memory (a card chunk's data) brings the [`REFILL`] bytes
//!   after it (the CRC, the next chunk's header) into the buffer in the same call (`preadv`, on
//!   Linux), where the next read would have been one more call.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

/// Bytes read by the first read of a file: the signature, `IHDR` and the small chunks before the
/// picture's first header in most PNGs. Every byte read is copied: more would mostly be picture.
pub(crate) const FIRST_READ: usize = 1024;

/// Bytes read when a small read falls outside the buffer: a chunk header and a text chunk's
/// keyword, without much of the data that follows (image data is seeked past, not read).
pub(crate) const REFILL: usize = 512;

/// A refill that starts this close to the end of the file reads to the end (see the module
/// docs). Small: every byte read is copied, and a byte not needed (a `chara` backfill seeked
/// past) costs more than the call it saves once there are a few thousand of them.
pub(crate) const TAIL: u64 = 16 * 1024;

/// Memory that reads of many files reuse: one per thread that reads files, handed to
/// [`crate::read_open_file_reusing`] for each of them (issue 16: `ccv3 validate DIR` keeps one
/// per worker). The next file's reads then write over memory already zeroed and mapped instead
/// of a fresh buffer; it holds at most 16 KiB whatever was read.
///
/// ```
/// let mut scratch = ccv3::ReadScratch::new();
/// # let _ = &mut scratch;
/// ```
#[derive(Debug, Default)]
pub struct ReadScratch {
    /// The buffer of the last reader, for the next one.
    buf: Vec<u8>,
}

impl ReadScratch {
    /// Empty scratch memory (nothing is allocated until a file is read).
    pub fn new() -> Self {
        ReadScratch::default()
    }
}

/// Reads made and bytes read from a file, for tests.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    /// Reads made so far (system calls).
    #[cfg_attr(not(test), allow(dead_code))]
    reads: u32,
    /// Bytes read from the file so far.
    #[cfg_attr(not(test), allow(dead_code))]
    bytes: u64,
}

impl Tally {
    /// Counts one read that brought `n` bytes.
    fn add(&mut self, n: usize) {
        self.reads = self.reads.saturating_add(1);
        self.bytes = self.bytes.saturating_add(n as u64);
    }
}

/// A [`File`] read at positions (see the module docs). It never moves the file's own cursor
/// where positional reads exist (Unix, Windows moves it).
pub(crate) struct PosReader<'f> {
    file: &'f File,
    /// The file's length when it was opened (what `SeekFrom::End` counts from).
    len: u64,
    /// The position of the next read.
    pos: u64,
    /// Bytes of the file from `buf_at` on: the first `filled` of them. The rest is memory
    /// already written, kept so a refill need not zero it again (the caller's scratch).
    buf: &'f mut Vec<u8>,
    filled: usize,
    buf_at: u64,
    /// True once the first read was made.
    started: bool,
    /// Reads and bytes so far.
    tally: Tally,
}

impl<'f> PosReader<'f> {
    /// A reader of `file`, `len` bytes long, at position 0, reading through `scratch`'s memory.
    pub(crate) fn new(file: &'f File, len: u64, scratch: &'f mut ReadScratch) -> Self {
        PosReader {
            file,
            len,
            pos: 0,
            buf: &mut scratch.buf,
            filled: 0,
            buf_at: 0,
            started: false,
            tally: Tally::default(),
        }
    }

    /// Makes the buffer at least `n` bytes long (zeroing only what was never written).
    fn ensure_buf(&mut self, n: usize) {
        if self.buf.len() < n {
            self.buf.resize(n, 0);
        }
    }

    /// How many bytes a read that finds nothing in the buffer reads into it.
    fn fill_size(&self) -> usize {
        if !self.started {
            return FIRST_READ;
        }
        match self.len.checked_sub(self.pos) {
            Some(left) if left <= TAIL => usize::try_from(left).map_or(REFILL, |l| l.max(REFILL)),
            _ => REFILL,
        }
    }

    /// Fills the buffer from the position with [`PosReader::fill_size`] bytes (fewer at the
    /// end of the file).
    fn refill(&mut self) -> io::Result<()> {
        let want = self.fill_size();
        self.started = true;
        self.ensure_buf(want);
        let n = read_at(
            self.file,
            self.buf.get_mut(..want).unwrap_or_default(),
            self.pos,
            self.len,
            &mut self.tally,
        )?;
        self.filled = n;
        self.buf_at = self.pos;
        Ok(())
    }

    /// Reads `out` at the position straight into it, and (with `preadv`) the [`REFILL`] bytes
    /// after it into the buffer in the same call. Returns the bytes put into `out`, all of them
    /// unless the file ends first.
    fn read_through(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.started = true;
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            let end = self.pos.saturating_add(out.len() as u64);
            if end < self.len {
                self.ensure_buf(REFILL);
                self.filled = 0;
                let after = self.buf.get_mut(..REFILL).unwrap_or_default();
                let got = read_two_at(self.file, out, after, self.pos, &mut self.tally)?;
                if let Some(after) = got.checked_sub(out.len()) {
                    self.filled = after;
                    self.buf_at = end;
                    return Ok(out.len());
                }
                // A short read (the file shrank, or a signal): finish `out` with plain reads.
                let at = self.pos.saturating_add(got as u64);
                let rest = out.get_mut(got..).unwrap_or_default();
                let more = read_at(self.file, rest, at, self.len, &mut self.tally)?;
                return Ok(got + more);
            }
        }
        read_at(self.file, out, self.pos, self.len, &mut self.tally)
    }
}

impl PosReader<'_> {
    /// Where the position is in the buffer, when it is.
    fn buffered_at(&self) -> Option<usize> {
        self.pos
            .checked_sub(self.buf_at)
            .and_then(|off| usize::try_from(off).ok())
            .filter(|&off| off < self.filled)
    }
}

/// The PNG walker's reads of card chunk data: what is in the buffer is appended as it is,
/// without zeroing memory for it first; the rest is read as [`Read`] reads it.
impl crate::png::Source for &mut PosReader<'_> {
    fn append(&mut self, v: &mut Vec<u8>, n: usize) -> io::Result<usize> {
        let mut got = 0;
        if let Some(off) = self.buffered_at() {
            let have = self.buf.get(off..self.filled).unwrap_or_default();
            let take = have.len().min(n);
            v.extend_from_slice(have.get(..take).unwrap_or_default());
            self.pos += take as u64;
            got = take;
        }
        if got < n {
            got += crate::png::append_by_reads(&mut **self, v, n - got)?;
        }
        Ok(got)
    }
}

impl Read for PosReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        let in_buf = self.buffered_at();
        let direct = if self.started { REFILL } else { FIRST_READ };
        let off = match in_buf {
            Some(off) => off,
            None if out.len() >= direct => {
                let n = self.read_through(out)?;
                self.pos += n as u64;
                return Ok(n);
            }
            None => {
                self.refill()?;
                if self.filled == 0 {
                    return Ok(0);
                }
                0
            }
        };
        let have = self.buf.get(off..self.filled).unwrap_or_default();
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

/// Reads up to `buf.len()` bytes of `file` at `pos` (fewer only at the end of the file),
/// counting each read and its bytes in `tally`. A short read that reaches `len` (the file's
/// length when opened) is not retried: that would be one more system call to learn the end is
/// the end.
fn read_at(
    file: &File,
    buf: &mut [u8],
    pos: u64,
    len: u64,
    tally: &mut Tally,
) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        if filled > 0 && pos.saturating_add(filled as u64) >= len {
            break;
        }
        let Some(rest) = buf.get_mut(filled..) else {
            break;
        };
        match read_at_once(file, rest, pos.saturating_add(filled as u64)) {
            Ok(0) => {
                tally.add(0);
                break;
            }
            Ok(n) => {
                tally.add(n);
                filled += n;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => tally.add(0),
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// One read of `file` at `pos` into `first` and then `second` (`preadv`), counted in `tally`;
/// the bytes read (fewer than both only at the end of the file, or on a signal).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn read_two_at(
    file: &File,
    first: &mut [u8],
    second: &mut [u8],
    pos: u64,
    tally: &mut Tally,
) -> io::Result<usize> {
    loop {
        let mut parts = [io::IoSliceMut::new(first), io::IoSliceMut::new(second)];
        let got = rustix::io::preadv(file, &mut parts, pos);
        tally.add(*got.as_ref().unwrap_or(&0));
        match got {
            Ok(n) => return Ok(n),
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
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
        let mut scratch = ReadScratch::new();
        let mut r = PosReader::new(&f, data.len() as u64, &mut scratch);
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

    /// Random mixes of seeks and reads of every size, over files of sizes around the first
    /// read, the refill and the tail, give the bytes a plain `File` gives (the tail read and
    /// the read-ahead after a direct read never serve stale or missing bytes).
    #[test]
    fn random_reads_match_the_file() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n.max(1)
        };
        for size in [0usize, 7, 600, 4_096, 5_000, 16_384, 20_000, 70_000] {
            let data: Vec<u8> = (0..size as u32).map(|i| (i * 31 % 253) as u8).collect();
            let mut f = tempfile::tempfile().unwrap();
            f.write_all(&data).unwrap();
            let mut scratch = ReadScratch::new();
            for _ in 0..20 {
                let mut r = PosReader::new(&f, size as u64, &mut scratch);
                for _ in 0..30 {
                    let at = next(size as u64 + 10);
                    let take = match next(4) {
                        0 => next(16),
                        1 => next(600),
                        2 => 512 + next(5_000),
                        _ => next(30_000),
                    } as usize;
                    r.seek(SeekFrom::Start(at)).unwrap();
                    let mut got = vec![0u8; take];
                    let mut n = 0;
                    while n < take {
                        match r.read(&mut got[n..]).unwrap() {
                            0 => break,
                            k => n += k,
                        }
                    }
                    let from = (at as usize).min(size);
                    let want = &data[from..(from + take).min(size)];
                    assert_eq!(&got[..n], want, "size {size}, {take} bytes at {at}");
                }
            }
        }
    }

    /// Issue 16 (no hidden library state): the caller's scratch, kept from one file to the
    /// next, serves only the bytes of the file being read, and stays within [`TAIL`] bytes.
    #[test]
    fn a_scratch_reused_for_another_file_serves_only_its_bytes() {
        let first: Vec<u8> = (0..40_000u32).map(|i| (i % 251) as u8).collect();
        let second: Vec<u8> = (0..6_000u32).map(|i| 255 - (i % 241) as u8).collect();
        let mut scratch = ReadScratch::new();
        for data in [&first, &second, &first] {
            let mut f = tempfile::tempfile().unwrap();
            f.write_all(data).unwrap();
            let mut r = PosReader::new(&f, data.len() as u64, &mut scratch);
            for at in [0u64, 700, 5_500, 30_000] {
                r.seek(SeekFrom::Start(at)).unwrap();
                let mut got = vec![0u8; 300];
                let n = r.read(&mut got).unwrap();
                let from = (at as usize).min(data.len());
                assert_eq!(&got[..n], &data[from..(from + 300).min(data.len())]);
            }
            let mut rest = Vec::new();
            r.seek(SeekFrom::Start(0)).unwrap();
            r.read_to_end(&mut rest).unwrap();
            assert_eq!(&rest, data);
        }
        assert!(scratch.buf.len() <= TAIL as usize, "{}", scratch.buf.len());
    }

    /// A PNG chunk: length, type, data, CRC.
    fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut c = (data.len() as u32).to_be_bytes().to_vec();
        c.extend_from_slice(kind);
        c.extend_from_slice(data);
        let mut h = crc32fast::Hasher::new();
        h.update(kind);
        h.update(data);
        c.extend_from_slice(&h.finalize().to_be_bytes());
        c
    }

    /// A card as SillyTavern writes one (the bench folder's small cards, issue 16): IHDR, the
    /// picture, the `chara` backfill and the `ccv3` chunk before IEND.
    fn card(picture: usize, text: usize) -> (Vec<u8>, String) {
        let json = format!(
            "{{\"spec\":\"chara_card_v3\",\"x\":\"{}\"}}",
            "a".repeat(text)
        );
        let b64 = crate::png::encode_text_value(&json);
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.extend(chunk(b"IHDR", &[0, 0, 0, 96, 0, 0, 0, 96, 8, 6, 0, 0, 0]));
        png.extend(chunk(b"IDAT", &vec![7u8; picture]));
        for keyword in [&b"chara"[..], b"ccv3"] {
            let mut data = keyword.to_vec();
            data.push(0);
            data.extend_from_slice(&b64);
            png.extend(chunk(b"tEXt", &data));
        }
        png.extend(chunk(b"IEND", b""));
        (png, json)
    }

    /// Reads `png`'s card chunks as `ccv3 validate` does (the `chara` chunk seeked past); the
    /// reader's counts of reads and bytes after it.
    fn read_card(png: &[u8]) -> (crate::png::CardChunks, u32, u64) {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(png).unwrap();
        let mut scratch = ReadScratch::new();
        let mut r = PosReader::new(&f, png.len() as u64, &mut scratch);
        let limits = crate::png::Limits {
            read_chara: false,
            ..crate::png::Limits::default()
        };
        let chunks = crate::png::read_card_chunks_from(&mut r, &limits).unwrap();
        (chunks, r.tally.reads, r.tally.bytes)
    }

    /// Issue 16 ("validating a folder of 10,000 PNG cards ... 10x faster"): a small card (a
    /// 27 KB picture, 9 KB card chunks) is read in three reads (the start, the `chara` header,
    /// the `ccv3` chunk to the end), and neither the picture nor the `chara` text is read.
    #[test]
    fn a_small_card_takes_three_reads() {
        let (png, json) = card(27_760, 6_700);
        let (chunks, reads, bytes) = read_card(&png);
        assert_eq!(chunks.ccv3.as_deref(), Some(json.as_str()));
        assert!(chunks.chara_skipped);
        assert_eq!(reads, 3);
        let ccv3_chunk = png.len() - 12 - (8 + 5 + 4 * (json.len() + 2) / 3 + 4);
        assert!(bytes < (FIRST_READ + REFILL) as u64 + (png.len() - ccv3_chunk) as u64 + 8);
    }

    /// Reads and bytes are counted once each, where the reads are made: a file read whole
    /// through the reader counts its bytes exactly, whichever way each read went.
    #[test]
    fn reads_and_bytes_are_counted_where_they_are_made() {
        let data: Vec<u8> = (0..50_000u32).map(|i| (i % 199) as u8).collect();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&data).unwrap();
        let mut scratch = ReadScratch::new();
        let mut r = PosReader::new(&f, data.len() as u64, &mut scratch);
        let mut head = [0u8; 100];
        r.read_exact(&mut head).unwrap();
        r.seek(SeekFrom::Start(FIRST_READ as u64)).unwrap();
        let mut big = vec![0u8; 20_000];
        r.read_exact(&mut big).unwrap();
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, data[FIRST_READ + 20_000..]);
        assert_eq!(r.tally.bytes, data.len() as u64);
        assert!(r.tally.reads >= 3, "{} reads", r.tally.reads);
    }

    /// Issue 16 ("image data must never be read"): a big picture before the card chunks is
    /// seeked past, and a card chunk bigger than the tail read is read straight into its
    /// buffer, the CRC and `IEND` after it coming with it (`preadv` on Linux).
    #[test]
    fn a_big_picture_is_never_read() {
        let (png, json) = card(3_000_000, 40_000);
        let (chunks, reads, bytes) = read_card(&png);
        assert_eq!(chunks.ccv3.as_deref(), Some(json.as_str()));
        let text = 4 * (json.len() + 2) / 3 + 5;
        assert!(
            bytes < (FIRST_READ + 3 * REFILL + text) as u64,
            "{bytes} bytes read"
        );
        let expected = if cfg!(any(target_os = "linux", target_os = "android")) {
            4
        } else {
            5
        };
        assert_eq!(reads, expected);
    }
}
