//! Input sizes and macro budgets of `cbs`, `prompt` and `lore scan` (issue 12): every input is
//! checked against its limit from the file's metadata (and again while it is read, for pipes)
//! before anything is allocated for it, and a refusal is one line naming the file, the limit and
//! the option that raises it.

use crate::error::CliError;
use crate::shown::shown_size;
use ccv3_cbs::BudgetLimits;
use ccv3_lore::chat::{Chat, ChatLimits};
use ccv3_lore::ScanState;
use std::io::Read;
use std::path::Path;

/// The largest card or lorebook file read by default (a real card is at most ~60 MB, mostly
/// images; a 158 MB book of a million entries takes ~900 MiB to scan).
pub const DEFAULT_MAX_FILE: u64 = 128 << 20;

/// The largest `--state` file read or written by default.
pub const DEFAULT_MAX_STATE: u64 = 64 << 20;

/// Input limits (flattened into the arguments of `cbs`, `prompt` and `lore scan`).
#[derive(Debug, Clone, clap::Args)]
pub struct InputLimits {
    /// The most bytes of card and lorebook files read, all of them together (and of a text
    /// read from standard input), in bytes (suffixes K, M, G: KiB, MiB, GiB). Default 128M.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_file_size: Option<u64>,
    /// The largest chat file read. Default 64M.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_chat_size: Option<u64>,
    /// The most messages a chat may have. Default 1000000.
    #[arg(long, value_name = "N")]
    pub max_messages: Option<usize>,
    /// The largest --state file read or written. Default 64M.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_state_size: Option<u64>,
    /// Bytes of card and lorebook files read so far (ten books of 100 MiB are 1,000 MiB).
    #[arg(skip)]
    pub loaded: std::cell::Cell<u64>,
}

/// The macro budget of one prompt (flattened into the arguments of `cbs` and `prompt`).
#[derive(Debug, Clone, clap::Args)]
pub struct MacroLimits {
    /// The most text all macro expansions of one prompt may produce together (card fields,
    /// lorebook entries, ...). Default 32M.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_macro_output: Option<u64>,
    /// The most steps all macro expansions of one prompt may take together. Default 20000000.
    #[arg(long, value_name = "N")]
    pub max_macro_steps: Option<u64>,
    /// The most bytes the macro variables may hold (names and values, which the state carries).
    /// Default 16M.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_variable_bytes: Option<u64>,
}

impl MacroLimits {
    /// The library's budget with the options given; work follows output (eight times it, at
    /// least the default).
    pub fn budget(&self) -> BudgetLimits {
        let d = BudgetLimits::default();
        let size = |v: Option<u64>, default: usize| {
            v.map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX))
        };
        let max_output = size(self.max_macro_output, d.max_output);
        BudgetLimits {
            max_output,
            max_work: d.max_work.max(max_output.saturating_mul(8)),
            max_steps: self.max_macro_steps.unwrap_or(d.max_steps),
            max_variable_bytes: size(self.max_variable_bytes, d.max_variable_bytes),
        }
    }
}

/// The option that raises the bound a macro warning names, if it is one of the budget's.
pub fn macro_hint(w: &ccv3_cbs::Warning) -> Option<&'static str> {
    match w {
        ccv3_cbs::Warning::PromptBudget { what: "steps", .. } => Some("--max-macro-steps"),
        ccv3_cbs::Warning::PromptBudget { .. } => Some("--max-macro-output"),
        ccv3_cbs::Warning::Variable { .. } => Some("--max-variable-bytes"),
        _ => None,
    }
}

/// `true` for the warnings of a bound that cut the text (not of the card's own mistakes).
pub fn is_bound(w: &ccv3_cbs::Warning) -> bool {
    !matches!(
        w,
        ccv3_cbs::Warning::Argument { .. } | ccv3_cbs::Warning::UnclosedBlock { .. }
    )
}

/// A macro warning as the CLI prints it: the text and the option that raises the bound.
pub fn macro_warning(w: &ccv3_cbs::Warning) -> (String, String) {
    let text = match macro_hint(w) {
        Some(option) => format!("{w} ({option} raises it)"),
        None => w.to_string(),
    };
    (w.kind().to_string(), text)
}

impl InputLimits {
    /// `--max-file-size`, else the global `--max-input-mib` when it is higher than the default.
    fn file(&self) -> u64 {
        self.max_file_size
            .unwrap_or_else(|| DEFAULT_MAX_FILE.max(crate::load::max_input_given().unwrap_or(0)))
    }

    fn state(&self) -> u64 {
        self.max_state_size.unwrap_or(DEFAULT_MAX_STATE)
    }

