//! Regression ranges of Helion findings: what a finding's case does on one Helion build, judged
//! by the finding's signature ([`behaviour`]), for `pallas-diff bisect`, a campaign's ranges
//! of new findings, and fix verification (`replay --helion-build`: [`FixState`]).
//! Which builds to try, and what their answers add up to, is `tpu_runner::builds::range`.

use crate::signature::Signature;
use fuzz::outcome::Outcome;
pub use tpu_runner::builds::range::Behaviour;

/// What a run whose signature is `run` says about the finding `symptom` on the build it ran:
/// - [`Behaviour::Bad`]: the finding's symptom, by [`Signature::holds_for`] (the same outcome,
///   engine and cause; the forms or decisions a reduction may narrow);
/// - [`Behaviour::Good`]: as the reference says: the values agree, or the build refuses the
///   case the way a documented refusal does (`rejected`), or a verdict that differs from our
///   1.5.1 model only (`verdict-mismatch`: drift of the build, not the symptom);
/// - [`Behaviour::Other`]: anything else (another symptom, an engine that could not run),
///   named by its bucket key.
///
/// `symptom_exception` and `run_exception` are the Helion exceptions of the symptom's run and
/// of this one without their raising frames ([`frameless`]): equal, they are one symptom whose
/// code moved between releases (measured: Helion 1.5.0 moved the Pallas launcher from
/// `helion/runtime/__init__.py` to `helion/runtime/pallas/launcher.py`, and a known issue
/// matched by that frame reads as another crash on 1.4.0 without this rule).
pub fn behaviour(
    symptom: &Signature,
    symptom_exception: Option<&str>,
    run: &Signature,
    run_exception: Option<&str>,
) -> Behaviour {
    judged(
        symptom.holds_for(run)
            || (symptom_exception.is_some() && symptom_exception == run_exception),
        run,
    )
}

/// [`behaviour`] once the caller knows whether the run shows the symptom (`shows_symptom`): by
/// a finding's signature, or by a corpus entry's expectation (its symptom key).
pub fn judged(shows_symptom: bool, run: &Signature) -> Behaviour {
    if shows_symptom {
        return Behaviour::Bad;
    }
    match run.outcome {
        Outcome::Agree | Outcome::Rejected | Outcome::VerdictMismatch => Behaviour::Good,
        _ => Behaviour::Other(run.key()),
    }
}

/// Fix verification: what a Helion finding (or a corpus entry's expected Helion bug) is on the
/// build a replay ran, by [`behaviour`]'s one judgement.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "state", content = "now", rename_all = "kebab-case")]
pub enum FixState {
    /// The same symptom (signature, or the same exception raised from moved code).
    StillPresent,
    /// The reference's values now, or a documented refusal.
    Fixed,
    /// Another symptom; its bucket key.
    Changed(String),
}

impl FixState {
    /// The state a run's [`Behaviour`] means.
    pub fn of(behaviour: Behaviour) -> FixState {
        match behaviour {
            Behaviour::Bad => FixState::StillPresent,
            Behaviour::Good => FixState::Fixed,
            Behaviour::Other(key) => FixState::Changed(key),
        }
    }

    /// `still-present`, `fixed` or `changed`.
    pub fn name(&self) -> &'static str {
        match self {
            FixState::StillPresent => "still-present",
            FixState::Fixed => "fixed",
            FixState::Changed(_) => "changed",
        }
    }
}

impl std::fmt::Display for FixState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FixState::Changed(key) => write!(f, "changed (now {key})"),
            FixState::StillPresent | FixState::Fixed => f.write_str(self.name()),
        }
    }
}

/// The Helion exception a finding recorded, as [`frameless`] keys it (`stage:class: normalized
/// message`): from its decided-by engine's record, whose `detail` is `<stage> <class>: <first
/// line>` ([`fuzz::engines::EngineStatus::detail`]). `None` when no Helion engine raised.
pub fn recorded_frameless(meta: &crate::finding::FindingMeta) -> Option<String> {
    meta.report.engines.iter().find_map(|record| {
        let (stage, class) = (record.stage?, record.class.as_deref()?);
        if !record.engine.is_helion() {
            return None;
        }
        let detail = record.detail.as_deref().unwrap_or("");
        let message = detail
            .strip_prefix(&format!("{stage} {class}: "))
            .unwrap_or(detail);
        Some(format!(
            "{stage}:{class}: {}",
            fuzz::exception::normalize_message(message)
        ))
    })
}

