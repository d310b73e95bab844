//! Minimized reproducers and the regression corpus: everything that turns a finding into
//! something small, unique and ready to file, and keeps it replaying in CI.
//!
//! * [`reduce`]: the reducer (delta debugging on the IR, budgeted, deterministic);
//! * [`minimize`]: the reduction driver, [`minimize::reduce_finding`], whose predicate is "the
//!   finding's signature still holds", running only the engine that saw the finding;
//! * [`signature`]: finding signatures (outcome, engine, cause, loop type, index forms) and
//!   their buckets (`buckets.json`);
//! * [`finding`]: finding directories (`case.json`, `case.py`, `emitted.py`, `log.txt`,
//!   `meta.json`), written atomically;
//! * [`sink`]: a campaign's findings directory (dedup, reduction, the JAX cross-check of
//!   in-process findings, one directory per bucket);
//! * [`shard`]: a findings directory's shard contract (`shard.json`: each campaign run's seeds,
//!   generator config, engines, codegen options and versions), written by `pallas-diff fuzz`;
//! * [`merge`]: the findings directories of a sharded campaign merged into one by signature
//!   (`pallas-diff merge`), with its `merge.json`;
//! * [`entry`]: the corpus format (`corpus/cases/<id>-<slug>.json` and `.py`) and
//!   [`entry::Corpus::add_finding`];
//! * [`replay`]: one trial per entry × engine (or per finding of a findings directory), and
//!   bless;
//! * [`promote`]: a finding into the corpus, its expectations blessed from a run now
//!   (`pallas-diff corpus add`);
//! * [`spec`]: seeding the corpus from the spec kernels, cross-checked against their headers;
//! * [`report`] and [`repro`]: Markdown bug reports and standalone `repro.py` files;
//! * [`hunt`]: how fast campaigns find each injected historical defect (`pallas-diff hunt`);
//! * [`step_summary`]: a campaign's summary as Markdown, for `$GITHUB_STEP_SUMMARY`;
//! * [`junit`]: JUnit XML of a replay and of a hunt, for CI systems' test reports;
//! * [`fsio`] and [`json`]: atomic writes and the JSON layout of every file written here.

pub mod entry;
pub mod expectations;
pub mod finding;
pub mod fsio;
pub mod hunt;
pub mod json;
pub mod junit;
pub mod merge;
pub mod minimize;
pub mod promote;
pub mod reduce;
pub mod regression;
pub mod replay;
pub mod report;
pub mod repro;
pub mod shard;
pub mod signature;
pub mod sink;
pub mod spec;
pub mod step_summary;
