//! One place for the turn policy: a [`Session`] holds a card, its books and the options of a
//! chat, and turns a chat and the previous state into a lorebook scan ([`Session::scan`], what
//! `ccv3 lore scan` prints) or a whole turn ([`Session::prompt`]: scan, assemble, next state,
//! what `ccv3 prompt` prints).
//!
//! # The policy
//! Every default of a turn is decided here and in [`crate::defaults`], once for the CLI and the
//! bindings: they only translate their arguments into [`SessionOptions`] and books.
//! - **Books**: [`Session::with_card`] adds the card's `character_book` as the character book
//!   (the first book added from a card, only); [`Session::with_book`] adds books in order.
//!   A scan of books read from files ([`Session::with_read_books`]: `ccv3 lore scan --book`,
//!   the bindings' `books`) takes the first book read from a card as the character book and
//!   that card as the character; every other book is global.
//!   Entries are named `BOOK/NAME` in prompts and by book name in scan reports.
//! - **Seed**: [`SessionOptions::seed`], else the chat's own seed ([`Chat::seed`]: FNV-1a over the
//!   message contents), so the same chat gives the same rolls, the same entries and the same
//!   `{{random}}`/`{{pick}}` choices in both calls.
//! - **Names**: `{{user}}` is [`SessionOptions::user_name`] (default `User`); `{{char}}` is
//!   [`SessionOptions::char_name`], else the card's nickname or name, else `Character`.
//! - **Greeting**: [`SessionOptions::greeting`], default 0 (`first_mes`), for the scan's
//!   `@@is_greeting` and the prompt's greeting alike ([`crate::defaults::GREETING`]).
//! - **Scan**: both calls scan with the same options (greeting, scan depth, recursion, strategy,
//!   maximum context), so they activate the same entries; [`Session::scan`] explains every entry
//!   ([`ScanOptions::explain_all`]), [`Session::prompt`] only those that had a chance.
//! - **Turn**: the activations become prompt inserts
//!   ([`crate::adapters::inserts_from_activations`]), the prompt is assembled with the CBS engine
//!   ([`CbsExpander`]) starting from the state's variables, and the next state is the scan's state
//!   with the variables the macros left.
//! - **Clock**: the library never reads the system clock. [`SessionOptions::now`] is what the
//!   time macros see; without it they expand to an empty string.
//!
//! ```
//! use ccv3_prompt::{Session, SessionOptions, Chat, ChatMessage};
//! let mut card = ccv3::Card::new("Aqua").data;
//! card.description = "{{char}} is a goddess.".into();
//! let book = ccv3::Lorebook::from_json(serde_json::json!({"entries": [
//!     {"keys": ["axel"], "content": "Axel is a town.", "extensions": {}, "enabled": true,
//!      "insertion_order": 1, "use_regex": false}]}), "", false, &mut Vec::new()).unwrap();
//! let chat = Chat::from(vec![ChatMessage::user("We reach Axel.")]);
//! let session = Session::new(SessionOptions::default(), std::sync::Arc::new(ccv3_tokens::Estimate))
//!     .with_card(&card, "aqua.png")
//!     .with_book(&book, ccv3_lore::BookKind::Global, "world.json");
//! let scan = session.scan(&chat, &Default::default());
//! assert_eq!(scan.report().activated[0].book, "world.json");
//! let turn = session.prompt(&chat, &Default::default())?;
//! assert_eq!(turn.report().lore[0].label, "world.json/#0");
//! assert_eq!(turn.seed, chat.seed());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::adapters::{inserts_from_activations, CbsExpander};
use crate::{assemble, Assembled, Error, PromptOptions, PromptReport, Template, TokenCounter};
use ccv3::{CardData, Lorebook};
use ccv3_cbs::{BudgetLimits, Limits, Mode, Timestamp, Variables, Warning};
use ccv3_lore::chat::Chat;
use ccv3_lore::{
    BookInput, BookKind, CompiledBooks, LorebookCompiler, ScanOptions, ScanReport, ScanResult,
    ScanState, Strategy, Trigger,
};
use ccv3_tokens::Tokenizer;
use std::sync::{Arc, OnceLock};

