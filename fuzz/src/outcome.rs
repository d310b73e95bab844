//! The one place that classifies how a case ended.
//!
//! Not findings: `agree`; `rejected` (the compiler refused the kernel, as Helion would);
//! `invalid-case` (the reference refused the case: it has no eager meaning). Findings:
//! `mismatch` (an engine's outputs differ from the reference), `lowering-error` (JAX could not
//! import or trace, or Mosaic could not lower, a kernel the compiler accepted), `runtime-error`
//! (an engine raised while running it, e.g. an out-of-range read in the TPU interpreter),
//! `compiler-crash` (the planner or codegen panicked: the system under test crashed),
//! `timeout` and `engine-crash` (a JAX worker hung or died twice on the case).
//!
//! Beside them, `unsupported`: the planner accepted the kernel but pallas-diff's codegen does not
//! model one of its constructs; counted and shown, never a finding about Helion.
//!
//! The real-Helion engines (`helion-*`) run every case, whatever our compiler decided, and add
//! three findings about Helion itself or about our model of it: `helion-crash` (Helion raised
//! an exception that is not one of its documented refusal classes), `helion-accepts-invalid`
//! (Helion lowered and ran a case the reference refuses as an out-of-range index: it read
//! memory eager PyTorch would not), and `verdict-mismatch` (our compiler's verdict, lowered or
//! refused and the refusal's error class, differs from Helion's: a fidelity finding). A
//! Helion engine's outputs that differ from the reference are a `mismatch` decided by it.
//!
//! An engine error listed in [`crate::known_issues`] does not decide the outcome; if nothing
//! else does, the case is `known-issue`.
//!
//! Precedence, first match wins: compiler-crash; then the Helion engines in the order given:
//! timeout, engine-crash, helion-crash, lowering-error (`helion-tpu-lower`), then
//! helion-accepts-invalid or mismatch of their outputs; then verdict-mismatch; then
//! invalid-case; rejected; unsupported; then the other engines in the order given: timeout,
//! engine-crash, lowering-error, runtime-error, mismatch; else agree.

use crate::compare::Mismatch;
use crate::engines::{EngineRun, EngineStatus};
use compiler::verdict::ErrorClass;
use serde::{Deserialize, Serialize};
use std::fmt;

/// How one case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Every engine agrees with the reference.
    Agree,
    /// The compiler refused the kernel.
    Rejected,
    /// The reference refused the case.
    InvalidCase,
    /// An engine's outputs differ from the reference's.
    Mismatch,
    /// JAX could not import/trace, or Mosaic could not lower, an accepted kernel.
    LoweringError,
    /// An engine raised while running an accepted kernel.
    RuntimeError,
    /// The compiler (planner or codegen) panicked.
    CompilerCrash,
    /// An engine did not answer in time.
    Timeout,
    /// An engine process died twice on the case.
    EngineCrash,
    /// The planner accepted the kernel but pallas-diff's codegen does not model a construct in
    /// it: not a finding about Helion, a gap of the harness (counted, never hidden).
    Unsupported,
    /// An engine failed in a way listed in [`crate::known_issues`]: counted, not a finding.
    KnownIssue,
    /// Real Helion raised an exception that is not one of its documented refusal classes (an
    /// internal assertion, a Python error from inside its tracing or code generation).
    HelionCrash,
    /// Real Helion lowered and ran a case the reference refuses as an out-of-range index: the
    /// compiled kernel silently read memory (padding, a neighbouring row) eager PyTorch would not.
    HelionAcceptsInvalid,
    /// Our compiler's verdict (lowered, or refused and the error class) differs from real
    /// Helion's: a fidelity finding about our model.
    VerdictMismatch,
}

