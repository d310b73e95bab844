//! Replaying the corpus, or a findings directory: one trial per entry × engine (or per
//! finding), shared by `pallas-diff replay` and the `replay` test target.
//!
//! Trials are named `<engine>/<id>-<slug>`. The `oracle` trial needs no Python: it checks the
//! compile-level outcome (verdict; the reference accepts or refuses the case), the stored
//! reference outputs (bit for bit), and that the `.py` next to the entry is its current
//! rendering. An engine trial runs `check_case` with that engine alone and compares the outcome
//! with the entry's expectation for the engine. An entry expected to show a finding that now
//! agrees fails ("fixed? update the entry"): a stale expectation cannot hide.
//!
//! A failing trial carries the [`Update`] that would make it pass; [`bless`] applies updates to
//! the entry files and says what changed.
//!
//! A findings directory (what `pallas-diff fuzz` writes: one sub-directory with `meta.json` per
//! finding) replays too ([`open_source`] tells the two apart): one trial per finding,
//! `<engine>/<dir>` (`oracle/<dir>` for a finding no engine decided, e.g. a compiler crash),
//! which runs the finding's case with its engine alone, under its codegen options (injected
//! faults included), and passes while the recorded signature still holds
//! ([`replay_finding`]). A finding has nothing to bless: its expectation is what it recorded.

use crate::entry::{
    Corpus, CorpusError, EngineKey, Entry, Expected, LoadedEntry, Reference, VerdictRecord,
    star_expectation,
};
use compiler::compile::CodegenOptions;
use finding::finding::{Finding, FindingError};
use finding::fsio::{self, IoError};
use finding::minimize::SharedEngine;
use finding::regression::{FixState, behaviour, frameless, judged, recorded_frameless};
use finding::signature::signature;
use finding::sink::INDEX_FILES;
use fuzz::check::{CaseReport, check_case};
use fuzz::engines::{Engine, EngineId, EngineStatus};
use lang::ir::Case;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One trial: an entry and an engine (the reference for the reference trial).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrialSpec {
    /// `<engine>/<id>-<slug>`.
    pub name: String,
    /// Index into the corpus's entries.
    pub entry: usize,
    /// The engine.
    pub engine: EngineId,
}

/// Every trial of `corpus` for `engines` (the reference trial always comes first for each
/// entry), entry by entry.
pub fn trials(corpus: &Corpus, engines: &[EngineId]) -> Vec<TrialSpec> {
    let mut out = Vec::new();
    for (i, e) in corpus.entries.iter().enumerate() {
        for &engine in std::iter::once(&EngineId::Reference)
            .chain(engines.iter().filter(|n| **n != EngineId::Reference))
        {
            out.push(TrialSpec {
                name: format!("{engine}/{}", e.entry.name()),
                entry: i,
                engine,
            });
        }
    }
    out
}

/// A change to an entry that makes a failing trial pass.
#[derive(Clone, Debug, PartialEq)]
pub enum Update {
    /// Set the expectation of an engine (or `*`).
    Expect {
        /// The engine (or `*`).
        engine: EngineKey,
        /// The new expectation.
        to: Expected,
    },
    /// Replace the stored reference.
    Reference(Reference),
    /// Replace the recorded verdict.
    Verdict(VerdictRecord),
    /// Rewrite the `.py` next to the entry.
    Script,
}

/// How a trial ended.
#[derive(Clone, Debug, PartialEq)]
pub enum TrialResult {
    /// As expected.
    Pass,
    /// Not run here; the reason.
    Ignored(String),
    /// Not as expected: why, and the updates that would record what happens now.
    Fail {
        /// The message.
        message: String,
        /// What `--bless` would change.
        updates: Vec<Update>,
    },
}

fn codegen_of(entry: &Entry) -> Result<CodegenOptions, TrialResult> {
    entry.codegen.options().map_err(|e| TrialResult::Fail {
        message: format!("{}: codegen options: {e}", entry.name()),
        updates: vec![],
    })
}

