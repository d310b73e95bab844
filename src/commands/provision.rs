//! `pallas-diff provision [--helion]`: installs the Python environments ahead of use. Without
//! flags, the JAX venv (~600 MB, ~30 s; every JAX engine needs it and makes it on first use
//! anyway). With `--helion`, also the opt-in Helion environment (`helion==1.5.1` with torch,
//! jax, packaging and absl-py: ~3 GB download, ~6 GB on disk, 2-3 minutes, pip's progress
//! shown), then starts a Helion worker once to show it works. `--helion-build SPEC` installs
//! another Helion build over that environment (`tpu_runner::builds`) and starts a worker on it.

use super::{CliError, Exit};
use tpu_runner::Runtime;

/// Arguments of `provision`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also install the Helion environment (PALLAS_DIFF_HELION_VENV, default `.venv-helion`;
    /// PALLAS_DIFF_HELION_VERSION replaces the helion pin).
    #[arg(long)]
    helion: bool,
    /// Install a Helion build over the Helion environment (implies --helion): a release
    /// (`1.5.0`), a wheel file or a Helion source tree (registered, used in place); repeat for
    /// several. A few MB and seconds each (`tpu-runner/src/builds.rs`).
    #[arg(long = "helion-build", value_parser = tpu_runner::BuildSpec::parse)]
    builds: Vec<tpu_runner::BuildSpec>,
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let python = tpu_runner::provision().map_err(|e| CliError::Internal(e.into()))?;
    let a = tpu_runner::probe(&python)
        .map_err(|e| CliError::Internal(anyhow::anyhow!("the JAX worker does not start: {e}")))?;
    println!(
        "jax {} at {} (XLA_FLAGS {:?})",
        a.jax_version, a.python_executable, a.xla_flags
    );
    if args.helion || !args.builds.is_empty() {
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
        for spec in &args.builds {
            let started = std::time::Instant::now();
            let build = tpu_runner::builds::install(&super::builds::dir(), spec, &python, true)
                .map_err(|e| CliError::Input(e.into()))?;
            // A worker on the build proves the overlay imports and shadows the pinned Helion.
            let pool = tpu_runner::Pool::new(
                tpu_runner::PoolConfig::for_runtime(Runtime::Helion, &python)
                    .with_workers(1)
                    .with_helion_build(Some(build.clone())),
            )
            .map_err(|e| {
                CliError::Input(anyhow::anyhow!(
                    "Helion build {} does not start: {e}",
                    build.id()
                ))
            })?;
            let identity = pool.availability().helion_build.clone().unwrap_or_default();
            println!(
                "build {}: {identity} ({:.1} s{})",
                build.id(),
                started.elapsed().as_secs_f64(),
                build
                    .overlay
                    .as_ref()
                    .map(|o| format!(", overlay {}", o.display()))
                    .unwrap_or_default()
            );
        }
    }
    Ok(Exit::Ok)
}
