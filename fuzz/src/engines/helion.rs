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
//!
//! The modes with outputs also run the kernel they compiled once on the case's extra input
//! sets ([`crate::input_sets`]) in the same request: the engine derives them, has the reference
//! judge each (a set it calls invalid is dropped and counted), and compares each kept set's
//! outputs with the reference's by the one comparison ([`crate::compare::compare`]). The first
//! set that differs becomes the run's mismatch, naming the set ([`EngineRun::input_sets`]); a
//! set the kernel raises on makes the run a kernel error naming the set.

use super::{Engine, EngineId, EngineRun, EngineStatus, Job};
use crate::input_sets::{self, InputSet, Judged, SetLabel, SetsRun};
use lang::ir::Arg;
use lang::tensor::Tensor;
use std::sync::Arc;
use std::time::Instant;
use tpu_runner::{CallArg, KernelCall, Mode, Pool, RunRequest};

/// One Helion mode over a shared Helion worker pool.
pub struct Helion {
    mode: Mode,
    pool: Arc<Pool>,
    extra_sets: usize,
}

impl Helion {
    /// An engine running Helion `mode` on `pool` (a pool of the Helion runtime), with the
    /// process's number of extra input sets ([`input_sets::extra_sets`]).
    pub fn new(mode: Mode, pool: Arc<Pool>) -> Helion {
        Helion::with_extra_sets(mode, pool, input_sets::extra_sets())
    }

    /// [`Helion::new`] running `extra_sets` extra input sets per case (0: the case's own only).
    pub fn with_extra_sets(mode: Mode, pool: Arc<Pool>, extra_sets: usize) -> Helion {
        Helion {
            mode,
            pool,
            extra_sets,
        }
    }
}

/// One extra input set the reference kept: the set, the reference's outputs and scale,
/// and (for a set's finite twin, [`input_sets::finite_twin`]) the position of its set in the
/// kept list.
struct Kept {
    set: InputSet,
    want: Vec<Tensor>,
    scale: crate::compare::RefScale,
    twin_of: Option<usize>,
}

/// The extra input sets of `job` the reference keeps, each set with NaN or ±inf followed by
/// its finite twin (when the reference keeps that too), and the run's counts so far. None when
/// the case's own inputs are not all made here.
fn kept_sets(engine: EngineId, job: &Job<'_>, extra: usize) -> Option<(Vec<Kept>, SetsRun)> {
    if extra == 0 {
        return None;
    }
    let own = job.case.input_tensors().ok()?;
    let mut run = SetsRun::default();
    let mut kept = Vec::new();
    let tiling = engine.reference_tiling();
    for set in input_sets::derive(job.case, &own, extra) {
        run.derived += 1;
        match input_sets::judge(job.case, &set, tiling) {
            Judged::Compare { outputs, scale } => {
                let twin = input_sets::finite_twin(&set);
                kept.push(Kept {
                    set,
                    want: outputs,
                    scale,
                    twin_of: None,
                });
                let at = kept.len() - 1;
                if let Some(twin) = twin
                    && let Judged::Compare { outputs, scale } =
                        input_sets::judge(job.case, &twin, tiling)
                {
                    kept.push(Kept {
                        set: twin,
                        want: outputs,
                        scale,
                        twin_of: Some(at),
                    });
                }
            }
            Judged::Dropped(why) => run.count_dropped(why),
        }
    }
    Some((kept, run))
}

/// The kernel's tensor arguments of `set` (its inputs in `Case::inputs` order), in call order.
fn set_args(job: &Job<'_>, set: &InputSet) -> Vec<Tensor> {
    job.case
        .kernel_arg_positions()
        .into_iter()
        .map(|p| set.inputs[p].clone())
        .collect()
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
            Arg::Float(v) => args.push(CallArg::Float(*v)),
            Arg::Bool(b) => args.push(CallArg::Bool(*b)),
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
        input_sets: Vec::new(),
    })
}

impl Engine for Helion {
    fn id(&self) -> EngineId {
        EngineId::Worker(self.mode)
    }

