//! The reduction driver: shrinks a finding's case with [`reducer::reduce`] while the
//! finding's [`Signature`] still holds ([`Signature::holds_for`]).
//!
//! The predicate is "run `check_case` on the candidate, compute its signature, compare", made
//! cheap where it can be:
//! * only the engine that saw the finding runs (a JAX engine only when the finding is a JAX
//!   engine's; no engine at all for a compiler crash or a rejection), so in-process findings
//!   never start Python;
//! * in-process checks come first: the candidate must render to a case script that parses back
//!   (the reduced case is always a valid script), compile to the same kind of verdict, and keep
//!   the loop type and a subset of the index forms, before any engine runs;
//! * engine runs are memoized by (emitted module, inputs), so a candidate that compiles to a
//!   module already tried costs nothing.
//!
//! Deterministic: the reducer's passes are, the engines are, and the memo only skips repeats.
//! The codegen options ([`CodegenOptions`]) are passed through to every compile, so findings
//! made under other options (fault injections) reduce under the same ones.

use crate::signature::{Signature, decisions_hold, index_forms, signature};
use compiler::compile::CodegenOptions;
use compiler::decisions::{Decisions, PlainSet};
use fuzz::check::{CaseReport, Depth, PreparedCase, check_case};
use fuzz::engines::{Engine, EngineId, EngineRun, Job};
use fuzz::outcome::Outcome;
use lang::frontend::parse_case;
use lang::ir::Case;
use lang::render::{render_body_text, render_case};
use reducer::{Budget, Reduced, Screen, reduce_staged};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Non-blank lines of the rendered kernel body (the `def` line and the decorator excluded).
pub fn kernel_body_lines(case: &Case) -> usize {
    render_body_text(&case.kernel.body, 1)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count()
}

/// Engines as the driver shares them (`Arc::from` a `Box<dyn Engine>`).
pub fn shared(engines: Vec<Box<dyn Engine>>) -> Vec<Arc<dyn Engine>> {
    engines.into_iter().map(Arc::from).collect()
}

/// Why a finding could not be reduced.
#[derive(Debug, thiserror::Error)]
pub enum ReduceError {
    /// The engine that saw the finding is not among those given.
    #[error(
        "the finding was seen by engine `{0}`, which is not available for the reduction (given: {1})"
    )]
    MissingEngine(EngineId, String),
    /// The case does not show the finding (any more).
    #[error("the case does not reproduce `{expected}`: it now ends in `{got}`")]
    NotReproduced {
        /// The finding's signature key.
        expected: String,
        /// What the case shows now.
        got: String,
    },
}

/// What [`reduce_finding`] produced.
#[derive(Debug)]
pub struct Reduction {
    /// The reduced case, re-parsed from its rendering (its spans match its case script),
    /// prepared: its compile and reference are the ones [`Reduction::report`] was made from,
    /// for a later check on other engines (the campaign's JAX cross-check) to reuse.
    pub prepared: PreparedCase<'static>,
    /// Its check report.
    pub report: CaseReport,
    /// Its signature (equal to the finding's, or finer: fewer index forms).
    pub signature: Signature,
    /// Predicate calls.
    pub attempts: usize,
    /// Candidates kept.
    pub steps: usize,
    /// Whether the budget ran out before a fixpoint.
    pub exhausted: bool,
    /// Engine runs not answered from the memo.
    pub engine_runs: usize,
    /// Engine runs answered from the memo.
    pub memo_hits: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Kernel body lines before.
    pub original_body_lines: usize,
    /// Kernel body lines after.
    pub body_lines: usize,
}

impl Reduction {
    /// The reduced case.
    pub fn case(&self) -> &Case {
        self.prepared.case()
    }
}

type MemoKey = (String, Vec<(String, Vec<usize>, Vec<u8>)>);

/// An engine whose runs are memoized by what it runs and on what: the emitted module and the
/// rendered kernel (a Helion engine runs the case script, not our module: keyed by the module
/// alone, every candidate our compiler refuses shared one run, and the reducer kept candidates
/// on another candidate's result), and the inputs. A repeat costs nothing.
struct Memo {
    inner: Arc<dyn Engine>,
    runs: Mutex<HashMap<MemoKey, EngineRun>>,
    misses: AtomicUsize,
    hits: AtomicUsize,
}

