//! OpenAI's BPE encodings `o200k_base` (GPT-4o and later) and `cl100k_base` (GPT-3.5/GPT-4),
//! giving the same ids as `tiktoken`'s `encode_ordinary` (and `tiktoken-rs` 0.12) without its
//! start-up cost.
//!
//! # How it works
//!
//! - Vocabularies: `data/o200k_base.tiktoken` and `data/cl100k_base.tiktoken` (one
//!   `base64(token) rank` line per token; see `data/NOTICE`) are compiled by `build.rs` into two
//!   blobs each that the binary embeds with `include_bytes!` (feature `bundled`, on by default;
//!   without it the same blobs come at run time from [`register_vocabulary`], one file per
//!   encoding, see `vocabulary_file` (feature `bundled`)): every token's bytes end to end, and
//!   an open-addressing hash table of `u64` slots packing rank, offset, length and a hash tag
//!   (layout in `src/vocab_layout.rs`). Nothing is decoded or allocated per token at run time and
//!   nothing is fetched at build or run time. The blobs add about 5.6 MB (o200k) and 2.7 MB
//!   (cl100k) to a binary that uses them; the OS pages in only what lookups touch.
//! - Splitting: the text is cut into pieces by the encoding's published pattern, run on the
//!   `regex` crate in linear time with its one lookahead (`\s+(?!\S)`) done by hand, the pieces
//!   tested equal to `tiktoken-rs`'s (which runs the published patterns on `fancy-regex`).
//!   `cl100k_base`'s possessive quantifiers (`?+`, `++`, `*+`) are plain greedy ones here: each
//!   stands where nothing after it could take back what it matched, so they match the same. On ASCII text
//!   `o200k_base`'s pieces come from a hand-written matcher (`src/ascii_split.rs`, the same
//!   matches, tested against the regex), which hands a piece to the regex only where it would
//!   have to look at a non-ASCII byte: a `find_at` per piece of five bytes or so was half of
//!   `ccv3 index`'s time (issue 16).
//! - Merging: a piece that is a token is one token; otherwise byte pair merges as described in
//!   `src/bpe.rs` (lowest-rank adjacent pair first, leftmost on ties), in O(n log n) for long
//!   pieces.
//! - Cost: building an encoding is compiling its split pattern and checking that the 256 single
//!   bytes are tokens: about 3 ms for o200k and 1.5 ms for cl100k in a fresh release process,
//!   with 5 to 7 MB and 4 MB of peak memory (`tiktoken-rs` took 130 to 150 ms and 50 MB, 55 ms and
//!   26 MB: `examples/cold_build.rs`). Each encoding is still built at most once per process, on
//!   first use, and shared by every [`Tiktoken`] through a `OnceLock`. Counting runs at 20 to 33
//!   MiB/s (o200k) and 17 to 25 MiB/s (cl100k) of mixed English and Japanese on a busy 2-core
//!   machine, as fast as `tiktoken-rs` measured in the same run (`benches/tokens.rs`).
//! - The equivalence with `tiktoken-rs` is tested on a varied text set and on arbitrary strings
//!   (`o200k_counts_and_ids_equal_tiktoken_rs` and its neighbours in this module).
//!
//! Choices:
//! - Special tokens such as `<|endoftext|>` are counted as ordinary text (`encode_ordinary`):
//!   card and chat text is data, and SillyTavern does not let it open special tokens either.
//! - `tiktoken-rs`'s engine gives up (a backtracking limit, and a panic) on a run of about a
//!   million whitespace characters without a line break. As `ccv3` did when it split with the
//!   same engine, runs of whitespace longer than [`MAX_WHITESPACE_RUN`] characters are cut into
//!   pieces of that many characters and the pieces are counted one after the other. Text without
//!   such a run is counted exactly; text with one may be off by a token or two per cut.

use std::sync::OnceLock;

use crate::bpe::{Vocab, SHORT_PIECE};
use crate::encoding::Encoding;
use crate::piece_cache::{Key, PieceCache};
use crate::tokenizer::Tokenizer;
use crate::Error;
use std::collections::HashMap;

/// Longest run of whitespace characters counted in one piece; longer runs are cut.
pub const MAX_WHITESPACE_RUN: usize = 65_536;

/// The alternatives `o200k_base`'s split pattern starts with, shared by `O200K_PATTERN` and
/// [`O200K_LINEAR`], which differ only in how it ends.
macro_rules! o200k_head {
    () => {
        concat!(
            r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
            "|",
            r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
            "|",
            r"\p{N}{1,3}",
            "|",
            r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
            "|",
            r"\s*[\r\n]+",
        )
    };
}

/// The split pattern of `o200k_base`, as tiktoken publishes it.
#[cfg(test)]
const O200K_PATTERN: &str = concat!(o200k_head!(), "|", r"\s+(?!\S)", "|", r"\s+");

/// `O200K_PATTERN` without its one lookahead: `\s+(?!\S)|\s+` becomes `\s+`, and
/// [`Split::Linear`] gives back the last character of such a whitespace run when a
/// non-whitespace character follows it, as the lookahead does. The `regex` crate runs it in
/// linear time, with leftmost-first alternation as a backtracking engine has.
pub(crate) const O200K_LINEAR: &str = concat!(o200k_head!(), "|", r"\s+");

/// The split pattern of `cl100k_base`, as tiktoken publishes it.
#[cfg(test)]
const CL100K_PATTERN: &str = concat!(
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+",
    r"| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s",
);

/// `CL100K_PATTERN` for the `regex` crate: the possessive quantifiers greedy (the same matches:
/// the class before `\p{L}+` has no letters, the one before `[\r\n]*` no line breaks, and the
/// others end their alternative), and `\s+(?!\S)|\s` as `\s+`, whose last character
/// [`PieceRanges`] gives back as the lookahead does (see [`O200K_LINEAR`]).
const CL100K_LINEAR: &str = concat!(
    r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+",
);

