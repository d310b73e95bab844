//! `pallas-diff probe [--json]`: what the Python side of this machine can run (provisioning the
//! JAX venv on first use): Python, JAX/jaxlib versions, XLA flags, devices, whether a TPU is
//! present, and whether the opt-in Helion environment is installed (probed when it is; never
//! installed here).

use super::{CliError, Exit};
use tpu_runner::{Availability, Runtime};

/// Arguments of `probe`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Exit 2 ("an engine cannot run here") unless a TPU device is present (for the nightly
    /// TPU job).
    #[arg(long)]
    require_tpu: bool,
    /// Exit 2 unless the Helion environment is installed and its worker starts.
    #[arg(long)]
    require_helion: bool,
}

fn availability_json(a: &Availability) -> serde_json::Value {
    serde_json::json!({
        "python": a.python, "python_executable": a.python_executable,
        "jax": a.jax_version, "jaxlib": a.jaxlib_version,
        "devices": a.devices, "tpu": a.tpu, "tpu_kind": a.tpu_kind,
        "xla_flags": a.xla_flags, "helion": a.helion, "torch": a.torch,
    })
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let python = tpu_runner::provision().map_err(|e| CliError::Internal(e.into()))?;
    let a = tpu_runner::probe_runtime_with(Runtime::Jax, &python, super::check::xla_compile())
        .map_err(|e| CliError::Internal(anyhow::anyhow!("probe failed: {e}")))?;
    // The Helion environment: probed only when it is already here.
    let helion: Result<Availability, String> =
        tpu_runner::helion_python_if_present().and_then(|p| {
            tpu_runner::probe_runtime_with(Runtime::Helion, &p, super::check::xla_compile())
                .map_err(|e| format!("the Helion worker does not start: {e}"))
        });
    // The Helion builds installed over that environment (listed from their records; a source
    // tree's commit is read now).
    let chosen = super::builds::selected().ok().map(|b| b.id().to_owned());
    let builds: Vec<(tpu_runner::BuildIdentity, bool)> = match &helion {
        Ok(_) => tpu_runner::builds::installed(&super::builds::dir())
            .map_err(|e| CliError::Input(e.into()))?
            .iter()
            .map(|b| {
                let is_chosen = chosen.as_deref() == Some(b.id());
                let mut identity = b.identity();
                if b.overlay.is_none() {
                    // The pinned release: what the worker reported.
                    identity.version = helion
                        .as_ref()
                        .ok()
                        .and_then(|h| h.helion.clone())
                        .unwrap_or(identity.version);
                    identity.id.clone_from(&identity.version);
                }
                (identity, is_chosen)
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "jax": availability_json(&a),
                "pinned_xla_cpu_isa": tpu_runner::PINNED_XLA_CPU_ISA,
                "xla_compile": super::check::xla_compile().name(),
                "helion": match &helion {
                    Ok(h) => availability_json(h),
                    Err(why) => serde_json::json!({"installed": false, "reason": why}),
                },
                "helion_builds": builds.iter().map(|(b, _)| b).collect::<Vec<_>>(),
                "helion_build_selected": super::builds::spec().to_string(),
                "helion_default_version": tpu_runner::DEFAULT_HELION_VERSION,
                "model_helion_version": compiler::HELION_VERSION,
            })
        );
    } else {
        println!("python {} ({})", a.python, a.python_executable);
        println!("jax {} jaxlib {}", a.jax_version, a.jaxlib_version);
        println!(
            "xla flags: {:?} (--xla-compile {})",
            a.xla_flags,
            super::check::xla_compile()
        );
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
        println!("model: the lowering of Helion {}", compiler::HELION_VERSION);
        match &helion {
            Ok(h) => println!(
                "helion {} torch {} jax {} ({}): engines helion-pallas, helion-eager, helion-tpu-lower",
                h.helion.as_deref().unwrap_or("?"),
                h.torch.as_deref().unwrap_or("?"),
                h.jax_version,
                h.python_executable
            ),
            Err(why) => println!("helion: absent: {why}"),
        }
        for (b, chosen) in &builds {
            println!(
                "  build {}{}{}",
                b,
                b.wheel_sha256
                    .as_ref()
                    .map(|h| format!(" wheel sha256 {}", &h[..12]))
                    .unwrap_or_default(),
                if *chosen { "  <- --helion-build" } else { "" }
            );
        }
    }
    if args.require_tpu && !a.tpu {
        return Err(CliError::Input(anyhow::anyhow!(
            "no TPU device: the nightly TPU job must run on a TPU host (engine pallas-tpu cannot run here)"
        )));
    }
    if args.require_helion
        && let Err(why) = &helion
    {
        return Err(CliError::Input(anyhow::anyhow!("{why}")));
    }
    Ok(Exit::Ok)
}
