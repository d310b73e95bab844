//! `pallas-diff`: the command-line front of the harness. Each subcommand is a few lines of glue
//! over the library crates; see `pallas-diff --help` for the exit codes.

mod commands;

use clap::Parser;
use std::process::ExitCode;

/// mimalloc: the in-process loop allocates many small, short-lived IR nodes and arrays per
/// case; compare `pallas-diff bench` built with and without it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = commands::Cli::parse();
    match commands::run(cli) {
        Ok(code) => code.into(),
        Err(e) => {
            eprintln!("pallas-diff: {e:#}");
            e.exit_code().into()
        }
    }
}
