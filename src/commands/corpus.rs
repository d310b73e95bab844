//! `pallas-diff corpus add FINDING [--name NAME] [--allow-fault]`: promote a finding into the
//! regression corpus (`corpus/cases/` by default), its expectations blessed from a run now
//! (`corpus::promote`), and print the new entry's path. A finding made with an injected fault is
//! refused unless `--allow-fault` (the entry then replays under the fault, and says why).

use super::check::start_pools;
use super::report::load_finding;
use super::{CliError, Exit};
use ::corpus::entry::{Corpus, default_dir};
use ::corpus::promote::{PromoteError, Promoted, Promotion, promote};
use ::corpus::replay::LoadedFinding;
use ::finding::minimize::shared;
use fuzz::engines::EngineId;
use std::path::PathBuf;

/// Arguments of `corpus`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Add a finding directory as a new corpus entry (expectations recorded from a run now).
    Add(AddArgs),
}

/// Arguments of `corpus add`.
#[derive(Debug, clap::Args)]
struct AddArgs {
    /// The finding directory (`meta.json`, `case.json`, ...).
    finding: PathBuf,
    /// The entry's name after its id: lower-case words joined by `-` (default: from the kernel
    /// name and the title).
    #[arg(long)]
    name: Option<String>,
    /// One line saying what the entry pins (default: the finding's one-line summary).
    #[arg(long)]
    title: Option<String>,
    /// An issue URL for the bug, recorded for the finding's engine.
    #[arg(long)]
    link: Option<String>,
    /// Add a finding made with an injected fault: it then replays under the fault, pinning that
    /// the harness detects it (not a Helion bug).
    #[arg(long)]
    allow_fault: bool,
    /// Add it even when an entry already expects the same finding: another bug that the
    /// finding's signature (engine, outcome, loop type, index forms) does not tell apart. The
    /// same kernel again is still not added.
    #[arg(long)]
    distinct: bool,
    /// Engines whose outcome the entry records (default: the finding's engine and the engines
    /// that cross-checked it; every other engine is expected to agree).
    #[arg(long, value_delimiter = ',')]
    engines: Option<Vec<EngineId>>,
    /// The corpus directory (default: this workspace's `corpus/cases`).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Seconds before a JAX engine is declared hung.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    match args.command {
        Command::Add(a) => add(a),
    }
}

fn input(e: impl Into<anyhow::Error>) -> CliError {
    CliError::Input(e.into())
}

fn add(args: AddArgs) -> Result<Exit, CliError> {
    let finding = LoadedFinding {
        finding: load_finding(&args.finding)?,
        dir: args.finding.clone(),
    };
    let meta = &finding.finding.meta;
    if !meta.codegen.faults.is_empty() && !args.allow_fault {
        // Before any engine starts: the answer does not depend on them.
        return Err(input(PromoteError::InjectedFault {
            dir: args.finding.display().to_string(),
            faults: meta.codegen.faults.join(", "),
        }));
    }
    let mut ids: Vec<EngineId> = match &args.engines {
        Some(ids) => ids.clone(),
        None => finding
            .engine()
            .into_iter()
            .chain(meta.cross_check.iter().flat_map(|c| c.engines.clone()))
            .collect(),
    };
    if let Some(own) = finding.engine()
        && !ids.contains(&own)
    {
        ids.insert(0, own);
    }
    // The reference runs in every check; as an engine it would only compare with itself.
    ids.retain(|&e| e != EngineId::Reference);
    ids.dedup();
    let dir = args.corpus.clone().unwrap_or_else(default_dir);
    let mut corpus = Corpus::load(&dir).map_err(input)?;
    let pools = start_pools(&ids, 1, args.timeout)?;
    let engines = fuzz::engines::build_with(&ids, &pools).map_err(input)?;
    let how = Promotion {
        name: args.name.as_deref(),
        title: args.title.as_deref(),
        link: args.link.as_deref(),
        allow_fault: args.allow_fault,
        distinct: args.distinct,
    };
    match promote(&mut corpus, &finding, &shared(engines), &how) {
        Ok(Promoted::New { path, entry }) => {
            println!("added {}", path.display());
            println!("  script:  {}", path.with_extension("py").display());
            for (engine, e) in &entry.expect {
                println!("  expect {engine}: {e}");
            }
            for note in &entry.notes {
                println!("  note: {note}");
            }
            println!(
                "replay it with: pallas-diff replay {} --engines {} --filter {}",
                dir.display(),
                if ids.is_empty() {
                    EngineId::Reference.to_string()
                } else {
                    ids.iter().map(|e| e.name()).collect::<Vec<_>>().join(",")
                },
                entry.name()
            );
            Ok(Exit::Ok)
        }
        Ok(Promoted::Existing(name)) => {
            println!(
                "already in the corpus: {name} expects this finding; nothing added ({}; --distinct adds another kernel with the same finding)",
                dir.display()
            );
            Ok(Exit::Ok)
        }
        Err(e @ PromoteError::Corpus(_)) => Err(CliError::Internal(e.into())),
        Err(e) => Err(input(e)),
    }
}
