//! Builders for hostile files: cards, books and chats as JSON, PNG cards chunk by chunk, CHARX
//! archives entry by entry. Everything is deterministic (no randomness, no clock).

use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;

/// A V3 card with `book` (entries) as its character book, if any; `fields` override data fields.
pub fn card(fields: &[(&str, Value)], book: Option<Vec<Value>>) -> Value {
    // A RisuAI card (`extensions.risuai`): its blow-ups use RisuAI's macros (`#each`, ...),
    // which `auto` expands only in RisuAI's dialect (issue 17).
    let mut data = json!({
        "name": "Hostile", "description": "", "personality": "", "scenario": "",
        "first_mes": "Hello.", "mes_example": "", "creator_notes": "", "system_prompt": "",
        "post_history_instructions": "", "alternate_greetings": [], "tags": [], "creator": "",
        "character_version": "", "extensions": {"risuai": {}}, "group_only_greetings": []
    });
    for (k, v) in fields {
        data[*k] = v.clone();
    }
    if let Some(entries) = book {
        data["character_book"] = json!({"entries": entries, "extensions": {}});
    }
    json!({"spec": "chara_card_v3", "spec_version": "3.0", "data": data})
}

/// A standalone `lorebook_v3` file.
pub fn book(entries: Vec<Value>) -> Value {
    json!({"spec": "lorebook_v3", "data": {"entries": entries, "extensions": {}}})
}

/// A lorebook entry with these keys and content.
pub fn entry(id: usize, keys: Vec<String>, content: &str) -> Value {
    json!({
        "keys": keys, "content": content, "extensions": {}, "enabled": true,
        "insertion_order": id, "use_regex": false, "id": id
    })
}

/// An entry that is always in (constant), so its content is always expanded.
pub fn constant(id: usize, content: &str) -> Value {
    let mut e = entry(id, vec![format!("k{id}")], content);
    e["constant"] = json!(true);
    e
}

/// A chat of user messages with these contents, oldest first.
pub fn chat(messages: &[&str]) -> Value {
    Value::Array(
        messages
            .iter()
            .map(|m| json!({"role": "user", "name": "User", "content": m}))
            .collect(),
    )
}

/// Writes `value` as JSON to `path`, streaming (big values are never held twice as text).
pub fn write_json(path: &Path, value: &Value) {
    let f = std::fs::File::create(path).expect("create");
    let mut w = std::io::BufWriter::new(f);
    serde_json::to_writer(&mut w, value).expect("write json");
    w.flush().expect("flush");
}

/// Writes raw bytes.
pub fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).expect("write");
}

/// A PNG built chunk by chunk: a 1x1 RGB image, then `chunks`, then IEND.
pub struct Png {
    bytes: Vec<u8>,
}

impl Png {
    /// Signature, IHDR and one IDAT of a 1x1 black RGB image.
    pub fn new() -> Self {
        let mut p = Png {
            bytes: b"\x89PNG\r\n\x1a\n".to_vec(),
        };
        p.chunk(b"IHDR", &[0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
        p.chunk(b"IDAT", &zlib(&[0, 0, 0, 0]));
        p
    }

    /// The offset the next chunk will start at.
    pub fn offset(&self) -> usize {
        self.bytes.len()
    }

    /// Appends one chunk with a correct CRC.
    pub fn chunk(&mut self, kind: &[u8; 4], data: &[u8]) -> &mut Self {
        self.bytes
            .extend_from_slice(&(data.len() as u32).to_be_bytes());
        self.bytes.extend_from_slice(kind);
        self.bytes.extend_from_slice(data);
        let mut h = crc32fast::Hasher::new();
        h.update(kind);
        h.update(data);
        self.bytes.extend_from_slice(&h.finalize().to_be_bytes());
        self
    }

    /// Appends raw bytes (a lying chunk header, say).
    pub fn raw(&mut self, bytes: &[u8]) -> &mut Self {
        self.bytes.extend_from_slice(bytes);
        self
    }

    /// A `tEXt` chunk `keyword NUL text`.
    pub fn text(&mut self, keyword: &str, text: &[u8]) -> &mut Self {
        let mut d = keyword.as_bytes().to_vec();
        d.push(0);
        d.extend_from_slice(text);
        self.chunk(b"tEXt", &d)
    }

    /// A `zTXt` chunk whose text is already zlib-compressed.
    pub fn ztxt_raw(&mut self, keyword: &str, compressed: &[u8]) -> &mut Self {
        let mut d = keyword.as_bytes().to_vec();
        d.extend_from_slice(&[0, 0]);
        d.extend_from_slice(compressed);
        self.chunk(b"zTXt", &d)
    }

    /// A compressed `iTXt` chunk whose text is already zlib-compressed.
    pub fn itxt_raw(&mut self, keyword: &str, compressed: &[u8]) -> &mut Self {
        let mut d = keyword.as_bytes().to_vec();
        d.extend_from_slice(&[0, 1, 0, 0, 0]);
        d.extend_from_slice(compressed);
        self.chunk(b"iTXt", &d)
    }

    /// The card as a `ccv3` chunk (base64 of its JSON).
    pub fn card(&mut self, card: &Value) -> &mut Self {
        let text = base64(&serde_json::to_vec(card).expect("json"));
        self.text("ccv3", text.as_bytes())
    }

    /// IEND, then the bytes.
    pub fn finish(&mut self) -> Vec<u8> {
        self.chunk(b"IEND", &[]);
        std::mem::take(&mut self.bytes)
    }
}

/// zlib (RFC 1950) of `data`, fast setting.
pub fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).expect("zlib");
    e.finish().expect("zlib")
}

