//! The regression corpus: one JSON file per entry in `corpus/cases/`, named `<id>-<slug>.json`,
//! with its case script rendered next to it as `<id>-<slug>.py`.
//!
//! An [`Entry`] holds the case (IR JSON), the expected outcome per engine ([`Expected`]:
//! `agree`, `rejected:<rule>`, `invalid-case`, `unsupported`, `known-issue:<id>` or
//! `finding:<signature key>`, with a link for a known open bug), the reference outputs (values),
//! and provenance. The `expect` map has a `*` key, the outcome of every engine not listed (a
//! correct engine: `agree` for a lowered, valid case; the compile-level outcome otherwise), and
//! one key per engine that differs from it.
//!
//! Loading never panics: a file that is not an entry is a [`CorpusError`] naming the file (and
//! the JSON line and column).

use compiler::compile::CodegenOptions;
use compiler::verdict::Rule;
use finding::finding::CodegenRecord;
use finding::fsio::{self, IoError};
use finding::signature::{Signature, signature, slugify};
use finding::tensor::NamedTensor;
use fuzz::check::{CaseReport, output_names};
use fuzz::engines::{EngineId, EngineStatus};
use fuzz::outcome::Outcome;
use lang::ir::{CASE_VERSION, Case};
use lang::render::render_case;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The version of the entry format.
pub const ENTRY_FORMAT: u32 = 1;

/// Whose expectation an `expect` (or `links`) key names: one engine, or every engine not
/// listed (`*`). Serialized as `*` or the engine's name; ordered as those strings are, so an
/// entry file keeps its key order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EngineKey {
    /// `*`: every engine not listed.
    Any,
    /// One engine.
    Engine(EngineId),
}

/// The spelling of [`EngineKey::Any`].
pub const ANY_ENGINE: &str = "*";

impl EngineKey {
    /// `*` or the engine's name.
    pub fn name(self) -> &'static str {
        match self {
            EngineKey::Any => ANY_ENGINE,
            EngineKey::Engine(e) => e.name(),
        }
    }
}

impl From<EngineId> for EngineKey {
    fn from(e: EngineId) -> EngineKey {
        EngineKey::Engine(e)
    }
}

impl fmt::Display for EngineKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for EngineKey {
    type Err = fuzz::engines::UnknownEngine;

    fn from_str(s: &str) -> Result<EngineKey, Self::Err> {
        if s == ANY_ENGINE {
            Ok(EngineKey::Any)
        } else {
            s.parse().map(EngineKey::Engine)
        }
    }
}

impl PartialOrd for EngineKey {
    fn partial_cmp(&self, other: &EngineKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for EngineKey {
    fn cmp(&self, other: &EngineKey) -> std::cmp::Ordering {
        self.name().cmp(other.name())
    }
}

impl Serialize for EngineKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for EngineKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<EngineKey, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(|_| {
            serde::de::Error::custom(format!(
                "unknown engine `{name}` (known: {ANY_ENGINE}, {})",
                fuzz::engines::EngineId::names().join(", ")
            ))
        })
    }
}

/// The expected outcome of one engine on one entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Expected {
    /// Every output agrees with the reference (`pallas-tpu-lower`: the module lowers).
    Agree,
    /// The compiler rejects the kernel by this rule.
    Rejected(Rule),
    /// The reference refuses the case.
    InvalidCase,
    /// The codegen does not model the kernel (a gap of the harness).
    Unsupported,
    /// The engine fails in the listed known way (`fuzz::known_issues`).
    KnownIssue(String),
    /// A finding with this signature ([`finding::signature::Signature::symptom_key`]): an open
    /// bug.
    Finding(String),
}

