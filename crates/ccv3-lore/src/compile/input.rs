//! What compiling takes: the compiler and its options, the books with their kind and name, the
//! merge strategy; where an entry is ([`EntryRef`]) and what a scan needs of each book.

use ccv3::Lorebook;

/// Whether a book belongs to the character or is a global book (or, as SillyTavern has them,
/// the chat's or the persona's book).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BookKind {
    /// The character's own book (`character_book` of a card).
    Character,
    /// A standalone (global) book.
    Global,
    /// SillyTavern's chat lore (the book bound to the chat): its entries go before all others,
    /// whatever the strategy.
    Chat,
    /// SillyTavern's persona lore (the book bound to the user's persona): its entries go after
    /// the chat's and before the character's and global ones.
    Persona,
}

impl BookKind {
    /// Parses `character`, `global`, `chat` or `persona`.
    pub fn parse(s: &str) -> Option<BookKind> {
        match s {
            "character" => Some(BookKind::Character),
            "global" => Some(BookKind::Global),
            "chat" => Some(BookKind::Chat),
            "persona" => Some(BookKind::Persona),
            _ => None,
        }
    }
}

/// How character and global books are merged (SillyTavern's "character lore insertion strategy").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// All entries sorted together by insertion order.
    Evenly,
    /// Character book entries first, then global ones (SillyTavern's default).
    #[default]
    CharacterFirst,
    /// Global book entries first, then the character's.
    GlobalFirst,
}

impl Strategy {
    /// Parses `evenly`, `character-first` or `global-first` (underscores accepted too).
    pub fn parse(s: &str) -> Option<Strategy> {
        match s.replace('_', "-").as_str() {
            "evenly" | "sorted-evenly" => Some(Strategy::Evenly),
            "character-first" => Some(Strategy::CharacterFirst),
            "global-first" => Some(Strategy::GlobalFirst),
            _ => None,
        }
    }
}

/// One book to compile: the book, its kind and a display name (used in explanations and state).
#[derive(Debug, Clone)]
pub struct BookInput<'a> {
    /// The book, as read by `ccv3`.
    pub book: &'a Lorebook,
    /// Character or global.
    pub kind: BookKind,
    /// A name for output (a file name, say).
    pub name: String,
    /// The book was read from a SillyTavern World Info file as SillyTavern stores it
    /// ([`ccv3::lorebook::BookFormat::WorldInfo`]), not from a card: in `Compat::SillyTavern`
    /// an entry of it without a numeric `position` is activated but placed nowhere
    /// ([`crate::Position::Nowhere`]), as SillyTavern's placement `switch` has no case for it.
    /// A card's book never is: SillyTavern's card import writes every entry a position.
    pub world_info: bool,
}

/// Where an entry is: its book (in the order given to the compiler) and its index in that book's
/// entries as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntryRef {
    /// The book's place in the compiler's input.
    pub book: usize,
    /// The entry's place in its book's `entries`.
    pub index: usize,
}

/// What a scan needs of a book.
#[derive(Debug)]
pub(crate) struct BookInfo {
    pub name: String,
    pub kind: BookKind,
    /// [`BookInput::world_info`].
    pub world_info: bool,
    /// The book's own `name`, which SillyTavern's keys `world.uid` may use instead of
    /// [`BookInfo::name`].
    pub own_name: Option<String>,
    pub recursive: Option<bool>,
    pub scan_depth: Option<u64>,
    pub token_budget: Option<usize>,
    /// The hash state after the book's name, where its entries' identities start
    /// ([`CompiledBooks::id`](super::CompiledBooks::id)).
    pub id_seed: u64,
}

/// Options that shape compilation: macros in keys, default case sensitivity, merge strategy.
///
/// ```
/// use ccv3_lore::{LorebookCompiler, BookInput, BookKind, ScanOptions, chat::{Chat, Message, Role}};
/// let mut book = ccv3::Lorebook::default();
/// book.entries.push(ccv3::Entry::new(&["dragon"], "Dragons breathe fire."));
/// let compiled = LorebookCompiler::new()
///     .compile(&[BookInput { book: &book, kind: BookKind::Global, name: "world".into(), world_info: false }]);
/// let chat = Chat { messages: vec![Message::new(Role::User, "I saw a dragon!")], ..Default::default() };
/// let r = compiled.scan(&chat, &Default::default(), &ScanOptions::default(), &ccv3_tokens::Estimate);
/// assert_eq!(r.activated[0].content, "Dragons breathe fire.");
/// ```
#[derive(Debug, Clone)]
pub struct LorebookCompiler {
    /// What `{{char}}`, `<char>` and `<bot>` stand for in keys.
    pub char_name: String,
    /// What `{{user}}` and `<user>` stand for in keys.
    pub user_name: String,
    /// Case sensitivity for entries that do not say (SillyTavern's default: false).
    pub case_sensitive: bool,
    /// How character and global books merge.
    pub strategy: Strategy,
    /// The books will be scanned once (a command-line call): the key automata are not built at
    /// compile time, and a scan that cannot recurse builds them from only the keys that can
    /// occur in its text. Scans give the same results either way.
    pub single_scan: bool,
    /// The most entries all books together may have (default [`MAX_ENTRIES`]): more is refused
    /// before anything is allocated ([`LorebookCompiler::try_compile`] returns
    /// [`LoreError::Limit`](crate::error::LoreError::Limit); [`LorebookCompiler::compile`] compiles no
    /// entry and reports the error as a diagnostic). Issue 12: a 1,000,000-entry book.
    pub max_entries: usize,
    /// The macros of keys and decorator keys ([`ccv3_cbs::Dialect`]; `auto`: every built-in
    /// macro). Issue 17.
    pub dialect: ccv3_cbs::Dialect,
    /// Whether a big book may be compiled on a second thread (default `false`: the calling
    /// thread does everything). Threads start only with the `parallel` feature; the compiled
    /// books are the same either way.
    pub threads: bool,
}

/// The default of [`LorebookCompiler::max_entries`]: four times the biggest books seen in use
/// (the peers harness's 50,000-entry book compiles and scans in well under a second).
pub const MAX_ENTRIES: usize = 200_000;

impl Default for LorebookCompiler {
    fn default() -> Self {
        LorebookCompiler {
            char_name: String::new(),
            user_name: "User".into(),
            case_sensitive: false,
            strategy: Strategy::CharacterFirst,
            single_scan: false,
            max_entries: MAX_ENTRIES,
            dialect: ccv3_cbs::Dialect::Auto,
            threads: false,
        }
    }
}
