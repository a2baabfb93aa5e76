//! Reading: our own walk over the zip records, one entry decompressed at a time.
//!
//! Zip records used (all little-endian; offsets are relative to the start of the archive, which
//! may sit after a prefix):
//!
//! ```text
//! end of central directory  PK\5\6 disk:2 cd_disk:2 n_disk:2 n:2 cd_size:4 cd_offset:4 comment_len:2
//! zip64 end locator          PK\6\7 cd_disk:4 eocd64_offset:8 disks:4          (20 bytes before the above)
//! zip64 end record           PK\6\6 size:8 made:2 need:2 disk:4 cd_disk:4 n_disk:8 n:8 cd_size:8 cd_offset:8
//! central directory header   PK\1\2 made:2 need:2 flags:2 method:2 time:2 date:2 crc:4 csize:4 usize:4
//!                            name_len:2 extra_len:2 comment_len:2 disk:2 iattr:2 eattr:4 offset:4
//! local file header          PK\3\4 need:2 flags:2 method:2 time:2 date:2 crc:4 csize:4 usize:4
//!                            name_len:2 extra_len:2, then name, extra, data
//! ```
//!
//! The central directory is the source of truth (as in every mainstream reader); the local header
//! only locates the data and must carry the same name. The archive's start is found from where
//! the central directory really is (right before the end record) minus where the end record says
//! it is: that difference is the length of a prepended JPEG or stub.

use std::collections::HashSet;
use std::io::{BufReader, Cursor, Read, Seek, SeekFrom};

use super::archive::{CharxArchive, CharxFile, Limits, CARD_JSON};
use super::paths::{path_problem, MAX_PATH_LEN};
use crate::{Diagnostic, Error, Result};

const EOCD_SIG: [u8; 4] = *b"PK\x05\x06";
const EOCD64_LOCATOR_SIG: [u8; 4] = *b"PK\x06\x07";
const EOCD64_SIG: [u8; 4] = *b"PK\x06\x06";
const CENTRAL_SIG: [u8; 4] = *b"PK\x01\x02";
const LOCAL_SIG: [u8; 4] = *b"PK\x03\x04";
const EOCD_LEN: u64 = 22;
const MAX_COMMENT: u64 = 65_535;
/// Entries at or below this decompressed size are exempt from the ratio limit.
const RATIO_EXEMPT_SIZE: u64 = 1024 * 1024;
/// Largest buffer reserved up front for a deflated entry; it grows as real bytes arrive.
const MAX_PREALLOC: u64 = 8 * 1024 * 1024;

/// What the zip readers here read from: any `Read + Seek`, taken as a trait object so that each
/// reader is built once, whatever the caller's type (`Cursor`, `&mut Cursor`, a file, the npm
/// core's source: the npm core's size limit; the reads are buffered or few, so the dynamic call
/// costs nothing that shows).
trait ReadSeek: Read + Seek {}

impl<T: Read + Seek + ?Sized> ReadSeek for T {}

fn charx_err(entry: &str, problem: impl Into<String>) -> Error {
    Error::Charx {
        entry: entry.to_string(),
        problem: problem.into(),
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    match b.get(at..at + 2) {
        Some(s) => u16::from_le_bytes([s[0], s[1]]),
        None => 0,
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    match b.get(at..at + 4) {
        Some(s) => u32::from_le_bytes([s[0], s[1], s[2], s[3]]),
        None => 0,
    }
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    match b.get(at..at + 8) {
        Some(s) => u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]),
        None => 0,
    }
}

/// Reads exactly `buf.len()` bytes at absolute position `pos`; a short read is a CHARX error.
fn read_at(r: &mut dyn ReadSeek, pos: u64, buf: &mut [u8], entry: &str, what: &str) -> Result<()> {
    r.seek(SeekFrom::Start(pos))?;
    r.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => {
            charx_err(entry, format!("file ends inside the {what} at byte {pos}"))
        }
        _ => Error::Io(e),
    })
}

/// Where the central directory is, as found from the end records.
#[derive(Debug, Clone, Copy)]
struct Located {
    /// Number of entries the end record announces.
    count: u64,
    /// Absolute position of the central directory.
    cd_start: u64,
    /// Size of the central directory in bytes.
    cd_size: u64,
    /// Bytes before the archive start (added to every stored offset).
    delta: u64,
    /// Length of the whole input.
    len: u64,
}

