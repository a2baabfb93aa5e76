//! The engine's one error type.

/// Errors of the lorebook engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoreError {
    /// A chat could not be read.
    #[error("chat{}: {problem}", place(.at))]
    Chat {
        /// Where: `[3]`, `messages[2]`, `line 4`.
        at: String,
        /// What is wrong.
        problem: String,
    },
    /// A state file could not be read.
    #[error("state: {0}")]
    State(String),
    /// A book could not be read.
    #[error("book {name}: {problem}")]
    Book {
        /// The book's display name.
        name: String,
        /// What is wrong.
        problem: String,
    },
    /// An input is larger than allowed.
    #[error("limit: {0}")]
    Limit(String),
}

/// ` at` for a non-empty place, else nothing.
fn place(at: &str) -> String {
    if at.is_empty() {
        String::new()
    } else {
        format!(" {at}")
    }
}

impl LoreError {
    pub(crate) fn chat(at: &str, problem: impl Into<String>) -> Self {
        LoreError::Chat {
            at: at.to_string(),
            problem: problem.into(),
        }
    }
}
