//! One case through the whole pipeline: compile, run the reference and every engine, classify.
//! This is what `pallas-diff check` prints and what a campaign does per case.

use crate::compare;
use crate::engines::{Engine, EngineId, EngineRun, EngineStatus, Job};
use crate::outcome::{Classified, CompilerResult, Outcome, classify};
use compiler::compile::{CodegenOptions, Compiled, compile};
use compiler::verdict::{Rejection, Verdict};
use lang::ir::{Case, ExprKind, StmtKind};
use lang::tensor::Tensor;
use serde::Serialize;
use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;
use std::time::Instant;

/// Everything known about one checked case.
#[derive(Debug, Serialize)]
pub struct CaseReport {
    /// How it ended.
    pub outcome: Outcome,
    /// The engine that decided the outcome, if any.
    pub decided_by: Option<EngineId>,
    /// The compiler's verdict (absent when it crashed).
    pub verdict: Option<Verdict>,
    /// Why the harness could not run a lowered kernel (codegen gap), if so.
    pub gap: Option<String>,
    /// The compiler's panic message and backtrace, for `compiler-crash`.
    pub crash: Option<String>,
    /// The reference run.
    pub reference: EngineRun,
    /// The reference tiled as Helion's ref eager mode tiles (one tile per config-driven
    /// `hl.tile`; [`oracle::Tiling::HelionEager`]): what `helion-eager` is compared with. Present
    /// only when that engine ran.
    pub eager_reference: Option<EngineRun>,
    /// The engine runs, in the order given.
    pub engines: Vec<EngineRun>,
    /// The mismatch, for `mismatch`.
    pub mismatch: Option<compare::Mismatch>,
    /// The known issue, for `known-issue`.
    pub known_issue: Option<&'static str>,
    /// The emitted module, when lowered.
    #[serde(skip)]
    pub emitted: Option<String>,
    /// Seconds spent compiling.
    pub compile_seconds: f64,
    /// The planner's and codegen's decisions on the case ([`compiler::decisions`]): what a
    /// finding in our emitted code is bucketed by. Empty unless the case was planned.
    pub decisions: compiler::decisions::Decisions,
    /// Of the engines that produced outputs, whether each matched its reference (the one
    /// comparison, [`compare::compare`]), in run order: the per-engine values behind
    /// [`CaseReport::helion_value_agreement`], whichever engine decided the outcome.
    pub values_match: Vec<(EngineId, bool)>,
}

/// How real Helion's values and our emitted module's compare on a case both lowered and ran
/// ([`CaseReport::helion_value_agreement`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueAgreement {
    /// Both match the reference.
    Agree,
    /// Ours matches, Helion's does not: a Helion finding.
    HelionDiffers,
    /// Helion's matches, ours does not: a finding in our compiler (or the model).
    OursDiffers,
    /// Neither matches.
    BothDiffer,
}

/// What real Helion made of a case as rendered ([`CaseReport::helion_health`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HelionHealth {
    /// Helion lowered it (and ran it, in interpret mode).
    Lowered,
    /// Helion refused it with one of its documented error classes: a clean verdict.
    Refused(String),
    /// Helion could not run it at all: the exception's cause key ([`crate::exception::cause`]),
    /// `timeout` or `worker died`.
    CannotRun(String),
}

impl CaseReport {
    /// Whether real Helion got the case to its code generation (lowered it, or raised only
    /// while running or lowering it for TPU), when a Helion engine ran and shows its verdict;
    /// `Some(false)` for a refusal or an exception while tracing (the generator's reach).
    pub fn helion_reached_codegen(&self) -> Option<bool> {
        let runs: Vec<&EngineRun> = self
            .engines
            .iter()
            .filter(|e| e.engine.is_helion())
            .collect();
        if runs.is_empty() {
            return None;
        }
        let shown = runs.iter().find_map(|r| crate::outcome::helion_verdict(r));
        let ran = runs.iter().any(|r| {
            matches!(
                r.status,
                EngineStatus::Refused { .. } | EngineStatus::KernelError { .. }
            ) || r.status.outputs().is_some()
        });
        match shown {
            Some(v) => Some(v.is_ok()),
            None if ran => Some(false),
            None => None,
        }
    }

