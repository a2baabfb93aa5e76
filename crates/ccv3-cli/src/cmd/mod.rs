//! The commands, each a function from parsed arguments to an exit code.
//!
//! This module only dispatches ([`run`]). A command takes its error from [`crate::error`], its
//! reads from [`crate::load`] and [`crate::stdio`], its writers from [`crate::output`], never
//! from here, so nothing imports back from the module that imports it
//! (`scripts/check-architecture`).

mod cbs;
mod convert;
mod convert_dir;
mod debug;
mod diff;
mod export;
mod extract;
mod index;
mod index_writer;
mod inspect;
pub mod lint;
mod lore;
pub mod lore_graph;
mod lore_list;
pub mod portability;
mod prompt;
mod search;
mod tokens;
mod validate;

use crate::args::{Cli, Command, DebugCommand, LoreCommand};
use crate::error::{CliError, CmdResult};
use std::path::Path;

/// Runs the parsed command line.
pub fn run(cli: Cli) -> CmdResult {
    crate::load::configure(cli.max_input_mib, cli.rpack_map.as_deref())?;
    match cli.command {
        Command::Inspect {
            file,
            json,
            summary,
            tokens,
            output,
        } if summary => inspect::run_summary(&file, json, tokens.as_deref(), output.as_deref()),
        Command::Inspect {
            file, json, output, ..
        } => inspect::run(&file, json, output.as_deref()),
        Command::Validate(args) => validate::run(&args),
        Command::Convert {
            input,
            output,
            to,
            image,
            out,
            format,
            force,
        } => match (output, out) {
            (Some(output), _) => {
                let kind = convert::out_kind_for(&output, format)?;
                convert::run(&input, &output, kind, to, image.as_deref())
            }
            (None, Some(_)) if crate::dash::is_dash(&input) => Err(CliError::file(
                &input,
                "--out DIR is for folders: give OUT (a file, or `-` with --format) for standard input",
            )),
            (None, Some(out)) => convert_dir::run(&convert_dir::Args {
                input,
                out,
                to,
                format,
                image,
                force,
            }),
            (None, None) => Err(CliError::file(
                &input,
                "give OUT, or --out DIR for a folder",
            )),
        },
        Command::Extract { file, dir } => extract::extract(&file, &dir),
        Command::Pack {
            dir,
            output,
            format,
        } => extract::pack(&dir, &output, convert::out_kind_for(&output, format)?),
        Command::Cbs(args) => cbs::run(args),
        Command::Prompt(args) => prompt::run(args),
        Command::Lore {
            what: LoreCommand::Scan(args),
        } => lore::run(args),
        Command::Lore {
            what: LoreCommand::List { file, json, output },
        } => lore_list::run(&file, json, output.as_deref()),
        Command::Lore {
            what: LoreCommand::Graph(args),
        } => lore_graph::run(&args),
        Command::Lint(args) => lint::run(&args),
        Command::Portability(args) => portability::run(&args),
        Command::Tokens {
            file,
            tokenizer,
            json,
            output,
        } => tokens::run(&file, &tokenizer, json, output.as_deref()),
        Command::Diff {
            a,
            b,
            json,
            color,
            output,
        } => diff::diff(&a, &b, json, color, output.as_deref()),
        Command::Set {
            file,
            field,
            value,
            json,
            output,
            format,
        } => {
            let kind = convert::out_kind_for(&output, format)?;
            diff::set(&file, &field, &value, json, &output, kind)
        }
        Command::Completions { shell, output } => {
            use clap::CommandFactory;
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "ccv3", &mut out);
            crate::output::emit(output.as_deref(), &String::from_utf8_lossy(&out))?;
            Ok(0)
        }
        Command::Index {
            paths,
            db,
            tokenizer,
        } => {
            if crate::dash::is_dash(&db) {
                return Err(CliError::file(
                    Path::new("--db"),
                    "the index is an SQLite file: give its path, not `-`",
                ));
            }
            // An index records files by path and time: standard input has neither.
            if let Some(dash) = paths.iter().find(|p| crate::dash::is_dash(p)) {
                return Err(CliError::file(
                    dash,
                    "an index records files by path: give files or folders, not `-`",
                ));
            }
            index::run(&index::Args {
                paths,
                db,
                tokenizer,
            })
        }
        Command::Search {
            db,
            query,
            limit,
            json,
            output,
        } => search::search(&db, &query, limit, json, output.as_deref()),
        Command::Export { db, format, output } => export::run(&db, format, output.as_deref()),
        Command::Debug {
            what: DebugCommand::Chunks { file, output },
        } => debug::chunks(&file, output.as_deref()),
    }
}
