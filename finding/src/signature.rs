//! Signatures of findings, and their deduplication into buckets.
//!
//! A [`Signature`] says *what caused* a finding, not which case shows it: the outcome kind, the
//! engine that saw it, the rule or failing stage (with the exception class, the mismatch kind,
//! the panic site, or for a Helion exception its normalized message and raising frame), and,
//! for findings about emitted code (mismatch, lowering error, runtime error):
//! * in code our compiler emitted, the planner's and codegen's [`Decisions`] on the case
//!   (`compiler::decisions`): which loads stay resident, how each run is read, which views stay
//!   Ref transforms, the loop skeleton; none at all is a key too (`emitted/<engine>/-`). Two
//!   spellings of one decision (`t.index`, `t.index + 0`) are one cause;
//! * in code Helion emitted (our decisions do not describe it), the loop type and the set of
//!   [`IndexForm`]s of the kernel's device subscripts.
//!
//! Two findings with one signature are one bucket ([`Buckets`]): a count and the smallest case
//! by [`reducer::cost`].
//!
//! Reduction keeps a finding's signature in the sense of [`Signature::holds_for`]: the same
//! kind, engine and cause, and decisions (or forms) that are a subset of the original's, the
//! loop skeleton free to move to [`reducer::CANONICAL_LOOP_TYPE`]. The reducer drops what
//! the bug does not need, so the reduced case's decisions are those the bug still needs, and
//! findings of one cause converge on one reduced signature: [`Buckets`] remembers the raw keys
//! that reduced into each bucket as aliases (finding the same raw bug again costs no
//! reduction), and a reduced finding whose signature is a known bucket merges into it.
//!
//! Signatures are computed from a case and its [`CaseReport`] only, so the same function serves
//! findings made under any [`compiler::compile::CodegenOptions`] (fault injections included):
//! the options go to `check_case`, never into the signature.

use crate::fsio::{self, IoError};
use compiler::decisions::{Decision, Decisions};
use compiler::plan::SelectorKind;
use fuzz::check::CaseReport;
use fuzz::engines::{EngineId, EngineStatus};
use fuzz::outcome::Outcome;
use lang::ir::{Case, LoopType};
use reducer::{Cost, cost};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// The index forms of a kernel's device subscripts: the one classifier, the coverage table's.
pub use fuzz::generators::{IndexForm, index_forms};

/// What kind of bug a case shows (module docs).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Signature {
    /// The outcome (serialized as its kebab-case name: `mismatch`, `runtime-error`, ...).
    pub outcome: Outcome,
    /// The engine that decided it (none for compile-level outcomes).
    pub engine: Option<EngineId>,
    /// The rule id (rejected), known-issue id, `<stage>:<exception class>` (lowering and
    /// runtime errors), mismatch kind (mismatch), or `<file>: <message>` panic site (compiler
    /// crash, digits replaced by `N`).
    pub cause: Option<String>,
    /// The effective loop type, for findings about the emitted code.
    pub loop_type: Option<LoopType>,
    /// The index forms of the kernel's device subscripts, for findings about code Helion
    /// emitted (our planner's decisions do not describe it).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub forms: BTreeSet<IndexForm>,
    /// The planner's and codegen's decisions on the case ([`compiler::decisions`]), for
    /// findings about the code our compiler emitted: the cause a bucket keys on. The loop
    /// skeleton is one of them, so `loop_type` is then absent.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub decisions: Decisions,
    /// Of those, the ones an ablation showed the finding does not need: with each lowered by
    /// its plain path (`compiler::decisions::PlainSet`, one more at a time), the finding still
    /// showed ([`crate::minimize::ablate`]). The key leaves out the ablated views
    /// ([`Signature::cause_decisions`]); an ablated run stays in it, but a bucket that shows
    /// the cause without it absorbs it ([`Signature::subsumes`]).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub ablated: Decisions,
}

impl Default for Signature {
    /// An `agree` signature with no parts: the start of a signature built field by field.
    fn default() -> Signature {
        Signature {
            outcome: Outcome::Agree,
            engine: None,
            cause: None,
            loop_type: None,
            forms: BTreeSet::new(),
            decisions: Decisions::new(),
            ablated: Decisions::new(),
        }
    }
}

impl Signature {
    /// The bucket key: `<outcome>/<engine>/<cause>/<loop type>/<forms joined by +>`, or, for
    /// code our compiler emitted ([`Signature::is_our_code`]), `emitted/<engine>/<decisions
    /// joined by +>`; `-` for an absent part or no decision. Stable across runs and versions of this crate (format [`BUCKETS_FORMAT`]).
    ///
    /// Code our compiler emitted keys on its decisions alone, not on the symptom: one wrong
    /// lowering fails at trace time, at run time or in the values depending on the shapes around
    /// it (measured: `d14-mask-on-input-axis` in 60 s showed one decision set as a values
    /// mismatch and as trace-time `TypeError`, `ValueError` and `IndexError`, four buckets of
    /// one cause). The symptom stays in [`Signature::outcome`] and [`Signature::cause`], and a
    /// reduction keeps it ([`Signature::holds_for`]).
    pub fn key(&self) -> String {
        if self.is_our_code() {
            let cause: Vec<String> = self.cause_decisions().map(|d| d.to_string()).collect();
            return format!("emitted/{}/{}", self.engine_part(), joined_or_dash(&cause));
        }
        self.symptom_key()
    }

    /// The decisions the key names: [`Signature::decisions`] without the ablated views.
    ///
    /// A view's plain path is the whole decision (a Ref reshape or a value reshape to the same
    /// shape, nothing planned besides), so an ablated view is not part of the cause. A run's
    /// plain path replaces only how it is read (the whole Ref, then a value slice); its
    /// selector (start, width, mask, squeeze) is the planner's either way, so an ablated run
    /// still names the selector a planner bug may sit in (measured: with runs left out too,
    /// `d2-tile-count-without-begin` and `d14-mask-on-input-axis` filed the same key,
    /// `resident-load+materialize`, and `d11-unmasked-gather`'s tile-selector bug lost its
    /// run).
    pub fn cause_decisions(&self) -> impl Iterator<Item = &Decision> {
        self.decisions
            .iter()
            .filter(|d| !(matches!(d, Decision::RefView(_)) && self.ablated.contains(d)))
    }

    /// The key with the symptom: `<outcome>/<engine>/<cause>/` and then the decisions, or the
    /// loop type and forms. What a corpus entry expects: a replay must show the same symptom,
    /// not only the same cause.
    pub fn symptom_key(&self) -> String {
        let part = |s: &Option<String>| s.clone().unwrap_or_else(|| "-".into());
        if self.is_our_code() {
            return format!(
                "{}/{}/{}/{}",
                self.outcome,
                self.engine_part(),
                part(&self.cause),
                self.decisions_part()
            );
        }
        format!(
            "{}/{}/{}/{}/{}",
            self.outcome,
            self.engine_part(),
            part(&self.cause),
            self.loop_type.map_or("-", LoopType::name),
            forms_part(&self.forms)
        )
    }

