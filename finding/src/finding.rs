//! Finding directories: the on-disk form of one finding, and its `meta.json` schema.
//!
//! A finding directory holds five files, written together atomically by
//! [`write_finding_dir`] (built in a temporary directory next to it, then renamed):
//!
//! | file | content |
//! |---|---|
//! | `case.json` | the case (IR JSON, the `pallas-diff render` input) |
//! | `case.py` | the case script (`render_case`), runnable by real Helion |
//! | `emitted.py` | the emitted Pallas module (a `# no module: ...` comment when there is none) |
//! | `log.txt` | the check report: verdict, every engine's status, the mismatch, tracebacks; then the JAX cross-check, when there was one |
//! | `meta.json` | [`FindingMeta`]: signature, outcome, engines, verdict, versions, provenance, reduction, cross-check ([`CrossCheckRecord`]) |
//!
//! `meta.json` (format [`META_FORMAT`]) is what campaigns write and what `pallas-diff reduce`
//! and `pallas-diff report` read; its fields are those of [`FindingMeta`] (kebab-free snake case
//! keys, floats that may be NaN or infinite as `"nan"`, `"inf"`, `"-inf"`).

use crate::fsio::{self, IoError};
use crate::signature::{CostRecord, Signature, signature};
use compiler::compile::CodegenOptions;
use compiler::decisions::Decisions;
use compiler::faults::{FaultSet, UnknownFault};
use compiler::verdict::Verdict;
use fuzz::check::CaseReport;
use fuzz::compare::MismatchKind;
use fuzz::engines::{EngineId, EngineRun, EngineStatus, StatusKind};
use fuzz::outcome::Outcome;
use lang::ir::{CASE_VERSION, Case};
use lang::render::render_case;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The version of the `meta.json` format (2: the signature's index forms are the coverage
/// table's, [`crate::signature::index_forms`]; format 1 is migrated on read,
/// [`Finding::load`]).
pub const META_FORMAT: u32 = 2;

/// The files of a finding directory, in the order they are written.
pub const FINDING_FILES: [&str; 5] = ["case.json", "case.py", "emitted.py", "log.txt", "meta.json"];

/// The first line of `emitted.py` when the compiler produced no module.
pub const NO_MODULE: &str = "# no module: ";

/// Versions of everything that took part in a finding.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Versions {
    /// This build of pallas-diff.
    pub pallas_diff: String,
    /// The case format ([`CASE_VERSION`]).
    pub case_format: u32,
    /// The Helion release the model targets ([`compiler::HELION_VERSION`]).
    #[serde(default)]
    pub model_helion: Option<String>,
    /// The worker's Python, when a JAX engine ran.
    #[serde(default)]
    pub python: Option<String>,
    /// `jax.__version__`, when a JAX engine ran.
    #[serde(default)]
    pub jax: Option<String>,
    /// `jaxlib.__version__`, when a JAX engine ran.
    #[serde(default)]
    pub jaxlib: Option<String>,
    /// The TPU generation the CPU modes target.
    #[serde(default)]
    pub tpu_kind: Option<String>,
    /// The JAX workers' `XLA_FLAGS` (the ISA pin and `--xla-compile`'s options), when a JAX
    /// engine ran: they choose XLA:CPU's float summation order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xla_flags: Option<String>,
    /// `jax.devices()`.
    #[serde(default)]
    pub devices: Vec<String>,
    /// `helion.__version__`, when a Helion engine ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helion: Option<String>,
    /// `torch.__version__` of the Helion environment, when a Helion engine ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torch: Option<String>,
    /// The Helion environment's JAX, when a Helion engine ran (it may differ from the JAX
    /// engines' `jax`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helion_jax: Option<String>,
    /// The Helion build under test (`--helion-build`, `tpu_runner::builds`), when a Helion
    /// engine ran: its id, version, wheel sha256 or source commit. Part of the shard contract,
    /// so shards of different builds do not merge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helion_build: Option<tpu_runner::BuildIdentity>,
}

impl Versions {
    /// These versions plus the Helion worker's report (`None`: no Helion engine ran).
    pub fn with_helion(mut self, helion: Option<&tpu_runner::Availability>) -> Versions {
        if let Some(h) = helion {
            self.helion = h.helion.clone();
            self.torch = h.torch.clone();
            self.helion_jax = Some(h.jax_version.clone());
            self.helion_build = h.helion_build.clone();
        }
        self
    }

