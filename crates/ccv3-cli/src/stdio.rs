//! `-` for standard input (issue 16 "Everyday commands"): wherever a command reads a file, `-`
//! reads standard input instead, within the same limits as a file (read through a bound, never
//! whole first), with the container sniffed from the bytes, and errors naming `<stdin>`.
//!
//! Standard input can be read once: the first input given as `-` claims it, and a second one
//! is refused with an error naming both (`ccv3 diff - -`, `prompt --card - --chat -`).
//! Outputs given as `-` go to standard output ([`crate::output::Out`]). How `-` is recognised
//! and named is [`crate::dash`]'s (re-exported here); reading a card or lorebook from `-` is
//! [`crate::load`]'s.

pub use crate::dash::{in_name, is_dash, out_name, stdin_path, STDOUT};
use crate::error::CliError;
use std::io::Read;
use std::path::Path;
use std::sync::Mutex;

/// The input that read standard input first, in this run.
static CLAIMED: Mutex<Option<String>> = Mutex::new(None);

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
                crate::shown::shown_size(limit)
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
    }
}