    /// For each Helion engine that ran the case to outputs, how its values compare with our
    /// emitted module's (the first in-process or JAX engine with outputs), both judged against
    /// the reference; empty when our module or Helion produced none.
    pub fn helion_value_agreement(&self) -> Vec<(EngineId, ValueAgreement)> {
        let Some(ours) = self
            .values_match
            .iter()
            .find(|(e, _)| !e.is_helion())
            .map(|(_, ok)| *ok)
        else {
            return Vec::new();
        };
        self.values_match
            .iter()
            .filter(|(e, _)| e.is_helion())
            .map(|(e, theirs)| {
                let a = match (ours, *theirs) {
                    (true, true) => ValueAgreement::Agree,
                    (true, false) => ValueAgreement::HelionDiffers,
                    (false, true) => ValueAgreement::OursDiffers,
                    (false, false) => ValueAgreement::BothDiffer,
                };
                (*e, a)
            })
            .collect()
    }

    /// What real Helion made of the case as rendered (the generator's health, issue 18): from
    /// the `helion-pallas` run (the case script run unchanged), else `helion-eager`'s; `None`
    /// when neither ran it.
    pub fn helion_health(&self) -> Option<HelionHealth> {
        use tpu_runner::Mode;
        let run = [Mode::HelionPallas, Mode::HelionEager]
            .iter()
            .find_map(|m| {
                self.engines
                    .iter()
                    .find(|e| e.engine == EngineId::Worker(*m))
            })?;
        match &run.status {
            EngineStatus::Outputs(_) | EngineStatus::Lowered => Some(HelionHealth::Lowered),
            EngineStatus::Refused { .. } if self.refusal_is_known_issue(run) => Some(
                HelionHealth::CannotRun(format!("known issue {}", self.known_issue?)),
            ),
            EngineStatus::Refused { class, .. } => Some(HelionHealth::Refused(class.clone())),
            EngineStatus::KernelError {
                stage,
                kind,
                message,
                traceback,
            } => Some(HelionHealth::CannotRun(crate::exception::cause(
                *stage, kind, message, traceback,
            ))),
            EngineStatus::Timeout(_) => Some(HelionHealth::CannotRun("timeout".to_string())),
            EngineStatus::Crash(_) => Some(HelionHealth::CannotRun("worker died".to_string())),
            EngineStatus::Unavailable(_)
            | EngineStatus::NotRun(_)
            | EngineStatus::Invalid { .. } => None,
        }
    }

    /// Whether `run` is a Helion refusal that the case's known issue explains: a known Helion
    /// bug that replaces Helion's real verdict (`helion-refusal-masked-by-default-config`).
    fn refusal_is_known_issue(&self, run: &EngineRun) -> bool {
        matches!(run.status, EngineStatus::Refused { .. })
            && self.known_issue.is_some_and(|id| {
                crate::known_issues::known_issue(run.engine, &run.status)
                    .is_some_and(|k| k.id == id)
            })
    }

    /// Our verdict against real Helion's, when a Helion engine ran and its run shows Helion's
    /// verdict (see [`crate::outcome::helion_verdict`]): our verdict's key (`lowered` or the
    /// rule id) and whether the two agree.
    pub fn helion_agreement(&self) -> Option<(String, bool)> {
        let ours = match &self.verdict {
            Some(Verdict::Lowered) => CompilerResult::Lowered,
            Some(Verdict::Rejected(r)) => CompilerResult::Rejected(r.class()),
            None => return None,
        };
        let ours = if self.gap.is_some() {
            CompilerResult::Gap
        } else {
            ours
        };
        let (run, theirs) = self
            .engines
            .iter()
            .filter(|e| e.engine.shows_helion_verdict())
            .find_map(|e| Some((e, crate::outcome::helion_verdict(e)?)))?;
        // A known Helion bug that masks its verdict is set apart, like Helion's crashes.
        if self.refusal_is_known_issue(run) {
            return None;
        }
        let key = match self.rejection() {
            Some(r) => r.rule.id().to_string(),
            None => "lowered".to_string(),
        };
        Some((key, crate::outcome::verdicts_agree(ours, theirs)))
    }