/// The options of a [`Session`]; `Default` is what `ccv3 prompt`, `ccv3 lore scan` and the
/// bindings use for what they are not told ([`crate::defaults`]).
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// `{{user}}` and the name of unnamed user messages (default
    /// [`crate::defaults::USER_NAME`], `User`).
    pub user_name: String,
    /// `{{char}}`; `None` (the default) uses the card's nickname, else its name, else
    /// [`crate::defaults::CHAR_NAME`] (`Character`).
    pub char_name: Option<String>,
    /// The active greeting (0 = `first_mes`, then the alternate greetings), for the scan's
    /// `@@is_greeting` and the prompt's greeting. Default `Some(0)`
    /// ([`crate::defaults::GREETING`]: a chat shows `first_mes` unless the user picked
    /// another). `None` says the application has no active greeting: the scan then ignores
    /// `@@is_greeting` (SPEC_V3 "`@@is_greeting`": "If the application does not support
    /// greetings ... SHOULD ignore this decorator") and the prompt uses greeting 0.
    pub greeting: Option<usize>,
    /// The scan depth for books that do not say (`None`: the engine's default, 2).
    pub scan_depth: Option<u64>,
    /// Recursion for books that do not say.
    pub recursive: bool,
    /// How character and global books are merged.
    pub strategy: Strategy,
    /// The most tokens the prompt may hold (also caps the lorebook budget).
    pub max_context: Option<usize>,
    /// The prompt's slot order.
    pub template: Template,
    /// The application's own system prompt (`{{original}}` in the card's).
    pub system_prompt: Option<String>,
    /// The seed of probability rolls, group weights and random macros; `None`: the chat's seed
    /// ([`Chat::seed`]).
    pub seed: Option<u64>,
    /// The clock for the time macros; `None`: they expand to an empty string.
    pub now: Option<Timestamp>,
    /// The books are scanned once (a command-line call): compile no key automata up front.
    /// Results are the same either way; leave it off for sessions scanned turn after turn.
    pub single_scan: bool,
    /// The bounds of each macro expansion (one card field, one entry, ...).
    pub cbs_limits: Limits,
    /// The bounds of all macro expansions of one call together (one prompt, or one
    /// [`Session::expand_macros`]): total output, work, steps, and the size of the variables
    /// the next state carries ([`ccv3_cbs::budget`]).
    pub cbs_budget: BudgetLimits,
    /// The most entries the books may have together ([`ccv3_lore::LorebookCompiler::max_entries`],
    /// default [`ccv3_lore::MAX_ENTRIES`]); [`Session::check_books`] and [`Session::prompt`]
    /// refuse more.
    pub max_entries: usize,
    /// The step budget of one regex key search ([`ScanOptions::regex_key_steps`], default
    /// [`ccv3_lore::REGEX_KEY_STEPS`]).
    pub regex_key_steps: u64,
    /// The step budget of all regex key searches of one scan ([`ScanOptions::regex_scan_steps`],
    /// default [`ccv3_lore::REGEX_SCAN_STEPS`]).
    pub regex_scan_steps: u64,
    /// Whose results the scan reproduces ([`ScanOptions::compat`]): the spec (default) or
    /// SillyTavern 1.15's code.
    pub compat: ccv3_lore::Compat,
    /// Whether compiling a big book and explaining many budget-cut entries may use a second
    /// thread (default `false`; [`LorebookCompiler::threads`], [`ScanOptions::threads`]).
    /// Threads start only with `ccv3-lore`'s `parallel` feature.
    pub threads: bool,
    /// Whose macros the texts are written in (issue 17): `auto` (the default) takes `risu` for
    /// a card with RisuAI extensions, else `sillytavern`; without a card, every built-in macro.
    /// Card fields, lorebook entries, keys and decorator keys all use it.
    pub dialect: ccv3_cbs::Dialect,
    /// How `{{mesExamples}}` shapes the example messages ([`PromptOptions::example_format`]).
    pub example_format: ccv3_cbs::ExampleFormat,
    /// The lorebook engine's settings (issue 14): see [`EngineSettings`].
    pub engine: EngineSettings,
}

/// The lorebook engine's settings that a chat may change, each named as SillyTavern's World
/// Info "Activation Settings" and as the `ccv3 lore scan` / `ccv3 prompt` flags; `Default` is
/// the engine's default (and SillyTavern's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineSettings {
    /// Scan deeper until this many entries are active (0: off): [`ScanOptions::min_activations`].
    pub min_activations: usize,
    /// The deepest min activations may scan (0: the whole chat):
    /// [`ScanOptions::min_activations_depth_max`].
    pub min_activations_depth_max: u64,
    /// The most passes (0: no limit but [`ccv3_lore::scan::MAX_PASSES`]; 1 disables recursion):
    /// [`ScanOptions::max_recursion_steps`].
    pub max_recursion_steps: usize,
    /// A token budget over all books: [`ScanOptions::token_budget`].
    pub budget: Option<usize>,
    /// A ceiling on the budget of all books: [`ScanOptions::budget_cap`].
    pub budget_cap: Option<usize>,
    /// Prefix each message with `name: ` in the scan text (default on):
    /// [`ScanOptions::include_names`].
    pub include_names: bool,
    /// Whole-word matching for entries that do not say (default on):
    /// [`ScanOptions::match_whole_words`].
    pub whole_words: bool,
    /// Case-sensitive keys for entries that do not say (default off):
    /// [`LorebookCompiler::case_sensitive`].
    pub case_sensitive: bool,
    /// Group scoring for entries that do not say (default off): [`ScanOptions::group_scoring`].
    pub group_scoring: bool,
    /// The generation type (default `normal`): [`ScanOptions::trigger`].
    pub trigger: Trigger,
    /// The user's persona description, for entries with `match_persona_description`
    /// ([`ccv3_lore::MatchSources::persona_description`]; the card gives the other texts).
    pub persona_description: String,
}

impl Default for EngineSettings {
    fn default() -> Self {
        let scan = ScanOptions::default();
        EngineSettings {
            min_activations: scan.min_activations,
            min_activations_depth_max: scan.min_activations_depth_max,
            max_recursion_steps: scan.max_recursion_steps,
            budget: scan.token_budget,
            budget_cap: scan.budget_cap,
            include_names: scan.include_names,
            whole_words: scan.match_whole_words,
            case_sensitive: false,
            group_scoring: scan.group_scoring,
            trigger: scan.trigger,
            persona_description: String::new(),
        }
    }
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            user_name: crate::defaults::USER_NAME.into(),
            char_name: None,
            greeting: Some(crate::defaults::GREETING),
            scan_depth: None,
            recursive: false,
            strategy: Strategy::default(),
            max_context: None,
            template: Template::default(),
            system_prompt: None,
            seed: None,
            now: None,
            single_scan: false,
            cbs_limits: Limits::default(),
            cbs_budget: BudgetLimits::default(),
            max_entries: ccv3_lore::MAX_ENTRIES,
            regex_key_steps: ccv3_lore::REGEX_KEY_STEPS,
            regex_scan_steps: ccv3_lore::REGEX_SCAN_STEPS,
            dialect: ccv3_cbs::Dialect::Auto,
            example_format: ccv3_cbs::ExampleFormat::default(),
            engine: EngineSettings::default(),
            compat: ccv3_lore::Compat::Spec,
            threads: false,
        }
    }
}

