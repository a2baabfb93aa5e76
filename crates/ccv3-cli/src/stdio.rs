//! `-` for standard input (issue 16 "Everyday commands"): wherever a command reads a file, `-`
//! reads standard input instead, within the same limits as a file (read through a bound, never
//! whole first), with the container sniffed from the bytes, and errors naming `<stdin>`.
//!
//! Standard input can be read once: the first input given as `-` claims it, and a second one
//! is refused with an error naming both (`ccv3 diff - -`, `prompt --card - --chat -`).
//! Outputs given as `-` go to standard output ([`crate::output::Out`]).

use crate::cmd::CliError;
use std::io::Read;
use std::path::Path;
use std::sync::Mutex;

/// How errors about standard input name it.
pub const STDIN: &str = "<stdin>";

/// How errors about standard output name it.
pub const STDOUT: &str = "<stdout>";

/// The input that read standard input first, in this run.
static CLAIMED: Mutex<Option<String>> = Mutex::new(None);

/// True when `path` is `-` (standard input or output); `./-` is a file named `-`.
pub fn is_dash(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// `<stdin>` as a path, for errors.
pub fn stdin_path() -> &'static Path {
    Path::new(STDIN)
}

/// How messages name an input: `<stdin>` for `-`, else the path.
pub fn in_name(path: &Path) -> &Path {
    if is_dash(path) {
        stdin_path()
    } else {
        path
    }
}

/// How errors name an output: `<stdout>` for `-`, else the path.
pub fn out_name(path: &Path) -> &Path {
    if is_dash(path) {
        Path::new(STDOUT)
    } else {
        path
    }
}

/// Claims standard input for `what` (an option or argument: `--chat`, `FILE`): an error when an
/// earlier input of this run already read it.
pub fn claim(what: &str) -> Result<(), CliError> {
    let mut claimed = CLAIMED.lock().unwrap_or_else(|e| e.into_inner());
    match claimed.as_deref() {
        Some(first) => Err(CliError::file(
            stdin_path(),
            format!(
                "standard input is read once, and {first} already reads it: give {what} as a file (only one input can be `-`)"
            ),
        )),
        None => {
            *claimed = Some(what.to_string());
            Ok(())
        }
    }
}

/// Claims standard input for `what` and reads it whole, at most `limit` bytes (read through a
/// bound: a longer stream is refused as soon as it passes the limit). `option` names what raises
/// the limit.
pub fn read(what: &str, limit: u64, option: &str) -> Result<Vec<u8>, CliError> {
    claim(what)?;
    read_from(std::io::stdin().lock(), limit, option)
}

/// [`read`] from any reader (the bound and the messages; tested without a process).
fn read_from(reader: impl Read, limit: u64, option: &str) -> Result<Vec<u8>, CliError> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::file(stdin_path(), e))?;
    if bytes.len() as u64 > limit {
        return Err(CliError::file(
            stdin_path(),
            format!(
                "standard input is more than the limit of {} {option}",
                crate::limits::shown_size(limit)
            ),
        ));
    }
    Ok(bytes)
}

/// Reads a whole input file of at most `max` bytes, or standard input for `-` (claimed for
/// `what`); `hint` says how to raise the limit.
pub fn read_input(path: &Path, what: &str, max: u64, hint: &str) -> Result<Vec<u8>, CliError> {
    if is_dash(path) {
        return read(what, max, hint);
    }
    crate::output::read_bounded(path, max, hint).map_err(|e| CliError::file(path, e))
}

/// Reads a card or lorebook from `path`, or from standard input for `-` (claimed for `PATH`),
/// as `ccv3 validate` does; the error is the text after the file's name.
pub fn read_document(path: &Path, opts: &ccv3::ReadOptions) -> Result<ccv3::Document, String> {
    if is_dash(path) {
        let bytes = read("PATH", opts.max_file_len, crate::cmd::RAISE_HINT)
            .map_err(|e| e.message().to_string())?;
        return ccv3::read_bytes_with(&bytes, opts).map_err(crate::cmd::with_hint);
    }
    ccv3::read_file_with(path, opts).map_err(crate::cmd::with_hint)
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
        Some(folder) if !is_dash(path) => folder
            .read_document(path, opts, scratch)
            .map_err(crate::cmd::with_hint),
        _ => read_document(path, opts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 16: standard input is read through the same bound as a file, and a refusal
    /// names `<stdin>` and the option that raises the limit.
    #[test]
    fn stdin_is_bounded_and_named() {
        let ok = read_from(&b"abc"[..], 3, "(--max-file-size raises it)").unwrap();
        assert_eq!(ok, b"abc");
        let err = read_from(&b"abcd"[..], 3, "(--max-file-size raises it)").unwrap_err();
        assert_eq!(
            err.to_string(),
            "<stdin>: standard input is more than the limit of 3 bytes (--max-file-size raises it)"
        );
        assert!(is_dash(Path::new("-")));
        assert!(!is_dash(Path::new("./-")));
    }
}
