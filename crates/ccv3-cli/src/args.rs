//! Command-line arguments (the low stage: typed and parsed, nothing built yet).

use crate::limits::{InputLimits, MacroLimits};
use ccv3_analyze::App;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Character Card V3 tool: read, validate, convert and run character cards and lorebooks.
#[derive(Debug, Parser)]
#[command(name = "ccv3", version, about, long_about = None, after_help = CLI_EXAMPLES)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Raise the size limits of the card and lorebook files read (files read whole, JSON text,
    /// PNG card text, CHARX contents, `pack` folders) to this many MiB each. The defaults
    /// (128-256 MiB) are far above real cards and keep every command under 1 GiB of memory.
    #[arg(long, global = true, value_name = "MIB")]
    pub max_input_mib: Option<u64>,
    /// An RPack table for RisuAI `.risum` modules in place of the built-in one (observed from
    /// RisuAI's encoder): a 512-byte `rpack_map.bin` layout or a 256-byte decoding table.
    #[arg(long, global = true, value_name = "FILE")]
    pub rpack_map: Option<PathBuf>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Summarise a card or lorebook for people, or print it as V3 JSON with --json.
    #[command(after_help = INSPECT_EXAMPLES)]
    Inspect {
        /// A card (JSON, PNG/APNG, CHARX, WebP, JPEG; read only: Backyard `.byaf`, Voxta
        /// `.voxpkg`) or a lorebook (any format `ccv3 lore list` reads, RisuAI `.risum` modules
        /// among them); `-` reads standard input.
        file: PathBuf,
        /// Print the card as one V3 JSON object (a lorebook as lorebook_v3); with --summary,
        /// the summary as one JSON object.
        #[arg(long)]
        json: bool,
        /// Print only what a character list shows (name, nickname, creator, tags, spec,
        /// container, counts of greetings, lorebook entries and assets), read without building
        /// the card: much faster on big cards. A card only.
        #[arg(long)]
        summary: bool,
        /// With --summary: also count the permanent tokens (the name, description,
        /// personality, scenario and character's note, `extensions.depth_prompt.prompt`, as
        /// SillyTavern counts them) with this tokenizer: o200k, cl100k or a HuggingFace
        /// tokenizer.json path (feature `hf`).
        #[arg(long, value_name = "TOKENIZER", requires = "summary")]
        tokens: Option<String>,
        /// Write to FILE instead of standard output (atomically: FILE appears whole or not at
        /// all; `-`: standard output).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Check files or folders (recursively) against the spec.
    #[command(after_help = VALIDATE_EXAMPLES)]
    Validate(ValidateArgs),
    /// Find what a card's lorebook, macros and decorators do that their writer may not expect.
    Lint(LintArgs),
    /// Say what SillyTavern, RisuAI, Agnai and V2 readers do with a card.
    Portability(PortabilityArgs),
    /// Convert a card or lorebook; the output container comes from OUT's extension. A folder
    /// converts every card in it into `--out DIR` (`--format` picks the container).
    #[command(after_help = CONVERT_EXAMPLES)]
    Convert {
        /// Input file (`-`: standard input), or a folder (converted recursively; hidden files
        /// and folders skipped).
        input: PathBuf,
        /// Output file: .json, .png or .charx (for a file input); `-` writes to standard output
        /// (give --format).
        #[arg(required_unless_present = "out")]
        output: Option<PathBuf>,
        /// Output format.
        #[arg(long, value_enum)]
        to: Option<Target>,
        /// The picture for a PNG output when the input has none (`-`: standard input).
        #[arg(long)]
        image: Option<PathBuf>,
        /// The output folder, for a folder input (created if missing; the input's subfolders
        /// are kept).
        #[arg(long, value_name = "DIR", conflicts_with = "output")]
        out: Option<PathBuf>,
        /// The output container: of every file for a folder input; for OUT `-` (standard
        /// output); else OUT's extension says it (and --format, if given, must agree).
        #[arg(long, value_enum)]
        format: Option<OutFormat>,
        /// Replace output files that exist (a folder input; without it they are left alone and
        /// reported).
        #[arg(long, requires = "out")]
        force: bool,
    },
    /// Write a card's card.json and asset files into a folder.
    #[command(
        after_help = "Examples:\n  ccv3 extract card.charx card/            card/card.json, card/assets/...\n  curl -s URL | ccv3 extract - card/       a card from standard input\n  ccv3 pack card/ card.png                 and back"
    )]
    Extract {
        /// The card; `-` reads standard input.
        file: PathBuf,
        /// The folder to create.
        dir: PathBuf,
    },
    /// Build a card from a folder made by `extract` (card.json plus asset files).
    #[command(
        after_help = "Examples:\n  ccv3 pack card/ card.charx\n  ccv3 pack card/ - --format png > card.png"
    )]
    Pack {
        /// The folder.
        dir: PathBuf,
        /// Output file: .json, .png or .charx; `-` writes to standard output (give --format).
        output: PathBuf,
        /// The output container (for OUT `-`; else OUT's extension says it).
        #[arg(long, value_enum)]
        format: Option<OutFormat>,
    },
    /// Expand curly-braced syntax (`{{char}}`, `{{random:a,b}}`, ...) as for a prompt.
    #[command(after_help = CBS_EXAMPLES)]
    Cbs(CbsArgs),
    /// Build the messages a model receives from a card, its lorebooks and a chat.
    #[command(after_help = PROMPT_EXAMPLES)]
    Prompt(PromptArgs),
    /// Index every card of files or folders into an SQLite database (re-runs update only
    /// changed files).
    #[command(after_help = INDEX_EXAMPLES)]
    Index {
        /// Files or folders (folders recursively; hidden files and folders skipped).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The database file (created when missing).
        #[arg(long, value_name = "FILE")]
        db: PathBuf,
        /// Tokenizer of the token counts: o200k, cl100k or estimate.
        #[arg(long, default_value = "o200k")]
        tokenizer: String,
    },
    /// Full-text search of an index (name, description, tags, creator).
    #[command(after_help = INDEX_EXAMPLES)]
    Search {
        /// The database `ccv3 index` wrote.
        #[arg(long, value_name = "FILE")]
        db: PathBuf,
        /// An FTS5 query: words, "a phrase", name:word, word*, a AND b, a OR b, NOT c.
        query: String,
        /// The most matches printed.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Print one JSON array of {path, name, creator, tags, spec, container, rank}.
        #[arg(long)]
        json: bool,
        /// Write to FILE instead of standard output (atomically: FILE appears whole or not at
        /// all; `-`: standard output).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Export an index for data work: one JSON object per card per line, or Parquet.
    #[command(after_help = INDEX_EXAMPLES)]
    Export {
        /// The database `ccv3 index` wrote.
        #[arg(long, value_name = "FILE")]
        db: PathBuf,
        /// The output format.
        #[arg(long, value_enum, default_value = "jsonl")]
        format: ExportFormat,
        /// Write to FILE instead of standard output (atomically: FILE appears whole or not at
        /// all; `-`: standard output).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Token counts of a card's fields and of each lorebook entry.
    #[command(
        after_help = "Examples:\n  ccv3 tokens card.png\n  ccv3 tokens card.png --tokenizer cl100k --json -o tokens.json"
    )]
    Tokens {
        /// A card or a lorebook; `-` reads standard input.
        file: PathBuf,
        /// Tokenizer: o200k, cl100k or estimate.
        #[arg(long, default_value = "o200k")]
        tokenizer: String,
        /// Print {"tokenizer","fields":{...},"entries":[{index,name,tokens}],"lorebook","total"}.
        #[arg(long)]
        json: bool,
        /// Write to FILE instead of standard output (atomically: FILE appears whole or not at
        /// all; `-`: standard output).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Field-by-field differences between two cards or lorebooks, in any containers.
    #[command(
        after_help = "Examples:\n  ccv3 diff card.png card.charx\n  ccv3 diff old.json new.png --json\n  ccv3 set card.png name Ember -o - --format json | ccv3 diff card.png -\n\nExit status: 0 the same, 1 different, 2 a file could not be read."
    )]
    Diff {
        /// The first card or lorebook (`-`: standard input).
        a: PathBuf,
        /// The second (`-`: standard input; only one of them can be `-`).
        b: PathBuf,
        /// Print one JSON array of {path, a, b} (texts add "changes": [{op, text}], lists of
        /// texts "items": [{op, value, ...}]).
        #[arg(long)]
        json: bool,
        /// Color inserted and deleted text (auto: on a terminal, unless NO_COLOR is set).
        #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
        color: ColorChoice,
        /// Write to FILE instead of standard output (atomically: FILE appears whole or not at
        /// all; `-`: standard output).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Set one field of a card (its V3 JSON) and write the result.
    #[command(
        after_help = "Examples:\n  ccv3 set card.png name 'Ember' -o out.png\n  ccv3 set card.png tags '[\"a\",\"b\"]' --json -o out.charx\n  ccv3 set card.json character_book.entries.0.enabled false --json -o out.json\n  cat card.png | ccv3 set - creator Sam -o - --format png > out.png"
    )]
    Set {
        /// The card (or lorebook); `-` reads standard input.
        file: PathBuf,
        /// A dotted path: name, data.tags, character_book.entries.3.content, extensions.x.
        field: String,
        /// The new value (text; JSON with --json).
        value: String,
        /// Read VALUE as JSON (numbers, booleans, arrays, objects).
        #[arg(long)]
        json: bool,
        /// The output file: .json, .png or .charx; `-` writes to standard output (give
        /// --format).
        #[arg(short = 'o', long = "output", value_name = "OUT")]
        output: PathBuf,
        /// The output container (for OUT `-`; else OUT's extension says it).
        #[arg(long, value_enum)]
        format: Option<OutFormat>,
    },
    /// Print a shell completion script.
    #[command(
        after_help = "Examples:\n  ccv3 completions bash -o ~/.local/share/bash-completion/completions/ccv3\n  ccv3 completions zsh > ~/.zfunc/_ccv3\n  ccv3 completions fish > ~/.config/fish/completions/ccv3.fish"
    )]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
        /// Write to FILE instead of standard output (atomically: FILE appears whole or not at
        /// all; `-`: standard output).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Lorebook engine commands: scan a chat, list a book's entries.
    #[command(after_help = LORE_EXAMPLES)]
    Lore {
        /// What to do.
        #[command(subcommand)]
        what: LoreCommand,
    },
    /// Dump internals.
    #[command(after_help = "Examples:\n  ccv3 debug chunks card.png")]
    Debug {
        /// What to dump.
        #[command(subcommand)]
        what: DebugCommand,
    },
}

