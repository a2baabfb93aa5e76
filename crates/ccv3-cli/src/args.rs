//! Command-line arguments (the low stage: typed and parsed, nothing built yet).

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Character Card V3 tool: read, validate, convert and run character cards and lorebooks.
#[derive(Debug, Parser)]
#[command(name = "ccv3", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Summarise a card or lorebook for people, or print it as V3 JSON with --json.
    Inspect {
        /// A card (JSON, PNG/APNG, CHARX, WebP, JPEG) or a lorebook.
        file: PathBuf,
        /// Print the card as one V3 JSON object (a lorebook as lorebook_v3).
        #[arg(long)]
        json: bool,
    },
    /// Check files or folders (recursively) against the spec.
    Validate {
        /// Files or folders.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Print one JSON array of {file, severity, code, path, message}.
        #[arg(long)]
        json: bool,
    },
    /// Convert a card or lorebook; the output container comes from OUT's extension.
    Convert {
        /// Input file.
        input: PathBuf,
        /// Output file: .json, .png or .charx.
        output: PathBuf,
        /// Output format.
        #[arg(long, value_enum)]
        to: Option<Target>,
        /// The picture for a PNG output when the input has none.
        #[arg(long)]
        image: Option<PathBuf>,
    },
    /// Write a card's card.json and asset files into a folder.
    Extract {
        /// The card.
        file: PathBuf,
        /// The folder to create.
        dir: PathBuf,
    },
    /// Build a card from a folder made by `extract` (card.json plus asset files).
    Pack {
        /// The folder.
        dir: PathBuf,
        /// Output file: .json, .png or .charx.
        output: PathBuf,
    },
    /// Expand curly-braced syntax (`{{char}}`, `{{random:a,b}}`, ...) as for a prompt.
    Cbs {
        /// The text to expand; `-` reads standard input.
        text: String,
        /// A card whose name and fields the macros use.
        #[arg(long)]
        card: Option<PathBuf>,
        /// The character's name (default: the card's nickname, else its name).
        #[arg(long = "char")]
        char_name: Option<String>,
        /// The user's name.
        #[arg(long, default_value = "User")]
        user: String,
        /// A chat (JSON array of {role,name,content}, or a SillyTavern .jsonl) for the chat macros.
        #[arg(long)]
        chat: Option<PathBuf>,
        /// Seed for `{{random}}`, `{{pick}}` and `{{roll}}` (default: derived from the chat).
        #[arg(long)]
        seed: Option<u64>,
        /// Expand as for display (comments shown) instead of as for a prompt.
        #[arg(long)]
        display: bool,
    },
    /// Dump internals.
    Debug {
        /// What to dump.
        #[command(subcommand)]
        what: DebugCommand,
    },
}

/// `ccv3 debug` subcommands.
#[derive(Debug, Subcommand)]
pub enum DebugCommand {
    /// List the chunks of a PNG file.
    Chunks {
        /// The PNG file.
        file: PathBuf,
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