/// A finding's regression range as `meta.json` keeps it (`regression`): each build tried, in
/// order, with what the case did there, and the range they add up to
/// ([`tpu_runner::builds::range::scan`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RegressionRecord {
    /// Each build and what the case did on it (`good`, `bad`, or `other` with its bucket key).
    pub builds: Vec<BuildBehaviour>,
    /// The last build that behaves as the reference says before the first bad one.
    pub last_good: Option<String>,
    /// The first build that shows the symptom.
    pub first_bad: Option<String>,
    /// The last bad build and the first good one after it, when the symptom went away.
    pub fixed: Option<(String, String)>,
}

/// One build's row of a [`RegressionRecord`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BuildBehaviour {
    /// The build.
    pub build: tpu_runner::BuildIdentity,
    /// `good`, `bad` or `other`.
    pub behaves: String,
    /// For `other`: the run's bucket key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl RegressionRecord {
    /// The record of `rows` (builds in order, each with its behaviour).
    pub fn of(rows: Vec<(tpu_runner::BuildIdentity, Behaviour)>) -> RegressionRecord {
        let scan = tpu_runner::builds::range::scan(rows.len(), |i| rows[i].1.clone());
        let name = |i: usize| rows[i].0.to_string();
        RegressionRecord {
            last_good: scan.last_good.map(name),
            first_bad: scan.first_bad.map(name),
            fixed: scan.fixed.map(|(b, g)| (name(b), name(g))),
            builds: rows
                .iter()
                .map(|(build, b)| {
                    let (behaves, detail) = match b {
                        Behaviour::Good => ("good", None),
                        Behaviour::Bad => ("bad", None),
                        Behaviour::Other(d) => ("other", Some(d.clone())),
                    };
                    BuildBehaviour {
                        build: build.clone(),
                        behaves: behaves.to_owned(),
                        detail,
                    }
                })
                .collect(),
        }
    }

    /// One line: where the symptom came in, and where it went away.
    pub fn summary(&self) -> String {
        let introduced = match (&self.last_good, &self.first_bad) {
            (_, None) => "the symptom shows on none of the builds tried".to_owned(),
            (Some(g), Some(b)) => format!("introduced after {g} in {b}"),
            (None, Some(b)) => {
                format!("present in {b} (no earlier build tried behaves as the reference says)")
            }
        };
        match &self.fixed {
            Some((b, g)) => format!("{introduced}; fixed after {b} in {g}"),
            None => introduced,
        }
    }
}

/// One build's run of a case.
#[derive(Clone, Debug)]
pub struct BuildRun {
    /// The build, as its worker reported it.
    pub build: tpu_runner::BuildIdentity,
    /// The run's signature.
    pub signature: Signature,
    /// Its Helion exception without the raising frame ([`frameless`]).
    pub exception: Option<String>,
}

/// Why a case could not run on a build.
#[derive(Clone, Debug, thiserror::Error)]
pub enum RegressionError {
    /// The build's worker did not start (or is not the build it says).
    #[error("helion build {build}: {error}")]
    Start {
        /// The build's id.
        build: String,
        /// Why.
        error: String,
    },
    /// The engine is not a Helion engine.
    #[error("engine {0} is not a Helion engine: regression ranges are across Helion builds")]
    NotHelion(fuzz::engines::EngineId),
}

/// A started build: its one-worker Helion pool and what it reported itself to be.
struct Started {
    pools: fuzz::engines::Pools,
    identity: tpu_runner::BuildIdentity,
}

/// Starts `build` in a one-worker pool of its own (a Helion worker start: most of a build's
/// cost, ~36 s per start measured on 2 cores at load ~21).
fn start(
    build: &tpu_runner::HelionBuild,
    python: &std::path::Path,
    timeout: std::time::Duration,
) -> Result<Started, RegressionError> {
    let pool = tpu_runner::Pool::new(
        tpu_runner::PoolConfig::for_runtime(tpu_runner::Runtime::Helion, python)
            .with_workers(1)
            .with_timeout(timeout)
            .with_helion_build(Some(build.clone())),
    )
    .map_err(|error| RegressionError::Start {
        build: build.id().to_owned(),
        error: error.to_string(),
    })?;
    let identity = pool.availability().helion_build.clone().unwrap_or_default();
    Ok(Started {
        pools: fuzz::engines::Pools {
            jax: None,
            helion: Some(std::sync::Arc::new(pool)),
        },
        identity,
    })
}