/// `ccv3 lore` subcommands.
// Parsed once per run: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum LoreCommand {
    /// Scan a chat: which entries activate, in prompt order, and why the others did not.
    #[command(after_help = LORE_EXAMPLES)]
    Scan(LoreScanArgs),
    /// List a lorebook's entries: index, name, keys, position, order, enabled, decorators.
    #[command(
        after_help = "Examples:\n  ccv3 lore list card.png\n  ccv3 lore list world.json --json | jq '.[] | select(.enabled)'\n  ccv3 lore list card.png --json -o entries.json"
    )]
    List {
        /// A card (its character book) or a standalone lorebook; `-` reads standard input.
        file: PathBuf,
        /// Print one JSON array of {index, name, keys, secondary_keys, position, order,
        /// enabled, constant, decorators}.
        #[arg(long)]
        json: bool,
        /// Write to FILE instead of standard output (atomically: FILE appears whole or not at
        /// all; `-`: standard output).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Which entry triggers which in a recursion step (JSON, Graphviz DOT or Mermaid).
    Graph(LoreGraphArgs),
}

/// `ccv3 debug` subcommands.
#[derive(Debug, Subcommand)]
pub enum DebugCommand {
    /// List the chunks of a PNG file.
    #[command(
        after_help = "Examples:\n  ccv3 debug chunks card.png\n  ccv3 debug chunks - < card.png"
    )]
    Chunks {
        /// The PNG file; `-` reads standard input.
        file: PathBuf,
        /// Write to FILE instead of standard output (atomically: FILE appears whole or not at
        /// all; `-`: standard output).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// Output formats of `convert --to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Target {
    /// A V3 card (default for cards).
    V3,
    /// A V2 card.
    V2,
    /// A standalone lorebook `{"spec":"lorebook_v3","data":...}`.
    #[value(name = "lorebook_v3")]
    LorebookV3,
    /// SillyTavern World Info JSON.
    Worldinfo,
}

