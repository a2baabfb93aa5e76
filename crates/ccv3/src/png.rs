//! PNG and APNG card chunks: reading, listing and rewriting the text chunks that hold a card.
//!
//! # The PNG chunk layout
//!
//! A PNG (and an APNG, which is a PNG with extra chunks) is an 8-byte signature
//! `89 50 4E 47 0D 0A 1A 0A` followed by chunks. Every chunk is
//!
//! ```text
//! +----------------+--------------+--------------------+----------------------------+
//! | length: u32 BE | type: 4 ASCII| data: length bytes | CRC-32 of type+data: u32 BE |
//! +----------------+--------------+--------------------+----------------------------+
//! ```
//!
//! `length` counts the data only and is at most 2^31-1. The type is four ASCII letters; a
//! lowercase first letter marks an *ancillary* chunk (one a decoder may ignore). `IHDR` comes
//! first, `IEND` (empty) ends the stream; image data lives in `IDAT` (and APNG frames in
//! `fdAT`, with `acTL`/`fcTL` control chunks). Text chunks are ancillary and may sit anywhere
//! between `IHDR` and `IEND`, including after the image data.
//!
//! # The three text chunk forms
//!
//! * `tEXt`: `keyword NUL text`. Keyword is 1-79 Latin-1 bytes; text is Latin-1, uncompressed.
//! * `zTXt`: `keyword NUL method text`, where `method` is 0 (zlib/deflate) and `text` is the
//!   zlib stream of Latin-1 text.
//! * `iTXt`: `keyword NUL flag method language NUL translated-keyword NUL text`, where `flag` 1
//!   means `text` is a zlib stream (method 0) and the text is UTF-8.
//!
//! # Where a card lives
//!
//! Character Card V3 (section "PNG/APNG") stores the card in a `tEXt` chunk with keyword `ccv3`
//! whose value is base64 of the UTF-8 JSON of the V3 card. Older tools (and V3 applications
//! backfilling V2) write keyword `chara` with the same encoding, holding a V2, V1 or even V3 card.
//! Chunks named `chara-ext-asset_:PATH` hold base64 binary data reachable as `__asset:PATH`.
//!
//! # Reading
//!
//! [`read_card_chunks`] walks the chunk stream with an explicit state machine
//! (`Signature -> Length -> Type -> Keyword -> Data | Skip -> Crc`) over any `Read + Seek`. Only
//! text chunks are looked into: their keyword is read first, and only card keywords have their
//! data read. Every other chunk (`IDAT`, `fdAT`, a multi-megabyte `risuai` text chunk, ...) is
//! *seeked past*: image data is never read or inflated, so a 44 MB picture costs what a 4 MB one
//! does. Sizes are checked against [`Limits`] and against the stream length before anything is
//! allocated.
//!
//! Choices where the spec is silent (following what SillyTavern and other readers accept):
//!
//! * `tEXt`, `zTXt` and `iTXt` are all accepted; keywords match ASCII case-insensitively.
//! * Both `ccv3` and `chara` are returned; choosing between them is the caller's job (the spec
//!   says `ccv3` SHOULD win).
//! * When a keyword occurs twice, the first chunk (in file order) whose value decodes is kept and
//!   the others are reported as a warning (`png-duplicate-chunk`); once a key is read, its later
//!   chunks are seeked past like image data (found with one hash lookup, never read or inflated).
//! * One budget per file ([`Limits::max_total_text`]) covers every card text chunk read and
//!   everything its zTXt/iTXt text inflates to, checked while inflating; at most
//!   [`Limits::max_assets`] asset chunks are read; at most 100 diagnostics of one code are listed,
//!   then one counts the rest (issue 12).
//! * Values are base64; whitespace inside, missing padding and the URL-safe alphabet are accepted
//!   with a warning (`png-base64-lenient`); a raw JSON text (starting with `{`) instead of
//!   base64 is accepted with a warning (`png-text-not-base64`).
//! * Asset keywords `chara-ext-asset_:PATH` and `chara-ext-asset_PATH` both give `PATH`.
//! * A bad CRC on a card text chunk is a warning (`png-bad-crc`): text chunks are ancillary.
//!   The CRCs of the other small chunks (up to [`SMALL_CHUNK`] bytes: `IEND`, `tIME`, other
//!   text chunks, ...) are checked too, and a mismatch is the same warning, naming the chunk
//!   type and byte offset; image data (`IDAT`, `fdAT`) and big chunks are seeked past unchecked.
//! * A stream that is truncated or corrupt *after* a `ccv3` or `chara` chunk was read gives the
//!   card and a warning (`png-truncated`, naming the chunk type and byte offset); before that it
//!   is an [`Error::Png`].
//! * Bytes after `IEND` are ignored with a warning (`png-data-after-iend`, naming where they
//!   start).
//! * A card chunk whose value cannot be decoded (bad base64, broken compression) is an error
//!   (`png-card-chunk-undecodable`) only when no other card chunk reads; when the other one
//!   (`chara` beside a broken `ccv3`, say) reads, it is a warning and the card is read from it
//!   (issue 13).
//!
//! # Writing
//!
//! [`write_card_chunks`] removes every `ccv3`, `chara` and `chara-ext-asset_*` chunk in all three
//! forms, inserts the given chunks as `tEXt` right before `IEND`, and copies every other chunk
//! (including APNG `acTL`/`fcTL`/`fdAT`) and any bytes after `IEND` byte for byte, in order.
//!
//! ```
//! let png = ccv3::png::plain_image();
//! let value = ccv3::png::encode_text_value(r#"{"spec":"chara_card_v3"}"#);
//! let out = ccv3::png::write_card_chunks(&png, &[("ccv3", &value)])?;
//! let chunks = ccv3::png::read_card_chunks_from_slice(&out)?;
//! assert_eq!(chunks.ccv3.as_deref(), Some(r#"{"spec":"chara_card_v3"}"#));
//! # Ok::<(), ccv3::Error>(())
//! ```

use std::io::{self, Cursor, Read, Seek, SeekFrom, Write};

use base64_simd::STANDARD;

use crate::{Diagnostic, Error, Result};

/// The 8-byte PNG signature.
pub const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

/// Largest chunk length the PNG specification allows (2^31 - 1).
const MAX_CHUNK_LENGTH: u32 = 0x7FFF_FFFF;

/// Chunks up to this many bytes (other than image data) have their CRC checked even when they
/// are not card chunks: reading them costs no more than seeking past them.
pub const SMALL_CHUNK: u32 = 4096;

/// How many bytes of a text chunk are read to find its keyword (the spec allows 79; some tools
/// write longer asset keywords).
const KEYWORD_SCAN: u32 = 256;

/// Longest keyword the writer accepts (the PNG specification's limit).
const MAX_KEYWORD: usize = 79;

/// Case-insensitive prefix of asset keywords.
const ASSET_PREFIX: &[u8] = b"chara-ext-asset_";

/// Safety limits of the reader, checked before anything is allocated (and, for compressed text,
/// while inflating: a stream is never inflated past what is left of the budget).
///
/// The defaults are far above real cards (the biggest are about 60 MB) and keep a whole read
/// under a few hundred MiB of memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest card text chunk (data length) that is read, in bytes. Default 256 MiB.
    pub max_text_chunk: u64,
    /// Largest inflated size of one `zTXt`/`iTXt` value, in bytes. Default 256 MiB.
    pub max_inflated: u64,
    /// The budget of one file, in bytes: the data of every card text chunk read plus what its
    /// compressed text inflates to, all chunks together (`ccv3`, `chara`, every asset).
    /// Duplicates of a chunk already read are seeked past and cost nothing. Default 256 MiB.
    pub max_total_text: u64,
    /// Largest number of chunks walked.
    pub max_chunks: u64,
    /// Most distinct asset chunks (`chara-ext-asset_:PATH`) read. Default 20,000, the CHARX
    /// reader's entry limit: a card with more could not be written as a CHARX that reads back,
    /// and extracting it would make hundreds of thousands of files (issue 12).
    pub max_assets: usize,
    /// Read `chara` chunks (the default). Readers that only want the card and prefer `ccv3`
    /// turn this off: `chara` chunks are then seeked past like image data and reported in
    /// [`CardChunks::chara_skipped`], so the caller reads again only when `ccv3` is missing.
    pub read_chara: bool,
    /// Check the CRC of each card text chunk read (the default; a mismatch is a `png-bad-crc`
    /// warning and the value is used anyway). Readers that drop the diagnostics turn it off and
    /// save hashing megabytes of text.
    pub verify_crc: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_text_chunk: 256 << 20,
            max_inflated: 256 << 20,
            max_total_text: 256 << 20,
            max_chunks: 1_000_000,
            max_assets: 20_000,
            read_chara: true,
            verify_crc: true,
        }
    }
}

/// The card text chunks of one PNG, decoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CardChunks {
    /// JSON text of the first decodable `ccv3` chunk.
    pub ccv3: Option<String>,
    /// JSON text of the first decodable `chara` chunk.
    pub chara: Option<String>,
    /// `chara-ext-asset_` chunks as `(PATH, decoded bytes)`, in file order.
    pub assets: Vec<(String, Vec<u8>)>,
    /// True when a `chara` chunk was present but skipped ([`Limits::read_chara`] off).
    pub chara_skipped: bool,
    /// Where the `ccv3` value was read from (for errors about its JSON).
    pub ccv3_chunk: Option<ChunkPlace>,
    /// Where the `chara` value was read from (for errors about its JSON).
    pub chara_chunk: Option<ChunkPlace>,
    /// What was repaired or skipped while reading.
    pub diagnostics: Vec<Diagnostic>,
}

