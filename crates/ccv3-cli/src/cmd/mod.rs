//! The commands, each a function from parsed arguments to an exit code.

mod cbs;
mod convert;
mod convert_dir;
mod debug;
mod diff;
mod export;
mod extract;
mod index;
mod index_writer;
mod inspect;
pub mod lint;
mod lore;
pub mod lore_graph;
mod lore_list;
pub mod portability;
mod prompt;
mod search;
mod tokens;
mod validate;

use crate::args::{Cli, Command, DebugCommand, LoreCommand};
use std::fmt;
use std::path::{Path, PathBuf};

/// A failure that stops a command: printed as one line naming the file.
#[derive(Debug)]
pub struct CliError {
    file: Option<PathBuf>,
    message: String,
    broken_pipe: bool,
}

impl CliError {
    /// A failure concerning `file`.
    /// An input given as `-` is named `<stdin>`.
    pub fn file(file: &Path, err: impl fmt::Display) -> Self {
        let file = if crate::stdio::is_dash(file) {
            crate::stdio::stdin_path()
        } else {
            file
        };
        CliError {
            file: Some(file.to_path_buf()),
            message: err.to_string(),
            broken_pipe: false,
        }
    }
    /// The problem, without the file's name.
    pub fn message(&self) -> &str {
        &self.message
    }
    /// True when stdout was closed early (`ccv3 inspect x --json | head`): not a failure.
    pub fn is_broken_pipe(&self) -> bool {
        self.broken_pipe
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        let broken_pipe = e.kind() == std::io::ErrorKind::BrokenPipe;
        CliError {
            file: None,
            message: format!("writing output: {e}"),
            broken_pipe,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(p) => write!(f, "{}: {}", p.display(), self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Result of a command: the exit code.
pub type CmdResult = Result<u8, CliError>;

/// The `--max-input-mib` of this run, in bytes (set once, before any file is read).
static MAX_INPUT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// The `--rpack-map` table of this run (set once, before any file is read).
static RPACK: std::sync::OnceLock<ccv3::lorebook::risum::RpackTable> = std::sync::OnceLock::new();

/// The hint added to the error of a `.risum` module that does not decode: how to give another
/// RPack table.
const RPACK_HINT: &str = "(the ccv3 option --rpack-map FILE gives another table)";

/// Reads `--rpack-map`: RisuAI's `rpack_map.bin` (512 bytes) or a bare 256-byte table; a
/// bigger file is refused before it is read whole.
fn read_rpack_map(path: &Path) -> Result<ccv3::lorebook::risum::RpackTable, CliError> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| CliError::file(path, e))?;
    let mut bytes = Vec::with_capacity(512);
    file.take(513)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::file(path, e))?;
    ccv3::lorebook::risum::RpackTable::from_map_file(&bytes)
        .map_err(|e| CliError::file(path, format!("--rpack-map: {e}")))
}

/// The hint added to a size limit's error: how to raise it from the command line.
pub const RAISE_HINT: &str = "(the ccv3 option --max-input-mib raises it)";

/// Runs the parsed command line.
pub fn run(cli: Cli) -> CmdResult {
    if let Some(mib) = cli.max_input_mib {
        let _ = MAX_INPUT.set(mib.saturating_mul(1 << 20));
    }
    if let Some(path) = &cli.rpack_map {
        let _ = RPACK.set(read_rpack_map(path)?);
    }
    match cli.command {
        Command::Inspect { file, json, output } => inspect::run(&file, json, output.as_deref()),
        Command::Validate(args) => validate::run(&args),
        Command::Convert {
            input,
            output,
            to,
            image,
            out,
            format,
            force,
        } => match (output, out) {
            (Some(output), _) => {
                let kind = convert::out_kind_for(&output, format)?;
                convert::run(&input, &output, kind, to, image.as_deref())
            }
            (None, Some(_)) if crate::stdio::is_dash(&input) => Err(CliError::file(
                &input,
                "--out DIR is for folders: give OUT (a file, or `-` with --format) for standard input",
            )),
            (None, Some(out)) => convert_dir::run(&convert_dir::Args {
                input,
                out,
                to,
                format,
                image,
                force,
            }),
            (None, None) => Err(CliError::file(
                &input,
                "give OUT, or --out DIR for a folder",
            )),
        },
        Command::Extract { file, dir } => extract::extract(&file, &dir),
        Command::Pack {
            dir,
            output,
            format,
        } => extract::pack(&dir, &output, convert::out_kind_for(&output, format)?),
        Command::Cbs(args) => cbs::run(args),
        Command::Prompt(args) => prompt::run(args),
        Command::Lore {
            what: LoreCommand::Scan(args),
        } => lore::run(args),
        Command::Lore {
            what: LoreCommand::List { file, json, output },
        } => lore_list::run(&file, json, output.as_deref()),
        Command::Lore {
            what: LoreCommand::Graph(args),
        } => lore_graph::run(&args),
        Command::Lint(args) => lint::run(&args),
        Command::Portability(args) => portability::run(&args),
        Command::Tokens {
            file,
            tokenizer,
            json,
            output,
        } => tokens::run(&file, &tokenizer, json, output.as_deref()),
        Command::Diff { a, b, json, output } => diff::diff(&a, &b, json, output.as_deref()),
        Command::Set {
            file,
            field,
            value,
            json,
            output,
            format,
        } => {
            let kind = convert::out_kind_for(&output, format)?;
            diff::set(&file, &field, &value, json, &output, kind)
        }
        Command::Completions { shell, output } => {
            use clap::CommandFactory;
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "ccv3", &mut out);
            emit(output.as_deref(), &String::from_utf8_lossy(&out))?;
            Ok(0)
        }
        Command::Index {
            paths,
            db,
            tokenizer,
        } => {
            if crate::stdio::is_dash(&db) {
                return Err(CliError::file(
                    Path::new("--db"),
                    "the index is an SQLite file: give its path, not `-`",
                ));
            }
            // An index records files by path and time: standard input has neither.
            if let Some(dash) = paths.iter().find(|p| crate::stdio::is_dash(p)) {
                return Err(CliError::file(
                    dash,
                    "an index records files by path: give files or folders, not `-`",
                ));
            }
            index::run(&index::Args {
                paths,
                db,
                tokenizer,
            })
        }
        Command::Search {
            db,
            query,
            limit,
            json,
            output,
        } => search::search(&db, &query, limit, json, output.as_deref()),
        Command::Export { db, format, output } => export::run(&db, format, output.as_deref()),
        Command::Debug {
            what: DebugCommand::Chunks { file, output },
        } => debug::chunks(&file, output.as_deref()),
    }
}

