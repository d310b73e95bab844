//! The shard contract of a findings directory: `shard.json`, which `pallas-diff fuzz` writes
//! into its `--out` and `pallas-diff merge` ([`crate::merge`]) checks.
//!
//! A campaign is one *run*: case `i` of a run seeded `S` is generated from `case_seed(S, i)`,
//! for `i` in `0..cases` (the campaign takes indices from one counter and finishes every index
//! it takes, so the cases checked are exactly that range). A run's record is its [`SeedRange`]
//! and its [`Contract`]: what must be equal for the findings of two runs to be counted as one
//! campaign's (the generator config, the engine set, the codegen options and the versions of
//! everything that ran). A findings directory used by several campaigns records every run, in
//! order; [`ShardRecord::contract`] refuses one whose runs disagree, naming the field.
//!
//! The record is written when a run starts (with no case count: a campaign killed before its
//! end leaves a run whose range is open) and rewritten when it ends ([`ShardRun::finish`]),
//! atomically both times.

use crate::finding::{CodegenRecord, Versions};
use crate::fsio::{self, IoError};
use compiler::compile::CodegenOptions;
use fuzz::engines::EngineId;
use fuzz::generators::GenConfig;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The file name of the shard record in a findings directory.
pub const SHARD_FILE: &str = "shard.json";

/// The version of the `shard.json` format.
pub const SHARD_FORMAT: u32 = 1;

/// What must be equal for two runs' findings to be merged (module docs). The campaign's
/// confirmation mode is deliberately not part of it: it changes how many lowered cases JAX
/// samples, not what a finding means.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contract {
    /// The generator config every case was generated with.
    pub generator: GenConfig,
    /// The engines that ran, in [`EngineId::ALL`] order, each once.
    pub engines: Vec<EngineId>,
    /// The codegen options (poison padding, injected faults).
    pub codegen: CodegenRecord,
    /// This build, the model's Helion release, and the Python side's versions.
    pub versions: Versions,
}

impl Contract {
    /// The contract of a campaign that ran `engines` (in any order, repeats allowed).
    pub fn new(
        generator: &GenConfig,
        engines: &[EngineId],
        codegen: &CodegenOptions,
        versions: Versions,
    ) -> Contract {
        let mut engines = engines.to_vec();
        engines.sort();
        engines.dedup();
        Contract {
            generator: generator.clone(),
            engines,
            codegen: codegen.into(),
            versions,
        }
    }

    /// The first field (a dotted path, `versions.jax`, `generator.max-rank`) where `other`
    /// differs from this contract, with both values as JSON text; `None` when they are equal.
    pub fn difference(&self, other: &Contract) -> Option<FieldDifference> {
        let a = serde_json::to_value(self).ok()?;
        let b = serde_json::to_value(other).ok()?;
        first_difference(&a, &b, String::new())
    }
}

/// One field where two contracts differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDifference {
    /// The dotted path of the field.
    pub field: String,
    /// Its value in the first contract (JSON; `absent` when it has none).
    pub first: String,
    /// Its value in the second.
    pub second: String,
}

fn first_difference(a: &Value, b: &Value, path: String) -> Option<FieldDifference> {
    if a == b {
        return None;
    }
    let child = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    if let (Value::Object(x), Value::Object(y)) = (a, b) {
        let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            match (x.get(k), y.get(k)) {
                (Some(u), Some(v)) => {
                    if let Some(d) = first_difference(u, v, child(k)) {
                        return Some(d);
                    }
                }
                (u, v) => {
                    let show = |o: Option<&Value>| o.map_or("absent".to_string(), Value::to_string);
                    return Some(FieldDifference {
                        field: child(k),
                        first: show(u),
                        second: show(v),
                    });
                }
            }
        }
    }
    // Lists and scalars are compared whole: `engines: ["oracle"] vs ["oracle","pallas-sim"]`
    // says more than an index would.
    Some(FieldDifference {
        field: if path.is_empty() {
            "(root)".into()
        } else {
            path
        },
        first: a.to_string(),
        second: b.to_string(),
    })
}

/// The cases of one run: indices `0..cases` of the campaign seeded `seed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SeedRange {
    /// The campaign seed (`pallas-diff fuzz --seed`).
    pub seed: u64,
    /// How many cases ran; `None` while the run is going, or when it was killed before its end
    /// (its range is open: every index may have run).
    pub cases: Option<u64>,
}

impl SeedRange {
    /// Whether the two ranges share a case: one seed, and both ranges start at index 0.
    pub fn overlaps(&self, other: &SeedRange) -> bool {
        self.seed == other.seed && self.cases != Some(0) && other.cases != Some(0)
    }
}

impl std::fmt::Display for SeedRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.cases {
            Some(n) => write!(f, "seed {} cases 0..{n}", self.seed),
            None => write!(f, "seed {} cases 0.. (unfinished)", self.seed),
        }
    }
}

/// One campaign run into a findings directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    /// Its cases.
    pub seeds: SeedRange,
    /// Its contract.
    pub contract: Contract,
}

