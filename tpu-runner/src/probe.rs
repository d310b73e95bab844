//! Asking a worker what the Python side offers ([`Availability`]): interpreter, JAX versions,
//! devices, and whether a real TPU is present (which decides if
//! [`Mode::PallasTpu`](crate::Mode) can run). The answer is a wire type of [`crate::protocol`];
//! this module starts a [`Worker`] to get it.

use crate::error::RunError;
use crate::mode::Runtime;
use crate::protocol::Availability;
use crate::worker::{Worker, XlaCompile, worker_script_for, worker_xla_flags_for};
use std::path::Path;
use std::time::Duration;

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
