//! The `pallas-sim` engine: the emitted module's typed AST run in process by
//! [`sim`], with the TPU interpreter's semantics (no Python, microseconds per case).
//!
//! Statuses: the outputs; what the module raised as [`EngineStatus::KernelError`] with the
//! stage and class JAX would report (a dynamic out-of-range read: stage `run`, kind
//! `JaxRuntimeError (IndexError)`, as the TPU interpreter's callback error reaches the worker);
//! [`EngineStatus::Unavailable`] for a construct the executor does not model;
//! [`EngineStatus::Timeout`] when a run exceeds its statement budget;
//! [`EngineStatus::Crash`] if the executor panicked (a harness bug).

use super::{Engine, EngineId, EngineRun, EngineStatus, Job};
use sim::{ErrorKind, Interpreter, Program, SimError, SimOptions, SimStage};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

/// The in-process executor as an engine.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sim {
    /// Options of every run.
    pub options: SimOptions,
}

/// The engine status of an executor error.
pub fn status_of(e: &SimError, interpreter: Interpreter) -> EngineStatus {
    match e.kind {
        ErrorKind::Unsupported => {
            EngineStatus::Unavailable(format!("pallas-sim does not model this: {}", e.message))
        }
        ErrorKind::StepLimit => EngineStatus::Timeout(e.message.clone()),
        ErrorKind::IndexError
        | ErrorKind::ValueError
        | ErrorKind::TypeError
        | ErrorKind::AttributeError
        | ErrorKind::NameError
        | ErrorKind::UnboundLocalError
        | ErrorKind::ConcretizationTypeError
        | ErrorKind::OverflowError
        | ErrorKind::ZeroDivisionError
        | ErrorKind::AssertionError => {
            let stage = match e.stage {
                SimStage::Import => tpu_runner::Stage::Import,
                SimStage::Trace => tpu_runner::Stage::Trace,
                SimStage::Run => tpu_runner::Stage::Run,
            };
            // The TPU interpreter raises run-time errors inside a callback; the worker reports
            // the wrapper and the inner class.
            let kind = match (e.stage, interpreter) {
                (SimStage::Run, Interpreter::Tpu) => format!("JaxRuntimeError ({})", e.kind),
                _ => e.kind.name().to_string(),
            };
            EngineStatus::KernelError {
                stage,
                kind,
                message: e.message.clone(),
                traceback: if e.context.is_empty() {
                    String::new()
                } else {
                    format!("in {}", e.context.join(" > "))
                },
            }
        }
    }
}

impl Sim {
    /// Runs a module on inputs, catching a panic of the executor.
    pub fn status(
        &self,
        module: &lang::pallas::PallasModule,
        inputs: &[lang::tensor::Tensor],
    ) -> EngineStatus {
        let run = catch_unwind(AssertUnwindSafe(|| {
            Program::new(module).and_then(|p| p.run(inputs, &self.options))
        }));
        match run {
            Ok(Ok(outputs)) => EngineStatus::Outputs(outputs),
            Ok(Err(e)) => status_of(&e, self.options.interpreter),
            Err(panic) => EngineStatus::Crash(format!(
                "pallas-sim panicked (a harness bug): {}",
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            )),
        }
    }
}

impl Engine for Sim {
    fn id(&self) -> EngineId {
        EngineId::PallasSim
    }

    fn run(&self, job: &Job<'_>) -> EngineRun {
        let start = Instant::now();
        let status = match job.module {
            None => EngineStatus::NotRun("the compiler emitted no module".into()),
            Some(m) => self.status(m, job.inputs),
        };
        EngineRun {
            engine: EngineId::PallasSim,
            status,
            seconds: start.elapsed().as_secs_f64(),
            generated: None,
            input_sets: None,
        }
    }
}