/// The data of a PNG's first `eXIf` chunk (EXIF), or `None` when it has none (Backyard AI's
/// Faraday-era PNG exports keep their character there, [`crate::faraday`]). Only chunk headers
/// are read until the chunk is found; reading stops at `IEND`, after [`MAX_EXIF_WALK`] chunks,
/// or at the end of the data.
///
/// # Errors
///
/// [`Error::Limit`] for an `eXIf` chunk over `max_len` bytes; [`Error::Io`] when reading fails.
pub fn read_exif_chunk<R: Read + Seek>(mut r: R, max_len: u64) -> Result<Option<Vec<u8>>> {
    let mut sig = [0u8; 8];
    if r.read_exact(&mut sig).is_err() || sig != SIGNATURE {
        return Ok(None);
    }
    for _ in 0..MAX_EXIF_WALK {
        let mut head = [0u8; 8];
        if r.read_exact(&mut head).is_err() {
            return Ok(None);
        }
        let len = u64::from(u32::from_be_bytes([head[0], head[1], head[2], head[3]]));
        match &head[4..8] {
            b"eXIf" => {
                if len > max_len {
                    return Err(Error::Limit(format!(
                        "eXIf chunk of {len} bytes is over the limit of {max_len} bytes"
                    )));
                }
                // The length is what the file says: grow as bytes arrive.
                let mut data = Vec::with_capacity(len.min(64 * 1024) as usize);
                r.by_ref().take(len).read_to_end(&mut data)?;
                return Ok((data.len() as u64 == len).then_some(data));
            }
            b"IEND" => return Ok(None),
            _ => {
                r.seek(SeekFrom::Current(len as i64 + 4))?;
            }
        }
    }
    Ok(None)
}

/// The most chunk headers [`read_exif_chunk`] reads.
pub const MAX_EXIF_WALK: usize = 100_000;

/// Where a text chunk sits in a PNG: its type and the byte offset of its length field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkPlace {
    /// `tEXt`, `zTXt` or `iTXt`.
    pub kind: String,
    /// Byte offset of the chunk in the file (of its length field).
    pub offset: u64,
}

/// One chunk of a PNG, as listed by [`list_chunks`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkInfo {
    /// The chunk type (`IHDR`, `tEXt`, ...); non-ASCII bytes are shown as `?`.
    pub kind: String,
    /// Byte offset of the chunk's length field.
    pub offset: u64,
    /// Length of the chunk data.
    pub length: u32,
    /// Whether the stored CRC matches.
    pub crc_ok: bool,
    /// The keyword of a `tEXt`/`zTXt`/`iTXt` chunk (Latin-1 decoded).
    pub keyword: Option<String>,
}

/// True when `bytes` starts with the PNG signature.
pub fn is_png(bytes: &[u8]) -> bool {
    bytes.starts_with(&SIGNATURE)
}

// ---------------------------------------------------------------------------------------------
// The chunk walker
// ---------------------------------------------------------------------------------------------

/// A chunk header as read from the stream.
#[derive(Debug, Clone, Copy)]
struct Header {
    kind: [u8; 4],
    offset: u64,
    length: u32,
}

impl Header {
    fn name(&self) -> String {
        kind_name(&self.kind)
    }
    fn is_text(&self) -> bool {
        matches!(&self.kind, b"tEXt" | b"zTXt" | b"iTXt")
    }
}

fn kind_name(kind: &[u8; 4]) -> String {
    kind.iter()
        .map(|&b| {
            if b.is_ascii_graphic() {
                char::from(b)
            } else {
                '?'
            }
        })
        .collect()
}

/// What the walker reads of each chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Read the data of card text chunks only; seek past everything else.
    CardText,
    /// Read no data but stream every chunk through the CRC (for listing).
    VerifyAll,
}

/// The states of the walker.
enum State {
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
struct Walked {
    header: Header,
    /// Keyword of a text chunk.
    keyword: Option<Vec<u8>>,
    /// Whole data, for card text chunks in [`Mode::CardText`].
    data: Option<Vec<u8>>,
    /// CRC check result, when the chunk was hashed.
    crc_ok: Option<bool>,
}

/// Why walking stopped early.
struct Fault {
    error: Error,
    /// A broken structure (truncation, bad length or type, missing `IEND`): a card read before it
    /// is still good.
    structural: bool,
}

impl Fault {
    fn structural(chunk: impl Into<String>, offset: u64, problem: impl Into<String>) -> Self {
        Fault {
            error: Error::Png {
                chunk: chunk.into(),
                offset,
                problem: problem.into(),
            },
            structural: true,
        }
    }
    fn fatal(error: Error) -> Self {
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
    v.resize(start.saturating_add(n), 0);
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

/// Any `Read + Seek` as a [`Source`].
struct Plain<R>(R);

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

struct Walker<'l, R> {
    r: R,
    state: State,
    mode: Mode,
    limits: &'l Limits,
    /// Absolute position in the stream.
    pos: u64,
    /// Absolute position of the end of the stream.
    end: u64,
    /// Absolute position of the signature.
    start: u64,
    chunks: u64,
    /// Bytes of card text held so far (chunk data read plus inflated text), against
    /// [`Limits::max_total_text`].
    held: u64,
    /// Card keys already read and decoded: their later chunks are seeked past.
    done: std::collections::HashSet<CardKey>,
}

impl<'l, R: Source> Walker<'l, R> {
    fn new(mut r: R, mode: Mode, limits: &'l Limits) -> Result<Self> {
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
    fn rel(&self, abs: u64) -> u64 {
        abs.saturating_sub(self.start)
    }

    fn remaining(&self) -> u64 {
        self.end.saturating_sub(self.pos)
    }

    /// Reads exactly `buf.len()` bytes; a short stream is a truncation at `what`.
    fn read_exact(&mut self, buf: &mut [u8], what: &Header) -> std::result::Result<(), Fault> {
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
    fn skip(&mut self, n: u64) -> std::result::Result<(), Fault> {
        if n == 0 {
            return Ok(());
        }
        let delta = i64::try_from(n).map_err(|_| Fault::fatal(Error::Limit("seek".into())))?;
        self.pos = self.r.seek(SeekFrom::Current(delta))?;
        Ok(())
    }

    /// Hashes the next `n` bytes without keeping them.
    fn hash_through(
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
    fn hash_with(
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

    /// Runs the state machine until one chunk is complete (`Some`) or the stream ended at `IEND`
    /// (`None`).
    fn next_chunk(&mut self) -> std::result::Result<Option<Walked>, Fault> {
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
                    prefix.reserve_exact(want);
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

// ---------------------------------------------------------------------------------------------
// Keywords and values
// ---------------------------------------------------------------------------------------------

/// The most diagnostics of one code a PNG read lists; the rest are counted in one more.
const PER_CODE: usize = 100;

/// The diagnostics of one read, at most [`PER_CODE`] of each code; the rest are counted and
/// summed up in one last diagnostic of the same code (issue 12: a million duplicate chunks must
/// not make a million warnings).
#[derive(Default)]
struct Notes {
    list: Vec<Diagnostic>,
    counts: std::collections::HashMap<String, usize>,
}

impl Notes {
    fn push(&mut self, d: Diagnostic) {
        let n = self.counts.entry(d.code.clone()).or_default();
        *n += 1;
        if *n <= PER_CODE {
            self.list.push(d);
        }
    }

    fn extend(&mut self, ds: impl IntoIterator<Item = Diagnostic>) {
        for d in ds {
            self.push(d);
        }
    }

    fn finish(mut self) -> Vec<Diagnostic> {
        let mut summaries = Vec::new();
        for d in &self.list {
            let n = self.counts.remove(&d.code).unwrap_or(0);
            if n > PER_CODE {
                summaries.push(Diagnostic::new(
                    d.severity,
                    d.code.clone(),
                    "",
                    format!("{} more like the above not listed", n - PER_CODE),
                ));
            }
        }
        self.list.extend(summaries);
        self.list
    }
}

/// The error for a file whose card text passes [`Limits::max_total_text`].
fn over_budget(limits: &Limits, chunk: &str, at: u64) -> Error {
    Error::Limit(format!(
        "the card text chunks of this PNG hold more than {} bytes (read and inflated, all \
         chunks together; reached at the {chunk} chunk at byte {at}; the option \
         png::Limits::max_total_text raises it)",
        limits.max_total_text
    ))
}

/// Which card chunk a keyword names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum CardKey {
    Ccv3,
    Chara,
    Asset(String),
}

/// `tEXt chunk "ccv3" at byte 27805`: a card chunk as messages name it, written only when a
/// message needs it (issue 16: not formatted for every chunk read).
struct ChunkLabel<'a> {
    header: &'a Header,
    keyword: &'a [u8],
    /// The chunk's offset from the start of the PNG.
    at: u64,
}

impl std::fmt::Display for ChunkLabel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} chunk {:?} at byte {}",
            self.header.name(),
            latin1(self.keyword),
            self.at
        )
    }
}

fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

fn classify(keyword: &[u8]) -> Option<CardKey> {
    if keyword.eq_ignore_ascii_case(b"ccv3") {
        return Some(CardKey::Ccv3);
    }
    if keyword.eq_ignore_ascii_case(b"chara") {
        return Some(CardKey::Chara);
    }
    let head = keyword.get(..ASSET_PREFIX.len())?;
    if !head.eq_ignore_ascii_case(ASSET_PREFIX) {
        return None;
    }
    let rest = keyword.get(ASSET_PREFIX.len()..).unwrap_or_default();
    let path = rest.strip_prefix(b":").unwrap_or(rest);
    Some(CardKey::Asset(latin1(path)))
}

/// How a value was decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leniency {
    Strict,
    Base64Repaired,
    RawJson,
}

/// Decodes base64, strictly first, then leniently: without whitespace, padding optional,
/// trailing bits ignored, and the URL-safe alphabet (`-`, `_`) when the value uses it.
fn decode_base64(value: &[u8]) -> std::result::Result<(Vec<u8>, Leniency), String> {
    // Card chunks run to megabytes: the SIMD decoder takes the strict, common case.
    if let Ok(bytes) = STANDARD.decode_to_vec(value) {
        return Ok((bytes, Leniency::Strict));
    }
    let mut cleaned: Vec<u8> = value
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    let url_safe = cleaned.iter().any(|&b| b == b'-' || b == b'_');
    let alphabet_ok = |b: u8| {
        b.is_ascii_alphanumeric()
            || b == b'='
            || if url_safe {
                b == b'-' || b == b'_'
            } else {
                b == b'+' || b == b'/'
            }
    };
    if let Some(at) = cleaned.iter().position(|&b| !alphabet_ok(b)) {
        return Err(format!(
            "value is not base64 (invalid symbol {}, offset {at})",
            cleaned[at]
        ));
    }
    if url_safe {
        for b in &mut cleaned {
            *b = match *b {
                b'-' => b'+',
                b'_' => b'/',
                other => other,
            };
        }
    }
    // WHATWG forgiving-base64: optional padding, trailing bits ignored.
    match base64_simd::forgiving_decode_to_vec(&cleaned) {
        Ok(bytes) => Ok((bytes, Leniency::Base64Repaired)),
        Err(_) => Err(format!(
            "value is not base64 (invalid length or padding: {} symbols)",
            cleaned.len()
        )),
    }
}

/// Decodes a card text value (base64 of UTF-8 JSON, or raw JSON) to the JSON text.
fn decode_text_inner(value: &[u8]) -> std::result::Result<(String, Leniency), String> {
    let trimmed = value.trim_ascii();
    if trimmed.first() == Some(&b'{') {
        // Raw JSON instead of base64: UTF-8 if it is, else Latin-1 as tEXt defines.
        let text = match std::str::from_utf8(trimmed) {
            Ok(s) => s.to_owned(),
            Err(_) => latin1(trimmed),
        };
        return Ok((text, Leniency::RawJson));
    }
    let (bytes, how) = decode_base64(trimmed)?;
    match utf8_text(bytes) {
        Ok(s) => Ok((s, how)),
        Err(e) => Err(format!(
            "base64-decoded value is not UTF-8 (invalid byte at {})",
            e.utf8_error().valid_up_to()
        )),
    }
}

/// `String::from_utf8`, with the check made by `simdutf8` (32 bytes at a time where the CPU
/// has AVX2, against the standard library's 16 on ASCII and byte by byte elsewhere; issue 16:
/// every PNG card's JSON text is checked once, before it is parsed). The same result as
/// `String::from_utf8` for every input: text `simdutf8` refuses is checked again by the
/// standard library, which gives the error and its position. WebAssembly builds use
/// `String::from_utf8` itself (their size counts more, issue 11).
#[cfg(not(target_arch = "wasm32"))]
fn utf8_text(bytes: Vec<u8>) -> std::result::Result<String, std::string::FromUtf8Error> {
    if simdutf8::basic::from_utf8(&bytes).is_err() {
        return String::from_utf8(bytes);
    }
    // SAFETY: `simdutf8` has just checked that `bytes` is UTF-8 (RFC 3629, the rules of
    // `str::from_utf8`).
    #[allow(unsafe_code)]
    Ok(unsafe { String::from_utf8_unchecked(bytes) })
}

/// `String::from_utf8` (WebAssembly builds; see the other targets' `utf8_text`).
#[cfg(target_arch = "wasm32")]
fn utf8_text(bytes: Vec<u8>) -> std::result::Result<String, std::string::FromUtf8Error> {
    String::from_utf8(bytes)
}

/// Encodes a JSON text as a card chunk value: base64 (standard alphabet, padded) of its UTF-8.
///
/// ```
/// assert_eq!(ccv3::png::encode_text_value("{}"), b"e30=".to_vec());
/// ```
pub fn encode_text_value(json: &str) -> Vec<u8> {
    STANDARD.encode_to_string(json.as_bytes()).into_bytes()
}

/// Decodes a card chunk value to its JSON text, as the reader does.
///
/// Accepts base64 with whitespace, without padding or in the URL-safe alphabet, and a raw JSON
/// text; each repair is returned as a warning [`Diagnostic`]. Fails when the value is neither
/// base64 nor JSON, or does not decode to UTF-8.
///
/// ```
/// let (json, diags) = ccv3::png::decode_text_value(b"e30")?;
/// assert_eq!(json, "{}");
/// assert_eq!(diags.len(), 1); // missing padding repaired
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn decode_text_value(value: &[u8]) -> Result<(String, Vec<Diagnostic>)> {
    match decode_text_inner(value) {
        Ok((text, how)) => {
            let diags = leniency_diagnostic(how, &"value").into_iter().collect();
            Ok((text, diags))
        }
        Err(problem) => Err(Error::Png {
            chunk: "tEXt".into(),
            offset: 0,
            problem,
        }),
    }
}

fn leniency_diagnostic(how: Leniency, what: &dyn std::fmt::Display) -> Option<Diagnostic> {
    match how {
        Leniency::Strict => None,
        Leniency::Base64Repaired => Some(Diagnostic::warning(
            "png-base64-lenient",
            "",
            format!("{what} is not canonical base64 (whitespace, padding or alphabet repaired)"),
        )),
        Leniency::RawJson => Some(Diagnostic::warning(
            "png-text-not-base64",
            "",
            format!("{what} holds raw JSON instead of base64"),
        )),
    }
}

/// Why a chunk's text could not be had.
#[derive(Debug)]
enum TextFault {
    /// The chunk is malformed (or its one value inflates past [`Limits::max_inflated`]).
    Malformed(String),
    /// Inflating would pass what is left of [`Limits::max_total_text`].
    OverBudget,
}

impl From<String> for TextFault {
    fn from(s: String) -> Self {
        TextFault::Malformed(s)
    }
}

impl From<&str> for TextFault {
    fn from(s: &str) -> Self {
        TextFault::Malformed(s.to_string())
    }
}

/// Extracts the text of a `tEXt`, `zTXt` or `iTXt` chunk's data (keyword included): borrowed
/// from the data unless it had to be inflated (card chunks run to megabytes). Inflating stops at
/// `budget` bytes (what is left of the file's budget).
fn text_of_chunk<'d>(
    kind: &[u8; 4],
    data: &'d [u8],
    limits: &Limits,
    budget: u64,
) -> std::result::Result<std::borrow::Cow<'d, [u8]>, TextFault> {
    use std::borrow::Cow;
    let nul = memchr::memchr(0, data).ok_or("no NUL after the keyword")?;
    let after = data.get(nul + 1..).unwrap_or_default();
    match kind {
        b"tEXt" => Ok(Cow::Borrowed(after)),
        b"zTXt" => match after.split_first() {
            Some((0, stream)) => inflate(stream, limits, budget).map(Cow::Owned),
            Some((m, _)) => Err(format!("unknown compression method {m}").into()),
            None => Err("missing compression method".into()),
        },
        b"iTXt" => {
            let (&flag, rest) = after.split_first().ok_or("missing compression flag")?;
            let (&method, rest) = rest.split_first().ok_or("missing compression method")?;
            let lang_end = memchr::memchr(0, rest).ok_or("missing NUL after the language tag")?;
            let rest = rest.get(lang_end + 1..).unwrap_or_default();
            let tk_end =
                memchr::memchr(0, rest).ok_or("missing NUL after the translated keyword")?;
            let text = rest.get(tk_end + 1..).unwrap_or_default();
            match (flag, method) {
                (0, _) => Ok(Cow::Borrowed(text)),
                (1, 0) => inflate(text, limits, budget).map(Cow::Owned),
                (1, m) => Err(format!("unknown compression method {m}").into()),
                (f, _) => Err(format!("invalid compression flag {f}").into()),
            }
        }
        _ => Err("not a text chunk".into()),
    }
}