    /// Whether Helion's refusal message is our rule's (`Rule::matches_message`), when both
    /// refused with the same error class; `None` otherwise.
    pub fn helion_message_agreement(&self) -> Option<bool> {
        let rule = self.rejection()?.rule;
        let message = self
            .engines
            .iter()
            .filter(|e| e.engine == EngineId::Worker(tpu_runner::Mode::HelionPallas))
            .find_map(|e| match &e.status {
                EngineStatus::Refused { class, message, .. } if class == rule.class().name() => {
                    Some(message.as_str())
                }
                _ => None,
            })?;
        Some(rule.matches_message(message))
    }

    /// Whether our compiler lowered the kernel (or accepted it where the codegen has a gap).
    pub fn lowered(&self) -> bool {
        matches!(self.verdict, Some(Verdict::Lowered))
    }

    /// The rejection, when the compiler refused the kernel.
    pub fn rejection(&self) -> Option<&Rejection> {
        match &self.verdict {
            Some(Verdict::Rejected(r)) => Some(r),
            Some(Verdict::Lowered) | None => None,
        }
    }
}

/// Names of the kernel's returned values (for reports); positional when not a plain name.
pub fn output_names(case: &Case) -> Vec<String> {
    let mut names = Vec::new();
    for s in &case.kernel.body {
        if let StmtKind::Return(values) = &s.kind {
            names = values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    if let ExprKind::Name(n) = &v.kind {
                        n.clone()
                    } else {
                        format!("output {i}")
                    }
                })
                .collect();
        }
    }
    names
}

/// Compiles `case`, catching a panic of the compiler (the system under test) at this boundary:
/// a panic there is a `compiler-crash` finding, reported with its message and backtrace.
pub fn compile_guarded(case: &Case, options: &CodegenOptions) -> Result<Compiled, String> {
    install_panic_capture();
    let result = catch_unwind(AssertUnwindSafe(|| compile(case, options)));
    result.map_err(|_| LAST_PANIC.with(|p| p.take()).unwrap_or_default())
}

thread_local! {
    /// The message and backtrace of the last panic on this thread, captured by the hook.
    static LAST_PANIC: std::cell::Cell<Option<String>> = const { std::cell::Cell::new(None) };
}

/// Installs, once per process, a panic hook that records the panic on its thread (for
/// `compiler-crash` reports) and then runs the previous hook. Swapping hooks per case would take a
/// global lock on every compile.
fn install_panic_capture() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let bt = std::backtrace::Backtrace::force_capture();
            LAST_PANIC.with(|p| p.set(Some(format!("{info}\n{bt}"))));
            previous(info);
        }));
    });
}

/// How much of a case [`check_case_to`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Everything: the reference runs on every case the compiler did not crash on, so a case
    /// the compiler rejects is told apart as `rejected` or `invalid-case` (`check`, `replay`,
    /// reports, reduction).
    Full,
    /// Only what can decide a finding: when the compiler rejects a kernel (or the codegen does
    /// not model it) the outcome is `rejected` (or `unsupported`) whatever the reference says,
    /// so neither the input tensors nor the reference are made unless a Helion engine runs
    /// (Helion's verdict and values on that kernel are judged against the reference).
    /// `invalid-case` then shows up only for lowered kernels, and the module is printed only
    /// for a finding (the one report kept) or an engine that runs its text (JAX).
    ///
    /// What the campaigns and the `cargo fuzz` targets check. Their cases are generated, and
    /// the generator promises cases the reference evaluates (`fuzz::generators::admissible`;
    /// `fuzz --engines oracle,pallas-sim --cases 100000 --seed 7` has 0 `invalid-case`), so
    /// on a refused kernel the reference could only confirm what is known. It was the largest
    /// cost a refused case had: 59 of its 110 µs (`pallas-diff bench`, 2026-12-04: reference
    /// inputs 11 µs, run 48), a third of the cases a campaign keeps. A kernel the compiler
    /// lowers runs the reference as in a full check. Printing the module into every lowered
    /// case's report was another 16.9 µs per lowered case (`bench`, 2026-12-02).
    FindingsOnly,
}

