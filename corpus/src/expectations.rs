//! Expectation headers of case scripts, and the spec-kernel corpus that carries them.
//!
//! This module owns the header format and the loader of `corpus/spec-kernels/*.py`. A header is
//! a run of Python comments at the top of a case script (Python ignores them):
//!
//! ```text
//! # pallas-diff: source spec §4 D5
//! # pallas-diff: verdict rejected BackendUnsupported selector.wider-than-block
//! # pallas-diff: output out all 2.0
//! ```
//!
//! Keys (each at most once, except `output`, once per output name):
//! * `source <free text>`: where the kernel comes from (spec section, upstream test);
//! * `verdict lowered` or `verdict rejected <ErrorClass> <rule-id>`: Helion's decision under the
//!   merged upstream rules (rule ids and classes of [`compiler::verdict`]; the class must be the
//!   rule's class);
//! * `output <name> all <v>` (every element equals `v`), `output <name> sum <v>` (the elements
//!   add up to `v`), `output <name> values <JSON list>` (the elements, row-major): the correct
//!   eager PyTorch value of the output `name` (a name in the kernel's `return`);
//! * `tolerance <atol>`: the absolute tolerance output comparisons use (bf16 rounding), in
//!   place of the comparison module's per-dtype policy (`fuzz::compare`);
//! * `invalid <reason>`: eager PyTorch itself refuses the case (no output is defined).
//!
//! Only the leading block of comment and blank lines is a header; a `# pallas-diff:` line after
//! the first line of code is an error, as is an unknown key, so a typo never silently drops an
//! expectation. Keys that are absent assert nothing.

use compiler::verdict::{ErrorClass, Rule};
use fuzz::compare::Tolerance;
use lang::frontend::{FrontendError, parse_case};
use lang::ir::Case;
use lang::tensor::Tensor;
use std::path::{Path, PathBuf};

/// The comment prefix that marks a header line (after `#` and optional spaces).
pub const HEADER_PREFIX: &str = "pallas-diff:";

/// The expectations a case script states about itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Expectations {
    /// `source`: where the kernel comes from.
    pub source: Option<String>,
    /// `verdict`: Helion's decision under the merged rules.
    pub verdict: Option<ExpectedVerdict>,
    /// `output` lines, in header order.
    pub outputs: Vec<ExpectedOutput>,
    /// `tolerance`: absolute tolerance of output comparisons.
    pub tolerance: Option<f64>,
    /// `invalid`: why eager PyTorch refuses the case.
    pub invalid: Option<String>,
}

impl Expectations {
    /// The expectation for output `name`, if the header states one.
    pub fn output(&self, name: &str) -> Option<&ExpectedOutput> {
        self.outputs.iter().find(|o| o.name == name)
    }
}

/// The expected verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpectedVerdict {
    /// Every narrowing subscript planned; codegen emits a module.
    Lowered,
    /// Refused by `rule`, raising `class` (always `rule.class()`).
    Rejected {
        /// Helion's error class.
        class: ErrorClass,
        /// The refusing rule.
        rule: Rule,
    },
}

/// The expected value of one output tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpectedOutput {
    /// The output's name in the kernel's `return` statement.
    pub name: String,
    /// What its elements must be.
    pub check: OutputCheck,
    /// 1-based line of the header line that states it.
    pub line: u32,
}

/// What an output's elements must be.
#[derive(Clone, Debug, PartialEq)]
pub enum OutputCheck {
    /// Every element equals the value.
    All(f64),
    /// The elements add up to the value.
    Sum(f64),
    /// The elements, row-major.
    Values(Vec<f64>),
}