impl SessionOptions {
    /// These options with `{{mesExamples}}` shaped for the instruct template the prompt will be
    /// rendered with ([`crate::InstructTemplate::example_format`]); `None` keeps the chat
    /// completion shape. `ccv3 prompt --instruct` and the bindings' `instruct`.
    pub fn with_instruct(mut self, instruct: Option<&crate::InstructTemplate>) -> Self {
        self.example_format = instruct.map_or_else(Default::default, |t| t.example_format());
        self
    }
}

/// A card, its books and the options of a chat: see the module docs.
///
/// The books are compiled on first use (or by [`Session::compiled`]) and kept: build a session
/// once and call [`Session::scan`] or [`Session::prompt`] turn after turn.
pub struct Session<'a> {
    card: Option<&'a CardData>,
    /// The card's file name (its stem is one of the character's names).
    card_file: Option<String>,
    books: Vec<BookInput<'a>>,
    names: Vec<String>,
    has_character: bool,
    options: SessionOptions,
    tokenizer: Arc<dyn Tokenizer>,
    compiled: OnceLock<CompiledBooks<'a>>,
    /// [`Session::set_st_activated`].
    st_activated: Option<Arc<std::collections::HashSet<String>>>,
}

impl std::fmt::Debug for Session<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("card", &self.card.map(|c| c.name.as_str()))
            .field("books", &self.names)
            .field("options", &self.options)
            .field("tokenizer", &self.tokenizer.name())
            .finish()
    }
}

/// A book a caller read for a scan ([`Session::with_read_books`]): a standalone lorebook, or a
/// card's `character_book` with the card it came from.
#[derive(Debug, Clone)]
pub struct ReadBook<'a> {
    /// The lorebook.
    pub book: &'a Lorebook,
    /// The card the book is the `character_book` of (read without its book: its names, tags
    /// and texts serve entries' character filters and `match_*` flags); `None` for a
    /// standalone lorebook.
    pub card: Option<&'a CardData>,
    /// The book's display name (`book` of scan reports, `BOOK/` of prompt labels).
    pub name: String,
    /// The card's file name, when it was read from a file: its stem is one of the
    /// character's names for character filters.
    pub file: Option<String>,
    /// The book's kind when the caller knows it (SillyTavern's chat, persona, character or
    /// global lore), kept as given; `None`: by [`Session::with_read_books`]' policy.
    pub kind: Option<BookKind>,
    /// Read from a SillyTavern World Info file as stored ([`BookInput::world_info`]).
    pub world_info: bool,
}

/// What [`Session::scan`] returns: the scan and the seed it used.
#[derive(Debug, Clone)]
pub struct ScanOutcome<'a> {
    /// Activations in prompt order, rejections with reasons, tokens, diagnostics (the books'
    /// compile diagnostics first) and the next state.
    pub result: ScanResult<'a>,
    /// The books' display names, in order.
    pub book_names: Vec<String>,
    /// The seed used.
    pub seed: u64,
}

/// Serialises as the bindings' scan result: the [`ScanReport`] fields, then `state`
/// (`{"activated", "rejected", "tokens", "state"}`); each activated item also has its scan
/// `step` ([`ScanReport::with_steps`]).
impl serde::Serialize for ScanOutcome<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let report = self.report().with_steps(&self.result);
        let mut st = s.serialize_struct("ScanOutcome", 4)?;
        st.serialize_field("activated", &report.activated)?;
        st.serialize_field("rejected", &report.rejected)?;
        st.serialize_field("tokens", &report.tokens)?;
        st.serialize_field("state", self.state())?;
        st.end()
    }
}

impl ScanOutcome<'_> {
    /// The `ccv3 lore scan --json` document.
    pub fn report(&self) -> ScanReport<'_> {
        ScanReport::new(&self.result, &self.book_names)
    }

    /// The state to pass to the next turn.
    pub fn state(&self) -> &ScanState {
        &self.result.state
    }
}

/// What [`Session::prompt`] returns: the scan, the prompt and the next state.
#[derive(Debug, Clone)]
pub struct TurnOutcome<'a> {
    /// The lorebook scan (activations in prompt order).
    pub scan: ScanResult<'a>,
    /// The assembled prompt.
    pub prompt: Assembled,
    /// The state to pass to the next turn: the scan's, with the CBS variables the macros left.
    pub state: ScanState,
    /// Warnings from macro expansion, in prompt order.
    pub warnings: Vec<Warning>,
    /// The seed used.
    pub seed: u64,
}

/// Serialises as the bindings' prompt result: the [`PromptReport`] fields, then `state`
/// (`{"messages", "tokens", "lore", "cut", "state"}`, with `over_limit` before `state` when the
/// prompt does not fit).
impl serde::Serialize for TurnOutcome<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let report = self.report();
        let mut st = s.serialize_struct("TurnOutcome", 6)?;
        st.serialize_field("messages", &report.messages)?;
        st.serialize_field("tokens", &report.tokens)?;
        st.serialize_field("lore", &report.lore)?;
        st.serialize_field("cut", &report.cut)?;
        match report.over_limit {
            Some(n) => st.serialize_field("over_limit", &n)?,
            None => st.skip_field("over_limit")?,
        }
        st.serialize_field("state", &self.state)?;
        st.end()
    }
}

impl TurnOutcome<'_> {
    /// The `ccv3 prompt --json` document.
    pub fn report(&self) -> PromptReport {
        self.prompt.report()
    }
}