    /// This build, without JAX.
    pub fn this_build() -> Versions {
        Versions {
            pallas_diff: env!("CARGO_PKG_VERSION").to_string(),
            case_format: CASE_VERSION,
            model_helion: Some(compiler::HELION_VERSION.to_string()),
            ..Versions::default()
        }
    }
}

impl From<&tpu_runner::Availability> for Versions {
    /// This build with the JAX worker's report (`Pool::availability()`).
    fn from(a: &tpu_runner::Availability) -> Versions {
        Versions {
            python: Some(a.python.clone()),
            jax: Some(a.jax_version.clone()),
            jaxlib: Some(a.jaxlib_version.clone()),
            tpu_kind: Some(a.tpu_kind.clone()),
            xla_flags: Some(a.xla_flags.clone()),
            devices: a.devices.clone(),
            ..Versions::this_build()
        }
    }
}

impl From<Option<&tpu_runner::Availability>> for Versions {
    fn from(a: Option<&tpu_runner::Availability>) -> Versions {
        a.map(Versions::from).unwrap_or_else(Versions::this_build)
    }
}

impl From<Option<String>> for Versions {
    /// This build with a free-text JAX description of the form `jax <v> jaxlib <v>` (other
    /// words are ignored); prefer `From<&Availability>`.
    fn from(text: Option<String>) -> Versions {
        let mut v = Versions::this_build();
        if let Some(t) = text {
            let words: Vec<&str> = t.split_whitespace().collect();
            for w in words.windows(2) {
                match w[0] {
                    "jax" => v.jax = Some(w[1].to_string()),
                    "jaxlib" => v.jaxlib = Some(w[1].to_string()),
                    "python" => v.python = Some(w[1].to_string()),
                    _ => {}
                }
            }
        }
        v
    }
}

/// One engine's run, as recorded: [`EngineRun`] without its output tensors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineRecord {
    /// The engine.
    pub engine: EngineId,
    /// Its status (`ok`, `lowered`, `error`, `timeout`, ...).
    pub status: StatusKind,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The error message or reason, if any ([`EngineStatus::detail`]).
    #[serde(default)]
    pub detail: Option<String>,
    /// For an `error`: the stage the module failed in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<tpu_runner::Stage>,
    /// For an `error`, the exception class (and cause); for `refused`, Helion's error class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// For `invalid`: the reference's error kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid: Option<oracle::EvalErrorKind>,
    /// For `ok`: the shape of each output, in return order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_shapes: Option<Vec<Vec<usize>>>,
    /// A Helion engine's: the Pallas module Helion generated for the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<String>,
}

impl From<&EngineRun> for EngineRecord {
    fn from(e: &EngineRun) -> EngineRecord {
        let (stage, class, invalid) = match &e.status {
            EngineStatus::KernelError { stage, kind, .. } => {
                (Some(*stage), Some(kind.clone()), None)
            }
            EngineStatus::Refused { class, .. } => (None, Some(class.clone()), None),
            EngineStatus::Invalid { kind, .. } => (None, None, Some(*kind)),
            EngineStatus::Outputs(_)
            | EngineStatus::Lowered
            | EngineStatus::Unavailable(_)
            | EngineStatus::NotRun(_)
            | EngineStatus::Timeout(_)
            | EngineStatus::Crash(_) => (None, None, None),
        };
        EngineRecord {
            engine: e.engine,
            status: e.status.kind(),
            seconds: e.seconds,
            detail: e.status.detail(),
            stage,
            class,
            invalid,
            output_shapes: e
                .status
                .outputs()
                .map(|o| o.iter().map(|t| t.shape.clone()).collect()),
            generated: e.generated.clone(),
        }
    }
}

/// One differing element.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Differing {
    /// Multi-index.
    pub index: Vec<usize>,
    /// The engine's value.
    #[serde(with = "crate::json::float")]
    pub engine: f64,
    /// The reference's value.
    #[serde(with = "crate::json::float")]
    pub reference: f64,
}