    fn chat(&self) -> ChatLimits {
        let d = ChatLimits::default();
        ChatLimits {
            max_bytes: self
                .max_chat_size
                .map_or(d.max_bytes, |n| usize::try_from(n).unwrap_or(usize::MAX)),
            max_messages: self.max_messages.unwrap_or(d.max_messages),
        }
    }

    /// Reads a card or lorebook within `--max-file-size` (what is left of it after the files
    /// read before); `-` reads standard input, claimed for `what` (`--card`, `--book`).
    pub fn load(&self, path: &Path, what: &str) -> Result<ccv3::Document, CliError> {
        let before = self.loaded.get();
        let limit = self.file().saturating_sub(before);
        if before > 0 && !crate::stdio::is_dash(path) {
            // Several files: the message gives the total against the whole limit.
            let meta = std::fs::metadata(path).map_err(|e| CliError::file(path, e))?;
            if meta.is_file() && meta.len() > limit {
                return Err(CliError::file(
                    path,
                    format!(
                        "the file is {} bytes, {} with the cards and books before it, over the limit of {} (--max-file-size raises it)",
                        meta.len(),
                        before.saturating_add(meta.len()),
                        shown_size(self.file())
                    ),
                ));
            }
        }
        let (doc, size) = match check_size(path, limit, "file", "--max-file-size")? {
            // A regular file within the limit: read as usual (mapped, PNG image data skipped).
            Some(size) => (crate::load::load(path, what)?, size),
            None => {
                let bytes = read_capped(path, what, limit, "file", "--max-file-size")?;
                let doc = ccv3::read_bytes_with(&bytes, &crate::load::read_options())
                    .map_err(|e| crate::load::read_error(path, e))?;
                (doc, bytes.len() as u64)
            }
        };
        self.loaded.set(before.saturating_add(size));
        Ok(doc)
    }

    /// Reads a text (`ccv3 cbs -`: standard input, claimed for `TEXT`) within `--max-file-size`.
    pub fn read_text(&self, path: &Path) -> Result<String, CliError> {
        let bytes = read_capped(path, "TEXT", self.file(), "text", "--max-file-size")?;
        String::from_utf8(bytes).map_err(|e| CliError::file(path, e))
    }

    /// Reads a chat within `--max-chat-size` and `--max-messages` with ccv3's one chat reader
    /// (`-`: standard input).
    pub fn load_chat(&self, path: &Path) -> Result<Chat, CliError> {
        let limits = self.chat();
        let max = limits.max_bytes as u64;
        let bytes = read_capped(path, "--chat", max, "chat", "--max-chat-size")?;
        let text = String::from_utf8(bytes).map_err(|e| CliError::file(path, e))?;
        let (chat, warnings) =
            ccv3_lore::chat::parse_chat_with_warnings(&text, &limits).map_err(|e| match e {
                ccv3_lore::LoreError::Limit(m) if m.contains("messages") => {
                    CliError::file(path, format!("{m} (--max-messages raises it)"))
                }
                e => CliError::file(path, e),
            })?;
        // Repairs (lone surrogates become U+FFFD) are said, naming the file.
        let named: Vec<ccv3::Diagnostic> = warnings
            .into_iter()
            .map(|mut d| {
                d.message = format!("{}: {}", path.display(), d.message);
                d
            })
            .collect();
        crate::warnings::print_diagnostics(&named);
        Ok(chat)
    }

