//! The chunk walker: a state machine over any `Read + Seek` that reads the headers and keywords
//! of every chunk and seeks past what it does not need (module docs of [`crate::png`]).

use super::chunk::{Header, Limits, KEYWORD_SCAN, MAX_CHUNK_LENGTH, SIGNATURE, SMALL_CHUNK};
use super::text::{classify, over_budget, CardKey};
use std::io::{self, Read, Seek, SeekFrom};

use crate::{Error, Result};

/// What the walker reads of each chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Read the data of card text chunks only; seek past everything else.
    CardText,
    /// Read no data but stream every chunk through the CRC (for listing).
    VerifyAll,
}

/// The states of the walker.
pub(super) enum State {
    Signature,
    Length,
    Type {
        offset: u64,
        length: u32,
    },
    Keyword {
        header: Header,
    },
    Data {
        header: Header,
        prefix: Vec<u8>,
    },
    Skip {
        header: Header,
        keyword: Option<Vec<u8>>,
        prefix_len: u32,
    },
    Crc {
        header: Header,
        keyword: Option<Vec<u8>>,
        data: Option<Vec<u8>>,
        crc: Option<u32>,
    },
    Done,
}

/// One chunk the walker finished.
#[derive(Debug)]
pub(super) struct Walked {
    pub(super) header: Header,
    /// Keyword of a text chunk.
    pub(super) keyword: Option<Vec<u8>>,
    /// Whole data, for card text chunks in [`Mode::CardText`].
    pub(super) data: Option<Vec<u8>>,
    /// CRC check result, when the chunk was hashed.
    pub(super) crc_ok: Option<bool>,
}

/// Why walking stopped early.
pub(super) struct Fault {
    pub(super) error: Error,
    /// A broken structure (truncation, bad length or type, missing `IEND`): a card read before it
    /// is still good.
    pub(super) structural: bool,
}

impl Fault {
    pub(super) fn structural(
        chunk: impl Into<String>,
        offset: u64,
        problem: impl Into<String>,
    ) -> Self {
        Fault {
            error: Error::Png {
                chunk: chunk.into(),
                offset,
                problem: problem.into(),
            },
            structural: true,
        }
    }
    pub(super) fn fatal(error: Error) -> Self {
        Fault {
            error,
            structural: false,
        }
    }
}

impl From<io::Error> for Fault {
    fn from(e: io::Error) -> Self {
        Fault::fatal(Error::Io(e))
    }
}

/// What the chunk walker reads from: any `Read + Seek` through [`Plain`], or the file reader
/// of [`crate::read_file`], which hands buffered bytes over without zeroing memory for them
/// first (issue 16: a small card's `ccv3` chunk is in its buffer after one read).
pub(crate) trait Source: Read + Seek {
    /// Appends the next `n` bytes of the stream to `v` (fewer only where the stream ends) and
    /// returns how many.
    fn append(&mut self, v: &mut Vec<u8>, n: usize) -> io::Result<usize> {
        append_by_reads(self, v, n)
    }
}