/// A mismatch, as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MismatchRecord {
    /// The engine.
    pub engine: EngineId,
    /// The output's name.
    pub output: String,
    /// Reference shape.
    pub shape: Vec<usize>,
    /// `values`, `poison`, `shape`, `dtype`, `output-count`.
    pub kind: MismatchKind,
    /// Differing elements.
    pub count: usize,
    /// Largest absolute error (`inf` when a NaN or infinity differs).
    #[serde(with = "crate::json::float::opt")]
    pub max_abs_err: Option<f64>,
    /// Largest relative error.
    #[serde(with = "crate::json::float::opt")]
    pub max_rel_err: Option<f64>,
    /// The first differing elements (for a shape mismatch, the engine's shape as `index`).
    pub first: Vec<Differing>,
    /// The extra input set the outputs were computed on (`fuzz::input_sets`), when it was not
    /// the case's own inputs: `report` re-derives it, so the reproducer runs the inputs that
    /// fail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_set: Option<fuzz::input_sets::SetLabel>,
}

impl From<&fuzz::compare::Mismatch> for MismatchRecord {
    fn from(m: &fuzz::compare::Mismatch) -> MismatchRecord {
        MismatchRecord {
            engine: m.engine,
            output: m.output.clone(),
            shape: m.shape.clone(),
            kind: m.kind,
            count: m.count,
            max_abs_err: Some(m.max_abs_err),
            max_rel_err: Some(m.max_rel_err),
            first: m
                .first
                .iter()
                .map(|(index, a, b)| Differing {
                    index: index.clone(),
                    engine: *a,
                    reference: *b,
                })
                .collect(),
            input_set: m.input_set,
        }
    }
}

/// The codegen options a finding was made under.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodegenRecord {
    /// `CodegenOptions::poison_padding`.
    pub poison_padding: bool,
    /// Injected faults (`CodegenOptions::faults`), by name; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
}

impl From<&CodegenOptions> for CodegenRecord {
    fn from(o: &CodegenOptions) -> CodegenRecord {
        CodegenRecord {
            poison_padding: o.poison_padding,
            faults: o.faults.iter().map(|f| f.name().to_string()).collect(),
        }
    }
}

impl CodegenRecord {
    /// The options back; an unknown fault name is an error (a file from another build).
    #[allow(
        clippy::needless_update,
        reason = "CodegenOptions is growing: the update keeps this compiling"
    )]
    pub fn options(&self) -> Result<CodegenOptions, UnknownFault> {
        Ok(CodegenOptions {
            poison_padding: self.poison_padding,
            faults: FaultSet::parse(&self.faults.join(","))?,
            ..CodegenOptions::default()
        })
    }
}

/// Where a finding comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindingProvenance {
    /// The generator seed of the case (campaign findings).
    #[serde(default)]
    pub seed: Option<u64>,
    /// The generator or tool that made the case (e.g. `pallas-diff-fuzz 0.1.0`).
    #[serde(default)]
    pub generator: Option<String>,
    /// Free text (a spec section, a file).
    #[serde(default)]
    pub source: Option<String>,
}

/// What a reduction did to a finding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReductionRecord {
    /// The signature key before reduction.
    pub original_key: String,
    /// The cost before.
    pub original_cost: CostRecord,
    /// Kernel body lines before.
    pub original_body_lines: usize,
    /// Kernel body lines after.
    pub body_lines: usize,
    /// Predicate calls.
    pub attempts: usize,
    /// Candidates kept.
    pub steps: usize,
    /// Engine runs that were not answered from the cache.
    pub engine_runs: usize,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Whether the budget ran out before a fixpoint.
    pub exhausted: bool,
}

/// A check report ([`CaseReport`]) without tensors: what `meta.json` holds of the check and
/// what `pallas-diff check --json` prints, one schema for both.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportRecord {
    /// How the case ended.
    pub outcome: Outcome,
    /// The engine that decided it.
    #[serde(default)]
    pub decided_by: Option<EngineId>,
    /// Every engine run, the reference first.
    pub engines: Vec<EngineRecord>,
    /// The compiler's verdict (absent when it crashed).
    #[serde(default)]
    pub verdict: Option<Verdict>,
    /// The mismatch, for `mismatch`.
    #[serde(default)]
    pub mismatch: Option<MismatchRecord>,
    /// Whether the compiler emitted a module.
    pub has_module: bool,
    /// Why the harness could not run a lowered kernel (codegen gap), for `unsupported`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<String>,
    /// The known issue's id, for `known-issue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_issue: Option<String>,
    /// The compiler's panic message and backtrace, for `compiler-crash`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash: Option<String>,
    /// Seconds spent compiling.
    #[serde(default)]
    pub compile_seconds: f64,
    /// The planner's and codegen's decisions on the case (empty unless it was planned).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub decisions: Decisions,
}