/// Finds the end of central directory record and, through it, the central directory.
fn locate(r: &mut dyn ReadSeek) -> Result<Located> {
    let len = r.seek(SeekFrom::End(0))?;
    if len < EOCD_LEN {
        return Err(charx_err(
            "",
            format!("not a zip archive: only {len} bytes"),
        ));
    }
    // The record is nearly always in the last bytes (a short or no comment): those are read
    // first, and the whole span a comment may take only when no record there resolves. The
    // candidates are tried from the end in both reads, so the answer is the same.
    let short = len.min(EOCD_LEN + SHORT_COMMENT);
    if short < len.min(EOCD_LEN + MAX_COMMENT) {
        if let Ok(found) = locate_in_tail(r, len, short) {
            return Ok(found);
        }
    }
    locate_in_tail(r, len, len.min(EOCD_LEN + MAX_COMMENT))
}

/// A comment length under which [`locate`] finds the end record in its first, short read.
const SHORT_COMMENT: u64 = 1024;

/// [`locate`] among the last `tail_len` bytes of an input of `len` bytes: the first end-record
/// candidate from the end that resolves, or the last candidate's error.
fn locate_in_tail(r: &mut dyn ReadSeek, len: u64, tail_len: u64) -> Result<Located> {
    let tail_start = len - tail_len;
    let mut tail = vec![0u8; usize::try_from(tail_len).unwrap_or(0)];
    read_at(r, tail_start, &mut tail, "", "end of the archive")?;
    let mut last_err = None;
    for pos in memchr::memmem::rfind_iter(&tail, &EOCD_SIG) {
        let Some(rec) = tail.get(pos..pos + EOCD_LEN as usize) else {
            continue;
        };
        let comment_len = u64::from(u16_at(rec, 20));
        if pos as u64 + EOCD_LEN + comment_len > tail_len {
            continue;
        }
        match resolve(r, tail_start + pos as u64, rec, len) {
            Ok(found) => return Ok(found),
            Err(e) => last_err = Some(e),
        }
    }
    Err(last_err
        .unwrap_or_else(|| charx_err("", "not a zip archive: no end of central directory record")))
}

/// Turns one end-record candidate at absolute `eocd_pos` into a located central directory.
fn resolve(r: &mut dyn ReadSeek, eocd_pos: u64, rec: &[u8], len: u64) -> Result<Located> {
    let disk = u16_at(rec, 4);
    let cd_disk = u16_at(rec, 6);
    let mut count = u64::from(u16_at(rec, 10));
    let mut cd_size = u64::from(u32_at(rec, 12));
    let mut cd_offset = u64::from(u32_at(rec, 16));
    let mut cd_end = eocd_pos;
    if disk != 0 || cd_disk != 0 || u16_at(rec, 8) != u16_at(rec, 10) {
        return Err(charx_err(
            "",
            "multi-disk (split) zip archives are not supported",
        ));
    }
    let needs_zip64 = count == 0xFFFF || cd_size == 0xFFFF_FFFF || cd_offset == 0xFFFF_FFFF;
    if needs_zip64 && eocd_pos >= 20 {
        let mut loc = [0u8; 20];
        read_at(r, eocd_pos - 20, &mut loc, "", "zip64 end locator")?;
        if loc[..4] == EOCD64_LOCATOR_SIG {
            let stated = u64_at(&loc, 8);
            let mut found = None;
            // Usually the record sits right before the locator; else trust the stated offset.
            for pos in [eocd_pos.checked_sub(20 + 56), Some(stated)]
                .into_iter()
                .flatten()
            {
                let mut z = [0u8; 56];
                if pos.checked_add(56).is_some_and(|end| end <= len)
                    && read_at(r, pos, &mut z, "", "zip64 end record").is_ok()
                    && z[..4] == EOCD64_SIG
                {
                    found = Some((pos, z));
                    break;
                }
            }
            let Some((pos, z)) = found else {
                return Err(charx_err(
                    "",
                    "zip64 end locator points to no zip64 end record",
                ));
            };
            if u32_at(&z, 16) != 0 || u32_at(&z, 20) != 0 {
                return Err(charx_err(
                    "",
                    "multi-disk (split) zip archives are not supported",
                ));
            }
            count = u64_at(&z, 32);
            cd_size = u64_at(&z, 40);
            cd_offset = u64_at(&z, 48);
            cd_end = pos;
        }
    }
    let cd_start = cd_end.checked_sub(cd_size).ok_or_else(|| {
        charx_err(
            "",
            format!(
                "central directory size {cd_size} is larger than the data before the end record"
            ),
        )
    })?;
    let delta = cd_start.checked_sub(cd_offset).ok_or_else(|| {
        charx_err(
            "",
            format!(
                "central directory offset {cd_offset} points past its real position {cd_start}"
            ),
        )
    })?;
    if count > 0 {
        let mut sig = [0u8; 4];
        read_at(r, cd_start, &mut sig, "", "central directory")?;
        if sig != CENTRAL_SIG {
            return Err(charx_err(
                "",
                format!("no central directory header at byte {cd_start}"),
            ));
        }
    }
    Ok(Located {
        count,
        cd_start,
        cd_size,
        delta,
        len,
    })
}

