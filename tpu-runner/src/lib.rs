//! Runs emitted Pallas modules on JAX (the engines `pallas-interpret`, `pallas-tpu-interpret`,
//! `pallas-tpu-lower`, `pallas-tpu`) and case kernels through real Helion (`helion-pallas`,
//! `helion-eager`, `helion-tpu-lower`): [`Mode`].
//!
//! This crate owns the Python side of the harness: provisioning an interpreter with JAX
//! ([`provision()`]) and, opt-in, one with Helion ([`provision_helion`]), the persistent worker
//! processes that import them once (`python/worker.py`, `python/helion_worker.py`,
//! [`Worker`]), their JSON-lines protocol ([`protocol`]; the workers share its Python side,
//! `python/worker_protocol.py`), and a thread-safe [`Pool`] of workers
//! per environment ([`Runtime`]). Results come back as [`lang::tensor::Tensor`]s.
//!
//! ```no_run
//! use pallas_diff_tpu_runner::{Mode, Pool, PoolConfig, RunRequest, provision};
//! use lang::tensor::{DType, Tensor};
//!
//! let python = provision()?;
//! let pool = Pool::new(PoolConfig::new(python))?;
//! let x = Tensor::new(DType::Float32, vec![8, 128], vec![0.0; 1024]);
//! let source = std::fs::read_to_string("kernel.py")?;
//! let result = pool.run(&RunRequest::module(Mode::PallasTpuInterpret, source, vec![x]))?;
//! match result.outcome {
//!     Ok(outputs) => println!("{} outputs", outputs.len()),
//!     Err(kernel_error) => println!("kernel failed: {kernel_error}"),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The modules, each using only those below it (no circle):
//!
//! ```text
//!   pool    probe       a Pool of workers; probing one worker
//!      \    /
//!      worker           one process: spawn, request, response, timeout; ships python/
//!        |      \
//!    protocol    \      the wire types (Availability among them), requests and results
//!        |        |
//!      error   provision  harness failures and kernel errors; the environments
//!         \      /
//!          mode         the engines a worker runs, and their environment
//! ```

pub mod builds;
pub mod error;
pub mod mode;
pub mod pool;
pub mod probe;
pub mod protocol;
pub mod provision;
pub mod worker;

pub use builds::{BuildIdentity, BuildSpec, HelionBuild};
pub use error::{ENGINE_UNAVAILABLE, KernelError, ProtocolError, RunError, Stage};
pub use mode::{Mode, Runtime, UnknownMode};
pub use pool::{Pool, PoolConfig};
pub use probe::{DEFAULT_TPU_KIND, probe, probe_runtime, probe_runtime_with};
pub use protocol::{
    Availability, BatchResult, CallArg, HelionConfig, KernelCall, PROTOCOL_VERSION, RunRequest,
    RunResult, StageSeconds,
};
pub use provision::{
    DEFAULT_HELION_VERSION, ProvisionError, ProvisionOptions, helion_python_if_present, provision,
    provision_helion, provision_with,
};
pub use worker::{
    FAST_COMPILE_XLA_FLAGS, PINNED_XLA_CPU_ISA, Worker, XlaCompile, helion_worker_script,
    sim_order_holds_here, worker_script, worker_script_for, worker_xla_flags, worker_xla_flags_for,
};