/// How a command that reads one file at a time reads it: big ones are mapped (a tool that exits
/// can take the trade), a big lorebook's entries are converted on a second thread too (the other
/// core is idle otherwise); the size limits are the library's, or all `--max-input-mib` when
/// given.
pub fn read_options() -> ccv3::ReadOptions {
    let mut opts = ccv3::ReadOptions::default().mmap(true).entry_thread(true);
    if let Some(&max) = MAX_INPUT.get() {
        opts.max_file_len = max;
        opts.max_json_len = max;
        opts.max_json_values = opts.max_json_values.max(max / 2);
        opts.png.max_text_chunk = max;
        opts.png.max_inflated = max;
        opts.png.max_total_text = max;
        opts.charx.max_entry_size = max;
        opts.charx.max_total_size = max;
    }
    opts.rpack = RPACK.get().copied();
    opts
}

/// How the folder commands (`validate`, `index`, `convert DIR`) read each file: as
/// [`read_options`], without the second thread for big books (issue 16: their workers already
/// keep every core busy).
pub fn folder_read_options() -> ccv3::ReadOptions {
    read_options().entry_thread(false)
}

/// How `validate` and `index` read the `paths` given: as a one-file command
/// ([`read_options`]: the second thread for a big book) when they are one file, since one
/// worker then reads while the other core is idle; as a folder command
/// ([`folder_read_options`]) otherwise.
pub fn walk_read_options(paths: &[PathBuf]) -> ccv3::ReadOptions {
    match paths {
        [one] if !one.is_dir() => read_options(),
        _ => folder_read_options(),
    }
}

/// `--max-input-mib` in bytes, if it was given.
pub fn max_input_given() -> Option<u64> {
    MAX_INPUT.get().copied()
}