/// Reads `--dialect` (issue 17).
fn parse_dialect(s: &str) -> Result<ccv3_cbs::Dialect, String> {
    s.parse()
}

/// Arguments of `ccv3 cbs`.
#[derive(Debug, clap::Args)]
pub struct CbsArgs {
    /// The text to expand; `-` reads standard input.
    #[arg(required_unless_present = "list")]
    pub text: Option<String>,
    /// Print every macro of the dialect with its arguments and a one-line description
    /// instead of expanding a text.
    #[arg(long)]
    pub list: bool,
    /// With `--list`: print a JSON array of the macros.
    #[arg(long, requires = "list")]
    pub json: bool,
    /// Whose macros: auto (the card's application: RisuAI extensions mean risu, else
    /// sillytavern; without a card, every built-in macro), risu, sillytavern or spec.
    #[arg(long, default_value = ccv3_prompt::defaults::DIALECT, value_parser = parse_dialect)]
    pub dialect: ccv3_cbs::Dialect,
    /// A card whose name and fields the macros use (`-`: standard input).
    #[arg(long)]
    pub card: Option<PathBuf>,
    /// The character's name (default: the card's nickname, else its name).
    #[arg(long = "char")]
    pub char_name: Option<String>,
    /// The user's name.
    #[arg(long, default_value = ccv3_prompt::defaults::USER_NAME)]
    pub user: String,
    /// A chat (JSON array of {role,name,content}, or a SillyTavern .jsonl) for the chat macros
    /// (`-`: standard input).
    #[arg(long)]
    pub chat: Option<PathBuf>,
    /// Seed for `{{random}}`, `{{pick}}` and `{{roll}}` (default: derived from the chat).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The time `{{time}}`, `{{date}}` and friends show: RFC 3339 (`2026-11-25T13:00:00Z`,
    /// `2026-11-25T13:00:00+02:00`) or unix seconds (default: the system clock, in UTC).
    #[arg(long, value_parser = crate::now::parse_now)]
    pub now: Option<ccv3_cbs::Timestamp>,
    /// Expand as for display (comments shown) instead of as for a prompt.
    #[arg(long)]
    pub display: bool,
    /// Write to FILE instead of standard output (atomically: FILE appears whole or not at
    /// all; `-`: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Input limits.
    #[command(flatten)]
    pub limits: InputLimits,
    /// The macro budget.
    #[command(flatten)]
    pub macros: MacroLimits,
}

