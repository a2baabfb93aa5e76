//! Diagnostics: what the lenient reader repaired and what the validator found.
//!
//! Every diagnostic has a [`Severity`], a stable `code` (kebab-case, documented in
//! `docs/spec-coverage.md` with the `SPEC_V3.md` section it enforces), a JSON `path` into the card
//! as a V3 object (`data.character_book.entries[3].keys`) and a human message.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A spec MUST / MUST NOT is violated.
    Error,
    /// A SHOULD is violated, or the reader repaired something.
    Warning,
    /// Worth knowing, nothing wrong.
    Info,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        })
    }
}

/// One finding about a card or lorebook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// How serious it is.
    pub severity: Severity,
    /// A stable, kebab-case code such as `asset-ext-not-lowercase`.
    pub code: String,
    /// JSON path of the value concerned (`data.assets[2].ext`); empty for the whole file.
    pub path: String,
    /// A lowercase message naming the fact and the bad value.
    pub message: String,
}

impl Diagnostic {
    /// A new diagnostic.
    pub fn new(
        severity: Severity,
        code: impl Into<String>,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity,
            code: code.into(),
            path: path.into(),
            message: message.into(),
        }
    }
    /// A new error-severity diagnostic.
    pub fn error(code: impl Into<String>, path: impl Into<String>, msg: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, path, msg)
    }
    /// A new warning-severity diagnostic.
    pub fn warning(
        code: impl Into<String>,
        path: impl Into<String>,
        msg: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Warning, code, path, msg)
    }
    /// A new info-severity diagnostic.
    pub fn info(code: impl Into<String>, path: impl Into<String>, msg: impl Into<String>) -> Self {
        Self::new(Severity::Info, code, path, msg)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{} [{}]: {}", self.severity, self.code, self.message)
        } else {
            write!(
                f,
                "{} [{}] at {}: {}",
                self.severity, self.code, self.path, self.message
            )
        }
    }
}

/// A list of diagnostics with helpers.
pub type Diagnostics = Vec<Diagnostic>;

/// True when any diagnostic in `diags` has [`Severity::Error`].
pub fn has_errors(diags: &[Diagnostic]) -> bool {
    diags.iter().any(|d| d.severity == Severity::Error)
}