impl Engine for Memo {
    fn id(&self) -> fuzz::engines::EngineId {
        self.inner.id()
    }

    fn run(&self, job: &Job<'_>) -> EngineRun {
        let key: MemoKey = (
            format!(
                "{}\n# ---- kernel ----\n{}",
                job.emitted.unwrap_or_default(),
                lang::render::render_kernel(job.case)
            ),
            job.inputs
                .iter()
                .map(|t| (t.dtype.name().to_string(), t.shape.clone(), t.to_le_bytes()))
                .collect(),
        );
        if let Some(r) = self.runs.lock().expect("memo lock").get(&key) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return r.clone();
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let r = self.inner.run(job);
        self.runs.lock().expect("memo lock").insert(key, r.clone());
        r
    }
}

/// Whether the outcome is decided by running the emitted module.
fn needs_module(outcome: Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Mismatch
            | Outcome::LoweringError
            | Outcome::RuntimeError
            | Outcome::Timeout
            | Outcome::EngineCrash
            | Outcome::KnownIssue
            | Outcome::Agree
    )
}

/// Reduces `case` while `signature` holds (module docs). `engines` are the engines available;
/// only the one named by the signature runs, for up to `jobs` candidates at once (the result
/// does not depend on `jobs`; give it the JAX pool's size). Errors when that engine is missing
/// or when `case` does not show the finding.
pub fn reduce_finding(
    case: &Case,
    signature_: &Signature,
    engines: &[Arc<dyn Engine>],
    budget: Budget,
    jobs: usize,
    codegen: &CodegenOptions,
) -> Result<Reduction, ReduceError> {
    let start = Instant::now();
    let memo: Option<Arc<Memo>> = match signature_.engine {
        None => None,
        Some(id) => {
            let inner = engines
                .iter()
                .find(|e| e.id() == id)
                .cloned()
                .ok_or_else(|| {
                    ReduceError::MissingEngine(
                        id,
                        engines
                            .iter()
                            .map(|e| e.name().to_string())
                            .collect::<Vec<_>>()
                            .join(", "),
                    )
                })?;
            Some(Arc::new(Memo {
                inner,
                runs: Mutex::new(HashMap::new()),
                misses: AtomicUsize::new(0),
                hits: AtomicUsize::new(0),
            }))
        }
    };
    let selected: Vec<Box<dyn Engine>> = memo
        .iter()
        .map(|m| Box::new(SharedEngine(m.clone() as Arc<dyn Engine>)) as Box<dyn Engine>)
        .collect();
    let check = |c: &Case| -> (CaseReport, Signature) {
        let report = check_case(c, &selected, codegen);
        let sig = signature(c, &report);
        (report, sig)
    };
    let (_, first) = check(case);
    if !signature_.holds_for(&first) {
        return Err(ReduceError::NotReproduced {
            expected: signature_.key(),
            got: first.key(),
        });
    }
    let outcome = signature_.outcome;
    // A Helion engine runs the case script, not our module: its findings reduce whatever our
    // compiler makes of a candidate (a helion-eager bug on kernels our model refuses).
    let helion = signature_.engine.is_some_and(EngineId::is_helion);
    let wants_module = needs_module(outcome) && !helion;
    let engine = memo.clone();
    // Stage 1, in-process and sequential: the checks that need no engine.
    let hooks = HookGuard::new();
    let screen = |candidate: &Case| -> Screen<PreparedCase<'static>> {
        // A case script that parses back (so the result is one).
        let Ok(c) = parse_case(&render_case(candidate), "candidate.py") else {
            return Screen::Boring;
        };
        // Prepared once: the screen's compile and reference run are the ones the engine stage
        // reuses.
        let prepared = PreparedCase::owned(Depth::Full, c, codegen);
        let c = prepared.case();
        // The same kind of compile result, the same loop type, a subset of the forms.
        let compiled = prepared.compiled();
        let compile_ok = match (&compiled, outcome) {
            (Err(_), Outcome::CompilerCrash) => true,
            (Err(_), _) | (Ok(_), Outcome::CompilerCrash) => false,
            (Ok(k), _) if wants_module => k.module().is_some(),
            (Ok(k), Outcome::Rejected) => k.rejection().is_some(),
            (Ok(_), _) => true,
        };
        if !compile_ok {
            return Screen::Boring;
        }
        if signature_.is_about_emitted_code() {
            let keeps = match &compiled {
                // Our emitted code: a subset of the finding's decisions.
                Ok(k) if signature_.is_our_code() => {
                    decisions_hold(&signature_.decisions, k.decisions())
                }
                // Helion's: the loop type kept (`Signature::loop_type_holds`), a subset of
                // the forms.
                Ok(_) | Err(_) => {
                    signature_.loop_type_holds(Some(c.effective_loop_type()))
                        && index_forms(c).is_subset(&signature_.forms)
                }
            };
            if !keeps {
                return Screen::Boring;
            }
        }
        // The check without engines: the compiler and the reference.
        let base = prepared.check(&[]);
        if engine.is_none() {
            return if signature_.holds_for(&signature(c, &base)) {
                Screen::Interesting
            } else {
                Screen::Boring
            };
        }
        if (base.emitted.is_none() && !helion) || base.reference.status.outputs().is_none() {
            return Screen::Boring;
        }
        hooks.repair();
        Screen::Run(prepared)
    };
    // Stage 2, one engine run per candidate, in parallel: the engines on the prepared case.
    let run = |p: PreparedCase<'static>| -> bool {
        let report = p.check(&selected);
        signature_.holds_for(&signature(p.case(), &report))
    };
    let jobs = if engine.is_some() { jobs.max(1) } else { 1 };
    let Reduced {
        case: reduced,
        attempts,
        steps,
        exhausted,
    } = reduce_staged(case, budget, jobs, screen, run);
    let reduced = parse_case(&render_case(&reduced), "reduced.py").unwrap_or(reduced);
    let prepared = PreparedCase::owned(Depth::Full, reduced, codegen);
    let report = prepared.check(&selected);
    let mut sig = signature(prepared.case(), &report);
    let reduced = prepared.case();
    if !helion && signature_.holds_for(&sig) {
        sig.ablated = ablate(reduced, &sig, &selected, codegen);
    }
    let (engine_runs, memo_hits) = memo.as_ref().map_or((0, 0), |m| {
        (
            m.misses.load(Ordering::Relaxed),
            m.hits.load(Ordering::Relaxed),
        )
    });
    Ok(Reduction {
        original_body_lines: kernel_body_lines(case),
        body_lines: kernel_body_lines(reduced),
        prepared,
        report,
        signature: sig,
        attempts,
        steps,
        exhausted,
        engine_runs,
        memo_hits,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// The decisions of a finding in code our compiler emitted that it does not need, found the
/// way Cranelift's fuel finds the optimization a miscompile needs: each decision with a plain
/// path ([`PlainSet`]), in the signature's order, is lowered by that path on top of the ones
/// already shown unneeded; when `engines` still show the finding ([`Signature::holds_for`]:
/// the same outcome, engine and cause), the decision joins the set, else it is part of the
/// cause. The plan, and so the recorded decisions, stay the same; only the code changes. The
/// plain paths compute the planned values (`fuzz/tests/plain_paths.rs`), so a finding that
/// goes away needed the decision.
pub fn ablate(
    case: &Case,
    sig: &Signature,
    engines: &[Box<dyn Engine>],
    codegen: &CodegenOptions,
) -> Decisions {
    let mut unneeded = Decisions::new();
    let mut plain = codegen.plain;
    for &d in &sig.decisions {
        let Some(one) = PlainSet::only(d) else {
            continue;
        };
        let trial = plain.union(one);
        let options = CodegenOptions {
            plain: trial,
            ..*codegen
        };
        let report = check_case(case, engines, &options);
        if sig.holds_for(&signature(case, &report)) {
            unneeded.insert(d);
            plain = trial;
        }
    }
    unneeded
}

type Hook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Sync + Send + 'static>;

/// Keeps the process's panic hook intact around parallel `check_case` calls.
///
/// `fuzz::check::compile_guarded` swaps the global panic hook (take, set, restore) around each
/// compile; two threads doing that at once can leave one thread's capturing hook installed for
/// good, after which panics elsewhere print nothing. The guard holds the hook that was installed
/// when the reduction started, reinstalls a forwarder to it between batches ([`Self::repair`],
/// called from the sequential stage), and puts the original back when dropped.
struct HookGuard {
    original: Arc<Mutex<Option<Hook>>>,
}

impl HookGuard {
    fn new() -> HookGuard {
        let guard = HookGuard {
            original: Arc::new(Mutex::new(Some(std::panic::take_hook()))),
        };
        guard.repair();
        guard
    }

    fn repair(&self) {
        let original = self.original.clone();
        std::panic::set_hook(Box::new(move |info| {
            if let Some(h) = original.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                h(info)
            }
        }));
    }
}

impl Drop for HookGuard {
    fn drop(&mut self) {
        if let Some(h) = self
            .original
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            std::panic::set_hook(h);
        }
    }
}