/// Arguments of `ccv3 prompt`.
#[derive(Debug, clap::Args)]
pub struct PromptArgs {
    /// The character card (`-`: standard input).
    #[arg(long)]
    pub card: PathBuf,
    /// The chat: a JSON array of {role,name,content} (oldest first) or a SillyTavern .jsonl
    /// (`-`: standard input).
    #[arg(long)]
    pub chat: PathBuf,
    /// More lorebooks (global books): standalone lorebooks or cards; repeatable (`-`: standard
    /// input).
    #[arg(long = "book")]
    pub books: Vec<PathBuf>,
    /// The user's name.
    #[arg(long, default_value = ccv3_prompt::defaults::USER_NAME)]
    pub user: String,
    /// The active greeting (0 = first_mes, then the alternate greetings).
    #[arg(long, default_value_t = ccv3_prompt::defaults::GREETING)]
    pub greeting: usize,
    /// Seed for lorebook probability, {{random}}, {{pick}} and {{roll}} (default: derived from the
    /// chat, so the same chat gives the same prompt).
    #[arg(long)]
    pub seed: Option<u64>,
    /// State from earlier turns (lorebook timed effects, CBS variables): read if present,
    /// written back. `-` reads it from standard input (empty: a new chat) and writes the next
    /// one to standard output (then give -o FILE for the prompt).
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// The time `{{time}}`, `{{date}}` and friends show: RFC 3339 (`2026-11-25T13:00:00Z`,
    /// `2026-11-25T13:00:00+02:00`) or unix seconds (default: the system clock, in UTC).
    #[arg(long, value_parser = crate::now::parse_now)]
    pub now: Option<ccv3_cbs::Timestamp>,
    /// The application's own system prompt (what {{original}} stands for).
    #[arg(long = "system-prompt")]
    pub system_prompt: Option<String>,
    /// Fit the prompt into this many tokens (oldest history first, then lorebook entries).
    #[arg(long = "max-context")]
    pub max_context: Option<usize>,
    /// Tokenizer: o200k, cl100k, or a HuggingFace tokenizer.json path (feature `hf`).
    #[arg(long, default_value = ccv3_prompt::defaults::TOKENIZER)]
    pub tokenizer: String,
    /// A prompt template: a JSON list of slot names (`-`: standard input).
    #[arg(long)]
    pub template: Option<PathBuf>,
    /// Render as text through an instruct template: chatml, llama3, mistral, alpaca or a
    /// JSON template file (`-`: standard input).
    #[arg(long)]
    pub instruct: Option<String>,
    /// Reproduce SillyTavern 1.15's lorebook results where its code departs from its
    /// documentation (`sillytavern`; see docs/sillytavern-compat.md).
    #[arg(long, value_parser = parse_compat)]
    pub compat: Option<ccv3_lore::Compat>,
    /// Print {"messages":[...],"tokens":N,"lore":[...],"cut":[...]}, plus "over_limit":N when
    /// the prompt is still over --max-context after every cut (then the exit code is 1).
    #[arg(long)]
    pub json: bool,
    /// Write to FILE instead of standard output (atomically: FILE appears whole or not at
    /// all; `-`: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Whose macros the card's texts use: auto (RisuAI extensions mean risu, else
    /// sillytavern), risu, sillytavern or spec.
    #[arg(long, default_value = ccv3_prompt::defaults::DIALECT, value_parser = parse_dialect)]
    pub dialect: ccv3_cbs::Dialect,
    /// Input limits.
    #[command(flatten)]
    pub limits: InputLimits,
    /// The macro budget.
    #[command(flatten)]
    pub macros: MacroLimits,
    /// The lorebook engine's settings.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Arguments of `ccv3 lore scan`.
#[derive(Debug, clap::Args)]
pub struct LoreScanArgs {
    /// A card (its character book) or a standalone lorebook (lorebook_v3, a bare
    /// character_book, World Info, NovelAI, Agnai, RisuAI books and modules, KoboldAI world
    /// info); repeat for more books. The first card's book is the character book; the others
    /// are global books. `-` reads standard input.
    #[arg(long = "book", required = true)]
    pub books: Vec<PathBuf>,
    /// The chat: a JSON array of {role,name,content} (oldest first) or a SillyTavern .jsonl
    /// (`-`: standard input).
    #[arg(long)]
    pub chat: PathBuf,
    /// State from earlier turns (timed effects, match history): read if present, written back.
    /// `-` reads it from standard input (empty: a new chat) and writes the next one to
    /// standard output (then give -o FILE for the scan).
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// Seed for probability rolls and group weights (default: derived from the chat, as in
    /// `ccv3 prompt`, so both pick the same entries).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The active greeting, for `@@is_greeting` (0 = first_mes, 1 = the first alternate
    /// greeting, ...; default 0, as in `ccv3 prompt`).
    #[arg(long)]
    pub greeting: Option<usize>,
    /// The character name for macros (default: the card's nickname, else its name).
    #[arg(long = "char")]
    pub char_name: Option<String>,
    /// The user name for macros.
    #[arg(long, default_value = ccv3_prompt::defaults::USER_NAME)]
    pub user: String,
    /// Whose macros the keys use: auto (the first card's application: RisuAI extensions mean
    /// risu, else sillytavern), risu, sillytavern or spec.
    #[arg(long, default_value = ccv3_prompt::defaults::DIALECT, value_parser = parse_dialect)]
    pub dialect: ccv3_cbs::Dialect,
    /// Turn recursion on for books that do not say.
    #[arg(long)]
    pub recursive: bool,
    /// The scan depth for books that do not say.
    #[arg(long)]
    pub scan_depth: Option<u64>,
    /// How character and global books are merged: evenly, character-first or global-first.
    #[arg(long, default_value = ccv3_prompt::defaults::STRATEGY)]
    pub strategy: String,
    /// Tokenizer for budgets: o200k or cl100k.
    #[arg(long, default_value = ccv3_prompt::defaults::TOKENIZER)]
    pub tokenizer: String,
    /// Add load, compile and scan times to the output.
    #[arg(long)]
    pub timing: bool,
    /// Reproduce SillyTavern 1.15's results where its code departs from its documentation
    /// (`sillytavern`; see docs/sillytavern-compat.md).
    #[arg(long, value_parser = parse_compat)]
    pub compat: Option<ccv3_lore::Compat>,
    /// SillyTavern's timed-effect state (its chat metadata's `timedWorldInfo`, or the chat
    /// metadata holding it): the scan starts from its sticky and cooldown records (keys
    /// `world.uid`, a book's world being its file name or its own `name`).
    #[arg(long = "st-timed", value_name = "FILE")]
    pub st_timed: Option<PathBuf>,
    /// The entries SillyTavern activated on this generation (JSON: `["world.uid", ...]` or
    /// `{"world": [uid, ...]}`): with `--compat sillytavern` its probability rolls and
    /// inclusion-group draws are taken from it.
    #[arg(long = "st-activated", value_name = "FILE")]
    pub st_activated: Option<PathBuf>,
    /// The kind of each `--book`, in order: character, global, chat or persona (SillyTavern's
    /// lore kinds; chat lore goes first, then persona lore, then the strategy's order); books
    /// past the last `--book-kind` keep the default.
    #[arg(long = "book-kind", value_name = "KIND", value_parser = parse_book_kind)]
    pub book_kinds: Vec<ccv3_lore::BookKind>,
    /// Print {"activated":[...],"rejected":[...],"tokens":N}.
    #[arg(long)]
    pub json: bool,
    /// Write to FILE instead of standard output (atomically: FILE appears whole or not at
    /// all; `-`: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Input limits.
    #[command(flatten)]
    pub limits: InputLimits,
    /// The lorebook engine's settings.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// The lorebook engine's settings, shared by `ccv3 lore scan` and `ccv3 prompt` (SillyTavern's
/// World Info "Activation Settings"; the `true|false` ones are defaults for entries that do
/// not say).
#[derive(Debug, Clone, clap::Args)]
pub struct EngineArgs {
    /// Scan deeper (one message more each pass) until this many entries are active (0: off).
    #[arg(long = "min-activations", value_name = "N")]
    pub min_activations: Option<usize>,
    /// The deepest min activations may scan (0: the whole chat).
    #[arg(long = "min-activations-depth-max", value_name = "N")]
    pub min_activations_depth_max: Option<u64>,
    /// The most scan passes (0: no limit; 1 disables recursion).
    #[arg(long = "max-recursion-steps", value_name = "N")]
    pub max_recursion_steps: Option<usize>,
    /// A token budget over all books (each book's own budget applies too).
    #[arg(long = "budget", value_name = "N")]
    pub budget: Option<usize>,
    /// A ceiling on the budget of all books, whatever sets it.
    #[arg(long = "budget-cap", value_name = "N")]
    pub budget_cap: Option<usize>,
    /// Prefix each message with `name: ` in the scan text (default true).
    #[arg(long = "include-names", value_name = "true|false")]
    pub include_names: Option<bool>,
    /// Match single-word keys as whole words (default true).
    #[arg(long = "whole-words", value_name = "true|false")]
    pub whole_words: Option<bool>,
    /// Match keys case-sensitively (default false).
    #[arg(long = "case-sensitive", value_name = "true|false")]
    pub case_sensitive: Option<bool>,
    /// Keep only the inclusion-group members with the most keys found (default false).
    #[arg(long = "group-scoring", value_name = "true|false")]
    pub group_scoring: Option<bool>,
    /// The generation type, for entries with `triggers`.
    #[arg(long = "trigger", default_value = ccv3_prompt::defaults::TRIGGER, value_parser = parse_trigger,
          value_name = "normal|continue|impersonate|swipe|regenerate|quiet")]
    pub trigger: ccv3_lore::Trigger,
    /// The user's persona description, scanned for entries with `match_persona_description`.
    #[arg(long = "persona", value_name = "TEXT")]
    pub persona: Option<String>,
}