/// Macros expanded by [`Session::expand_macros`].
#[derive(Debug, Clone, PartialEq)]
pub struct Expanded {
    /// The text.
    pub text: String,
    /// Problems met (the text was still produced).
    pub warnings: Vec<Warning>,
}

impl<'a> Session<'a> {
    /// A session without card or books.
    pub fn new(options: SessionOptions, tokenizer: Arc<dyn Tokenizer>) -> Self {
        Session {
            card: None,
            card_file: None,
            books: Vec::new(),
            names: Vec::new(),
            has_character: false,
            options,
            tokenizer,
            compiled: OnceLock::new(),
            st_activated: None,
        }
    }

    /// Sets the card; its `character_book` (if any) becomes the next book, named `name`, as the
    /// character book unless one was added before (then it is global).
    pub fn with_card(mut self, card: &'a CardData, name: impl Into<String>) -> Self {
        let name = name.into();
        self.card = Some(card);
        self.card_file = Some(name.clone());
        if let Some(book) = &card.character_book {
            self = self.with_book(book, BookKind::Character, name);
        }
        self
    }

    /// Sets the card the chat is with, without taking its `character_book` (for callers that
    /// add its book themselves, like `ccv3 lore scan`): its names, tags and texts still serve
    /// entries' character filters and `match_*` flags. `name` is its file name.
    pub fn with_character(mut self, card: &'a CardData, name: impl Into<String>) -> Self {
        self.card = Some(card);
        self.card_file = Some(name.into());
        self
    }

    /// Adds the books a caller read for a scan, in order (`ccv3 lore scan --book`, the
    /// bindings' `books`): the first book read from a card is the character book and its card
    /// the chat's character ([`Session::with_character`], named by its file when it has one);
    /// every other book, from a card or not, is global, unless its [`ReadBook::kind`] says
    /// otherwise.
    ///
    /// ```
    /// use ccv3_prompt::{session::ReadBook, Session, SessionOptions};
    /// let book = ccv3::Lorebook::default();
    /// let card = ccv3::Card::new("Aqua").data;
    /// let s = Session::new(SessionOptions::default(), std::sync::Arc::new(ccv3_tokens::Estimate))
    ///     .with_read_books([
    ///         ReadBook { book: &book, card: None, name: "world".into(), file: None, kind: None, world_info: false },
    ///         ReadBook { book: &book, card: Some(&card), name: "aqua".into(), file: None, kind: None, world_info: false },
    ///         ReadBook { book: &book, card: Some(&card), name: "other".into(), file: None, kind: None, world_info: false },
    ///     ]);
    /// let kinds: Vec<_> = s.books().iter().map(|b| b.kind).collect();
    /// use ccv3_lore::BookKind::{Character, Global};
    /// assert_eq!(kinds, [Global, Character, Global]);
    /// assert_eq!(s.char_name(), "Aqua");
    /// ```
    pub fn with_read_books(mut self, books: impl IntoIterator<Item = ReadBook<'a>>) -> Self {
        for b in books {
            let kind = match b.card {
                Some(card)
                    if !self.has_character
                        && matches!(b.kind, None | Some(BookKind::Character)) =>
                {
                    self.card = Some(card);
                    self.card_file = b.file;
                    BookKind::Character
                }
                // An explicit kind is kept: SillyTavern's character lore may hold several books.
                _ => b.kind.unwrap_or(BookKind::Global),
            };
            self = self.push_book(b.book, kind, b.name, b.world_info);
        }
        self
    }

    /// The character's names, tags and texts for the scan (entries' character filters and
    /// `match_*` flags; World Info doc, "Character Filter" and "Additional matching sources"),
    /// and the persona description.
    fn character_for_scan(&self, opts: &mut ScanOptions) {
        opts.sources.persona_description = self.options.engine.persona_description.clone();
        let Some(card) = self.card else {
            return;
        };
        let mut names = vec![card.name.clone()];
        names.extend(card.nickname.clone());
        if let Some(file) = &self.card_file {
            let stem = std::path::Path::new(file)
                .file_stem()
                .map_or_else(|| file.clone(), |s| s.to_string_lossy().into_owned());
            names.push(stem);
        }
        names.retain(|n| !n.is_empty());
        opts.character_names = names;
        opts.character_tags = card.tags.clone();
        let s = &mut opts.sources;
        s.character_description = card.description.clone();
        s.character_personality = card.personality.clone();
        s.scenario = card.scenario.clone();
        s.creator_notes = card.creator_notes.clone();
        s.character_depth_prompt = card
            .extensions
            .get("depth_prompt")
            .and_then(|d| d.get("prompt"))
            .and_then(|p| p.as_str())
            .unwrap_or("")
            .to_string();
    }

    /// Adds a book. A second character book is treated as a global one (a chat has one
    /// character).
    pub fn with_book(self, book: &'a Lorebook, kind: BookKind, name: impl Into<String>) -> Self {
        let kind = match kind {
            BookKind::Character if self.has_character => BookKind::Global,
            k => k,
        };
        self.push_book(book, kind, name.into(), false)
    }

    /// Adds a book of the given kind as it is.
    fn push_book(
        mut self,
        book: &'a Lorebook,
        kind: BookKind,
        name: String,
        world_info: bool,
    ) -> Self {
        self.has_character |= kind == BookKind::Character;
        self.names.push(name.clone());
        self.books.push(BookInput {
            book,
            kind,
            name,
            world_info,
        });
        self.compiled = OnceLock::new();
        self
    }

    /// The options.
    pub fn options(&self) -> &SessionOptions {
        &self.options
    }

