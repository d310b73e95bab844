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
    // A panic that reaches here is a harness bug: the panic hook has printed its message and
    // location; the run stops with the documented "internal error" code, not Rust's 101.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| commands::run(cli))) {
        Ok(Ok(code)) => code.into(),
        Ok(Err(e)) => {
            eprintln!("pallas-diff: {e:#}");
            e.exit_code().into()
        }
        Err(_) => {
            eprintln!("pallas-diff: internal error: a harness bug panicked (message above)");
            ExitCode::from(1)
        }
    }
}