/// A `--trigger` value.
fn parse_trigger(s: &str) -> Result<ccv3_lore::Trigger, String> {
    ccv3_lore::Trigger::parse(s)
        .ok_or_else(|| "use normal, continue, impersonate, swipe, regenerate or quiet".to_string())
}

impl EngineArgs {
    /// The settings, over the engine's defaults.
    pub fn settings(&self) -> ccv3_prompt::EngineSettings {
        let mut e = ccv3_prompt::EngineSettings::default();
        if let Some(n) = self.min_activations {
            e.min_activations = n;
        }
        if let Some(n) = self.min_activations_depth_max {
            e.min_activations_depth_max = n;
        }
        if let Some(n) = self.max_recursion_steps {
            e.max_recursion_steps = n;
        }
        e.budget = self.budget;
        e.budget_cap = self.budget_cap;
        if let Some(b) = self.include_names {
            e.include_names = b;
        }
        if let Some(b) = self.whole_words {
            e.whole_words = b;
        }
        if let Some(b) = self.case_sensitive {
            e.case_sensitive = b;
        }
        if let Some(b) = self.group_scoring {
            e.group_scoring = b;
        }
        e.trigger = self.trigger;
        e.persona_description = self.persona.clone().unwrap_or_default();
        e
    }
}

/// A `--book-kind` value.
fn parse_book_kind(s: &str) -> Result<ccv3_lore::BookKind, String> {
    ccv3_lore::BookKind::parse(s)
        .ok_or_else(|| format!("unknown book kind {s:?}: use character, global, chat or persona"))
}

