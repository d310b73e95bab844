//! The JAX engines: the emitted module run by a persistent worker in one of the
//! `tpu-runner` modes (`pallas-interpret`, `pallas-tpu-interpret`, `pallas-tpu-lower`,
//! `pallas-tpu`).

use super::{Engine, EngineRun, EngineStatus, Job};
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

impl Engine for Jax {
    fn name(&self) -> &str {
        self.mode.name()
    }

    fn run(&self, job: &Job<'_>) -> EngineRun {
        let start = Instant::now();
        let status = match job.emitted {
            None => EngineStatus::NotRun("the compiler rejected the kernel".into()),
            Some(source) => {
                let request = RunRequest::module(self.mode, source, job.inputs.to_vec());
                match self.pool.run(&request) {
                    Ok(result) => match result.outcome {
                        Ok(outputs) if result.lowered || !self.mode.produces_outputs() => {
                            let _ = outputs;
                            EngineStatus::Lowered
                        }
                        Ok(outputs) => EngineStatus::Outputs(outputs),
                        Err(e) if e.is_engine_unavailable() => {
                            EngineStatus::Unavailable(e.message.clone())
                        }
                        Err(e) => super::kernel_error_status(&e),
                    },
                    Err(e) => super::run_error_status(e),
                }
            }
        };
        EngineRun {
            engine: self.name().to_string(),
            status,
            seconds: start.elapsed().as_secs_f64(),
            generated: None,
        }
    }
}