impl Expected {
    /// What a check report says, for the one engine it ran (or none).
    pub fn of_report(case: &Case, report: &CaseReport) -> Expected {
        match report.outcome {
            Outcome::Agree => Expected::Agree,
            Outcome::Rejected => match report.rejection() {
                Some(r) => Expected::Rejected(r.rule),
                None => Expected::Finding(signature(case, report).symptom_key()),
            },
            Outcome::InvalidCase => Expected::InvalidCase,
            Outcome::Unsupported => Expected::Unsupported,
            Outcome::KnownIssue => {
                Expected::KnownIssue(report.known_issue.unwrap_or("unknown").to_string())
            }
            Outcome::Mismatch
            | Outcome::LoweringError
            | Outcome::RuntimeError
            | Outcome::CompilerCrash
            | Outcome::Timeout
            | Outcome::EngineCrash
            | Outcome::HelionCrash
            | Outcome::HelionAcceptsInvalid
            | Outcome::VerdictMismatch => Expected::Finding(signature(case, report).symptom_key()),
        }
    }

    /// Whether this expects a finding (an engine that now agrees has had its bug fixed).
    pub fn is_finding(&self) -> bool {
        matches!(self, Expected::Finding(_))
    }

    /// Whether every engine must give this outcome (it is decided before any engine runs).
    pub fn is_compile_level(&self) -> bool {
        match self {
            Expected::Rejected(_) | Expected::InvalidCase | Expected::Unsupported => true,
            Expected::Finding(key) => key.starts_with("compiler-crash/"),
            Expected::Agree | Expected::KnownIssue(_) => false,
        }
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Agree => f.write_str("agree"),
            Expected::Rejected(r) => write!(f, "rejected:{r}"),
            Expected::InvalidCase => f.write_str("invalid-case"),
            Expected::Unsupported => f.write_str("unsupported"),
            Expected::KnownIssue(id) => write!(f, "known-issue:{id}"),
            Expected::Finding(key) => write!(f, "finding:{key}"),
        }
    }
}

impl FromStr for Expected {
    type Err = String;

    fn from_str(s: &str) -> Result<Expected, String> {
        match s.split_once(':') {
            None => match s {
                "agree" => Ok(Expected::Agree),
                "invalid-case" => Ok(Expected::InvalidCase),
                "unsupported" => Ok(Expected::Unsupported),
                _ => Err(format!(
                    "`{s}` is not an expected outcome (agree, rejected:<rule>, invalid-case, unsupported, known-issue:<id>, finding:<signature>)"
                )),
            },
            Some(("rejected", rule)) => Rule::from_id(rule)
                .map(Expected::Rejected)
                .ok_or_else(|| format!("unknown rule id `{rule}` in `{s}`")),
            Some(("known-issue", id)) if !id.is_empty() => Ok(Expected::KnownIssue(id.into())),
            Some(("finding", key)) if !key.is_empty() => Ok(Expected::Finding(key.into())),
            Some(_) => Err(format!(
                "`{s}` is not an expected outcome (agree, rejected:<rule>, invalid-case, unsupported, known-issue:<id>, finding:<signature>)"
            )),
        }
    }
}

impl Serialize for Expected {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Expected {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Expected, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The compiler's decision on an entry's case (recorded even where the reference refuses the
/// case, so the verdict of an invalid case is still pinned).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VerdictRecord {
    /// Lowered, with a module.
    Lowered,
    /// Rejected by this rule.
    Rejected(Rule),
    /// Accepted by the planner; the codegen does not model a construct.
    Unsupported,
    /// The compiler panicked.
    Crashed,
}

impl VerdictRecord {
    /// The verdict of a check report.
    pub fn of_report(report: &CaseReport) -> VerdictRecord {
        match (&report.verdict, &report.gap) {
            (None, _) => VerdictRecord::Crashed,
            (Some(compiler::verdict::Verdict::Rejected(r)), _) => VerdictRecord::Rejected(r.rule),
            (Some(compiler::verdict::Verdict::Lowered), Some(_)) => VerdictRecord::Unsupported,
            (Some(compiler::verdict::Verdict::Lowered), None) => VerdictRecord::Lowered,
        }
    }
}

impl fmt::Display for VerdictRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerdictRecord::Lowered => f.write_str("lowered"),
            VerdictRecord::Rejected(r) => write!(f, "rejected:{r}"),
            VerdictRecord::Unsupported => f.write_str("unsupported"),
            VerdictRecord::Crashed => f.write_str("crashed"),
        }
    }
}