/// zlib of `n` copies of `byte`, streamed in 1 MiB pieces.
pub fn zlib_repeat(byte: u8, n: usize) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    let piece = vec![byte; 1 << 20];
    let mut left = n;
    while left > 0 {
        let k = left.min(piece.len());
        e.write_all(&piece[..k]).expect("zlib");
        left -= k;
    }
    e.finish().expect("zlib")
}

/// Standard base64 with padding.
pub fn base64(data: &[u8]) -> String {
    base64_simd::STANDARD.encode_to_string(data)
}

/// A CHARX (zip) builder.
pub struct Charx {
    zip: zip::ZipWriter<std::io::BufWriter<std::fs::File>>,
}

impl Charx {
    /// Starts a CHARX at `path`.
    pub fn create(path: &Path) -> Self {
        let f = std::fs::File::create(path).expect("create");
        Charx {
            zip: zip::ZipWriter::new(std::io::BufWriter::new(f)),
        }
    }

    /// Adds `name` holding `data`, deflated (or stored).
    pub fn add(&mut self, name: &str, data: &[u8], deflate: bool) -> &mut Self {
        let method = if deflate {
            zip::CompressionMethod::Deflated
        } else {
            zip::CompressionMethod::Stored
        };
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(method)
            .large_file(data.len() as u64 >= u32::MAX as u64);
        self.zip.start_file(name, opts).expect("zip entry");
        self.zip.write_all(data).expect("zip data");
        self
    }

    /// Adds `name` holding `n` copies of `byte`, deflated, streamed.
    pub fn add_repeat(&mut self, name: &str, byte: u8, n: u64) -> &mut Self {
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .compression_level(Some(1))
            .large_file(n >= u32::MAX as u64);
        self.zip.start_file(name, opts).expect("zip entry");
        let piece = vec![byte; 1 << 20];
        let mut left = n;
        while left > 0 {
            let k = left.min(piece.len() as u64) as usize;
            self.zip.write_all(&piece[..k]).expect("zip data");
            left -= k as u64;
        }
        self
    }

    /// Adds every entry of the one-entry zip `template` again under each of `names`, copying
    /// its compressed bytes (no recompression).
    pub fn add_copies(
        &mut self,
        template: &Path,
        names: impl Iterator<Item = String>,
    ) -> &mut Self {
        let f = std::fs::File::open(template).expect("template");
        let mut archive = zip::ZipArchive::new(f).expect("template zip");
        for name in names {
            let file = archive.by_index_raw(0).expect("template entry");
            self.zip.raw_copy_file_rename(file, name).expect("raw copy");
        }
        self
    }

    /// Writes the central directory.
    pub fn finish(self) {
        let mut w = self.zip.finish().expect("zip finish");
        w.flush().expect("flush");
    }
}

/// Bytes from a small fixed alphabet by a linear congruential sequence: compressible about 2:1,
/// so a deflated entry stays under any compression-ratio check.
pub fn noise(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            b"abcdefghijklmnop"[(x >> 28) as usize]
        })
        .collect()
}
