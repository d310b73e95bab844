//! The life of a finding: from a disagreement a check reports to something small, unique and
//! ready to file. This crate owns how findings are keyed, bucketed, stored, reduced, merged and
//! reported; the regression corpus they are promoted into is `corpus`, the reducer they are
//! minimized with is `reducer`.
//!
//! * [`signature`]: finding signatures (outcome, engine, cause, loop type, index forms) and
//!   their buckets (`buckets.json`);
//! * [`finding`]: finding directories (`case.json`, `case.py`, `emitted.py`, `log.txt`,
//!   `meta.json`), written atomically;
//! * [`minimize`]: the reduction driver, [`minimize::reduce_finding`], whose predicate is "the
//!   finding's signature still holds", running only the engine that saw the finding, and the
//!   ablation of planner decisions;
//! * [`sink`]: a campaign's findings directory (dedup, reduction, the JAX cross-check of
//!   in-process findings, one directory per bucket);
//! * [`shard`]: a findings directory's shard contract (`shard.json`: each campaign run's seeds,
//!   generator config, engines, codegen options and versions), written by `pallas-diff fuzz`;
//! * [`merge`]: the findings directories of a sharded campaign merged into one by signature
//!   (`pallas-diff merge`), with its `merge.json` and the merged campaign records;
//! * [`regression`]: what a finding's case does on one Helion build, judged by its signature
//!   (`pallas-diff bisect`);
//! * [`report`] and [`repro`]: Markdown bug reports and standalone `repro.py` files, with the
//!   reference outputs they quote as [`tensor::NamedTensor`]s;
//! * [`step_summary`]: a campaign's summary as Markdown, for `$GITHUB_STEP_SUMMARY`;
//! * [`fsio`] and [`json`]: atomic writes and the JSON layout of every file written here and in
//!   the corpus.

pub mod finding;
pub mod fsio;
pub mod json;
pub mod merge;
pub mod minimize;
pub mod regression;
pub mod report;
pub mod repro;
pub mod shard;
pub mod signature;
pub mod sink;
pub mod step_summary;
pub mod tensor;
