//! A pool of workers ([`Pool`]) shared by threads: each [`Pool::run`] takes an idle worker,
//! runs one request on it and gives it back. A worker that crashed is replaced and the request
//! retried once; a worker that timed out or broke the protocol is replaced on next use.

use crate::builds::{BuildIdentity, HelionBuild, Origin};
use crate::error::{KernelError, RunError};
use crate::mode::Mode;
use crate::mode::Runtime;
use crate::protocol::{
    Availability, BatchResult, HelionConfig, RunRequest, RunResult, StageSeconds,
};
use crate::worker::{Worker, XlaCompile, worker_script_for, worker_xla_flags_for};
use rayon::prelude::*;
use std::path::PathBuf;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// How a [`Pool`] starts and drives its workers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolConfig {
    /// The environment the workers run in; a request for a mode of another one is refused.
    pub runtime: Runtime,
    /// Number of worker processes (each holds ~300 MB and one core while busy).
    pub workers: usize,
    /// Per-request timeout; on expiry the worker is killed and replaced.
    pub timeout: Duration,
    /// How long a new worker may take to import JAX and say hello.
    pub startup_timeout: Duration,
    /// The Python interpreter (with JAX), e.g. from [`provision`](crate::provision()).
    pub python: PathBuf,
    /// The worker script; defaults to this crate's `python/worker.py`. Tests point it at
    /// stand-ins that misbehave.
    pub worker_script: PathBuf,
    /// How the workers' XLA compiles (the `XLA_FLAGS` they get, [`worker_xla_flags_for`]).
    pub xla_compile: XlaCompile,
    /// Helion workers: the Helion build under test ([`crate::builds`]); its overlay goes first
    /// on the workers' `PYTHONPATH`. `None` runs the venv's own (pinned) release.
    pub helion_build: Option<HelionBuild>,
}

impl PoolConfig {
    /// JAX workers with defaults: one worker per available core, 120 s per request, 120 s to
    /// start.
    pub fn new(python: impl Into<PathBuf>) -> PoolConfig {
        PoolConfig::for_runtime(Runtime::Jax, python)
    }

    /// Workers of `runtime` (the JAX or the Helion worker script) with the defaults of
    /// [`PoolConfig::new`]. A Helion worker imports torch, Helion and JAX (~6 s) and holds
    /// ~1 GB.
    pub fn for_runtime(runtime: Runtime, python: impl Into<PathBuf>) -> PoolConfig {
        PoolConfig {
            runtime,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            timeout: Duration::from_secs(120),
            startup_timeout: Duration::from_secs(120),
            python: python.into(),
            worker_script: worker_script_for(runtime),
            xla_compile: XlaCompile::default(),
            helion_build: None,
        }
    }

    /// Sets the Helion build the workers run.
    pub fn with_helion_build(mut self, build: Option<HelionBuild>) -> PoolConfig {
        self.helion_build = build;
        self
    }

    fn overlay(&self) -> Option<&std::path::Path> {
        self.helion_build
            .as_ref()
            .and_then(|b| b.overlay.as_deref())
    }

    /// Sets how the workers' XLA compiles.
    pub fn with_xla_compile(mut self, compile: XlaCompile) -> PoolConfig {
        self.xla_compile = compile;
        self
    }

    /// Sets the number of workers (at least one).
    pub fn with_workers(mut self, workers: usize) -> PoolConfig {
        self.workers = workers.max(1);
        self
    }

    /// Sets the per-request timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> PoolConfig {
        self.timeout = timeout;
        self
    }

    /// Sets the worker script.
    pub fn with_worker_script(mut self, script: impl Into<PathBuf>) -> PoolConfig {
        self.worker_script = script.into();
        self
    }
}

/// One place in the pool; `worker` is `None` until (re)started.
#[derive(Debug)]
struct Slot {
    index: usize,
    worker: Option<Worker>,
}

/// A fixed number of workers, usable from many threads at once.
#[derive(Debug)]
pub struct Pool {
    config: PoolConfig,
    idle: Mutex<Vec<Slot>>,
    available: Condvar,
    pids: Mutex<Vec<Option<u32>>>,
    hello: Availability,
}

/// Gives a checked-out slot back to the pool, even on panic.
struct Lease<'a> {
    pool: &'a Pool,
    slot: Option<Slot>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            let pid = slot.worker.as_ref().map(Worker::pid);
            lock(&self.pool.pids)[slot.index] = pid;
            lock(&self.pool.idle).push(slot);
            self.pool.available.notify_one();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The identity of the build a Helion worker runs, checked against what it imported: a
