//! What the Python side offers ([`Availability`]): interpreter, JAX versions, devices, and
//! whether a real TPU is present (which decides if [`Mode::PallasTpu`](crate::Mode) can run).

use crate::error::RunError;
use crate::mode::Runtime;
use crate::worker::{Worker, XlaCompile, worker_script_for, worker_xla_flags_for};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// The worker's report on its environment (the hello line and the `probe` op).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Availability {
    /// Python version, e.g. `3.11.7`.
    pub python: String,
    /// `sys.executable` of the worker.
    #[serde(default)]
    pub python_executable: String,
    /// `jax.__version__`.
    #[serde(rename = "jax")]
    pub jax_version: String,
    /// `jaxlib.__version__`.
    #[serde(rename = "jaxlib", default)]
    pub jaxlib_version: String,
    /// `jax.devices()`, each as `str(device)`.
    pub devices: Vec<String>,
    /// Whether `jax.devices()` includes a TPU.
    pub tpu: bool,
    /// The TPU generation the CPU modes target (`PALLAS_DIFF_TPU_KIND`, default
    /// [`DEFAULT_TPU_KIND`]).
    #[serde(default)]
    pub tpu_kind: String,
    /// The worker's `XLA_FLAGS` (the ISA pin of [`PINNED_XLA_CPU_ISA`](crate::worker::PINNED_XLA_CPU_ISA)
    /// on x86-64, plus the user's own).
    #[serde(default)]
    pub xla_flags: String,
    /// Helion workers: `helion.__version__`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helion: Option<String>,
    /// Helion workers: `torch.__version__`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torch: Option<String>,
}

/// The TPU generation the CPU modes lower and interpret for unless `PALLAS_DIFF_TPU_KIND` says
/// otherwise (the device kind of the abstract mesh the worker runs every CPU mode in).
pub const DEFAULT_TPU_KIND: &str = "TPU v5e";

/// Starts one JAX worker on `python`, asks it to probe, and stops it (about a second: JAX
/// import).
pub fn probe(python: &Path) -> Result<Availability, RunError> {
    probe_runtime(Runtime::Jax, python)
}

/// [`probe`] for a worker of `runtime` (a Helion worker takes ~6 s: torch, Helion and JAX).
pub fn probe_runtime(runtime: Runtime, python: &Path) -> Result<Availability, RunError> {
    probe_runtime_with(runtime, python, XlaCompile::Default)
}

/// [`probe_runtime`] for a worker whose XLA compiles as `compile` (its `xla_flags` are the ones
/// a pool with that option gives its workers).
pub fn probe_runtime_with(
    runtime: Runtime,
    python: &Path,
    compile: XlaCompile,
) -> Result<Availability, RunError> {
    let timeout = Duration::from_secs(120);
    let mut worker = Worker::spawn_with_flags(
        python,
        &worker_script_for(runtime),
        timeout,
        &worker_xla_flags_for(compile),
        None,
    )?;
    worker.probe(timeout)
}