/// `shard.json`: every run of a findings directory, in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardRecord {
    /// [`SHARD_FORMAT`].
    pub format: u32,
    /// The runs.
    pub runs: Vec<Run>,
}

/// A shard or merge record that cannot be read, or a shard whose runs disagree.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    /// Reading or writing failed.
    #[error(transparent)]
    Io(#[from] IoError),
    /// Not a record of this kind.
    #[error("{}:{line}:{column}: not a {what}: {message}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// What it should be (`shard record`, `merge record`).
        what: &'static str,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A format version this build does not read.
    #[error("{}: format {found} is not supported (this build reads {supported})", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// The version found.
        found: u32,
        /// The version read.
        supported: u32,
    },
    /// A record with no run.
    #[error("{}: records no campaign run", path.display())]
    NoRun {
        /// The file.
        path: PathBuf,
    },
    /// Two runs of one findings directory were made under different contracts.
    #[error(
        "{}: its runs were made under different contracts: `{}` is {} in run {first_run} ({}) and {} in run {second_run} ({}); merge only findings directories each written by campaigns of one contract",
        path.display(), difference.field, difference.first, first_seeds, difference.second, second_seeds
    )]
    MixedRuns {
        /// The file.
        path: PathBuf,
        /// Where they differ (boxed: it is three strings, and errors travel in `Result`s).
        difference: Box<FieldDifference>,
        /// The first run's index (1-based).
        first_run: usize,
        /// Its seeds.
        first_seeds: SeedRange,
        /// The other run's index (1-based).
        second_run: usize,
        /// Its seeds.
        second_seeds: SeedRange,
    },
}