fn references_match(stored: &Reference, now: &Reference) -> bool {
    match (stored, now) {
        (Reference::Outputs(a), Reference::Outputs(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| x.name == y.name && x.same_as(&y.tensor()))
        }
        (Reference::Invalid { kind: k1, .. }, Reference::Invalid { kind: k2, .. }) => k1 == k2,
        (Reference::Outputs(_), Reference::Invalid { .. })
        | (Reference::Invalid { .. }, Reference::Outputs(_)) => false,
    }
}

fn describe_reference(r: &Reference) -> String {
    match r {
        Reference::Outputs(o) => o
            .iter()
            .map(|t| {
                let head: Vec<String> = t.values.iter().take(4).map(|v| v.to_string()).collect();
                format!(
                    "{} {}{:?} [{}{}]",
                    t.name,
                    t.dtype.name(),
                    t.shape,
                    head.join(", "),
                    if t.values.len() > 4 { ", ..." } else { "" }
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
        Reference::Invalid { kind, message } => format!("invalid ({kind}): {message}"),
    }
}

/// The `oracle` trial: the compile-level outcome, the reference outputs, the case script.
pub fn check_reference(entry: &LoadedEntry) -> TrialResult {
    let e = &entry.entry;
    let codegen = match codegen_of(e) {
        Ok(c) => c,
        Err(fail) => return fail,
    };
    let report = check_case(&e.case, &[], &codegen);
    let mut problems = Vec::new();
    let mut updates = Vec::new();
    let compile_level = star_expectation(&e.case, &report);
    let expected = e.expected_compile_level();
    if compile_level != expected {
        problems.push(format!(
            "before any engine runs the case ends in `{compile_level}`, but the entry expects `{expected}`{}",
            report
                .rejection()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default()
        ));
        updates.push(Update::Expect {
            engine: EngineKey::Any,
            to: compile_level,
        });
    }
    let verdict = VerdictRecord::of_report(&report);
    if verdict != e.verdict {
        problems.push(format!(
            "the compiler's verdict is `{verdict}`, but the entry records `{}`",
            e.verdict
        ));
        updates.push(Update::Verdict(verdict));
    }
    let now = Reference::of_report(&e.case, &report);
    if !references_match(&e.reference, &now) {
        problems.push(format!(
            "the reference changed:\n  stored: {}\n  now:    {}",
            describe_reference(&e.reference),
            describe_reference(&now)
        ));
        updates.push(Update::Reference(now));
    }
    let script = entry.script_path();
    match std::fs::read_to_string(&script) {
        Ok(text) if text == e.script() => {}
        Ok(_) => {
            problems.push(format!(
                "{} is not the entry's rendering (edit the JSON, not the script)",
                script.display()
            ));
            updates.push(Update::Script);
        }
        Err(err) => {
            problems.push(format!("{}: {err}", script.display()));
            updates.push(Update::Script);
        }
    }
    if problems.is_empty() {
        TrialResult::Pass
    } else {
        TrialResult::Fail {
            message: format!(
                "{}: {}\n(run with --bless, or PALLAS_DIFF_BLESS=1 for the test target, to record what happens now)",
                e.name(),
                problems.join("\n")
            ),
            updates,
        }
    }
}

/// What the engine did, in one line, for messages.
fn detail(report: &CaseReport) -> String {
    if let Some(m) = &report.mismatch {
        return m.to_string();
    }
    if let Some(c) = &report.crash {
        return c.lines().take(2).collect::<Vec<_>>().join(" ");
    }
    report
        .engines
        .iter()
        .find_map(|e| e.status.detail())
        .or_else(|| report.rejection().map(|r| r.to_string()))
        .unwrap_or_default()
}

/// A trial's result and, for a trial of a Helion bug (a Helion finding, or an entry expecting a
/// finding or a known issue of a Helion engine), what that bug is on the Helion build that ran
/// ([`FixState`]: fix verification, `replay --helion-build`).
#[derive(Clone, Debug, PartialEq)]
pub struct Replayed {
    /// How the trial ended.
    pub result: TrialResult,
    /// For a Helion bug: still present, fixed or changed.
    pub fix: Option<FixState>,
}

impl From<TrialResult> for Replayed {
    fn from(result: TrialResult) -> Replayed {
        Replayed { result, fix: None }
    }
}

/// An engine trial: `check_case` with `engine` alone, compared with the entry's expectation.
pub fn replay_engine(entry: &Entry, engine: &Arc<dyn Engine>) -> TrialResult {
    replay_engine_verified(entry, engine).result
}

/// [`replay_engine`], and for an entry expecting a Helion bug of `engine`, what the bug is now:
/// still present when the engine does what the entry expects, otherwise judged as a regression
/// range judges a build ([`finding::regression::judged`]).
pub fn replay_engine_verified(entry: &Entry, engine: &Arc<dyn Engine>) -> Replayed {
    let codegen = match codegen_of(entry) {
        Ok(c) => c,
        Err(fail) => return fail.into(),
    };
    let report = check_case(&entry.case, std::slice::from_ref(&boxed(engine)), &codegen);
    if let Some(reason) = report.engines.iter().find_map(|r| match &r.status {
        EngineStatus::Unavailable(reason) => Some(reason.clone()),
        _ => None,
    }) {
        return TrialResult::Ignored(format!("{} is not available here: {reason}", engine.name()))
            .into();
    }
    let expected = entry.expected(engine.id());
    let fix = expected
        .filter(|e| {
            engine.id().is_helion() && (e.is_finding() || matches!(e, Expected::KnownIssue(_)))
        })
        .map(|e| {
            let shows = Expected::of_report(&entry.case, &report) == *e;
            FixState::of(judged(shows, &signature(&entry.case, &report)))
        });
    Replayed {
        result: judge(entry, engine.id(), &report),
        fix,
    }
}

/// Compares a report (made with `engine` alone) with the entry's expectation for `engine`.
pub fn judge(entry: &Entry, engine: EngineId, report: &CaseReport) -> TrialResult {
    let actual = Expected::of_report(&entry.case, report);
    let expected = entry.expected(engine).cloned().unwrap_or(Expected::Agree);
    if actual == expected {
        return TrialResult::Pass;
    }
    let update = vec![Update::Expect {
        engine: engine.into(),
        to: actual.clone(),
    }];
    let bless = "(run with --bless, or PALLAS_DIFF_BLESS=1 for the test target, to record it)";
    let message = if expected.is_finding() && actual == Expected::Agree {
        format!(
            "{}: fixed? update the entry: {engine} now agrees with the reference, but the entry expects `{expected}`{} {bless}",
            entry.name(),
            entry
                .links
                .get(&EngineKey::Engine(engine))
                .map(|l| format!(" ({l})"))
                .unwrap_or_default()
        )
    } else {
        format!(
            "{}: {engine}: expected `{expected}`, got `{actual}`: {}{} {bless}",
            entry.name(),
            detail(report),
            version_change(entry, engine)
        )
    };
    TrialResult::Fail {
        message,
        updates: update,
    }
}

/// For a Helion engine's trial of an entry blessed under another Helion release: which two.
fn version_change(entry: &Entry, engine: EngineId) -> String {
    let helion = engine.is_helion();
    let now = crate::entry::blessed_helion();
    match &entry.helion {
        Some(then) if helion && *then != now => {
            format!(
                " (the verdict changed between helion {then}, which the entry was blessed under, and helion {now})"
            )
        }
        None if helion => format!(" (the entry records no Helion release; this is helion {now})"),
        Some(_) | None => String::new(),
    }
}

/// Runs `case` with each engine alone (as replay does): the reports [`Corpus::add_finding`]
/// records as expectations.
pub fn observe(
    case: &Case,
    engines: &[Arc<dyn Engine>],
    codegen: &CodegenOptions,
) -> Vec<(EngineId, CaseReport)> {
    engines
        .iter()
        .map(|e| {
            (
                e.id(),
                check_case(case, std::slice::from_ref(&boxed(e)), codegen),
            )
        })
        .collect()
}

/// The one-engine list `check_case` takes.
fn boxed(engine: &Arc<dyn Engine>) -> Box<dyn Engine> {
    Box::new(SharedEngine(engine.clone()))
}

/// Applies updates (file, update) to the entry files; returns one line per change.
pub fn bless(updates: &[(PathBuf, Update)]) -> Result<Vec<String>, CorpusError> {
    let mut by_file: BTreeMap<&PathBuf, Vec<&Update>> = BTreeMap::new();
    for (path, u) in updates {
        by_file.entry(path).or_default().push(u);
    }
    let mut changes = Vec::new();
    for (path, ups) in by_file {
        let mut entry = crate::entry::load_entry(path)?;
        let name = entry.name();
        // `*` first: setting it prunes the engine keys equal to it.
        let mut ordered: Vec<&Update> = ups.clone();
        ordered.sort_by_key(|u| match u {
            Update::Expect {
                engine: EngineKey::Any,
                ..
            } => 0,
            Update::Reference(_) | Update::Verdict(_) => 1,
            Update::Expect { .. } => 2,
            Update::Script => 3,
        });
        for u in ordered {
            match u {
                Update::Expect { engine, to } => {
                    let from = entry
                        .expected(*engine)
                        .map(|e| e.to_string())
                        .unwrap_or_else(|| "-".into());
                    if from != to.to_string() {
                        entry.set_expected(*engine, to.clone());
                        changes.push(format!("{name}: {engine}: {from} -> {to}"));
                    }
                }
                Update::Reference(r) => {
                    changes.push(format!(
                        "{name}: reference: {} -> {}",
                        describe_reference(&entry.reference),
                        describe_reference(r)
                    ));
                    entry.reference = r.clone();
                }
                Update::Verdict(v) => {
                    changes.push(format!("{name}: verdict: {} -> {v}", entry.verdict));
                    entry.verdict = v.clone();
                }
                Update::Script => changes.push(format!("{name}: case script rewritten")),
            }
        }
        // Whatever was re-recorded now was recorded under this Helion release.
        let now = crate::entry::blessed_helion();
        if entry.helion.as_deref() != Some(now.as_str()) {
            changes.push(format!(
                "{name}: helion: {} -> {now}",
                entry.helion.as_deref().unwrap_or("-")
            ));
            entry.helion = Some(now);
        }
        let json = entry.to_json();
        fsio::write_atomic(path, json.as_bytes())?;
        fsio::write_atomic(&path.with_extension("py"), entry.script().as_bytes())?;
    }
    Ok(changes)
}

/// A summary line per outcome for a finished replay: `N passed, M failed, K ignored`.
pub fn summary(results: &[(String, TrialResult)]) -> String {
    let mut pass = 0;
    let mut fail = 0;
    let mut ignored = 0;
    for (_, r) in results {
        match r {
            TrialResult::Pass => pass += 1,
            TrialResult::Fail { .. } => fail += 1,
            TrialResult::Ignored(_) => ignored += 1,
        }
    }
    let mut s = String::new();
    let _ = write!(s, "{pass} passed, {fail} failed, {ignored} ignored");
    s
}

/// A finding directory, loaded.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedFinding {
    /// The directory.
    pub dir: PathBuf,
    /// What it holds.
    pub finding: Finding,
}

impl LoadedFinding {
    /// The directory's own name (the trial name's suffix).
    pub fn name(&self) -> String {
        self.dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.dir.display().to_string())
    }

    /// The engine a replay runs: the one the signature names; `None` for a finding decided
    /// before any engine ran (compiler crash), replayed as an `oracle` trial.
    pub fn engine(&self) -> Option<EngineId> {
        self.finding.meta.signature.engine
    }

    /// `<engine>/<dir>`.
    pub fn trial_name(&self) -> String {
        format!(
            "{}/{}",
            self.engine().unwrap_or(EngineId::Reference),
            self.name()
        )
    }
}

/// What a directory given to `replay` holds.
#[derive(Clone, Debug)]
pub enum Source {
    /// A regression corpus (`<id>-<slug>.json` entries).
    Corpus(Corpus),
    /// Finding directories: a findings directory's, sorted by name, or one finding directory.
    Findings(Vec<LoadedFinding>),
}

/// Why a directory cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// It does not exist.
    #[error("{}: no such directory", .0.display())]
    Missing(PathBuf),
    /// It is a file.
    #[error("{}: not a directory (give a corpus directory, a findings directory or a finding directory)", .0.display())]
    NotADirectory(PathBuf),
    /// It holds neither entries nor findings.
    #[error(
        "{}: nothing to replay: no corpus entries (`<id>-<slug>.json`) and no finding directories (`<dir>/meta.json`)",
        .0.display()
    )]
    Empty(PathBuf),
    /// It holds both (replay would have to guess which one was meant).
    #[error(
        "{}: holds corpus entries (e.g. {entry}) and finding directories (e.g. {finding}/); replay them from separate directories",
        path.display()
    )]
    Mixed {
        /// The directory.
        path: PathBuf,
        /// One entry file's name.
        entry: String,
        /// One finding directory's name.
        finding: String,
    },
    /// It could not be listed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// A corpus file is not a valid entry.
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    /// A finding directory cannot be read.
    #[error(transparent)]
    Finding(#[from] FindingError),
}