/// One central directory header, undecoded.
struct RawEntry {
    made_by_host: u8,
    flags: u16,
    method: u16,
    crc: u32,
    csize: u64,
    usize: u64,
    offset: u64,
    external_attrs: u32,
    name: Vec<u8>,
    /// The name from an Info-ZIP Unicode Path extra field whose CRC matches `name`.
    unicode_name: Option<Vec<u8>>,
}

/// Reads the next central directory header from `cd`; `index` is for messages.
fn read_raw_entry<R: Read>(cd: &mut R, index: u64, count: u64) -> Result<RawEntry> {
    let short = |_| {
        charx_err(
            "",
            format!("central directory ends after {index} of {count} entries"),
        )
    };
    let mut h = [0u8; 46];
    cd.read_exact(&mut h).map_err(short)?;
    if h[..4] != CENTRAL_SIG {
        return Err(charx_err(
            "",
            format!("central directory entry {index} has a bad signature"),
        ));
    }
    let name_len = usize::from(u16_at(&h, 28));
    let extra_len = usize::from(u16_at(&h, 30));
    let comment_len = u64::from(u16_at(&h, 32));
    let mut name = vec![0u8; name_len];
    cd.read_exact(&mut name).map_err(short)?;
    let mut extra = vec![0u8; extra_len];
    cd.read_exact(&mut extra).map_err(short)?;
    let skipped =
        std::io::copy(&mut cd.take(comment_len), &mut std::io::sink()).map_err(Error::Io)?;
    if skipped != comment_len {
        return Err(charx_err(
            "",
            format!("central directory ends after {index} of {count} entries"),
        ));
    }
    let mut e = RawEntry {
        made_by_host: h[5],
        flags: u16_at(&h, 8),
        method: u16_at(&h, 10),
        crc: u32_at(&h, 16),
        csize: u64::from(u32_at(&h, 20)),
        usize: u64::from(u32_at(&h, 24)),
        offset: u64::from(u32_at(&h, 42)),
        external_attrs: u32_at(&h, 38),
        name,
        unicode_name: None,
    };
    // Zip64 extended information: 8-byte values for the saturated 4-byte fields, in order.
    let mut at = 0usize;
    while at + 4 <= extra.len() {
        let id = u16_at(&extra, at);
        let size = usize::from(u16_at(&extra, at + 2));
        let body = extra.get(at + 4..at + 4 + size).unwrap_or(&[]);
        if id == 0x7075
            && body.len() > 5
            && body[0] == 1
            && u32_at(body, 1) == crc32fast::hash(&e.name)
        {
            // Info-ZIP Unicode Path: version 1, CRC-32 of the header name, then the UTF-8 name.
            e.unicode_name = body.get(5..).map(<[u8]>::to_vec);
        }
        if id == 0x0001 {
            let mut p = 0usize;
            for field in [&mut e.usize, &mut e.csize, &mut e.offset] {
                if *field == 0xFFFF_FFFF {
                    if p + 8 > body.len() {
                        return Err(charx_err(
                            &String::from_utf8_lossy(&e.name),
                            "zip64 extra field is too short",
                        ));
                    }
                    *field = u64_at(body, p);
                    p += 8;
                }
            }
        }
        at += 4 + size;
    }
    Ok(e)
}

/// Code page 437, bytes 0x80..=0xFF (the zip format's default name encoding).
const CP437_HIGH: &str = "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{a0}";

fn decode_name(raw: &[u8], utf8_flag: bool) -> std::result::Result<String, String> {
    match std::str::from_utf8(raw) {
        Ok(s) => Ok(s.to_string()),
        Err(_) if utf8_flag => Err("name is flagged as utf-8 but is not valid utf-8".into()),
        Err(_) => {
            let high: Vec<char> = CP437_HIGH.chars().collect();
            Ok(raw
                .iter()
                .map(|&b| {
                    if b < 0x80 {
                        char::from(b)
                    } else {
                        high.get(usize::from(b - 0x80)).copied().unwrap_or('_')
                    }
                })
                .collect())
        }
    }
}

/// A checked entry of the central directory.
#[derive(Debug)]
struct Entry {
    name: String,
    raw_name: Vec<u8>,
    method: u16,
    crc: u32,
    csize: u64,
    usize: u64,
    offset: u64,
    is_dir: bool,
    /// A later entry with a name already seen: not read.
    duplicate: bool,
}

/// The checked central directory.
struct Directory {
    loc: Located,
    entries: Vec<Entry>,
    diagnostics: Vec<Diagnostic>,
}