impl ExpectedOutput {
    /// Checks `actual` against the expectation with the comparison module's policy
    /// ([`Tolerance::matches`]): the header's `tolerance` as an absolute tolerance when it states
    /// one ([`Expectations::tolerance`]), else the dtype's [`Tolerance::for_dtype`]. A `sum` is
    /// compared with `atol` times the element count (the terms' rounding adds up). Returns a
    /// description of the first mismatch.
    pub fn check(&self, actual: &Tensor, header_atol: Option<f64>) -> Result<(), String> {
        let tolerance = match header_atol {
            Some(atol) => Tolerance { atol, rtol: 0.0 },
            None => Tolerance::for_dtype(actual.dtype),
        };
        let actual = &actual.values;
        match &self.check {
            OutputCheck::All(v) => match actual.iter().position(|&a| !tolerance.matches(a, *v)) {
                None => Ok(()),
                Some(i) => Err(format!(
                    "output `{}`[{i}] = {} but every element should be {v}",
                    self.name, actual[i]
                )),
            },
            OutputCheck::Sum(v) => {
                let sum: f64 = actual.iter().sum();
                let summed = Tolerance {
                    atol: tolerance.atol * actual.len().max(1) as f64,
                    ..tolerance
                };
                if summed.matches(sum, *v) {
                    Ok(())
                } else {
                    Err(format!(
                        "output `{}` sums to {sum} but should sum to {v}",
                        self.name
                    ))
                }
            }
            OutputCheck::Values(vs) => {
                if vs.len() != actual.len() {
                    return Err(format!(
                        "output `{}` has {} elements but {} are expected",
                        self.name,
                        actual.len(),
                        vs.len()
                    ));
                }
                match actual
                    .iter()
                    .zip(vs)
                    .position(|(&a, &e)| !tolerance.matches(a, e))
                {
                    None => Ok(()),
                    Some(i) => Err(format!(
                        "output `{}`[{i}] = {} but should be {}",
                        self.name, actual[i], vs[i]
                    )),
                }
            }
        }
    }
}

/// A malformed expectation header.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("line {line}: {kind}")]
pub struct ExpectationError {
    /// 1-based line of the offending header line.
    pub line: u32,
    /// What is wrong.
    pub kind: ExpectationErrorKind,
}

/// What is wrong with a header line.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ExpectationErrorKind {
    /// A key outside `source`, `verdict`, `output`, `tolerance`, `invalid`.
    #[error("unknown key `{0}` (keys: source, verdict, output, tolerance, invalid)")]
    UnknownKey(String),
    /// `# pallas-diff:` with nothing after it.
    #[error("header line without a key")]
    MissingKey,
    /// A key without its value.
    #[error("`{0}` needs a value")]
    MissingValue(String),
    /// A single-valued key stated twice.
    #[error("`{0}` is stated twice")]
    DuplicateKey(String),
    /// Two `output` lines for one name.
    #[error("output `{0}` is stated twice")]
    DuplicateOutput(String),
    /// A `verdict` that is neither `lowered` nor `rejected <ErrorClass> <rule-id>`.
    #[error("verdict must be `lowered` or `rejected <ErrorClass> <rule-id>`, got `{0}`")]
    BadVerdict(String),
    /// An error class that is not one of Helion's.
    #[error("unknown error class `{0}` (a class some rule of `verdict::Rule` raises)")]
    UnknownErrorClass(String),
    /// A rule id that is not in the rule table.
    #[error("unknown rule id `{0}`")]
    UnknownRule(String),
    /// A rule stated with a class other than its own.
    #[error("rule `{rule}` raises {expected}, not {got}")]
    ClassMismatch {
        /// The rule id.
        rule: String,
        /// The rule's class.
        expected: ErrorClass,
        /// The class the header states.
        got: ErrorClass,
    },
    /// An `output` line that is not `<name> all|sum|values <value>`.
    #[error(
        "output must be `<name> all <v>`, `<name> sum <v>` or `<name> values <JSON list>`, got `{0}`"
    )]
    BadOutput(String),
    /// A number that does not parse (or a negative tolerance).
    #[error("`{0}` is not a valid number here")]
    BadNumber(String),
    /// `invalid` together with `output` lines: an invalid case has no defined output.
    #[error("`invalid` and `output` exclude each other: an invalid case has no defined output")]
    InvalidWithOutputs,
    /// A header line after the first line of code.
    #[error("`# pallas-diff:` line after the first line of code; headers belong at the top")]
    Misplaced,
}