/// The most bytes of one input file read whole outside the library (`--image`, `debug`):
/// `--max-input-mib`, else the library's default.
pub fn max_input() -> u64 {
    MAX_INPUT.get().copied().unwrap_or(ccv3::MAX_FILE_LEN)
}

/// The failure for a library error reading `path`: a size limit also says how to raise it.
pub fn read_error(path: &Path, e: ccv3::Error) -> CliError {
    CliError::file(path, with_hint(e))
}

/// A library error's text; a size limit that `--max-input-mib` raises also says so (count and
/// ratio limits do not move with it).
pub fn with_hint(e: ccv3::Error) -> String {
    let text = e.to_string();
    let counts = ["max_assets", "max_entries", "max_chunks", "max_ratio"];
    if matches!(e, ccv3::Error::Limit(_)) && !counts.iter().any(|c| text.contains(c)) {
        format!("{text} {RAISE_HINT}")
    } else if text.contains("ReadOptions::rpack") {
        format!("{text} {RPACK_HINT}")
    } else {
        text
    }
}

/// Reads a card or lorebook file, naming the file on failure; `-` reads standard input (claimed
/// for `what`, the argument's name: [`crate::stdio::claim`]).
pub fn load(path: &Path, what: &str) -> Result<ccv3::Document, CliError> {
    if crate::stdio::is_dash(path) {
        return load_stdin(what, &read_options());
    }
    ccv3::read_file_with(path, &read_options()).map_err(|e| read_error(path, e))
}

/// Reads a card or lorebook from standard input (issue 16: `-`), at most `max_file_len` bytes
/// (read through that bound), the container sniffed from the bytes; errors name `<stdin>`.
fn load_stdin(what: &str, opts: &ccv3::ReadOptions) -> Result<ccv3::Document, CliError> {
    let bytes = crate::stdio::read(what, opts.max_file_len, RAISE_HINT)?;
    ccv3::read_bytes_with(&bytes, opts).map_err(|e| read_error(crate::stdio::stdin_path(), e))
}

/// Reads a card or lorebook and keeps a PNG card's picture for rewriting (within the library's
/// limits: CHARX streamed, other files read whole only up to `ReadOptions::max_file_len`).
pub fn load_whole(path: &Path, what: &str) -> Result<ccv3::Document, CliError> {
    if crate::stdio::is_dash(path) {
        return load_stdin(what, &read_options().keep_image(true));
    }
    ccv3::read_file_with(path, &read_options().keep_image(true)).map_err(|e| read_error(path, e))
}

/// [`load_whole`], with a CHARX's or PNG's embedded files checked and left in the file, to be
/// read again one at a time when written (issue 12); standard input is read whole.
pub fn load_deferred(
    path: &Path,
    what: &str,
) -> Result<(ccv3::Document, ccv3::DeferredFiles), CliError> {
    if crate::stdio::is_dash(path) {
        return Ok((load_whole(path, what)?, ccv3::DeferredFiles::none()));
    }
    ccv3::read_file_deferred(path, &read_options().keep_image(true))
        .map_err(|e| read_error(path, e))
}

/// Writes `text` to `-o FILE` (atomically), or to standard output without it or for `-`.
pub fn emit(output: Option<&Path>, text: &str) -> Result<(), CliError> {
    use std::io::Write;
    let mut out = crate::output::Out::open(output)?;
    out.write_all(text.as_bytes())?;
    out.finish()
}

/// Writes to stdout, mapping a closed pipe to a quiet exit.
pub fn print(text: &str) -> Result<(), CliError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 16 and DESIGN.md "Nothing hidden": a big book's second thread is asked for where
    /// one file is read, not where a folder's files are read on every core.
    #[test]
    fn the_entry_thread_only_where_one_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.json");
        std::fs::write(&file, "{}").unwrap();
        assert!(read_options().entry_thread);
        assert!(!folder_read_options().entry_thread);
        assert!(walk_read_options(std::slice::from_ref(&file)).entry_thread);
        assert!(walk_read_options(&[Path::new("-").to_path_buf()]).entry_thread);
        assert!(!walk_read_options(&[dir.path().to_path_buf()]).entry_thread);
        assert!(!walk_read_options(&[file.clone(), file]).entry_thread);
    }
}