impl Outcome {
    /// Every outcome, in table order.
    pub const ALL: [Outcome; 14] = [
        Outcome::Agree,
        Outcome::Rejected,
        Outcome::InvalidCase,
        Outcome::Mismatch,
        Outcome::LoweringError,
        Outcome::RuntimeError,
        Outcome::CompilerCrash,
        Outcome::Timeout,
        Outcome::EngineCrash,
        Outcome::Unsupported,
        Outcome::KnownIssue,
        Outcome::HelionCrash,
        Outcome::HelionAcceptsInvalid,
        Outcome::VerdictMismatch,
    ];

    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Agree => "agree",
            Outcome::Rejected => "rejected",
            Outcome::InvalidCase => "invalid-case",
            Outcome::Mismatch => "mismatch",
            Outcome::LoweringError => "lowering-error",
            Outcome::RuntimeError => "runtime-error",
            Outcome::CompilerCrash => "compiler-crash",
            Outcome::Timeout => "timeout",
            Outcome::EngineCrash => "engine-crash",
            Outcome::Unsupported => "unsupported",
            Outcome::KnownIssue => "known-issue",
            Outcome::HelionCrash => "helion-crash",
            Outcome::HelionAcceptsInvalid => "helion-accepts-invalid",
            Outcome::VerdictMismatch => "verdict-mismatch",
        }
    }

    /// The outcome with this kebab-case name (what [`Outcome::name`] and serde write).
    pub fn from_name(name: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.name() == name)
    }

    /// Whether this outcome is a finding (worth a report).
    pub fn is_finding(self) -> bool {
        match self {
            Outcome::Agree
            | Outcome::Rejected
            | Outcome::InvalidCase
            | Outcome::Unsupported
            | Outcome::KnownIssue => false,
            Outcome::Mismatch
            | Outcome::LoweringError
            | Outcome::RuntimeError
            | Outcome::CompilerCrash
            | Outcome::Timeout
            | Outcome::EngineCrash
            | Outcome::HelionCrash
            | Outcome::HelionAcceptsInvalid
            | Outcome::VerdictMismatch => true,
        }
    }
}

impl std::str::FromStr for Outcome {
    type Err = String;

    fn from_str(s: &str) -> Result<Outcome, String> {
        Outcome::from_name(s).ok_or_else(|| format!("`{s}` is not an outcome"))
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// The classified result, with the engine that decided it and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Classified {
    /// The outcome.
    pub outcome: Outcome,
    /// The engine that decided it (none for agree/rejected/compiler-crash).
    pub engine: Option<crate::engines::EngineId>,
    /// The mismatch, for `mismatch`.
    pub mismatch: Option<Mismatch>,
    /// The known issue, for `known-issue`.
    pub known_issue: Option<&'static str>,
}

/// What the compiler did, as classification sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompilerResult {
    /// Lowered: engines ran the emitted module.
    Lowered,
    /// Rejected with a rule of this Helion error class.
    Rejected(ErrorClass),
    /// Accepted, but the codegen does not model a construct (no module).
    Gap,
    /// Panicked.
    Crashed,
}

/// The reference's refusals that a compiled kernel can silently get past: an index outside
/// its dimension reads padding or a neighbouring row in a Pallas kernel, where eager PyTorch
/// raises `IndexError`. Other refusals (uninitialized reads, budgets, aliasing) are not a
/// kernel's fault when it runs them.
pub const SILENTLY_ACCEPTED_INVALID_KINDS: &[oracle::EvalErrorKind] =
    &[oracle::EvalErrorKind::IndexOutOfRange];

/// The kinds of invalid case on which eager torch itself raises (`IndexError`,
/// `ZeroDivisionError`, a shape or type error, an argument out of its domain).
const TORCH_RAISES: &[oracle::EvalErrorKind] = &[
    oracle::EvalErrorKind::IndexOutOfRange,
    oracle::EvalErrorKind::DivisionByZero,
    oracle::EvalErrorKind::ShapeMismatch,
    oracle::EvalErrorKind::TypeError,
    oracle::EvalErrorKind::InvalidArgument,
];

/// Helion's verdict on a case, as far as one engine run shows it: lowered (it ran or lowered
/// the kernel), or refused with a class. `None` when the run says nothing about the verdict
/// (not run, crashed, timed out, or an exception past code generation).
pub fn helion_verdict(run: &EngineRun) -> Option<Result<(), &str>> {
    match &run.status {
        EngineStatus::Outputs(_) | EngineStatus::Lowered => Some(Ok(())),
        EngineStatus::Refused { class, .. } => Some(Err(class.as_str())),
        EngineStatus::KernelError { stage, .. } => match stage {
            // An exception while running Helion's kernel (or lowering it for TPU) comes after
            // Helion accepted it.
            tpu_runner::Stage::Run | tpu_runner::Stage::Lower => Some(Ok(())),
            tpu_runner::Stage::Import | tpu_runner::Stage::Trace => None,
        },
        EngineStatus::Unavailable(_)
        | EngineStatus::NotRun(_)
        | EngineStatus::Invalid { .. }
        | EngineStatus::Timeout(_)
        | EngineStatus::Crash(_) => None,
    }
}