/// Parses the expectation header of a case script's source.
pub fn parse_expectations(source: &str) -> Result<Expectations, ExpectationError> {
    let mut ex = Expectations::default();
    let mut in_header = true;
    let mut invalid_line = 0;
    let mut first_output_line = 0;
    for (i, raw) in source.lines().enumerate() {
        let line = i as u32 + 1;
        let err = |kind| ExpectationError { line, kind };
        let trimmed = raw.trim();
        let body = trimmed.strip_prefix('#').map(str::trim_start);
        let header = body.and_then(|b| b.strip_prefix(HEADER_PREFIX));
        let Some(rest) = header else {
            if !trimmed.is_empty() && body.is_none() {
                in_header = false;
            }
            continue;
        };
        if !in_header {
            return Err(err(ExpectationErrorKind::Misplaced));
        }
        let rest = rest.trim();
        let (key, value) = match rest.split_once(char::is_whitespace) {
            Some((k, v)) => (k, v.trim()),
            None => (rest, ""),
        };
        if key.is_empty() {
            return Err(err(ExpectationErrorKind::MissingKey));
        }
        if value.is_empty()
            && matches!(
                key,
                "source" | "verdict" | "output" | "tolerance" | "invalid"
            )
        {
            return Err(err(ExpectationErrorKind::MissingValue(key.to_string())));
        }
        let dup = |set: bool| {
            if set {
                Err(err(ExpectationErrorKind::DuplicateKey(key.to_string())))
            } else {
                Ok(())
            }
        };
        match key {
            "source" => {
                dup(ex.source.is_some())?;
                ex.source = Some(value.to_string());
            }
            "verdict" => {
                dup(ex.verdict.is_some())?;
                ex.verdict = Some(parse_verdict(value).map_err(err)?);
            }
            "tolerance" => {
                dup(ex.tolerance.is_some())?;
                let t = parse_number(value).map_err(err)?;
                if t < 0.0 {
                    return Err(err(ExpectationErrorKind::BadNumber(value.to_string())));
                }
                ex.tolerance = Some(t);
            }
            "invalid" => {
                dup(ex.invalid.is_some())?;
                ex.invalid = Some(value.to_string());
                invalid_line = line;
            }
            "output" => {
                let out = parse_output(value, line).map_err(err)?;
                if ex.output(&out.name).is_some() {
                    return Err(err(ExpectationErrorKind::DuplicateOutput(out.name)));
                }
                if first_output_line == 0 {
                    first_output_line = line;
                }
                ex.outputs.push(out);
            }
            other => return Err(err(ExpectationErrorKind::UnknownKey(other.to_string()))),
        }
    }
    if ex.invalid.is_some() && !ex.outputs.is_empty() {
        return Err(ExpectationError {
            line: invalid_line.max(first_output_line),
            kind: ExpectationErrorKind::InvalidWithOutputs,
        });
    }
    Ok(ex)
}

fn parse_verdict(value: &str) -> Result<ExpectedVerdict, ExpectationErrorKind> {
    let words: Vec<&str> = value.split_whitespace().collect();
    match words.as_slice() {
        ["lowered"] => Ok(ExpectedVerdict::Lowered),
        ["rejected", class, rule] => {
            let class = error_class(class)
                .ok_or_else(|| ExpectationErrorKind::UnknownErrorClass(class.to_string()))?;
            let rule_id = *rule;
            let rule = Rule::from_id(rule_id)
                .ok_or_else(|| ExpectationErrorKind::UnknownRule(rule_id.to_string()))?;
            if rule.class() != class {
                return Err(ExpectationErrorKind::ClassMismatch {
                    rule: rule_id.to_string(),
                    expected: rule.class(),
                    got: class,
                });
            }
            Ok(ExpectedVerdict::Rejected { class, rule })
        }
        _ => Err(ExpectationErrorKind::BadVerdict(value.to_string())),
    }
}