    /// Sets the seed of the next scans and prompts ([`SessionOptions::seed`]); the compiled books
    /// are kept (the seed is not part of them), so a long-lived session can take each call's seed.
    pub fn set_seed(&mut self, seed: Option<u64>) {
        self.options.seed = seed;
    }

    /// Sets the entries SillyTavern activated on the generation the next scans reproduce
    /// ([`ccv3_lore::ScanOptions::st_activated`]: in `Compat::SillyTavern` its probability rolls
    /// and group draws are taken from it); the compiled books are kept.
    pub fn set_st_activated(&mut self, keys: Option<Arc<std::collections::HashSet<String>>>) {
        self.st_activated = keys;
    }

    /// The books, in order.
    pub fn books(&self) -> &[BookInput<'a>] {
        &self.books
    }

    /// The books' display names, in order.
    pub fn book_names(&self) -> &[String] {
        &self.names
    }

    /// The name `{{char}}` stands for (see the module docs).
    pub fn char_name(&self) -> &str {
        match (&self.options.char_name, self.card) {
            (Some(n), _) => n,
            (None, Some(card)) => card.char_name(),
            (None, None) => crate::defaults::CHAR_NAME,
        }
    }

    /// The seed for `chat`: [`SessionOptions::seed`], else [`Chat::seed`].
    pub fn seed_for(&self, chat: &Chat) -> u64 {
        self.options.seed.unwrap_or_else(|| chat.seed())
    }

    /// The dialect of this session's macros: [`SessionOptions::dialect`], `auto` resolved by
    /// the card ([`crate::adapters::card_dialect`]); without a card `auto` stays (every
    /// built-in macro).
    pub fn dialect(&self) -> ccv3_cbs::Dialect {
        match self.card {
            Some(card) => crate::adapters::card_dialect(card, self.options.dialect),
            None => self.options.dialect,
        }
    }

    fn compiler(&self) -> LorebookCompiler {
        LorebookCompiler::new()
            .names(self.char_name(), &self.options.user_name)
            .dialect(self.dialect())
            .strategy(self.options.strategy)
            .for_single_scan(self.options.single_scan)
            .max_entries(self.options.max_entries)
            .case_sensitive(self.options.engine.case_sensitive)
            .threads(self.options.threads)
    }

    /// Checks the books against the compiler's limits ([`SessionOptions::max_entries`]) before
    /// anything is compiled: the error names the limit and the option.
    pub fn check_books(&self) -> Result<(), Error> {
        Ok(self.compiler().check(&self.books)?)
    }

    /// The compiled books (compiled on the first call). Books over
    /// [`SessionOptions::max_entries`] compile to no entries, with the error as a diagnostic.
    pub fn compiled(&self) -> &CompiledBooks<'a> {
        self.compiled
            .get_or_init(|| self.compiler().compile(&self.books))
    }

    fn scan_options(&self, seed: u64, explain_all: bool) -> ScanOptions {
        let mut opts = ScanOptions {
            recursive: self.options.recursive,
            seed,
            greeting: self.options.greeting,
            char_name: self.char_name().to_string(),
            user_name: self.options.user_name.clone(),
            max_context: self.options.max_context,
            explain_all,
            regex_key_steps: self.options.regex_key_steps,
            regex_scan_steps: self.options.regex_scan_steps,
            compat: self.options.compat,
            threads: self.options.threads,
            st_activated: self.st_activated.clone(),
            ..Default::default()
        };
        if let Some(d) = self.options.scan_depth {
            opts.scan_depth = d;
        }
        let e = &self.options.engine;
        opts.min_activations = e.min_activations;
        opts.min_activations_depth_max = e.min_activations_depth_max;
        opts.max_recursion_steps = e.max_recursion_steps;
        opts.token_budget = e.budget;
        opts.budget_cap = e.budget_cap;
        opts.include_names = e.include_names;
        opts.match_whole_words = e.whole_words;
        opts.group_scoring = e.group_scoring;
        opts.trigger = e.trigger;
        self.character_for_scan(&mut opts);
        opts
    }

    /// Scans `chat` after `state`, explaining every entry: what `ccv3 lore scan` prints.
    pub fn scan(&self, chat: &Chat, state: &ScanState) -> ScanOutcome<'a> {
        let compiled = self.compiled();
        let seed = self.seed_for(chat);
        let opts = self.scan_options(seed, true);
        let mut result = compiled.scan(chat, state, &opts, self.tokenizer.as_ref());
        result
            .diagnostics
            .splice(0..0, compiled.diagnostics().iter().cloned());
        ScanOutcome {
            result,
            book_names: self.names.clone(),
            seed,
        }
    }

    /// The card, or an empty one made in `empty`.
    fn card_or<'s>(&'s self, empty: &'s mut Option<CardData>) -> &'s CardData {
        match self.card {
            Some(c) => c,
            None => empty.insert(CardData::default()),
        }
    }

    fn prompt_options(&self, seed: u64) -> PromptOptions {
        PromptOptions {
            user_name: self.options.user_name.clone(),
            char_name: self.options.char_name.clone(),
            greeting: self.options.greeting.unwrap_or(0),
            seed,
            system_prompt: self.options.system_prompt.clone(),
            max_context: self.options.max_context,
            template: self.options.template.clone(),
            now: self.options.now,
            dialect: self.dialect(),
            example_format: self.options.example_format.clone(),
            ..PromptOptions::default()
        }
    }

    /// One turn: scans `chat` after `state`, assembles the prompt and returns the next state:
    /// what `ccv3 prompt` prints. Without a card, the prompt is built from an empty one.
    ///
    /// # Errors
    /// [`Error::Greeting`] when the greeting asked for does not exist, [`Error::Template`] for a
    /// template without a history slot.
    pub fn prompt(&self, chat: &Chat, state: &ScanState) -> Result<TurnOutcome<'a>, Error> {
        self.check_books()?;
        let compiled = self.compiled();
        let seed = self.seed_for(chat);
        // Entries the budget cut are checked too, so that the prompt lists every one it cut.
        let mut scan_opts = self.scan_options(seed, false);
        scan_opts.explain_cut = true;
        let mut result = compiled.scan(chat, state, &scan_opts, self.tokenizer.as_ref());
        result
            .diagnostics
            .splice(0..0, compiled.diagnostics().iter().cloned());
        let inserts = inserts_from_activations(&result, &self.books);
        let opts = self.prompt_options(seed);
        let mut empty = None;
        let card = self.card_or(&mut empty);
        let mut expander = CbsExpander::new(card, &chat.messages, &opts)
            .with_variables(state.variables.clone())
            .with_limits(self.options.cbs_limits.clone())
            .with_budget(self.options.cbs_budget.clone());
        let counter = TokenCounter::from_arc(self.tokenizer.clone());
        let mut prompt = assemble(
            card,
            &chat.messages,
            &inserts,
            &opts,
            &mut expander,
            &counter,
        )?;
        // The scan cut these before assembly: they come first.
        let budget_cuts = budget_cuts(&result, &self.books);
        if !budget_cuts.is_empty() {
            prompt.cut.splice(0..0, budget_cuts);
        }
        let mut next = result.state.clone();
        next.variables = expander.variables;
        Ok(TurnOutcome {
            scan: result,
            prompt,
            state: next,
            warnings: expander.warnings,
            seed,
        })
    }

    /// Expands the macros of `text` as in this session's prompts (card fields, names, `chat`,
    /// the seed for `chat`, the clock), with and into `variables`: what `ccv3 cbs` prints.
    pub fn expand_macros(
        &self,
        text: &str,
        chat: &Chat,
        variables: &mut Variables,
        mode: Mode,
    ) -> Expanded {
        let opts = self.prompt_options(self.seed_for(chat));
        let mut empty = None;
        let card = self.card_or(&mut empty);
        let expander = CbsExpander::new(card, &chat.messages, &opts);
        let limits = &self.options.cbs_limits;
        let out = ccv3_cbs::Template::parse_with(text, limits).expand_in(
            ccv3_cbs::Registry::dialect_ref(self.dialect()),
            limits,
            &mut ccv3_cbs::Budget::new(self.options.cbs_budget.clone()),
            &expander.context,
            variables,
            mode,
        );
        Expanded {
            text: out.text,
            warnings: out.warnings,
        }
    }
}

