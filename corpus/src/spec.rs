//! Seeding the corpus from the spec kernels (`corpus/spec-kernels/*.py`): one entry per script,
//! with its expectations taken from running it now, cross-checked against the script's
//! `# pallas-diff:` header.
//!
//! A disagreement between the header (what the spec says: the merged upstream verdict, the
//! correct eager outputs) and what happens now (the compiler's verdict, the reference's
//! outputs, each engine's outcome) is never blessed silently: [`import_spec_kernels`] returns
//! it, records it in the entry's `notes`, and [`cross_check`] recomputes it from the header and
//! the entry alone, so a test can demand that every disagreement is a recorded one.

use crate::entry::{
    Corpus, CorpusError, ENTRY_FORMAT, EngineKey, Entry, Expected, Provenance, Reference,
    VerdictRecord, star_expectation,
};
use crate::expectations::{ExpectedVerdict, SpecKernel};
use crate::replay::observe;
use compiler::compile::CodegenOptions;
use finding::finding::CodegenRecord;
use finding::signature::slugify;
use fuzz::check::{CaseReport, check_case};
use fuzz::engines::{Engine, EngineId};
use lang::frontend::parse_case;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The note prefix of a header disagreement.
pub const NOTE_PREFIX: &str = "header disagrees: ";

/// The workspace-relative path of a spec kernel (`corpus/spec-kernels/<file>`).
pub fn relative_path(k: &SpecKernel) -> String {
    format!(
        "corpus/spec-kernels/{}",
        k.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    )
}

/// The disagreements between a spec kernel's header and an entry (what happens now), one
/// sentence each, prefixed with [`NOTE_PREFIX`]. Needs no engine.
pub fn cross_check(k: &SpecKernel, e: &Entry) -> Vec<String> {
    let ex = &k.expectations;
    let mut out = Vec::new();
    let mut note = |s: String| out.push(format!("{NOTE_PREFIX}{s}"));
    match ex.verdict {
        Some(ExpectedVerdict::Lowered) if e.verdict != VerdictRecord::Lowered => note(format!(
            "the header says `verdict lowered`, the compiler says `{}`",
            e.verdict
        )),
        Some(ExpectedVerdict::Rejected { rule, .. })
            if e.verdict != VerdictRecord::Rejected(rule) =>
        {
            note(format!(
                "the header says `verdict rejected {}`, the compiler says `{}`",
                rule.id(),
                e.verdict
            ))
        }
        Some(ExpectedVerdict::Lowered | ExpectedVerdict::Rejected { .. }) | None => {}
    }
    match (&ex.invalid, &e.reference) {
        (Some(why), Reference::Outputs(_)) => note(format!(
            "the header says `invalid {why}`, the reference evaluates the case"
        )),
        (None, Reference::Invalid { kind, message }) => note(format!(
            "the header states no `invalid`, the reference refuses the case ({kind}: {message})"
        )),
        (Some(_), Reference::Invalid { .. }) | (None, Reference::Outputs(_)) => {}
    }
    if let Reference::Outputs(outs) = &e.reference {
        for want in &ex.outputs {
            match outs.iter().find(|o| o.name == want.name) {
                None => note(format!(
                    "line {}: the header states output `{}`, the kernel returns no such name",
                    want.line, want.name
                )),
                Some(o) => {
                    if let Err(m) = want.check(&o.tensor(), ex.tolerance) {
                        note(format!("line {}: reference: {m}", want.line))
                    }
                }
            }
        }
    }
    // Engine outcomes only where the verdict agrees (a rejection already says it all).
    let header_agrees = ex.verdict == Some(ExpectedVerdict::Lowered)
        && ex.invalid.is_none()
        && e.verdict == VerdictRecord::Lowered;
    if header_agrees {
        for (engine, x) in &e.expect {
            if *x != Expected::Agree {
                let who = match engine {
                    EngineKey::Any => "every engine".to_string(),
                    EngineKey::Engine(e) => format!("`{e}`"),
                };
                note(format!(
                    "the header implies every engine agrees with the reference, {who} ends in `{x}`"
                ));
            }
        }
    }
    out
}

/// What an import did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportReport {
    /// Entries created (`<id>-<slug>`).
    pub added: Vec<String>,
    /// Entries whose content changed.
    pub updated: Vec<String>,
    /// Entries already up to date.
    pub unchanged: Vec<String>,
    /// (entry, disagreement) for every header disagreement found.
    pub disagreements: Vec<(String, String)>,
}