/// A shared engine as the `Box<dyn Engine>` that `check_case` takes.
pub struct SharedEngine(pub Arc<dyn Engine>);

impl Engine for SharedEngine {
    fn id(&self) -> fuzz::engines::EngineId {
        self.0.id()
    }

    fn run(&self, job: &Job<'_>) -> EngineRun {
        self.0.run(job)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fuzz::engines::{EngineRun, EngineStatus};

    /// Counts its runs and answers each with the kernel's name.
    struct Counting(AtomicUsize);

    impl Engine for Counting {
        fn id(&self) -> fuzz::engines::EngineId {
            fuzz::engines::EngineId::Worker(tpu_runner::Mode::HelionEager)
        }

        fn run(&self, job: &Job<'_>) -> EngineRun {
            self.0.fetch_add(1, Ordering::Relaxed);
            EngineRun::instant(
                self.id(),
                EngineStatus::NotRun(job.case.kernel.name.clone()),
            )
        }
    }

    fn case(name: &str) -> Case {
        parse_case(
            &format!(
                "import torch\nimport helion\nimport helion.language as hl\n\n\n\
                 @helion.kernel(backend=\"pallas\", static_shapes=True, config=helion.Config(block_sizes=[]))\n\
                 def {name}(x: torch.Tensor):\n    out = torch.zeros_like(x)\n\
                 \x20   for tile in hl.tile(x.size(0), block_size=1):\n        out[tile, :] = x[tile, :]\n\
                 \x20   return out\n\n\nx = torch.ones(2, 128)\n{name}(x)\n"
            ),
            "k.py",
        )
        .expect("parses")
    }

    #[test]
    fn the_memo_keys_on_the_case_script_too_not_only_on_our_module() {
        let inner = Arc::new(Counting(AtomicUsize::new(0)));
        let memo = Memo {
            inner: inner.clone(),
            runs: Mutex::new(HashMap::new()),
            misses: AtomicUsize::new(0),
            hits: AtomicUsize::new(0),
        };
        let (a, b) = (case("first"), case("second"));
        let job = |c: &'static Case| Job {
            case: c,
            inputs: &[],
            emitted: None,
            module: None,
        };
        let (a, b): (&'static Case, &'static Case) =
            (Box::leak(Box::new(a)), Box::leak(Box::new(b)));
        // Neither lowered by our compiler: they used to share one memo entry.
        assert_eq!(
            memo.run(&job(a)).status,
            EngineStatus::NotRun("first".into())
        );
        assert_eq!(
            memo.run(&job(b)).status,
            EngineStatus::NotRun("second".into())
        );
        assert_eq!(
            memo.run(&job(a)).status,
            EngineStatus::NotRun("first".into())
        );
        assert_eq!(
            inner.0.load(Ordering::Relaxed),
            2,
            "the repeat came from the memo"
        );
    }
}