    fn engine_part(&self) -> &'static str {
        self.engine.map_or("-", EngineId::name)
    }

    fn decisions_part(&self) -> String {
        let decisions: Vec<String> = self.decisions.iter().map(|d| d.to_string()).collect();
        joined_or_dash(&decisions)
    }

    /// Whether this is a finding's signature.
    pub fn is_finding(&self) -> bool {
        self.outcome.is_finding()
    }

    /// Whether `candidate` (the signature of a reduction candidate) still shows this finding:
    /// same outcome, engine and cause; for code our compiler emitted, a subset of these
    /// decisions, where the loop skeleton may also become the default one
    /// ([`decisions_hold`]); for code Helion emitted, the same loop type or the canonical one
    /// ([`reducer::CANONICAL_LOOP_TYPE`], so one Helion bug under three loop types
    /// converges on one bucket) and a subset of the index forms.
    pub fn holds_for(&self, candidate: &Signature) -> bool {
        let same_symptom = self.outcome == candidate.outcome
            && self.engine == candidate.engine
            && self.cause == candidate.cause;
        if self.is_our_code() {
            return same_symptom && decisions_hold(&self.decisions, &candidate.decisions);
        }
        same_symptom
            && self.loop_type_holds(candidate.loop_type)
            && candidate.forms.is_subset(&self.forms)
            && candidate.decisions.is_empty()
    }

    /// Whether a candidate whose signature records `loop_type` keeps this finding's loop type:
    /// the same one, or the canonical one ([`reducer::CANONICAL_LOOP_TYPE`]); anything
    /// when this signature records none (our emitted code keys on decisions, `helion-eager`
    /// never reads the loop type).
    pub fn loop_type_holds(&self, loop_type: Option<LoopType>) -> bool {
        match self.loop_type {
            None => true,
            Some(own) => loop_type == Some(own) || loop_type == Some(reducer::CANONICAL_LOOP_TYPE),
        }
    }

    /// Whether `other` (a reduced finding's signature) is this bucket's cause seen through
    /// decisions that do not change what the code reads: the same engine, both about code our
    /// compiler emitted (whatever the symptom, as in [`Signature::key`]), and `other`'s key
    /// decisions are these (but for a canonical loop skeleton) plus only transparent ones: address-preserving views,
    /// materialization, the static-value fallback, a loop skeleton, or a run `other`'s
    /// ablation showed it does not need (this bucket shows the cause with no such run at
    /// all). The reducer cannot always take a view away (dropping it changes the shape
    /// downstream), so without this one bug under `None`, `.unsqueeze` and a plain read filed
    /// three buckets. Loads are never transparent, and neither is a run the finding needs: a
    /// finding that needs another run kind is another cause.
    pub fn subsumes(&self, other: &Signature) -> bool {
        let transparent = |d: &Decision| match d {
            Decision::RefView(_)
            | Decision::Materialize
            | Decision::StaticValue
            | Decision::Loop(_) => true,
            Decision::Run { .. } => other.ablated.contains(d),
            Decision::ResidentLoad | Decision::ValueLoad | Decision::NewAxisRun => false,
        };
        // A bucket under the canonical loop skeleton was moved there by the reducer (or found
        // there): the skeleton is not what it needs, so a finding under another skeleton, or
        // with no device loop, may show the same cause (measured: d1-read-after-write filed
        // one cause under fori_loop, emit_pipeline and a grid-level tail run).
        let canonical = Decision::Loop(reducer::CANONICAL_LOOP_TYPE);
        let (own, theirs): (Decisions, Decisions) = (
            self.cause_decisions()
                .copied()
                .filter(|d| *d != canonical)
                .collect(),
            other.cause_decisions().copied().collect(),
        );
        self.engine == other.engine
            && self.is_our_code()
            && other.is_our_code()
            && self.key() != other.key()
            && own.is_subset(&theirs)
            && theirs.difference(&own).all(transparent)
    }

    /// This signature with the index forms of `case` ([`index_forms`]) where it records forms:
    /// the migration of a signature written with another classifier's.
    pub fn with_forms_of(mut self, case: &Case) -> Signature {
        if !self.forms.is_empty() {
            self.forms = index_forms(case);
        }
        self
    }

    /// Whether the outcome concerns the emitted code (its loop type and forms are recorded).
    pub fn is_about_emitted_code(&self) -> bool {
        matches!(
            self.outcome,
            Outcome::Mismatch | Outcome::LoweringError | Outcome::RuntimeError
        )
    }

    /// Whether the finding is in code our compiler emitted (an engine of ours ran our module):
    /// it keys on [`Signature::decisions`], none at all included. A finding in our code that
    /// needs no planner decision (tile-attribute arithmetic, a loop bound) is one cause under
    /// every load and run its case happened to have (measured: `d2-tile-count-without-begin`
    /// filed 4 buckets in 60 s, one cause under an inner loop, a value load, a tail run and no
    /// decision, while no reduction could leave the decisions empty).
    pub fn is_our_code(&self) -> bool {
        self.is_about_emitted_code() && self.engine.is_some_and(|e| !e.is_helion())
    }

    /// This signature in today's form: one in our code records no loop type and no forms
    /// (those written before buckets format 6 did when they had no decisions).
    pub fn normalized(mut self) -> Signature {
        if self.is_our_code() {
            self.loop_type = None;
            self.forms.clear();
        }
        self
    }

    /// A short file-name-safe slug: `mismatch-pallas-tpu-interpret`.
    pub fn slug(&self) -> String {
        let mut s = self.outcome.name().to_string();
        if let Some(e) = self.engine {
            s.push('-');
            s.push_str(e.name());
        }
        slugify(&s)
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key())
    }
}

/// Parts joined by `+`, `-` for none.
fn joined_or_dash(parts: &[String]) -> String {
    if parts.is_empty() {
        return "-".to_string();
    }
    parts.join("+")
}

/// The forms part of a symptom key: the forms joined by `+`, `-` for none.
fn forms_part(forms: &BTreeSet<IndexForm>) -> String {
    if forms.is_empty() {
        return "-".to_string();
    }
    let names: Vec<&str> = forms.iter().map(|f| f.name()).collect();
    names.join("+")
}

/// A symptom key ([`Signature::symptom_key`]) of a finding in code Helion emitted, which ends
/// in its index forms, with the forms of `case` instead; `None` for a key that names no forms.
/// The migration of a key written when signatures had their own classifier (its names, two of
/// which hold a `+` themselves, `tile-index+0` and `tile-index+k`, read through
/// [`IndexForm`]'s aliases); for a key of this build, the same key.
pub fn symptom_key_with_forms_of(key: &str, case: &Case) -> Option<String> {
    let (head, last) = key.rsplit_once('/')?;
    let is_form = |f: &str| {
        serde_json::from_value::<IndexForm>(serde_json::Value::String(f.to_string())).is_ok()
    };
    let mut words = last.split('+').peekable();
    while let Some(w) = words.next() {
        let joined = match words.peek() {
            Some(&next @ ("0" | "k")) if w == "tile-index" => {
                words.next();
                format!("{w}+{next}")
            }
            Some(_) | None => w.to_string(),
        };
        if !is_form(&joined) {
            return None;
        }
    }
    Some(format!("{head}/{}", forms_part(&index_forms(case))))
}