/// [`Source::append`] through plain reads into zeroed memory.
pub(crate) fn append_by_reads<R: Read + ?Sized>(
    r: &mut R,
    v: &mut Vec<u8>,
    n: usize,
) -> io::Result<usize> {
    let start = v.len();
    if start == 0 && v.capacity() < n {
        // Zeroed by the allocator in one fill: `resize` zeroes byte by byte in the npm core
        // (opt-level "s"), a tenth of a big chunk's read (issue 29).
        *v = vec![0; n];
    } else if n > ZERO_BLOCK {
        // The same for a big chunk's data after its keyword: one fill (`memory.fill`) instead of
        // block copies, the few bytes read already copied over.
        let mut fresh = vec![0; start + n];
        if let Some(head) = fresh.get_mut(..start) {
            head.copy_from_slice(v);
        }
        *v = fresh;
    } else {
        extend_zeroed(v, n);
    }
    let mut got = 0;
    let result = loop {
        let Some(rest) = v.get_mut(start + got..).filter(|r| !r.is_empty()) else {
            break Ok(got);
        };
        match r.read(rest) {
            Ok(0) => break Ok(got),
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    v.truncate(start + got);
    result
}

/// The block [`extend_zeroed`] copies zeroes from.
const ZERO_BLOCK: usize = 16 * 1024;

/// Appends `n` zero bytes to `v` in bulk copies (one `memory.copy` each in WebAssembly):
/// `resize` writes them one by one in the npm core (opt-level "s"), and a process's first read
/// runs that loop in V8's baseline code over the whole 1.9 MB chunk of the 8.6 MB card (issue 29,
/// first read in a fresh process: 1.2-2.7 ms of the first `readCard`'s main-thread time).
fn extend_zeroed(v: &mut Vec<u8>, n: usize) {
    const BLOCK: usize = ZERO_BLOCK;
    static ZEROS: [u8; BLOCK] = [0; BLOCK];
    v.reserve(n);
    let mut left = n;
    while left > 0 {
        let k = left.min(BLOCK);
        v.extend_from_slice(ZEROS.get(..k).unwrap_or_default());
        left -= k;
    }
}

/// Any `Read + Seek` as a [`Source`].
pub(super) struct Plain<R>(pub(super) R);

impl<R: Read> Read for Plain<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl<R: Seek> Seek for Plain<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.0.seek(to)
    }

    fn stream_position(&mut self) -> io::Result<u64> {
        self.0.stream_position()
    }
}

impl<R: Read + Seek> Source for Plain<R> {}

pub(super) struct Walker<'l, R> {
    pub(super) r: R,
    pub(super) state: State,
    pub(super) mode: Mode,
    pub(super) limits: &'l Limits,
    /// Absolute position in the stream.
    pub(super) pos: u64,
    /// Absolute position of the end of the stream.
    pub(super) end: u64,
    /// Absolute position of the signature.
    pub(super) start: u64,
    pub(super) chunks: u64,
    /// Bytes of card text held so far (chunk data read plus inflated text), against
    /// [`Limits::max_total_text`].
    pub(super) held: u64,
    /// Card keys already read and decoded: their later chunks are seeked past.
    pub(super) done: std::collections::HashSet<CardKey>,
}

impl<'l, R: Source> Walker<'l, R> {
    pub(super) fn new(mut r: R, mode: Mode, limits: &'l Limits) -> Result<Self> {
        let start = r.stream_position()?;
        let end = r.seek(SeekFrom::End(0))?;
        r.seek(SeekFrom::Start(start))?;
        Ok(Walker {
            r,
            state: State::Signature,
            mode,
            limits,
            pos: start,
            end,
            start,
            chunks: 0,
            held: 0,
            done: std::collections::HashSet::new(),
        })
    }

    /// Offset relative to the start of the PNG.
    pub(super) fn rel(&self, abs: u64) -> u64 {
        abs.saturating_sub(self.start)
    }

    pub(super) fn remaining(&self) -> u64 {
        self.end.saturating_sub(self.pos)
    }