/// Helion's error class by its Python name (any class some rule of the table raises).
fn error_class(name: &str) -> Option<ErrorClass> {
    Rule::ALL
        .iter()
        .map(|r| r.class())
        .find(|c| c.name() == name)
}

fn parse_number(s: &str) -> Result<f64, ExpectationErrorKind> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(ExpectationErrorKind::BadNumber(s.to_string())),
    }
}

fn parse_output(value: &str, line: u32) -> Result<ExpectedOutput, ExpectationErrorKind> {
    let bad = || ExpectationErrorKind::BadOutput(value.to_string());
    let mut parts = value.splitn(3, char::is_whitespace);
    let (Some(name), Some(kind), Some(arg)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad());
    };
    let arg = arg.trim();
    let name_ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !name_ok || arg.is_empty() {
        return Err(bad());
    }
    let check = match kind {
        "all" => OutputCheck::All(parse_number(arg)?),
        "sum" => OutputCheck::Sum(parse_number(arg)?),
        "values" => {
            let vs: Vec<f64> = serde_json::from_str(arg)
                .map_err(|_| ExpectationErrorKind::BadNumber(arg.to_string()))?;
            OutputCheck::Values(vs)
        }
        _ => return Err(bad()),
    };
    Ok(ExpectedOutput {
        name: name.to_string(),
        check,
        line,
    })
}

/// One script of `corpus/spec-kernels`: its file, source, case and expectations.
#[derive(Clone, Debug)]
pub struct SpecKernel {
    /// Path of the script.
    pub path: PathBuf,
    /// Its text.
    pub source: String,
    /// The parsed case.
    pub case: Case,
    /// Its expectation header.
    pub expectations: Expectations,
}

