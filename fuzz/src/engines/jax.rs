//! The JAX engines: the emitted module run by a persistent worker in one of the
//! `tpu-runner` modes (`pallas-interpret`, `pallas-tpu-interpret`, `pallas-tpu-lower`,
//! `pallas-tpu`).

use super::{Engine, EngineId, EngineRun, EngineStatus, Job};
use std::sync::Arc;
use std::time::Instant;
use tpu_runner::{Mode, Pool, RunRequest};

/// One JAX mode over a shared worker pool.
pub struct Jax {
    mode: Mode,
    pool: Arc<Pool>,
}

impl Jax {
    /// An engine running `mode` on `pool`.
    pub fn new(mode: Mode, pool: Arc<Pool>) -> Jax {
        Jax { mode, pool }
    }
}

impl Jax {
    fn status(&self, result: Result<tpu_runner::RunResult, tpu_runner::RunError>) -> EngineStatus {
        match result {
            Ok(result) => match result.outcome {
                Ok(_) if result.lowered || !self.mode.produces_outputs() => EngineStatus::Lowered,
                Ok(outputs) => EngineStatus::Outputs(outputs),
                Err(e) if e.is_engine_unavailable() => EngineStatus::Unavailable(e.message.clone()),
                Err(e) => super::kernel_error_status(&e),
            },
            Err(e) => super::run_error_status(e),
        }
    }

    fn not_run(&self) -> EngineStatus {
        EngineStatus::NotRun("the compiler rejected the kernel".into())
    }
}

impl Engine for Jax {
    fn id(&self) -> EngineId {
        EngineId::Worker(self.mode)
    }

    fn run(&self, job: &Job<'_>) -> EngineRun {
        let start = Instant::now();
        let status = match job.emitted {
            None => self.not_run(),
            Some(source) => {
                let request = RunRequest::module(self.mode, source, job.inputs.to_vec());
                self.status(self.pool.run(&request))
            }
        };
        EngineRun {
            engine: self.id(),
            status,
            seconds: start.elapsed().as_secs_f64(),
            generated: None,
            input_sets: None,
        }
    }

    /// One `run_batch` request for the jobs with a module (see [`Pool::run_batch`]); each run's
    /// `seconds` is its share of the batch's wall time. Which modules run alone instead is the
    /// caller's decision (the check keeps those likely to hit a known issue out of batches).
    fn run_batch(&self, jobs: &[Job<'_>]) -> Vec<EngineRun> {
        let mut runs: Vec<Option<EngineRun>> = vec![None; jobs.len()];
        let mut batched = Vec::new();
        for (i, j) in jobs.iter().enumerate() {
            match j.emitted {
                None => runs[i] = Some(self.run(j)),
                Some(source) => {
                    batched.push((i, RunRequest::module(self.mode, source, j.inputs.to_vec())))
                }
            }
        }
        let start = Instant::now();
        let (members, requests): (Vec<usize>, Vec<RunRequest>) = batched.into_iter().unzip();
        let results = self.pool.run_batch(self.mode, &requests).results;
        let share = start.elapsed().as_secs_f64() / requests.len().max(1) as f64;
        for (i, result) in members.into_iter().zip(results) {
            runs[i] = Some(EngineRun {
                engine: self.id(),
                status: self.status(result),
                seconds: share,
                generated: None,
                input_sets: None,
            });
        }
        runs.into_iter()
            .zip(jobs)
            .map(|(run, j)| run.unwrap_or_else(|| self.run(j)))
            .collect()
    }
}