/// One built encoding: its vocabulary and its compiled split pattern.
pub(crate) struct Core {
    vocab: Vocab<'static>,
    split: Split,
}

/// A compiled split pattern, on the `regex` crate (about ten times faster on long texts than
/// `fancy-regex`, issue 12: `ccv3 prompt` of a 64 MiB chat spent most of its time splitting; and
/// one regex engine less in the npm core, issue 11).
enum Split {
    /// [`CL100K_LINEAR`].
    Cl100k(regex::Regex),
    /// [`O200K_LINEAR`], with the hand-written matcher on ASCII text.
    O200k(regex::Regex),
}

/// The shared encoder of each encoding, built or registered once per process. A failed build of
/// a bundled vocabulary is kept (it would fail again); a missing vocabulary is not stored, so a
/// later [`register_vocabulary`] can fill the cell.
static O200K: OnceLock<Result<Core, String>> = OnceLock::new();
/// See [`O200K`].
static CL100K: OnceLock<Result<Core, String>> = OnceLock::new();

impl Encoding {
    /// The cell holding the shared encoder.
    fn cell(self) -> &'static OnceLock<Result<Core, String>> {
        match self {
            Encoding::O200k => &O200K,
            Encoding::Cl100k => &CL100K,
        }
    }

    /// The two blobs of the vocabulary compiled into the binary.
    #[cfg(feature = "bundled")]
    fn bundled(self) -> (&'static [u8], &'static [u8]) {
        macro_rules! blob {
            ($name:literal, $part:literal) => {
                include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".", $part))
            };
        }
        match self {
            Encoding::O200k => (blob!("o200k_base", "bytes"), blob!("o200k_base", "slots")),
            Encoding::Cl100k => (blob!("cl100k_base", "bytes"), blob!("cl100k_base", "slots")),
        }
    }

    /// Builds the encoder over a vocabulary's two blobs: no caching.
    fn build_from(self, bytes: &'static [u8], slots: &'static [u8]) -> Result<Core, String> {
        let vocab = Vocab::new(bytes, slots)?;
        let compile =
            |pattern| regex::Regex::new(pattern).map_err(|e| format!("split pattern: {e}"));
        let split = match self {
            Encoding::O200k => Split::O200k(compile(O200K_LINEAR)?),
            Encoding::Cl100k => Split::Cl100k(compile(CL100K_LINEAR)?),
        };
        Ok(Core { vocab, split })
    }

    /// Builds the encoder from the vocabulary compiled into the binary: no caching.
    #[cfg(feature = "bundled")]
    pub(crate) fn build(self) -> Result<Core, String> {
        let (bytes, slots) = self.bundled();
        self.build_from(bytes, slots)
    }

    /// Returns the shared encoder, building it on first use.
    fn core(self) -> Result<&'static Core, Error> {
        #[cfg(feature = "bundled")]
        let found = Some(self.cell().get_or_init(|| self.build()));
        #[cfg(not(feature = "bundled"))]
        let found = self.cell().get().or_else(|| self.registered_for_tests());
        let Some(cell) = found else {
            return Err(Error::VocabularyMissing {
                encoding: self.name(),
            });
        };
        cell.as_ref().map_err(|problem| Error::Encoding {
            encoding: self.name(),
            problem: problem.clone(),
        })
    }

    /// Unit tests without the `bundled` feature: registers the vocabulary compiled from the
    /// crate's `data/` on first need, so the same tests run over a registered vocabulary.
    #[cfg(not(feature = "bundled"))]
    fn registered_for_tests(self) -> Option<&'static Result<Core, String>> {
        #[cfg(test)]
        {
            let path = format!(
                "{}/data/{}.tiktoken",
                env!("CARGO_MANIFEST_DIR"),
                self.name()
            );
            let text = std::fs::read_to_string(&path).ok()?;
            let (bytes, slots) = crate::vocab_compile::compile(self.name(), &text).ok()?;
            let file = crate::vocab_layout::file(self.name(), &bytes, &slots);
            register_vocabulary(self, file).ok()?;
            self.cell().get()
        }
        #[cfg(not(test))]
        None
    }
}

/// Registers the vocabulary of `encoding` from the bytes of one vocabulary file (as
/// `vocabulary_file` makes them in a build with the `bundled` feature, or
/// `cargo run -p ccv3-tokens --example export_vocab -- DIR` writes them), so that [`Tiktoken::new`] can build it without the `bundled` feature. Loading
/// is a few length checks and 256 lookups: no per-token work. The file's memory is kept for the
/// life of the process.
///
/// The first vocabulary an encoding gets stays: registering again, or registering an encoding
/// whose bundled vocabulary is already in use, checks the file and changes nothing.
///
/// # Errors
/// [`Error::Encoding`] when the bytes are not a vocabulary file of `encoding`.
///
/// ```
/// # #[cfg(feature = "bundled")] {
/// use ccv3_tokens::{register_vocabulary, vocabulary_file, Encoding, Tiktoken, Tokenizer};
/// register_vocabulary(Encoding::Cl100k, vocabulary_file(Encoding::Cl100k))?;
/// assert_eq!(Tiktoken::cl100k()?.count("hello world"), 2);
/// assert!(register_vocabulary(Encoding::O200k, b"not a vocabulary".to_vec()).is_err());
/// # }
/// # Ok::<(), ccv3_tokens::Error>(())
/// ```
pub fn register_vocabulary(encoding: Encoding, file: Vec<u8>) -> Result<(), Error> {
    let problem = |problem: String| Error::Encoding {
        encoding: encoding.name(),
        problem,
    };
    let (name, bytes, slots) = crate::vocab_layout::parse_file(&file).map_err(problem)?;
    if name != encoding.name() {
        return Err(problem(format!("the vocabulary file is {name:?}'s")));
    }
    // Checked on the caller's bytes first, so a bad file is never kept.
    Vocab::new(bytes, slots).map_err(problem)?;
    if encoding.cell().get().is_some() {
        return Ok(());
    }
    let mut built = None;
    encoding.cell().get_or_init(|| {
        let file: &'static [u8] = Box::leak(file.into_boxed_slice());
        let core = crate::vocab_layout::parse_file(file)
            .and_then(|(_, bytes, slots)| encoding.build_from(bytes, slots));
        built = Some(core.is_ok());
        core
    });
    match built {
        Some(false) => Err(problem("the vocabulary does not build".to_string())),
        _ => Ok(()),
    }
}