/// Whether our compiler's result and Helion's verdict agree: both lowered, or both refused
/// with the same error class. Our `trace.type-error` rules (class `TracingError`) stand for
/// every tracing refusal of Helion that is not one of the four planner/indexing classes; our
/// codegen gap is a lowered verdict (the planner accepted the kernel).
pub fn verdicts_agree(ours: CompilerResult, helion: Result<(), &str>) -> bool {
    const SPECIFIC: [ErrorClass; 5] = [
        ErrorClass::InvalidIndexingType,
        ErrorClass::InvalidSliceStep,
        ErrorClass::ShapeSpecializingAllocation,
        ErrorClass::BackendUnsupported,
        ErrorClass::InvalidConfig,
    ];
    match (ours, helion) {
        (CompilerResult::Lowered | CompilerResult::Gap, Ok(())) => true,
        (CompilerResult::Rejected(ErrorClass::TracingError), Err(class)) => {
            !SPECIFIC.iter().any(|c| c.name() == class)
        }
        (CompilerResult::Rejected(ours), Err(class)) => ours.name() == class,
        (CompilerResult::Lowered | CompilerResult::Gap, Err(_))
        | (CompilerResult::Rejected(_), Ok(())) => false,
        (CompilerResult::Crashed, _) => true,
    }
}

