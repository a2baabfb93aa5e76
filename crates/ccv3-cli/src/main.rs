//! The `ccv3` command: thin commands over the ccv3 libraries.
//!
//! Exit codes: 0 success; 1 the command ran and its answer is "no" (validation found errors, a
//! prompt is still over `--max-context`, `diff` found differences, `search` found nothing); 2 the
//! command could not run, or a file of a folder could not be read (every such failure prints one
//! line on stderr naming the file and the problem).
#![forbid(unsafe_code)]

mod args;
mod cmd;
mod dash;
mod error;
mod limits;
mod load;
mod now;
mod output;
mod pipeline;
mod shown;
mod stdio;
mod walk;
mod warnings;

use clap::Parser;
use std::process::ExitCode;

// Card reading is allocation-heavy (every text field is a string); mimalloc halves its cost.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    match cmd::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            if err.is_broken_pipe() {
                return ExitCode::SUCCESS;
            }
            eprintln!("ccv3: {err}");
            ExitCode::from(2)
        }
    }
}