/// Parses `--compat`.
fn parse_compat(s: &str) -> Result<ccv3_lore::Compat, String> {
    ccv3_lore::Compat::parse(s)
        .ok_or_else(|| format!("unknown compat mode {s:?} (expected sillytavern)"))
}

/// Examples of `ccv3 validate`.
const VALIDATE_EXAMPLES: &str = "Examples:
  ccv3 validate card.png                     one line per card, then a summary
  ccv3 validate cards/ --verbose             every finding
  ccv3 validate cards/ --summary             counts per code and severity, the worst files
  ccv3 validate cards/ --jsonl --severity error | jq -r .file
  ccv3 validate cards/ --code asset-ext-not-lowercase
  ccv3 validate cards/ --json -o findings.json
  cat card.png | ccv3 validate -             a card from standard input

Exit status: 0 clean, 1 errors found, 2 a file could not be read.";

/// Severities of `validate --severity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MinSeverity {
    /// Errors only.
    Error,
    /// Errors and warnings.
    Warning,
    /// Everything (the default).
    Info,
}

/// Arguments of `ccv3 validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// Files or folders (folders recursively; hidden files and folders inside them skipped);
    /// `-` reads one card from standard input.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Print one JSON array of {file, severity, code, path, message} (a file that cannot be
    /// read is one item with code "unreadable").
    #[arg(long, conflicts_with = "jsonl")]
    pub json: bool,
    /// Print one JSON object {file, severity, code, path, message} per line, as files are read.
    #[arg(long)]
    pub jsonl: bool,
    /// Print every finding instead of one line per card (the default for up to 10 files and
    /// no folder).
    #[arg(long, short = 'v', conflicts_with_all = ["json", "jsonl", "summary"])]
    pub verbose: bool,
    /// Print only the totals: findings per code and severity, and the worst files (a JSON
    /// object with --json).
    #[arg(long, conflicts_with = "jsonl")]
    pub summary: bool,
    /// Only findings of this severity or worse (error, warning, info).
    #[arg(long, value_enum)]
    pub severity: Option<MinSeverity>,
    /// Only findings with this code (repeatable).
    #[arg(long = "code", value_name = "CODE")]
    pub codes: Vec<String>,
    /// Write to FILE instead of standard output (atomically: FILE appears whole or not at
    /// all; `-`: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// When `ccv3 diff` colors its output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Examples of `ccv3 convert`.