/// Whether a reduction candidate's decisions keep a finding's. Each candidate decision is one
/// the finding had, or a plainer stand-in for one it had: the loop skeleton the reducer moves
/// toward ([`reducer::CANONICAL_LOOP_TYPE`]) for any skeleton, and a static run (a literal
/// row or slice, unmasked) for any run. The reducer may drop decisions and swap them for plainer
/// ones, never add one, as a fuel-limited optimizer falls back to the plain path: when the bug
/// survives the swap, the finding did not need the decision, and findings of one cause under
/// several loop types or run kinds converge on one bucket.
pub fn decisions_hold(finding: &Decisions, candidate: &Decisions) -> bool {
    let has_run = finding.iter().any(|d| matches!(d, Decision::Run { .. }));
    candidate.iter().all(|d| {
        finding.contains(d)
            || match d {
                Decision::Loop(l) => *l == reducer::CANONICAL_LOOP_TYPE && has_loop(finding),
                Decision::Run {
                    kind: SelectorKind::Static,
                    mask: false,
                    ..
                } => has_run,
                Decision::Run { .. }
                | Decision::ResidentLoad
                | Decision::ValueLoad
                | Decision::NewAxisRun
                | Decision::RefView(_)
                | Decision::Materialize
                | Decision::StaticValue => false,
            }
    })
}

fn has_loop(decisions: &Decisions) -> bool {
    decisions.iter().any(|d| matches!(d, Decision::Loop(_)))
}

/// Lower-case ASCII letters, digits and `-` only (runs of anything else become one `-`).
pub fn slugify(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// The panic site of a compiler crash (`<file>: <first message line>`, digits as `N`), from
/// the text `check_case` records (`panicked at <file>:<line>:<col>:\n<message>\n<backtrace>`).
pub fn panic_site(crash: &str) -> String {
    let mut lines = crash.lines();
    let first = lines.next().unwrap_or("");
    let location = first
        .strip_prefix("panicked at ")
        .map(|l| l.trim_end_matches(':'))
        .unwrap_or(first);
    let file = location.split(':').next().unwrap_or(location);
    let message = lines.next().unwrap_or("").trim();
    let mut normalized = String::new();
    for c in message.chars().take(120) {
        if c.is_ascii_digit() {
            if !normalized.ends_with('N') {
                normalized.push('N');
            }
        } else {
            normalized.push(c);
        }
    }
    format!("{file}: {normalized}")
}

/// The signature of `case` given its check report.
pub fn signature(case: &Case, report: &CaseReport) -> Signature {
    let engine_run = report
        .decided_by
        .as_ref()
        .and_then(|name| report.engines.iter().find(|e| &e.engine == name));
    let cause = match report.outcome {
        Outcome::Rejected => report.rejection().map(|r| r.rule.id().to_string()),
        Outcome::KnownIssue => report.known_issue.map(str::to_string),
        Outcome::Mismatch => report.mismatch.as_ref().map(|m| m.kind.name().to_string()),
        Outcome::LoweringError | Outcome::RuntimeError => {
            engine_run.and_then(|e| match &e.status {
                EngineStatus::KernelError { stage, kind, .. } => Some(format!("{stage}:{kind}")),
                _ => None,
            })
        }
        Outcome::CompilerCrash => report.crash.as_deref().map(panic_site),
        Outcome::InvalidCase | Outcome::HelionAcceptsInvalid => match &report.reference.status {
            EngineStatus::Invalid { kind, .. } => Some(kind.id().to_string()),
            _ => None,
        },
        // One cause of a Helion exception: its class, its normalized first message line and
        // the Helion function that raised it.
        Outcome::HelionCrash => engine_run.and_then(|e| match &e.status {
            EngineStatus::KernelError {
                stage,
                kind,
                message,
                traceback,
            } => Some(fuzz::exception::cause(*stage, kind, message, traceback)),
            _ => None,
        }),
        // Which of our verdicts met which of Helion's.
        Outcome::VerdictMismatch => engine_run.map(|e| {
            let ours = match report.rejection() {
                Some(r) => r.rule.id().to_string(),
                None => "lowered".to_string(),
            };
            let theirs = match &e.status {
                EngineStatus::Refused { class, .. } => class.clone(),
                _ => "lowered".to_string(),
            };
            format!("ours:{ours} helion:{theirs}")
        }),
        Outcome::Agree | Outcome::Unsupported | Outcome::Timeout | Outcome::EngineCrash => None,
    };
    let engine = match report.outcome {
        Outcome::Mismatch
        | Outcome::LoweringError
        | Outcome::RuntimeError
        | Outcome::Timeout
        | Outcome::EngineCrash
        | Outcome::KnownIssue
        | Outcome::HelionCrash
        | Outcome::HelionAcceptsInvalid
        | Outcome::VerdictMismatch => report.decided_by,
        Outcome::Agree
        | Outcome::Rejected
        | Outcome::InvalidCase
        | Outcome::CompilerCrash
        | Outcome::Unsupported => None,
    };
    let mut sig = Signature {
        outcome: report.outcome,
        engine,
        cause,
        loop_type: None,
        forms: BTreeSet::new(),
        decisions: Decisions::new(),
        ablated: Decisions::new(),
    };
    if sig.is_our_code() {
        sig.decisions = report.decisions.clone();
    } else if sig.is_about_emitted_code() {
        // Helion's eager mode runs the kernel as PyTorch and never reads `pallas_loop_type`:
        // its findings are not split by it.
        if sig.engine != Some(EngineId::Worker(tpu_runner::Mode::HelionEager)) {
            sig.loop_type = Some(case.effective_loop_type());
        }
        sig.forms = index_forms(case);
    }
    sig
}

/// The version of the buckets file format (2: findings in our emitted code key on decisions;
/// 3: on decisions and engine only, not the symptom; 4: the reference's error kind in a cause
/// is its id, `index-out-of-range`, not the variant name; 5: index forms are the coverage
/// table's, [`index_forms`]; 6: a finding in our emitted code with no decision keys
/// `emitted/<engine>/-`, not on its loop type and forms). Formats 2 to 5 are migrated on read
/// ([`Buckets::load`]).
pub const BUCKETS_FORMAT: u32 = 6;

/// The file name of the buckets index in a findings directory.
pub const BUCKETS_FILE: &str = "buckets.json";

/// [`Cost`] as stored in JSON.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CostRecord {
    /// Statements in the kernel.
    pub statements: usize,
    /// Loads of host tensors (absent in buckets written before it existed: 0).
    #[serde(default)]
    pub loads: usize,
    /// Symbolic device subscript entries (absent in older buckets: 0).
    #[serde(default)]
    pub dynamic_indices: usize,
    /// Expression nodes.
    pub exprs: usize,
    /// Input elements.
    pub input_elements: usize,
    /// Input constructor complexity.
    pub input_complexity: usize,
    /// Sum of block sizes.
    pub block_sizes: i64,
    /// Sum of |int literals|.
    pub literals: i64,
    /// [`Cost::loop_type`] (absent in buckets written before it existed: 0).
    #[serde(default)]
    pub loop_type: u8,
}

