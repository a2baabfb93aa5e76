//! `ccv3 validate PATH...`: files or folders, streamed (issue 16).
//!
//! Files are found by [`crate::walk`] and read on every core by [`crate::pipeline`]; each
//! file's result is printed as soon as it and every file before it are done, so memory does not
//! grow with the number of files. A path that cannot be read is reported (exit 2) and the others
//! are still validated.
//!
//! # Output
//! - default: one line per file (`FILE: ok`, `FILE: 2 errors, 1 warning (code, code)`,
//!   `FILE: unreadable: why`), then a totals line;
//! - one file, or up to [`DETAILED`] files and no folder: every finding, as `--verbose` prints
//!   them (`FILE: ok` for a file without any), then the totals line (issue 31);
//! - `--verbose`: every finding (`FILE: severity code at path: message`), repeated codes of one
//!   file counted after 20, then the totals line;
//! - `--json`: one JSON array of `{"file","severity","code","path","message"}`, written as files
//!   are read (an unreadable file is one item with code `unreadable`);
//! - `--jsonl`: the same objects, one per line;
//! - `--summary`: only the totals: findings per code and severity and the worst files (with
//!   `--json`, one object: `{"files","unreadable","with_errors","errors","warnings","infos",
//!   "codes":[{"code","severity","count","files"}],"worst":[{"file","errors","warnings","infos"}]}`).
//!
//! `--severity` and `--code` keep only the findings asked for, in every output, the counts and
//! the exit code (0 none of them is an error, 1 some are, 2 a file could not be read); with
//! them, files without such findings are not listed. A progress line is drawn on stderr when it
//! is a terminal. Card text and file names are shown escaped ([`crate::shown`]).

use crate::args::{MinSeverity, ValidateArgs};
use crate::error::{CliError, CmdResult};
use crate::shown::shown;
use crate::walk::Item;
use ccv3::{Diagnostic, Severity};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

/// Up to this many files (and no folder) are validated with every finding shown.
const DETAILED: usize = 10;

/// How many of the worst files `--summary` lists.
const WORST: usize = 10;

/// What validating one file found (only the findings asked for).
struct Report {
    file: PathBuf,
    /// `Err` when the file could not be read at all.
    outcome: Result<Vec<Diagnostic>, String>,
}

/// One finding as `--json` / `--jsonl` print it.
#[derive(Serialize)]
struct Finding<'a> {
    file: &'a str,
    severity: Severity,
    code: &'a str,
    path: &'a str,
    message: &'a str,
}

/// Counts of one file or of the whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Counts {
    errors: usize,
    warnings: usize,
    infos: usize,
}

impl Counts {
    fn of(diags: &[Diagnostic]) -> Self {
        let mut c = Counts::default();
        for d in diags {
            match d.severity {
                Severity::Error => c.errors += 1,
                Severity::Warning => c.warnings += 1,
                Severity::Info => c.infos += 1,
            }
        }
        c
    }

    fn add(&mut self, o: Counts) {
        self.errors += o.errors;
        self.warnings += o.warnings;
        self.infos += o.infos;
    }

    fn any(&self) -> bool {
        self.errors + self.warnings + self.infos > 0
    }

    /// `2 errors, 1 warning` (only the kinds present).
    fn text(&self) -> String {
        let mut parts = Vec::new();
        if self.errors > 0 {
            parts.push(plural(self.errors, "error", "errors"));
        }
        if self.warnings > 0 {
            parts.push(plural(self.warnings, "warning", "warnings"));
        }
        if self.infos > 0 {
            parts.push(plural(self.infos, "note", "notes"));
        }
        parts.join(", ")
    }
}

/// `1 file`, `2 files`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The run's totals (memory bounded by the number of codes, not of files).
#[derive(Default)]
struct Totals {
    files: usize,
    unreadable: usize,
    with_errors: usize,
    counts: Counts,
    /// Per (severity, code): findings and files.
    codes: BTreeMap<(Severity, String), (usize, usize)>,
    /// The worst files, worst first: (counts, file).
    worst: Vec<(Counts, String)>,
}

impl Totals {
    fn add(&mut self, r: &Report) {
        self.files += 1;
        let diags = match &r.outcome {
            Ok(d) => d,
            Err(_) => {
                self.unreadable += 1;
                return;
            }
        };
        let c = Counts::of(diags);
        self.counts.add(c);
        self.with_errors += usize::from(c.errors > 0);
        let mut seen: Vec<(Severity, &str)> = Vec::new();
        for d in diags {
            let e = self
                .codes
                .entry((d.severity, d.code.clone()))
                .or_insert((0, 0));
            e.0 += 1;
            if !seen.contains(&(d.severity, d.code.as_str())) {
                seen.push((d.severity, d.code.as_str()));
                e.1 += 1;
            }
        }
        if c.any() {
            let at = self.worst.partition_point(|(w, _)| *w >= c);
            if at < WORST {
                self.worst.insert(at, (c, r.file.display().to_string()));
                self.worst.truncate(WORST);
            }
        }
    }

