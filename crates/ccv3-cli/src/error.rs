//! The one error of the commands ([`CliError`]: printed as one line naming the file) and their
//! result ([`CmdResult`]: the exit code).

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
        let file = if crate::dash::is_dash(file) {
            crate::dash::stdin_path()
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
