//! `ccv3 lint FILE...` (issue 27): static analysis of cards and lorebooks beyond validity.
//!
//! The findings are [`ccv3_analyze::lint`]'s; this command reads the files, filters and prints.
//! Output: by default, per file `FILE: N findings` and one line per finding
//! (`  severity code #entry at path: message`), then a totals line; `--json` one array of
//! `{file, severity, code, path, entry, message}` (`budget` on `lore-budget-plan`); `--jsonl`
//! one object per line. `--severity` and `--code` keep the findings asked for; exit status as
//! `validate`: 0 no error kept, 1 some error kept, 2 a file could not be read.

use crate::args::{LintArgs, MinSeverity};
use crate::error::{CliError, CmdResult};
use crate::load::load;
use crate::shown::shown;
use ccv3::Severity;
use ccv3_analyze::{Finding, LintOptions};
use std::io::Write;
use std::path::Path;

/// Lints every file; prints as `--json`/`--jsonl`/lines ask.
pub fn run(args: &LintArgs) -> CmdResult {
    let kind: ccv3_tokens::TokenizerKind = args
        .tokenizer
        .parse()
        .map_err(|e| CliError::file(Path::new("--tokenizer"), e))?;
    // Building a BPE tokenizer takes a good part of a cold run: on the other core while the
    // first file is read (as `lore scan` does).
    let tokenizer_thread = std::thread::spawn(move || ccv3_tokens::load(&kind));
    let opts = LintOptions {
        app: args.app,
        budget: args.budget,
        max_context: args.max_context,
        budget_cap: args.budget_cap,
    };
    let worst = match args.severity {
        Some(MinSeverity::Error) => Severity::Error,
        Some(MinSeverity::Warning) => Severity::Warning,
        Some(MinSeverity::Info) | None => Severity::Info,
    };
    let keeps = |f: &Finding| {
        f.severity <= worst && (args.codes.is_empty() || args.codes.contains(&f.code))
    };
    let mut tokenizer_thread = Some(tokenizer_thread);
    let mut tokenizer: Option<std::sync::Arc<dyn ccv3_tokens::Tokenizer>> = None;
    let mut out = crate::output::Out::open(args.output.as_deref())?;
    let (mut errors, mut unreadable, mut total) = (0usize, 0usize, 0usize);
    let mut first = true;
    if args.json {
        out.write_all(b"[")?;
    }
    for file in &args.files {
        let doc = load(file, "FILE");
        let tok = match tokenizer.clone() {
            Some(t) => t,
            None => {
                let failed =
                    || CliError::file(Path::new("--tokenizer"), "the tokenizer failed to load");
                let t = tokenizer_thread
                    .take()
                    .ok_or_else(failed)?
                    .join()
                    .map_err(|_| failed())?
                    .map_err(|e| CliError::file(Path::new("--tokenizer"), e))?;
                tokenizer = Some(t.clone());
                t
            }
        };
        let name = crate::stdio::in_name(file).display().to_string();
        let findings: Vec<Finding> = match doc {
            Ok(doc) => ccv3_analyze::lint_document(&doc, &opts, &*tok)
                .into_iter()
                .filter(|f| keeps(f))
                .map(|mut f| {
                    f.file = Some(name.clone());
                    f
                })
                .collect(),
            Err(e) => {
                unreadable += 1;
                eprintln!("ccv3: {e}");
                let f = Finding {
                    file: Some(name.clone()),
                    severity: Severity::Error,
                    code: "unreadable".into(),
                    path: String::new(),
                    entry: None,
                    message: e.message().to_string(),
                    budget: None,
                };
                if args.json || args.jsonl {
                    vec![f]
                } else {
                    continue;
                }
            }
        };
        errors += findings
            .iter()
            .filter(|f| f.severity == Severity::Error && f.code != "unreadable")
            .count();
        total += findings.len();
        if args.json || args.jsonl {
            for f in &findings {
                if args.json && !first {
                    out.write_all(b",")?;
                }
                first = false;
                serde_json::to_writer(&mut out, f).map_err(std::io::Error::from)?;
                if args.jsonl {
                    out.write_all(b"\n")?;
                }
            }
        } else {
            out.write_all(text(&name, &findings).as_bytes())?;
        }
    }
    if args.json {
        out.write_all(b"]\n")?;
    } else if !args.jsonl {
        let files = args.files.len();
        out.write_all(
            format!(
                "{}: {}, {} with errors, {} unreadable\n",
                super::validate::plural(files, "file", "files"),
                super::validate::plural(total, "finding", "findings"),
                errors,
                unreadable
            )
            .as_bytes(),
        )?;
    }
    out.finish()?;
    Ok(if unreadable > 0 {
        2
    } else if errors > 0 {
        1
    } else {
        0
    })
}

/// One file's findings for people.
fn text(name: &str, findings: &[Finding]) -> String {
    let mut s = format!(
        "{}: {}\n",
        shown(name),
        super::validate::plural(findings.len(), "finding", "findings")
    );
    for f in findings {
        s.push_str(&finding_line(
            &f.severity.to_string(),
            &f.code,
            f.entry,
            &f.path,
            &f.message,
        ));
    }
    s
}

/// One finding's line for people (`lint` and `portability` print them alike): severity, code,
/// the entry's index, the JSON path and the message.
pub(super) fn finding_line(
    severity: &str,
    code: &str,
    entry: Option<usize>,
    path: &str,
    message: &str,
) -> String {
    let entry = entry.map(|i| format!(" #{i}")).unwrap_or_default();
    let at = if path.is_empty() {
        String::new()
    } else {
        format!(" at {}", shown(path))
    };
    format!("  {severity:<7} {code}{entry}{at}: {}\n", shown(message))
}