/// The lorebook entries the scan cut for the budget (matched, but did not fit), as prompt cuts
/// labelled like their inserts (`BOOK/NAME`, `BOOK/#INDEX`), in book order.
fn budget_cuts(result: &ScanResult<'_>, books: &[BookInput<'_>]) -> Vec<crate::Cut> {
    result
        .rejected
        .iter()
        .filter_map(|r| {
            let ccv3_lore::RejectReason::Budget { tokens } = r.reason else {
                return None;
            };
            let name = r
                .name
                .map_or_else(|| format!("#{}", r.entry.index), str::to_string);
            let label = match books.get(r.entry.book) {
                Some(b) => format!("{}/{name}", b.name),
                None => name,
            };
            Some(crate::Cut {
                kind: crate::CutKind::Lore,
                label,
                tokens: tokens.unwrap_or(0),
                reason: crate::CutReason::Budget,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccv3_lore::chat::Message;
    use serde::Deserialize;
    use serde_json::json;

    fn book(entries: serde_json::Value) -> Lorebook {
        Lorebook::from_json(json!({ "entries": entries }), "", false, &mut Vec::new())
            .expect("book")
    }

    fn entry(keys: &[&str], content: &str) -> serde_json::Value {
        json!({"keys": keys, "content": content, "extensions": {}, "enabled": true,
            "insertion_order": 10, "use_regex": false})
    }

    fn estimate() -> Arc<dyn Tokenizer> {
        Arc::new(ccv3_tokens::Estimate)
    }

    /// Issue 12: books over the entries limit are refused by `check_books` and `prompt`, with
    /// the limit and the option named; the regex budgets reach the scan.
    #[test]
    fn session_refuses_books_over_the_entries_limit_and_passes_regex_budgets() {
        let b = book(json!([entry(&["a"], "A"), entry(&["/(a*)\\1*b/"], "B")]));
        let chat = Chat::from(vec![Message::user("a".repeat(3000))]);
        let small = SessionOptions {
            max_entries: 1,
            ..SessionOptions::default()
        };
        let s = Session::new(small, estimate()).with_book(&b, BookKind::Global, "b");
        let err = s.check_books().unwrap_err().to_string();
        assert!(
            err.contains("SessionOptions::max_entries") || err.contains("max_entries"),
            "{err}"
        );
        assert!(s.prompt(&chat, &ScanState::default()).is_err());
        let tight = SessionOptions {
            regex_key_steps: 1_000,
            ..SessionOptions::default()
        };
        let s = Session::new(tight, estimate()).with_book(&b, BookKind::Global, "b");
        s.check_books().unwrap();
        let out = s.scan(&chat, &ScanState::default());
        let rejected: Vec<String> = out
            .result
            .rejected
            .iter()
            .map(|r| r.reason.to_string())
            .collect();
        assert_eq!(rejected, ["no key matched", "regex-budget"]);
    }

    /// Issue 11: the time macros get the time from the caller; without one they expand to an
    /// empty string (ccv3-cbs `families::time`).
    #[test]
    fn session_now_is_passed_in_and_absent_means_empty() {
        let mut card = ccv3::Card::new("Aqua").data;
        card.description = "[{{isodate}}]".into();
        let chat = Chat::from(vec![Message::user("hi")]);
        let without = Session::new(SessionOptions::default(), estimate()).with_card(&card, "c");
        let turn = without.prompt(&chat, &ScanState::default()).unwrap();
        assert_eq!(turn.prompt.parts[0].content, "[]");
        let with = Session::new(
            SessionOptions {
                now: Some(Timestamp::utc(1_795_611_600)),
                ..SessionOptions::default()
            },
            estimate(),
        )
        .with_card(&card, "c");
        let turn = with.prompt(&chat, &ScanState::default()).unwrap();
        assert_eq!(turn.prompt.parts[0].content, "[2026-11-25]");
        let out = with.expand_macros("{{isotime}}", &chat, &mut Variables::new(), Mode::Prompt);
        assert_eq!(out.text, "13:00");
    }

    /// The next state carries the scan's timed effects and the CBS variables to the next turn.
    #[test]
    fn session_state_carries_sticky_entries_and_variables_across_turns() {
        let mut card = ccv3::Card::new("Aqua").data;
        card.description = "{{getvar::n}}{{setvar::n::x{{getvar::n}}}}".into();
        let mut sticky = entry(&["dragon"], "A dragon.");
        sticky["extensions"]["sticky"] = json!(3);
        let b = book(json!([sticky]));
        let session = Session::new(SessionOptions::default(), estimate())
            .with_card(&card, "c")
            .with_book(&b, BookKind::Global, "w");
        let mut chat = Chat::from(vec![Message::user("a dragon!")]);
        let first = session.prompt(&chat, &ScanState::default()).unwrap();
        assert_eq!(first.scan.activated.len(), 1);
        assert_eq!(first.state.variables.local["n"], "x");
        chat.messages.push(Message::assistant("ok"));
        chat.messages.push(Message::user("what now?"));
        let second = session.prompt(&chat, &first.state).unwrap();
        assert_eq!(
            second.scan.activated[0].reason,
            ccv3_lore::ActivationReason::Sticky
        );
        assert!(second.prompt.parts.iter().any(|p| p.content == "x"));
        assert_eq!(second.state.variables.local["n"], "xx");
        // The outcomes serialise as the bindings' objects: the CLI's report plus the state.
        let v = serde_json::to_value(&second).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["messages", "tokens", "lore", "cut", "state"]);
        assert_eq!(v["state"]["variables"]["local"]["n"], "xx");
        // The scan call sees the same sticky entry from the same state.
        let scan = session.scan(&chat, &first.state);
        assert_eq!(scan.report().activated[0].book, "w");
        let v = serde_json::to_value(&scan).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["activated", "rejected", "tokens", "state"]);
        let back = ScanState::deserialize(&v["state"]).unwrap();
        assert_eq!(&back, scan.state());
        assert_eq!(
            scan.state(),
            &ScanState {
                variables: Default::default(),
                ..second.state.clone()
            }
        );
    }

    /// The seed defaults to the chat's; an explicit one wins; scan and prompt agree.
    #[test]
    fn session_seed_defaults_to_the_chat_and_scan_and_prompt_agree() {
        let coins: Vec<serde_json::Value> = (0..32)
            .map(|i| {
                let mut e = entry(&["storm"], &format!("coin {i}"));
                e["extensions"]["probability"] = json!(50);
                e
            })
            .collect();
        let b = book(json!(coins));
        let chat = Chat::from(vec![Message::user("a storm")]);
        let session = Session::new(SessionOptions::default(), estimate()).with_book(
            &b,
            BookKind::Global,
            "w",
        );
        let scan = session.scan(&chat, &ScanState::default());
        assert_eq!(scan.seed, chat.seed());
        let turn = session.prompt(&chat, &ScanState::default()).unwrap();
        let picked = |acts: &[ccv3_lore::Activation<'_>]| -> Vec<usize> {
            acts.iter().map(|a| a.entry.index).collect()
        };
        assert_eq!(picked(&scan.result.activated), picked(&turn.scan.activated));
        assert!(!scan.result.activated.is_empty() && scan.result.activated.len() < 32);
        let seeded = Session::new(
            SessionOptions {
                seed: Some(chat.seed() ^ 1),
                ..SessionOptions::default()
            },
            estimate(),
        )
        .with_book(&b, BookKind::Global, "w");
        let other = seeded.scan(&chat, &ScanState::default());
        assert_eq!(other.seed, chat.seed() ^ 1);
        assert_ne!(
            picked(&other.result.activated),
            picked(&scan.result.activated)
        );
    }

    /// Decorator rules exist once: `@@@` fallbacks apply to the prompt's facts too (SPEC_V3
    /// "Decorators": a fallback is used when the decorator before it is not known).
    #[test]
    fn session_decorator_fallback_priority_reaches_the_insert() {
        let b = book(json!([entry(&["x"], "@@unknown_x 1\n@@@priority 5\nbody")]));
        let session = Session::new(SessionOptions::default(), estimate()).with_book(
            &b,
            BookKind::Global,
            "w",
        );
        let chat = Chat::from(vec![Message::user("x")]);
        let scan = session.scan(&chat, &ScanState::default());
        let inserts = crate::adapters::inserts_from_activations(&scan.result, session.books());
        assert_eq!(inserts.len(), 1);
        assert_eq!(inserts[0].priority, Some(5.0));
        assert_eq!(inserts[0].content, "body");
    }

    /// A second character book is global (a chat has one character), and names follow the card.
    #[test]
    fn session_one_character_book_and_char_name() {
        let mut card = ccv3::Card::new("Aqua").data;
        card.nickname = Some("Aq".into());
        card.character_book = Some(book(json!([entry(&["a"], "A")])));
        let other = book(json!([entry(&["b"], "B")]));
        let s = Session::new(SessionOptions::default(), estimate())
            .with_card(&card, "card")
            .with_book(&other, BookKind::Character, "other");
        let kinds: Vec<BookKind> = s.books().iter().map(|b| b.kind).collect();
        assert_eq!(kinds, [BookKind::Character, BookKind::Global]);
        assert_eq!(s.book_names(), ["card", "other"]);
        assert_eq!(s.char_name(), "Aq");
        let bare = Session::new(SessionOptions::default(), estimate());
        assert_eq!(bare.char_name(), "Character");
    }

    /// Issue 26: the greeting is 0 unless told, for the scan's `@@is_greeting` too (SPEC_V3
    /// "`@@is_greeting`", 0 being `first_mes`); `None` ignores the decorator ("If the
    /// application does not support greetings ... SHOULD ignore this decorator").
    #[test]
    fn greeting_defaults_to_0_and_none_ignores_is_greeting() {
        let b = book(json!([
            entry(&["tea"], "@@is_greeting 0\nfirst"),
            entry(&["tea"], "@@is_greeting 1\nsecond")
        ]));
        let chat = Chat::from(vec![Message::user("tea?")]);
        let active = |greeting: Option<usize>| -> Vec<usize> {
            let opts = SessionOptions {
                greeting,
                ..SessionOptions::default()
            };
            let s = Session::new(opts, estimate()).with_book(&b, BookKind::Global, "w");
            let out = s.scan(&chat, &ScanState::default());
            out.result.activated.iter().map(|a| a.entry.index).collect()
        };
        assert_eq!(SessionOptions::default().greeting, Some(0));
        assert_eq!(active(SessionOptions::default().greeting), [0]);
        assert_eq!(active(Some(1)), [1]);
        assert_eq!(active(None), [0, 1]);
    }

    /// Issue 16: `prompt --max-context` lists every cut item, lore the scan's budget cut too
    /// (`budget`, with its tokens), and a prompt that still does not fit has `over_limit`.
    #[test]
    fn prompt_lists_budget_cut_lore_and_over_limit() {
        let mut card = ccv3::Card::new("Aqua").data;
        card.description = "d ".repeat(200);
        let long = "x".repeat(40);
        let b = book(json!([
            entry(&["a"], &long),
            entry(&["a"], &long),
            entry(&["a"], &long)
        ]));
        let opts = SessionOptions {
            max_context: Some(30),
            ..SessionOptions::default()
        };
        let s = Session::new(opts, estimate())
            .with_card(&card, "card")
            .with_book(&b, BookKind::Global, "w");
        let chat = Chat::from(vec![Message::user("a")]);
        let turn = s.prompt(&chat, &ScanState::default()).unwrap();
        let report = turn.report();
        let lore_cuts: Vec<(&str, &str)> = report
            .cut
            .iter()
            .filter(|c| c.kind == "lore")
            .map(|c| (c.label.as_str(), c.reason))
            .collect();
        assert_eq!(lore_cuts.len(), 3, "{:?}", report.cut);
        assert!(lore_cuts.iter().all(|(l, _)| l.starts_with("w/#")));
        assert!(report
            .cut
            .iter()
            .any(|c| c.reason == "budget" && c.tokens > 0));
        assert!(report.over_limit.is_some_and(|n| n > 0));
        let v = serde_json::to_value(&report).unwrap();
        assert!(v["over_limit"].as_u64().is_some_and(|n| n > 0));
        let v = serde_json::to_value(&turn).unwrap();
        assert!(v["over_limit"].as_u64().is_some_and(|n| n > 0));
        // A prompt that fits has no `over_limit` key.
        let fits = Session::new(SessionOptions::default(), estimate()).with_card(&card, "card");
        let v = serde_json::to_value(fits.prompt(&chat, &ScanState::default()).unwrap().report())
            .unwrap();
        assert!(v.get("over_limit").is_none());
    }

    /// Issue 17: `{{mesExamples}}` in a card's text follows the instruct template the prompt is
    /// rendered with, as SillyTavern's instruct mode formats examples
    /// (1.19.0 `public/scripts/instruct-mode.js`, `formatInstructModeExamples`); without one,
    /// the chat completion shape (`<START>` blocks).
    #[test]
    fn mes_examples_follow_the_instruct_template() {
        let mut card = ccv3::Card::new("Aqua").data;
        card.mes_example = "<START>\n{{user}}: Hi\n{{char}}: Hello".into();
        card.system_prompt = "{{mesExamples}}".into();
        let chat = Chat::from(vec![Message::user("a")]);
        let system = |opts: SessionOptions| {
            let s = Session::new(opts, estimate()).with_card(&card, "card");
            let turn = s.prompt(&chat, &ScanState::default()).unwrap();
            turn.report().messages[0].content.clone()
        };
        let chat_shape = system(SessionOptions::default());
        // (the prompt's own examples slot follows the system prompt)
        assert!(
            chat_shape.starts_with("<START>\nUser: Hi\nAqua: Hello\n"),
            "{chat_shape:?}"
        );
        let instruct = system(SessionOptions {
            example_format: crate::InstructTemplate::chatml().example_format(),
            ..SessionOptions::default()
        });
        assert!(
            instruct.contains("<|im_start|>user\nHi<|im_end|>")
                && instruct.contains("<|im_start|>assistant\nHello<|im_end|>"),
            "{instruct:?}"
        );
    }
}
