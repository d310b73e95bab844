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
//! An engine error listed in [`crate::known_issues`] does not decide the outcome; if nothing
//! else does, the case is `known-issue`.
//!
//! Precedence, first match wins: compiler-crash; invalid-case; rejected; unsupported; then the
//! engines in the order given: timeout, engine-crash, lowering-error, runtime-error, mismatch;
//! else agree.

use crate::compare::Mismatch;
use crate::engines::{EngineRun, EngineStatus};
use serde::Serialize;
use std::fmt;

/// How one case ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
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
}

impl Outcome {
    /// Every outcome, in table order.
    pub const ALL: [Outcome; 11] = [
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
        }
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
            | Outcome::EngineCrash => true,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The classified result, with the engine that decided it and why.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Classified {
    /// The outcome.
    pub outcome: Outcome,
    /// The engine that decided it (none for agree/rejected/compiler-crash).
    pub engine: Option<String>,
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
    /// Rejected with a rule.
    Rejected,
    /// Accepted, but the codegen does not model a construct (no module).
    Gap,
    /// Panicked.
    Crashed,
}

/// Classifies a case from the compiler's result, the reference run and the engine runs (in the
/// order the user listed the engines). `compare` compares an engine's outputs with the
/// reference's.
pub fn classify(
    compiler: CompilerResult,
    reference: &EngineRun,
    engines: &[EngineRun],
    compare: impl Fn(&EngineRun, &EngineRun) -> Option<Mismatch>,
) -> Classified {
    let plain = |outcome, engine: Option<&EngineRun>| Classified {
        outcome,
        engine: engine.map(|e| e.engine.clone()),
        mismatch: None,
        known_issue: None,
    };
    if compiler == CompilerResult::Crashed {
        return plain(Outcome::CompilerCrash, None);
    }
    if matches!(reference.status, EngineStatus::Invalid { .. }) {
        return plain(Outcome::InvalidCase, Some(reference));
    }
    match compiler {
        CompilerResult::Rejected => return plain(Outcome::Rejected, None),
        CompilerResult::Gap => return plain(Outcome::Unsupported, None),
        CompilerResult::Lowered | CompilerResult::Crashed => {}
    }
    let mut known = None;
    for e in engines {
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
            | EngineStatus::Unavailable(_)
            | EngineStatus::NotRun(_)
            | EngineStatus::Invalid { .. } => None,
        };
        if let Some(o) = outcome {
            if let Some(k) = crate::known_issues::known_issue(&e.engine, &e.status) {
                known = known.or(Some((e, k.id)));
                continue;
            }
            return plain(o, Some(e));
        }
        if let Some(m) = compare(e, reference) {
            return Classified {
                outcome: Outcome::Mismatch,
                engine: Some(e.engine.clone()),
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