impl FromStr for VerdictRecord {
    type Err = String;

    fn from_str(s: &str) -> Result<VerdictRecord, String> {
        match s {
            "lowered" => Ok(VerdictRecord::Lowered),
            "unsupported" => Ok(VerdictRecord::Unsupported),
            "crashed" => Ok(VerdictRecord::Crashed),
            _ => match s.strip_prefix("rejected:") {
                Some(rule) => Rule::from_id(rule)
                    .map(VerdictRecord::Rejected)
                    .ok_or_else(|| format!("unknown rule id `{rule}` in `{s}`")),
                None => Err(format!(
                    "`{s}` is not a verdict (lowered, rejected:<rule>, unsupported, crashed)"
                )),
            },
        }
    }
}

impl Serialize for VerdictRecord {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for VerdictRecord {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<VerdictRecord, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// What the reference says about the case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Reference {
    /// Its outputs, in return order.
    Outputs(Vec<NamedTensor>),
    /// It refuses the case.
    Invalid {
        /// The error kind: the reference's kind id (`index-out-of-range`), or the engine
        /// status (`crash`) when the reference did not run to a verdict. An entry written with
        /// the kind's variant name (`IndexOutOfRange`) reads as its id.
        #[serde(deserialize_with = "kind_id")]
        kind: String,
        /// The message.
        message: String,
    },
}

/// Reads a reference kind as its id, migrating the variant names older entries carry.
fn kind_id<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    Ok(match oracle::EvalErrorKind::from_name(&s) {
        Some(k) => k.id().to_string(),
        None => s,
    })
}

impl Reference {
    /// The reference of a check report (its reference run).
    pub fn of_report(case: &Case, report: &CaseReport) -> Reference {
        match &report.reference.status {
            EngineStatus::Outputs(outs) => {
                let names = output_names(case);
                Reference::Outputs(
                    outs.iter()
                        .enumerate()
                        .map(|(i, t)| NamedTensor {
                            name: names
                                .get(i)
                                .cloned()
                                .unwrap_or_else(|| format!("output {i}")),
                            dtype: t.dtype,
                            shape: t.shape.clone(),
                            values: t.values.clone(),
                        })
                        .collect(),
                )
            }
            EngineStatus::Invalid { kind, message, .. } => Reference::Invalid {
                kind: kind.id().to_string(),
                message: message.clone(),
            },
            other => Reference::Invalid {
                kind: other.name().to_string(),
                message: other.detail().unwrap_or_default(),
            },
        }
    }
}

/// Where an entry comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    /// Free text: the spec section or upstream test, or the campaign.
    pub source: String,
    /// The file it was imported from (relative to the workspace), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The generator seed, for generated cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The generator (name and version), for generated cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
    /// The signature of the finding it was reduced from, for reduced findings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<Signature>,
}

/// One corpus entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// [`ENTRY_FORMAT`].
    pub format: u32,
    /// Four digits, unique in the corpus.
    pub id: String,
    /// Lower-case words joined by `-`.
    pub slug: String,
    /// One line saying what the entry pins.
    pub title: String,
    /// Where it comes from.
    pub provenance: Provenance,
    /// The compiler's verdict.
    pub verdict: VerdictRecord,
    /// The Helion release the expectations were blessed under ([`blessed_helion`]): the one the
    /// model follows and the Helion engines run (absent: blessed before it was recorded). A
    /// Helion engine trial that fails under another release says the verdict changed between
    /// the two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helion: Option<String>,
    /// Expected outcome per engine; [`EngineKey::Any`] for the engines not listed.
    pub expect: BTreeMap<EngineKey, Expected>,
    /// Bug links (an issue URL) per engine whose expectation is a finding.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub links: BTreeMap<EngineKey, String>,
    /// Remarks: e.g. disagreements between a spec kernel's header and what happens.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The codegen options the entry is replayed under (absent: the defaults).
    #[serde(default, skip_serializing_if = "is_default_codegen")]
    pub codegen: CodegenRecord,
    /// The reference's outputs (or its refusal).
    pub reference: Reference,
    /// The case.
    pub case: Case,
}