impl From<Cost> for CostRecord {
    fn from(c: Cost) -> CostRecord {
        CostRecord {
            statements: c.statements,
            loads: c.loads,
            dynamic_indices: c.dynamic_indices,
            exprs: c.exprs,
            input_elements: c.input_elements,
            input_complexity: c.input_complexity,
            block_sizes: c.block_sizes,
            literals: c.literals,
            loop_type: c.loop_type,
        }
    }
}

impl CostRecord {
    /// The cost of `case`.
    pub fn of(case: &Case) -> CostRecord {
        cost(case).into()
    }
}

/// One bucket: every finding with one signature.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// [`Signature::key`].
    pub key: String,
    /// The signature.
    pub signature: Signature,
    /// Findings filed into it (the first included).
    pub count: u64,
    /// Its finding directory, relative to the findings directory.
    pub dir: String,
    /// The cost of the smallest case seen (the one in `dir`).
    pub cost: CostRecord,
    /// Raw (unreduced) signature keys whose findings reduced into this bucket.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub aliases: BTreeSet<String>,
}

/// Every bucket of a findings directory, persisted as `buckets.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Buckets {
    /// [`BUCKETS_FORMAT`].
    pub format: u32,
    /// Buckets by key.
    pub buckets: BTreeMap<String, Bucket>,
}

impl Default for Buckets {
    fn default() -> Buckets {
        Buckets {
            format: BUCKETS_FORMAT,
            buckets: BTreeMap::new(),
        }
    }
}

/// A `buckets.json` that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum BucketsError {
    /// Reading or writing failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// Not a buckets file.
    #[error("{}:{line}:{column}: not a buckets file: {message}", path.display())]
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
    #[error("{}: buckets format {found} is not supported (this build reads {BUCKETS_FORMAT})", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// The version found.
        found: u32,
    },
}

