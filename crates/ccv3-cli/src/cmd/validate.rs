//! `ccv3 validate PATH... [--json]`: files or folders, in parallel, with a summary.

use super::{print, CliError, CmdResult};
use ccv3::{Diagnostic, Severity};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde_json::json;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// File extensions looked at inside folders.
const EXTENSIONS: [&str; 8] = [
    "json", "png", "apng", "charx", "webp", "jpg", "jpeg", "lorebook",
];

/// What validating one file found.
struct Report {
    file: PathBuf,
    /// `Err` when the file could not be read at all.
    outcome: Result<Vec<Diagnostic>, String>,
}

/// Validates every file and prints the findings; exit 0 clean, 1 errors found, 2 unreadable file.
pub fn run(paths: &[PathBuf], as_json: bool) -> CmdResult {
    let mut files = Vec::new();
    for p in paths {
        collect(p, &mut files).map_err(|e| CliError::file(p, e))?;
    }
    let bar = if std::io::stderr().is_terminal() && files.len() > 1 {
        let bar = ProgressBar::new(files.len() as u64);
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} files {elapsed}") {
            bar.set_style(style);
        }
        bar
    } else {
        ProgressBar::hidden()
    };
    let reports: Vec<Report> = files
        .par_iter()
        .map(|f| {
            let outcome = check(f);
            bar.inc(1);
            Report {
                file: f.clone(),
                outcome,
            }
        })
        .collect();
    bar.finish_and_clear();

    let (mut errors, mut warnings, mut unreadable, mut bad_files) =
        (0usize, 0usize, 0usize, 0usize);
    for r in &reports {
        match &r.outcome {
            Ok(d) => {
                let e = d.iter().filter(|x| x.severity == Severity::Error).count();
                errors += e;
                warnings += d.iter().filter(|x| x.severity == Severity::Warning).count();
                bad_files += usize::from(e > 0);
            }
            Err(_) => unreadable += 1,
        }
    }
    if as_json {
        let mut items = Vec::new();
        for r in &reports {
            let file = r.file.display().to_string();
            match &r.outcome {
                Ok(diags) => items.extend(diags.iter().map(|d| {
                    json!({"file": file, "severity": d.severity, "code": d.code, "path": d.path, "message": d.message})
                })),
                Err(msg) => items.push(json!({"file": file, "severity": "error", "code": "unreadable", "path": "", "message": msg})),
            }
        }
        print(&format!("{}\n", serde_json::Value::Array(items)))?;
    } else {
        let mut out = String::new();
        for r in &reports {
            match &r.outcome {
                Ok(diags) => {
                    // Repeated findings of one code are counted, not printed a million times
                    // (issue 12); `--json` still lists every one.
                    let lines = crate::warnings::capped(
                        diags.iter().map(|d| (d.code.clone(), d.to_string())),
                    );
                    for line in lines {
                        out.push_str(&format!("{}: {line}\n", r.file.display()));
                    }
                }
                Err(msg) => out.push_str(&format!("{}: unreadable: {msg}\n", r.file.display())),
            }
        }
        out.push_str(&format!(
            "{} files: {} with errors, {unreadable} unreadable; {errors} errors, {warnings} warnings\n",
            reports.len(),
            bad_files
        ));
        print(&out)?;
    }
    for r in &reports {
        if let Err(msg) = &r.outcome {
            eprintln!("ccv3: {}: {msg}", r.file.display());
        }
    }
    Ok(if unreadable > 0 {
        2
    } else if errors > 0 {
        1
    } else {
        0
    })
}

/// Reads one file and returns every diagnostic: the reader's repairs and the validator's findings.
fn check(path: &Path) -> Result<Vec<Diagnostic>, String> {
    let doc = ccv3::read_file_with(path, &super::read_options()).map_err(super::with_hint)?;
    Ok(ccv3::check_document(&doc))
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let meta = std::fs::metadata(path)?;
    if meta.is_file() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)?.filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file() {
                let ext = p
                    .extension()
                    .and_then(|x| x.to_str())
                    .map(str::to_ascii_lowercase);
                if ext.is_some_and(|x| EXTENSIONS.contains(&x.as_str())) {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    Ok(())
}