impl From<&CaseReport> for ReportRecord {
    fn from(report: &CaseReport) -> ReportRecord {
        ReportRecord {
            outcome: report.outcome,
            decided_by: report.decided_by,
            engines: std::iter::once(&report.reference)
                .chain(&report.engines)
                .map(EngineRecord::from)
                .collect(),
            verdict: report.verdict.clone(),
            mismatch: report.mismatch.as_ref().map(MismatchRecord::from),
            has_module: report.emitted.is_some(),
            gap: report.gap.clone(),
            known_issue: report.known_issue.map(str::to_string),
            crash: report.crash.clone(),
            compile_seconds: report.compile_seconds,
            decisions: report.decisions.clone(),
        }
    }
}

/// `meta.json`: everything about a finding except the case and the module.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FindingMeta {
    /// [`META_FORMAT`].
    pub format: u32,
    /// The signature.
    pub signature: Signature,
    /// [`Signature::key`] (for grepping).
    pub key: String,
    /// The check report (its fields at the top level of `meta.json`).
    #[serde(flatten)]
    pub report: ReportRecord,
    /// The codegen options.
    pub codegen: CodegenRecord,
    /// Versions.
    pub versions: Versions,
    /// Where the case comes from.
    #[serde(default)]
    pub provenance: FindingProvenance,
    /// The reduction, once reduced.
    #[serde(default)]
    pub reduction: Option<ReductionRecord>,
    /// The JAX engines' re-run of an in-process finding, when the campaign named them.
    #[serde(default)]
    pub cross_check: Option<CrossCheckRecord>,
    /// The regression range across Helion builds (`pallas-diff bisect FINDING`), once measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regression: Option<crate::regression::RegressionRecord>,
}

/// An in-process finding re-run on the JAX engines (a campaign that names them does this for
/// every new bucket). JAX is the authority on emitted code: a finding it does not reproduce is
/// most likely a bug of the in-process executor or a tolerance question, not a miscompile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CrossCheckRecord {
    /// The engines re-run (ones that produce outputs).
    pub engines: Vec<EngineId>,
    /// Their outcome on the filed case.
    pub outcome: Outcome,
    /// What that outcome says about the finding.
    pub result: CrossCheckResult,
    /// The engine that decided, with its mismatch or error, when there is one.
    #[serde(default)]
    pub detail: Option<String>,
    /// Set when this is the cross-check of the case *before* reduction, kept because it could
    /// not be re-run on the reduced case: why (`pallas-diff reduce` re-runs it when it can).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of_unreduced_case: Option<String>,
}

/// What a cross-check found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CrossCheckResult {
    /// The JAX engines show the finding's outcome too.
    Reproduced,
    /// The JAX engines agree with the reference.
    NotReproduced,
    /// Anything else (a timeout, a worker crash, a known issue, another finding kind): no
    /// answer either way.
    Inconclusive,
}

impl CrossCheckResult {
    /// The name `log.txt` and reports use.
    pub fn name(self) -> &'static str {
        match self {
            CrossCheckResult::Reproduced => "reproduced",
            CrossCheckResult::NotReproduced => "not reproduced",
            CrossCheckResult::Inconclusive => "inconclusive",
        }
    }

    /// What the result means for the finding, where it changes how to read it.
    pub fn warning(self) -> Option<&'static str> {
        match self {
            CrossCheckResult::NotReproduced => Some(
                "JAX does not reproduce this in-process finding: most likely a bug of the \
                 in-process executor or a tolerance question, not a miscompile",
            ),
            CrossCheckResult::Reproduced | CrossCheckResult::Inconclusive => None,
        }
    }
}

impl CrossCheckRecord {
    /// The record of `report`, the check of a finding's case (outcome `original`) with
    /// `engines` only.
    pub fn of(engines: Vec<EngineId>, original: Outcome, report: &CaseReport) -> CrossCheckRecord {
        let detail = report.decided_by.as_ref().map(|e| {
            let why = report.mismatch.as_ref().map(|m| m.to_string()).or_else(|| {
                report
                    .engines
                    .iter()
                    .find(|r| r.engine == *e)
                    .and_then(|r| r.status.detail())
            });
            match why {
                Some(w) => format!("{e}: {w}"),
                None => e.name().to_string(),
            }
        });
        let result = if report.outcome == original {
            CrossCheckResult::Reproduced
        } else if report.outcome == Outcome::Agree {
            CrossCheckResult::NotReproduced
        } else {
            CrossCheckResult::Inconclusive
        };
        CrossCheckRecord {
            engines,
            outcome: report.outcome,
            result,
            detail,
            of_unreduced_case: None,
        }
    }