impl Buckets {
    /// Loads `<dir>/buckets.json`; an absent file is an empty index.
    pub fn load(dir: &Path) -> Result<Buckets, BucketsError> {
        let path = dir.join(BUCKETS_FILE);
        if !path.exists() {
            return Ok(Buckets::default());
        }
        let text = fsio::read_to_string(&path)?;
        let b: Buckets = serde_json::from_str(&text).map_err(|e| BucketsError::Json {
            path: path.clone(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        match b.format {
            BUCKETS_FORMAT => Ok(b),
            2 | 3 => Ok(b.with_kind_ids().with_forms_of_cases(dir).rekeyed()),
            4 => Ok(b.with_forms_of_cases(dir).rekeyed()),
            5 => Ok(b.rekeyed()),
            found => Err(BucketsError::Format { path, found }),
        }
    }

    /// The index with each bucket's index forms those of its directory's case
    /// ([`Signature::with_forms_of`]; formats before 5 recorded another classifier's, read
    /// through the aliases of [`IndexForm`], which stand when the case cannot be read).
    fn with_forms_of_cases(mut self, dir: &Path) -> Buckets {
        for b in self.buckets.values_mut() {
            if b.signature.forms.is_empty() {
                continue;
            }
            let case = fsio::read_to_string(&dir.join(&b.dir).join("case.json"))
                .ok()
                .and_then(|text| serde_json::from_str::<Case>(&text).ok());
            if let Some(case) = case {
                b.signature = b.signature.clone().with_forms_of(&case);
            }
        }
        self
    }

    /// The index with each cause that names the reference's error kind by its variant name
    /// (formats 2 and 3) named by its id; other causes (a Helion exception class such as
    /// `TypeError`) are left alone.
    fn with_kind_ids(mut self) -> Buckets {
        for b in self.buckets.values_mut() {
            let about_the_reference = matches!(
                b.signature.outcome,
                Outcome::InvalidCase | Outcome::HelionAcceptsInvalid
            );
            if let (true, Some(cause)) = (about_the_reference, &b.signature.cause)
                && let Some(kind) = oracle::EvalErrorKind::from_name(cause)
            {
                b.signature.cause = Some(kind.id().to_string());
            }
        }
        self
    }

    /// The index with every bucket under its signature's current key, buckets that now share
    /// a key merged (counts add up, the cheaper case's directory kept, old keys as aliases):
    /// the migration of an older format, whose keys split what one key now holds.
    fn rekeyed(self) -> Buckets {
        let mut out = Buckets::default();
        for (old_key, mut b) in self.buckets {
            b.signature = b.signature.normalized();
            let key = b.signature.key();
            b.aliases.insert(old_key);
            b.aliases.remove(&key);
            b.key = key.clone();
            match out.buckets.get_mut(&key) {
                None => {
                    out.buckets.insert(key, b);
                }
                Some(existing) => {
                    existing.count += b.count;
                    existing.aliases.extend(b.aliases);
                    if b.cost < existing.cost {
                        existing.cost = b.cost;
                        existing.dir = b.dir;
                        existing.signature = b.signature;
                    }
                }
            }
        }
        out
    }

    /// Writes `<dir>/buckets.json` atomically.
    pub fn save(&self, dir: &Path) -> Result<(), BucketsError> {
        let text = crate::json::to_string_of(self).expect("buckets serialize");
        fsio::write_atomic(&dir.join(BUCKETS_FILE), text.as_bytes())?;
        Ok(())
    }

    /// The bucket a signature key belongs to (directly or as an alias).
    pub fn find(&self, key: &str) -> Option<&Bucket> {
        self.buckets
            .get(key)
            .or_else(|| self.buckets.values().find(|b| b.aliases.contains(key)))
    }

    fn find_key(&self, key: &str) -> Option<String> {
        self.find(key).map(|b| b.key.clone())
    }

    /// Records a finding with signature `sig` and case cost `cost`. A known bucket (by key or
    /// alias) gets its count raised and returns [`Recorded::Known`] (with `smaller` when this
    /// case is smaller than the bucket's, so the caller should replace the bucket's directory);
    /// an unknown one is created with `dir` and returns [`Recorded::New`].
    pub fn record(&mut self, sig: &Signature, cost: CostRecord, dir: &str) -> Recorded {
        let key = sig.key();
        if let Some(k) = self.find_key(&key) {
            let b = self.buckets.get_mut(&k).expect("found");
            b.count += 1;
            let smaller = cost < b.cost;
            if smaller {
                b.cost = cost;
            }
            return Recorded::Known {
                dir: b.dir.clone(),
                smaller,
            };
        }
        self.buckets.insert(
            key.clone(),
            Bucket {
                key,
                signature: sig.clone(),
                count: 1,
                dir: dir.to_string(),
                cost,
                aliases: BTreeSet::new(),
            },
        );
        Recorded::New
    }

    /// Re-keys the bucket of `old_key` after its finding was reduced to signature `new`
    /// (cost `cost`): the old key becomes an alias. If a bucket with the new key already
    /// exists, the two merge (counts add up) into the existing one, which keeps the smaller
    /// case; returns the directory that now holds the bucket and whether `old_key`'s directory
    /// became redundant (merged away).
    pub fn rekey(&mut self, old_key: &str, new: &Signature, cost: CostRecord) -> Option<Rekeyed> {
        let old_bucket_key = self.find_key(old_key)?;
        let mut old = self.buckets.remove(&old_bucket_key)?;
        // A reduced finding that has every decision of a known bucket's reduced case, plus only
        // transparent ones ([`Signature::subsumes`]), converged on that bucket's cause.
        let new_key = self
            .buckets
            .values()
            .filter(|b| b.signature.subsumes(new))
            .map(|b| b.key.clone())
            .min()
            .unwrap_or_else(|| new.key());
        old.aliases.insert(old_bucket_key.clone());
        old.aliases.insert(new.key());
        old.aliases.remove(&new_key);
        let exact = new_key == new.key();
        if let Some(existing) = self.buckets.get_mut(&new_key) {
            existing.count += old.count;
            existing.aliases.extend(old.aliases);
            existing.aliases.remove(&new_key);
            // A subsumed case has decisions the bucket's key does not: it never replaces it.
            let replace = exact && cost < existing.cost;
            if replace {
                existing.cost = cost;
            }
            return Some(Rekeyed {
                dir: existing.dir.clone(),
                merged_away: Some(old.dir),
                smaller: replace,
            });
        }
        old.key = new_key.clone();
        old.signature = new.clone();
        old.cost = cost;
        let dir = old.dir.clone();
        self.buckets.insert(new_key, old);
        Some(Rekeyed {
            dir,
            merged_away: None,
            smaller: true,
        })
    }

    /// The bucket a reduced finding's signature converged on: the one with its key, else the
    /// first (by key) that [`Signature::subsumes`] it.
    pub fn converged(&self, sig: &Signature) -> Option<String> {
        self.find_key(&sig.key()).or_else(|| {
            self.buckets
                .values()
                .filter(|b| b.signature.subsumes(sig))
                .map(|b| b.key.clone())
                .min()
        })
    }

    /// Merges into the bucket `into` every other bucket it subsumes (a new reduced finding that
    /// needs fewer decisions than buckets filed before it): counts add up, their keys become
    /// aliases. Returns the directories of the buckets merged away.
    pub fn absorb_subsumed(&mut self, into: &str) -> Vec<String> {
        let Some(sig) = self.buckets.get(into).map(|b| b.signature.clone()) else {
            return Vec::new();
        };
        let subsumed: Vec<String> = self
            .buckets
            .values()
            .filter(|b| b.key != into && sig.subsumes(&b.signature))
            .map(|b| b.key.clone())
            .collect();
        let mut dirs = Vec::new();
        for key in subsumed {
            let Some(b) = self.buckets.remove(&key) else {
                continue;
            };
            let target = self.buckets.get_mut(into).expect("present");
            target.count += b.count;
            target.aliases.extend(b.aliases);
            target.aliases.insert(b.key);
            dirs.push(b.dir);
        }
        dirs
    }

    /// Total findings over all buckets.
    pub fn total(&self) -> u64 {
        self.buckets.values().map(|b| b.count).sum()
    }
}

/// What [`Buckets::record`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// A new bucket: write its directory.
    New,
    /// A known bucket.
    Known {
        /// Its directory.
        dir: String,
        /// Whether the new case is smaller than the bucket's (replace the directory's case).
        smaller: bool,
    },
}

/// What [`Buckets::rekey`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rekeyed {
    /// The directory that holds the bucket now.
    pub dir: String,
    /// The reduced finding's own directory when it merged into an existing bucket (the caller
    /// may remove it).
    pub merged_away: Option<String>,
    /// Whether the reduced case is now the bucket's smallest (write it into `dir`).
    pub smaller: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use lang::frontend::parse_case;

    /// A bucket of one finding of `sig` in `dir`, under the signature's key.
    fn bucket_of(sig: &Signature, dir: &str) -> Bucket {
        Bucket {
            key: sig.key(),
            signature: sig.clone(),
            count: 1,
            dir: dir.into(),
            cost: CostRecord::default(),
            aliases: BTreeSet::new(),
        }
    }

    /// `old` written as a findings directory's index and read back ([`Buckets::load`]).
    fn written_and_loaded(old: &Buckets) -> Buckets {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(
            t.path().join(BUCKETS_FILE),
            serde_json::to_string(old).unwrap(),
        )
        .unwrap();
        Buckets::load(t.path()).unwrap()
    }

    fn case(body: &str) -> Case {
        let src = format!(
            "import torch\nimport helion\nimport helion.language as hl\n\n\n\
             @helion.kernel(backend=\"pallas\", static_shapes=True, config=helion.Config(block_sizes=[], pallas_loop_type=\"fori_loop\"))\n\
             def k(x: torch.Tensor):\n    out = torch.zeros([1, 2, 128], dtype=torch.float32)\n\
             {body}\n    return out\n\n\nx = torch.ones(8, 2, 128)\nk(x)\n"
        );
        parse_case(&src, "k.py").unwrap_or_else(|e| panic!("{e}\n{src}"))
    }

    #[test]
    fn index_forms_follow_names_and_classify_each_entry() {
        let c = case(
            "    for g in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=2):
                rows = local.index
                acc = acc + x_block[rows, :, :].float().sum(dim=0)
                acc = acc + x_block[local.index + 0, :, :].float().sum(dim=0)
            if live >= 3:
                acc = acc + x_block[hl.arange(live - 3, live), :, :].float().sum(dim=0)
            acc = acc + x_block[1, :, :] + x_block[1:3, :, :].sum(dim=0)
            acc = acc + x_block.reshape(2, 2, 2, 128)[0, 0, :, :]
        out[g, :, :] = acc",
        );
        let forms: Vec<&str> = index_forms(&c).iter().map(|f| f.name()).collect();
        assert_eq!(
            forms,
            [
                "int",
                "static-slice",
                "tile-index",
                "tile-index-plus-zero",
                "tail-arange",
                "named-index",
                "multiple-narrowing",
                "of-view"
            ]
        );
    }

    /// The forms the coverage table and the signature once named differently: offsets of
    /// `t.index` in any spelling are one form, and a symbolic iota that is not a tail run is
    /// neither static nor a tail.
    #[test]
    fn one_classifier_names_offsets_and_iotas_one_way() {
        let c = case(
            "    for g in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[local.index + -1, :, :].float().sum(dim=0)
                acc = acc + x_block[local.index - 1, :, :].float().sum(dim=0)
                acc = acc + x_block[1 + local.index, :, :].float().sum(dim=0)
            acc = acc + x_block[hl.arange(outer.begin, outer.begin + 2), :, :].sum(dim=0)
        out[g, :, :] = acc",
        );
        let forms: Vec<&str> = index_forms(&c).iter().map(|f| f.name()).collect();
        assert_eq!(forms, ["tile-index-offset", "dynamic-arange"]);
    }

    /// A format-4 index recorded forms in the old signature dialect: on load they are the
    /// case's forms now, under a new key, the old key kept as an alias.
    #[test]
    fn buckets_of_format_4_take_the_forms_of_their_cases() {
        let c = case(
            "    for g in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[local.index - 1, :, :].float().sum(dim=0)
        out[g, :, :] = acc",
        );
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("0001-mismatch-helion-pallas")).unwrap();
        std::fs::write(
            t.path().join("0001-mismatch-helion-pallas/case.json"),
            serde_json::to_string(&c).unwrap(),
        )
        .unwrap();
        let old_key = "mismatch/helion-pallas/values/fori_loop/tile-index+k";
        let sig = serde_json::json!({"outcome": "mismatch", "engine": "helion-pallas",
            "cause": "values", "loop_type": "fori_loop", "forms": ["tile-index+k", "none"]});
        let cost = serde_json::to_value(CostRecord::default()).unwrap();
        let file = serde_json::json!({"format": 4, "buckets": {old_key: {"key": old_key,
            "signature": sig, "count": 2, "dir": "0001-mismatch-helion-pallas", "cost": cost}}});
        std::fs::write(t.path().join(BUCKETS_FILE), file.to_string()).unwrap();
        let b = Buckets::load(t.path()).unwrap();
        let new_key = "mismatch/helion-pallas/values/fori_loop/tile-index-offset";
        assert_eq!(b.buckets.keys().collect::<Vec<_>>(), [new_key]);
        let bucket = &b.buckets[new_key];
        assert_eq!(bucket.count, 2);
        assert!(bucket.aliases.contains(old_key), "{bucket:?}");
        assert_eq!(b.find(old_key).map(|b| b.key.as_str()), Some(new_key));
        // Without its case, the old names are read through the aliases.
        std::fs::remove_dir_all(t.path().join("0001-mismatch-helion-pallas")).unwrap();
        std::fs::write(t.path().join(BUCKETS_FILE), file.to_string()).unwrap();
        let b = Buckets::load(t.path()).unwrap();
        let forms: Vec<&str> = b
            .buckets
            .values()
            .next()
            .unwrap()
            .signature
            .forms
            .iter()
            .map(|f| f.name())
            .collect();
        assert_eq!(forms, ["tile-index-offset", "new-axis"]);
    }