const CONVERT_EXAMPLES: &str = "Examples:
  ccv3 convert card.png card.charx                  a V3 CHARX
  ccv3 convert card.png card.json --to v2           a V2 card as JSON
  ccv3 convert card.json card.png --image face.png
  ccv3 convert book.json wi.json --to worldinfo     a lorebook as SillyTavern World Info
  ccv3 convert cards/ --out v2/ --to v2 --format png  a whole folder, on every core
  cat card.png | ccv3 convert - - --format json > card.json   standard input to standard output

Exit status: 0 done, 2 a file could not be converted (a folder: the others still are).";

/// Output containers of `convert DIR --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutFormat {
    /// PNG (`.png`).
    Png,
    /// CHARX (`.charx`, V3 only).
    Charx,
    /// JSON (`.json`).
    Json,
}

/// Examples of `ccv3 index`, `search` and `export`.
const INDEX_EXAMPLES: &str = "Examples:
  ccv3 index cards/ --db cards.sqlite             index (again: only changed files are read)
  ccv3 search --db cards.sqlite lighthouse        full-text search
  ccv3 search --db cards.sqlite 'name:ember OR tags:fantasy' --json
  ccv3 export --db cards.sqlite -o cards.jsonl    pandas.read_json('cards.jsonl', lines=True)
  ccv3 export --db cards.sqlite --format parquet -o cards.parquet   pandas.read_parquet(...)
  sqlite3 cards.sqlite 'SELECT card_hash, COUNT(*) FROM cards GROUP BY 1 HAVING COUNT(*) > 1'";

/// Formats of `ccv3 export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// One JSON object per line.
    Jsonl,
    /// Apache Parquet: the same columns (tags a list of strings, tokens and findings JSON
    /// text).
    Parquet,
}

/// Examples of `ccv3 inspect`.
const INSPECT_EXAMPLES: &str = "Examples:
  ccv3 inspect card.png                      a summary
  ccv3 inspect card.charx --json | jq .data.name
  ccv3 inspect card.png --json -o card.json  the card as V3 JSON, in a file
  ccv3 inspect card.png --summary --json --tokens o200k
                                             a character list's row, permanent tokens counted
  curl -s URL | ccv3 inspect -               a card from standard input";

/// Examples of `ccv3 cbs`.
const CBS_EXAMPLES: &str = "Examples:
  ccv3 cbs 'Hello {{user}}, I am {{char}}.' --card card.png --user Sam
  ccv3 cbs '{{random:a,b,c}} {{roll:20}}' --seed 7
  ccv3 cbs 'It is {{time}}.' --now 2026-11-25T13:00:00Z
  echo '{{char}} waves.' | ccv3 cbs - --card card.png
  ccv3 cbs --list --dialect risu";

/// Examples of `ccv3 prompt`.
const PROMPT_EXAMPLES: &str = "Examples:
  ccv3 prompt --card card.png --chat chat.json
  ccv3 prompt --card card.png --chat chat.json --book world.json --max-context 4096 --json
  ccv3 prompt --card card.png --chat chat.jsonl --instruct chatml -o prompt.txt
  ccv3 prompt --card card.png --chat chat.json --state state.json    timed effects across turns
  some-app --chat | ccv3 prompt --card card.png --chat -

Exit status: 0 done, 1 the prompt is still over --max-context, 2 it could not be built.";

/// Examples of `ccv3 lore`.
const LORE_EXAMPLES: &str = "Examples:
  ccv3 lore scan --book card.png --chat chat.json
  ccv3 lore scan --book card.png --book world.json --chat chat.json --json -o scan.json
  ccv3 lore scan --book card.png --chat chat.json --state - -o scan.txt < s1.json > s2.json
  ccv3 lore list card.png";

/// Examples of `ccv3 --help`.
const CLI_EXAMPLES: &str = "Examples:
  ccv3 inspect card.png                          what a card holds
  ccv3 validate cards/ --summary                 a whole folder against the spec
  ccv3 convert card.png card.charx               another container (or --to v2)
  ccv3 lore scan --book card.png --chat chat.json
  ccv3 prompt --card card.png --chat chat.json --max-context 4096
  curl -s URL | ccv3 inspect - --json -o card.json