/// Runs one case through the compiler, the reference and `engines` (JAX engines etc.), and
/// classifies the outcome.
pub fn check_case(
    case: &Case,
    engines: &[Box<dyn Engine>],
    options: &CodegenOptions,
) -> CaseReport {
    check_case_to(Depth::Full, case, engines, options)
}

/// [`check_case`], running only as much as `depth` asks.
pub fn check_case_to(
    depth: Depth,
    case: &Case,
    engines: &[Box<dyn Engine>],
    options: &CodegenOptions,
) -> CaseReport {
    PreparedCase::new(depth, case, options).check(engines)
}

/// [`check_case`] on several cases at once, one report per case in order: each engine gets the
/// cases it runs as one [`Engine::run_batch`] (the JAX engines compile a batch as one function,
/// which costs less per kernel than a compile each). The reports are those [`check_case`]
/// gives one by one.
pub fn check_cases(
    cases: &[&Case],
    engines: &[Box<dyn Engine>],
    options: &CodegenOptions,
) -> Vec<CaseReport> {
    let prepared: Vec<PreparedCase<'_>> = cases
        .iter()
        .map(|case| PreparedCase::new(Depth::Full, case, options))
        .collect();
    let prepared: Vec<&PreparedCase<'_>> = prepared.iter().collect();
    check_prepared(&prepared, engines)
}

/// Runs `engines` on cases prepared once ([`PreparedCase`]) and classifies each, one report per
/// case in order; each engine gets the cases it runs as one [`Engine::run_batch`]. The same
/// prepared cases can be checked again with other engines: nothing is compiled or evaluated
/// twice.
pub fn check_prepared(
    prepared: &[&PreparedCase<'_>],
    engines: &[Box<dyn Engine>],
) -> Vec<CaseReport> {
    let engines: Vec<&dyn Engine> = engines
        .iter()
        .filter(|e| e.id() != EngineId::Reference)
        .map(|e| e.as_ref())
        .collect();
    let needs = Needs::of(&engines);
    // runs[c][e]: engine e's run of case c.
    let mut runs: Vec<Vec<Option<EngineRun>>> = vec![vec![None; engines.len()]; prepared.len()];
    for (k, engine) in engines.iter().enumerate() {
        let mut members = Vec::new();
        let mut jobs = Vec::new();
        for (c, p) in prepared.iter().enumerate() {
            match p.skip_reason(needs, engine.id()) {
                Some(why) => {
                    runs[c][k] = Some(EngineRun::instant(
                        engine.id(),
                        EngineStatus::NotRun(why.to_string()),
                    ))
                }
                None => {
                    let job = p.job(needs);
                    if runs_alone(engine.id(), &job) {
                        runs[c][k] = Some(engine.run(&job));
                    } else {
                        members.push(c);
                        jobs.push(job);
                    }
                }
            }
        }
        if jobs.is_empty() {
            continue;
        }
        for (c, run) in members.into_iter().zip(engine.run_batch(&jobs)) {
            runs[c][k] = Some(run);
        }
    }
    prepared
        .iter()
        .zip(runs)
        .map(|(p, runs)| p.finish(needs, runs.into_iter().flatten().collect()))
        .collect()
}

/// Whether `engine` runs `job` on its own rather than in a batch: its module likely hits a
/// known issue of the engine ([`crate::known_issues::likely_known_issue`]). A batch with one
/// failing kernel is compiled again kernel by kernel, which cost `pallas-tpu-interpret` more
/// than batching saved (measured 2026-12-01, `bench --jax 48 --batch 8`: 0.73x kernels per CPU
/// second with 4 of 6 batches split by the Ref-reshape issue, 14% of its kernels). Such jobs
/// run before the engine's batch, as they did inside the JAX engine's batch.
fn runs_alone(engine: EngineId, job: &Job<'_>) -> bool {
    job.emitted
        .is_some_and(|source| crate::known_issues::likely_known_issue(engine, source))
}

/// What a set of engines needs of a prepared case beyond the compile.
#[derive(Clone, Copy, Debug)]
struct Needs {
    /// A Helion engine runs every case the compiler did not crash on (Helion's verdict is
    /// checked too) and its outputs are compared with the reference's, so the reference runs
    /// on rejected kernels as well.
    helion: bool,
    /// An engine compares with the reference tiled as Helion's eager mode tiles.
    eager_reference: bool,
    /// An engine runs the module's text (JAX), not only its typed AST (in-process).
    text: bool,
}

impl Needs {
    fn of(engines: &[&dyn Engine]) -> Needs {
        Needs {
            helion: engines.iter().any(|e| e.id().is_helion()),
            eager_reference: engines
                .iter()
                .any(|e| e.id().reference_tiling() == oracle::Tiling::HelionEager),
            text: engines.iter().any(|e| !e.id().is_in_process()),
        }
    }
}

/// A case's input tensors, made once for the reference (all of them) and the engines.
#[derive(Clone)]
struct Inputs {
    all: Result<Vec<Tensor>, lang::ir::inputs::InputError>,
    /// The kernel's arguments when they are not all the inputs in order (usually they are,
    /// and then they are not copied).
    args: Option<Vec<Tensor>>,
}

/// One case prepared once for any set of engines: compiled (a compiler panic caught as a
/// `compiler-crash`), and, on first need, its inputs made and its reference (and Helion-eager
/// reference) run. [`PreparedCase::check`] runs engines on it and classifies; calling it again
/// with other engines (a JAX confirmation, a cross-check, a reduction candidate's engine run)
/// reuses the compile and the reference instead of recomputing them.
pub struct PreparedCase<'a> {
    depth: Depth,
    case: Cow<'a, Case>,
    compiled: Result<Compiled, String>,
    compile_seconds: f64,
    inputs: OnceLock<Inputs>,
    /// The reference run and what it tells the comparison's tolerance
    /// ([`compare::RefScale`]).
    reference: OnceLock<(EngineRun, compare::RefScale)>,
    eager_reference: OnceLock<crate::engines::reference::TiledRun>,
}

