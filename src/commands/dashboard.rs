//! `pallas-diff dashboard DIR... -o report.html`: findings directories (campaigns, merges) and
//! hunt output directories as one self-contained HTML page ([`dashboard`]: outcome shares and
//! cases/s over time, the coverage heat map, the findings with their reports, engines and
//! versions, Helion's verdict agreement, the hunt's table). Exit 2 when an input is not one of
//! those or one of its records is malformed (the file is named).

use super::{CliError, Exit};
use dashboard::DashboardError;
use std::path::PathBuf;

/// Arguments of `dashboard`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Findings directories (`pallas-diff fuzz --out`, `pallas-diff merge --out`) and hunt
    /// output directories (`pallas-diff hunt --out`, with hunt.json).
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// The page to write (atomically).
    #[arg(short, long, default_value = "report.html")]
    out: PathBuf,
    /// Threads reading the inputs and their finding directories (default: the cores).
    #[arg(long)]
    jobs: Option<usize>,
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let pool = super::thread_pool(args.jobs.unwrap_or_else(super::cores), "dashboard")?;
    let written = pool.install(|| dashboard::write(&args.dirs, &args.out));
    let written = written.map_err(|e| match e {
        // The template or the file system failing is not the user's input being wrong.
        DashboardError::Template(_) | DashboardError::Write(_) => CliError::Internal(
            anyhow::Error::new(e)
                .context(format!("cannot write the dashboard {}", args.out.display())),
        ),
        DashboardError::NoInputs
        | DashboardError::Missing(_)
        | DashboardError::NotADirectory(_)
        | DashboardError::NotRecognized(_)
        | DashboardError::Record(_)
        | DashboardError::Buckets(_)
        | DashboardError::Finding(_)
        | DashboardError::MissingFinding { .. }
        | DashboardError::Hunt { .. }
        | DashboardError::Mutants { .. }
        | DashboardError::Read(_) => {
            CliError::Input(anyhow::Error::new(e).context("cannot read the dashboard's inputs"))
        }
    })?;
    println!(
        "wrote {}: {} findings director{} ({} finding(s)), {} hunt(s), {} chart(s), {} KB",
        args.out.display(),
        written.campaigns,
        if written.campaigns == 1 { "y" } else { "ies" },
        written.findings,
        written.hunts,
        written.charts,
        written.bytes.div_ceil(1024)
    );
    Ok(Exit::Ok)
}