/// Classifies a case from the compiler's result, the reference run and the engine runs (in the
/// order the user listed the engines). `compare` compares an engine's outputs with the
/// reference's; `diverges` names the known issue that explains a Helion engine's values
/// differing from its reference's, if the reference reached one
/// ([`crate::known_issues::known_divergence`]).
pub fn classify(
    compiler: CompilerResult,
    reference: &EngineRun,
    engines: &[EngineRun],
    compare: impl Fn(&EngineRun, &EngineRun) -> Option<Mismatch>,
    diverges: impl Fn(&EngineRun) -> Option<&'static crate::known_issues::KnownIssue>,
) -> Classified {
    let plain = |outcome, engine: Option<&EngineRun>| Classified {
        outcome,
        engine: engine.map(|e| e.engine),
        mismatch: None,
        known_issue: None,
    };
    if compiler == CompilerResult::Crashed {
        return plain(Outcome::CompilerCrash, None);
    }
    let mut known = None;
    let (helion, ours): (Vec<&EngineRun>, Vec<&EngineRun>) =
        engines.iter().partition(|e| e.engine.is_helion());
    let invalid_kind = match &reference.status {
        EngineStatus::Invalid { kind, .. } => Some(*kind),
        _ => None,
    };
    for e in &helion {
        let outcome = match &e.status {
            EngineStatus::Timeout(_) => Some(Outcome::Timeout),
            EngineStatus::Crash(_) => Some(Outcome::EngineCrash),
            EngineStatus::KernelError {
                stage: tpu_runner::Stage::Lower,
                ..
            } => Some(Outcome::LoweringError),
            // Raising at run time on a case the reference calls invalid for a reason torch
            // raises on itself (an index out of range, an empty tensor read past its rows) is
            // what torch does: the case, not Helion, is at fault (campaign draws never get here,
            // they are drawn again; `check` of a hand-written or emptied case does). A budget,
            // uninitialized memory or an aliasing rule is no raise of torch's: a crash there
            // stays a finding.
            EngineStatus::KernelError {
                stage: tpu_runner::Stage::Run,
                ..
            } if invalid_kind.is_some_and(|k| TORCH_RAISES.contains(&k)) => None,
            EngineStatus::KernelError { .. } => Some(Outcome::HelionCrash),
            EngineStatus::Outputs(_)
            | EngineStatus::Lowered
            | EngineStatus::Refused { .. }
            | EngineStatus::Unavailable(_)
            | EngineStatus::NotRun(_)
            | EngineStatus::Invalid { .. } => None,
        };
        if let Some(o) = outcome {
            if let Some(k) = crate::known_issues::known_issue(e.engine, &e.status) {
                known = known.or(Some((*e, k.id)));
                continue;
            }
            return plain(o, Some(e));
        }
        // Eager mode tiles differently from the reference (one tile per config-driven loop),
        // so the reference's out-of-range verdict is not about what eager mode indexed.
        if e.status.outputs().is_some()
            && e.engine.reference_tiling() == oracle::Tiling::Effective
            && invalid_kind.is_some_and(|k| SILENTLY_ACCEPTED_INVALID_KINDS.contains(&k))
        {
            return plain(Outcome::HelionAcceptsInvalid, Some(e));
        }
        if let Some(m) = compare(e, reference) {
            if let Some(k) = diverges(e) {
                known = known.or(Some((*e, k.id)));
                continue;
            }
            return Classified {
                outcome: Outcome::Mismatch,
                engine: Some(e.engine),
                mismatch: Some(m),
                known_issue: None,
            };
        }
        // Extra input sets that differed only by NaN where their finite twins agree: Helion's
        // mask by multiplication, a known issue once nothing else decides the case.
        if e.input_sets
            .as_ref()
            .is_some_and(|s| s.masked_nonfinite > 0)
            && let Some(k) = crate::known_issues::mask_by_multiplication(e.engine)
        {
            known = known.or(Some((*e, k.id)));
        }
    }
    // Fidelity: the first Helion engine whose run shows Helion's verdict decides it. Eager mode
    // does no Pallas planning, so its verdict is not the backend's. A refusal that is a known
    // Helion bug (it masks Helion's real verdict) is that known issue instead.
    if let Some((e, v)) = helion
        .iter()
        .filter(|e| e.engine.shows_helion_verdict())
        .find_map(|e| Some((*e, helion_verdict(e)?)))
        && !verdicts_agree(compiler, v)
    {
        match crate::known_issues::known_issue(e.engine, &e.status) {
            Some(k) => known = known.or(Some((e, k.id))),
            None => return plain(Outcome::VerdictMismatch, Some(e)),
        }
    }
    // A known Helion bug on a case our compiler refused is counted as that known issue, not
    // hidden under `rejected` (the masked-refusal bug shows only on refused cases). A lowered
    // case goes on to our engines first: their findings come before a known issue.
    if let Some((e, id)) = known
        && compiler != CompilerResult::Lowered
    {
        let mut c = plain(Outcome::KnownIssue, Some(e));
        c.known_issue = Some(id);
        return c;
    }
    if matches!(reference.status, EngineStatus::Invalid { .. }) {
        return plain(Outcome::InvalidCase, Some(reference));
    }
    match compiler {
        CompilerResult::Rejected(_) => return plain(Outcome::Rejected, None),
        CompilerResult::Gap => return plain(Outcome::Unsupported, None),
        CompilerResult::Lowered | CompilerResult::Crashed => {}
    }
    for e in ours {
        let outcome = match &e.status {
            EngineStatus::Timeout(_) => Some(Outcome::Timeout),
            EngineStatus::Crash(_) => Some(Outcome::EngineCrash),
            EngineStatus::KernelError { stage, .. } => Some(match stage {
                tpu_runner::Stage::Import | tpu_runner::Stage::Trace | tpu_runner::Stage::Lower => {
                    Outcome::LoweringError
                }
                tpu_runner::Stage::Run => Outcome::RuntimeError,
            }),
            EngineStatus::Outputs(_)
            | EngineStatus::Lowered
            | EngineStatus::Refused { .. }
            | EngineStatus::Unavailable(_)
            | EngineStatus::NotRun(_)
            | EngineStatus::Invalid { .. } => None,
        };
        if let Some(o) = outcome {
            if let Some(k) = crate::known_issues::known_issue(e.engine, &e.status) {
                known = known.or(Some((e, k.id)));
                continue;
            }
            return plain(o, Some(e));
        }
        if let Some(m) = compare(e, reference) {
            return Classified {
                outcome: Outcome::Mismatch,
                engine: Some(e.engine),
                mismatch: Some(m),
                known_issue: None,
            };
        }
    }
    if let Some((e, id)) = known {
        let mut c = plain(Outcome::KnownIssue, Some(e));
        c.known_issue = Some(id);
        return c;
    }
    plain(Outcome::Agree, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lang::tensor::{DType, Tensor};

    #[test]
    fn outcomes_serialize_as_their_names_and_back() {
        for o in Outcome::ALL {
            let json = serde_json::to_string(&o).expect("serializes");
            assert_eq!(json, format!("\"{}\"", o.name()));
            let back: Outcome = serde_json::from_str(&json).expect("deserializes");
            assert_eq!(back, o);
            assert_eq!(Outcome::from_name(o.name()), Some(o));
        }
        assert_eq!(Outcome::from_name("Mismatch"), None);
    }

    #[test]
    fn stages_serialize_as_their_wire_names_and_back() {
        use tpu_runner::Stage;
        for s in [Stage::Import, Stage::Trace, Stage::Lower, Stage::Run] {
            let json = serde_json::to_string(&s).expect("serializes");
            assert_eq!(json, format!("\"{}\"", s.name()));
            let back: Stage = serde_json::from_str(&json).expect("deserializes");
            assert_eq!(back, s);
        }
    }

    fn run(engine: &str, status: EngineStatus) -> EngineRun {
        EngineRun::instant(engine.parse().expect("an engine name"), status)
    }

    fn outputs(v: f64) -> EngineStatus {
        EngineStatus::Outputs(vec![Tensor::new(DType::Float32, vec![1], vec![v])])
    }

    fn refused(class: &str) -> EngineStatus {
        EngineStatus::Refused {
            class: class.into(),
            message: "m".into(),
            line: Some(3),
        }
    }

    fn differ(e: &EngineRun, r: &EngineRun) -> Option<Mismatch> {
        let (a, b) = (e.status.outputs()?, r.status.outputs()?);
        (a != b).then(|| {
            crate::compare::compare(e.engine, &["out".into()], a, b, 0.0)
                .expect_err("they differ")
                .as_ref()
                .clone()
        })
    }

    fn classify_one(
        compiler: CompilerResult,
        reference: EngineStatus,
        helion: EngineStatus,
    ) -> Outcome {
        let reference = run("oracle", reference);
        classify(
            compiler,
            &reference,
            &[run("helion-pallas", helion)],
            differ,
            |_| None,
        )
        .outcome
    }

    #[test]
    fn helion_verdicts_are_compared_by_class() {
        let rejected = CompilerResult::Rejected(ErrorClass::InvalidIndexingType);
        assert!(verdicts_agree(rejected, Err("InvalidIndexingType")));
        assert!(!verdicts_agree(rejected, Err("BackendUnsupported")));
        assert!(!verdicts_agree(rejected, Ok(())));
        assert!(!verdicts_agree(
            CompilerResult::Lowered,
            Err("InvalidConfig")
        ));
        assert!(verdicts_agree(CompilerResult::Gap, Ok(())));
        // Our tracing-error rules stand for Helion's other tracing refusals, not the four.
        let tracing = CompilerResult::Rejected(ErrorClass::TracingError);
        assert!(verdicts_agree(tracing, Err("RankMismatch")));
        assert!(!verdicts_agree(tracing, Err("InvalidConfig")));
    }

    #[test]
    fn a_refusal_that_is_a_known_helion_bug_is_that_known_issue_not_a_verdict_mismatch() {
        let rejected = CompilerResult::Rejected(ErrorClass::InvalidIndexingType);
        let config = |message: &str| EngineStatus::Refused {
            class: "InvalidConfig".into(),
            message: message.into(),
            line: None,
        };
        let masked = config("config[block_sizes][0] must be a power of two, got 3");
        let reference = run("oracle", outputs(1.0));
        let c = classify(
            rejected,
            &reference,
            &[run("helion-pallas", masked)],
            differ,
            |_| None,
        );
        assert_eq!(c.outcome, Outcome::KnownIssue);
        assert_eq!(
            c.known_issue,
            Some("helion-refusal-masked-by-default-config")
        );
        // Any other refusal that differs from ours is still a fidelity finding.
        assert_eq!(
            classify_one(
                rejected,
                outputs(1.0),
                config("unroll requires static bounds")
            ),
            Outcome::VerdictMismatch
        );
        // Where the verdicts agree, the same refusal is just a refusal.
        let pow2 = CompilerResult::Rejected(ErrorClass::InvalidConfig);
        assert_eq!(
            classify_one(
                pow2,
                outputs(1.0),
                config("config[block_sizes][0] must be a power of two, got 3")
            ),
            Outcome::Rejected
        );
    }

    #[test]
    fn helion_findings_are_classified_before_our_verdict() {
        let crash = EngineStatus::KernelError {
            stage: tpu_runner::Stage::Trace,
            kind: "InternalError".into(),
            message: "AssertionError: invalid subscript".into(),
            traceback: String::new(),
        };
        assert_eq!(
            classify_one(CompilerResult::Lowered, outputs(1.0), crash),
            Outcome::HelionCrash
        );
        assert_eq!(
            classify_one(CompilerResult::Lowered, outputs(1.0), outputs(2.0)),
            Outcome::Mismatch
        );
        assert_eq!(
            classify_one(
                CompilerResult::Lowered,
                outputs(1.0),
                refused("InvalidConfig")
            ),
            Outcome::VerdictMismatch
        );
        let rejected = CompilerResult::Rejected(ErrorClass::BackendUnsupported);
        assert_eq!(
            classify_one(rejected, outputs(1.0), refused("BackendUnsupported")),
            Outcome::Rejected
        );
        // Helion lowering a case we refuse, with the right values, is a fidelity finding.
        assert_eq!(
            classify_one(rejected, outputs(1.0), outputs(1.0)),
            Outcome::VerdictMismatch
        );
        let out_of_range = EngineStatus::Invalid {
            kind: oracle::EvalErrorKind::IndexOutOfRange,
            span: lang::ir::Span::default(),
            message: "index 9 is out of bounds".into(),
        };
        assert_eq!(
            classify_one(CompilerResult::Lowered, out_of_range.clone(), outputs(1.0)),
            Outcome::HelionAcceptsInvalid
        );
        // Both refusing an invalid case is no finding.
        assert_eq!(
            classify_one(rejected, out_of_range, refused("BackendUnsupported")),
            Outcome::InvalidCase
        );
    }

    #[test]
    fn eager_mode_decides_no_verdict_and_no_accepted_invalid() {
        let reference = run(
            "oracle",
            EngineStatus::Invalid {
                kind: oracle::EvalErrorKind::IndexOutOfRange,
                span: lang::ir::Span::default(),
                message: "m".into(),
            },
        );
        let eager = run("helion-eager", outputs(1.0));
        let c = classify(
            CompilerResult::Rejected(ErrorClass::BackendUnsupported),
            &reference,
            &[eager],
            differ,
            |_| None,
        );
        assert_eq!(c.outcome, Outcome::InvalidCase);
    }

    #[test]
    fn a_helion_run_error_on_an_invalid_case_is_the_invalid_case_not_a_crash() {
        let invalid = run(
            "oracle",
            EngineStatus::Invalid {
                kind: oracle::EvalErrorKind::IndexOutOfRange,
                span: lang::ir::Span::default(),
                message: "index 0 is out of bounds for dimension 0 with size 0".into(),
            },
        );
        let raised = |stage| EngineStatus::KernelError {
            stage,
            kind: "IndexError".into(),
            message: "index 0 is out of bounds for dimension 0 with size 0".into(),
            traceback: String::new(),
        };
        let compiler = CompilerResult::Rejected(ErrorClass::BackendUnsupported);
        let eager = run("helion-eager", raised(tpu_runner::Stage::Run));
        let c = classify(
            compiler,
            &invalid,
            std::slice::from_ref(&eager),
            differ,
            |_| None,
        );
        assert_eq!(c.outcome, Outcome::InvalidCase);
        // On a valid case the same error is a Helion crash; a lowering error stays one too.
        let valid = run("oracle", outputs(1.0));
        let c = classify(compiler, &valid, &[eager], differ, |_| None);
        assert_eq!(c.outcome, Outcome::HelionCrash);
        let lowering = run("helion-pallas", raised(tpu_runner::Stage::Lower));
        let c = classify(compiler, &invalid, &[lowering], differ, |_| None);
        assert_eq!(c.outcome, Outcome::LoweringError);
        // Over budget (or any invalidity torch does not raise on), a crash stays a crash.
        let budget = run(
            "oracle",
            EngineStatus::Invalid {
                kind: oracle::EvalErrorKind::Budget,
                span: lang::ir::Span::default(),
                message: "m".into(),
            },
        );
        let pallas = run("helion-pallas", raised(tpu_runner::Stage::Run));
        let c = classify(compiler, &budget, &[pallas], differ, |_| None);
        assert_eq!(c.outcome, Outcome::HelionCrash);
    }

    #[test]
    fn an_eager_value_difference_is_the_known_issue_only_where_the_reference_reports_it() {
        use crate::known_issues::known_divergence;
        let reference = run("oracle", outputs(5.0));
        let eager = run("helion-eager", outputs(2.0));
        let clamped = [oracle::Divergence::NegativeIndexClamped {
            span: lang::ir::Span::default(),
        }];
        let classify_with = |compiler, divergences: &[oracle::Divergence]| {
            classify(
                compiler,
                &reference,
                std::slice::from_ref(&eager),
                differ,
                |e| known_divergence(e.engine, divergences),
            )
        };
        for compiler in [
            CompilerResult::Lowered,
            CompilerResult::Rejected(ErrorClass::BackendUnsupported),
        ] {
            let c = classify_with(compiler, &clamped);
            assert_eq!(c.outcome, Outcome::KnownIssue, "{compiler:?}");
            assert_eq!(c.known_issue, Some("helion-eager-negative-index-clamped"));
            assert_eq!(classify_with(compiler, &[]).outcome, Outcome::Mismatch);
        }
        // Equal values are agreement, whatever the reference reported.
        let same = run("helion-eager", outputs(5.0));
        let c = classify(CompilerResult::Lowered, &reference, &[same], differ, |e| {
            known_divergence(e.engine, &clamped)
        });
        assert_eq!(c.outcome, Outcome::Agree);
        // Only eager mode clamps: the backend engines' differences stay findings.
        let pallas = run("helion-pallas", outputs(2.0));
        let c = classify(
            CompilerResult::Lowered,
            &reference,
            &[pallas],
            differ,
            |e| known_divergence(e.engine, &clamped),
        );
        assert_eq!(c.outcome, Outcome::Mismatch);
    }

    #[test]
    fn nan_only_from_the_mask_by_multiplication_is_that_known_issue_after_every_finding() {
        use crate::input_sets::SetsRun;
        let reference = run("oracle", outputs(5.0));
        let with_sets = |engine: &str, v: f64, masked: usize| {
            let mut r = run(engine, outputs(v));
            r.input_sets = Some(SetsRun {
                derived: 8,
                compared: 8,
                masked_nonfinite: masked,
                ..SetsRun::default()
            });
            r
        };
        let go = |runs: &[EngineRun]| {
            classify(CompilerResult::Lowered, &reference, runs, differ, |_| None)
        };
        let c = go(&[with_sets("helion-pallas", 5.0, 2)]);
        assert_eq!(c.outcome, Outcome::KnownIssue);
        assert_eq!(
            c.known_issue,
            Some(crate::known_issues::MASK_BY_MULTIPLICATION)
        );
        assert_eq!(
            go(&[with_sets("helion-pallas", 5.0, 0)]).outcome,
            Outcome::Agree
        );
        // A mismatch on the case's own inputs is still the finding, and so is one of our
        // engines'.
        assert_eq!(
            go(&[with_sets("helion-pallas", 2.0, 2)]).outcome,
            Outcome::Mismatch
        );
        let c = go(&[
            with_sets("helion-pallas", 5.0, 2),
            run("pallas-sim", outputs(2.0)),
        ]);
        assert_eq!(c.outcome, Outcome::Mismatch);
        assert_eq!(c.engine, Some(crate::engines::EngineId::PallasSim));
        // Eager mode does not mask by multiplication.
        assert_eq!(
            go(&[with_sets("helion-eager", 5.0, 2)]).outcome,
            Outcome::Agree
        );
    }

    #[test]
    fn every_outcome_has_a_distinct_name() {
        let mut names: Vec<&str> = Outcome::ALL.iter().map(|o| o.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Outcome::ALL.len());
    }
}