/// Runs `case` with the Helion engine `engine` on a started build.
fn run_started(
    started: &Started,
    engine: fuzz::engines::EngineId,
    case: &lang::ir::Case,
    codegen: &compiler::compile::CodegenOptions,
) -> BuildRun {
    let engines = fuzz::engines::build_with(&[engine], &started.pools)
        .expect("a Helion engine builds on a Helion pool");
    let report = fuzz::check::check_case(case, &engines, codegen);
    BuildRun {
        build: started.identity.clone(),
        signature: crate::signature::signature(case, &report),
        exception: frameless(&report),
    }
}

/// Runs `case` with the Helion engine `engine` on `build`, in a one-worker pool of its own.
pub fn run_on_build(
    build: &tpu_runner::HelionBuild,
    python: &std::path::Path,
    engine: fuzz::engines::EngineId,
    case: &lang::ir::Case,
    codegen: &compiler::compile::CodegenOptions,
    timeout: std::time::Duration,
) -> Result<BuildRun, RegressionError> {
    if !engine.is_helion() {
        return Err(RegressionError::NotHelion(engine));
    }
    Ok(run_started(
        &start(build, python, timeout)?,
        engine,
        case,
        codegen,
    ))
}

/// The regression range of a Helion finding across `builds` (oldest first)
/// ([`ranges_of_findings`] of one finding).
pub fn range_of_finding(
    finding: &crate::finding::Finding,
    builds: &[tpu_runner::HelionBuild],
    python: &std::path::Path,
    timeout: std::time::Duration,
) -> Option<Result<RegressionRecord, RegressionError>> {
    ranges_of_findings(&[finding], builds, python, timeout)
        .pop()
        .flatten()
}

/// The regression range of each Helion finding of `findings` across `builds` (oldest first):
/// its case, under its codegen options, with the engine its signature names, on each build,
/// each run judged by [`behaviour`] against the finding's signature and its recorded
/// exception; `None` for a finding no Helion engine decided. Each build starts once for all
/// the findings (a worker start costs more than a run).
pub fn ranges_of_findings(
    findings: &[&crate::finding::Finding],
    builds: &[tpu_runner::HelionBuild],
    python: &std::path::Path,
    timeout: std::time::Duration,
) -> Vec<Option<Result<RegressionRecord, RegressionError>>> {
    let engines: Vec<Option<fuzz::engines::EngineId>> = findings
        .iter()
        .map(|f| f.meta.signature.engine.filter(|e| e.is_helion()))
        .collect();
    let mut runs: Vec<Result<Vec<BuildRun>, RegressionError>> =
        findings.iter().map(|_| Ok(Vec::new())).collect();
    if engines.iter().all(Option::is_none) {
        return findings.iter().map(|_| None).collect();
    }
    for build in builds {
        let started = start(build, python, timeout);
        for ((finding, engine), runs) in findings.iter().zip(&engines).zip(runs.iter_mut()) {
            let (Some(engine), Ok(done)) = (engine, runs.as_mut()) else {
                continue;
            };
            match &started {
                Ok(s) => {
                    // A finding's codegen options loaded with it; a record that no longer
                    // parses runs with the defaults (a Helion engine does not read them).
                    let codegen = finding.meta.codegen.options().unwrap_or_default();
                    done.push(run_started(s, *engine, &finding.case, &codegen));
                }
                Err(e) => *runs = Err(e.clone()),
            }
        }
    }
    findings
        .iter()
        .zip(engines)
        .zip(runs)
        .map(|((finding, engine), runs)| {
            engine?;
            Some(runs.map(|runs| judge_runs(&finding.meta, runs)))
        })
        .collect()
}

/// A finding's runs on builds (oldest first), judged against its signature and its recorded
/// exception (else that of the newest run showing the symptom).
fn judge_runs(meta: &crate::finding::FindingMeta, runs: Vec<BuildRun>) -> RegressionRecord {
    let symptom_exception = recorded_frameless(meta).or_else(|| {
        runs.iter()
            .rev()
            .find(|r| meta.signature.holds_for(&r.signature))
            .and_then(|r| r.exception.clone())
    });
    RegressionRecord::of(
        runs.into_iter()
            .map(|r| {
                let b = behaviour(
                    &meta.signature,
                    symptom_exception.as_deref(),
                    &r.signature,
                    r.exception.as_deref(),
                );
                (r.build, b)
            })
            .collect(),
    )
}