/// release or a wheel whose version differs from the worker's `helion.__version__` did not
/// shadow the venv's Helion (a broken overlay), and a run recorded under its name would lie.
/// The pinned release's version is the one the worker reports; a source tree's is the tree's
/// own ([`crate::builds::source_version`]), and the worker must have imported Helion from it.
fn running_build(build: &HelionBuild, hello: &Availability) -> Result<BuildIdentity, RunError> {
    let mut identity = build.identity();
    let reported = hello.helion.clone().unwrap_or_default();
    match &build.record.origin {
        // The environment's own release is what it reports (`PALLAS_DIFF_HELION_VERSION` or
        // `PALLAS_DIFF_HELION_PYTHON` may have chosen another than the default pin).
        Origin::Pinned => {
            identity.id = reported.clone();
            identity.version = reported;
        }
        Origin::Source { path } => {
            let imported = hello.helion_path.clone().unwrap_or_default();
            if !std::path::Path::new(&imported).starts_with(path) {
                return Err(RunError::WrongBuild {
                    build: build.id().to_owned(),
                    expected: format!("from {}", path.display()),
                    reported: format!("{reported} from {imported}"),
                });
            }
            // A tree that says no version of its own (no literal, no git tag): the metadata
            // the worker found beside the package it imported, when there is some.
            if crate::builds::source_version(path).is_none() && reported != "unknown" {
                identity.version = reported;
            }
        }
        Origin::Release | Origin::Wheel { .. } => {
            if reported != build.record.version {
                return Err(RunError::WrongBuild {
                    build: build.id().to_owned(),
                    expected: build.record.version.clone(),
                    reported,
                });
            }
        }
    }
    Ok(identity)
}