impl Directory {
    /// Bytes before the first local header.
    fn prefix_len(&self) -> u64 {
        let first = self.entries.iter().map(|e| e.offset).min().unwrap_or(0);
        self.loc.delta.saturating_add(first)
    }
}

/// Reads and checks the whole central directory: paths, encryption, methods, declared sizes.
fn read_directory(r: &mut dyn ReadSeek, limits: &Limits) -> Result<Directory> {
    let loc = locate(r)?;
    if loc.count > limits.max_entries as u64 {
        return Err(Error::Limit(format!(
            "CHARX lists {} entries, over the limit of {}",
            loc.count, limits.max_entries
        )));
    }
    r.seek(SeekFrom::Start(loc.cd_start))?;
    let mut cd = BufReader::with_capacity(64 * 1024, Read::take(&mut *r, loc.cd_size));
    let mut entries = Vec::with_capacity(usize::try_from(loc.count.min(4096)).unwrap_or(0));
    let mut diagnostics = Vec::new();
    let mut seen = HashSet::new();
    let mut declared_total = 0u64;
    for index in 0..loc.count {
        let raw = read_raw_entry(&mut cd, index, loc.count)?;
        let lossy = String::from_utf8_lossy(&raw.name).into_owned();
        if raw.name.len() > MAX_PATH_LEN {
            return Err(charx_err(
                &lossy,
                format!("path is over the {MAX_PATH_LEN} byte limit"),
            ));
        }
        let name = match (&raw.unicode_name, raw.flags & 0x0800 != 0) {
            (Some(u), false) => decode_name(u, true),
            _ => decode_name(&raw.name, raw.flags & 0x0800 != 0),
        }
        .map_err(|p| charx_err(&lossy, p))?;
        if let Some(problem) = path_problem(&name) {
            return Err(charx_err(&name, problem));
        }
        if raw.flags & 0x0001 != 0 || raw.flags & 0x0040 != 0 {
            return Err(charx_err(
                &name,
                "entry is encrypted (encrypted CHARX is not supported)",
            ));
        }
        if raw.method != 0 && raw.method != 8 {
            return Err(charx_err(
                &name,
                format!(
                    "compression method {} is not supported (only stored and deflate)",
                    raw.method
                ),
            ));
        }
        let is_dir = name.ends_with('/');
        if !name.is_ascii() {
            diagnostics.push(Diagnostic::warning(
                "charx-non-ascii-path",
                "",
                format!("zip path {name:?} is not ascii (the spec says paths should be ascii)"),
            ));
        }
        let duplicate = !seen.insert(name.clone());
        if duplicate {
            diagnostics.push(Diagnostic::warning(
                "charx-duplicate-path",
                "",
                format!("zip path {name:?} appears more than once; the first entry is kept"),
            ));
        }
        let is_symlink = raw.made_by_host == 3 && (raw.external_attrs >> 16) & 0o170000 == 0o120000;
        if is_symlink && !is_dir && !duplicate {
            diagnostics.push(Diagnostic::warning(
                "charx-symlink-as-file",
                "",
                format!("zip entry {name:?} is a symlink; it is kept as a plain file holding the link text"),
            ));
        }
        if !is_dir && !duplicate {
            if raw.usize > limits.max_entry_size {
                return Err(Error::Limit(format!(
                    "CHARX entry {name:?} declares {} bytes, over the per-entry limit of {} \
                     (charx::Limits::max_entry_size)",
                    raw.usize, limits.max_entry_size
                )));
            }
            if raw.usize > RATIO_EXEMPT_SIZE && raw.usize / raw.csize.max(1) > limits.max_ratio {
                return Err(Error::Limit(format!(
                    "CHARX entry {name:?} declares a compression ratio of {}:1 ({} from {} bytes), \
                     over the limit of {}:1 (charx::Limits::max_ratio)",
                    raw.usize / raw.csize.max(1),
                    raw.usize,
                    raw.csize,
                    limits.max_ratio
                )));
            }
            if raw.method == 0 && raw.csize != raw.usize {
                return Err(charx_err(
                    &name,
                    format!(
                        "stored entry has compressed size {} but size {}",
                        raw.csize, raw.usize
                    ),
                ));
            }
            declared_total = declared_total.saturating_add(raw.usize);
            if declared_total > limits.max_total_size {
                return Err(Error::Limit(format!(
                    "CHARX entries declare more than {} bytes in total (reached at {name:?}; \
                     the option charx::Limits::max_total_size raises it)",
                    limits.max_total_size
                )));
            }
        }
        entries.push(Entry {
            name,
            raw_name: raw.name,
            method: raw.method,
            crc: raw.crc,
            csize: raw.csize,
            usize: raw.usize,
            offset: raw.offset,
            is_dir,
            duplicate,
        });
    }
    let dir = Directory {
        loc,
        entries,
        diagnostics,
    };
    Ok(dir)
}

