//! Engines: everything that runs a case, behind one [`Engine`] trait.
//!
//! - `oracle`: the reference ([`reference::Reference`], eager PyTorch semantics);
//! - `pallas-sim`: the emitted module's AST executed in Rust ([`sim::Sim`]);
//! - `pallas-interpret`, `pallas-tpu-interpret`, `pallas-tpu-lower`, `pallas-tpu`: the emitted
//!   Pallas module in real JAX, through the `tpu-runner` worker pool ([`jax::Jax`]);
//! - `helion-pallas`, `helion-eager`, `helion-tpu-lower`: the case's kernel through real Helion
//!   (the opt-in Helion environment), on every case, rejected by our compiler or not
//!   ([`helion::Helion`]).
//!
//! Each is named by one [`EngineId`] value; its kebab name ([`EngineId::name`], the one place
//! an engine's name is written in Rust) is what the command line, the wire, meta.json and the
//! corpus carry. Past the command line everything holds `EngineId`s: the builders, a
//! campaign's roles, the known-issue table.
//!
//! An engine never panics on a case and never pretends: an engine that cannot run here (no TPU)
//! reports [`EngineStatus::Unavailable`] with the reason; an engine with nothing to run (the
//! compiler rejected the kernel) reports [`EngineStatus::NotRun`].

pub mod helion;
pub mod jax;
pub mod reference;
pub mod sim;

use lang::ir::{Case, Span};
use lang::tensor::Tensor;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use tpu_runner::{Mode, Runtime};

/// Which engine: the one typed identity of an engine. Its [`EngineId::name`] is the engine's
/// name everywhere (command line, reports, meta.json, corpus).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EngineId {
    /// The reference (`oracle`).
    Reference,
    /// The in-process Pallas executor (`pallas-sim`).
    PallasSim,
    /// A worker mode: JAX on our emitted module, or real Helion on the case's kernel.
    Worker(Mode),
}

impl EngineId {
    /// Every engine, in a fixed order.
    pub const ALL: [EngineId; 9] = [
        EngineId::Reference,
        EngineId::PallasSim,
        EngineId::Worker(Mode::PallasInterpret),
        EngineId::Worker(Mode::PallasTpuInterpret),
        EngineId::Worker(Mode::PallasTpuLower),
        EngineId::Worker(Mode::PallasTpu),
        EngineId::Worker(Mode::HelionPallas),
        EngineId::Worker(Mode::HelionEager),
        EngineId::Worker(Mode::HelionTpuLower),
    ];

    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            EngineId::Reference => "oracle",
            EngineId::PallasSim => "pallas-sim",
            EngineId::Worker(m) => m.name(),
        }
    }

    /// Every engine's name, in [`EngineId::ALL`] order.
    pub fn names() -> [&'static str; 9] {
        EngineId::ALL.map(EngineId::name)
    }

    /// The Python environment the engine needs (`None`: it runs in this process).
    pub fn runtime(self) -> Option<Runtime> {
        match self {
            EngineId::Reference | EngineId::PallasSim => None,
            EngineId::Worker(m) => Some(m.runtime()),
        }
    }

    /// Whether the engine runs in this process (the others run in a worker pool).
    pub fn is_in_process(self) -> bool {
        self.runtime().is_none()
    }

    /// Whether the engine is one of the real-Helion engines.
    pub fn is_helion(self) -> bool {
        self.runtime() == Some(Runtime::Helion)
    }

    /// Whether a run of this engine shows Helion's Pallas verdict (lowered or refused):
    /// the Helion engines but eager mode, which does no Pallas planning.
    pub fn shows_helion_verdict(self) -> bool {
        self.is_helion() && self != EngineId::Worker(Mode::HelionEager)
    }

    /// How the reference this engine's outputs are compared with tiles the kernel: Helion's
    /// eager mode ignores the config's block sizes ([`oracle::Tiling::HelionEager`]); every
    /// other engine runs the effective ones.
    pub fn reference_tiling(self) -> oracle::Tiling {
        match self {
            EngineId::Worker(Mode::HelionEager) => oracle::Tiling::HelionEager,
            EngineId::Reference | EngineId::PallasSim | EngineId::Worker(_) => {
                oracle::Tiling::Effective
            }
        }
    }
}