impl std::fmt::Debug for PreparedCase<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedCase")
            .field("kernel", &self.case.kernel.name)
            .field("depth", &self.depth)
            .field("compiled", &self.compiled.as_ref().map(Compiled::verdict))
            .field("reference_ran", &self.reference.get().is_some())
            .finish_non_exhaustive()
    }
}

impl<'a> PreparedCase<'a> {
    /// Compiles `case`; nothing else runs until an engine set needs it.
    pub fn new(depth: Depth, case: &'a Case, options: &CodegenOptions) -> Self {
        PreparedCase::with(depth, Cow::Borrowed(case), options)
    }

    /// [`PreparedCase::new`] on a case it keeps (to hand to another thread or stage).
    pub fn owned(depth: Depth, case: Case, options: &CodegenOptions) -> PreparedCase<'static> {
        PreparedCase::with(depth, Cow::Owned(case), options)
    }

    fn with(depth: Depth, case: Cow<'a, Case>, options: &CodegenOptions) -> Self {
        let t = Instant::now();
        let compiled = compile_guarded(&case, options);
        let compile_seconds = t.elapsed().as_secs_f64();
        PreparedCase {
            depth,
            case,
            compiled,
            compile_seconds,
            inputs: OnceLock::new(),
            reference: OnceLock::new(),
            eager_reference: OnceLock::new(),
        }
    }

    /// The same case compiled under other codegen options, with the inputs and the reference
    /// runs already made (they do not depend on the options): the hunt's check of a case with
    /// and without its fault.
    pub fn under(&self, options: &CodegenOptions) -> PreparedCase<'_> {
        let again = PreparedCase::with(self.depth, Cow::Borrowed(self.case()), options);
        fn copy<T: Clone>(from: &OnceLock<T>, to: &OnceLock<T>) {
            if let Some(v) = from.get() {
                let _ = to.set(v.clone());
            }
        }
        if let Some(i) = self.inputs.get() {
            let _ = again.inputs.set(i.clone());
        }
        copy(&self.reference, &again.reference);
        copy(&self.eager_reference, &again.eager_reference);
        again
    }

    /// The case.
    pub fn case(&self) -> &Case {
        &self.case
    }

    /// What the case exercises ([`crate::generators::features`]), read with the block sizes
    /// its compile worked out.
    pub fn features(&self) -> std::collections::BTreeSet<crate::generators::Feature> {
        let effective = self
            .compiled
            .as_ref()
            .ok()
            .map(|c| c.block_sizes().effective.as_slice());
        crate::generators::features_sized(&self.case, effective)
    }

    /// The compile, or the compiler's panic message and backtrace.
    pub fn compiled(&self) -> Result<&Compiled, &str> {
        self.compiled.as_ref().map_err(String::as_str)
    }

    /// How the compile ended, as the classification reads it.
    fn compiler_result(&self) -> CompilerResult {
        match &self.compiled {
            Err(_) => CompilerResult::Crashed,
            Ok(Compiled::Lowered(_)) => CompilerResult::Lowered,
            Ok(Compiled::Rejected(r)) => CompilerResult::Rejected(r.rejection.class()),
            Ok(Compiled::Gap(_)) => CompilerResult::Gap,
        }
    }

    /// Runs `engines` on the case and classifies it ([`check_prepared`] for one case).
    pub fn check(&self, engines: &[Box<dyn Engine>]) -> CaseReport {
        check_prepared(&[self], engines)
            .pop()
            .expect("one report per case")
    }

    /// Whether the reference runs for these engines: on every case the compiler lowered (or
    /// crashed on), and on the others in a full check or for a Helion engine.
    fn reference_decides(&self, needs: Needs) -> bool {
        match self.compiler_result() {
            CompilerResult::Lowered | CompilerResult::Crashed => true,
            CompilerResult::Rejected(_) | CompilerResult::Gap => match self.depth {
                Depth::Full => true,
                Depth::FindingsOnly => needs.helion,
            },
        }
    }

    fn inputs_made(&self) -> &Inputs {
        self.inputs.get_or_init(|| {
            let all = self.case.input_tensors();
            let args = match &all {
                Err(_) => None,
                Ok(all) => {
                    let positions = self.case.kernel_arg_positions();
                    if positions.iter().copied().eq(0..all.len()) {
                        None
                    } else {
                        Some(positions.into_iter().map(|p| all[p].clone()).collect())
                    }
                }
            };
            Inputs { all, args }
        })
    }

    /// The reference run for these engines (made on first need), with its scale.
    fn reference(&self, needs: Needs) -> Option<&(EngineRun, compare::RefScale)> {
        if !self.reference_decides(needs) {
            return None;
        }
        Some(self.reference.get_or_init(|| {
            crate::engines::reference::Reference
                .run_with_inputs(&self.case, &self.inputs_made().all)
        }))
    }

    /// The reference tiled as Helion's eager mode tiles (it ignores the config's block
    /// sizes), when an engine compares with it.
    fn eager_reference(&self, needs: Needs) -> Option<&crate::engines::reference::TiledRun> {
        if !needs.eager_reference {
            return None;
        }
        Some(self.eager_reference.get_or_init(|| {
            crate::engines::reference::Reference.run_tiled(
                &self.case,
                &self.inputs_made().all,
                oracle::Tiling::HelionEager,
            )
        }))
    }

    /// The emitted module's text (printed on first use; present iff the compiler lowered).
    fn emitted(&self) -> Option<&str> {
        self.compiled.as_ref().ok().and_then(|c| c.source())
    }

    /// The kernel's arguments (none when the reference does not run: no engine runs then).
    fn args(&self, needs: Needs) -> &[Tensor] {
        if !self.reference_decides(needs) {
            return &[];
        }
        let inputs = self.inputs_made();
        match (&inputs.args, &inputs.all) {
            (Some(args), _) => args,
            (None, Ok(all)) => all,
            (None, Err(_)) => &[],
        }
    }

    fn job(&self, needs: Needs) -> Job<'_> {
        Job {
            case: &self.case,
            inputs: self.args(needs),
            // The JAX engines run the module's text; the in-process ones its typed AST.
            emitted: match self.depth {
                Depth::Full => self.emitted(),
                Depth::FindingsOnly if needs.text => self.emitted(),
                Depth::FindingsOnly => None,
            },
            module: self.compiled.as_ref().ok().and_then(Compiled::module),
        }
    }

    /// Why `engine` does not run this case, if it does not.
    fn skip_reason(&self, needs: Needs, engine: EngineId) -> Option<&'static str> {
        if engine.is_helion() {
            return match self.compiler_result() {
                CompilerResult::Crashed => Some("the compiler crashed"),
                CompilerResult::Lowered | CompilerResult::Rejected(_) | CompilerResult::Gap => None,
            };
        }
        let reference_ok = self
            .reference(needs)
            .is_some_and(|(r, _)| r.status.outputs().is_some());
        match self.compiler_result() {
            CompilerResult::Lowered if reference_ok => None,
            CompilerResult::Lowered => Some("the reference refused the case"),
            CompilerResult::Rejected(_) => Some("the compiler rejected the kernel"),
            CompilerResult::Gap => Some("the codegen does not model this kernel"),
            CompilerResult::Crashed => Some("the compiler crashed"),
        }
    }

    /// Classifies the case given the engines' runs.
    fn finish(&self, needs: Needs, runs: Vec<EngineRun>) -> CaseReport {
        let names = output_names(&self.case);
        let not_run;
        let (reference, reference_scale) = match self.reference(needs) {
            Some((run, scale)) => (run, *scale),
            None => {
                not_run = EngineRun::instant(
                    EngineId::Reference,
                    EngineStatus::NotRun(
                        "the compiler did not lower the kernel (a findings-only check)".into(),
                    ),
                );
                (&not_run, compare::RefScale::default())
            }
        };
        let eager = self.eager_reference(needs);
        // Each engine's outputs are compared once: the classification and the per-engine
        // values (`values_match`) read the same results.
        let mismatches: Vec<Option<compare::Mismatch>> = runs
            .iter()
            .map(|e| {
                let (r, scale) = match eager {
                    Some(eager) if e.engine.reference_tiling() == oracle::Tiling::HelionEager => {
                        (&eager.run, eager.scale)
                    }
                    Some(_) | None => (reference, reference_scale),
                };
                let (got, want) = (e.status.outputs()?, r.status.outputs()?);
                compare::compare(e.engine, &names, got, want, scale)
                    .err()
                    .map(|m| *m)
                    // The case's own inputs agree: the first extra input set that does not
                    // (a Helion engine's, compared by the engine; the mismatch names the set).
                    .or_else(|| e.input_sets.as_ref()?.mismatch.clone())
            })
            .collect();
        let values_match = match reference.status.outputs() {
            Some(_) => runs
                .iter()
                .zip(&mismatches)
                .filter(|(e, _)| e.status.outputs().is_some())
                .map(|(e, m)| (e.engine, m.is_none()))
                .collect(),
            None => Vec::new(),
        };
        let Classified {
            outcome,
            engine,
            mismatch,
            known_issue,
        } = classify(
            self.compiler_result(),
            reference,
            &runs,
            |e, _| {
                // One run per engine in a check: the name finds its comparison.
                let i = runs.iter().position(|r| r.engine == e.engine)?;
                mismatches[i].clone()
            },
            |e| match eager {
                Some(eager) if e.engine.reference_tiling() == oracle::Tiling::HelionEager => {
                    crate::known_issues::known_divergence(e.engine, &eager.divergences)
                }
                Some(_) | None => None,
            },
        );
        // A findings-only or campaign check keeps the module of a finding only (it goes into
        // the report).
        let emitted = match self.depth {
            Depth::Full => self.emitted().map(str::to_string),
            Depth::FindingsOnly if outcome.is_finding() => self.emitted().map(str::to_string),
            Depth::FindingsOnly => None,
        };
        let (verdict, gap, crash) = match &self.compiled {
            Err(panic) => (None, None, Some(panic.clone())),
            Ok(c) => (
                Some(c.verdict()),
                c.gap().map(|g| format!("{} at {}", g.construct, g.span)),
                None,
            ),
        };
        CaseReport {
            outcome,
            decided_by: engine,
            verdict,
            gap,
            crash,
            reference: reference.clone(),
            eager_reference: eager.map(|e| e.run.clone()),
            engines: runs,
            mismatch,
            known_issue,
            emitted,
            compile_seconds: self.compile_seconds,
            decisions: self
                .compiled
                .as_ref()
                .map(|c| c.decisions().clone())
                .unwrap_or_default(),
            values_match,
        }
    }
}
