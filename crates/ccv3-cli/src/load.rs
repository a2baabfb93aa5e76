//! How the commands read cards and lorebooks: the read options of this run (`--max-input-mib`,
//! `--rpack-map`, set once by [`configure`] before any file is read), and loads that name the
//! file (and `-`, standard input) on failure, with the option that raises a size limit.

use crate::error::CliError;
use std::path::{Path, PathBuf};

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

/// Sets this run's `--max-input-mib` and `--rpack-map` (read here), before any file is read.
pub fn configure(max_input_mib: Option<u64>, rpack_map: Option<&Path>) -> Result<(), CliError> {
    if let Some(mib) = max_input_mib {
        let _ = MAX_INPUT.set(mib.saturating_mul(1 << 20));
    }
    if let Some(path) = rpack_map {
        let _ = RPACK.set(read_rpack_map(path)?);
    }
    Ok(())
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
    if crate::dash::is_dash(path) {
        return load_stdin(what, &read_options());
    }
    ccv3::read_file_with(path, &read_options()).map_err(|e| read_error(path, e))
}

/// Reads a card's summary ([`ccv3::read_summary_file`]), naming the file on failure; `-`
/// reads standard input (claimed for `what`). With `count`, the permanent tokens are counted.
pub fn load_summary(
    path: &Path,
    what: &str,
    count: Option<&dyn Fn(&str) -> usize>,
) -> Result<ccv3::CardSummary, CliError> {
    let opts = read_options();
    if crate::dash::is_dash(path) {
        let bytes = crate::stdio::read(what, opts.max_file_len, RAISE_HINT)?;
        return ccv3::read_summary_bytes(&bytes, &opts, count)
            .map_err(|e| read_error(crate::dash::stdin_path(), e));
    }
    ccv3::read_summary_file(path, &opts, count).map_err(|e| read_error(path, e))
}

/// Reads a card or lorebook from standard input (issue 16: `-`), at most `max_file_len` bytes
/// (read through that bound), the container sniffed from the bytes; errors name `<stdin>`.
fn load_stdin(what: &str, opts: &ccv3::ReadOptions) -> Result<ccv3::Document, CliError> {
    let bytes = crate::stdio::read(what, opts.max_file_len, RAISE_HINT)?;
    ccv3::read_bytes_with(&bytes, opts).map_err(|e| read_error(crate::dash::stdin_path(), e))
}

/// Reads a card or lorebook and keeps a PNG card's picture for rewriting (within the library's
/// limits: CHARX streamed, other files read whole only up to `ReadOptions::max_file_len`).
pub fn load_whole(path: &Path, what: &str) -> Result<ccv3::Document, CliError> {
    if crate::dash::is_dash(path) {
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
    if crate::dash::is_dash(path) {
        return Ok((load_whole(path, what)?, ccv3::DeferredFiles::none()));
    }
    ccv3::read_file_deferred(path, &read_options().keep_image(true))
        .map_err(|e| read_error(path, e))
}

/// Reads a card or lorebook from `path`, or from standard input for `-` (claimed for `PATH`),
/// as `ccv3 validate` does; the error is the text after the file's name.
pub fn read_document(path: &Path, opts: &ccv3::ReadOptions) -> Result<ccv3::Document, String> {
    if crate::dash::is_dash(path) {
        let bytes = crate::stdio::read("PATH", opts.max_file_len, RAISE_HINT)
            .map_err(|e| e.message().to_string())?;
        return ccv3::read_bytes_with(&bytes, opts).map_err(with_hint);
    }
    ccv3::read_file_with(path, opts).map_err(with_hint)
}

/// [`read_document`] of a file a folder walk found, through the worker's `scratch`: opened
/// relative to its folder when the walk has the folder's handle ([`crate::walk::Folder`]), else
/// by its path.
pub fn read_walked_document(
    path: &Path,
    folder: Option<&crate::walk::Folder>,
    opts: &ccv3::ReadOptions,
    scratch: &mut ccv3::ReadScratch,
) -> Result<ccv3::Document, String> {
    match folder {
        Some(folder) if !crate::dash::is_dash(path) => {
            folder.read_document(path, opts, scratch).map_err(with_hint)
        }
        _ => read_document(path, opts),
    }
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