impl fmt::Display for EngineId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for EngineId {
    type Err = UnknownEngine;

    fn from_str(s: &str) -> Result<EngineId, UnknownEngine> {
        EngineId::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| UnknownEngine(s.to_owned()))
    }
}

/// A name that is not one of [`EngineId::names`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown engine `{0}` (known: {known})", known = EngineId::names().join(", "))]
pub struct UnknownEngine(pub String);

impl Serialize for EngineId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for EngineId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<EngineId, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Everything an engine may need to run one case.
pub struct Job<'a> {
    /// The case.
    pub case: &'a Case,
    /// Its input tensors, in kernel-parameter order (int parameters are baked into the module).
    pub inputs: &'a [Tensor],
    /// The emitted Pallas module, when the compiler lowered the kernel.
    pub emitted: Option<&'a str>,
    /// The same module as a typed AST (what `pallas-sim` interprets).
    pub module: Option<&'a lang::pallas::PallasModule>,
}

/// What one engine did with one case.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EngineRun {
    /// The engine.
    pub engine: EngineId,
    /// What happened.
    pub status: EngineStatus,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Helion engines: the Pallas module Helion generated for the kernel (for reports).
    #[serde(skip)]
    pub generated: Option<String>,
    /// Helion engines with outputs: what the case's extra input sets gave
    /// ([`crate::input_sets`]); `None` when none ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_sets: Option<crate::input_sets::SetsRun>,
}

impl EngineRun {
    /// A run that produced `status` in no time (nothing was run).
    pub fn instant(engine: EngineId, status: EngineStatus) -> EngineRun {
        EngineRun {
            engine,
            status,
            seconds: 0.0,
            generated: None,
            input_sets: None,
        }
    }
}

/// The kind of an [`EngineStatus`]: what a record keeps of it besides its details. Serialized
/// as its name ([`StatusKind::name`]).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum StatusKind {
    /// [`EngineStatus::Outputs`].
    Ok,
    /// [`EngineStatus::Lowered`].
    Lowered,
    /// [`EngineStatus::Unavailable`].
    Unavailable,
    /// [`EngineStatus::NotRun`].
    NotRun,
    /// [`EngineStatus::Refused`].
    Refused,
    /// [`EngineStatus::Invalid`].
    Invalid,
    /// [`EngineStatus::KernelError`].
    Error,
    /// [`EngineStatus::Timeout`].
    Timeout,
    /// [`EngineStatus::Crash`].
    Crash,
}

impl StatusKind {
    /// Every kind.
    pub const ALL: [StatusKind; 9] = [
        StatusKind::Ok,
        StatusKind::Lowered,
        StatusKind::Unavailable,
        StatusKind::NotRun,
        StatusKind::Refused,
        StatusKind::Invalid,
        StatusKind::Error,
        StatusKind::Timeout,
        StatusKind::Crash,
    ];

    /// The one-word name (`ok`, `not-run`, `error`, ...).
    pub fn name(self) -> &'static str {
        match self {
            StatusKind::Ok => "ok",
            StatusKind::Lowered => "lowered",
            StatusKind::Unavailable => "unavailable",
            StatusKind::NotRun => "not-run",
            StatusKind::Refused => "refused",
            StatusKind::Invalid => "invalid",
            StatusKind::Error => "error",
            StatusKind::Timeout => "timeout",
            StatusKind::Crash => "crash",
        }
    }
}

