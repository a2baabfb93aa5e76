//! `ccv3 portability FILE [--app A]...` (issue 27): what SillyTavern, RisuAI, Agnai and any V2
//! reader do with a card. The findings are [`ccv3_analyze::portability`]'s, from the rules
//! `docs/portability.md` lists with their sources; this command prints them.

use super::{emit, load, CmdResult};
use crate::shown::shown;
use ccv3_analyze::App;
use std::path::PathBuf;

/// Arguments of `ccv3 portability`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  ccv3 portability card.png                      all four applications\n  ccv3 portability card.charx --app sillytavern --app v2\n  ccv3 portability card.png --json | jq 'group_by(.app)'"
)]
pub struct PortabilityArgs {
    /// A card or a lorebook; `-` reads standard input.
    pub file: PathBuf,
    /// sillytavern, risuai, agnai or v2 (repeatable; default: all four).
    #[arg(long = "app", value_parser = parse_app)]
    pub apps: Vec<App>,
    /// Print one JSON array of {app, severity, code, path, entry, message}.
    #[arg(long)]
    pub json: bool,
    /// Write to FILE instead of standard output (atomically: FILE appears whole or not at
    /// all; `-`: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// A `--app` value of `portability`.
fn parse_app(s: &str) -> Result<App, String> {
    match App::parse(s) {
        Some(App::Spec) | None => Err("use sillytavern, risuai, agnai or v2".into()),
        Some(a) => Ok(a),
    }
}

/// Prints what each application does with the file.
pub fn run(args: &PortabilityArgs) -> CmdResult {
    let doc = load(&args.file, "FILE")?;
    let findings = ccv3_analyze::portability(&doc, &args.apps);
    let text = if args.json {
        let mut s = serde_json::to_string(&findings).map_err(std::io::Error::from)?;
        s.push('\n');
        s
    } else {
        let apps: &[App] = if args.apps.is_empty() {
            &App::PORTABILITY
        } else {
            &args.apps
        };
        let mut s = String::new();
        for &app in apps {
            let mine: Vec<_> = findings.iter().filter(|f| f.app == app).collect();
            s.push_str(&format!(
                "{} ({}): {}\n",
                app.label(),
                app,
                super::validate::plural(mine.len(), "finding", "findings")
            ));
            for f in mine {
                let entry = f.entry.map(|i| format!(" #{i}")).unwrap_or_default();
                let at = if f.path.is_empty() {
                    String::new()
                } else {
                    format!(" at {}", shown(&f.path))
                };
                s.push_str(&format!(
                    "  {:<7} {}{entry}{at}: {}\n",
                    f.severity.to_string(),
                    f.code,
                    shown(&f.message)
                ));
            }
        }
        s
    };
    emit(args.output.as_deref(), &text)?;
    Ok(0)
}