/// Builds the entry of one spec kernel from its runs: `base` is `check_case` without engines,
/// `reports` one per engine alone. `id` is the entry's id.
pub fn entry_of(
    k: &SpecKernel,
    id: &str,
    base: &CaseReport,
    reports: &[(EngineId, CaseReport)],
) -> Entry {
    let source = k
        .expectations
        .source
        .clone()
        .unwrap_or_else(|| relative_path(k));
    let mut e = Entry {
        format: ENTRY_FORMAT,
        id: id.to_string(),
        slug: slugify(&k.name()),
        title: source.clone(),
        provenance: Provenance {
            source,
            file: Some(relative_path(k)),
            seed: None,
            generator: None,
            finding: None,
        },
        verdict: VerdictRecord::of_report(base),
        helion: Some(crate::entry::blessed_helion()),
        expect: BTreeMap::new(),
        links: BTreeMap::new(),
        notes: Vec::new(),
        codegen: CodegenRecord::default(),
        reference: Reference::of_report(&k.case, base),
        case: k.case.clone(),
    };
    e.set_expected(EngineKey::Any, star_expectation(&k.case, base));
    for (engine, r) in reports {
        e.set_expected((*engine).into(), Expected::of_report(&k.case, r));
    }
    // Spans of the stored case match its script next to the entry.
    if let Ok(c) = parse_case(&e.script(), &format!("{}.py", e.name())) {
        e.case = c;
    }
    e.notes = cross_check(k, &e);
    e
}

/// A kernel's check without engines and its check with each engine alone.
type Runs = (CaseReport, Vec<(EngineId, CaseReport)>);

/// Imports every spec kernel into `corpus`: an entry per kernel (matched by its source file;
/// new kernels get the next ids in file-name order), expectations from running it now with
/// each of `engines` alone (`jobs` kernels at a time), header disagreements recorded as notes
/// and returned. Writes only entries whose content changed.
pub fn import_spec_kernels(
    corpus: &mut Corpus,
    kernels: &[SpecKernel],
    engines: &[Arc<dyn Engine>],
    jobs: usize,
) -> Result<ImportReport, CorpusError> {
    let codegen = CodegenOptions::default();
    // Each kernel runs every engine once, JAX ones through the pool's workers, so a kernel is
    // one task of its own; `jobs` threads, not the global pool, keep `jobs` meaning what it says.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .thread_name(|i| format!("spec-kernel-{i}"))
        .build()
        .expect("cannot start the spec kernels' threads");
    let runs: Vec<Runs> = pool.install(|| {
        kernels
            .par_iter()
            .with_max_len(1)
            .map(|k| {
                let base = check_case(&k.case, &[], &codegen);
                let reports = observe(&k.case, engines, &codegen);
                (base, reports)
            })
            .collect()
    });
    let ran: Vec<EngineKey> = engines.iter().map(|e| EngineKey::Engine(e.id())).collect();
    let mut report = ImportReport::default();
    for (k, (base, reports)) in kernels.iter().zip(runs) {
        let file = relative_path(k);
        let existing = corpus
            .entries
            .iter()
            .find(|e| e.entry.provenance.file.as_deref() == Some(file.as_str()))
            .map(|e| (e.entry.clone(), e.path.clone()));
        let id = existing
            .as_ref()
            .map(|(e, _)| e.id.clone())
            .unwrap_or_else(|| corpus.next_id());
        let mut entry = entry_of(k, &id, &base, &reports);
        if let Some((old, _)) = &existing {
            keep_unrun_expectations(&mut entry, old, &ran);
            entry.notes = cross_check(k, &entry);
            // Keep what people wrote by hand: links and a reworded title.
            entry.links = old.links.clone();
            entry.links.retain(|k, _| entry.expect.contains_key(k));
            entry.title = old.title.clone();
        }
        for n in &entry.notes {
            report.disagreements.push((entry.name(), n.clone()));
        }
        match existing {
            Some((_, path)) if files_match(&path, &entry) => report.unchanged.push(entry.name()),
            Some(_) => {
                corpus.save(&entry)?;
                report.updated.push(entry.name());
            }
            None => {
                corpus.save(&entry)?;
                report.added.push(entry.name());
            }
        }
    }
    Ok(report)
}

/// Keeps in `entry` what `old` expects of the engines this import did not run (`ran`): the
/// Helion engines' outcomes, recorded in the Helion environment (`replay --bless`), which a
/// run with the JAX engines alone has nothing to replace with. Without it, regenerating the
/// spec entries dropped the `helion-pallas` known issues of 0053, 0065 and 0067.
fn keep_unrun_expectations(entry: &mut Entry, old: &Entry, ran: &[EngineKey]) {
    for (key, expected) in &old.expect {
        if matches!(key, EngineKey::Engine(_)) && !ran.contains(key) {
            entry.set_expected(*key, expected.clone());
        }
    }
}

/// Whether the entry's JSON file and script already hold exactly `e`.
fn files_match(path: &std::path::Path, e: &Entry) -> bool {
    let py: PathBuf = path.with_extension("py");
    std::fs::read_to_string(path).is_ok_and(|t| t == e.to_json())
        && std::fs::read_to_string(py).is_ok_and(|t| t == e.script())
}