    /// This record, kept for a reduced case it was not re-run on (`why`).
    pub fn kept_for_reduced(&self, why: impl Into<String>) -> CrossCheckRecord {
        CrossCheckRecord {
            of_unreduced_case: Some(why.into()),
            ..self.clone()
        }
    }

    /// The lines `log.txt` ends with.
    pub fn log_text(&self) -> String {
        let mut out = format!(
            "\ncross-check ({}){}: {}: {}",
            self.engines
                .iter()
                .map(|e| e.name())
                .collect::<Vec<_>>()
                .join(", "),
            match &self.of_unreduced_case {
                Some(why) =>
                    format!(" of the unreduced case (not re-run on the reduced one: {why})"),
                None => String::new(),
            },
            self.outcome,
            self.result.name()
        );
        match self.result.warning() {
            Some(w) => {
                let _ = writeln!(out, "; {w}");
            }
            None => out.push('\n'),
        }
        if let Some(d) = &self.detail {
            let _ = writeln!(out, "  {d}");
        }
        out
    }
}

impl FindingMeta {
    /// The meta of a checked case.
    pub fn new(
        case: &Case,
        report: &CaseReport,
        codegen: &CodegenOptions,
        versions: Versions,
        provenance: FindingProvenance,
    ) -> FindingMeta {
        let sig = signature(case, report);
        FindingMeta {
            format: META_FORMAT,
            key: sig.key(),
            signature: sig,
            report: report.into(),
            codegen: codegen.into(),
            versions,
            provenance,
            reduction: None,
            cross_check: None,
            regression: None,
        }
    }

    /// Replaces the signature (and its key) by one computed beyond the report: a reduction's,
    /// which records the decisions its ablation showed unneeded
    /// ([`crate::minimize::ablate`]).
    pub fn set_signature(&mut self, sig: Signature) {
        self.key = sig.key();
        self.signature = sig;
    }
}

/// A finding: what its directory holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// The case.
    pub case: Case,
    /// The emitted module.
    pub emitted: Option<String>,
    /// The check report as text.
    pub log: String,
    /// `meta.json`.
    pub meta: FindingMeta,
}

/// A finding directory that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FindingError {
    /// I/O.
    #[error(transparent)]
    Io(#[from] IoError),
    /// A JSON file that does not parse.
    #[error("{}:{line}:{column}: {message}", path.display())]
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
    /// A format version this build does not read.
    #[error("{}: {what} version {found} is not supported (this build reads {supported})", path.display())]
    Version {
        /// The file.
        path: PathBuf,
        /// `meta.json format` or `case format`.
        what: &'static str,
        /// Found.
        found: u32,
        /// Supported.
        supported: u32,
    },
}

fn parse_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, FindingError> {
    let text = fsio::read_to_string(path)?;
    serde_json::from_str(&text).map_err(|e| FindingError::Json {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })
}

impl Finding {
    /// The finding of a checked case.
    pub fn new(
        case: &Case,
        report: &CaseReport,
        codegen: &CodegenOptions,
        versions: Versions,
        provenance: FindingProvenance,
    ) -> Finding {
        Finding {
            case: case.clone(),
            emitted: report.emitted.clone(),
            log: log_text(report),
            meta: FindingMeta::new(case, report, codegen, versions, provenance),
        }
    }