/// Reads a JSON record of type `T` whose `format` must be `supported`.
pub(crate) fn load_record<T: serde::de::DeserializeOwned>(
    path: &Path,
    what: &'static str,
    supported: u32,
    format_of: impl Fn(&T) -> u32,
) -> Result<T, ShardError> {
    let text = fsio::read_to_string(path)?;
    let record: T = serde_json::from_str(&text).map_err(|e| ShardError::Json {
        path: path.to_path_buf(),
        what,
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let found = format_of(&record);
    if found != supported {
        return Err(ShardError::Format {
            path: path.to_path_buf(),
            found,
            supported,
        });
    }
    Ok(record)
}

impl ShardRecord {
    /// Reads `<dir>/shard.json`; `None` when there is none.
    pub fn load(dir: &Path) -> Result<Option<ShardRecord>, ShardError> {
        let path = dir.join(SHARD_FILE);
        if !path.exists() {
            return Ok(None);
        }
        let record: ShardRecord =
            load_record(&path, "shard record", SHARD_FORMAT, |r: &ShardRecord| {
                r.format
            })?;
        if record.runs.is_empty() {
            return Err(ShardError::NoRun { path });
        }
        Ok(Some(record))
    }

    /// Writes `<dir>/shard.json` atomically.
    pub fn save(&self, dir: &Path) -> Result<(), ShardError> {
        let text = crate::json::to_string_ordered(self, &["format"]).expect("a record serializes");
        fsio::write_atomic(&dir.join(SHARD_FILE), text.as_bytes())?;
        Ok(())
    }

    /// The one contract of every run; `dir` names the file in the error when two runs differ.
    pub fn contract(&self, dir: &Path) -> Result<&Contract, ShardError> {
        let path = dir.join(SHARD_FILE);
        let first = self
            .runs
            .first()
            .ok_or_else(|| ShardError::NoRun { path: path.clone() })?;
        for (i, run) in self.runs.iter().enumerate().skip(1) {
            if let Some(difference) = first.contract.difference(&run.contract) {
                return Err(ShardError::MixedRuns {
                    path,
                    difference: Box::new(difference),
                    first_run: 1,
                    first_seeds: first.seeds,
                    second_run: i + 1,
                    second_seeds: run.seeds,
                });
            }
        }
        Ok(&first.contract)
    }

    /// Every run's seeds, in order.
    pub fn seeds(&self) -> Vec<SeedRange> {
        self.runs.iter().map(|r| r.seeds).collect()
    }
}

/// A run being recorded: [`ShardRun::begin`] at a campaign's start, [`ShardRun::finish`] at its
/// end.
#[derive(Debug)]
pub struct ShardRun {
    dir: PathBuf,
    record: ShardRecord,
}

impl ShardRun {
    /// Appends a run of `seed` under `contract` to `<dir>/shard.json` (created, with `dir`,
    /// when absent), with no case count yet.
    pub fn begin(dir: &Path, contract: Contract, seed: u64) -> Result<ShardRun, ShardError> {
        let mut record = ShardRecord::load(dir)?.unwrap_or(ShardRecord {
            format: SHARD_FORMAT,
            runs: Vec::new(),
        });
        record.runs.push(Run {
            seeds: SeedRange { seed, cases: None },
            contract,
        });
        record.save(dir)?;
        Ok(ShardRun {
            dir: dir.to_path_buf(),
            record,
        })
    }

    /// Records that the run checked cases `0..cases`.
    pub fn finish(mut self, cases: u64) -> Result<(), ShardError> {
        if let Some(run) = self.record.runs.last_mut() {
            run.seeds.cases = Some(cases);
        }
        self.record.save(&self.dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORACLE: EngineId = EngineId::Reference;
    const SIM: EngineId = EngineId::PallasSim;

    fn contract(engines: &[EngineId]) -> Contract {
        Contract::new(
            &GenConfig::default(),
            engines,
            &CodegenOptions::default(),
            Versions::this_build(),
        )
    }

    #[test]
    fn engines_are_sorted_once_each() {
        let c = contract(&[SIM, ORACLE, SIM]);
        assert_eq!(c.engines, vec![EngineId::Reference, EngineId::PallasSim]);
    }

    #[test]
    fn a_difference_names_the_dotted_field() {
        let a = contract(&[ORACLE]);
        assert_eq!(a.difference(&a.clone()), None);
        let mut b = a.clone();
        b.versions.jax = Some("0.9.9".into());
        let d = a.difference(&b).unwrap();
        assert_eq!(d.field, "versions.jax");
        assert_eq!((d.first.as_str(), d.second.as_str()), ("null", "\"0.9.9\""));
        let c = contract(&[ORACLE, SIM]);
        let d = a.difference(&c).unwrap();
        assert_eq!(d.field, "engines");
        assert_eq!(d.second, r#"["oracle","pallas-sim"]"#);
        let mut g = a.clone();
        g.generator.max_rows = a.generator.max_rows - 1;
        assert!(a.difference(&g).unwrap().field.starts_with("generator."));
    }

    #[test]
    fn shards_whose_jax_workers_compiled_with_other_xla_options_differ() {
        let mut a = contract(&[
            ORACLE,
            EngineId::Worker(tpu_runner::Mode::PallasTpuInterpret),
        ]);
        a.versions.xla_flags = Some("--xla_cpu_max_isa=AVX2".into());
        let mut b = a.clone();
        b.versions.xla_flags =
            Some("--xla_cpu_max_isa=AVX2 --xla_backend_optimization_level=0".into());
        let d = a.difference(&b).unwrap();
        assert_eq!(d.field, "versions.xla_flags");
    }

    #[test]
    fn runs_are_appended_and_finished_and_mixed_runs_refused() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("findings");
        let run = ShardRun::begin(&dir, contract(&[ORACLE]), 7).unwrap();
        let open = ShardRecord::load(&dir).unwrap().unwrap();
        assert_eq!(
            open.seeds(),
            vec![SeedRange {
                seed: 7,
                cases: None
            }]
        );
        run.finish(120).unwrap();
        ShardRun::begin(&dir, contract(&[ORACLE]), 8)
            .unwrap()
            .finish(5)
            .unwrap();
        let rec = ShardRecord::load(&dir).unwrap().unwrap();
        assert_eq!(rec.seeds()[0].cases, Some(120));
        assert_eq!(rec.seeds()[1].to_string(), "seed 8 cases 0..5");
        assert_eq!(rec.contract(&dir).unwrap(), &contract(&[ORACLE]));
        ShardRun::begin(&dir, contract(&[ORACLE, SIM]), 9).unwrap();
        let e = ShardRecord::load(&dir)
            .unwrap()
            .unwrap()
            .contract(&dir)
            .unwrap_err()
            .to_string();
        assert!(e.contains("shard.json") && e.contains("`engines`"), "{e}");
        assert!(
            e.contains("run 1 (seed 7 cases 0..120)") && e.contains("run 3"),
            "{e}"
        );
    }

    #[test]
    fn bad_records_name_the_file() {
        let t = tempfile::tempdir().unwrap();
        assert!(ShardRecord::load(t.path()).unwrap().is_none());
        std::fs::write(t.path().join(SHARD_FILE), "{\"format\": 1}").unwrap();
        let e = ShardRecord::load(t.path()).unwrap_err().to_string();
        assert!(
            e.contains("shard.json:1:") && e.contains("not a shard record"),
            "{e}"
        );
        std::fs::write(t.path().join(SHARD_FILE), "{\"format\": 99, \"runs\": []}").unwrap();
        let e = ShardRecord::load(t.path()).unwrap_err().to_string();
        assert!(e.contains("format 99 is not supported"), "{e}");
        std::fs::write(t.path().join(SHARD_FILE), "{\"format\": 1, \"runs\": []}").unwrap();
        let e = ShardRecord::load(t.path()).unwrap_err().to_string();
        assert!(e.contains("records no campaign run"), "{e}");
    }

    #[test]
    fn ranges_of_one_seed_overlap_unless_empty() {
        let r = |seed, cases| SeedRange { seed, cases };
        assert!(r(1, Some(10)).overlaps(&r(1, Some(3))));
        assert!(r(1, None).overlaps(&r(1, Some(3))));
        assert!(!r(1, Some(10)).overlaps(&r(2, Some(10))));
        assert!(!r(1, Some(0)).overlaps(&r(1, None)));
    }
}