    /// Reads `--state` if the file exists (a new chat's state otherwise), within
    /// `--max-state-size`; `-` reads standard input (empty: a new chat's state).
    pub fn load_state(&self, path: Option<&Path>) -> Result<ScanState, CliError> {
        match path {
            Some(p) if crate::stdio::is_dash(p) => {
                let bytes = read_capped(p, "--state", self.state(), "state", "--max-state-size")?;
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    return Ok(ScanState::default());
                }
                let text = String::from_utf8(bytes).map_err(|e| CliError::file(p, e))?;
                ScanState::from_json(&text).map_err(|e| CliError::file(p, e))
            }
            Some(p) if p.exists() => {
                let bytes = read_capped(p, "--state", self.state(), "state", "--max-state-size")?;
                let text = String::from_utf8(bytes).map_err(|e| CliError::file(p, e))?;
                ScanState::from_json(&text).map_err(|e| CliError::file(p, e))
            }
            _ => Ok(ScanState::default()),
        }
    }

    /// Reads a JSON file given with `flag` (`--st-timed`, `--st-activated`) within
    /// `--max-state-size`.
    pub fn load_state_json(&self, path: &Path, flag: &str) -> Result<serde_json::Value, CliError> {
        let bytes = read_capped(path, flag, self.state(), "state", "--max-state-size")?;
        ccv3::json::from_slice_repaired(&bytes)
            .map(|(v, _)| v)
            .map_err(|e| CliError::file(path, e.to_string()))
    }

    /// Writes the next state to `path` (`-`: standard output, after a newline-ended JSON
    /// document), refusing one over `--max-state-size`.
    pub fn write_state(&self, path: &Path, state: &ScanState) -> Result<(), CliError> {
        let json = state.to_json();
        let limit = self.state();
        let dash = crate::stdio::is_dash(path);
        if json.len() as u64 > limit {
            return Err(CliError::file(
                if dash {
                    Path::new(crate::stdio::STDOUT)
                } else {
                    path
                },
                format!(
                    "the next state is {} bytes, more than the limit of {} (--max-state-size raises it); not written",
                    json.len(),
                    shown_size(limit)
                ),
            ));
        }
        if dash {
            return crate::output::emit(None, &format!("{json}\n"));
        }
        crate::output::write_atomic(path, json.as_bytes()).map_err(|e| CliError::file(path, e))
    }

    /// Refuses `--state -` when the command's own output also goes to standard output: the next
    /// state is written there, so the prompt or scan needs `-o FILE`.
    pub fn check_state_output(state: Option<&Path>, output: Option<&Path>) -> Result<(), CliError> {
        let to_stdout = output.is_none_or(crate::stdio::is_dash);
        if state.is_some_and(crate::stdio::is_dash) && to_stdout {
            return Err(CliError::file(
                Path::new("--state"),
                "`--state -` reads the state from standard input and writes the next one to standard output: give -o FILE for the command's own output",
            ));
        }
        Ok(())
    }
}

/// `N`, `NK`, `NM` or `NG` (KiB, MiB, GiB; `KB`, `MiB`, ... too) as bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let (num, unit) = t.split_at(digits);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a size like 64M, 512K or 1000000"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(format!("{s:?}: unknown unit (use K, M or G)")),
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))
}

fn too_big(path: &Path, what: &str, size: Option<u64>, limit: u64, option: &str) -> CliError {
    let size = size.map_or_else(|| "more".to_string(), |n| format!("{n} bytes"));
    CliError::file(
        path,
        format!(
            "the {what} is {size}, over the limit of {} ({option} raises it)",
            shown_size(limit)
        ),
    )
}

/// Checks a file's size from its metadata: `Some(size)` for a regular file within `limit`,
/// `None` for something else (a pipe, a device, `-`: read it with [`read_capped`]).
fn check_size(path: &Path, limit: u64, what: &str, option: &str) -> Result<Option<u64>, CliError> {
    if crate::stdio::is_dash(path) {
        return Ok(None);
    }
    let meta = std::fs::metadata(path).map_err(|e| CliError::file(path, e))?;
    if meta.is_file() && meta.len() > limit {
        return Err(too_big(path, what, Some(meta.len()), limit, option));
    }
    Ok(meta.is_file().then_some(meta.len()))
}

/// Reads a whole file of at most `limit` bytes: checked from the metadata first, then while
/// reading (a file that grows, a pipe); `-` reads standard input, claimed for `arg`.
fn read_capped(
    path: &Path,
    arg: &str,
    limit: u64,
    what: &str,
    option: &str,
) -> Result<Vec<u8>, CliError> {
    if crate::stdio::is_dash(path) {
        crate::stdio::claim(arg)?;
        return read_all(std::io::stdin().lock(), path, limit, what, option);
    }
    check_size(path, limit, what, option)?;
    let file = std::fs::File::open(path).map_err(|e| CliError::file(path, e))?;
    read_all(file, path, limit, what, option)
}

fn read_all(
    reader: impl Read,
    path: &Path,
    limit: u64,
    what: &str,
    option: &str,
) -> Result<Vec<u8>, CliError> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::file(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(too_big(path, what, None, limit, option));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_with_binary_units() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("512k"), Ok(512 << 10));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert!(parse_size("M").is_err());
        assert!(parse_size("12X").is_err());
        assert!(parse_size("99999999999999G").is_err());
        assert_eq!(shown_size(64 << 20), "67108864 bytes (64 MiB)");
        assert_eq!(shown_size(1000), "1000 bytes");
    }

    /// The CLI adds no limits of its own: without options it uses the libraries' defaults.
    #[test]
    fn defaults_are_the_libraries() {
        let none = MacroLimits {
            max_macro_output: None,
            max_macro_steps: None,
            max_variable_bytes: None,
        };
        assert_eq!(none.budget(), BudgetLimits::default());
        let inputs = InputLimits {
            max_file_size: None,
            max_chat_size: None,
            max_messages: None,
            max_state_size: None,
            loaded: Default::default(),
        };
        assert_eq!(inputs.chat(), ChatLimits::default());
    }
}
