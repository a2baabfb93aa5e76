//! The chunk layout and what a read gives: the signature, the sizes a walk holds to
//! ([`Limits`]), the card chunks found ([`CardChunks`]) and where each chunk lies.

use crate::Diagnostic;

/// The 8-byte PNG signature.
pub const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

/// Largest chunk length the PNG specification allows (2^31 - 1).
pub(super) const MAX_CHUNK_LENGTH: u32 = 0x7FFF_FFFF;

/// Chunks up to this many bytes (other than image data) have their CRC checked even when they
/// are not card chunks: reading them costs no more than seeking past them.
pub const SMALL_CHUNK: u32 = 4096;

/// How many bytes of a text chunk are read to find its keyword (the spec allows 79; some tools
/// write longer asset keywords).
pub(super) const KEYWORD_SCAN: u32 = 256;

/// Longest keyword the writer accepts (the PNG specification's limit).
pub(super) const MAX_KEYWORD: usize = 79;

/// Case-insensitive prefix of asset keywords.
pub(super) const ASSET_PREFIX: &[u8] = b"chara-ext-asset_";

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

/// Where a text chunk sits in a PNG: its type and the byte offset of its length field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkPlace {
    /// `tEXt`, `zTXt` or `iTXt`.
    pub kind: String,
    /// Byte offset of the chunk in the file (of its length field).
    pub offset: u64,
}

/// One chunk of a PNG, as listed by [`list_chunks`](crate::png::list_chunks).
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
///
/// ```
/// assert!(ccv3::png::is_png(b"\x89PNG\r\n\x1a\n...."));
/// assert!(!ccv3::png::is_png(b"GIF89a"));
/// ```
pub fn is_png(bytes: &[u8]) -> bool {
    bytes.starts_with(&SIGNATURE)
}

/// A chunk header as read from the stream.
#[derive(Debug, Clone, Copy)]
pub(super) struct Header {
    pub(super) kind: [u8; 4],
    pub(super) offset: u64,
    pub(super) length: u32,
}

impl Header {
    pub(super) fn name(&self) -> String {
        kind_name(&self.kind)
    }
    pub(super) fn is_text(&self) -> bool {
        matches!(&self.kind, b"tEXt" | b"zTXt" | b"iTXt")
    }
}

/// A chunk type as text (`IDAT`; `?` for a byte that is not a printable letter).
pub(super) fn kind_name(kind: &[u8; 4]) -> String {
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
