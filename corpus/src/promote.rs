//! Promoting a finding into the regression corpus (`pallas-diff corpus add FINDING`).
//!
//! The entry's expectations are blessed from what happens now, as `replay --bless` would: the
//! finding's case is checked with each engine alone ([`crate::replay::observe`]), the reference
//! outputs and verdict are recorded from that run, and [`Corpus::add_finding`] writes the entry.
//! A finding whose engine no longer shows its signature is refused (there is nothing to pin).
//!
//! A finding made with injected faults (`codegen.faults`) is a defect of pallas-diff's model,
//! not of Helion, and is refused by default: the corpus pins how Helion's lowering behaves, and
//! an entry that replays under a fault would read as an open Helion bug. With
//! [`Promotion::allow_fault`] it is added anyway, its codegen options (the fault) recorded in the
//! entry so it replays under them, and a note saying it pins the harness's detection of the
//! fault rather than a Helion bug.

use crate::entry::{Added, Corpus, CorpusError, Entry, NewFinding, Provenance};
use crate::replay::{LoadedFinding, observe};
use compiler::faults::UnknownFault;
use finding::signature::{signature, slugify};
use fuzz::engines::{Engine, EngineId};
use std::path::PathBuf;
use std::sync::Arc;

/// How to promote a finding.
#[derive(Clone, Debug, Default)]
pub struct Promotion<'a> {
    /// The entry's slug (lower-case words joined by `-`); default: from the kernel and title.
    pub name: Option<&'a str>,
    /// The entry's title; default: the report's one-line summary of the finding.
    pub title: Option<&'a str>,
    /// An issue URL for the open bug.
    pub link: Option<&'a str>,
    /// Add a finding made with injected faults (module docs).
    pub allow_fault: bool,
    /// Add it even when an entry expects the same finding key ([`NewFinding::distinct`]).
    pub distinct: bool,
}

/// What [`promote`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum Promoted {
    /// A new entry, in this file.
    New {
        /// The entry's JSON file (its `.py` is next to it).
        path: PathBuf,
        /// The entry.
        entry: Box<Entry>,
    },
    /// An entry already expects this finding: its name.
    Existing(String),
}

/// Why a finding cannot be promoted.
#[derive(Debug, thiserror::Error)]
pub enum PromoteError {
    /// Made with injected faults, and [`Promotion::allow_fault`] is off.
    #[error(
        "{dir}: made with injected fault {faults}: a defect of pallas-diff's model, not of Helion; the corpus pins Helion's behaviour, so it is not added (--allow-fault adds it anyway, replaying under the fault, as a test that the harness still detects it)"
    )]
    InjectedFault {
        /// The finding directory.
        dir: String,
        /// The faults, comma-separated.
        faults: String,
    },
    /// Its engine does not show its signature any more.
    #[error(
        "{dir}: does not reproduce now: it recorded `{recorded}`, `{engine}` now gives `{now}`; nothing to pin (`pallas-diff replay {dir}` shows the run)"
    )]
    NotReproduced {
        /// The finding directory.
        dir: String,
        /// The engine (the reference for a compile-level finding).
        engine: EngineId,
        /// The recorded signature key.
        recorded: String,
        /// What the case gives now.
        now: String,
    },
    /// The engine that saw the finding was not given.
    #[error("{dir}: the finding was seen by `{engine}`, which is not among the engines given")]
    MissingEngine {
        /// The finding directory.
        dir: String,
        /// The engine.
        engine: EngineId,
    },
    /// A slug that is not lower-case words joined by `-`.
    #[error("name `{0}` is not lower-case words joined by `-` (e.g. `{1}`)")]
    BadName(String, String),
    /// `meta.json` names a fault this build does not have.
    #[error("{dir}: {error}")]
    Codegen {
        /// The finding directory.
        dir: String,
        /// The unknown fault.
        error: UnknownFault,
    },
    /// The corpus could not be written.
    #[error(transparent)]
    Corpus(#[from] CorpusError),
}

/// Adds `finding` to `corpus` with expectations observed now on `engines` (which must include
/// the engine that saw it; give more to pin them too, e.g. the JAX engines that cross-checked
/// it). See the module docs for the fault rule.
pub fn promote(
    corpus: &mut Corpus,
    finding: &LoadedFinding,
    engines: &[Arc<dyn Engine>],
    how: &Promotion<'_>,
) -> Result<Promoted, PromoteError> {
    let dir = finding.dir.display().to_string();
    let meta = &finding.finding.meta;
    let case = &finding.finding.case;
    if !meta.codegen.faults.is_empty() && !how.allow_fault {
        return Err(PromoteError::InjectedFault {
            dir,
            faults: meta.codegen.faults.join(", "),
        });
    }
    let slug = match how.name {
        Some(n) if slugify(n) == n && !n.is_empty() => Some(n.to_string()),
        Some(n) => return Err(PromoteError::BadName(n.to_string(), slugify(n))),
        None => None,
    };
    let codegen = meta
        .codegen
        .options()
        .map_err(|error| PromoteError::Codegen {
            dir: dir.clone(),
            error,
        })?;
    let own = finding.engine();
    if let Some(e) = own
        && !engines.iter().any(|x| x.id() == e)
    {
        return Err(PromoteError::MissingEngine { dir, engine: e });
    }
    let mut reports = observe(case, engines, &codegen);
    if own.is_none() {
        // A compile-level finding (a compiler crash): no engine shows it, the compile does.
        reports.insert(
            0,
            (
                EngineId::Reference,
                fuzz::check::check_case(case, &[], &codegen),
            ),
        );
    }
    let shown_by = own.unwrap_or(EngineId::Reference);
    if let Some((_, report)) = reports.iter().find(|(n, _)| *n == shown_by) {
        let now = signature(case, report);
        if !meta.signature.holds_for(&now) {
            return Err(PromoteError::NotReproduced {
                dir,
                engine: shown_by,
                recorded: meta.key.clone(),
                now: now.key(),
            });
        }
    }
    let summary = finding::report::summary(&finding.finding);
    let title = how.title.unwrap_or(&summary);
    let new = NewFinding {
        case,
        title,
        provenance: Provenance {
            source: format!("finding {} ({})", finding.name(), meta.key),
            file: None,
            seed: meta.provenance.seed,
            generator: meta.provenance.generator.clone(),
            finding: Some(meta.signature.clone()),
        },
        link: how.link,
        codegen,
        distinct: how.distinct,
    };
    let refs: Vec<(EngineId, &fuzz::check::CaseReport)> =
        reports.iter().map(|(n, r)| (*n, r)).collect();
    let path = match corpus.add_finding(new, &refs)? {
        Added::Existing(name) => return Ok(Promoted::Existing(name)),
        Added::New(path) => path,
    };
    let mut entry = corpus
        .entries
        .iter()
        .find(|e| e.path == path)
        .map(|e| e.entry.clone())
        .ok_or_else(|| CorpusError::Invalid {
            path: path.clone(),
            message: "the entry just written is not in the corpus".into(),
        })?;
    let mut changed = false;
    if let Some(s) = slug {
        entry.slug = s;
        changed = true;
    }
    if !meta.codegen.faults.is_empty() {
        entry.notes.push(format!(
            "replays with injected fault {} (codegen): it pins that the harness detects this defect of pallas-diff's model, not a Helion bug",
            meta.codegen.faults.join(", ")
        ));
        changed = true;
    }
    let path = if changed { corpus.save(&entry)? } else { path };
    Ok(Promoted::New {
        path,
        entry: Box::new(entry),
    })
}