/// Reads and decompresses one entry, trusting no size: at most `usize + 1` bytes are produced,
/// and never more than `budget + 1` (what is left of [`Limits::max_total_size`]).
fn read_entry(r: &mut dyn ReadSeek, loc: &Located, e: &Entry, budget: u64) -> Result<Vec<u8>> {
    let header = loc
        .delta
        .checked_add(e.offset)
        .ok_or_else(|| charx_err(&e.name, "local header offset overflows"))?;
    let mut h = [0u8; 30];
    read_at(r, header, &mut h, &e.name, "local file header")?;
    if h[..4] != LOCAL_SIG {
        return Err(charx_err(
            &e.name,
            format!("no local file header at byte {header}"),
        ));
    }
    let name_len = usize::from(u16_at(&h, 26));
    let extra_len = u64::from(u16_at(&h, 28));
    let mut local_name = vec![0u8; name_len];
    r.read_exact(&mut local_name).map_err(|_| {
        charx_err(
            &e.name,
            format!("file ends inside the local file header at byte {header}"),
        )
    })?;
    if local_name != e.raw_name {
        return Err(charx_err(
            &e.name,
            format!(
                "local file header names {:?}, unlike the central directory",
                String::from_utf8_lossy(&local_name)
            ),
        ));
    }
    let data_start = header.saturating_add(30 + name_len as u64 + extra_len);
    if data_start
        .checked_add(e.csize)
        .is_none_or(|end| end > loc.len)
    {
        return Err(charx_err(
            &e.name,
            format!(
                "{} bytes of data at byte {data_start} run past the end of the file",
                e.csize
            ),
        ));
    }
    r.seek(SeekFrom::Start(data_start))?;
    let raw = Read::take(&mut *r, e.csize);
    let cap = if e.method == 0 {
        e.usize
    } else {
        e.usize.min(MAX_PREALLOC)
    };
    let mut out = Vec::with_capacity(usize::try_from(cap).unwrap_or(0));
    let limit = e.usize.min(budget).saturating_add(1);
    let result = if e.method == 0 {
        raw.take(limit).read_to_end(&mut out)
    } else {
        flate2::read::DeflateDecoder::new(raw)
            .take(limit)
            .read_to_end(&mut out)
    };
    if let Err(err) = result {
        return Err(match err.kind() {
            std::io::ErrorKind::InvalidInput | std::io::ErrorKind::InvalidData => {
                charx_err(&e.name, format!("corrupt deflate data: {err}"))
            }
            std::io::ErrorKind::UnexpectedEof => charx_err(&e.name, "deflate data ends early"),
            _ => Error::Io(err),
        });
    }
    let got = out.len() as u64;
    if got > budget {
        return Err(Error::Limit(format!(
            "CHARX decompresses to more than its budget (reached at {:?}; the option \
             charx::Limits::max_total_size raises it)",
            e.name
        )));
    }
    if got > e.usize {
        return Err(charx_err(
            &e.name,
            format!(
                "decompressed data is longer than the declared {} bytes",
                e.usize
            ),
        ));
    }
    if got < e.usize {
        return Err(charx_err(
            &e.name,
            format!(
                "decompressed data is {got} bytes, shorter than the declared {}",
                e.usize
            ),
        ));
    }
    let crc = crc32fast::hash(&out);
    if crc != e.crc {
        return Err(charx_err(
            &e.name,
            format!(
                "crc-32 mismatch: data has {crc:08x}, header says {:08x}",
                e.crc
            ),
        ));
    }
    Ok(out)
}

/// The error for a missing `card.json`, with a hint when a near miss exists.
fn missing_card(dir: &Directory) -> Error {
    let near = dir.entries.iter().find(|e| {
        !e.is_dir
            && (e.name.eq_ignore_ascii_case(CARD_JSON)
                || e.name
                    .rsplit('/')
                    .next()
                    .is_some_and(|last| last.eq_ignore_ascii_case(CARD_JSON)))
    });
    let problem = match near {
        Some(e) => format!(
            "no card.json at the root of the archive (found {:?}; the name is case sensitive and must be at the root)",
            e.name
        ),
        None => "no card.json at the root of the archive".to_string(),
    };
    charx_err(CARD_JSON, problem)
}

fn prefix_note(dir: &Directory, diagnostics: &mut Vec<Diagnostic>) -> u64 {
    let prefix = dir.prefix_len();
    if prefix > 0 {
        diagnostics.push(Diagnostic::info(
            "charx-prefix",
            "",
            format!("{prefix} bytes (a JPEG or a self-extracting stub) come before the zip"),
        ));
    }
    prefix
}