impl fmt::Display for StatusKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
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
    /// Helion refused the kernel with one of its documented error classes (a verdict, as our
    /// compiler's rejection is).
    Refused {
        /// Helion's error class, e.g. `InvalidIndexingType`.
        class: String,
        /// The message's first line.
        message: String,
        /// The kernel line it names, when known.
        line: Option<u32>,
    },
    /// The reference refused the case (it has no eager meaning).
    Invalid {
        /// The reference's error kind (serialized as its id).
        kind: oracle::EvalErrorKind,
        /// Where.
        span: Span,
        /// Why.
        message: String,
    },
    /// The emitted module raised.
    KernelError {
        /// Stage: import, trace, lower or run.
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

impl EngineStatus {
    /// The outputs, when the engine produced some.
    pub fn outputs(&self) -> Option<&[Tensor]> {
        match self {
            EngineStatus::Outputs(o) => Some(o),
            EngineStatus::Lowered
            | EngineStatus::Unavailable(_)
            | EngineStatus::NotRun(_)
            | EngineStatus::Refused { .. }
            | EngineStatus::Invalid { .. }
            | EngineStatus::KernelError { .. }
            | EngineStatus::Timeout(_)
            | EngineStatus::Crash(_) => None,
        }
    }

    /// Which kind of status, without its details.
    pub fn kind(&self) -> StatusKind {
        match self {
            EngineStatus::Outputs(_) => StatusKind::Ok,
            EngineStatus::Lowered => StatusKind::Lowered,
            EngineStatus::Unavailable(_) => StatusKind::Unavailable,
            EngineStatus::NotRun(_) => StatusKind::NotRun,
            EngineStatus::Refused { .. } => StatusKind::Refused,
            EngineStatus::Invalid { .. } => StatusKind::Invalid,
            EngineStatus::KernelError { .. } => StatusKind::Error,
            EngineStatus::Timeout(_) => StatusKind::Timeout,
            EngineStatus::Crash(_) => StatusKind::Crash,
        }
    }

    /// A one-word name for tables ([`StatusKind::name`]).
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// A one-line detail (error message or reason), if any.
    pub fn detail(&self) -> Option<String> {
        match self {
            EngineStatus::Outputs(_) | EngineStatus::Lowered => None,
            EngineStatus::Unavailable(r)
            | EngineStatus::NotRun(r)
            | EngineStatus::Timeout(r)
            | EngineStatus::Crash(r) => Some(r.clone()),
            EngineStatus::Refused {
                class,
                message,
                line,
            } => Some(match line {
                Some(l) => format!("{class} at line {l}: {message}"),
                None => format!("{class}: {message}"),
            }),
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

/// The status of a worker engine's kernel error: its stage, its class with the wrapped cause
/// (`JaxRuntimeError (IndexError)`), message and traceback.
pub(crate) fn kernel_error_status(e: &tpu_runner::KernelError) -> EngineStatus {
    EngineStatus::KernelError {
        stage: e.stage,
        kind: match &e.cause {
            Some(c) if c != &e.kind => format!("{} ({c})", e.kind),
            _ => e.kind.clone(),
        },
        message: e.message.clone(),
        traceback: e.traceback.clone(),
    }
}

/// The status of a request that got no engine outcome: a timeout, a worker that died twice,
/// or another harness failure talking to the worker.
pub(crate) fn run_error_status(e: tpu_runner::RunError) -> EngineStatus {
    match e {
        tpu_runner::RunError::Timeout { timeout } => {
            EngineStatus::Timeout(format!("no answer within {timeout:?}"))
        }
        e @ (tpu_runner::RunError::WorkerCrashed { .. }
        | tpu_runner::RunError::EngineCrash { .. }) => EngineStatus::Crash(e.to_string()),
        e => EngineStatus::Crash(format!("harness failure talking to the worker: {e}")),
    }
}

/// Something that runs a case.
pub trait Engine: Send + Sync {
    /// The engine's typed identity.
    fn id(&self) -> EngineId;
    /// The engine's name (`oracle`, `pallas-tpu-interpret`, ...): [`EngineId::name`].
    fn name(&self) -> &'static str {
        self.id().name()
    }
    /// Runs one case. Never panics on a case.
    fn run(&self, job: &Job<'_>) -> EngineRun;
    /// Runs several cases, one run per job in order, as [`Engine::run`] would one by one; an
    /// engine with a cheaper way to run many (the JAX engines compile a batch as one function)
    /// overrides it.
    fn run_batch(&self, jobs: &[Job<'_>]) -> Vec<EngineRun> {
        jobs.iter().map(|j| self.run(j)).collect()
    }
}

/// A worker engine asked for without a pool of its environment.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A worker engine was asked for but no worker pool of its environment could be started.
    #[error("engine `{0}` needs the {1} worker pool: {2}")]
    NoPool(EngineId, Runtime, String),
}

/// The worker pools engines run on, one per environment (`None`: not started).
#[derive(Clone, Debug, Default)]
pub struct Pools {
    /// The JAX pool (emitted modules).
    pub jax: Option<Arc<tpu_runner::Pool>>,
    /// The Helion pool (case kernels through real Helion).
    pub helion: Option<Arc<tpu_runner::Pool>>,
}

/// Builds engines `ids`. JAX engines share `pool`; `None` makes asking for one an error.
pub fn build(
    ids: &[EngineId],
    pool: Option<Arc<tpu_runner::Pool>>,
) -> Result<Vec<Box<dyn Engine>>, BuildError> {
    build_with(
        ids,
        &Pools {
            jax: pool,
            helion: None,
        },
    )
}

/// Builds engines `ids` over `pools`; an engine whose pool is absent is an error.
pub fn build_with(ids: &[EngineId], pools: &Pools) -> Result<Vec<Box<dyn Engine>>, BuildError> {
    ids.iter()
        .map(|&id| -> Result<Box<dyn Engine>, BuildError> {
            let pool = |runtime: Runtime, pool: &Option<Arc<tpu_runner::Pool>>| {
                pool.clone()
                    .ok_or_else(|| BuildError::NoPool(id, runtime, "no pool was started".into()))
            };
            Ok(match id {
                EngineId::Reference => Box::new(reference::Reference),
                EngineId::PallasSim => Box::new(sim::Sim::default()),
                EngineId::Worker(mode) => match mode.runtime() {
                    Runtime::Jax => Box::new(jax::Jax::new(mode, pool(Runtime::Jax, &pools.jax)?)),
                    Runtime::Helion => Box::new(helion::Helion::new(
                        mode,
                        pool(Runtime::Helion, &pools.helion)?,
                    )),
                },
            })
        })
        .collect()
}

/// The environments engines `ids` need, each once.
pub fn runtimes_needed(ids: &[EngineId]) -> Vec<Runtime> {
    let mut out: Vec<Runtime> = ids.iter().filter_map(|e| e.runtime()).collect();
    out.sort();
    out.dedup();
    out
}

/// The engines that run in this process (no Python): the reference and `pallas-sim`.
pub const IN_PROCESS: [EngineId; 2] = [EngineId::Reference, EngineId::PallasSim];

/// Whether any of `ids` needs the JAX worker pool.
pub fn needs_pool(ids: &[EngineId]) -> bool {
    runtimes_needed(ids).contains(&Runtime::Jax)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_ids_round_trip_and_match_the_name_table() {
        let mut names = EngineId::names().to_vec();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), EngineId::ALL.len(), "one name per engine");
        for id in EngineId::ALL {
            assert_eq!(id.name().parse::<EngineId>().unwrap(), id);
            let json = serde_json::to_string(&id).unwrap();
            assert_eq!(serde_json::from_str::<EngineId>(&json).unwrap(), id);
            assert_eq!(IN_PROCESS.contains(&id), id.is_in_process(), "{id}");
        }
        for k in StatusKind::ALL {
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.name()));
            assert_eq!(serde_json::from_str::<StatusKind>(&json).unwrap(), k);
        }
        assert_eq!(
            "pallas".parse::<EngineId>(),
            Err(UnknownEngine("pallas".into()))
        );
        assert!(
            EngineId::Worker(Mode::HelionEager).is_helion() && !EngineId::PallasSim.is_helion()
        );
        // Eager mode neither shows the Pallas verdict nor runs the config's block sizes.
        let id = |n: &str| n.parse::<EngineId>().unwrap();
        assert!(id("helion-pallas").shows_helion_verdict());
        assert!(id("helion-tpu-lower").shows_helion_verdict());
        assert!(
            !id("helion-eager").shows_helion_verdict() && !id("pallas-sim").shows_helion_verdict()
        );
        assert_eq!(
            id("helion-eager").reference_tiling(),
            oracle::Tiling::HelionEager
        );
        for e in EngineId::ALL
            .into_iter()
            .filter(|e| e.name() != "helion-eager")
        {
            assert_eq!(e.reference_tiling(), oracle::Tiling::Effective, "{e}");
        }
    }

    #[test]
    fn runtimes_needed_names_each_environment_once() {
        let ids = [
            EngineId::Reference,
            EngineId::Worker(Mode::PallasInterpret),
            EngineId::Worker(Mode::HelionPallas),
            EngineId::Worker(Mode::HelionEager),
        ];
        assert_eq!(runtimes_needed(&ids), vec![Runtime::Jax, Runtime::Helion]);
        assert!(runtimes_needed(&ids[..1]).is_empty());
    }
}