    /// Reads exactly `buf.len()` bytes; a short stream is a truncation at `what`.
    pub(super) fn read_exact(
        &mut self,
        buf: &mut [u8],
        what: &Header,
    ) -> std::result::Result<(), Fault> {
        let mut filled = 0;
        while filled < buf.len() {
            let Some(rest) = buf.get_mut(filled..) else {
                break;
            };
            match self.r.read(rest) {
                Ok(0) => {
                    return Err(Fault::structural(
                        what.name(),
                        self.rel(what.offset),
                        format!("file ends at byte {} inside the chunk", self.rel(self.pos)),
                    ))
                }
                Ok(n) => {
                    filled += n;
                    self.pos += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Moves forward by `n` bytes without reading them.
    pub(super) fn skip(&mut self, n: u64) -> std::result::Result<(), Fault> {
        if n == 0 {
            return Ok(());
        }
        let delta = i64::try_from(n).map_err(|_| Fault::fatal(Error::Limit("seek".into())))?;
        self.pos = self.r.seek(SeekFrom::Current(delta))?;
        Ok(())
    }

    /// Hashes the next `n` bytes without keeping them.
    pub(super) fn hash_through(
        &mut self,
        n: u64,
        hasher: &mut crc32fast::Hasher,
        what: &Header,
    ) -> std::result::Result<(), Fault> {
        // Small chunks (every card's IHDR and IEND) through a small buffer: zeroing a 64 KiB
        // one twice per file was a third of `ccv3 validate DIR`'s instructions (issue 16).
        if n <= 64 {
            let mut buf = [0u8; 64];
            return self.hash_with(&mut buf, n, hasher, what);
        }
        if n <= u64::from(SMALL_CHUNK) {
            let mut buf = [0u8; SMALL_CHUNK as usize];
            return self.hash_with(&mut buf, n, hasher, what);
        }
        let mut buf = vec![0u8; 64 * 1024];
        self.hash_with(&mut buf, n, hasher, what)
    }

    /// Hashes the next `n` bytes, read through `buf`.
    pub(super) fn hash_with(
        &mut self,
        buf: &mut [u8],
        n: u64,
        hasher: &mut crc32fast::Hasher,
        what: &Header,
    ) -> std::result::Result<(), Fault> {
        let mut left = n;
        while left > 0 {
            let take = usize::try_from(left.min(buf.len() as u64)).unwrap_or(buf.len());
            let Some(part) = buf.get_mut(..take) else {
                break;
            };
            self.read_exact(part, what)?;
            hasher.update(part);
            left -= take as u64;
        }
        Ok(())
    }

    /// In [`Mode::CardText`], walks past the plain chunks ahead (neither text nor `IEND`, not
    /// hashed, well-formed: the image data) in a small loop of its own, and stops before the first
    /// other one, whose length the `Length` state then reads as before. For a plain chunk the
    /// state machine would count it, check it, seek past its data and CRC and hand back a chunk
    /// with no keyword, data or CRC result, which `read_card_chunks` ignores: the same here, with
    /// nothing handed back. Issue 29: in WebAssembly, [`Self::next_chunk`]'s loop (three states a
    /// chunk) got hot on a PNG of 231 `IDAT` chunks in a process's first read, and V8 recompiled
    /// the whole 5 KB function with its optimising compiler (12 ms of CPU under load) for a read
    /// that had nearly finished with it.
    #[inline(never)]
    fn skip_plain_chunks(&mut self) -> std::result::Result<(), Fault> {
        loop {
            if self.remaining() < 8 || self.chunks >= self.limits.max_chunks {
                return Ok(());
            }
            let offset = self.pos;
            let mut head = [0u8; 8];
            let probe = Header {
                kind: *b"????",
                offset,
                length: 0,
            };
            self.read_exact(&mut head, &probe)?;
            let [l0, l1, l2, l3, k0, k1, k2, k3] = head;
            let length = u32::from_be_bytes([l0, l1, l2, l3]);
            let header = Header {
                kind: [k0, k1, k2, k3],
                offset,
                length,
            };
            // The Skip state's own condition for hashing a small chunk in this mode.
            let hashed = self.limits.verify_crc
                && length <= SMALL_CHUNK
                && !matches!(&header.kind, b"IDAT" | b"fdAT");
            let plain = length <= MAX_CHUNK_LENGTH
                && header.kind.iter().all(u8::is_ascii_alphabetic)
                && u64::from(length) + 4 <= self.remaining()
                && !header.is_text()
                && &header.kind != b"IEND"
                && !hashed;
            if !plain {
                // Back to the chunk's start: the states read it as before.
                self.pos = self.r.seek(SeekFrom::Start(offset))?;
                return Ok(());
            }
            self.chunks += 1;
            self.skip(u64::from(length) + 4)?;
        }
    }

    /// Runs the state machine until one chunk is complete (`Some`) or the stream ended at `IEND`
    /// (`None`).
    ///
    /// Longer than 150 lines on purpose: the state machine of the module docs is one `match`,
    /// one arm per state, each reading where the one before stopped; as separate functions
    /// every arm would take the whole walker and the loop would still have to dispatch them.
    pub(super) fn next_chunk(&mut self) -> std::result::Result<Option<Walked>, Fault> {
        loop {
            let state = std::mem::replace(&mut self.state, State::Done);
            match state {
                State::Signature => {
                    let mut sig = [0u8; 8];
                    let mut got = 0;
                    while got < sig.len() {
                        let Some(rest) = sig.get_mut(got..) else {
                            break;
                        };
                        match self.r.read(rest) {
                            Ok(0) => break,
                            Ok(n) => got += n,
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                            Err(e) => return Err(e.into()),
                        }
                    }
                    self.pos += got as u64;
                    if got < sig.len() || sig != SIGNATURE {
                        return Err(Fault::fatal(Error::Png {
                            chunk: "signature".into(),
                            offset: 0,
                            problem: "not a PNG file: the 8-byte PNG signature is missing".into(),
                        }));
                    }
                    self.state = State::Length;
                }
                State::Length => {
                    if self.mode == Mode::CardText {
                        self.skip_plain_chunks()?;
                    }
                    let offset = self.pos;
                    if self.remaining() == 0 {
                        return Err(Fault::structural(
                            "IEND",
                            self.rel(offset),
                            "file ends without an IEND chunk",
                        ));
                    }
                    self.chunks += 1;
                    if self.chunks > self.limits.max_chunks {
                        return Err(Fault::fatal(Error::Limit(format!(
                            "more than {} PNG chunks",
                            self.limits.max_chunks
                        ))));
                    }
                    let probe = Header {
                        kind: *b"????",
                        offset,
                        length: 0,
                    };
                    let mut len = [0u8; 4];
                    self.read_exact(&mut len, &probe)?;
                    let length = u32::from_be_bytes(len);
                    if length > MAX_CHUNK_LENGTH {
                        return Err(Fault::structural(
                            "????",
                            self.rel(offset),
                            format!("chunk length {length} exceeds 2^31-1"),
                        ));
                    }
                    self.state = State::Type { offset, length };
                }
                State::Type { offset, length } => {
                    let mut kind = [0u8; 4];
                    self.read_exact(
                        &mut kind,
                        &Header {
                            kind: *b"????",
                            offset,
                            length,
                        },
                    )?;
                    let header = Header {
                        kind,
                        offset,
                        length,
                    };
                    if !kind.iter().all(u8::is_ascii_alphabetic) {
                        return Err(Fault::structural(
                            header.name(),
                            self.rel(offset),
                            "chunk type is not four ASCII letters: the chunk stream is corrupt",
                        ));
                    }
                    // Data plus CRC must fit in what is left of the stream.
                    if u64::from(length) + 4 > self.remaining() {
                        return Err(Fault::structural(
                            header.name(),
                            self.rel(offset),
                            format!(
                                "chunk declares {length} data bytes but the file has only {} \
                                 bytes left: the file is truncated",
                                self.remaining().saturating_sub(4)
                            ),
                        ));
                    }
                    self.state = if header.is_text() {
                        State::Keyword { header }
                    } else {
                        State::Skip {
                            header,
                            keyword: None,
                            prefix_len: 0,
                        }
                    };
                }
                State::Keyword { header } => {
                    let scan = header.length.min(KEYWORD_SCAN);
                    let mut prefix = vec![0u8; scan as usize];
                    self.read_exact(&mut prefix, &header)?;
                    let keyword = memchr::memchr(0, &prefix)
                        .and_then(|nul| prefix.get(..nul))
                        .map(<[u8]>::to_vec);
                    let wanted = match keyword.as_deref().and_then(classify) {
                        // A key already read: a duplicate, reported but never read.
                        Some(key) if self.done.contains(&key) => false,
                        Some(CardKey::Chara) => self.limits.read_chara,
                        Some(_) => true,
                        None => false,
                    };
                    let verify_small = self.mode == Mode::CardText
                        && self.limits.verify_crc
                        && header.length <= SMALL_CHUNK;
                    self.state = if self.mode == Mode::CardText && wanted {
                        State::Data { header, prefix }
                    } else if self.mode == Mode::VerifyAll || verify_small {
                        // Hash the prefix now, then the rest.
                        let mut hasher = crc32fast::Hasher::new();
                        hasher.update(&header.kind);
                        hasher.update(&prefix);
                        let rest = u64::from(header.length - scan);
                        self.hash_through(rest, &mut hasher, &header)?;
                        State::Crc {
                            header,
                            keyword,
                            data: None,
                            crc: Some(hasher.finalize()),
                        }
                    } else {
                        State::Skip {
                            header,
                            keyword,
                            prefix_len: scan,
                        }
                    };
                }
                State::Data { header, mut prefix } => {
                    let length = u64::from(header.length);
                    if length > self.limits.max_text_chunk {
                        return Err(Fault::fatal(Error::Limit(format!(
                            "{} chunk at byte {} is {length} bytes, above the limit of {}",
                            header.name(),
                            self.rel(header.offset),
                            self.limits.max_text_chunk
                        ))));
                    }
                    if self.held.saturating_add(length) > self.limits.max_total_text {
                        return Err(Fault::fatal(over_budget(
                            self.limits,
                            &header.name(),
                            self.rel(header.offset),
                        )));
                    }
                    self.held += length;
                    let want = (header.length as usize).saturating_sub(prefix.len());
                    let got = self.r.append(&mut prefix, want)?;
                    self.pos += got as u64;
                    if got < want {
                        return Err(Fault::structural(
                            header.name(),
                            self.rel(header.offset),
                            format!("file ends at byte {} inside the chunk", self.rel(self.pos)),
                        ));
                    }
                    let crc = self.limits.verify_crc.then(|| {
                        let mut hasher = crc32fast::Hasher::new();
                        hasher.update(&header.kind);
                        hasher.update(&prefix);
                        hasher.finalize()
                    });
                    let keyword = memchr::memchr(0, &prefix)
                        .and_then(|n| prefix.get(..n))
                        .map(<[u8]>::to_vec);
                    self.state = State::Crc {
                        header,
                        keyword,
                        data: Some(prefix),
                        crc,
                    };
                }
                State::Skip {
                    header,
                    keyword,
                    prefix_len,
                } => {
                    let rest = u64::from(header.length - prefix_len.min(header.length));
                    let verify_small = self.limits.verify_crc
                        && header.length <= SMALL_CHUNK
                        && prefix_len == 0
                        && !matches!(&header.kind, b"IDAT" | b"fdAT");
                    if self.mode == Mode::VerifyAll || verify_small {
                        let mut hasher = crc32fast::Hasher::new();
                        hasher.update(&header.kind);
                        self.hash_through(rest, &mut hasher, &header)?;
                        self.state = State::Crc {
                            header,
                            keyword,
                            data: None,
                            crc: Some(hasher.finalize()),
                        };
                    } else {
                        self.skip(rest)?;
                        self.state = State::Crc {
                            header,
                            keyword,
                            data: None,
                            crc: None,
                        };
                    }
                }
                State::Crc {
                    header,
                    keyword,
                    data,
                    crc,
                } => {
                    let crc_ok = match crc {
                        Some(computed) => {
                            let mut stored = [0u8; 4];
                            self.read_exact(&mut stored, &header)?;
                            Some(u32::from_be_bytes(stored) == computed)
                        }
                        None => {
                            self.skip(4)?;
                            None
                        }
                    };
                    self.state = if &header.kind == b"IEND" {
                        State::Done
                    } else {
                        State::Length
                    };
                    return Ok(Some(Walked {
                        header,
                        keyword,
                        data,
                        crc_ok,
                    }));
                }
                State::Done => return Ok(None),
            }
        }
    }
}
