//! `pallas-diff render CASE.json`.

use super::{CliError, Exit, load_case};
use std::path::PathBuf;

/// Arguments of `render`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The case (JSON IR, or a case script to re-render canonically).
    case: PathBuf,
    /// Spell random inputs out exactly (`torch.tensor` / `torch.arange`), as a bug report does.
    #[arg(long)]
    spell_out_inputs: bool,
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let mut case = load_case(&args.case)?;
    if args.spell_out_inputs {
        case = lang::render::spell_out_inputs(&case).map_err(|e| CliError::Input(e.into()))?;
    }
    print!("{}", lang::render::render_case(&case));
    Ok(Exit::Ok)
}