    fn run(&self, job: &Job<'_>) -> EngineRun {
        let start = Instant::now();
        let mut generated = None;
        let mut sets_run = None;
        let unavailable = self.pool.availability().mode_unavailable(self.mode);
        let status = match request(self.mode, job) {
            // Said by the worker at start (a build without what the mode needs): not a finding.
            _ if unavailable.is_some() => {
                EngineStatus::Unavailable(unavailable.unwrap_or_default().to_owned())
            }
            None => EngineStatus::NotRun("the call's arguments do not name its inputs".into()),
            Some(mut request) => {
                let sets = if self.mode.produces_outputs() {
                    kept_sets(self.id(), job, self.extra_sets)
                } else {
                    None
                };
                if let Some((kept, _)) = &sets {
                    request.input_sets = kept.iter().map(|k| set_args(job, &k.set)).collect();
                }
                match self.pool.run(&request) {
                    Ok(result) => {
                        generated = result.generated;
                        let mut status = match result.outcome {
                            Ok(_) if !self.mode.produces_outputs() => EngineStatus::Lowered,
                            Ok(outputs) => {
                                EngineStatus::Outputs(written_outputs(job.case, outputs))
                            }
                            Err(e) if e.refusal == Some(true) => EngineStatus::Refused {
                                class: e.kind.clone(),
                                message: first_line(&e.message).to_string(),
                                line: e.line,
                            },
                            Err(e) => super::kernel_error_status(&e),
                        };
                        if let (Some((kept, mut run)), EngineStatus::Outputs(_)) = (sets, &status) {
                            if let Some(failed) =
                                self.compare_sets(job, &kept, result.set_outcomes, &mut run)
                            {
                                status = failed;
                            }
                            sets_run = Some(run);
                        }
                        status
                    }
                    Err(e) => super::run_error_status(e),
                }
            }
        };
        EngineRun {
            engine: self.id(),
            status,
            seconds: start.elapsed().as_secs_f64(),
            generated,
            input_sets: sets_run,
        }
    }
}

/// The outputs of a run: what the kernel returned or, for a kernel that returns nothing, what
/// it wrote. The worker then sends every tensor argument after the call, in call order; the
/// parameters the kernel writes (`Kernel::written_params`) are its outputs, as for every
/// engine.
fn written_outputs(
    case: &lang::ir::Case,
    outputs: Vec<lang::tensor::Tensor>,
) -> Vec<lang::tensor::Tensor> {
    let written = case.kernel.written_params();
    if written.is_empty() {
        return outputs;
    }
    let tensor_position = |param: usize| {
        case.call
            .args
            .iter()
            .take(param)
            .filter(|a| matches!(a, Arg::Input(_)))
            .count()
    };
    let picked: Option<Vec<_>> = written
        .iter()
        .map(|&p| outputs.get(tensor_position(p)).cloned())
        .collect();
    // Fewer tensors than the call passes: the outputs as sent, for the comparison to report.
    picked.unwrap_or(outputs)
}

impl Helion {
    /// Compares the kernel's outcome on each kept set with the reference's, counting into
    /// `run`; the first mismatch is kept in `run`. Returns the status that replaces the run's
    /// outputs when the kernel raised on a set (a kernel error naming the set).
    fn compare_sets(
        &self,
        job: &Job<'_>,
        kept: &[Kept],
        outcomes: Vec<Result<Vec<Tensor>, tpu_runner::KernelError>>,
        run: &mut SetsRun,
    ) -> Option<EngineStatus> {
        if outcomes.len() != kept.len() {
            return Some(EngineStatus::Crash(format!(
                "harness failure talking to the worker: {} input sets sent, {} answered",
                kept.len(),
                outcomes.len()
            )));
        }
        let names = crate::check::output_names(job.case);
        let mut mismatches: Vec<Option<crate::compare::Mismatch>> = Vec::new();
        for (k, outcome) in kept.iter().zip(outcomes) {
            let label = SetLabel::of(&k.set);
            match outcome {
                Ok(got) => {
                    let got = written_outputs(job.case, got);
                    run.compared += 1;
                    let m = crate::compare::compare(self.id(), &names, &got, &k.want, k.scale)
                        .err()
                        .map(|m| {
                            let mut m = *m;
                            m.input_set = Some(label);
                            m
                        });
                    mismatches.push(m);
                }
                Err(e) => {
                    run.failed_inputs = k.set.inputs.clone();
                    let mut status = super::kernel_error_status(&e);
                    if let EngineStatus::KernelError { message, .. } = &mut status {
                        *message = format!("on {label}: {message}");
                    }
                    return Some(status);
                }
            }
        }
        for (i, (k, m)) in kept.iter().zip(&mismatches).enumerate() {
            let Some(m) = m else { continue };
            // NaN where the reference has a value, on a set whose finite twin agrees: Helion's
            // mask by multiplication read a non-finite element torch does not read.
            let twin_agrees = kept
                .iter()
                .zip(&mismatches)
                .any(|(t, tm)| t.twin_of == Some(i) && tm.is_none());
            if k.twin_of.is_none() && m.kind == crate::compare::MismatchKind::Poison && twin_agrees
            {
                run.masked_nonfinite += 1;
                continue;
            }
            if run.mismatch.is_none() {
                run.mismatch = Some(m.clone());
                run.failed_inputs = k.set.inputs.clone();
            }
        }
        None
    }
}

fn first_line(s: &str) -> &str {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}
