//! `pallas-diff probe [--json]`: what the JAX side of this machine can run (provisioning the venv
//! on first use): Python, JAX/jaxlib versions, devices, whether a TPU is present.

use super::{CliError, Exit};

/// Arguments of `probe`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Exit 1 unless a TPU device is present (for the nightly TPU job).
    #[arg(long)]
    require_tpu: bool,
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let python = tpu_runner::provision()
        .map_err(|e| CliError::Internal(anyhow::anyhow!("cannot provision JAX: {e}")))?;
    let a = tpu_runner::probe(&python)
        .map_err(|e| CliError::Internal(anyhow::anyhow!("probe failed: {e}")))?;
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "python": a.python, "python_executable": a.python_executable,
                "jax": a.jax_version, "jaxlib": a.jaxlib_version,
                "devices": a.devices, "tpu": a.tpu, "tpu_kind": a.tpu_kind,
            })
        );
    } else {
        println!("python {} ({})", a.python, a.python_executable);
        println!("jax {} jaxlib {}", a.jax_version, a.jaxlib_version);
        println!("devices {:?}", a.devices);
        println!(
            "tpu: {} (abstract TPU kind for CPU lowering: {})",
            if a.tpu {
                "present"
            } else {
                "absent: engine pallas-tpu is unavailable"
            },
            a.tpu_kind
        );
    }
    if args.require_tpu && !a.tpu {
        return Err(CliError::Internal(anyhow::anyhow!(
            "no TPU device: the nightly TPU job must run on a TPU host"
        )));
    }
    Ok(Exit::Ok)
}
