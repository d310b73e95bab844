//! `pallas-diff report FINDING_DIR [--repro FILE]`: a finding as a Markdown bug report (summary,
//! case script with spelled-out inputs, emitted module, first differing elements, verdict,
//! engines and versions, and a standalone `repro.py` needing only JAX and NumPy).

use super::{CliError, Exit};
use anyhow::Context;
use corpus::finding::Finding;
use corpus::report::{Repro, markdown, repro_of};
use std::path::PathBuf;

/// Arguments of `report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The finding directory (`case.json`, `case.py`, `emitted.py`, `log.txt`, `meta.json`).
    finding: PathBuf,
    /// Also write the standalone reproducer to this file.
    #[arg(long)]
    repro: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let finding = Finding::load(&args.finding).map_err(|e| CliError::Input(e.into()))?;
    print!("{}", markdown(&finding));
    if let Some(path) = &args.repro {
        match repro_of(&finding) {
            Repro::Script(s) => std::fs::write(path, s)
                .with_context(|| format!("cannot write '{}'", path.display()))?,
            Repro::None(why) => {
                return Err(CliError::Input(anyhow::anyhow!(
                    "{}: no standalone reproducer: {why}",
                    args.finding.display()
                )));
            }
        }
    }
    Ok(Exit::Ok)
}
