//! `pallas-diff provision [--helion]`: installs the Python environments ahead of use. Without
//! flags, the JAX venv (~600 MB, ~30 s; every JAX engine needs it and makes it on first use
//! anyway). With `--helion`, also the opt-in Helion environment (`helion==1.5.1` with torch,
//! jax, packaging and absl-py: ~3 GB download, ~6 GB on disk, 2-3 minutes, pip's progress
//! shown), then starts a Helion worker once to show it works.

use super::{CliError, Exit};
use tpu_runner::Runtime;

/// Arguments of `provision`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also install the Helion environment (PALLAS_DIFF_HELION_VENV, default `.venv-helion`;
    /// PALLAS_DIFF_HELION_VERSION replaces the helion pin).
    #[arg(long)]
    helion: bool,
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let python = tpu_runner::provision().map_err(|e| CliError::Internal(e.into()))?;
    let a = tpu_runner::probe(&python)
        .map_err(|e| CliError::Internal(anyhow::anyhow!("the JAX worker does not start: {e}")))?;
    println!(
        "jax {} at {} (XLA_FLAGS {:?})",
        a.jax_version, a.python_executable, a.xla_flags
    );
    if args.helion {
        let python = tpu_runner::provision_helion().map_err(|e| CliError::Internal(e.into()))?;
        let h = tpu_runner::probe_runtime(Runtime::Helion, &python).map_err(|e| {
            CliError::Internal(anyhow::anyhow!("the Helion worker does not start: {e}"))
        })?;
        println!(
            "helion {} torch {} jax {} at {}",
            h.helion.as_deref().unwrap_or("?"),
            h.torch.as_deref().unwrap_or("?"),
            h.jax_version,
            h.python_executable
        );
    }
    Ok(Exit::Ok)
}
