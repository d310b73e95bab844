//! The Helion engines: a case's kernel run through real Helion (`helion-pallas`,
//! `helion-eager`, `helion-tpu-lower`) by a persistent worker of the Helion environment
//! (`tpu-runner`'s `python/helion_worker.py`).
//!
//! Unlike the JAX engines they do not run our emitted module: they run the case script's kernel
//! (rendered by [`lang::render::render_kernel`]) on the case's input tensors, so they run on
//! every case, rejected by our compiler or not: Helion's verdict is one of the things checked.
//! A run ends in outputs (or `Lowered`), a clean refusal by one of Helion's documented error
//! classes ([`EngineStatus::Refused`]), or an exception from inside Helion
//! ([`EngineStatus::KernelError`], classified `helion-crash`).

use super::{Engine, EngineId, EngineRun, EngineStatus, Job};
use lang::ir::Arg;
use std::sync::Arc;
use std::time::Instant;
use tpu_runner::{CallArg, KernelCall, Mode, Pool, RunRequest};

/// One Helion mode over a shared Helion worker pool.
pub struct Helion {
    mode: Mode,
    pool: Arc<Pool>,
}

impl Helion {
    /// An engine running Helion `mode` on `pool` (a pool of the Helion runtime).
    pub fn new(mode: Mode, pool: Arc<Pool>) -> Helion {
        Helion { mode, pool }
    }
}

/// The request that runs `job`'s kernel in `mode`: the rendered kernel, the tensors the call
/// passes (in call order) and the call's arguments. `None` when an argument names no input (a
/// case the reference refuses as `invalid-input`).
pub fn request(mode: Mode, job: &Job<'_>) -> Option<RunRequest> {
    let case = job.case;
    let mut args = Vec::with_capacity(case.call.args.len());
    let mut tensors = 0;
    for a in &case.call.args {
        match a {
            Arg::Input(_) => {
                args.push(CallArg::Input(tensors));
                tensors += 1;
            }
            Arg::Int(v) => args.push(CallArg::Int(*v)),
        }
    }
    if tensors != job.inputs.len() {
        return None;
    }
    Some(RunRequest {
        mode,
        source: lang::render::render_kernel(case),
        inputs: job.inputs.to_vec(),
        call: Some(KernelCall {
            kernel: case.kernel.name.clone(),
            args,
        }),
    })
}

impl Engine for Helion {
    fn id(&self) -> EngineId {
        EngineId::Worker(self.mode)
    }

    fn run(&self, job: &Job<'_>) -> EngineRun {
        let start = Instant::now();
        let mut generated = None;
        let unavailable = self.pool.availability().mode_unavailable(self.mode);
        let status = match request(self.mode, job) {
            // Said by the worker at start (a build without what the mode needs): not a finding.
            _ if unavailable.is_some() => {
                EngineStatus::Unavailable(unavailable.unwrap_or_default().to_owned())
            }
            None => EngineStatus::NotRun("the call's arguments do not name its inputs".into()),
            Some(request) => match self.pool.run(&request) {
                Ok(result) => {
                    generated = result.generated;
                    match result.outcome {
                        Ok(_) if !self.mode.produces_outputs() => EngineStatus::Lowered,
                        Ok(outputs) => EngineStatus::Outputs(outputs),
                        Err(e) if e.refusal == Some(true) => EngineStatus::Refused {
                            class: e.kind.clone(),
                            message: first_line(&e.message).to_string(),
                            line: e.line,
                        },
                        Err(e) => super::kernel_error_status(&e),
                    }
                }
                Err(e) => super::run_error_status(e),
            },
        };
        EngineRun {
            engine: self.id(),
            status,
            seconds: start.elapsed().as_secs_f64(),
            generated,
        }
    }
}

fn first_line(s: &str) -> &str {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}