/// The Helion release an entry blessed now is blessed under: the model's
/// (`compiler::HELION_VERSION`) unless the Helion engines are pinned to another one
/// (`PALLAS_DIFF_HELION_VERSION`), which then decides their expectations.
pub fn blessed_helion() -> String {
    tpu_runner::ProvisionOptions::helion_from_env()
        .helion_version()
        .to_string()
}

fn is_default_codegen(c: &CodegenRecord) -> bool {
    *c == CodegenRecord::default()
}

impl Entry {
    /// This entry with each expected finding that names index forms naming its case's forms
    /// now ([`finding::signature::symptom_key_with_forms_of`]): a no-op for an entry blessed by
    /// this build, the migration of one blessed when signatures had their own classifier.
    fn with_current_forms(mut self) -> Entry {
        for e in self.expect.values_mut() {
            if let Expected::Finding(key) = e
                && let Some(now) = finding::signature::symptom_key_with_forms_of(key, &self.case)
            {
                *key = now;
            }
        }
        self
    }

    /// `<id>-<slug>`: the file stem and the trial name's suffix.
    pub fn name(&self) -> String {
        format!("{}-{}", self.id, self.slug)
    }

    /// The expected outcome of `key` (an engine, or `*`): its own, else `*`'s.
    pub fn expected(&self, key: impl Into<EngineKey>) -> Option<&Expected> {
        self.expect
            .get(&key.into())
            .or_else(|| self.expect.get(&EngineKey::Any))
    }

    /// The outcome before any engine runs: the `*` expectation when it is compile-level, else
    /// `agree` (lowered, and the reference accepts the case).
    pub fn expected_compile_level(&self) -> Expected {
        match self.expect.get(&EngineKey::Any) {
            Some(e) if e.is_compile_level() => e.clone(),
            _ => Expected::Agree,
        }
    }

    /// Sets the expectation of `key` (an engine or `*`), keeping `expect` minimal: an engine
    /// whose expectation equals `*` is not listed.
    pub fn set_expected(&mut self, key: EngineKey, e: Expected) {
        if key == EngineKey::Any {
            self.expect.insert(EngineKey::Any, e.clone());
            self.expect.retain(|k, v| *k == EngineKey::Any || *v != e);
        } else if self.expect.get(&EngineKey::Any) == Some(&e) {
            self.expect.remove(&key);
        } else {
            self.expect.insert(key, e);
        }
        self.links.retain(|k, _| self.expect.contains_key(k));
    }

    /// The case script written next to the entry: a header naming the entry and its source,
    /// then the rendered case (which parses back to the entry's case).
    pub fn script(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "# pallas-diff: source corpus entry {}: {}\n",
            self.name(),
            one_line(&self.provenance.source)
        ));
        match self.verdict {
            VerdictRecord::Rejected(r) => out.push_str(&format!(
                "# pallas-diff: verdict rejected {} {}\n",
                r.class(),
                r.id()
            )),
            VerdictRecord::Lowered | VerdictRecord::Unsupported => {
                out.push_str("# pallas-diff: verdict lowered\n")
            }
            VerdictRecord::Crashed => {}
        }
        if let Reference::Invalid { kind, .. } = &self.reference {
            out.push_str(&format!("# pallas-diff: invalid {kind}\n"));
        }
        out.push_str(&render_case(&self.case));
        out
    }

    /// The entry as its JSON file's text.
    pub fn to_json(&self) -> String {
        finding::json::to_string_ordered(
            self,
            &[
                "format",
                "id",
                "slug",
                "title",
                "provenance",
                "verdict",
                "helion",
                "expect",
                "links",
                "notes",
                "codegen",
                "reference",
                "case",
            ],
        )
        .expect("an entry serializes")
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A corpus file that is not a well-formed entry, or an I/O failure.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    /// I/O.
    #[error(transparent)]
    Io(#[from] IoError),
    /// Not JSON, or not an entry.
    #[error("{}:{line}:{column}: not a corpus entry: {message}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// Well-formed JSON that breaks a rule of the format.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl CorpusError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            CorpusError::Io(e) => &e.path,
            CorpusError::Json { path, .. } | CorpusError::Invalid { path, .. } => path,
        }
    }
}

