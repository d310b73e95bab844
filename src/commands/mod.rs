//! Subcommands and the exit-code contract.

mod bench;
mod bench_helion;
mod bench_jax;
mod bisect;
pub mod builds;
pub mod check;
mod corpus;
mod dashboard;
mod emit;
mod eval;
mod fuzz;
mod hunt;
mod import;
mod known_issues;
mod merge;
mod mutants;
mod parse;
mod probe;
mod progress;
mod provision;
mod reduce;
mod render;
mod replay;
pub mod report;

use clap::{Parser, Subcommand};
use std::path::Path;

/// Exit codes (documented in `--help`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// 0: ok (including a kernel the compiler rejects: a rejection is a verdict, not an error).
    Ok = 0,
    /// 1: internal error (a harness bug or an unavailable tool).
    Internal = 1,
    /// 2: invalid input (a malformed case script or corpus file).
    InvalidInput = 2,
    /// 3: at least one finding.
    Finding = 3,
    /// 4: `hunt` only: some injected fault was not detected in some repetition (a generator gap).
    Undetected = 4,
    /// 130: interrupted (Ctrl-C); the summary says after how many cases.
    Interrupted = 130,
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e as u8)
    }
}

/// An error with the exit code it maps to.
#[derive(Debug)]
pub enum CliError {
    /// Bad input: exit 2.
    Input(anyhow::Error),
    /// Anything else: exit 1.
    Internal(anyhow::Error),
}

impl CliError {
    /// The exit code.
    pub fn exit_code(&self) -> Exit {
        match self {
            CliError::Input(_) => Exit::InvalidInput,
            CliError::Internal(_) => Exit::Internal,
        }
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Input(e) | CliError::Internal(e) => write!(f, "{e:#}"),
        }
    }
}

impl From<anyhow::Error> for CliError {
    fn from(e: anyhow::Error) -> Self {
        CliError::Internal(e)
    }
}

/// The rayon pool of a command's parallel work (`replay`, `merge`, `dashboard`): `jobs` threads
/// (at least one) named `<name>-<i>`. A local pool, not rayon's global one (one thread per core),
/// so `--jobs` means what it says; run the work inside it with [`rayon::ThreadPool::install`].
pub(crate) fn thread_pool(jobs: usize, name: &'static str) -> Result<rayon::ThreadPool, CliError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .thread_name(move |i| format!("{name}-{i}"))
        .build()
        .map_err(|e| {
            CliError::Internal(
                anyhow::Error::new(e).context(format!("cannot start the {name} threads")),
            )
        })
}

/// `--jobs` when not given, for commands whose parallel work is reading files: the cores.
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

const EXIT_CODES: &str = "Exit codes:\n  0  ok (a rejected kernel is a verdict, not an error)\n  1  internal error (a harness bug)\n  2  invalid input (file, line, column and construct are named), or an engine that was asked\n     for cannot run here (no JAX, no TPU, no Helion; --allow-unavailable runs without it)\n  3  finding\n  130  interrupted (Ctrl-C)\n  141  the output pipe closed (`| head`)";