/// What [`read_charx_each`] learnt about an archive besides its files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CharxInfo {
    /// Bytes in front of the zip (a JPEG or a self-extracting stub); 0 for a plain zip.
    pub prefix_len: u64,
    /// Warnings: non-ASCII paths, duplicate paths, symlinks read as files, a prefix.
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads a CHARX one file at a time, handing each (`card.json` included) to `f` in zip order.
///
/// Only one decompressed file is held at a time, so `ccv3 extract` can write a large archive to
/// disk without keeping it in memory. The whole central directory is checked, and the presence
/// of `card.json` confirmed, before `f` is first called. Directories and duplicates after the
/// first are skipped. An error returned by `f` stops the walk and is returned.
///
/// # Errors
///
/// As [`read_charx`], plus whatever `f` returns.
///
/// # Example
///
/// ```
/// use ccv3::charx::{read_charx_each, write_charx_to_vec, CharxFile, Limits};
/// let bytes = write_charx_to_vec(b"{}", &[CharxFile { path: "a.txt".into(), data: b"hi".to_vec() }])?;
/// let mut paths = Vec::new();
/// read_charx_each(std::io::Cursor::new(&bytes), &Limits::default(), |file| {
///     paths.push(file.path);
///     Ok(())
/// })?;
/// assert_eq!(paths, ["card.json", "a.txt"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_charx_each<R, F>(mut r: R, limits: &Limits, f: F) -> Result<CharxInfo>
where
    R: Read + Seek,
    F: FnMut(CharxFile) -> Result<()>,
{
    zip_each(&mut r, limits, true, f)
}

/// Reads every file of a zip archive that need not be a CHARX (a Backyard AI `.byaf`, say), with
/// the same safety rules and limits as [`read_charx`]: every file in zip order (directories
/// skipped, duplicates after the first dropped) and what the reader noticed.
///
/// # Errors
///
/// As [`read_charx`], except that no `card.json` is required.
///
/// ```
/// use ccv3::charx::{read_zip_files, write_charx_to_vec, CharxFile, Limits};
/// let bytes = write_charx_to_vec(b"{}", &[CharxFile { path: "a.txt".into(), data: b"hi".to_vec() }])?;
/// let (files, _) = read_zip_files(std::io::Cursor::new(&bytes), &Limits::default())?;
/// assert_eq!(files[1].path, "a.txt");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_zip_files<R: Read + Seek>(
    mut r: R,
    limits: &Limits,
) -> Result<(Vec<CharxFile>, CharxInfo)> {
    let mut files = Vec::new();
    let info = zip_each(&mut r, limits, false, |f| {
        files.push(f);
        Ok(())
    })?;
    Ok((files, info))
}

/// [`read_charx_each`], with `card.json` required or not.
fn zip_each<R, F>(mut r: R, limits: &Limits, need_card: bool, mut f: F) -> Result<CharxInfo>
where
    R: Read + Seek,
    F: FnMut(CharxFile) -> Result<()>,
{
    let dir = read_directory(&mut r, limits)?;
    if need_card
        && !dir
            .entries
            .iter()
            .any(|e| e.name == CARD_JSON && !e.duplicate)
    {
        return Err(missing_card(&dir));
    }
    let mut diagnostics = dir.diagnostics.clone();
    let prefix_len = prefix_note(&dir, &mut diagnostics);
    let mut total = 0u64;
    for e in dir.entries.iter().filter(|e| !e.is_dir && !e.duplicate) {
        let budget = limits.max_total_size.saturating_sub(total);
        let data = read_entry(&mut r, &dir.loc, e, budget)?;
        total = total.saturating_add(data.len() as u64);
        f(CharxFile {
            path: e.name.clone(),
            data,
        })?;
    }
    Ok(CharxInfo {
        prefix_len,
        diagnostics,
    })
}

/// Where the files of a CHARX read by [`read_charx_deferred`] are: enough to read each again.
#[derive(Debug)]
pub(crate) struct CharxPlaces {
    loc: Located,
    /// One entry per file of the archive read, in its order (`card.json` left out).
    entries: Vec<Entry>,
}

impl CharxPlaces {
    /// The decompressed size of the `i`th file (checked when it was first read).
    pub(crate) fn size(&self, i: usize) -> u64 {
        self.entries.get(i).map_or(0, |e| e.usize)
    }

    /// Reads and checks the `i`th file again (its size and CRC-32 were checked once already).
    pub(crate) fn load<R: Read + Seek>(&self, r: &mut R, i: usize) -> Result<Vec<u8>> {
        let e = self
            .entries
            .get(i)
            .ok_or_else(|| Error::Parameter(format!("no CHARX file number {i}")))?;
        read_entry(r, &self.loc, e, e.usize)
    }
}