/// True when `encoding` can be built now: its vocabulary is bundled or registered.
///
/// ```
/// use ccv3_tokens::{has_vocabulary, Encoding};
/// // Bundled (the default feature) or registered with `register_vocabulary`: then it loads.
/// assert_eq!(has_vocabulary(Encoding::O200k), cfg!(feature = "bundled"));
/// ```
pub fn has_vocabulary(encoding: Encoding) -> bool {
    cfg!(feature = "bundled") || encoding.cell().get().is_some()
}

/// The vocabulary file of a bundled encoding (the format [`register_vocabulary`] reads): what a
/// build with the `bundled` feature writes out for builds without it.
///
/// ```
/// use ccv3_tokens::{vocabulary_file, Encoding};
/// // Written once by a build with `bundled`, then handed to `register_vocabulary` by builds
/// // without it (a WebAssembly module that downloads its vocabulary, for example).
/// let file = vocabulary_file(Encoding::Cl100k);
/// assert!(file.len() > 1_000_000);
/// ```
#[cfg(feature = "bundled")]
pub fn vocabulary_file(encoding: Encoding) -> Vec<u8> {
    let (bytes, slots) = encoding.bundled();
    crate::vocab_layout::file(encoding.name(), bytes, slots)
}

impl Core {
    /// Appends the tokens of `text` (one piece from [`Pieces`]) to `out`.
    fn encode_into(&self, text: &str, out: &mut Vec<u32>) {
        self.split_into(text, &mut |_, piece| self.vocab.encode_piece(piece, out));
    }

    /// The number of tokens of `text` (one piece from [`Pieces`]). A split piece of
    /// [`SHORT_PIECE`] bytes or more is merged once per distinct piece: `memo` keeps its count
    /// for the rest of the text (a long word repeated costs one merge, issue 12). `scratch`
    /// holds the ids of one piece.
    fn count_into<'t>(
        &self,
        text: &'t str,
        memo: &mut HashMap<&'t [u8], usize>,
        scratch: &mut Vec<u32>,
    ) -> usize {
        let mut total = 0usize;
        self.split_into(text, &mut |_, piece| {
            total = total.saturating_add(self.count_piece(piece, memo, scratch));
        });
        total
    }

    /// The number of tokens of one split `piece`, through `memo` for pieces of [`SHORT_PIECE`]
    /// bytes or more (see [`Core::count_into`]).
    fn count_piece<'t>(
        &self,
        piece: &'t [u8],
        memo: &mut HashMap<&'t [u8], usize>,
        scratch: &mut Vec<u32>,
    ) -> usize {
        if piece.len() >= SHORT_PIECE {
            if let Some(&n) = memo.get(piece) {
                return n;
            }
        }
        scratch.clear();
        self.vocab.encode_piece(piece, scratch);
        if piece.len() >= SHORT_PIECE {
            memo.insert(piece, scratch.len());
        }
        scratch.len()
    }

    /// [`Core::count_into`] with the counts of short pieces taken from and kept in `cache`
    /// (the same total: a cached count is that of the same bytes). A piece's cache key is read
    /// from the text in four word loads where 32 bytes follow its start (nearly every piece;
    /// issue 16), copied out of the text otherwise.
    fn count_cached_into<'t>(
        &self,
        text: &'t str,
        memo: &mut HashMap<&'t [u8], usize>,
        scratch: &mut Vec<u32>,
        cache: &mut PieceCache,
    ) -> usize {
        let bytes = text.as_bytes();
        let mut total = 0usize;
        for (start, end) in self.pieces(text) {
            let piece = bytes.get(start..end).unwrap_or_default();
            let key = Key::in_text(bytes, start, end).or_else(|| Key::new(piece));
            let n = match key {
                Some(key) => match cache.get(&key) {
                    Some(n) => n,
                    None => self.count_new_piece(piece, &key, scratch, cache),
                },
                None => self.count_piece(piece, memo, scratch),
            };
            total = total.saturating_add(n);
        }
        total
    }

    /// The count of a `piece` the cache does not hold (its key `key`), kept in `cache`. Out of
    /// line, so the loop over pieces stays small where nearly every piece is a hit.
    #[cold]
    #[inline(never)]
    fn count_new_piece(
        &self,
        piece: &[u8],
        key: &Key,
        scratch: &mut Vec<u32>,
        cache: &mut PieceCache,
    ) -> usize {
        scratch.clear();
        let h = crate::vocab_layout::hash(piece);
        self.vocab.encode_piece_hashed(piece, h, scratch);
        cache.put(key, scratch.len());
        scratch.len()
    }

    /// Hands each piece of `text` (the encoding's split pattern) to `piece` with its start in
    /// `text`, in order.
    fn split_into<'t>(&self, text: &'t str, piece: &mut impl FnMut(usize, &'t [u8])) {
        for (start, end) in self.pieces(text) {
            piece(start, text.as_bytes().get(start..end).unwrap_or_default());
        }
    }

    /// The pieces of `text` (the encoding's split pattern) as byte ranges, in order.
    fn pieces<'c, 't>(&'c self, text: &'t str) -> PieceRanges<'c, 't> {
        let (re, ascii_o200k) = match &self.split {
            Split::O200k(re) => (re, true),
            Split::Cl100k(re) => (re, false),
        };
        PieceRanges {
            re,
            ascii_o200k,
            text,
            at: 0,
        }
    }
}