/// Inflates a zlib stream, never producing more than `limits.max_inflated` bytes nor more than
/// `budget` (checked while inflating: the output stops one byte past the smaller bound).
fn inflate(stream: &[u8], limits: &Limits, budget: u64) -> std::result::Result<Vec<u8>, TextFault> {
    let mut out = Vec::new();
    let bound = limits.max_inflated.min(budget);
    // `bufread` over the slice: no 32 KiB buffer per chunk (a million tiny zTXt chunks).
    flate2::bufread::ZlibDecoder::new(stream)
        .take(bound.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| format!("compressed text is corrupt ({e})"))?;
    if out.len() as u64 > bound {
        if limits.max_inflated <= budget {
            return Err(TextFault::Malformed(format!(
                "inflated text exceeds the limit of {} bytes (png::Limits::max_inflated)",
                limits.max_inflated
            )));
        }
        return Err(TextFault::OverBudget);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

/// Reads the card text chunks (`ccv3`, `chara`, `chara-ext-asset_*`) of a PNG/APNG stream.
///
/// Starts at the stream's current position (the PNG signature). Seeks past every non-card chunk;
/// see the module docs for what is accepted and reported.
///
/// # Errors
///
/// [`Error::Png`] when the signature is missing, when the chunk stream is truncated or corrupt
/// before any `ccv3`/`chara` chunk was read, or when card chunks exist but none decodes;
/// [`Error::Limit`] when a [`Limits`] value is exceeded; [`Error::Io`] on I/O failure.
pub fn read_card_chunks<R: Read + Seek>(r: R, limits: &Limits) -> Result<CardChunks> {
    read_card_chunks_impl(Plain(r), limits, false).map(|(chunks, _)| chunks)
}

/// [`read_card_chunks`] from a [`Source`] (the file reader of [`crate::read_file`]).
pub(crate) fn read_card_chunks_from<S: Source>(r: S, limits: &Limits) -> Result<CardChunks> {
    read_card_chunks_impl(r, limits, false).map(|(chunks, _)| chunks)
}

/// Where an asset chunk read by [`read_card_chunks_deferred`] is, to read it again.
#[derive(Debug, Clone)]
pub(crate) struct AssetPlace {
    kind: [u8; 4],
    /// Absolute position of the chunk's length field.
    offset: u64,
    length: u32,
    /// The decoded asset's length.
    size: u64,
}

/// The asset chunks of a PNG read by [`read_card_chunks_deferred`].
#[derive(Debug, Clone, Default)]
pub(crate) struct AssetPlaces {
    places: Vec<AssetPlace>,
    limits: Limits,
}

impl AssetPlaces {
    /// The decoded size of the `i`th asset.
    pub(crate) fn size(&self, i: usize) -> u64 {
        self.places.get(i).map_or(0, |p| p.size)
    }

    /// Reads and decodes the `i`th asset chunk again, as it was read the first time.
    pub(crate) fn load<R: Read + Seek>(&self, r: &mut R, i: usize) -> Result<Vec<u8>> {
        let p = self
            .places
            .get(i)
            .ok_or_else(|| Error::Parameter(format!("no PNG asset chunk number {i}")))?;
        let changed = |problem: String| Error::Png {
            chunk: kind_name(&p.kind),
            offset: p.offset,
            problem,
        };
        r.seek(SeekFrom::Start(p.offset.saturating_add(8)))?;
        let mut data = Vec::new();
        r.by_ref()
            .take(u64::from(p.length))
            .read_to_end(&mut data)?;
        if data.len() as u64 != u64::from(p.length) {
            return Err(changed("the file changed since it was read".into()));
        }
        let text = text_of_chunk(&p.kind, &data, &self.limits, self.limits.max_total_text)
            .map_err(|_| changed("the file changed since it was read".into()))?;
        let (bytes, _) = decode_base64(text.trim_ascii()).map_err(changed)?;
        if bytes.len() as u64 != p.size {
            return Err(changed("the file changed since it was read".into()));
        }
        Ok(bytes)
    }
}

/// [`read_card_chunks`] without keeping the assets: each asset chunk is read, inflated and
/// decoded as [`read_card_chunks`] does (same errors, same warnings), then dropped; the assets
/// come back with empty data and [`AssetPlaces`] reads any of them again (issue 12).
pub(crate) fn read_card_chunks_deferred<S: Source>(
    r: S,
    limits: &Limits,
) -> Result<(CardChunks, AssetPlaces)> {
    read_card_chunks_impl(r, limits, true)
}

fn read_card_chunks_impl<S: Source>(
    r: S,
    limits: &Limits,
    defer: bool,
) -> Result<(CardChunks, AssetPlaces)> {
    let mut places = AssetPlaces {
        places: Vec::new(),
        limits: *limits,
    };
    let mut walker = Walker::new(r, Mode::CardText, limits)?;
    let mut out = CardChunks::default();
    let mut first_bad: Option<Error> = None;
    let mut notes = Notes::default();
    // Broken `ccv3`/`chara` chunks: errors, unless another card chunk reads (issue 13).
    let mut card_faults: Vec<Diagnostic> = Vec::new();
    loop {
        let walked = match walker.next_chunk() {
            Ok(Some(w)) => w,
            Ok(None) => break,
            Err(fault) => {
                if fault.structural && (out.ccv3.is_some() || out.chara.is_some()) {
                    notes.push(Diagnostic::warning(
                        "png-truncated",
                        "",
                        format!("after the card chunks: {}", fault.error),
                    ));
                    break;
                }
                return Err(fault.error);
            }
        };
        if walked.data.is_none() && walked.crc_ok == Some(false) {
            let keyword = walked
                .keyword
                .as_deref()
                .map(|k| format!(" {:?}", latin1(k)))
                .unwrap_or_default();
            notes.push(Diagnostic::warning(
                "png-bad-crc",
                "",
                format!(
                    "{} chunk{keyword} at byte {} has a bad CRC; the chunk is not card data and was ignored",
                    walked.header.name(),
                    walker.rel(walked.header.offset)
                ),
            ));
        }
        if &walked.header.kind == b"IEND" {
            let trailing = walker.remaining();
            if trailing > 0 {
                notes.push(Diagnostic::warning(
                    "png-data-after-iend",
                    "",
                    format!(
                        "{trailing} bytes after the IEND chunk at byte {} (from byte {}) ignored",
                        walker.rel(walked.header.offset),
                        walker.rel(walker.pos)
                    ),
                ));
            }
            break;
        }
        let Some(keyword) = walked.keyword else {
            continue;
        };
        let Some(key) = classify(&keyword) else {
            continue;
        };
        let header = walked.header;
        let at = walker.rel(header.offset);
        let label = ChunkLabel {
            header: &header,
            keyword: &keyword,
            at,
        };
        let Some(data) = walked.data else {
            if walker.done.contains(&key) {
                // Seeked past: a later chunk of a key already read (issue 12: duplicates cost
                // nothing, and finding them is one hash lookup).
                let what = match &key {
                    CardKey::Asset(path) => format!("repeats asset {path:?}"),
                    _ => "repeats an earlier chunk".to_string(),
                };
                notes.push(Diagnostic::warning(
                    "png-duplicate-chunk",
                    "",
                    format!("{label} {what} and is ignored"),
                ));
            } else if key == CardKey::Chara && !limits.read_chara {
                out.chara_skipped = true;
            }
            continue;
        };
        if walked.crc_ok == Some(false) {
            notes.push(Diagnostic::warning(
                "png-bad-crc",
                "",
                format!("{label} has a bad CRC; its value is used anyway"),
            ));
        }
        if &header.kind != b"tEXt" {
            notes.push(Diagnostic::info(
                "png-compressed-text",
                "",
                format!("{label} is not a tEXt chunk (the spec says tEXt)"),
            ));
        }
        let lower = matches!(key, CardKey::Ccv3 | CardKey::Chara)
            && keyword.iter().any(u8::is_ascii_uppercase);
        if lower {
            notes.push(Diagnostic::info(
                "png-keyword-case",
                "",
                format!("{label}: keyword is not lowercase"),
            ));
        }
        let budget = limits.max_total_text.saturating_sub(walker.held);
        let text = match text_of_chunk(&header.kind, &data, limits, budget) {
            Ok(t) => t,
            Err(TextFault::OverBudget) => return Err(over_budget(limits, &header.name(), at)),
            Err(TextFault::Malformed(problem)) => {
                let d = Diagnostic::error(
                    "png-text-chunk-malformed",
                    "",
                    format!("{label}: {problem}"),
                );
                if matches!(key, CardKey::Asset(_)) {
                    notes.push(d);
                } else if card_faults.len() < PER_CODE {
                    card_faults.push(d);
                }
                if !matches!(key, CardKey::Asset(_)) && first_bad.is_none() {
                    first_bad = Some(Error::Png {
                        chunk: header.name(),
                        offset: at,
                        problem,
                    });
                }
                continue;
            }
        };
        if let std::borrow::Cow::Owned(inflated) = &text {
            walker.held = walker.held.saturating_add(inflated.len() as u64);
        }
        match key {
            CardKey::Ccv3 | CardKey::Chara => {
                let (slot, place) = if key == CardKey::Ccv3 {
                    (&mut out.ccv3, &mut out.ccv3_chunk)
                } else {
                    (&mut out.chara, &mut out.chara_chunk)
                };
                match decode_text_inner(&text) {
                    Ok((json, how)) => {
                        *slot = Some(json);
                        *place = Some(ChunkPlace {
                            kind: header.name(),
                            offset: at,
                        });
                        walker.done.insert(key);
                        notes.extend(leniency_diagnostic(how, &label));
                    }
                    Err(problem) => {
                        if card_faults.len() < PER_CODE {
                            card_faults.push(Diagnostic::error(
                                "png-card-chunk-undecodable",
                                "",
                                format!("{label}: {problem}"),
                            ));
                        }
                        if first_bad.is_none() {
                            first_bad = Some(Error::Png {
                                chunk: header.name(),
                                offset: at,
                                problem,
                            });
                        }
                    }
                }
            }
            CardKey::Asset(path) => {
                if out.assets.len() >= limits.max_assets {
                    return Err(Error::Limit(format!(
                        "the PNG holds more than {} asset chunks (reached at the {label}; the \
                         option png::Limits::max_assets raises it)",
                        limits.max_assets
                    )));
                }
                if path.is_empty() {
                    notes.push(Diagnostic::warning(
                        "png-asset-undecodable",
                        "",
                        format!("{label}: asset keyword has an empty path; ignored"),
                    ));
                    continue;
                }
                match decode_base64(text.trim_ascii()) {
                    Ok((bytes, how)) => {
                        notes.extend(leniency_diagnostic(how, &label));
                        walker.done.insert(CardKey::Asset(path.clone()));
                        if defer {
                            places.places.push(AssetPlace {
                                kind: header.kind,
                                offset: header.offset,
                                length: header.length,
                                size: bytes.len() as u64,
                            });
                            out.assets.push((path, Vec::new()));
                        } else {
                            out.assets.push((path, bytes));
                        }
                    }
                    Err(problem) => notes.push(Diagnostic::warning(
                        "png-asset-undecodable",
                        "",
                        format!("{label}: {problem}; asset ignored"),
                    )),
                }
            }
        }
    }
    let read_one = out.ccv3.is_some() || out.chara.is_some();
    if !read_one && !out.chara_skipped {
        if let Some(err) = first_bad {
            return Err(err);
        }
    }
    for mut d in card_faults {
        if read_one {
            d.severity = crate::Severity::Warning;
            d.message
                .push_str("; the card was read from the other card chunk");
        }
        notes.push(d);
    }
    out.diagnostics = notes.finish();
    Ok((out, places))
}

/// [`read_card_chunks`] over an in-memory PNG with the default [`Limits`].
///
/// ```
/// let err = ccv3::png::read_card_chunks_from_slice(b"not a png").unwrap_err();
/// assert!(err.to_string().contains("signature"));
/// ```
pub fn read_card_chunks_from_slice(bytes: &[u8]) -> Result<CardChunks> {
    read_card_chunks(Cursor::new(bytes), &Limits::default())
}

/// Lists every chunk of an in-memory PNG (type, offset, length, CRC check, text keyword), for
/// debugging. Every chunk's CRC is checked; no data is kept.
///
/// # Errors
///
/// [`Error::Png`] when the signature is missing or the chunk stream is truncated or corrupt.
pub fn list_chunks(bytes: &[u8]) -> Result<Vec<ChunkInfo>> {
    let limits = Limits::default();
    let mut walker = Walker::new(Plain(Cursor::new(bytes)), Mode::VerifyAll, &limits)?;
    let mut out = Vec::new();
    loop {
        match walker.next_chunk() {
            Ok(Some(w)) => out.push(ChunkInfo {
                kind: w.header.name(),
                offset: w.header.offset,
                length: w.header.length,
                crc_ok: w.crc_ok.unwrap_or(false),
                keyword: w.keyword.as_deref().map(latin1),
            }),
            Ok(None) => return Ok(out),
            Err(fault) => return Err(fault.error),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

/// Writes one chunk (length, type, data, CRC).
fn write_chunk<W: Write>(w: &mut W, kind: &[u8; 4], data: &[u8]) -> Result<()> {
    let length = u32::try_from(data.len())
        .ok()
        .filter(|&l| l <= MAX_CHUNK_LENGTH)
        .ok_or_else(|| Error::Limit(format!("chunk of {} bytes exceeds 2^31-1", data.len())))?;
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(kind);
    hasher.update(data);
    w.write_all(&length.to_be_bytes())?;
    w.write_all(kind)?;
    w.write_all(data)?;
    w.write_all(&hasher.finalize().to_be_bytes())?;
    Ok(())
}

/// Writes one chunk whose data is `parts` one after the other (no copy of them is made).
fn write_chunk_parts<W: Write>(w: &mut W, kind: &[u8; 4], parts: &[&[u8]]) -> Result<()> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let length = u32::try_from(len)
        .ok()
        .filter(|&l| l <= MAX_CHUNK_LENGTH)
        .ok_or_else(|| Error::Limit(format!("chunk of {len} bytes exceeds 2^31-1")))?;
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(kind);
    w.write_all(&length.to_be_bytes())?;
    w.write_all(kind)?;
    for p in parts {
        hasher.update(p);
        w.write_all(p)?;
    }
    w.write_all(&hasher.finalize().to_be_bytes())?;
    Ok(())
}

/// Checks a keyword/value pair for a `tEXt` chunk.
fn check_text_chunk(keyword: &str, value: &[u8]) -> Result<()> {
    let ok_keyword = !keyword.is_empty()
        && keyword.len() <= MAX_KEYWORD
        && keyword.bytes().all(|b| (0x20..=0x7E).contains(&b))
        && !keyword.starts_with(' ')
        && !keyword.ends_with(' ')
        && !keyword.contains("  ");
    if !ok_keyword {
        return Err(Error::Parameter(format!(
            "PNG text keyword {keyword:?} must be 1-79 printable ASCII characters without \
             leading, trailing or double spaces"
        )));
    }
    if memchr::memchr(0, value).is_some() {
        return Err(Error::Parameter(format!(
            "value of PNG text chunk {keyword:?} contains NUL"
        )));
    }
    Ok(())
}

/// Replaces the card chunks of a PNG/APNG, streaming the result to `out`.
///
/// Same as [`write_card_chunks`]; nothing is written when the input is rejected (the input is
/// validated completely first).
pub fn write_card_chunks_to<W: Write>(
    png: &[u8],
    chunks: &[(&str, &[u8])],
    mut out: W,
) -> Result<()> {
    for (keyword, value) in chunks {
        check_text_chunk(keyword, value)?;
    }
    let plan = plan_chunks(png)?;
    out.write_all(&SIGNATURE)?;
    for span in &plan.keep {
        out.write_all(png.get(span.clone()).unwrap_or_default())?;
    }
    for (keyword, value) in chunks {
        let mut data = Vec::with_capacity(keyword.len() + 1 + value.len());
        data.extend_from_slice(keyword.as_bytes());
        data.push(0);
        data.extend_from_slice(value);
        write_chunk(&mut out, b"tEXt", &data)?;
    }
    out.write_all(png.get(plan.iend_and_after..).unwrap_or_default())?;
    Ok(())
}

/// Removes every `ccv3`, `chara` and `chara-ext-asset_*` text chunk (in `tEXt`, `zTXt` and
/// `iTXt` form), then inserts `chunks` as `tEXt` chunks `(keyword, value)` right before `IEND`.
///
/// Values are written as given: a card's value must already be base64 (see
/// [`encode_text_value`]). Every other chunk and any bytes after `IEND` are copied byte for byte
/// in their order (APNG `acTL`/`fcTL`/`fdAT` included).
///
/// # Errors
///
/// [`Error::Png`] when `png` is not a complete PNG with an `IEND` chunk;
/// [`Error::Parameter`] for a keyword that is not 1-79 printable ASCII characters or a value
/// holding NUL.
pub fn write_card_chunks(png: &[u8], chunks: &[(&str, &[u8])]) -> Result<Vec<u8>> {
    let extra: usize = chunks.iter().map(|(k, v)| k.len() + v.len() + 13).sum();
    let mut out = Vec::with_capacity(png.len().saturating_add(extra));
    write_card_chunks_to(png, chunks, &mut out)?;
    Ok(out)
}

/// A picture whose chunks were walked once to write a card into it: its bytes and the plan of
/// what to keep (so a card's own picture is checked and written with one walk).
pub(crate) struct Carrier {
    png: Vec<u8>,
    plan: Plan,
}

impl Carrier {
    /// Walks `png`'s chunk headers.
    ///
    /// # Errors
    ///
    /// [`Error::Png`] when `png` cannot carry a card (see [`can_carry_card`]).
    pub(crate) fn new(png: Vec<u8>) -> Result<Carrier> {
        let plan = plan_chunks(&png)?;
        Ok(Carrier { png, plan })
    }
}

/// [`write_card_chunks_to`] into an already walked picture, with each chunk's value asked of
/// `value` (by its index in `keywords`) only when it is written, so the values are never all
/// held at once (issue 12). The keywords are checked before anything is written; a value
/// holding NUL fails when it comes.
pub(crate) fn write_card_chunks_with<W: Write>(
    picture: &Carrier,
    keywords: &[String],
    mut out: W,
    mut value: impl FnMut(usize) -> Result<Vec<u8>>,
) -> Result<()> {
    for keyword in keywords {
        check_text_chunk(keyword, b"")?;
    }
    let (png, plan) = (&picture.png, &picture.plan);
    out.write_all(&SIGNATURE)?;
    for span in &plan.keep {
        out.write_all(png.get(span.clone()).unwrap_or_default())?;
    }
    for (i, keyword) in keywords.iter().enumerate() {
        let v = value(i)?;
        check_text_chunk(keyword, &v)?;
        write_chunk_parts(&mut out, b"tEXt", &[keyword.as_bytes(), b"\0", &v])?;
    }
    out.write_all(png.get(plan.iend_and_after..).unwrap_or_default())?;
    Ok(())
}

/// Byte ranges of a PNG to keep, and where `IEND` starts.
struct Plan {
    keep: Vec<std::ops::Range<usize>>,
    iend_and_after: usize,
}

/// True when `png` is a PNG whose chunk headers can all be walked up to `IEND`, so a card can be
/// written into it: what the card writers ask of a card's own picture before they keep it (a
/// picture cut short or with a damaged chunk header cannot carry a card, and the writers use the
/// card's PNG main icon or a plain image instead; issue 13). Chunk CRCs are not checked.
///
/// ```
/// let png = ccv3::png::plain_image();
/// assert!(ccv3::png::can_carry_card(&png));
/// assert!(!ccv3::png::can_carry_card(&png[..png.len() - 4]));
/// assert!(!ccv3::png::can_carry_card(b"GIF89a"));
/// ```
pub fn can_carry_card(png: &[u8]) -> bool {
    plan_chunks(png).is_ok()
}

/// Walks an in-memory PNG and decides which chunks to keep.
fn plan_chunks(png: &[u8]) -> Result<Plan> {
    if !is_png(png) {
        return Err(Error::Png {
            chunk: "signature".into(),
            offset: 0,
            problem: "not a PNG file: the 8-byte PNG signature is missing".into(),
        });
    }
    let mut keep: Vec<std::ops::Range<usize>> = Vec::new();
    let mut pos = SIGNATURE.len();
    loop {
        let header = png
            .get(pos..pos.saturating_add(8))
            .ok_or_else(|| Error::Png {
                chunk: "IEND".into(),
                offset: pos as u64,
                problem: "file ends without an IEND chunk".into(),
            })?;
        let (len, kind) = header.split_at(4);
        let length = u32::from_be_bytes([len[0], len[1], len[2], len[3]]);
        let kind: [u8; 4] = [kind[0], kind[1], kind[2], kind[3]];
        let name = kind_name(&kind);
        if length > MAX_CHUNK_LENGTH || !kind.iter().all(u8::is_ascii_alphabetic) {
            return Err(Error::Png {
                chunk: name,
                offset: pos as u64,
                problem: "corrupt chunk header (bad length or type)".into(),
            });
        }
        let end = pos
            .checked_add(12 + length as usize)
            .filter(|&e| e <= png.len())
            .ok_or_else(|| Error::Png {
                chunk: name.clone(),
                offset: pos as u64,
                problem: format!("chunk declares {length} data bytes: the file is truncated"),
            })?;
        if &kind == b"IEND" {
            return Ok(Plan {
                keep,
                iend_and_after: pos,
            });
        }
        let data = png.get(pos + 8..end - 4).unwrap_or_default();
        // The keyword is looked for where the reader looks for it.
        let scan = data.get(..KEYWORD_SCAN as usize).unwrap_or(data);
        let drop = matches!(&kind, b"tEXt" | b"zTXt" | b"iTXt")
            && memchr::memchr(0, scan)
                .and_then(|n| scan.get(..n))
                .and_then(classify)
                .is_some();
        if !drop {
            match keep.last_mut() {
                Some(last) if last.end == pos => last.end = end,
                _ => keep.push(pos..end),
            }
        }
        pos = end;
    }
}

/// A small plain PNG (400x600, one solid colour) for cards that have no picture.
///
/// ```
/// let png = ccv3::png::plain_image();
/// assert!(ccv3::png::is_png(&png));
/// assert!(png.len() < 1024);
/// ```
pub fn plain_image() -> Vec<u8> {
    encode_plain(400, 600, [0x4A, 0x55, 0x68]).unwrap_or_else(|_| FALLBACK_1X1.to_vec())
}

/// Encodes a one-colour indexed image of `width` x `height` pixels.
fn encode_plain(
    width: u32,
    height: u32,
    rgb: [u8; 3],
) -> std::result::Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, width, height);
    enc.set_color(png::ColorType::Indexed);
    enc.set_depth(png::BitDepth::One);
    enc.set_palette(rgb.to_vec());
    let mut writer = enc.write_header()?;
    let row = width.div_ceil(8) as usize;
    writer.write_image_data(&vec![0u8; row * height as usize])?;
    writer.finish()?;
    Ok(out)
}

/// A 1x1 grey PNG, used only if encoding the plain image failed.
const FALLBACK_1X1: [u8; 67] = [
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x00, 0x00, 0x00, 0x3A, 0x7E, 0x9B,
    0x55, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x68, 0x00, 0x00, 0x00,
    0x82, 0x00, 0x81, 0x77, 0xCD, 0x72, 0xB6, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Severity;
    use proptest::prelude::*;
    use std::cell::Cell;
    use std::rc::Rc;

    fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        write_chunk(&mut out, kind, data).unwrap();
        out
    }

    fn ihdr() -> Vec<u8> {
        let mut d = Vec::new();
        d.extend_from_slice(&1u32.to_be_bytes());
        d.extend_from_slice(&1u32.to_be_bytes());
        d.extend_from_slice(&[8, 0, 0, 0, 0]);
        chunk(b"IHDR", &d)
    }

    /// CRCs are checked through buffers sized to the chunk (64 bytes, [`SMALL_CHUNK`], 64 KiB;
    /// issue 16: zeroing one 64 KiB buffer per small chunk cost a third of `validate DIR`): a
    /// good and a corrupt chunk of each size, and one longer than the big buffer, are told
    /// apart (PNG spec, 5.3 "Chunk layout": the CRC covers type and data).
    #[test]
    fn crc_checked_through_buffers_of_every_size() {
        let mut png = SIGNATURE.to_vec();
        png.extend(ihdr());
        let sizes = [13usize, 64, 65, 4096, 4097, 200_000];
        for &n in &sizes {
            let data: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
            png.extend(chunk(b"tIME", &data));
            let mut bad = chunk(b"tIME", &data);
            let last = bad.len() - 1;
            bad[last] ^= 1;
            png.extend(bad);
        }
        png.extend(chunk(b"IEND", b""));
        let list = list_chunks(&png).unwrap();
        let checks: Vec<(u32, bool)> = list
            .iter()
            .filter(|c| c.kind == "tIME")
            .map(|c| (c.length, c.crc_ok))
            .collect();
        let want: Vec<(u32, bool)> = sizes
            .iter()
            .flat_map(|&n| [(n as u32, true), (n as u32, false)])
            .collect();
        assert_eq!(checks, want);
    }

    /// The messages that name a card chunk (its label, now written only when a message needs
    /// it; issue 16) read as before: kind, keyword and offset from the start of the PNG
    /// (SPEC_V3 "PNG/APNG": `ccv3` in a tEXt chunk, base64 of the card JSON).
    #[test]
    fn card_chunk_messages_name_kind_keyword_and_offset() {
        let json = br#"{"spec":"chara_card_v3","spec_version":"3.0","data":{}}"#;
        let b64 = STANDARD.encode_to_string(json);
        let unpadded = b64.trim_end_matches('=').to_string();
        let png = png_of(&[ztxt("CCV3", unpadded.as_bytes())]);
        let c = read_card_chunks_from_slice(&png).unwrap();
        let messages: Vec<String> = c.diagnostics.iter().map(|d| d.message.clone()).collect();
        assert_eq!(
            messages,
            [
                "zTXt chunk \"CCV3\" at byte 33 is not a tEXt chunk (the spec says tEXt)",
                "zTXt chunk \"CCV3\" at byte 33: keyword is not lowercase",
                "zTXt chunk \"CCV3\" at byte 33 is not canonical base64 (whitespace, padding or \
                 alphabet repaired)",
            ]
        );
        let twice = png_of(&[text("ccv3", b64.as_bytes()), text("ccv3", b64.as_bytes())]);
        let c = read_card_chunks_from_slice(&twice).unwrap();
        let dup = c
            .diagnostics
            .iter()
            .find(|d| d.code == "png-duplicate-chunk");
        let at = 33 + 12 + 5 + b64.len();
        assert_eq!(
            dup.map(|d| d.message.as_str()),
            Some(
                format!("tEXt chunk \"ccv3\" at byte {at} repeats an earlier chunk and is ignored")
                    .as_str()
            )
        );
    }

    fn idat() -> Vec<u8> {
        chunk(
            b"IDAT",
            &[0x78, 0x9C, 0x63, 0x68, 0x00, 0x00, 0x00, 0x82, 0x00, 0x81],
        )
    }

    fn png_of(chunks: &[Vec<u8>]) -> Vec<u8> {
        let mut out = SIGNATURE.to_vec();
        out.extend(ihdr());
        for c in chunks {
            out.extend_from_slice(c);
        }
        out.extend(chunk(b"IEND", b""));
        out
    }

    fn text(keyword: &str, value: &[u8]) -> Vec<u8> {
        let mut d = keyword.as_bytes().to_vec();
        d.push(0);
        d.extend_from_slice(value);
        chunk(b"tEXt", &d)
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn ztxt(keyword: &str, value: &[u8]) -> Vec<u8> {
        let mut d = keyword.as_bytes().to_vec();
        d.extend_from_slice(&[0, 0]);
        d.extend(zlib(value));
        chunk(b"zTXt", &d)
    }

    fn itxt(keyword: &str, value: &[u8], compressed: bool) -> Vec<u8> {
        let mut d = keyword.as_bytes().to_vec();
        d.extend_from_slice(&[0, u8::from(compressed), 0]);
        d.extend_from_slice(b"en\0Card\0");
        if compressed {
            d.extend(zlib(value));
        } else {
            d.extend_from_slice(value);
        }
        chunk(b"iTXt", &d)
    }

    fn b64(s: &str) -> Vec<u8> {
        encode_text_value(s)
    }

    fn has_code(c: &CardChunks, code: &str) -> bool {
        c.diagnostics.iter().any(|d| d.code == code)
    }

    /// Counts the bytes actually read through it.
    struct Counting<R> {
        inner: R,
        read: Rc<Cell<u64>>,
    }
    impl<R: Read> Read for Counting<R> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.read.set(self.read.get() + n as u64);
            Ok(n)
        }
    }
    impl<R: Seek> Seek for Counting<R> {
        fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
            self.inner.seek(pos)
        }
    }

    /// Returns at most one byte per read.
    struct OneByte<R>(R);
    impl<R: Read> Read for OneByte<R> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match buf.first_mut() {
                Some(b) => {
                    let mut one = [0u8; 1];
                    let n = self.0.read(&mut one)?;
                    *b = one[0];
                    Ok(n)
                }
                None => Ok(0),
            }
        }
    }
    impl<R: Seek> Seek for OneByte<R> {
        fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
            self.0.seek(pos)
        }
    }

    #[test]
    fn spec_v3_png_reader_returns_both_ccv3_and_chara() {
        let png = png_of(&[
            idat(),
            text("chara", &b64("{\"v\":2}")),
            text("ccv3", &b64("{\"v\":3}")),
        ]);
        let c = read_card_chunks_from_slice(&png).unwrap();
        assert_eq!(c.ccv3.as_deref(), Some("{\"v\":3}"));
        assert_eq!(c.chara.as_deref(), Some("{\"v\":2}"));
        assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    }

    #[test]
    fn png_reads_every_corpus_file() {
        let dir = crate::test_corpus::dir().join("png");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).expect("the test corpus") {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap();
            let file = std::fs::File::open(&path).unwrap();
            let res = read_card_chunks(file, &Limits::default());
            seen += 1;
            if name.contains("JSON_with_png_extension") {
                assert!(!is_png(&bytes));
                assert!(matches!(res, Err(Error::Png { ref chunk, .. }) if chunk == "signature"));
                continue;
            }
            let c = res.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(c, read_card_chunks_from_slice(&bytes).unwrap(), "{name}");
            assert!(
                list_chunks(&bytes).unwrap().iter().all(|i| i.crc_ok),
                "{name}"
            );
            if name == "choral_invalid-character.png" {
                assert!(c.ccv3.is_none() && c.chara.is_none());
                continue;
            }
            assert!(c.ccv3.is_some() || c.chara.is_some(), "{name}: no card");
            for json in c.ccv3.iter().chain(c.chara.iter()) {
                let v: serde_json::Value = serde_json::from_str(json).unwrap();
                assert!(v.is_object(), "{name}");
            }
            if name == "ca_chub_aurelion_spec_v2.png" {
                // Two chara chunks: the first (with the chub extension) is kept.
                assert!(has_code(&c, "png-duplicate-chunk"));
                assert!(c.chara.as_deref().unwrap().contains("\"chub\""));
            } else {
                assert!(c.diagnostics.is_empty(), "{name}: {:?}", c.diagnostics);
            }
            if name.starts_with("st_default_Seraphina.") || name.starts_with("lide_KOF") {
                assert!(c.ccv3.is_some() && c.chara.is_some(), "{name}");
            }
        }
        assert_eq!(seen, if crate::test_corpus::is_full() { 20 } else { 5 });
    }

    #[test]
    fn png_risuai_chunk_is_seeked_past() {
        let Some(path) = crate::test_corpus::file("png/risu_sample_rika.png") else {
            return;
        };
        let read = Rc::new(Cell::new(0));
        let file = Counting {
            inner: std::fs::File::open(path).unwrap(),
            read: read.clone(),
        };
        let c = read_card_chunks(file, &Limits::default()).unwrap();
        assert!(c.chara.is_some());
        // The 3.5 MB risuai chunk and the image data are not read.
        assert!(read.get() < 600_000, "read {} bytes", read.get());
    }

    #[test]
    fn png_ztxt_and_itxt_card_chunks_are_read() {
        let png = png_of(&[
            idat(),
            ztxt("ccv3", &b64("{\"z\":1}")),
            itxt("chara", &b64("{\"i\":1}"), true),
            itxt(
                "chara-ext-asset_:1",
                &STANDARD.encode_to_string(b"\x00\x01").into_bytes(),
                false,
            ),
        ]);
        let c = read_card_chunks_from_slice(&png).unwrap();
        assert_eq!(c.ccv3.as_deref(), Some("{\"z\":1}"));
        assert_eq!(c.chara.as_deref(), Some("{\"i\":1}"));
        assert_eq!(c.assets, vec![("1".to_string(), vec![0u8, 1])]);
        assert!(has_code(&c, "png-compressed-text"));
        assert!(c.diagnostics.iter().all(|d| d.severity == Severity::Info));
    }

    #[test]
    fn png_keywords_match_case_insensitively() {
        let png = png_of(&[text("CCV3", &b64("{}")), text("Chara", &b64("[]"))]);
        let c = read_card_chunks_from_slice(&png).unwrap();
        assert_eq!(c.ccv3.as_deref(), Some("{}"));
        assert_eq!(c.chara.as_deref(), Some("[]"));
        assert!(has_code(&c, "png-keyword-case"));
    }

    #[test]
    fn png_text_chunk_after_idat_is_read() {
        let png = png_of(&[idat(), idat(), text("ccv3", &b64("{\"after\":true}"))]);
        let c = read_card_chunks_from_slice(&png).unwrap();
        assert_eq!(c.ccv3.as_deref(), Some("{\"after\":true}"));
    }

    #[test]
    fn png_asset_keyword_both_spellings_keep_the_path() {
        let a = STANDARD.encode_to_string(b"abc").into_bytes();
        let png = png_of(&[
            text("chara-ext-asset_:0", &a),
            text("chara-ext-asset_images/x.png", &a),
            text("chara-ext-asset_:0", &a),
        ]);
        let c = read_card_chunks_from_slice(&png).unwrap();
        let paths: Vec<&str> = c.assets.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["0", "images/x.png"]);
        assert!(has_code(&c, "png-duplicate-chunk"));
    }

    #[test]
    fn png_duplicate_keyword_keeps_first_and_warns() {
        let png = png_of(&[
            text("chara", &b64("{\"n\":1}")),
            ztxt("chara", &b64("{\"n\":2}")),
        ]);
        let c = read_card_chunks_from_slice(&png).unwrap();
        assert_eq!(c.chara.as_deref(), Some("{\"n\":1}"));
        assert!(c
            .diagnostics
            .iter()
            .any(|d| d.code == "png-duplicate-chunk" && d.severity == Severity::Warning));
    }

    #[test]
    fn png_undecodable_first_chunk_lets_the_next_one_win() {
        let png = png_of(&[
            text("chara", b"!!!not base64!!!"),
            text("chara", &b64("{}")),
        ]);
        let c = read_card_chunks_from_slice(&png).unwrap();
        assert_eq!(c.chara.as_deref(), Some("{}"));
        assert!(has_code(&c, "png-card-chunk-undecodable"));
        // Alone, it is an error naming the chunk.
        let png = png_of(&[text("ccv3", b"!!!not base64!!!")]);
        let err = read_card_chunks_from_slice(&png).unwrap_err();
        assert!(
            matches!(err, Error::Png { ref chunk, offset: 33, .. } if chunk == "tEXt"),
            "{err}"
        );
        // Base64 of bytes that are not UTF-8.
        let png = png_of(&[text(
            "ccv3",
            &STANDARD.encode_to_string([0xFFu8, 0xFE]).into_bytes(),
        )]);
        assert!(read_card_chunks_from_slice(&png).is_err());
    }

    #[test]
    fn png_base64_leniency_covers_padding_trailing_bits_whitespace_and_url_safe() {
        use super::{decode_base64, Leniency};
        let ok = |v: &[u8]| decode_base64(v).map(|(b, how)| (b, how == Leniency::Strict));
        assert_eq!(ok(b"YWJj"), Ok((b"abc".to_vec(), true)));
        assert_eq!(ok(b"YWI="), Ok((b"ab".to_vec(), true)));
        // Missing padding, non-zero trailing bits, whitespace, URL-safe alphabet: repaired.
        assert_eq!(ok(b"YWI"), Ok((b"ab".to_vec(), false)));
        assert_eq!(ok(b"YWJ="), Ok((b"ab".to_vec(), false)));
        assert_eq!(ok(b"YW\nJj"), Ok((b"abc".to_vec(), false)));
        assert_eq!(ok(b"-_-_"), Ok((vec![0xfb, 0xff, 0xbf], false)));
        // Not base64: both alphabets at once, a stray symbol, a lone last symbol, bad padding.
        for bad in [&b"+_AA"[..], b"YW!j", b"YWJjY", b"YW=j", b"Y==="] {
            assert!(decode_base64(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            decode_base64(b"YW!j").unwrap_err(),
            "value is not base64 (invalid symbol 33, offset 2)"
        );
    }

    #[test]
    fn png_lenient_base64_and_raw_json_are_accepted_with_warnings() {
        let mut spaced = b64("{\"name\":\"x\"}");
        spaced.insert(4, b'\n');
        spaced.retain(|&b| b != b'=');
        let png = png_of(&[text("ccv3", &spaced), text("chara", b" {\"raw\":1} ")]);
        let c = read_card_chunks_from_slice(&png).unwrap();
        assert_eq!(c.ccv3.as_deref(), Some("{\"name\":\"x\"}"));
        assert_eq!(c.chara.as_deref(), Some("{\"raw\":1}"));
        assert!(has_code(&c, "png-base64-lenient"));
        assert!(has_code(&c, "png-text-not-base64"));
        let url = STANDARD
            .encode_to_string("{\"q\":\"??>>\"}")
            .replace('+', "-")
            .replace('/', "_");
        assert_eq!(
            decode_text_value(url.as_bytes()).unwrap().0,
            "{\"q\":\"??>>\"}"
        );
    }

    #[test]
    fn png_bad_crc_on_text_chunk_is_a_warning() {
        let mut t = text("ccv3", &b64("{}"));
        let last = t.len() - 1;
        t[last] ^= 0xFF;
        let c = read_card_chunks_from_slice(&png_of(&[t.clone()])).unwrap();
        assert_eq!(c.ccv3.as_deref(), Some("{}"));
        assert!(c
            .diagnostics
            .iter()
            .any(|d| d.code == "png-bad-crc" && d.severity == Severity::Warning));
        // Unchecked when the reader asks: the same value, no warning.
        let limits = Limits {
            verify_crc: false,
            ..Limits::default()
        };
        let c = read_card_chunks(Cursor::new(png_of(&[t])), &limits).unwrap();
        assert_eq!(c.ccv3.as_deref(), Some("{}"));
        assert!(c.diagnostics.iter().all(|d| d.code != "png-bad-crc"));
    }

    #[test]
    fn png_truncated_before_card_is_an_error() {
        let png = png_of(&[idat(), text("ccv3", &b64("{}"))]);
        let cut = &png[..png.len() - 20];
        let err = read_card_chunks_from_slice(cut).unwrap_err();
        assert!(matches!(err, Error::Png { .. }), "{err}");
        assert!(err.to_string().contains("truncated") || err.to_string().contains("ends"));
    }

    #[test]
    fn png_truncated_after_card_is_a_warning() {
        let png = png_of(&[text("ccv3", &b64("{}")), idat()]);
        let cut = &png[..png.len() - 15];
        let c = read_card_chunks_from_slice(cut).unwrap();
        assert_eq!(c.ccv3.as_deref(), Some("{}"));
        assert!(has_code(&c, "png-truncated"));
        // Missing IEND after the card is also only a warning.
        let cut = &png[..png.len() - 12];
        assert!(has_code(
            &read_card_chunks_from_slice(cut).unwrap(),
            "png-truncated"
        ));
    }

    #[test]
    fn png_garbage_inputs_are_errors() {
        for bad in [
            &b""[..],
            b"\x89PNG",
            b"GIF89a",
            &SIGNATURE[..],
            b"\x89PNG\r\n\x1a\n\xff\xff\xff\xffIDAT",
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\x00I\x00AT\x00\x00\x00\x00",
        ] {
            assert!(read_card_chunks_from_slice(bad).is_err(), "{bad:?}");
            assert!(list_chunks(bad).is_err());
            assert!(write_card_chunks(bad, &[]).is_err());
        }
    }

    #[test]
    fn png_limits_are_checked_before_allocating() {
        // A text chunk longer than the limit is refused.
        let png = png_of(&[text("ccv3", &b64(&"x".repeat(1000)))]);
        let limits = Limits {
            max_text_chunk: 100,
            ..Limits::default()
        };
        let err = read_card_chunks(Cursor::new(&png), &limits).unwrap_err();
        assert!(matches!(err, Error::Limit(_)), "{err}");
        // A chunk declaring 2 GB in a short file is a truncation, found without allocating.
        let mut lie = SIGNATURE.to_vec();
        lie.extend_from_slice(&0x7FFF_FFF0u32.to_be_bytes());
        lie.extend_from_slice(b"tEXtccv3\0e30=");
        let err = read_card_chunks_from_slice(&lie).unwrap_err();
        assert!(err.to_string().contains("truncated"), "{err}");
        // Chunk count.
        let png = png_of(&[idat(), idat(), idat()]);
        let limits = Limits {
            max_chunks: 2,
            ..Limits::default()
        };
        assert!(matches!(
            read_card_chunks(Cursor::new(&png), &limits),
            Err(Error::Limit(_))
        ));
    }

    #[test]
    fn png_compressed_text_bomb_is_bounded() {
        let zeros = vec![b'A'; 10 << 20];
        let png = png_of(&[ztxt("ccv3", &zeros)]);
        let limits = Limits {
            max_inflated: 1 << 20,
            ..Limits::default()
        };
        let err = read_card_chunks(Cursor::new(&png), &limits).unwrap_err();
        assert!(err.to_string().contains("limit"), "{err}");
    }

    #[test]
    fn png_huge_idat_is_seeked_past_not_read() {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&SIGNATURE).unwrap();
        file.write_all(&ihdr()).unwrap();
        let size: u32 = 42 << 20;
        let block: Vec<u8> = (0..1 << 20)
            .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(b"IDAT");
        file.write_all(&size.to_be_bytes()).unwrap();
        file.write_all(b"IDAT").unwrap();
        for _ in 0..42 {
            file.write_all(&block).unwrap();
            hasher.update(&block);
        }
        file.write_all(&hasher.finalize().to_be_bytes()).unwrap();
        file.write_all(&text("ccv3", &b64("{\"big\":1}"))).unwrap();
        file.write_all(&chunk(b"IEND", b"")).unwrap();
        file.seek(SeekFrom::Start(0)).unwrap();
        let read = Rc::new(Cell::new(0));
        let c = read_card_chunks(
            Counting {
                inner: file,
                read: read.clone(),
            },
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(c.ccv3.as_deref(), Some("{\"big\":1}"));
        assert!(
            read.get() < 200,
            "read {} bytes of a 42 MB file",
            read.get()
        );
    }

    #[test]
    fn png_byte_at_a_time_reader_matches_slice_reader() {
        let cases = [
            png_of(&[
                idat(),
                text("chara", &b64("{\"a\":1}")),
                ztxt("ccv3", &b64("{\"b\":2}")),
            ]),
            png_of(&[
                itxt("chara-ext-asset_:x", b"AAEC", true),
                text("ccv3", b"{}"),
            ]),
        ];
        for png in cases {
            let slow = read_card_chunks(OneByte(Cursor::new(&png)), &Limits::default()).unwrap();
            assert_eq!(slow, read_card_chunks_from_slice(&png).unwrap());
            let cut = &png[..png.len() - 7];
            let slow = read_card_chunks(OneByte(Cursor::new(cut)), &Limits::default());
            assert_eq!(
                format!("{slow:?}"),
                format!("{:?}", read_card_chunks_from_slice(cut))
            );
        }
    }

    #[test]
    fn png_reader_starts_at_the_current_stream_position() {
        let mut bytes = b"prefix".to_vec();
        bytes.extend(png_of(&[text("ccv3", &b64("{}"))]));
        let mut cur = Cursor::new(&bytes);
        cur.seek(SeekFrom::Start(6)).unwrap();
        assert_eq!(
            read_card_chunks(cur, &Limits::default())
                .unwrap()
                .ccv3
                .as_deref(),
            Some("{}")
        );
    }

    #[test]
    fn png_write_then_read_round_trip() {
        let card = "{\"spec\":\"chara_card_v3\",\"data\":{\"name\":\"Zoë 🌸\"}}";
        let v2 = "{\"spec\":\"chara_card_v2\"}";
        let asset = STANDARD.encode_to_string([0u8, 255, 7]).into_bytes();
        let original = png_of(&[idat(), text("ccv3", b"old"), ztxt("chara", b"old")]);
        let out = write_card_chunks(
            &original,
            &[
                ("ccv3", &b64(card)),
                ("chara", &b64(v2)),
                ("chara-ext-asset_:0", &asset),
            ],
        )
        .unwrap();
        let c = read_card_chunks_from_slice(&out).unwrap();
        assert_eq!(c.ccv3.as_deref(), Some(card));
        assert_eq!(c.chara.as_deref(), Some(v2));
        assert_eq!(c.assets, vec![("0".to_string(), vec![0u8, 255, 7])]);
        assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
        // Writing again gives the same bytes.
        let again = write_card_chunks(
            &out,
            &[
                ("ccv3", &b64(card)),
                ("chara", &b64(v2)),
                ("chara-ext-asset_:0", &asset),
            ],
        )
        .unwrap();
        assert_eq!(again, out);
        // Text chunks are placed right before IEND.
        let kinds: Vec<String> = list_chunks(&out)
            .unwrap()
            .into_iter()
            .map(|i| i.kind)
            .collect();
        assert_eq!(kinds, ["IHDR", "IDAT", "tEXt", "tEXt", "tEXt", "IEND"]);
    }

    #[test]
    fn png_write_keeps_other_chunks_byte_identical_apng() {
        let actl = chunk(b"acTL", &[0, 0, 0, 2, 0, 0, 0, 0]);
        let fctl0 = chunk(b"fcTL", &[0u8; 26]);
        let mut f1 = vec![0, 0, 0, 1];
        f1.extend_from_slice(&[1u8; 26]);
        let fctl1 = chunk(b"fcTL", &f1[..26]);
        let fdat = chunk(b"fdAT", &[0, 0, 0, 2, 0x78, 0x9C, 0x63, 0, 0, 0, 1, 0, 1]);
        let other_text = text("Software", b"hand-made");
        let mut bad_crc = chunk(b"tIME", &[7, 230, 1, 2, 3, 4, 5]);
        let n = bad_crc.len();
        bad_crc[n - 1] ^= 1;
        let kept = [actl, fctl0, idat(), other_text, fctl1, fdat, bad_crc];
        let mut with_cards = vec![kept[0].clone(), text("chara", b"e30="), kept[1].clone()];
        with_cards.extend([
            kept[2].clone(),
            itxt("ccv3", b"e30=", true),
            kept[3].clone(),
        ]);
        with_cards.extend([ztxt("chara-ext-asset_:1", b"AA=="), kept[4].clone()]);
        with_cards.extend([kept[5].clone(), kept[6].clone(), text("CHARA", b"e30=")]);
        let mut input = png_of(&with_cards);
        input.extend_from_slice(b"trailing bytes");
        let out = write_card_chunks(&input, &[("ccv3", b"e30=")]).unwrap();
        let mut expected = SIGNATURE.to_vec();
        expected.extend(ihdr());
        for k in &kept {
            expected.extend_from_slice(k);
        }
        expected.extend(text("ccv3", b"e30="));
        expected.extend(chunk(b"IEND", b""));
        expected.extend_from_slice(b"trailing bytes");
        assert_eq!(out, expected);
        let mut streamed = Vec::new();
        write_card_chunks_to(&input, &[("ccv3", b"e30=")], &mut streamed).unwrap();
        assert_eq!(streamed, out);
    }

    #[test]
    fn png_writer_validates_input_and_keywords() {
        let no_iend = {
            let mut v = SIGNATURE.to_vec();
            v.extend(ihdr());
            v
        };
        assert!(matches!(write_card_chunks(&no_iend, &[]),
                Err(Error::Png { ref chunk, .. }) if chunk == "IEND"));
        let png = png_of(&[]);
        assert!(matches!(
            write_card_chunks(&png, &[("", b"x")]),
            Err(Error::Parameter(_))
        ));
        assert!(matches!(
            write_card_chunks(&png, &[("a\0b", b"x")]),
            Err(Error::Parameter(_))
        ));
        assert!(matches!(
            write_card_chunks(&png, &[("ccv3", b"a\0")]),
            Err(Error::Parameter(_))
        ));
        let long = "k".repeat(80);
        assert!(matches!(
            write_card_chunks(&png, &[(&long, b"x")]),
            Err(Error::Parameter(_))
        ));
    }

    #[test]
    fn png_list_chunks_reports_types_offsets_and_crc() {
        let mut bad = text("ccv3", b"e30=");
        let n = bad.len();
        bad[n - 2] ^= 1;
        let png = png_of(&[idat(), bad]);
        let list = list_chunks(&png).unwrap();
        let kinds: Vec<&str> = list.iter().map(|i| i.kind.as_str()).collect();
        assert_eq!(kinds, ["IHDR", "IDAT", "tEXt", "IEND"]);
        assert_eq!(list[0].offset, 8);
        assert_eq!(list[0].length, 13);
        assert_eq!(list[1].offset, 33);
        assert_eq!(list[2].keyword.as_deref(), Some("ccv3"));
        let crc: Vec<bool> = list.iter().map(|i| i.crc_ok).collect();
        assert_eq!(crc, [true, true, false, true]);
    }

    #[test]
    fn png_plain_image_is_a_valid_400x600_png() {
        let png = plain_image();
        let decoder = png::Decoder::new(Cursor::new(&png));
        let reader = decoder.read_info().unwrap();
        assert_eq!((reader.info().width, reader.info().height), (400, 600));
        assert!(list_chunks(&png).unwrap().iter().all(|i| i.crc_ok));
        assert!(list_chunks(&FALLBACK_1X1).unwrap().iter().all(|i| i.crc_ok));
        let c = read_card_chunks_from_slice(&png).unwrap();
        assert!(c.ccv3.is_none() && c.chara.is_none() && c.diagnostics.is_empty());
    }

    #[test]
    fn png_regression_corpus_never_panics() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/png/regressions");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            let _ = read_card_chunks_from_slice(&bytes);
            let _ = read_card_chunks(OneByte(Cursor::new(&bytes)), &Limits::default());
            let _ = list_chunks(&bytes);
            let _ = write_card_chunks(&bytes, &[("ccv3", b"e30=")]);
            n += 1;
        }
        assert!(n >= 5);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn png_random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = read_card_chunks_from_slice(&bytes);
            let _ = list_chunks(&bytes);
            let _ = write_card_chunks(&bytes, &[("ccv3", b"e30=")]);
            let mut with_sig = SIGNATURE.to_vec();
            with_sig.extend_from_slice(&bytes);
            let _ = read_card_chunks_from_slice(&with_sig);
            let _ = list_chunks(&with_sig);
            let _ = write_card_chunks(&with_sig, &[]);
        }

        #[test]
        fn png_mutated_card_png_never_panics(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut png = png_of(&[
                idat(),
                ztxt("ccv3", &b64("{\"a\":1}")),
                itxt("chara", &b64("{}"), true),
                text("chara-ext-asset_:0", b"AAAA"),
            ]);
            for (at, byte) in edits {
                let i = at.index(png.len());
                png[i] = byte;
            }
            png.truncate(cut.index(png.len() + 1));
            let _ = read_card_chunks_from_slice(&png);
            let _ = read_card_chunks(OneByte(Cursor::new(&png)), &Limits::default());
            let _ = list_chunks(&png);
            if let Ok(out) = write_card_chunks(&png, &[("ccv3", b"e30=")]) {
                let back = read_card_chunks_from_slice(&out).ok().and_then(|c| c.ccv3);
                prop_assert_eq!(back.as_deref(), Some("{}"));
            }
        }

        /// Issue 16: the decoded card text's UTF-8 check (`simdutf8`) accepts and refuses
        /// exactly what `String::from_utf8` does (RFC 3629), with the same error position:
        /// card-like ASCII text with a few bytes changed anywhere, past the SIMD blocks' edges.
        #[test]
        fn png_card_text_utf8_check_is_the_standard_one(
            text in "[ -~\\n]{0,200}",
            repeat in 0usize..4,
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
            tail in "\\PC{0,8}",
        ) {
            let mut bytes = text.repeat(repeat + 1).into_bytes();
            bytes.extend_from_slice(tail.as_bytes());
            if !bytes.is_empty() {
                for (at, byte) in edits {
                    let i = at.index(bytes.len());
                    bytes[i] = byte;
                }
            }
            let ours = utf8_text(bytes.clone()).map_err(|e| e.utf8_error().valid_up_to());
            let std = String::from_utf8(bytes).map_err(|e| e.utf8_error().valid_up_to());
            prop_assert_eq!(ours, std);
        }
    }

    /// Issue 16: a card chunk whose base64 decodes to bytes that are not UTF-8 is refused with
    /// the place of the first bad byte, as before the vectorised check (PNG tEXt card chunks
    /// hold base64 of UTF-8 JSON: SPEC_V3.md, "Embedding Methods", "PNG/APNG").
    #[test]
    fn card_text_not_utf8_names_the_first_bad_byte() {
        let value = STANDARD.encode_to_string(b"{\"name\":\"a\xffb\"}");
        let err = decode_text_inner(value.as_bytes()).unwrap_err();
        assert_eq!(
            err,
            "base64-decoded value is not UTF-8 (invalid byte at 10)"
        );
        let long = format!("{{\"name\":\"{}\u{e9}\"}}", "x".repeat(100));
        let (text, _) = decode_text_inner(STANDARD.encode_to_string(&long).as_bytes()).unwrap();
        assert_eq!(text, long);
    }
}