/// [`read_charx`] without keeping the files: each is decompressed and checked as [`read_charx`]
/// does (so every error and warning is the same), then dropped; the archive's files come back
/// with empty data, and [`CharxPlaces`] reads any of them again (issue 12: `ccv3 extract` and
/// `convert` hold one asset at a time).
pub(crate) fn read_charx_deferred<R: Read + Seek>(
    mut r: R,
    limits: &Limits,
) -> Result<(CharxArchive, CharxPlaces)> {
    let dir = read_directory(&mut r, limits)?;
    if !dir
        .entries
        .iter()
        .any(|e| e.name == CARD_JSON && !e.duplicate)
    {
        return Err(missing_card(&dir));
    }
    let mut diagnostics = dir.diagnostics.clone();
    let prefix_len = prefix_note(&dir, &mut diagnostics);
    let mut total = 0u64;
    let mut card_json = Vec::new();
    let mut files = Vec::new();
    let mut entries = Vec::new();
    for e in dir
        .entries
        .into_iter()
        .filter(|e| !e.is_dir && !e.duplicate)
    {
        let budget = limits.max_total_size.saturating_sub(total);
        let data = read_entry(&mut r, &dir.loc, &e, budget)?;
        total = total.saturating_add(data.len() as u64);
        if e.name == CARD_JSON {
            card_json = data;
        } else {
            files.push(CharxFile {
                path: e.name.clone(),
                data: Vec::new(),
            });
            entries.push(e);
        }
    }
    let archive = CharxArchive {
        card_json,
        files,
        prefix_len,
        diagnostics,
    };
    Ok((
        archive,
        CharxPlaces {
            loc: dir.loc,
            entries,
        },
    ))
}

/// Reads a whole CHARX: `card.json`, every other file, the prefix length and warnings.
///
/// Entries are decompressed one at a time, in zip order, each checked against `limits`
/// (see the module's safety rules). [`read_charx_each`] does the same without keeping the files.
///
/// # Errors
///
/// [`Error::Charx`] for a broken or hostile archive (naming the entry), including a missing
/// `card.json`; [`Error::Limit`] when a limit is hit; [`Error::Io`] when the reader fails.
///
/// ```
/// use ccv3::charx::{read_charx, write_charx_to_vec, CharxFile, Limits};
/// let zip = write_charx_to_vec(b"{}", &[CharxFile { path: "x.txt".into(), data: b"x".to_vec() }])?;
/// let archive = read_charx(std::io::Cursor::new(zip), &Limits::default())?;
/// assert_eq!(archive.files[0].path, "x.txt");
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn read_charx<R: Read + Seek>(r: R, limits: &Limits) -> Result<CharxArchive> {
    let mut card_json = Vec::new();
    let mut files = Vec::new();
    let info = read_charx_each(r, limits, |file| {
        if file.path == CARD_JSON {
            card_json = file.data;
        } else {
            files.push(file);
        }
        Ok(())
    })?;
    Ok(CharxArchive {
        card_json,
        files,
        prefix_len: info.prefix_len,
        diagnostics: info.diagnostics,
    })
}

/// Reads a whole CHARX held in memory; see [`read_charx`].
///
/// # Errors
///
/// As [`read_charx`].
///
/// ```
/// use ccv3::charx::{read_charx_from_slice, write_charx_to_vec, CharxFile, Limits};
/// let zip = write_charx_to_vec(b"{}", &[CharxFile { path: "x.txt".into(), data: b"x".to_vec() }])?;
/// let archive = read_charx_from_slice(&zip, &Limits::default())?;
/// assert_eq!((archive.card_json.as_slice(), archive.files.len()), (&b"{}"[..], 1));
/// // Limits are checked entry by entry.
/// let tight = Limits { max_entries: 1, ..Limits::default() };
/// assert!(read_charx_from_slice(&zip, &tight).is_err());
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn read_charx_from_slice(bytes: &[u8], limits: &Limits) -> Result<CharxArchive> {
    read_charx(Cursor::new(bytes), limits)
}