    /// `3 files: 1 with errors, 0 unreadable; 2 errors, 1 warning`.
    fn line(&self) -> String {
        format!(
            "{}: {} with errors, {} unreadable; {}, {}\n",
            plural(self.files, "file", "files"),
            self.with_errors,
            self.unreadable,
            plural(self.counts.errors, "error", "errors"),
            plural(self.counts.warnings, "warning", "warnings"),
        )
    }

    fn summary_text(&self) -> String {
        let mut s = String::new();
        if !self.codes.is_empty() {
            s.push_str("findings by code:\n");
            let width = self.codes.keys().map(|(_, c)| c.len()).fold(24, usize::max);
            for ((sev, code), (n, files)) in &self.codes {
                s.push_str(&format!(
                    "  {:<8} {:<width$} {n} in {}\n",
                    sev.to_string(),
                    shown(code),
                    plural(*files, "file", "files"),
                ));
            }
        }
        if !self.worst.is_empty() {
            s.push_str("worst files:\n");
            for (c, f) in &self.worst {
                s.push_str(&format!("  {}: {}\n", shown(f), c.text()));
            }
        }
        s.push_str(&self.line());
        s
    }

    fn summary_json(&self) -> serde_json::Value {
        use serde_json::json;
        let codes: Vec<_> = self
            .codes
            .iter()
            .map(|((sev, code), (n, files))| {
                json!({"code": code, "severity": sev, "count": n, "files": files})
            })
            .collect();
        let worst: Vec<_> = self
            .worst
            .iter()
            .map(|(c, f)| {
                json!({"file": f, "errors": c.errors, "warnings": c.warnings, "infos": c.infos})
            })
            .collect();
        json!({
            "files": self.files,
            "unreadable": self.unreadable,
            "with_errors": self.with_errors,
            "errors": self.counts.errors,
            "warnings": self.counts.warnings,
            "infos": self.counts.infos,
            "codes": codes,
            "worst": worst,
        })
    }
}

/// Which findings are kept.
struct Filter {
    worst: Severity,
    codes: Vec<String>,
}

impl Filter {
    fn new(args: &ValidateArgs) -> Self {
        Filter {
            worst: match args.severity {
                Some(MinSeverity::Error) => Severity::Error,
                Some(MinSeverity::Warning) => Severity::Warning,
                Some(MinSeverity::Info) | None => Severity::Info,
            },
            codes: args.codes.clone(),
        }
    }

    fn active(&self) -> bool {
        self.worst != Severity::Info || !self.codes.is_empty()
    }

    fn keeps(&self, d: &Diagnostic) -> bool {
        d.severity <= self.worst && (self.codes.is_empty() || self.codes.contains(&d.code))
    }
}

/// The output mode.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Lines,
    Verbose,
    /// Every finding, and `FILE: ok` for a clean file: the default for a few files.
    Detailed,
    Json,
    Jsonl,
    Summary,
    SummaryJson,
}