/// The pieces of a text as byte ranges ([`Core::pieces`]): each match of `re` ([`O200K_LINEAR`]
/// or [`CL100K_LINEAR`]) is a piece, except that a run of whitespace matched by the last
/// alternative (`\s+`: no line break in it, not at the end of the text) and followed by a
/// non-whitespace character leaves its last character to the next piece when it has two or
/// more, as `\s+(?!\S)` does (with one, `\s+` (o200k) or `\s` (cl100k) takes it whole). An
/// iterator rather than a callback, so a caller's loop body is compiled into the loop (issue 16:
/// a call per piece was a tenth of counting's instructions).
struct PieceRanges<'c, 't> {
    re: &'c regex::Regex,
    /// The hand-written matcher of `o200k_base`'s pattern takes ASCII text.
    ascii_o200k: bool,
    text: &'t str,
    /// Where the next piece starts.
    at: usize,
}

impl Iterator for PieceRanges<'_, '_> {
    type Item = (usize, usize);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, usize)> {
        let (bytes, at) = (self.text.as_bytes(), self.at);
        if at >= bytes.len() {
            return None;
        }
        // ASCII is matched by hand (the same matches, much faster); the regex takes the rest.
        let ascii = if self.ascii_o200k {
            crate::ascii_split::match_at(bytes, at)
        } else {
            None
        };
        let found = match ascii {
            Some(m) => {
                let mut end = m.end;
                if m.bare_space && end < bytes.len() && end - at >= 2 {
                    // The lookahead: the last space goes to the next piece (ASCII: one byte).
                    end -= 1;
                }
                Some((at, end)).filter(|_| end > at)
            }
            None => None,
        };
        let (start, end) = found.or_else(|| Core::regex_piece(self.re, self.text, at))?;
        self.at = end;
        Some((start, end))
    }
}

impl Core {
    /// The piece of `text` at `at` by the regex `re` (see [`PieceRanges`]), as a range.
    #[inline(never)]
    fn regex_piece(re: &regex::Regex, text: &str, at: usize) -> Option<(usize, usize)> {
        let m = re.find_at(text, at)?;
        let (start, mut end) = (m.start(), m.end());
        if start > at {
            // Never happens (every character starts a match); kept whole if it did, and the
            // match is found again from its start.
            return Some((at, start));
        }
        let piece = text.get(start..end).unwrap_or_default();
        if end < text.len()
            && piece.chars().all(char::is_whitespace)
            && !piece.contains(['\r', '\n'])
        {
            let mut chars = piece.chars();
            if let (Some(last), Some(_)) = (chars.next_back(), chars.next()) {
                end -= last.len_utf8();
            }
        }
        if end <= start {
            // An empty match cannot happen with this pattern; step over a character.
            end = start
                + text
                    .get(start..)
                    .and_then(|t| t.chars().next())
                    .map_or(1, char::len_utf8);
        }
        Some((start, end))
    }
}

/// Builds an encoding from scratch, skipping the per-process cache; for the build benchmark.
#[doc(hidden)]
#[cfg(feature = "bundled")]
pub fn build_uncached(encoding: Encoding) -> bool {
    encoding.build().is_ok()
}

/// A tiktoken encoding as a [`Tokenizer`]. Cheap to clone: the encoder is shared.
#[derive(Clone)]
pub struct Tiktoken {
    encoding: Encoding,
    core: &'static Core,
}

impl std::fmt::Debug for Tiktoken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tiktoken")
            .field("encoding", &self.encoding)
            .finish()
    }
}

impl Tiktoken {
    /// Returns a tokenizer for `encoding`, building the shared encoder if this is the first use.
    ///
    /// # Errors
    /// [`Error::VocabularyMissing`] without the `bundled` feature when the encoding's vocabulary
    /// was not registered ([`register_vocabulary`]); [`Error::Encoding`] if the bundled
    /// vocabulary cannot be built (a broken build).
    pub fn new(encoding: Encoding) -> Result<Self, Error> {
        Ok(Tiktoken {
            encoding,
            core: encoding.core()?,
        })
    }

    /// Returns `o200k_base`, the default encoding.
    ///
    /// # Errors
    /// As [`Tiktoken::new`].
    pub fn o200k() -> Result<Self, Error> {
        Tiktoken::new(Encoding::O200k)
    }

    /// Returns `cl100k_base`.
    ///
    /// # Errors
    /// As [`Tiktoken::new`].
    pub fn cl100k() -> Result<Self, Error> {
        Tiktoken::new(Encoding::Cl100k)
    }

    /// Returns which encoding this is.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Returns the token ids of `text` (special tokens counted as text, long whitespace cut).
    pub fn encode_ids(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        for piece in Pieces::new(text) {
            self.core.encode_into(piece, &mut ids);
        }
        ids
    }
}

impl Tokenizer for Tiktoken {
    fn count(&self, text: &str) -> usize {
        let mut ids = Vec::new();
        let mut memo = HashMap::new();
        let mut total = 0usize;
        for piece in Pieces::new(text) {
            total = total.saturating_add(self.core.count_into(piece, &mut memo, &mut ids));
        }
        total
    }

    fn count_cached(&self, text: &str, cache: &mut PieceCache) -> usize {
        cache.claim(self.encoding);
        let mut ids = Vec::new();
        let mut memo = HashMap::new();
        let mut total = 0usize;
        for piece in Pieces::new(text) {
            total = total.saturating_add(
                self.core
                    .count_cached_into(piece, &mut memo, &mut ids, cache),
            );
        }
        total
    }