    #[test]
    fn holds_for_allows_fewer_forms_only() {
        let mut a = Signature {
            outcome: fuzz::outcome::Outcome::Mismatch,
            engine: Some("helion-pallas".parse().expect("an engine")),
            cause: Some("values".into()),
            loop_type: LoopType::from_name("fori_loop"),
            forms: [IndexForm::TileIndex, IndexForm::Int].into_iter().collect(),
            decisions: Decisions::new(),
            ablated: Decisions::new(),
        };
        assert_eq!(
            a.key(),
            "mismatch/helion-pallas/values/fori_loop/int+tile-index"
        );
        let mut b = a.clone();
        b.forms.remove(&IndexForm::Int);
        assert!(a.holds_for(&b));
        assert!(!b.holds_for(&a));
        b.engine = Some("helion-tpu-lower".parse().expect("an engine"));
        assert!(!a.holds_for(&b));
        a.forms.clear();
        assert_eq!(a.key(), "mismatch/helion-pallas/values/fori_loop/-");
        assert_eq!(a.slug(), "mismatch-helion-pallas");
    }

    #[test]
    fn a_helion_finding_may_move_to_the_canonical_loop_type_only() {
        let a = Signature {
            outcome: fuzz::outcome::Outcome::Mismatch,
            engine: Some("helion-pallas".parse().expect("an engine")),
            cause: Some("poison".into()),
            loop_type: LoopType::from_name("emit_pipeline"),
            forms: BTreeSet::new(),
            decisions: Decisions::new(),
            ablated: Decisions::new(),
        };
        let mut b = a.clone();
        b.loop_type = Some(reducer::CANONICAL_LOOP_TYPE);
        assert!(a.holds_for(&b));
        assert!(!b.holds_for(&a), "never away from the canonical loop type");
        b.loop_type = Some(LoopType::Unroll);
        assert!(!a.holds_for(&b));
    }

    #[test]
    fn helion_eager_findings_do_not_key_on_the_loop_type() {
        // Eager mode never reads `pallas_loop_type`: one tile.count bug of its ref mode under
        // three loop types filed three buckets in a 30-minute campaign.
        let key = |loop_type: &str| {
            let mut c = case(
                "    for tile in hl.tile(x.size(0), block_size=1):\n        out[tile, :] = x[tile, :]\n",
            );
            c.config.loop_type = Some(match loop_type {
                "unroll" => lang::ir::LoopType::Unroll,
                _ => lang::ir::LoopType::EmitPipeline,
            });
            let mut report = fuzz::check::check_case(&c, &[], &Default::default());
            report.outcome = Outcome::Mismatch;
            report.decided_by = Some(fuzz::engines::EngineId::Worker(
                tpu_runner::Mode::HelionEager,
            ));
            signature(&c, &report)
        };
        let (a, b) = (key("unroll"), key("emit_pipeline"));
        assert_eq!(a.loop_type, None);
        assert_eq!(a.key(), b.key());
        // And the reducer may move such a finding to any loop type.
        assert!(
            a.loop_type_holds(LoopType::from_name("unroll"))
                && a.loop_type_holds(LoopType::from_name("fori_loop"))
        );
    }

