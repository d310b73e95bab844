//! Engines: everything that runs a case, behind one [`Engine`] trait.
//!
//! - `oracle`: the reference ([`reference::Reference`], eager PyTorch semantics);
//! - `pallas-interpret`, `pallas-tpu-interpret`, `pallas-tpu-lower`, `pallas-tpu`: the emitted
//!   Pallas module in real JAX, through the `tpu-runner` worker pool ([`jax::Jax`]).
//!
//! An engine never panics on a case and never pretends: an engine that cannot run here (no TPU)
//! reports [`EngineStatus::Unavailable`] with the reason; an engine with nothing to run (the
//! compiler rejected the kernel) reports [`EngineStatus::NotRun`].

pub mod jax;
pub mod reference;
pub mod sim;

use compiler::ir::{Case, Span};
use compiler::tensor::Tensor;
use serde::Serialize;
use std::sync::Arc;

/// Everything an engine may need to run one case.
pub struct Job<'a> {
    /// The case.
    pub case: &'a Case,
    /// Its input tensors, in kernel-parameter order (int parameters are baked into the module).
    pub inputs: &'a [Tensor],
    /// The emitted Pallas module, when the compiler lowered the kernel.
    pub emitted: Option<&'a str>,
    /// The same module as a typed AST (what `pallas-sim` interprets).
    pub module: Option<&'a compiler::pallas::PallasModule>,
}

/// What one engine did with one case.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EngineRun {
    /// The engine's name.
    pub engine: String,
    /// What happened.
    pub status: EngineStatus,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// The status of one engine run.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum EngineStatus {
    /// The engine ran the case; these are its outputs, in return order.
    Outputs(#[serde(skip)] Vec<Tensor>),
    /// `pallas-tpu-lower` lowered the module for TPU.
    Lowered,
    /// The engine cannot run here (e.g. no TPU device); the reason.
    Unavailable(String),
    /// Nothing to run (the compiler rejected the kernel); the reason.
    NotRun(String),
    /// The reference refused the case (it has no eager meaning).
    Invalid {
        /// The reference's error kind.
        kind: String,
        /// Where.
        span: Span,
        /// Why.
        message: String,
    },
    /// The emitted module raised.
    KernelError {
        /// Stage: import, trace, lower or run.
        #[serde(serialize_with = "ser_stage")]
        stage: tpu_runner::Stage,
        /// Exception class (and cause).
        kind: String,
        /// Message (first lines).
        message: String,
        /// Traceback.
        traceback: String,
    },
    /// No answer within the timeout.
    Timeout(String),
    /// The engine process died (twice).
    Crash(String),
}

fn ser_stage<S: serde::Serializer>(stage: &tpu_runner::Stage, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(stage.name())
}

impl EngineStatus {
    /// The outputs, when the engine produced some.
    pub fn outputs(&self) -> Option<&[Tensor]> {
        match self {
            EngineStatus::Outputs(o) => Some(o),
            EngineStatus::Lowered
            | EngineStatus::Unavailable(_)
            | EngineStatus::NotRun(_)
            | EngineStatus::Invalid { .. }
            | EngineStatus::KernelError { .. }
            | EngineStatus::Timeout(_)
            | EngineStatus::Crash(_) => None,
        }
    }

    /// A one-word name for tables.
    pub fn name(&self) -> &'static str {
        match self {
            EngineStatus::Outputs(_) => "ok",
            EngineStatus::Lowered => "lowered",
            EngineStatus::Unavailable(_) => "unavailable",
            EngineStatus::NotRun(_) => "not-run",
            EngineStatus::Invalid { .. } => "invalid",
            EngineStatus::KernelError { .. } => "error",
            EngineStatus::Timeout(_) => "timeout",
            EngineStatus::Crash(_) => "crash",
        }
    }

    /// A one-line detail (error message or reason), if any.
    pub fn detail(&self) -> Option<String> {
        match self {
            EngineStatus::Outputs(_) | EngineStatus::Lowered => None,
            EngineStatus::Unavailable(r)
            | EngineStatus::NotRun(r)
            | EngineStatus::Timeout(r)
            | EngineStatus::Crash(r) => Some(r.clone()),
            EngineStatus::Invalid {
                kind,
                span,
                message,
            } => Some(format!("{kind} at {span}: {message}")),
            EngineStatus::KernelError {
                stage,
                kind,
                message,
                ..
            } => Some(format!(
                "{stage} {kind}: {}",
                message.lines().next().unwrap_or("")
            )),
        }
    }
}

/// Something that runs a case.
pub trait Engine: Send + Sync {
    /// The engine's name (`oracle`, `pallas-tpu-interpret`, ...).
    fn name(&self) -> &str;
    /// Runs one case. Never panics on a case.
    fn run(&self, job: &Job<'_>) -> EngineRun;
}

/// Names of every engine this build knows, in a fixed order.
pub const ENGINE_NAMES: [&str; 6] = [
    "oracle",
    "pallas-sim",
    "pallas-interpret",
    "pallas-tpu-interpret",
    "pallas-tpu-lower",
    "pallas-tpu",
];

/// An engine name that is not one of [`ENGINE_NAMES`], or a JAX engine without a pool.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Unknown engine name.
    #[error("unknown engine `{0}` (known: {known})", known = ENGINE_NAMES.join(", "))]
    Unknown(String),
    /// A JAX engine was asked for but no worker pool could be started.
    #[error("engine `{0}` needs the JAX worker pool: {1}")]
    NoPool(String, String),
}

/// Builds engines by name. JAX engines share `pool`; `None` makes asking for one an error.
pub fn build(
    names: &[String],
    pool: Option<Arc<tpu_runner::Pool>>,
) -> Result<Vec<Box<dyn Engine>>, BuildError> {
    names
        .iter()
        .map(|n| -> Result<Box<dyn Engine>, BuildError> {
            if n == "oracle" {
                return Ok(Box::new(reference::Reference));
            }
            if n == sim::NAME {
                return Ok(Box::new(sim::Sim::default()));
            }
            let mode: tpu_runner::Mode = n.parse().map_err(|_| BuildError::Unknown(n.clone()))?;
            let pool = pool
                .clone()
                .ok_or_else(|| BuildError::NoPool(n.clone(), "no pool was started".into()))?;
            Ok(Box::new(jax::Jax::new(mode, pool)))
        })
        .collect()
}

/// The engines that run in this process (no Python): the reference, and `pallas-sim` when this
/// build has it.
pub const IN_PROCESS: &[&str] = &["oracle", sim::NAME];

/// Whether engine `name` runs in this process (the others run the emitted module's text in the
/// JAX worker pool).
pub fn is_in_process(name: &str) -> bool {
    IN_PROCESS.contains(&name)
}

/// Whether any of `names` needs the JAX worker pool.
pub fn needs_pool(names: &[String]) -> bool {
    names.iter().any(|n| !is_in_process(n))
}