/// An entry with the file it was loaded from.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedEntry {
    /// The JSON file.
    pub path: PathBuf,
    /// The entry.
    pub entry: Entry,
}

impl LoadedEntry {
    /// The `.py` next to the JSON file.
    pub fn script_path(&self) -> PathBuf {
        self.path.with_extension("py")
    }
}

/// Parses and validates one entry file.
pub fn load_entry(path: &Path) -> Result<Entry, CorpusError> {
    let text = fsio::read_to_string(path)?;
    let entry: Entry = serde_json::from_str(&text).map_err(|e| CorpusError::Json {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let invalid = |message: String| CorpusError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    if entry.format != ENTRY_FORMAT {
        return Err(invalid(format!(
            "entry format {} is not supported (this build reads {ENTRY_FORMAT})",
            entry.format
        )));
    }
    if entry.case.version != CASE_VERSION {
        return Err(invalid(format!(
            "case format {} is not supported (this build reads {CASE_VERSION})",
            entry.case.version
        )));
    }
    if entry.id.len() != 4 || !entry.id.chars().all(|c| c.is_ascii_digit()) {
        return Err(invalid(format!("id `{}` is not four digits", entry.id)));
    }
    if entry.slug.is_empty() || slugify(&entry.slug) != entry.slug {
        return Err(invalid(format!(
            "slug `{}` is not lower-case words joined by `-`",
            entry.slug
        )));
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if stem != entry.name() {
        return Err(invalid(format!(
            "the file is named `{stem}.json` but the entry is `{}` (files are named <id>-<slug>.json)",
            entry.name()
        )));
    }
    if !entry.expect.contains_key(&EngineKey::Any) {
        return Err(invalid(format!(
            "`expect` has no `{ANY_ENGINE}` key (the outcome of the engines not listed)"
        )));
    }
    Ok(entry.with_current_forms())
}

/// The corpus directory of this workspace (`corpus/cases`).
pub fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("cases")
}

/// A loaded corpus.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    /// Its directory.
    pub dir: PathBuf,
    /// Its entries, sorted by file name.
    pub entries: Vec<LoadedEntry>,
}

/// What [`Corpus::add_finding`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Added {
    /// A new entry, written to this file.
    New(PathBuf),
    /// An entry with the same finding exists already: this one.
    Existing(String),
}

impl Corpus {
    /// Loads every `*.json` of `dir`, all or nothing: the first bad file is the error. An
    /// absent directory is an empty corpus.
    pub fn load(dir: &Path) -> Result<Corpus, CorpusError> {
        let (corpus, mut errors) = Corpus::load_lenient(dir);
        if errors.is_empty() {
            Ok(corpus)
        } else {
            Err(errors.remove(0))
        }
    }