impl SpecKernel {
    /// The file name without `.py` (e.g. `d5_bounded_slice_past_extent`).
    pub fn name(&self) -> String {
        self.path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Why the spec-kernel corpus could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SpecKernelError {
    /// The directory or a file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A script is not a well-formed case.
    #[error(transparent)]
    Frontend(#[from] FrontendError),
    /// A script's header is malformed.
    #[error("{path}:{error}")]
    Expectations {
        /// The script.
        path: PathBuf,
        /// The header error.
        error: ExpectationError,
    },
}

/// `corpus/spec-kernels` of this workspace (from this crate's `CARGO_MANIFEST_DIR`).
pub fn spec_kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("spec-kernels")
}

/// Loads one case script with its expectations.
pub fn load_spec_kernel(path: &Path) -> Result<SpecKernel, SpecKernelError> {
    let source = std::fs::read_to_string(path).map_err(|source| SpecKernelError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let case = parse_case(&source, &path.display().to_string())?;
    let expectations =
        parse_expectations(&source).map_err(|error| SpecKernelError::Expectations {
            path: path.to_path_buf(),
            error,
        })?;
    Ok(SpecKernel {
        path: path.to_path_buf(),
        source,
        case,
        expectations,
    })
}

/// Loads every `*.py` of [`spec_kernels_dir`], sorted by file name. The first script that does
/// not parse (as a case or in its header) is an error.
pub fn load_spec_kernels() -> Result<Vec<SpecKernel>, SpecKernelError> {
    let dir = spec_kernels_dir();
    let io = |source| SpecKernelError::Io {
        path: dir.clone(),
        source,
    };
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.extension().is_some_and(|e| e == "py") && path.is_file() {
            paths.push(path);
        }
    }
    paths.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    paths.iter().map(|p| load_spec_kernel(p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Expectations, ExpectationError> {
        parse_expectations(s)
    }

    fn kind(s: &str) -> (u32, ExpectationErrorKind) {
        let e = parse(s).unwrap_err();
        (e.line, e.kind)
    }

    #[test]
    fn full_header() {
        let ex = parse(
            "# pallas-diff: source spec §4 D5\n\
             # pallas-diff: verdict rejected BackendUnsupported selector.wider-than-block\n\
             # a free comment\n\
             \n\
             #pallas-diff:   output out all 2.0\n\
             # pallas-diff: output final sum -3\n\
             # pallas-diff: output idx values [1, 2.5, -4e2]\n\
             # pallas-diff: tolerance 1e-2\n\
             import torch\n",
        )
        .unwrap();
        assert_eq!(ex.source.as_deref(), Some("spec §4 D5"));
        assert_eq!(
            ex.verdict,
            Some(ExpectedVerdict::Rejected {
                class: ErrorClass::BackendUnsupported,
                rule: Rule::SelectorWiderThanBlock
            })
        );
        assert_eq!(ex.outputs.len(), 3);
        assert_eq!(
            ex.outputs[0],
            ExpectedOutput {
                name: "out".into(),
                check: OutputCheck::All(2.0),
                line: 5
            }
        );
        assert_eq!(ex.output("final").unwrap().check, OutputCheck::Sum(-3.0));
        assert_eq!(
            ex.output("idx").unwrap().check,
            OutputCheck::Values(vec![1.0, 2.5, -400.0])
        );
        assert_eq!(ex.tolerance, Some(0.01));
        assert_eq!(ex.invalid, None);
    }

    #[test]
    fn no_header_is_empty() {
        assert_eq!(
            parse("import torch\nx = 1\n").unwrap(),
            Expectations::default()
        );
        assert_eq!(parse("").unwrap(), Expectations::default());
    }

    #[test]
    fn lowered_and_invalid() {
        let ex = parse(
            "# pallas-diff: verdict lowered\n# pallas-diff: invalid index 7 is out of bounds\n",
        )
        .unwrap();
        assert_eq!(ex.verdict, Some(ExpectedVerdict::Lowered));
        assert_eq!(ex.invalid.as_deref(), Some("index 7 is out of bounds"));
    }

    #[test]
    fn every_rule_round_trips() {
        for &rule in Rule::ALL {
            let ex = parse(&format!(
                "# pallas-diff: verdict rejected {} {}\n",
                rule.class(),
                rule.id()
            ))
            .unwrap();
            assert_eq!(
                ex.verdict,
                Some(ExpectedVerdict::Rejected {
                    class: rule.class(),
                    rule
                })
            );
        }
    }

    #[test]
    fn errors_carry_lines() {
        assert_eq!(
            kind("# x\n# pallas-diff: colour red\n"),
            (2, ExpectationErrorKind::UnknownKey("colour".into()))
        );
        assert_eq!(
            kind("# pallas-diff:\n"),
            (1, ExpectationErrorKind::MissingKey)
        );
        assert_eq!(
            kind("# pallas-diff: source\n"),
            (1, ExpectationErrorKind::MissingValue("source".into()))
        );
        assert_eq!(
            kind("# pallas-diff: source a\n# pallas-diff: source b\n"),
            (2, ExpectationErrorKind::DuplicateKey("source".into()))
        );
        assert_eq!(
            kind("# pallas-diff: output out all 1\n# pallas-diff: output out sum 1\n"),
            (2, ExpectationErrorKind::DuplicateOutput("out".into()))
        );
        assert_eq!(
            kind("# pallas-diff: verdict maybe\n"),
            (1, ExpectationErrorKind::BadVerdict("maybe".into()))
        );
        assert_eq!(
            kind("# pallas-diff: verdict rejected Oops trace.negative-index\n"),
            (1, ExpectationErrorKind::UnknownErrorClass("Oops".into()))
        );
        assert_eq!(
            kind("# pallas-diff: verdict rejected BackendUnsupported selector.nope\n"),
            (1, ExpectationErrorKind::UnknownRule("selector.nope".into()))
        );
        assert_eq!(
            kind("# pallas-diff: verdict rejected BackendUnsupported trace.negative-index\n"),
            (
                1,
                ExpectationErrorKind::ClassMismatch {
                    rule: "trace.negative-index".into(),
                    expected: ErrorClass::InvalidIndexingType,
                    got: ErrorClass::BackendUnsupported,
                }
            )
        );
        assert_eq!(
            kind("# pallas-diff: output out\n"),
            (1, ExpectationErrorKind::BadOutput("out".into()))
        );
        assert_eq!(
            kind("# pallas-diff: output out most 1\n"),
            (1, ExpectationErrorKind::BadOutput("out most 1".into()))
        );
        assert_eq!(
            kind("# pallas-diff: output 1x all 1\n"),
            (1, ExpectationErrorKind::BadOutput("1x all 1".into()))
        );
        assert_eq!(
            kind("# pallas-diff: output out all two\n"),
            (1, ExpectationErrorKind::BadNumber("two".into()))
        );
        assert_eq!(
            kind("# pallas-diff: output out all nan\n"),
            (1, ExpectationErrorKind::BadNumber("nan".into()))
        );
        assert_eq!(
            kind("# pallas-diff: output out values [1,\n"),
            (1, ExpectationErrorKind::BadNumber("[1,".into()))
        );
        assert_eq!(
            kind("# pallas-diff: tolerance -1\n"),
            (1, ExpectationErrorKind::BadNumber("-1".into()))
        );
        assert_eq!(
            kind("# pallas-diff: output out all 1\n# pallas-diff: invalid no\n"),
            (2, ExpectationErrorKind::InvalidWithOutputs)
        );
        assert_eq!(
            kind("import torch\n# pallas-diff: source late\n"),
            (2, ExpectationErrorKind::Misplaced)
        );
    }

    #[test]
    fn error_display_names_the_line() {
        let e = parse("\n\n# pallas-diff: bogus 1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 3: unknown key `bogus` (keys: source, verdict, output, tolerance, invalid)"
        );
    }

    #[test]
    fn output_checks() {
        use lang::tensor::DType;
        let t = |dtype, values: &[f64]| Tensor::new(dtype, vec![values.len()], values.to_vec());
        let all = ExpectedOutput {
            name: "out".into(),
            check: OutputCheck::All(8.0),
            line: 1,
        };
        assert!(all.check(&t(DType::Int32, &[8.0, 8.0]), None).is_ok());
        assert!(
            all.check(&t(DType::Float32, &[8.0, 8.005]), Some(0.01))
                .is_ok()
        );
        // Without a header tolerance, float32's policy: 8.005 is far outside 1e-5 + 1e-5 * 8.
        assert!(all.check(&t(DType::Float32, &[8.0, 8.005]), None).is_err());
        assert!(all.check(&t(DType::Float32, &[8.0, 8.00001]), None).is_ok());
        assert!(
            all.check(&t(DType::Float32, &[8.0, 7.0]), Some(0.01))
                .unwrap_err()
                .contains("out`[1] = 7")
        );
        let sum = ExpectedOutput {
            name: "out".into(),
            check: OutputCheck::Sum(6.0),
            line: 1,
        };
        assert!(sum.check(&t(DType::Int32, &[1.0, 2.0, 3.0]), None).is_ok());
        assert!(sum.check(&t(DType::Int32, &[1.0, 2.0]), None).is_err());
        let vals = ExpectedOutput {
            name: "out".into(),
            check: OutputCheck::Values(vec![1.0, 2.0]),
            line: 1,
        };
        assert!(vals.check(&t(DType::Int32, &[1.0, 2.0]), None).is_ok());
        assert!(
            vals.check(&t(DType::Int32, &[1.0]), None)
                .unwrap_err()
                .contains("1 elements")
        );
        assert!(
            vals.check(&t(DType::Float32, &[1.0, 3.0]), Some(0.5))
                .is_err()
        );
        // NaN where a number is expected is a mismatch, as in the comparison module.
        assert!(
            vals.check(&t(DType::Float32, &[1.0, f64::NAN]), Some(0.5))
                .is_err()
        );
    }
}
