//! The per-card work of `ccv3 index` that does not touch the file or the database writer: the
//! tables ([`SCHEMA`]), the token counts per field ([`card_tokens`], [`lorebook_tokens`]) and
//! the card hash ([`card_hash`]). The command (`cmd/index.rs`) and the archive floor benchmark
//! (`examples/archive_floor.rs`, issue 16) call the same functions.

use ccv3::{Card, CardData, Entry};
use ccv3_tokens::{PieceCache, Tokenizer};
use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::io::{BufWriter, Write};

/// The tables of the index (created when missing).
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS cards (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    card_hash TEXT,
    kind TEXT NOT NULL,            -- card | lorebook | unreadable
    name TEXT,
    creator TEXT,
    tags TEXT,                     -- JSON array
    spec TEXT,                     -- V1 | V2 | V3
    spec_version TEXT,
    container TEXT,
    greetings INTEGER,             -- first_mes (1 when not empty) + alternate greetings
    group_greetings INTEGER,
    entries INTEGER,
    enabled_entries INTEGER,
    assets INTEGER,
    tokenizer TEXT,
    tokens TEXT,                   -- JSON object: field -> tokens, \"lorebook\" -> all entries
    tokens_total INTEGER,
    errors INTEGER NOT NULL DEFAULT 0,
    warnings INTEGER NOT NULL DEFAULT 0,
    findings TEXT,                 -- JSON array of {severity, code, path, message}
    error TEXT,                    -- why the file could not be read
    indexed_run INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS cards_card_hash ON cards(card_hash);
CREATE VIRTUAL TABLE IF NOT EXISTS cards_fts USING fts5(name, description, tags, creator,
    content='', contentless_delete=1);
";

/// FTS5 merges the word lists each transaction writes once 16 of them pile up at a level (its
/// default is 4, the range 2-16): fewer merges while an archive is indexed (the same matches;
/// a query reads a few more lists). Stored in the table's configuration, set on every open.
pub const FTS_AUTOMERGE: &str = "INSERT INTO cards_fts (cards_fts, rank) VALUES ('automerge', 16);";

/// The card text fields whose tokens are counted.
pub const FIELDS: [&str; 8] = [
    "description",
    "personality",
    "scenario",
    "first_mes",
    "mes_example",
    "system_prompt",
    "post_history_instructions",
    "creator_notes",
];

/// A card's token counts as the index stores them.
pub struct CardTokens {
    /// The `tokens` column: a JSON object, field -> tokens, and `lorebook` -> all entries.
    pub json: String,
    /// The `tokens_total` column.
    pub total: usize,
}

/// The tokens of every field of [`FIELDS`] and of the embedded lorebook's entries.
pub fn card_tokens(tok: &dyn Tokenizer, d: &CardData) -> CardTokens {
    let texts = [
        &d.description,
        &d.personality,
        &d.scenario,
        &d.first_mes,
        &d.mes_example,
        &d.system_prompt,
        &d.post_history_instructions,
        &d.creator_notes,
    ];
    let mut tokens = TokensJson::default();
    for (name, text) in FIELDS.iter().zip(texts) {
        tokens.push(name, count(tok, text));
    }
    if let Some(b) = &d.character_book {
        tokens.push("lorebook", lorebook_tokens(tok, &b.entries));
    }
    tokens.finish()
}

/// A lorebook file's token counts: `lorebook` alone.
pub fn book_tokens(tok: &dyn Tokenizer, entries: &[Entry]) -> CardTokens {
    let mut tokens = TokensJson::default();
    tokens.push("lorebook", lorebook_tokens(tok, entries));
    tokens.finish()
}

/// The tokens of all the entries' contents.
pub fn lorebook_tokens(tok: &dyn Tokenizer, entries: &[Entry]) -> usize {
    entries.iter().map(|e| count(tok, &e.content)).sum()
}

/// The `tokens` column being written: `{"description":12,...}`, the names in the order pushed
/// (as `serde_json` writes such an object; the names need no escape), and their total.
#[derive(Default)]
struct TokensJson {
    text: String,
    total: usize,
}

impl TokensJson {
    /// Adds `name`'s count.
    fn push(&mut self, name: &str, n: usize) {
        use std::fmt::Write as _;
        self.text.push(if self.text.is_empty() { '{' } else { ',' });
        let _ = write!(self.text, "\"{name}\":{n}");
        self.total += n;
    }

    /// The JSON object and the total.
    fn finish(mut self) -> CardTokens {
        if self.text.is_empty() {
            self.text.push('{');
        }
        self.text.push('}');
        CardTokens {
            json: self.text,
            total: self.total,
        }
    }
}

thread_local! {
    /// Each worker's piece -> count table ([`ccv3_tokens::PieceCache`], 256 KiB a thread): card
    /// texts repeat their words, and a hit skips the vocabulary lookup (issue 16).
    static PIECES: RefCell<PieceCache> = RefCell::new(PieceCache::new());
}

/// The tokens of `text`, counted through this thread's piece cache.
fn count(tok: &dyn Tokenizer, text: &str) -> usize {
    PIECES.with(|cache| match cache.try_borrow_mut() {
        Ok(mut cache) => tok.count_cached(text, &mut cache),
        Err(_) => tok.count(text),
    })
}

/// The index's `card_hash`: SHA-256 (hex) of the card's compact V3 JSON without `assets`
/// (their URIs depend on the container: the same card in a PNG, a CHARX and a JSON file has
/// one hash). The assets are taken out while hashing and put back.
pub fn card_hash(card: &mut Card) -> String {
    let assets = card.data.assets.take();
    let hash = hash_of(|w| card.write_v3_json(w, false));
    card.data.assets = assets;
    hash
}

/// Bytes gathered before each SHA-256 update: the serializer writes a card a few bytes at a
/// time (a quote, a key, a comma), and each write was a call into the hasher.
const HASH_BUFFER: usize = 16 * 1024;

/// SHA-256 (hex) of what `write` writes.
pub fn hash_of(write: impl FnOnce(&mut BufWriter<&mut Sha256>) -> std::io::Result<()>) -> String {
    let mut h = Sha256::new();
    {
        let mut w = BufWriter::with_capacity(HASH_BUFFER, &mut h);
        let _ = write(&mut w).and_then(|()| w.flush());
    }
    let digest = h.finalize();
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 15)]));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(json: &str) -> Card {
        let mut diags = Vec::new();
        Card::from_json_text(json.as_bytes(), &mut diags).expect("a card")
    }

    /// Issue 16 ("hash of the card data, duplicates across containers found"): the hash is
    /// SHA-256 of the compact V3 JSON without `assets`, and the card keeps its assets.
    #[test]
    fn card_hash_leaves_out_the_assets_and_keeps_them() {
        let plain = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","description":"d"}}"#;
        let with_assets = r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","description":"d","assets":[{"type":"icon","uri":"embeded://a.png","name":"main","ext":"png"}]}}"#;
        let mut a = card(plain);
        let mut b = card(with_assets);
        let expected = {
            let mut json = Vec::new();
            a.write_v3_json(&mut json, false).expect("written");
            format!("{:x}", Sha256::digest(&json))
        };
        assert_eq!(card_hash(&mut a), expected);
        assert_eq!(card_hash(&mut b), expected);
        assert_eq!(b.data.assets.as_ref().map(Vec::len), Some(1));
    }

    /// Issue 16 ("token counts per field"): every field of [`FIELDS`] in order, then the book's
    /// entries together, and the total of them all.
    #[test]
    fn card_tokens_counts_every_field_and_the_book() {
        let c = card(
            r#"{"spec":"chara_card_v3","spec_version":"3.0","data":{"name":"A","description":"one two three","first_mes":"hello there","character_book":{"entries":[{"keys":["k"],"content":"alpha beta","enabled":true,"insertion_order":0,"use_regex":false,"extensions":{}}],"extensions":{}}}}"#,
        );
        let tok = ccv3_tokens::load(&"o200k".parse().expect("a kind")).expect("o200k");
        let counts = card_tokens(tok.as_ref(), &c.data);
        let v: serde_json::Value = serde_json::from_str(&counts.json).expect("JSON");
        let keys: Vec<&str> = v
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        let mut expected = FIELDS.to_vec();
        expected.push("lorebook");
        assert_eq!(keys, expected);
        assert_eq!(v["description"], tok.count("one two three"));
        assert_eq!(v["lorebook"], tok.count("alpha beta"));
        let sum: u64 = v
            .as_object()
            .expect("object")
            .values()
            .filter_map(|n| n.as_u64())
            .sum();
        assert_eq!(counts.total as u64, sum);
    }

    /// Issue 16 (the `tokens` column of `ccv3 index`, [`SCHEMA`]): written by hand, it is the
    /// text `serde_json` wrote for the same object before (keys in the order of [`FIELDS`], then
    /// `lorebook`; a lorebook file has `lorebook` alone), and its total is the sum.
    #[test]
    fn tokens_column_is_the_json_serde_json_writes() {
        let mut tokens = TokensJson::default();
        let mut map = serde_json::Map::new();
        for (i, name) in FIELDS.iter().chain(["lorebook"].iter()).enumerate() {
            let n = i * 977 + usize::from(i == 3) * 1_000_000;
            tokens.push(name, n);
            map.insert((*name).to_string(), serde_json::json!(n));
        }
        let total: usize = (0..=FIELDS.len()).map(|i| i * 977).sum::<usize>() + 1_000_000;
        assert_eq!(tokens.total, total);
        assert_eq!(
            tokens.finish().json,
            serde_json::Value::Object(map).to_string()
        );
        let mut book = TokensJson::default();
        book.push("lorebook", 0);
        assert_eq!(
            book.finish().json,
            serde_json::json!({ "lorebook": 0 }).to_string()
        );
        assert_eq!(TokensJson::default().finish().json, "{}");
    }
}