    /// Loads every `*.json` of `dir`, returning the good entries and one error per bad file
    /// (and one per id used twice).
    pub fn load_lenient(dir: &Path) -> (Corpus, Vec<CorpusError>) {
        let mut corpus = Corpus {
            dir: dir.to_path_buf(),
            entries: Vec::new(),
        };
        let mut errors = Vec::new();
        let read = match std::fs::read_dir(dir) {
            Ok(r) => r,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (corpus, errors),
            Err(e) => {
                errors.push(IoError::new(dir, "list", e).into());
                return (corpus, errors);
            }
        };
        let mut paths = Vec::new();
        for item in read {
            match item {
                Ok(item) => {
                    let p = item.path();
                    let hidden = p
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'));
                    if p.extension().is_some_and(|e| e == "json") && !hidden {
                        paths.push(p);
                    }
                }
                Err(e) => errors.push(IoError::new(dir, "list", e).into()),
            }
        }
        paths.sort();
        let mut ids: BTreeMap<String, PathBuf> = BTreeMap::new();
        for path in paths {
            match load_entry(&path) {
                Ok(entry) => {
                    if let Some(first) = ids.get(&entry.id) {
                        errors.push(CorpusError::Invalid {
                            path: path.clone(),
                            message: format!("id {} is used by {} too", entry.id, first.display()),
                        });
                        continue;
                    }
                    ids.insert(entry.id.clone(), path.clone());
                    corpus.entries.push(LoadedEntry { path, entry });
                }
                Err(e) => errors.push(e),
            }
        }
        (corpus, errors)
    }

    /// The next free id (one more than the largest).
    pub fn next_id(&self) -> String {
        let max = self
            .entries
            .iter()
            .filter_map(|e| e.entry.id.parse::<u32>().ok())
            .max()
            .unwrap_or(0);
        format!("{:04}", max + 1)
    }

    /// Writes an entry's JSON file and case script (each atomically) into the corpus
    /// directory, replacing an entry with the same id; returns the JSON path.
    pub fn save(&mut self, entry: &Entry) -> Result<PathBuf, CorpusError> {
        let path = self.dir.join(format!("{}.json", entry.name()));
        fsio::write_atomic(&path, entry.to_json().as_bytes())?;
        fsio::write_atomic(&path.with_extension("py"), entry.script().as_bytes())?;
        if let Some(old) = self.entries.iter_mut().find(|e| e.entry.id == entry.id) {
            if old.path != path {
                let _ = std::fs::remove_file(&old.path);
                let _ = std::fs::remove_file(old.path.with_extension("py"));
            }
            old.path = path.clone();
            old.entry = entry.clone();
        } else {
            self.entries.push(LoadedEntry {
                path: path.clone(),
                entry: entry.clone(),
            });
            self.entries.sort_by(|a, b| a.path.cmp(&b.path));
        }
        Ok(path)
    }

    /// The entry whose expectations include a finding with this signature key and that
    /// `also` accepts, if any.
    pub fn find_finding(
        &self,
        key: &str,
        also: impl Fn(&LoadedEntry) -> bool,
    ) -> Option<&LoadedEntry> {
        self.entries.iter().find(|e| {
            e.entry
                .expect
                .values()
                .any(|x| matches!(x, Expected::Finding(k) if k == key))
                && also(e)
        })
    }