/// Reads only `card.json` of a CHARX (the fast path for inspecting and validating).
///
/// The whole central directory is still checked, so a hostile archive fails here too; no other
/// entry is decompressed.
///
/// # Errors
///
/// As [`read_charx`].
///
/// ```
/// use ccv3::charx::{read_charx_card_json, write_charx_to_vec, CharxFile, Limits};
/// let zip = write_charx_to_vec(b"{}", &[CharxFile { path: "big.bin".into(), data: vec![0; 1 << 16] }])?;
/// // Only card.json is decompressed.
/// assert_eq!(read_charx_card_json(std::io::Cursor::new(zip), &Limits::default())?, b"{}");
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn read_charx_card_json<R: Read + Seek>(mut r: R, limits: &Limits) -> Result<Vec<u8>> {
    let dir = read_directory(&mut r, limits)?;
    let entry = dir
        .entries
        .iter()
        .find(|e| e.name == CARD_JSON && !e.duplicate)
        .ok_or_else(|| missing_card(&dir))?;
    read_entry(&mut r, &dir.loc, entry, limits.max_total_size)
}

/// Walks the central directory without judging it, calling `f` with each raw name and offset.
fn scan_names(bytes: &[u8], f: impl FnMut(&[u8], u64) -> bool) -> Option<Located> {
    scan_names_in(&mut Cursor::new(bytes), f)
}

/// [`scan_names`] over any reader.
fn scan_names_in(r: &mut dyn ReadSeek, mut f: impl FnMut(&[u8], u64) -> bool) -> Option<Located> {
    let loc = locate(r).ok()?;
    r.seek(SeekFrom::Start(loc.cd_start)).ok()?;
    let mut cd = BufReader::new(Read::take(&mut *r, loc.cd_size));
    // A corrupt count cannot make this loop long: each header needs 46 real bytes.
    for index in 0..loc.count {
        let raw = read_raw_entry(&mut cd, index, loc.count).ok()?;
        if !f(&raw.name, raw.offset) {
            break;
        }
    }
    Some(loc)
}

/// The byte offset where the zip inside `bytes` starts (its first local file header).
///
/// 0 for a plain zip; the prefix length for a JPEG+zip polyglot or a self-extracting archive.
/// The end of central directory record is used first; without one, the first `PK\x03\x04`
/// (as SillyTavern does). `None` when neither is found.
///
/// # Example
///
/// ```
/// use ccv3::charx::{find_zip_start, write_charx_to_vec};
/// let zip = write_charx_to_vec(b"{}", &[])?;
/// let mut jpeg_and_zip = vec![0xFF, 0xD8, 0xFF, 0xD9];
/// jpeg_and_zip.extend_from_slice(&zip);
/// assert_eq!(find_zip_start(&zip), Some(0));
/// assert_eq!(find_zip_start(&jpeg_and_zip), Some(4));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn find_zip_start(bytes: &[u8]) -> Option<usize> {
    let mut first: Option<u64> = None;
    if let Some(loc) = scan_names(bytes, |_, offset| {
        first = Some(first.map_or(offset, |f| f.min(offset)));
        true
    }) {
        let start = loc.delta.checked_add(first.unwrap_or(0))?;
        let start = usize::try_from(start).ok()?;
        if bytes.get(start..start.saturating_add(4)) == Some(&LOCAL_SIG[..]) || first.is_none() {
            return Some(start);
        }
    }
    memchr::memmem::find(bytes, &LOCAL_SIG)
}

/// True when the zip at the end of `r` (after any prefix: a JPEG, a stub) lists `card.json` in
/// its central directory. Reads only the end records and the directory, so a file can be sniffed
/// without being read whole; the reader's position is left anywhere.
///
/// ```
/// use ccv3::charx::{reader_lists_card_json, write_charx_to_vec};
/// let mut with = std::io::Cursor::new(write_charx_to_vec(b"{}", &[])?);
/// assert!(reader_lists_card_json(&mut with));
/// assert!(!reader_lists_card_json(&mut std::io::Cursor::new(b"not a zip".to_vec())));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn reader_lists_card_json<R: Read + Seek>(r: &mut R) -> bool {
    let mut has_card = false;
    scan_names_in(r, |name, _| {
        has_card = name == CARD_JSON.as_bytes();
        !has_card
    });
    has_card
}

/// True when `bytes` look like a CHARX: a zip at byte 0, or a zip after a prefix (JPEG, stub)
/// whose central directory lists `card.json`.
///
/// A cheap sniff for format detection; [`read_charx`] does the real checking.
///
/// ```
/// let zip = ccv3::charx::write_charx_to_vec(br#"{"spec":"chara_card_v3"}"#, &[])?;
/// assert!(ccv3::charx::looks_like_charx(&zip));
/// assert!(!ccv3::charx::looks_like_charx(b"PK but not a zip"));
/// # Ok::<(), ccv3::Error>(())
/// ```
pub fn looks_like_charx(bytes: &[u8]) -> bool {
    if bytes.starts_with(&LOCAL_SIG) {
        return true;
    }
    let mut has_card = false;
    scan_names(bytes, |name, _| {
        has_card = name == CARD_JSON.as_bytes();
        !has_card
    });
    has_card
}