/// Validates every file and prints the findings as they come; exit 0 clean, 1 errors found, 2
/// a file could not be read.
pub fn run(args: &ValidateArgs) -> CmdResult {
    let mode = match (args.summary, args.json, args.jsonl, args.verbose) {
        (true, true, ..) => Mode::SummaryJson,
        (true, ..) => Mode::Summary,
        (_, true, ..) => Mode::Json,
        (_, _, true, _) => Mode::Jsonl,
        (.., true) => Mode::Verbose,
        _ if args.paths.len() <= DETAILED && !args.paths.iter().any(|p| p.is_dir()) => {
            Mode::Detailed
        }
        _ => Mode::Lines,
    };
    let filter = Filter::new(args);
    let bar = crate::pipeline::spinner("{spinner} {pos} files read {msg} {elapsed}");
    let mut out = crate::output::Out::open(args.output.as_deref())?;
    let live = out.is_terminal();
    let mut totals = Totals::default();
    let opts = crate::load::walk_read_options(&args.paths);
    let mut first = true;
    if mode == Mode::Json {
        out.write_all(b"[")?;
    }
    let check = |scratch: &mut ccv3::ReadScratch,
                 file: PathBuf,
                 folder: Option<&crate::walk::Folder>| {
        let outcome = crate::load::read_walked_document(&file, folder, &opts, scratch).map(|doc| {
            let mut d = ccv3::check_document(&doc);
            d.retain(|d| filter.keeps(d));
            d
        });
        let file = crate::stdio::in_name(&file).to_path_buf();
        Report { file, outcome }
    };
    let work = |scratch: &mut ccv3::ReadScratch, item: Item| match item {
        Item::File(file) => check(scratch, file, None),
        Item::InFolder(file, folder) => check(scratch, file, Some(&folder)),
        Item::Error(file, e) => Report {
            file,
            outcome: Err(e.to_string()),
        },
    };
    let sink = |r: Report| -> Result<(), CliError> {
        totals.add(&r);
        bar.inc(1);
        if totals.counts.errors > 0 || totals.unreadable > 0 {
            bar.set_message(format!(
                "({}, {} unreadable)",
                plural(totals.counts.errors, "error", "errors"),
                totals.unreadable
            ));
        }
        let text = render(&r, mode, &filter, &mut first);
        let err_line = r.outcome.as_ref().err().map(|msg| {
            format!(
                "ccv3: {}: {}",
                shown(&r.file.display().to_string()),
                shown(msg)
            )
        });
        if text.is_empty() && err_line.is_none() {
            return Ok(());
        }
        bar.suspend(|| -> Result<(), CliError> {
            out.write_all(text.as_bytes())?;
            if live || err_line.is_some() {
                out.flush()?;
            }
            if let Some(line) = &err_line {
                eprintln!("{line}");
            }
            Ok(())
        })
    };
    crate::pipeline::each_file(&args.paths, work, sink)?;
    bar.finish_and_clear();
    match mode {
        Mode::Json => out.write_all(b"]\n")?,
        Mode::Lines | Mode::Verbose | Mode::Detailed => out.write_all(totals.line().as_bytes())?,
        Mode::Summary => out.write_all(totals.summary_text().as_bytes())?,
        Mode::SummaryJson => {
            serde_json::to_writer(&mut out, &totals.summary_json())
                .map_err(std::io::Error::from)?;
            out.write_all(b"\n")?;
        }
        Mode::Jsonl => {}
    }
    out.finish()?;
    Ok(if totals.unreadable > 0 {
        2
    } else if totals.counts.errors > 0 {
        1
    } else {
        0
    })
}

/// What one file's report prints in `mode` (`first`: no `--json` item printed yet).
fn render(r: &Report, mode: Mode, filter: &Filter, first: &mut bool) -> String {
    let file = r.file.display().to_string();
    let mut s = String::new();
    match mode {
        Mode::Summary | Mode::SummaryJson => {}
        Mode::Json | Mode::Jsonl => {
            let mut item = |f: Finding<'_>| {
                if mode == Mode::Json && !std::mem::take(first) {
                    s.push(',');
                }
                // Serialising plain strings cannot fail.
                s.push_str(&serde_json::to_string(&f).unwrap_or_default());
                if mode == Mode::Jsonl {
                    s.push('\n');
                }
            };
            match &r.outcome {
                Ok(diags) => {
                    for d in diags {
                        item(Finding {
                            file: &file,
                            severity: d.severity,
                            code: &d.code,
                            path: &d.path,
                            message: &d.message,
                        });
                    }
                }
                Err(msg) => item(Finding {
                    file: &file,
                    severity: Severity::Error,
                    code: "unreadable",
                    path: "",
                    message: msg,
                }),
            }
        }
        Mode::Detailed if r.outcome.as_ref().is_ok_and(Vec::is_empty) => {
            if !filter.active() {
                s.push_str(&format!("{}: ok\n", shown(&file)));
            }
        }
        Mode::Verbose | Mode::Detailed => match &r.outcome {
            Ok(diags) => {
                // Repeated findings of one code are counted, not printed a million times
                // (issue 12); `--json` still lists every one.
                let lines =
                    crate::warnings::capped(diags.iter().map(|d| (d.code.clone(), d.to_string())));
                for line in lines {
                    s.push_str(&format!("{}: {line}\n", shown(&file)));
                }
            }
            Err(msg) => s.push_str(&format!("{}: unreadable: {}\n", shown(&file), shown(msg))),
        },
        Mode::Lines => match &r.outcome {
            Ok(diags) if diags.is_empty() => {
                if !filter.active() {
                    s.push_str(&format!("{}: ok\n", shown(&file)));
                }
            }
            Ok(diags) => {
                let mut codes: Vec<&str> = Vec::new();
                for d in diags {
                    if !codes.contains(&d.code.as_str()) {
                        codes.push(&d.code);
                    }
                }
                let more = codes.len().saturating_sub(5);
                codes.truncate(5);
                let mut list = codes.join(", ");
                if more > 0 {
                    list.push_str(&format!(", {more} more"));
                }
                s.push_str(&format!(
                    "{}: {} ({})\n",
                    shown(&file),
                    Counts::of(diags).text(),
                    shown(&list)
                ));
            }
            Err(msg) => s.push_str(&format!("{}: unreadable: {}\n", shown(&file), shown(msg))),
        },
    }
    s
}