    /// Adds a (reduced) finding as a new entry. `reports` are the check reports of the case,
    /// one per engine that ran it (each made with that engine alone, as replay does; see
    /// [`crate::replay::observe`]); their outcomes become the expectations, so the entry
    /// replays as it behaves now, and the finding's engines get `link` (an issue URL) when
    /// given. An entry that already expects one of these findings makes this a no-op
    /// ([`Added::Existing`]), unless the finding is [`NewFinding::distinct`] and the entry's
    /// kernel another.
    pub fn add_finding(
        &mut self,
        finding: NewFinding<'_>,
        reports: &[(EngineId, &CaseReport)],
    ) -> Result<Added, CorpusError> {
        let case = finding.case;
        let outcomes: Vec<(EngineId, Expected)> = reports
            .iter()
            .map(|(engine, r)| (*engine, Expected::of_report(case, r)))
            .collect();
        for (_, e) in &outcomes {
            let Expected::Finding(key) = e else { continue };
            // A distinct finding is another kernel under a key the signature shares: only the
            // same kernel again is the existing entry.
            let same = |x: &LoadedEntry| {
                !finding.distinct || x.entry.case.without_spans() == case.without_spans()
            };
            if let Some(existing) = self.find_finding(key, same) {
                return Ok(Added::Existing(existing.entry.name()));
            }
        }
        let Some((_, first)) = reports.first() else {
            return Err(CorpusError::Invalid {
                path: self.dir.clone(),
                message: "add_finding needs at least one check report".into(),
            });
        };
        let mut entry = Entry {
            format: ENTRY_FORMAT,
            id: self.next_id(),
            slug: {
                let s = slugify(&format!("{} {}", case.kernel.name, finding.title));
                let mut words: Vec<&str> = s.split('-').filter(|w| !w.is_empty()).collect();
                words.truncate(8);
                if words.is_empty() {
                    "finding".to_string()
                } else {
                    words.join("-")
                }
            },
            title: finding.title.to_string(),
            provenance: finding.provenance,
            verdict: VerdictRecord::of_report(first),
            helion: Some(blessed_helion()),
            expect: BTreeMap::new(),
            links: BTreeMap::new(),
            notes: Vec::new(),
            codegen: (&finding.codegen).into(),
            reference: Reference::of_report(case, first),
            case: case.clone(),
        };
        entry.set_expected(EngineKey::Any, star_expectation(case, first));
        for (engine, e) in outcomes {
            let is_finding = e.is_finding();
            entry.set_expected(engine.into(), e);
            if let (true, Some(l)) = (is_finding, finding.link) {
                entry.links.insert(engine.into(), l.to_string());
            }
        }
        let path = self.save(&entry)?;
        Ok(Added::New(path))
    }
}

/// A finding to add to the corpus ([`Corpus::add_finding`]).
#[derive(Clone, Debug)]
pub struct NewFinding<'a> {
    /// The (reduced) case.
    pub case: &'a Case,
    /// One line saying what it pins (also the slug's source).
    pub title: &'a str,
    /// Where it comes from.
    pub provenance: Provenance,
    /// An issue URL for the open bug, if filed.
    pub link: Option<&'a str>,
    /// The codegen options the finding was made under.
    pub codegen: CodegenOptions,
    /// Another bug than an entry expecting the same finding key: a signature names an engine,
    /// an outcome, a loop type and index forms, so two wrong values of one engine with
    /// different causes can share it. Such a finding is added unless its very kernel is in
    /// the corpus already.
    pub distinct: bool,
}

/// The `*` expectation of a case: the compile-level outcome when the compiler or the
/// reference decides it, else `agree` (what a correct engine gives). A case our model does not
/// lower ([`CaseReport::gap`]) is `unsupported` for our engines whatever a Helion engine did
/// with it (a Helion-only finding of a scatter: corpus 0113).
pub fn star_expectation(case: &Case, report: &CaseReport) -> Expected {
    if report.gap.is_some() && report.outcome != Outcome::InvalidCase {
        return Expected::Unsupported;
    }
    match report.outcome {
        Outcome::Rejected
        | Outcome::InvalidCase
        | Outcome::Unsupported
        | Outcome::CompilerCrash => Expected::of_report(case, report),
        Outcome::Agree
        | Outcome::Mismatch
        | Outcome::LoweringError
        | Outcome::RuntimeError
        | Outcome::Timeout
        | Outcome::EngineCrash
        | Outcome::KnownIssue
        | Outcome::HelionCrash
        | Outcome::HelionAcceptsInvalid
        | Outcome::VerdictMismatch => Expected::Agree,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectations_round_trip_through_text() {
        for s in [
            "agree",
            "rejected:selector.wider-than-block",
            "invalid-case",
            "unsupported",
            "known-issue:jax-tpu-interpret-ref-reshape",
            "finding:mismatch/pallas-tpu-interpret/values/fori_loop/tile-index",
        ] {
            assert_eq!(s.parse::<Expected>().unwrap().to_string(), s);
        }
        assert!("rejected:nope".parse::<Expected>().is_err());
        assert!("maybe".parse::<Expected>().is_err());
        assert!("finding:".parse::<Expected>().is_err());
    }
}