    #[test]
    fn decisions_key_our_code_and_may_only_shrink_or_move_to_the_canonical_loop() {
        use lang::ir::LoopType;
        let run = Decision::Run {
            kind: SelectorKind::Tile,
            mask: true,
            squeeze: false,
        };
        let set = |ds: &[Decision]| ds.iter().copied().collect::<Decisions>();
        let finding = Signature {
            outcome: fuzz::outcome::Outcome::Mismatch,
            engine: Some("pallas-sim".parse().expect("an engine")),
            cause: Some("values".into()),
            loop_type: None,
            forms: BTreeSet::new(),
            decisions: set(&[
                Decision::Loop(LoopType::EmitPipeline),
                Decision::ResidentLoad,
                Decision::ValueLoad,
                run,
            ]),
            ablated: Decisions::new(),
        };
        assert_eq!(
            finding.key(),
            "emitted/pallas-sim/loop=emit_pipeline+resident-load+value-load+run=tile.mask"
        );
        // The symptom is not the cause: the same decisions failing at trace time are one key.
        let traced = Signature {
            outcome: fuzz::outcome::Outcome::LoweringError,
            cause: Some("trace:TypeError".into()),
            ..finding.clone()
        };
        assert_eq!(traced.key(), finding.key());
        // ... but a reduction keeps the symptom it started from.
        assert!(!finding.holds_for(&traced));
        let with = |ds: &[Decision]| Signature {
            decisions: set(ds),
            ..finding.clone()
        };
        // Fewer decisions, and the canonical loop skeleton: still the finding.
        let canonical = Decision::Loop(reducer::CANONICAL_LOOP_TYPE);
        assert!(finding.holds_for(&with(&[canonical, Decision::ResidentLoad, run])));
        // A new decision, another non-canonical skeleton, or no compile: not the finding.
        assert!(!finding.holds_for(&with(&[canonical, Decision::StaticValue, run])));
        // A static run stands in for the tile run.
        let static_run = Decision::Run {
            kind: SelectorKind::Static,
            mask: false,
            squeeze: true,
        };
        assert!(finding.holds_for(&with(&[canonical, Decision::ResidentLoad, static_run])));
        assert!(!finding.holds_for(&with(&[Decision::Loop(LoopType::Unroll), run])));
        // No decision at all: the bug needs none of them.
        assert!(finding.holds_for(&with(&[])));
        // A kernel without device loops cannot gain one.
        let flat = with(&[Decision::ResidentLoad, run]);
        assert!(!flat.holds_for(&with(&[canonical, run])));
    }

    #[test]
    fn our_code_with_no_decision_keys_on_none_and_meets_its_cause_under_the_canonical_loop() {
        use lang::ir::LoopType;
        let c = case(
            "    for outer in hl.tile(1, 2, block_size=1):
        out[0, :, :] = outer.count",
        );
        let report = |engine: &str| {
            let mut r = fuzz::check::check_case(&c, &[], &Default::default());
            assert!(r.decisions.is_empty(), "{:?}", r.decisions);
            r.outcome = fuzz::outcome::Outcome::Mismatch;
            r.decided_by = Some(engine.parse().expect("an engine"));
            r
        };
        let ours = signature(&c, &report("pallas-sim"));
        assert!(ours.is_our_code());
        assert_eq!(ours.key(), "emitted/pallas-sim/-");
        assert_eq!(ours.loop_type, None);
        assert!(ours.forms.is_empty());
        // Helion's code still keys on its loop type and forms.
        let theirs = signature(&c, &report("helion-pallas"));
        assert!(!theirs.is_our_code());
        assert!(
            theirs.key().starts_with("mismatch/helion-pallas/"),
            "{}",
            theirs.key()
        );
        // The same cause reduced under an inner loop (the canonical skeleton) and with no
        // decision: either bucket absorbs the other.
        let looped = Signature {
            decisions: [Decision::Loop(LoopType::ForiLoop)].into_iter().collect(),
            ..ours.clone()
        };
        assert!(looped.subsumes(&ours));
        assert!(ours.subsumes(&looped));
        // A load is never transparent: a finding that needs one is another cause.
        let loaded = Signature {
            decisions: [Decision::ValueLoad].into_iter().collect(),
            ..ours.clone()
        };
        assert!(!ours.subsumes(&loaded));
        assert!(!ours.subsumes(&theirs));
    }

    #[test]
    fn a_format_5_index_keys_our_code_without_decisions_on_none() {
        let old_sig = Signature {
            outcome: fuzz::outcome::Outcome::Mismatch,
            engine: Some("pallas-sim".parse().expect("an engine")),
            cause: Some("values".into()),
            loop_type: LoopType::from_name("fori_loop"),
            forms: [IndexForm::TileBegin].into_iter().collect(),
            ..Default::default()
        };
        let old_key = "mismatch/pallas-sim/values/fori_loop/tile-begin".to_string();
        let bucket = Bucket {
            key: old_key.clone(),
            count: 3,
            ..bucket_of(&old_sig, "0001")
        };
        let old = Buckets {
            format: 5,
            buckets: [(old_key.clone(), bucket)].into_iter().collect(),
        };
        let b = written_and_loaded(&old);
        let keys: Vec<&str> = b.buckets.keys().map(String::as_str).collect();
        assert_eq!(keys, ["emitted/pallas-sim/-"]);
        assert_eq!(b.find(&old_key).map(|x| x.count), Some(3));
    }

    #[test]
    fn a_canonical_bucket_absorbs_its_cause_under_another_skeleton_through_ablated_runs_only() {
        use lang::ir::LoopType;
        let run = Decision::Run {
            kind: SelectorKind::Tail,
            mask: false,
            squeeze: false,
        };
        let sig = |ds: &[Decision], ablated: &[Decision]| Signature {
            outcome: fuzz::outcome::Outcome::Mismatch,
            engine: Some("pallas-sim".parse().expect("an engine")),
            cause: Some("values".into()),
            decisions: ds.iter().copied().collect(),
            ablated: ablated.iter().copied().collect(),
            ..Default::default()
        };
        let core = [Decision::ResidentLoad, Decision::Materialize];
        let canonical = Decision::Loop(reducer::CANONICAL_LOOP_TYPE);
        let bucket = sig(&[canonical, core[0], core[1]], &[]);
        // Another skeleton, or none, with a run its ablation showed unneeded: absorbed.
        let piped = sig(
            &[
                Decision::Loop(LoopType::EmitPipeline),
                core[0],
                core[1],
                run,
            ],
            &[run],
        );
        let flat = sig(&[core[0], core[1], run], &[run]);
        assert!(bucket.subsumes(&piped) && bucket.subsumes(&flat));
        // A run the finding needs is another cause.
        assert!(!bucket.subsumes(&sig(&[core[0], core[1], run], &[])));
        // A bucket under a non-canonical skeleton needs it.
        let unrolled = sig(&[Decision::Loop(LoopType::Unroll), core[0], core[1]], &[]);
        assert!(!unrolled.subsumes(&flat));
    }

    #[test]
    fn a_bucket_absorbs_findings_that_show_its_cause_through_views_only() {
        use compiler::decisions::ViewKind;
        let run = Decision::Run {
            kind: SelectorKind::Tail,
            mask: false,
            squeeze: false,
        };
        let sig = |ds: &[Decision]| Signature {
            outcome: fuzz::outcome::Outcome::Mismatch,
            engine: Some("pallas-sim".parse().expect("an engine")),
            cause: Some("values".into()),
            decisions: ds.iter().copied().collect(),
            ..Default::default()
        };
        let plain = sig(&[Decision::ResidentLoad, run]);
        let viewed = sig(&[
            Decision::ResidentLoad,
            run,
            Decision::RefView(ViewKind::Unsqueeze),
        ]);
        let other_run = sig(&[Decision::ResidentLoad, run, Decision::ValueLoad]);
        assert!(plain.subsumes(&viewed));
        assert!(!viewed.subsumes(&plain) && !plain.subsumes(&plain));
        assert!(!plain.subsumes(&other_run), "a load is never transparent");
        let mut b = Buckets::default();
        b.record(&viewed, CostRecord::default(), "0001");
        b.record(&other_run, CostRecord::default(), "0002");
        assert_eq!(b.converged(&plain), None);
        b.record(&plain, CostRecord::default(), "0003");
        assert_eq!(b.absorb_subsumed(&plain.key()), vec!["0001".to_string()]);
        assert_eq!(b.buckets.len(), 2);
        assert_eq!(b.buckets[&plain.key()].count, 2);
        assert_eq!(b.converged(&viewed), Some(plain.key()));
    }

