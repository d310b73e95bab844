//! `pallas-diff report FINDING_DIR [--repro FILE]`: a finding as a Markdown bug report (summary,
//! case script with spelled-out inputs, emitted module, first differing elements, verdict,
//! engines and versions, and a standalone `repro.py` needing only JAX and NumPy).

use super::{CliError, Exit};
use anyhow::Context;
use finding::finding::Finding;
use finding::report::{Repro, markdown, repro_of};
use std::path::{Path, PathBuf};

/// Arguments of `report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The finding directory (`case.json`, `case.py`, `emitted.py`, `log.txt`, `meta.json`).
    finding: PathBuf,
    /// Also write the standalone reproducer to this file.
    #[arg(long)]
    repro: Option<PathBuf>,
}

/// Loads a finding directory; a path that is not one says so before naming a missing file.
pub fn load_finding(dir: &Path) -> Result<Finding, CliError> {
    if !dir.is_dir() {
        let what = if dir.exists() {
            "is not a directory"
        } else {
            "does not exist"
        };
        return Err(CliError::Input(anyhow::anyhow!(
            "{} {what} (a finding directory holds meta.json, case.json, case.py, emitted.py and log.txt)",
            dir.display()
        )));
    }
    Finding::load(dir).map_err(|e| CliError::Input(e.into()))
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let finding = load_finding(&args.finding)?;
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