impl Pool {
    /// Starts `config.workers` workers in parallel and waits for each to import JAX.
    ///
    /// Fails with the first worker's error, e.g. [`RunError::JaxUnavailable`].
    pub fn new(config: PoolConfig) -> Result<Pool, RunError> {
        let n = config.workers.max(1);
        // A start is mostly waiting for Python to import JAX: one thread per worker, in a pool
        // of its own (the caller's pool may be busy, or smaller than `n`).
        let starters = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("worker-start-{i}"))
            .build()
            .expect("cannot start the worker start-up threads");
        let started: Vec<Result<Worker, RunError>> = starters.install(|| {
            (0..n)
                .into_par_iter()
                .with_max_len(1)
                .map(|_| {
                    Worker::spawn_with_flags(
                        &config.python,
                        &config.worker_script,
                        config.startup_timeout,
                        &worker_xla_flags_for(config.xla_compile),
                        config.overlay(),
                    )
                })
                .collect()
        });
        let mut workers = Vec::with_capacity(n);
        for w in started {
            workers.push(w?);
        }
        let mut hello = workers[0].hello().clone();
        if let Some(build) = &config.helion_build {
            hello.helion_build = Some(running_build(build, &hello)?);
        }
        let pids = workers.iter().map(|w| Some(w.pid())).collect();
        let idle = workers
            .into_iter()
            .enumerate()
            .map(|(index, w)| Slot {
                index,
                worker: Some(w),
            })
            .rev()
            .collect();
        Ok(Pool {
            config,
            idle: Mutex::new(idle),
            available: Condvar::new(),
            pids: Mutex::new(pids),
            hello,
        })
    }

    /// The configuration the pool was started with.
    pub fn config(&self) -> &PoolConfig {
        &self.config
    }

    /// Number of workers.
    pub fn size(&self) -> usize {
        lock(&self.pids).len()
    }

    /// Process ids of the live workers (a worker being replaced has none).
    pub fn worker_pids(&self) -> Vec<u32> {
        lock(&self.pids).iter().flatten().copied().collect()
    }

    /// What the first worker reported at start-up (Python, JAX, devices, TPU).
    pub fn availability(&self) -> &Availability {
        &self.hello
    }

    /// Runs one module on an idle worker (blocking until one is free).
    ///
    /// `Ok` holds the engine's outcome, outputs or a [`KernelError`](crate::KernelError);
    /// `Err` is a harness failure. A crashed worker is replaced and the request retried once;
    /// a second crash is [`RunError::EngineCrash`].
    pub fn run(&self, request: &RunRequest) -> Result<RunResult, RunError> {
        self.run_with_timeout(request, self.config.timeout)
    }

    /// [`Pool::run`] with another per-request timeout than the configured one.
    pub fn run_with_timeout(
        &self,
        request: &RunRequest,
        timeout: Duration,
    ) -> Result<RunResult, RunError> {
        self.check_runtime(request.mode)?;
        let mut lease = self.checkout();
        let slot = lease.slot.as_mut().expect("a lease holds its slot");
        match self.run_on(slot, request, timeout) {
            Err(RunError::WorkerCrashed { .. }) => match self.run_on(slot, request, timeout) {
                Err(RunError::WorkerCrashed {
                    status,
                    stderr_tail,
                }) => Err(RunError::EngineCrash {
                    status,
                    stderr_tail,
                }),
                other => other,
            },
            other => other,
        }
    }

    /// Runs several emitted modules of one JAX `mode` on one idle worker, in one request: the
    /// interpreters compile them as one function, which costs less per kernel than one compile
    /// each (`pallas-diff bench --jax` measures it). Every result is still one kernel's: a batch
    /// that fails as a whole is run again kernel by kernel in the worker, and a batch that times
    /// out or crashes its worker twice is run again kernel by kernel here, each with the
    /// configured timeout, so a hang or a crash names its kernel.
    ///
    /// Requests whose mode is not `mode`, and modes of another runtime, are answered with
    /// [`RunError::WrongRuntime`] / run one by one (Helion workers have no batch request).
    pub fn run_batch(&self, mode: Mode, requests: &[RunRequest]) -> BatchResult {
        let mismatched = requests.iter().any(|r| r.mode != mode || r.call.is_some());
        if mode.runtime() != self.config.runtime
            || mode.runtime() != crate::mode::Runtime::Jax
            || mismatched
            || requests.len() < 2
        {
            return self.run_each(requests);
        }
        let attempt = {
            let mut lease = self.checkout();
            let slot = lease.slot.as_mut().expect("a lease holds its slot");
            let first = self.batch_on(slot, mode, requests);
            match first {
                Err(RunError::WorkerCrashed { .. }) => self.batch_on(slot, mode, requests),
                other => other,
            }
        };
        match attempt {
            Ok((results, stages, split)) => BatchResult {
                results: results.into_iter().map(Ok).collect(),
                stages,
                split,
            },
            // A harness failure of the whole batch: find the kernel it belongs to.
            Err(_) => {
                let mut each = self.run_each(requests);
                each.split = true;
                each
            }
        }
    }

    fn run_each(&self, requests: &[RunRequest]) -> BatchResult {
        let mut stages = StageSeconds::default();
        let results = requests
            .iter()
            .map(|r| {
                let result = self.run(r);
                if let Ok(r) = &result {
                    stages.add(&r.stages);
                }
                result
            })
            .collect();
        BatchResult {
            results,
            stages,
            split: false,
        }
    }

    fn batch_on(
        &self,
        slot: &mut Slot,
        mode: Mode,
        requests: &[RunRequest],
    ) -> Result<(Vec<RunResult>, StageSeconds, bool), RunError> {
        let result = self
            .ensure_worker(slot)?
            .run_batch(mode, requests, self.config.timeout);
        Self::drop_if_unhealthy(slot);
        result
    }

    /// Asks an idle Helion worker for Helion's default config of `request`'s kernel
    /// ([`Worker::default_config`]).
    pub fn default_config(
        &self,
        request: &RunRequest,
    ) -> Result<Result<HelionConfig, KernelError>, RunError> {
        self.check_runtime(request.mode)?;
        let mut lease = self.checkout();
        let slot = lease.slot.as_mut().expect("a lease holds its slot");
        let result = self
            .ensure_worker(slot)?
            .default_config(request, self.config.timeout);
        Self::drop_if_unhealthy(slot);
        result
    }

    /// `Err` when `mode` belongs to another runtime than this pool's workers.
    fn check_runtime(&self, mode: Mode) -> Result<(), RunError> {
        if mode.runtime() == self.config.runtime {
            return Ok(());
        }
        Err(RunError::WrongRuntime {
            mode,
            runtime: self.config.runtime,
        })
    }

    /// Asks an idle worker to probe its environment.
    pub fn probe(&self) -> Result<Availability, RunError> {
        let mut lease = self.checkout();
        let slot = lease.slot.as_mut().expect("a lease holds its slot");
        let result = self.ensure_worker(slot)?.probe(self.config.timeout);
        Self::drop_if_unhealthy(slot);
        result
    }

    fn run_on(
        &self,
        slot: &mut Slot,
        request: &RunRequest,
        timeout: Duration,
    ) -> Result<RunResult, RunError> {
        let result = self.ensure_worker(slot)?.run(request, timeout);
        Self::drop_if_unhealthy(slot);
        result
    }

    fn drop_if_unhealthy(slot: &mut Slot) {
        if slot.worker.as_ref().is_some_and(|w| !w.is_healthy()) {
            slot.worker = None;
        }
    }

    fn ensure_worker<'s>(&self, slot: &'s mut Slot) -> Result<&'s mut Worker, RunError> {
        if slot.worker.is_none() {
            lock(&self.pids)[slot.index] = None;
            let c = &self.config;
            let flags = worker_xla_flags_for(c.xla_compile);
            let worker = Worker::spawn_with_flags(
                &c.python,
                &c.worker_script,
                c.startup_timeout,
                &flags,
                c.overlay(),
            )?;
            lock(&self.pids)[slot.index] = Some(worker.pid());
            slot.worker = Some(worker);
        }
        Ok(slot.worker.as_mut().expect("just started"))
    }

    fn checkout(&self) -> Lease<'_> {
        let mut idle = lock(&self.idle);
        loop {
            if let Some(slot) = idle.pop() {
                return Lease {
                    pool: self,
                    slot: Some(slot),
                };
            }
            idle = self.available.wait(idle).unwrap_or_else(|e| e.into_inner());
        }
    }
}