    #[test]
    fn panic_sites_drop_line_numbers_and_values() {
        let crash = "panicked at compiler/src/lower/expr.rs:120:9:\nindex out of bounds: the len is 3 but the index is 7\nstack backtrace:";
        assert_eq!(
            panic_site(crash),
            "compiler/src/lower/expr.rs: index out of bounds: the len is N but the index is N"
        );
    }

    #[test]
    fn buckets_count_duplicates_and_merge_on_rekey() {
        let sig = |forms: &[IndexForm]| Signature {
            outcome: fuzz::outcome::Outcome::Mismatch,
            engine: Some("helion-pallas".parse().expect("an engine")),
            cause: Some("values".into()),
            loop_type: LoopType::from_name("unroll"),
            forms: forms.iter().copied().collect(),
            decisions: Decisions::new(),
            ablated: Decisions::new(),
        };
        let c = |n| CostRecord {
            statements: n,
            loads: 0,
            dynamic_indices: 0,
            exprs: 0,
            input_elements: 0,
            input_complexity: 0,
            block_sizes: 0,
            literals: 0,
            loop_type: 0,
        };
        let mut b = Buckets::default();
        let raw = sig(&[IndexForm::Int, IndexForm::TileIndex]);
        assert_eq!(b.record(&raw, c(10), "0001"), Recorded::New);
        assert_eq!(
            b.record(&raw, c(8), "ignored"),
            Recorded::Known {
                dir: "0001".into(),
                smaller: true
            }
        );
        let reduced = sig(&[IndexForm::TileIndex]);
        let r = b.rekey(&raw.key(), &reduced, c(3)).unwrap();
        assert_eq!(r.dir, "0001");
        // The raw key is now an alias: the same raw finding is a known bucket.
        assert!(matches!(
            b.record(&raw, c(20), "x"),
            Recorded::Known { smaller: false, .. }
        ));
        assert_eq!(b.buckets.len(), 1);
        assert_eq!(b.total(), 3);
        // A second raw bucket reducing to the same signature merges into the first.
        let raw2 = sig(&[IndexForm::TileIndex, IndexForm::StaticSlice]);
        assert_eq!(b.record(&raw2, c(9), "0002"), Recorded::New);
        let r = b.rekey(&raw2.key(), &reduced, c(4)).unwrap();
        assert_eq!(r.merged_away.as_deref(), Some("0002"));
        assert_eq!(b.buckets.len(), 1);
        assert_eq!(b.total(), 4);
        let t = tempfile::tempdir().unwrap();
        b.save(t.path()).unwrap();
        assert_eq!(Buckets::load(t.path()).unwrap().buckets, b.buckets);
    }

    #[test]
    fn a_format_2_index_is_rekeyed_on_read_merging_symptoms_of_one_decision_set() {
        let decisions: Decisions = [Decision::ResidentLoad, Decision::Materialize]
            .into_iter()
            .collect();
        let sig = |outcome: &str, cause: &str| Signature {
            outcome: fuzz::outcome::Outcome::from_name(outcome).expect("an outcome"),
            engine: Some("pallas-sim".parse().expect("an engine")),
            cause: Some(cause.into()),
            decisions: decisions.clone(),
            ..Default::default()
        };
        let (values, traced) = (
            sig("mismatch", "values"),
            sig("lowering-error", "trace:TypeError"),
        );
        let bucket = |s: &Signature, old_key: &str, count: u64, dir: &str, exprs: usize| Bucket {
            key: old_key.into(),
            signature: s.clone(),
            count,
            dir: dir.into(),
            cost: CostRecord {
                exprs,
                ..Default::default()
            },
            aliases: BTreeSet::new(),
        };
        // Format 2 put the symptom in the key.
        let (k1, k2) = (
            "mismatch/pallas-sim/values/resident-load+materialize",
            "lowering-error/pallas-sim/trace:TypeError/resident-load+materialize",
        );
        let old = Buckets {
            format: 2,
            buckets: [
                (k1.to_string(), bucket(&values, k1, 3, "0001", 20)),
                (k2.to_string(), bucket(&traced, k2, 2, "0002", 9)),
            ]
            .into_iter()
            .collect(),
        };
        let t = tempfile::tempdir().unwrap();
        let text = serde_json::to_string(&old).unwrap();
        std::fs::write(t.path().join(BUCKETS_FILE), text).unwrap();
        let b = Buckets::load(t.path()).unwrap();
        assert_eq!(b.format, BUCKETS_FORMAT);
        assert_eq!(b.buckets.len(), 1, "{:?}", b.buckets.keys());
        let only = &b.buckets["emitted/pallas-sim/resident-load+materialize"];
        assert_eq!(
            (only.count, only.dir.as_str()),
            (5, "0002"),
            "the cheaper case stays"
        );
        assert!(only.aliases.contains(k1) && only.aliases.contains(k2));
        // Both old keys still find it.
        assert_eq!(b.find(k1).map(|x| x.dir.as_str()), Some("0002"));
    }

    #[test]
    fn a_format_3_index_names_reference_kinds_by_id_and_leaves_exception_classes() {
        let sig = |outcome: &str, cause: &str| Signature {
            outcome: fuzz::outcome::Outcome::from_name(outcome).expect("an outcome"),
            engine: Some("helion-pallas".parse().expect("an engine")),
            cause: Some(cause.into()),
            ..Default::default()
        };
        // Helion ran a case whose index is out of range (the reference's kind, old spelling),
        // and Helion raised TypeError (an exception class, which is no reference kind).
        let (accepts, raised) = (
            sig("helion-accepts-invalid", "IndexOutOfRange"),
            sig("helion-crash", "TypeError"),
        );
        let bucket = bucket_of;
        let old = Buckets {
            format: 3,
            buckets: [
                (accepts.key(), bucket(&accepts, "0001")),
                (raised.key(), bucket(&raised, "0002")),
            ]
            .into_iter()
            .collect(),
        };
        let b = written_and_loaded(&old);
        let causes: BTreeSet<Option<&str>> = b
            .buckets
            .values()
            .map(|x| x.signature.cause.as_deref())
            .collect();
        assert_eq!(
            causes,
            [Some("index-out-of-range"), Some("TypeError")]
                .into_iter()
                .collect()
        );
        // The old key still finds the migrated bucket.
        assert_eq!(b.find(&accepts.key()).map(|x| x.dir.as_str()), Some("0001"));
    }
}