`-` reads standard input wherever a file is read (once per command) and writes standard output
wherever a file is written; -o FILE writes a command's output to FILE, whole or not at all.
`ccv3 help COMMAND` shows each command's options and examples.";

/// Examples of `ccv3 lint`.
const LINT_EXAMPLES: &str = "Examples:
  ccv3 lint card.png                           every finding, for people
  ccv3 lint card.png --app sillytavern         macros and decorators as SillyTavern reads them
  ccv3 lint world.json --json | jq '.[] | select(.code==\"lore-budget-plan\") | .budget'
  ccv3 lint cards/*.png --severity warning --jsonl
  ccv3 lint book.json --budget 1024 --tokenizer cl100k

Exit status: 0 no error found, 1 errors found, 2 a file could not be read.";

/// Arguments of `ccv3 lint`.
#[derive(Debug, clap::Args)]
#[command(after_help = LINT_EXAMPLES)]
pub struct LintArgs {
    /// Cards or lorebooks (every format ccv3 reads); `-` reads one from standard input.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print one JSON array of {file, severity, code, path, entry, message} (and budget on
    /// lore-budget-plan).
    #[arg(long, conflicts_with = "jsonl")]
    pub json: bool,
    /// Print one JSON object per finding per line.
    #[arg(long)]
    pub jsonl: bool,
    /// Only findings of this severity or worse (error, warning, info).
    #[arg(long, value_enum)]
    pub severity: Option<MinSeverity>,
    /// Only findings with this code (repeatable).
    #[arg(long = "code", value_name = "CODE")]
    pub codes: Vec<String>,
    /// Write to FILE instead of standard output (atomically: FILE appears whole or not at
    /// all; `-`: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The application whose macros and decorators count: spec, sillytavern, risuai or agnai
    /// (default: the card's own where ccv3 can tell, else spec).
    #[arg(long, value_parser = parse_lint_app)]
    pub app: Option<App>,
    /// Tokenizer for the budget: o200k or cl100k.
    #[arg(long, default_value = "o200k")]
    pub tokenizer: String,
    /// The budget in tokens (default: the book's token_budget, else 25% of --max-context).
    #[arg(long, value_name = "N")]
    pub budget: Option<usize>,
    /// The model's context in tokens, for the default budget.
    #[arg(long = "max-context", value_name = "N", default_value_t = 8192)]
    pub max_context: usize,
    /// A ceiling on the budget, whatever sets it.
    #[arg(long = "budget-cap", value_name = "N")]
    pub budget_cap: Option<usize>,
}

/// A `--app` value of `lint`.
fn parse_lint_app(s: &str) -> Result<App, String> {
    match App::parse(s) {
        Some(App::V2) | None => Err("use spec, sillytavern, risuai or agnai".into()),
        Some(a) => Ok(a),
    }
}

/// Arguments of `ccv3 portability`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  ccv3 portability card.png                      all four applications\n  ccv3 portability card.charx --app sillytavern --app v2\n  ccv3 portability card.png --json | jq 'group_by(.app)'"
)]
pub struct PortabilityArgs {
    /// A card or a lorebook; `-` reads standard input.
    pub file: PathBuf,
    /// sillytavern, risuai, agnai or v2 (repeatable; default: all four).
    #[arg(long = "app", value_parser = parse_portability_app)]
    pub apps: Vec<App>,
    /// Print one JSON array of {app, severity, code, path, entry, message}.
    #[arg(long)]
    pub json: bool,
    /// Write to FILE instead of standard output (atomically: FILE appears whole or not at
    /// all; `-`: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// A `--app` value of `portability`.
fn parse_portability_app(s: &str) -> Result<App, String> {
    match App::parse(s) {
        Some(App::Spec) | None => Err("use sillytavern, risuai, agnai or v2".into()),
        Some(a) => Ok(a),
    }
}

/// How `lore graph` prints the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    /// `{nodes, edges}` JSON.
    Json,
    /// Graphviz DOT.
    Dot,
    /// A Mermaid flowchart.
    Mermaid,
}

/// Arguments of `ccv3 lore graph`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  ccv3 lore graph card.png                      edges and cycles, for people\n  ccv3 lore graph world.json --json | jq '.edges | length'\n  ccv3 lore graph card.png --format dot | dot -Tsvg > graph.svg\n  ccv3 lore graph card.png --format mermaid     a block for Markdown"
)]
pub struct LoreGraphArgs {
    /// A card (its character book) or a standalone lorebook; `-` reads standard input.
    pub book: PathBuf,
    /// json, dot or mermaid (default: lines for people; json with --json).
    #[arg(long, value_enum)]
    pub format: Option<GraphFormat>,
    /// The same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Write to FILE instead of standard output (atomically: FILE appears whole or not at
    /// all; `-`: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}