    fn name(&self) -> &str {
        self.encoding.name()
    }

    fn encode(&self, text: &str) -> Option<Vec<u32>> {
        Some(self.encode_ids(text))
    }
}

/// Cuts text into pieces of at most `max` bytes (more only for a single wider char), at char
/// boundaries.
#[cfg(test)]
struct CharChunks<'a> {
    rest: &'a str,
    max: usize,
}

#[cfg(test)]
impl<'a> CharChunks<'a> {
    fn new(text: &'a str, max: usize) -> Self {
        CharChunks { rest: text, max }
    }
}

#[cfg(test)]
impl<'a> Iterator for CharChunks<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        let mut cut = self.max.min(self.rest.len());
        while !self.rest.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut == 0 {
            cut = self
                .rest
                .chars()
                .next()
                .map_or(self.rest.len(), char::len_utf8);
        }
        let (chunk, rest) = self.rest.split_at(cut);
        self.rest = rest;
        Some(chunk)
    }
}

/// Splits text so that no piece holds more than [`MAX_WHITESPACE_RUN`] whitespace characters in
/// a row. Text without such a run is one piece. The empty string is no piece.
struct Pieces<'a> {
    rest: &'a str,
}

impl<'a> Pieces<'a> {
    fn new(text: &'a str) -> Self {
        Pieces { rest: text }
    }
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        if self.rest.len() <= MAX_WHITESPACE_RUN {
            // Too short to hold a longer run (every character is at least one byte).
            return Some(std::mem::take(&mut self.rest));
        }
        let mut run = 0usize;
        let mut cut = self.rest.len();
        for (at, c) in self.rest.char_indices() {
            if c.is_whitespace() {
                if run == MAX_WHITESPACE_RUN {
                    cut = at;
                    break;
                }
                run += 1;
            } else {
                run = 0;
            }
        }
        let (piece, rest) = self.rest.split_at(cut);
        self.rest = rest;
        Some(piece)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o200k() -> Tiktoken {
        Tiktoken::o200k().expect("bundled o200k_base builds")
    }

    fn cl100k() -> Tiktoken {
        Tiktoken::cl100k().expect("bundled cl100k_base builds")
    }

    /// Issue 12: a long word repeated is merged once per count (the memo of long pieces) and
    /// counts exactly as its tokens, in both encodings.
    #[test]
    fn issue12_repeated_long_pieces_count_as_their_tokens() {
        let long_a = "a".repeat(3_000);
        let long_b = format!("x{}", "ab".repeat(700));
        let text = format!("{long_a} {long_b}\n{long_a}{long_a} and {long_b} {long_a}.").repeat(5);
        for t in [o200k(), cl100k()] {
            assert_eq!(t.count(&text), t.encode_ids(&text).len(), "{}", t.name());
            let once = t.count(&long_a);
            assert_eq!(
                t.count(&format!("{long_a} {long_a}")),
                t.encode_ids(&format!("{long_a} {long_a}")).len()
            );
            assert!(once > 1);
        }
    }

    // Counts pinned from tiktoken-rs 0.12.1 itself.
    #[test]
    fn o200k_known_counts() {
        let t = o200k();
        assert_eq!(t.count("hello world"), 2);
        assert_eq!(t.count("Hello, world!"), 4);
        assert_eq!(t.count("こんにちは世界"), 2);
        assert_eq!(t.count("The quick brown fox jumps over the lazy dog."), 10);
        assert_eq!(t.count("{{char}} smiles at {{user}}."), 9);
        assert_eq!(t.name(), "o200k_base");
    }

    #[test]
    fn cl100k_known_counts() {
        let t = cl100k();
        assert_eq!(t.count("hello world"), 2);
        assert_eq!(t.count("Hello, world!"), 4);
        assert_eq!(t.count("こんにちは世界"), 4);
        assert_eq!(t.count("The quick brown fox jumps over the lazy dog."), 10);
        assert_eq!(t.count("{{char}} smiles at {{user}}."), 9);
        assert_eq!(t.name(), "cl100k_base");
    }

    #[test]
    fn empty_string_is_zero_tokens() {
        assert_eq!(o200k().count(""), 0);
        assert_eq!(cl100k().count(""), 0);
        assert_eq!(o200k().encode_ids(""), Vec::<u32>::new());
    }

    #[test]
    fn special_tokens_are_counted_as_ordinary_text() {
        // `<|endoftext|>` would be one special token; as text it is seven.
        assert_eq!(o200k().count("<|endoftext|>"), 7);
        assert_eq!(cl100k().count("<|endoftext|>"), 7);
    }

    #[test]
    fn encode_agrees_with_count() {
        let t = o200k();
        let text = "Lorebook entry: the tavern at the edge of 森.";
        assert_eq!(t.encode(text).map(|ids| ids.len()), Some(t.count(text)));
    }

    #[test]
    fn whitespace_run_of_a_million_does_not_panic() {
        // tiktoken-rs alone panics on this input (regex stack overflow).
        let text = format!("a{}b", " ".repeat(1 << 20));
        assert!(o200k().count(&text) > 0);
        assert!(cl100k().count(&text) > 0);
        let tabs = format!("{}x", " \t".repeat(600_000));
        assert!(o200k().count(&tabs) > 0);
    }

    #[test]
    fn text_without_long_whitespace_run_is_one_piece() {
        let text = format!("a{}b\n\nc", " ".repeat(MAX_WHITESPACE_RUN));
        assert_eq!(Pieces::new(&text).count(), 1);
        assert_eq!(Pieces::new("").count(), 0);
    }