/// Differential testing of Helion's Pallas resident-Ref lowering against an eager reference.
#[derive(Debug, Parser)]
#[command(name = "pallas-diff", version, about, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// How the JAX and Helion workers a command starts compile with XLA:CPU: `fast` (about
    /// half the CPU per new kernel; another float summation order, which the tolerance of
    /// every comparison with the reference allows) or `default` (XLA's own options: the order
    /// pallas-sim models bit for bit). Findings record the workers' XLA_FLAGS.
    #[arg(long, global = true, default_value_t = tpu_runner::XlaCompile::Fast)]
    xla_compile: tpu_runner::XlaCompile,
    /// The Helion build the Helion engines run: the pinned release (default), another release
    /// (`1.5.0`), a wheel file or a Helion source tree, installed first with `pallas-diff
    /// provision --helion-build SPEC` (`probe` lists them). Our model stays the 1.5.1 model:
    /// verdict disagreements with another build read as drift. Findings record the build.
    #[arg(long, global = true, value_parser = tpu_runner::BuildSpec::parse)]
    helion_build: Option<tpu_runner::BuildSpec>,
    /// How many extra input sets (boundary values drawn for the case's dtypes, judged by the
    /// reference) the Helion engines with outputs run per case on the kernel they compiled
    /// once, each compared with the reference: in `check`, campaigns, `replay` and every other
    /// command that runs a Helion engine. 0: the case's own inputs only.
    #[arg(long, global = true, default_value_t = ::fuzz::input_sets::DEFAULT_EXTRA_SETS)]
    helion_input_sets: usize,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Parse a case script and print its IR summary (or the IR as JSON).
    #[command(after_help = EXIT_CODES)]
    Parse(parse::Args),
    /// Render a case (JSON IR) back to a case script.
    #[command(after_help = EXIT_CODES)]
    Render(render::Args),
    /// Compile a case and print the emitted Pallas module, or the rejection.
    #[command(after_help = EXIT_CODES)]
    Emit(emit::Args),
    /// Evaluate a case with the reference and print its outputs.
    #[command(after_help = EXIT_CODES)]
    Eval(eval::Args),
    /// Run a case through the compiler, the reference and the engines; classify the outcome.
    #[command(after_help = EXIT_CODES)]
    Check(check::Args),
    /// Run a fuzz campaign (default: 2 minutes, in-process engines plus JAX confirmation).
    #[command(after_help = EXIT_CODES)]
    Fuzz(Box<fuzz::Args>),
    /// Measure how fast campaigns find each injected historical defect.
    #[command(
        after_help = "Exit codes:\n  0  every fault detected in every repetition\n  1  internal error\n  2  invalid input\n  4  some fault was not detected in some repetition (a generator gap; not a finding)\n  130  interrupted (Ctrl-C)"
    )]
    Hunt(Box<hunt::Args>),
    /// Time every stage of the in-process pipeline and the differential loop (cases/s).
    #[command(after_help = EXIT_CODES)]
    Bench(bench::Args),
    /// Show what the Python side can run here (JAX, devices, TPU, the Helion environment).
    #[command(after_help = EXIT_CODES)]
    Probe(probe::Args),
    /// Install the JAX venv, and with --helion the opt-in Helion environment (~6 GB).
    #[command(after_help = EXIT_CODES)]
    Provision(provision::Args),
    /// Replay the regression corpus (one trial per entry x engine; --bless records outcomes),
    /// or a findings directory (each finding must still reproduce).
    #[command(after_help = EXIT_CODES)]
    Replay(replay::Args),
    /// Reduce a finding's case while its signature holds, into a new directory (or --in-place,
    /// keeping the original); a JAX cross-check is re-run on the reduced case.
    #[command(after_help = EXIT_CODES)]
    Reduce(reduce::Args),
    /// Merge the findings directories of a sharded campaign by signature (contracts checked,
    /// counts summed, the smallest reproducer kept, every shard recorded; atomic, idempotent),
    /// or the output directories of a sharded `mutants` run by mutant id.
    #[command(after_help = EXIT_CODES)]
    Merge(merge::Args),
    /// Mutation analysis of real Helion: single-site mutants of its Pallas backend, run against
    /// the regression corpus and a seeded campaign (coverage first, cheapest covering case
    /// first); the kill score by file and operator, the survivors, JUnit.
    #[command(after_help = EXIT_CODES)]
    Mutants(Box<mutants::Args>),
    /// Print a finding directory as a Markdown bug report with a standalone repro.py.
    #[command(after_help = EXIT_CODES)]
    Report(report::Args),
    /// The regression range of a Helion finding (or a case script's symptom) across the
    /// installed Helion builds: the last build that behaves as the reference says, the first
    /// that shows the symptom, and where it was fixed.
    #[command(after_help = EXIT_CODES)]
    Bisect(bisect::Args),
    /// Re-check every known issue that has a reproducer on the Helion build under test: still
    /// matching, or stale (the row should go).
    #[command(name = "known-issues", after_help = EXIT_CODES)]
    KnownIssues(known_issues::Args),
    /// Write findings directories and hunt outputs as one self-contained HTML page (charts over
    /// time, the coverage heat map, findings with their reports, engines, the hunt's table).
    #[command(after_help = EXIT_CODES)]
    Dashboard(dashboard::Args),
    /// Turn the `@helion.kernel`s of a Python file (a test module, an example, a production
    /// kernel) into case scripts, read statically (the file is never run); lists every kernel
    /// not imported with file:line and the reason. Exit 2 when none imports.
    #[command(after_help = EXIT_CODES)]
    Import(import::Args),
    /// The regression corpus: `corpus add FINDING` promotes a finding into it.
    #[command(after_help = EXIT_CODES)]
    Corpus(corpus::Args),
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<Exit, CliError> {
    check::set_xla_compile(cli.xla_compile);
    builds::set(cli.helion_build.clone());
    ::fuzz::input_sets::set_extra_sets(cli.helion_input_sets);
    match cli.command {
        Command::Parse(a) => parse::run(a),
        Command::Render(a) => render::run(a),
        Command::Emit(a) => emit::run(a),
        Command::Eval(a) => eval::run(a),
        Command::Check(a) => check::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Probe(a) => probe::run(a),
        Command::Provision(a) => provision::run(a),
        Command::Fuzz(a) => fuzz::run(*a),
        Command::Hunt(a) => hunt::run(*a),
        Command::Replay(a) => replay::run(a),
        Command::Reduce(a) => reduce::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Mutants(a) => mutants::run(*a),
        Command::Report(a) => report::run(a),
        Command::Bisect(a) => bisect::run(a),
        Command::KnownIssues(a) => known_issues::run(a),
        Command::Dashboard(a) => dashboard::run(a),
        Command::Corpus(a) => corpus::run(a),
        Command::Import(a) => import::run(a),
    }
}

/// Reads a file, naming it in the error.
pub fn read_file(path: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(path)
        .map_err(|e| CliError::Input(anyhow::anyhow!("cannot read '{}': {e}", path.display())))
}

/// Reads and parses a case script or a case JSON file (decided by content when the extension
/// does not say), with the same well-formedness checks for both.
pub fn load_case(path: &Path) -> Result<lang::ir::Case, CliError> {
    let text = read_file(path)?;
    lang::frontend::load_case_text(&text, &path.display().to_string())
        .map_err(|e| CliError::Input(e.into()))
}