fn hidden(p: &Path) -> bool {
    p.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

/// Opens a directory for replay: a finding directory (it has `meta.json`), a findings directory
/// (sub-directories with `meta.json`; its index files ([`INDEX_FILES`]) and hidden temporaries are
/// skipped), or a
/// regression corpus (`*.json` entries). All or nothing: the first unreadable entry or finding
/// is the error. A missing or empty directory is an error, never an empty replay.
pub fn open_source(dir: &Path) -> Result<Source, SourceError> {
    if !dir.exists() {
        return Err(SourceError::Missing(dir.to_path_buf()));
    }
    if !dir.is_dir() {
        return Err(SourceError::NotADirectory(dir.to_path_buf()));
    }
    if dir.join("meta.json").is_file() {
        let finding = Finding::load(dir)?;
        return Ok(Source::Findings(vec![LoadedFinding {
            dir: dir.to_path_buf(),
            finding,
        }]));
    }
    let listing = std::fs::read_dir(dir).map_err(|e| IoError::new(dir, "list", e))?;
    let mut entries = Vec::new();
    let mut findings = Vec::new();
    for item in listing {
        let p = item.map_err(|e| IoError::new(dir, "list", e))?.path();
        if hidden(&p) {
            continue;
        }
        if p.is_dir() && p.join("meta.json").is_file() {
            findings.push(p);
        } else if p.extension().is_some_and(|e| e == "json")
            && p.file_name()
                .is_some_and(|n| !INDEX_FILES.iter().any(|f| n == *f))
        {
            entries.push(p);
        }
    }
    entries.sort();
    findings.sort();
    let file_name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    match (entries.first(), findings.first()) {
        (None, None) => Err(SourceError::Empty(dir.to_path_buf())),
        (Some(e), Some(f)) => Err(SourceError::Mixed {
            path: dir.to_path_buf(),
            entry: file_name(e),
            finding: file_name(f),
        }),
        (Some(_), None) => Ok(Source::Corpus(Corpus::load(dir)?)),
        (None, Some(_)) => findings
            .into_iter()
            .map(|d| {
                Ok(LoadedFinding {
                    finding: Finding::load(&d)?,
                    dir: d,
                })
            })
            .collect::<Result<Vec<_>, SourceError>>()
            .map(Source::Findings),
    }
}

/// Replays a finding: its case under its codegen options, checked with `engine` alone (the
/// engine its signature names; none for a compile-level finding). Passes while the recorded
/// signature holds ([`finding::signature::Signature::holds_for`], as reduction keeps it); an
/// engine that cannot run here is an ignored trial with the reason.
pub fn replay_finding(f: &LoadedFinding, engine: Option<&Arc<dyn Engine>>) -> TrialResult {
    replay_finding_verified(f, engine).result
}

/// [`replay_finding`], and for a Helion finding what it is on the build that ran
/// ([`finding::regression::behaviour`], as `bisect` judges a build: the same exception raised
/// from code a release moved is the same symptom, and passes).
pub fn replay_finding_verified(f: &LoadedFinding, engine: Option<&Arc<dyn Engine>>) -> Replayed {
    let meta = &f.finding.meta;
    let name = f.name();
    let codegen = match meta.codegen.options() {
        Ok(c) => c,
        Err(e) => {
            return TrialResult::Fail {
                message: format!("{name}: codegen options of meta.json: {e}"),
                updates: vec![],
            }
            .into();
        }
    };
    let engines: Vec<Box<dyn Engine>> = engine.map(boxed).into_iter().collect();
    let report = check_case(&f.finding.case, &engines, &codegen);
    if let Some(reason) = report.engines.iter().find_map(|r| match &r.status {
        EngineStatus::Unavailable(reason) => {
            Some(format!("{} is not available here: {reason}", r.engine))
        }
        _ => None,
    }) {
        return TrialResult::Ignored(reason).into();
    }
    let now = signature(&f.finding.case, &report);
    let fix = engine.filter(|e| e.id().is_helion()).map(|_| {
        FixState::of(behaviour(
            &meta.signature,
            recorded_frameless(meta).as_deref(),
            &now,
            frameless(&report).as_deref(),
        ))
    });
    let holds = match &fix {
        Some(state) => *state == FixState::StillPresent,
        None => meta.signature.holds_for(&now),
    };
    Replayed {
        result: finding_result(f, engine, &report, &now, holds),
        fix,
    }
}

/// A finding trial's result: a pass while the finding `holds`, else a failure saying what the
/// case does now.
fn finding_result(
    f: &LoadedFinding,
    engine: Option<&Arc<dyn Engine>>,
    report: &CaseReport,
    now: &finding::signature::Signature,
    holds: bool,
) -> TrialResult {
    let meta = &f.finding.meta;
    let name = f.name();
    if holds {
        return TrialResult::Pass;
    }
    let faults = if meta.codegen.faults.is_empty() {
        String::new()
    } else {
        format!(" (with injected fault {})", meta.codegen.faults.join(", "))
    };
    let who = engine.map_or("the compiler".to_string(), |e| e.name().to_string());
    let message = if report.outcome == fuzz::outcome::Outcome::Agree {
        format!(
            "{name}: no longer reproduces: {who} now agrees with the reference{faults}; the finding recorded `{}` (fixed? then it can go)",
            meta.key
        )
    } else {
        format!(
            "{name}: no longer reproduces as recorded{faults}: recorded `{}`, now `{}`{}",
            meta.key,
            now.key(),
            Some(detail(report))
                .filter(|d| !d.is_empty())
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        )
    };
    TrialResult::Fail {
        message,
        updates: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::version_change;

    #[test]
    fn a_helion_trial_says_between_which_releases_the_verdict_changed() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("cases/0001-case-script-example.json");
        let mut entry = crate::entry::load_entry(&path).expect("the example entry loads");
        entry.helion = Some("1.4.0".into());
        let now = crate::entry::blessed_helion();
        let said = version_change(&entry, "helion-pallas".parse().expect("an engine"));
        assert!(
            said.contains("helion 1.4.0") && said.contains(&format!("helion {now}")),
            "{said}"
        );
        // Our engines follow the model, which is versioned with the build.
        assert_eq!(
            version_change(&entry, "pallas-sim".parse().expect("an engine")),
            ""
        );
        entry.helion = Some(now);
        assert_eq!(
            version_change(&entry, "helion-eager".parse().expect("an engine")),
            ""
        );
    }
}