    #[test]
    fn long_whitespace_run_is_cut_at_the_limit() {
        let text = format!("a{}b", " ".repeat(MAX_WHITESPACE_RUN * 2 + 1));
        let pieces: Vec<&str> = Pieces::new(&text).collect();
        assert_eq!(pieces.len(), 3);
        assert_eq!(pieces.concat(), text);
        assert!(pieces.iter().all(|p| p.len() <= MAX_WHITESPACE_RUN + 1));
    }

    /// Texts chosen to reach every branch of both split patterns and both merge paths.
    fn varied_texts() -> Vec<String> {
        let mut texts: Vec<String> = [
            "hello world",
            "The quick brown fox jumps over the lazy dog.",
            "It's John's; we'll see, they've gone, you're late, I'm here, he'd go. IT'S LOUD 'S 'Ll",
            "don't can't won't shouldn't y'all o'clock rock'n'roll",
            "fn main() {\n    let x: Vec<u32> = (0..10).map(|i| i * 2).collect();\n    println!(\"{x:?}\");\n}\n",
            "def f(a, b):\r\n\treturn a ** b  # comment\r\n\r\n",
            "<div class=\"card\">{{char}} &amp; {{user}}</div>\n<!-- note -->",
            "SELECT * FROM entries WHERE uid >= 42 AND key LIKE '%森%';",
            "こんにちは世界。吾輩は猫である。名前はまだ無い。カタカナとひらがな、漢字。",
            "我能吞下玻璃而不伤身体。繁體中文測試，標點符號！",
            "한국어 텍스트입니다. 안녕하세요!",
            "Привет, мир! Съешь же ещё этих мягких французских булок.",
            "مرحبا بالعالم، هذا نص عربي.",
            "नमस्ते दुनिया, यह हिंदी है। क्षत्रिय",
            "e\u{301}le\u{300}ve cafe\u{301} na\u{308}ive Å\u{30a}",
            "emoji 😀😃😄 flags 🇯🇵🇺🇸 family 👨‍👩‍👧‍👦 skin 👍🏽 heart ❤️‍🔥 keycap 1️⃣",
            "🧑🏿‍🤝‍🧑🏻 🏳️‍🌈 🐈‍⬛",
            "1234567890 3.14159 1,000,000 2026-11-21 0x1F600 ١٢٣ ४५६ ⅫⅢ",
            "12345678901234567890123456789012345678901234567890",
            "mixed: Tokyo東京Paris파리Москва2024年🎉done",
            "   leading spaces and trailing   ",
            "tabs\t\t\tand\n\n\nnewlines\r\n\r\n  \n \t \n",
            "a  b   c    d     e",
            "!!!??? ... --- *** ___ ~~~ /// \\\\\\ |||",
            "'s 's 'S 'll 'LL 've 're 'd 'm 't",
            "\u{0}\u{1}\u{7f}\u{80}\u{ffff}\u{10ffff}\u{feff}",
            "<|endoftext|><|fim_prefix|><|im_start|>system",
            "",
            " ",
            "\n",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        texts.push(" ".repeat(10_000) + "x");
        texts.push(format!("a{}b", "\n".repeat(3000)));
        texts.push(format!("word{}word", " \t".repeat(2000)));
        texts.push("a".repeat(1000));
        texts.push("ab".repeat(700));
        texts.push("supercalifragilistic".repeat(40));
        texts.push("8".repeat(500));
        texts.push("日本語".repeat(200));
        texts.push("😀".repeat(300));
        texts.push("👨‍👩‍👧‍👦".repeat(60));
        texts.push("=".repeat(400) + "\n" + &"-".repeat(400));
        texts.push("xyzzyqwfpgjluy".repeat(30));
        texts
    }

    fn assert_same_as_tiktoken_rs(ours: &Tiktoken, reference: &tiktoken_rs::CoreBPE, text: &str) {
        let want = reference.encode_ordinary(text);
        assert_eq!(ours.encode_ids(text), want, "ids of {text:?}");
        assert_eq!(ours.count(text), want.len(), "count of {text:?}");
    }

    #[cfg(feature = "bundled")]
    #[test]
    fn a_vocabulary_file_builds_an_encoder_that_encodes_as_the_bundled_one() {
        for encoding in [Encoding::O200k, Encoding::Cl100k] {
            let file: &'static [u8] = Box::leak(vocabulary_file(encoding).into_boxed_slice());
            let (name, bytes, slots) = crate::vocab_layout::parse_file(file).expect("parses");
            assert_eq!(name, encoding.name());
            let from_file = encoding.build_from(bytes, slots).expect("builds");
            let bundled = encoding.core().expect("bundled builds");
            for text in varied_texts() {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                for piece in Pieces::new(&text) {
                    from_file.encode_into(piece, &mut a);
                    bundled.encode_into(piece, &mut b);
                }
                assert_eq!(a, b, "{}: {text:?}", encoding.name());
            }
        }
    }

    #[test]
    fn broken_vocabulary_files_are_errors_not_panics() {
        use crate::vocab_layout::{file, parse_file, FILE_HEADER_LEN};
        let good = file("o200k_base", b"ab", &[0xff; 16]);
        assert!(parse_file(&good).is_ok());
        assert!(parse_file(&good[..good.len() - 1]).is_err());
        assert!(parse_file(&good[..FILE_HEADER_LEN - 1]).is_err());
        assert!(parse_file(b"").is_err());
        let mut huge = good.clone();
        huge[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(parse_file(&huge).is_err());
        for (encoding, bytes) in [
            (Encoding::O200k, b"not a vocabulary".to_vec()),
            // A vocabulary file without the 256 single bytes.
            (Encoding::O200k, good.clone()),
            // Another encoding's file.
            (Encoding::Cl100k, good),
        ] {
            let e = register_vocabulary(encoding, bytes).unwrap_err();
            assert!(matches!(e, Error::Encoding { .. }), "{e}");
        }
    }

    #[test]
    fn o200k_counts_and_ids_equal_tiktoken_rs() {
        let reference = tiktoken_rs::o200k_base().expect("tiktoken-rs builds o200k_base");
        let ours = o200k();
        for text in varied_texts() {
            assert_same_as_tiktoken_rs(&ours, &reference, &text);
        }
    }

    /// Issue 12: the linear split of `o200k_base` ([`O200K_LINEAR`]) stands in for the
    /// published pattern's `\s+(?!\S)`; every kind of whitespace run, before text, a line
    /// break or the end, splits as `tiktoken-rs` splits it.
    #[test]
    fn o200k_linear_split_equals_tiktoken_rs_around_whitespace() {
        let reference = tiktoken_rs::o200k_base().expect("tiktoken-rs builds o200k_base");
        assert_whitespace_runs_split_as(&o200k(), &reference);
    }

    /// Issue 11: `cl100k_base` splits on the `regex` crate too ([`CL100K_LINEAR`]: possessive
    /// quantifiers made greedy, `\s+(?!\S)|\s` done by hand, `\s++$` at the end of the text);
    /// whitespace runs split as `tiktoken-rs` (the published pattern on `fancy-regex`) splits
    /// them, and so do the contractions, numbers and punctuation runs around them.
    #[test]
    fn cl100k_linear_split_equals_tiktoken_rs_around_whitespace() {
        let reference = tiktoken_rs::cl100k_base().expect("tiktoken-rs builds cl100k_base");
        let ours = cl100k();
        assert_whitespace_runs_split_as(&ours, &reference);
        for text in [
            "don't I'LL we've they'Re she'd",
            "'\u{17f} 'S 'x 'LL",
            "12345678 1 22 333 4444",
            "a!!!\n\n\r\nb ..\r\n",
            "  \n\n  x",
            "x  \t\n",
            "\u{a0}\u{a0}x\u{2028}\u{2028}",
        ] {
            assert_same_as_tiktoken_rs(&ours, &reference, text);
        }
    }

    fn assert_whitespace_runs_split_as(ours: &Tiktoken, reference: &tiktoken_rs::CoreBPE) {
        let runs = [
            " ",
            "  ",
            "   ",
            "\t",
            " \t ",
            "\u{3000}",
            " \u{3000}",
            "\u{a0}\u{a0}",
            "\n",
            " \n",
            "\n ",
            "  \n  ",
            "\r\n",
            " \r\n\t",
            "\u{2028}",
            "\u{85} ",
        ];
        let around = [
            "", "a", "A", "日本", "1", "12345", ".", "!?", "'s", "é", "😀", "\n",
        ];
        for run in runs {
            for before in around {
                for after in around {
                    let text = format!("{before}{run}{after}{run}");
                    assert_same_as_tiktoken_rs(ours, reference, &text);
                    let text = format!("{before}{run}{run}{after}");
                    assert_same_as_tiktoken_rs(ours, reference, &text);
                }
            }
        }
        let long = "w ".repeat(10_000) + &"word  ".repeat(3_000) + "end   ";
        assert_same_as_tiktoken_rs(ours, reference, &long);
    }

    #[test]
    fn cl100k_counts_and_ids_equal_tiktoken_rs() {
        let reference = tiktoken_rs::cl100k_base().expect("tiktoken-rs builds cl100k_base");
        let ours = cl100k();
        for text in varied_texts() {
            assert_same_as_tiktoken_rs(&ours, &reference, &text);
        }
    }

    #[test]
    fn split_patterns_equal_tiktoken_rs() {
        assert_eq!(O200K_PATTERN, tiktoken_rs::O200K_BASE_PAT_STR);
        // tiktoken-rs does not export the cl100k pattern; the equivalence tests cover it.
        assert!(CL100K_PATTERN.starts_with("'(?i:[sdmt]|ll|ve|re)|"));
    }

    #[test]
    fn long_and_short_merges_give_the_same_tokens() {
        let core = Encoding::O200k.core().expect("o200k builds");
        for text in varied_texts() {
            for piece in CharChunks::new(&text, 120) {
                let bytes = piece.as_bytes();
                let (mut short, mut long) = (Vec::new(), Vec::new());
                assert_eq!(core.vocab.merge_short(bytes, &mut short), Some(()));
                assert_eq!(core.vocab.merge_long(bytes, &mut long), Some(()));
                assert_eq!(short, long, "{piece:?}");
            }
        }
    }

    #[test]
    fn every_byte_is_one_token() {
        for encoding in [Encoding::O200k, Encoding::Cl100k] {
            let core = encoding.core().expect("bundled encoding builds");
            for b in 0..=255u8 {
                let mut out = Vec::new();
                core.vocab.encode_piece(&[b], &mut out);
                assert_eq!(out.len(), 1, "{} byte {b}", encoding.name());
            }
        }
    }

    #[test]
    fn char_chunks_cut_at_char_boundaries() {
        let text = "aé日😀".repeat(50);
        let chunks: Vec<&str> = CharChunks::new(&text, 5).collect();
        assert_eq!(chunks.concat(), text);
        assert!(chunks.iter().all(|c| !c.is_empty() && c.len() <= 5));
        let wide: Vec<&str> = CharChunks::new("😀😀", 2).collect();
        assert_eq!(wide, vec!["😀", "😀"]);
        assert_eq!(CharChunks::new("", 4).count(), 0);
    }

    thread_local! {
        /// A piece cache shared by the cases of a property test (issue 16).
        static SMALL_CACHE: std::cell::RefCell<PieceCache> =
            std::cell::RefCell::new(PieceCache::with_slots(16));
    }

    /// Issue 16 (`ccv3 index` counts through a per-thread piece cache): `count_cached` gives
    /// `count`'s answer (itself tested equal to tiktoken-rs 0.12's `encode_ordinary`) on the
    /// varied texts, twice over (the second time from the cache), with a cache of the default
    /// size and one of 16 slots, one cache used by both encodings in turn.
    #[test]
    fn counts_through_a_piece_cache_equal_plain_counts() {
        let (o, c) = (o200k(), cl100k());
        for slots in [crate::DEFAULT_SLOTS, 16] {
            let mut cache = PieceCache::with_slots(slots);
            for _ in 0..2 {
                for text in varied_texts() {
                    for t in [&o, &c] {
                        assert_eq!(
                            t.count_cached(&text, &mut cache),
                            t.count(&text),
                            "{text:?}"
                        );
                    }
                }
            }
        }
        // Through the text-level cache and the trait objects too.
        let boxed: Box<dyn Tokenizer> = Box::new(crate::CachedTokenizer::new(o.clone()));
        let mut cache = PieceCache::new();
        for text in varied_texts() {
            assert_eq!(boxed.count_cached(&text, &mut cache), o.count(&text));
        }
        assert_eq!(crate::Estimate.count_cached("abcd", &mut cache), 2);
    }

    /// Issue 16: the fast paths of cached counting (the 8-byte letter run of
    /// `ascii_split::word_at`, keys read from the text in word loads) on words of every length
    /// around the 8-byte window, in every case pattern, after every kind of prefix, with
    /// contractions and non-ASCII letters next to them: ids and plain counts equal
    /// tiktoken-rs 0.12's `encode_ordinary`, and cached counts (first filling the cache, then
    /// from it) equal them too.
    #[test]
    fn cached_fast_paths_count_as_tiktoken_rs() {
        let reference = tiktoken_rs::o200k_base().expect("tiktoken-rs builds o200k_base");
        let ours = o200k();
        let mut text = String::new();
        for len in (1..=12).chain([16, 17, 25, 31]) {
            let lower: String = "abcdefghijklmnopqrstuvwxyzabcdef"
                .chars()
                .take(len)
                .collect();
            let upper = lower.to_uppercase();
            let title = format!("{}{}", &upper[..1], &lower[1..]);
            let camel = format!("{}X{}", &lower[..len / 2], &lower[len / 2..]);
            for word in [&lower, &upper, &title, &camel] {
                for prefix in [" ", "\"", "*", "\t", "(", "\n", "", "  ", "\u{a0}"] {
                    for suffix in ["", "'s", "'LL", "\u{e9}", ".", ",\n", "'"] {
                        text.push_str(prefix);
                        text.push_str(word);
                        text.push_str(suffix);
                    }
                }
            }
        }
        let mut cache = PieceCache::new();
        let mut tiny = PieceCache::with_slots(16);
        // The whole text, then pieces of it of every length near the 32-byte key window.
        let mut texts = vec![text.clone()];
        for cut in [7, 31, 32, 33, 64] {
            texts.extend(CharChunks::new(&text, cut).map(str::to_string));
        }
        for t in &texts {
            let want = reference.encode_ordinary(t);
            assert_eq!(ours.encode_ids(t), want, "{t:?}");
            for _ in 0..2 {
                assert_eq!(ours.count_cached(t, &mut cache), want.len(), "{t:?}");
                assert_eq!(ours.count_cached(t, &mut tiny), want.len(), "{t:?}");
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        #[test]
        fn o200k_equals_tiktoken_rs_on_arbitrary_strings(text in "\\PC{0,200}|[ a-z'A-Z0-9\\n\\t.,😀é日]{0,300}") {
            static REFERENCE: OnceLock<tiktoken_rs::CoreBPE> = OnceLock::new();
            let reference = REFERENCE.get_or_init(|| tiktoken_rs::o200k_base().expect("builds"));
            let ours = o200k();
            let want = reference.encode_ordinary(&text);
            proptest::prop_assert_eq!(ours.encode_ids(&text), want.clone());
            proptest::prop_assert_eq!(ours.count(&text), want.len());
            // Issue 16: counting through a piece cache kept across cases (16 slots: pieces
            // evict each other all the time) gives the same count.
            let cached = SMALL_CACHE.with(|c| ours.count_cached(&text, &mut c.borrow_mut()));
            proptest::prop_assert_eq!(cached, want.len());
        }

        #[test]
        fn cl100k_equals_tiktoken_rs_on_arbitrary_strings(text in "\\PC{0,200}|[ a-z'A-Z0-9\\n\\t.,😀é日]{0,300}") {
            static REFERENCE: OnceLock<tiktoken_rs::CoreBPE> = OnceLock::new();
            let reference = REFERENCE.get_or_init(|| tiktoken_rs::cl100k_base().expect("builds"));
            let ours = cl100k();
            let want = reference.encode_ordinary(&text);
            proptest::prop_assert_eq!(ours.encode_ids(&text), want.clone());
            proptest::prop_assert_eq!(ours.count(&text), want.len());
        }

        #[test]
        fn arbitrary_bytes_as_one_piece_merge_alike(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..crate::bpe::SHORT_PIECE)) {
            let core = Encoding::Cl100k.core().expect("cl100k builds");
            let (mut short, mut long) = (Vec::new(), Vec::new());
            proptest::prop_assert_eq!(core.vocab.merge_short(&bytes, &mut short), Some(()));
            proptest::prop_assert_eq!(core.vocab.merge_long(&bytes, &mut long), Some(()));
            proptest::prop_assert_eq!(short, long);
        }
    }

    #[test]
    fn shared_encoder_is_built_once() {
        let a = o200k();
        let b = o200k();
        assert!(std::ptr::eq(a.core, b.core));
    }
}