    /// Reads a finding directory.
    pub fn load(dir: &Path) -> Result<Finding, FindingError> {
        let meta_path = dir.join("meta.json");
        let mut meta: FindingMeta = parse_json(&meta_path)?;
        let migrate = meta.format == 1;
        if migrate {
            meta.format = META_FORMAT;
        }
        if meta.format != META_FORMAT {
            return Err(FindingError::Version {
                path: meta_path,
                what: "meta.json format",
                found: meta.format,
                supported: META_FORMAT,
            });
        }
        let case_path = dir.join("case.json");
        let case: Case = parse_json(&case_path)?;
        if case.version != CASE_VERSION {
            return Err(FindingError::Version {
                path: case_path,
                what: "case format",
                found: case.version,
                supported: CASE_VERSION,
            });
        }
        if migrate {
            // Format 1 recorded another classifier's forms: the case says what they are now.
            let sig = meta.signature.clone().with_forms_of(&case);
            meta.set_signature(sig);
        }
        if meta.signature.is_our_code() {
            // A finding in our code with no decision recorded its loop type and forms before
            // buckets format 6; it keys on its decisions now.
            let sig = meta.signature.clone().normalized();
            meta.set_signature(sig);
        }
        let emitted_text = fsio::read_to_string(&dir.join("emitted.py"))?;
        let emitted = meta.report.has_module.then_some(emitted_text);
        let log = fsio::read_to_string(&dir.join("log.txt"))?;
        Ok(Finding {
            case,
            emitted,
            log,
            meta,
        })
    }

    /// The five files' contents, in [`FINDING_FILES`] order.
    pub fn files(&self) -> [(&'static str, String); 5] {
        let emitted = match &self.emitted {
            Some(s) => s.clone(),
            None => format!(
                "{NO_MODULE}the compiler's outcome was `{}`\n",
                self.meta.report.outcome
            ),
        };
        [
            (
                "case.json",
                crate::json::to_string_ordered(
                    &self.case,
                    &["version", "config", "kernel", "inputs", "seed", "call"],
                )
                .expect("a case serializes"),
            ),
            ("case.py", render_case(&self.case)),
            ("emitted.py", emitted),
            ("log.txt", self.log.clone()),
            (
                "meta.json",
                crate::json::to_string_ordered(
                    &self.meta,
                    &[
                        "format",
                        "key",
                        "outcome",
                        "decided_by",
                        "signature",
                        "verdict",
                    ],
                )
                .expect("meta serializes"),
            ),
        ]
    }
}

/// Writes the five files of a finding into `dir` atomically (a temporary directory next to it,
/// renamed into place; an existing `dir` is replaced whole).
pub fn write_finding_dir(dir: &Path, finding: &Finding) -> Result<(), FindingError> {
    let files = finding.files();
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(n, s)| (*n, s.as_bytes())).collect();
    fsio::write_dir_atomic(dir, &refs)?;
    Ok(())
}

/// The check report as text: outcome, verdict, every engine's status, the mismatch, the
/// compiler's panic and the engines' tracebacks.
pub fn log_text(report: &CaseReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "outcome: {}", report.outcome);
    if let Some(e) = &report.decided_by {
        let _ = writeln!(out, "decided by: {e}");
    }
    match &report.verdict {
        Some(Verdict::Lowered) => out.push_str("verdict: lowered\n"),
        Some(Verdict::Rejected(r)) => {
            let _ = writeln!(out, "verdict: rejected: {r}");
        }
        None => out.push_str("verdict: none (the compiler crashed)\n"),
    }
    if let Some(g) = &report.gap {
        let _ = writeln!(out, "unsupported: {g}");
    }
    if let Some(k) = report.known_issue {
        let _ = writeln!(out, "known issue: {k}");
    }
    let _ = writeln!(out, "compile: {:.3}s", report.compile_seconds);
    let _ = writeln!(
        out,
        "{:<22} {:<12} {:>9}  detail",
        "engine", "status", "seconds"
    );
    for e in std::iter::once(&report.reference).chain(&report.engines) {
        let _ = writeln!(
            out,
            "{:<22} {:<12} {:>9.3}  {}",
            e.engine,
            e.status.name(),
            e.seconds,
            e.status.detail().unwrap_or_default()
        );
    }
    if let Some(m) = &report.mismatch {
        let _ = writeln!(out, "mismatch: {m}");
    }
    if let Some(c) = &report.crash {
        let _ = writeln!(out, "\ncompiler panic:\n{c}");
    }
    for e in &report.engines {
        if let EngineStatus::KernelError {
            stage,
            kind,
            message,
            traceback,
        } = &e.status
        {
            let _ = writeln!(
                out,
                "\n{} failed at {stage}: {kind}\n{message}\n{traceback}",
                e.engine
            );
        }
        // Helion's own module is what an upstream report quotes next to the case script.
        if let Some(g) = &e.generated {
            let _ = writeln!(
                out,
                "\n{}: the Pallas module Helion generated:\n{g}",
                e.engine
            );
        }
    }
    out
}
