//! `pallas-diff`: the command-line front of the harness. Each subcommand is a few lines of glue
//! over the library crates; see `pallas-diff --help` for the exit codes.

// The one exception to the workspace's `unsafe_code = "deny"`: a `GlobalAlloc` is an unsafe
// trait over mimalloc's C API (see the module docs for what it pays).
#[allow(unsafe_code)]
mod alloc;
mod commands;

use clap::Parser;
use std::process::ExitCode;

/// mimalloc: the in-process loop allocates many small, short-lived IR nodes and arrays per
/// case; compare `pallas-diff bench` built with and without it. [`alloc::MiMalloc`] calls it
/// the way its size classes allow.
#[global_allocator]
static GLOBAL: alloc::MiMalloc = alloc::MiMalloc;

/// Exit code of a process whose output pipe closed: 128 + SIGPIPE, what a shell reports for a
/// C tool killed by the signal (`pallas-diff replay | head`).
const BROKEN_PIPE_EXIT: i32 = 141;

/// Ends the process quietly when printing to a closed pipe fails (`println!` panics then):
/// the reader stopped reading, which is not a harness bug. Every other panic goes to the
/// default hook.
fn exit_quietly_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to std") && message.contains("Broken pipe") {
            std::process::exit(BROKEN_PIPE_EXIT);
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    exit_quietly_on_broken_pipe();
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