/// A Helion engine's exception on a case, as its cause key without the raising frame
/// (`stage:class: normalized message`, [`fuzz::exception::cause`]); `None` when no Helion
/// engine raised.
pub fn frameless(report: &fuzz::check::CaseReport) -> Option<String> {
    report.engines.iter().find_map(|run| match &run.status {
        fuzz::engines::EngineStatus::KernelError {
            stage,
            kind,
            message,
            traceback,
        } if run.engine.is_helion() => {
            let cause = fuzz::exception::cause(*stage, kind, message, traceback);
            Some(match cause.rfind(" @ ") {
                Some(i) => cause[..i].to_owned(),
                None => cause,
            })
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fuzz::engines::EngineId;
    use tpu_runner::Mode;

    fn sig(outcome: Outcome, cause: Option<&str>) -> Signature {
        Signature {
            outcome,
            engine: Some(EngineId::Worker(Mode::HelionPallas)),
            cause: cause.map(str::to_owned),
            ..Signature::default()
        }
    }

    #[test]
    fn the_same_crash_is_bad_another_is_other_a_refusal_is_good() {
        let crash = sig(
            Outcome::HelionCrash,
            Some("trace:InductorLoweringError: x @ helion/_compiler/a.py:f"),
        );
        assert_eq!(behaviour(&crash, None, &crash, None), Behaviour::Bad);
        let other = sig(
            Outcome::HelionCrash,
            Some("trace:AssertionError: y @ helion/_compiler/b.py:g"),
        );
        assert!(matches!(
            behaviour(&crash, None, &other, None),
            Behaviour::Other(k) if k.contains("AssertionError")
        ));
        let rejected = sig(Outcome::Rejected, None);
        assert_eq!(behaviour(&crash, None, &rejected, None), Behaviour::Good);
        let agree = sig(Outcome::Agree, None);
        assert_eq!(behaviour(&crash, None, &agree, None), Behaviour::Good);
    }

    #[test]
    fn one_exception_raised_from_moved_code_is_the_same_symptom() {
        let known = sig(
            Outcome::KnownIssue,
            Some("helion-branch-carried-unbound-local"),
        );
        let moved = sig(
            Outcome::HelionCrash,
            Some("run:UnboundLocalError: x @ helion/runtime/__init__.py:reordered_kernel"),
        );
        let exception = Some("run:UnboundLocalError: x");
        assert_eq!(
            behaviour(&known, exception, &moved, exception),
            Behaviour::Bad
        );
        assert!(matches!(
            behaviour(&known, exception, &moved, Some("run:TypeError: y")),
            Behaviour::Other(_)
        ));
    }

    /// A real Helion finding (seed 31's `helion-crash` of Helion 1.5.1, an
    /// `InductorLoweringError` in `generate_ast.py:lift`) judged against what its case did on
    /// other builds (the runs measured with `replay --helion-build`: Helion 1.4.0 refuses it
    /// with `InvalidIndexingType`).
    #[test]
    fn a_recorded_helion_finding_is_still_present_fixed_or_changed() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/helion-s31/0004-helion-crash-helion-pallas");
        let finding = crate::finding::Finding::load(&dir).expect("the fixture loads");
        let meta = &finding.meta;
        let recorded = recorded_frameless(meta).expect("a Helion exception was recorded");
        let cause = meta.signature.cause.clone().expect("a crash has a cause");
        assert_eq!(
            Some(recorded.as_str()),
            cause.rsplit_once(" @ ").map(|c| c.0)
        );
        let state = |run: &Signature, exception: Option<&str>| {
            FixState::of(behaviour(&meta.signature, Some(&recorded), run, exception))
        };
        assert_eq!(
            state(&meta.signature, Some(&recorded)),
            FixState::StillPresent
        );
        // The same exception raised from code another release moved.
        let moved = Signature {
            cause: Some(format!("{recorded} @ helion/_compiler/other.py:lift")),
            ..meta.signature.clone()
        };
        assert_eq!(state(&moved, Some(&recorded)), FixState::StillPresent);
        // Helion 1.4.0: a documented refusal where our model lowers.
        let refused = Signature {
            outcome: Outcome::VerdictMismatch,
            cause: Some("ours:lowered helion:InvalidIndexingType".into()),
            ..meta.signature.clone()
        };
        assert_eq!(state(&refused, None), FixState::Fixed);
        let agrees = sig(Outcome::Agree, None);
        assert_eq!(state(&agrees, None), FixState::Fixed);
        let other = sig(
            Outcome::HelionCrash,
            Some("run:TypeError: x @ helion/runtime/pallas/launcher.py:f"),
        );
        let changed = state(&other, Some("run:TypeError: x"));
        assert!(
            matches!(&changed, FixState::Changed(k) if k.contains("run:TypeError")),
            "{changed:?}"
        );
        assert_eq!(changed.name(), "changed");
    }
}
