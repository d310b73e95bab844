//! Mutation analysis of real Helion: how much of its Pallas lowering the harness guards.
//!
//! This crate owns `pallas-diff mutants`: single-site mutants of Helion source files made with
//! mutmut 3's operators ([`mutant`], `python/mutant_enumerate.py`), each applied as an overlay
//! on a Helion worker's import path by a fork server that imported torch and JAX once
//! ([`server`], `python/mutant_zygote.py`); the suites that try to kill them, each case with
//! its baseline observation on unmutated Helion and the Helion lines it executes
//! ([`suite`], coverage.py in the worker); the run of one mutant against the cases that cover
//! it, cheapest first, to its first kill ([`run`]); the survivors shown equivalent by reading
//! Helion, left out of the score ([`review`], `reviewed-equivalent.json`); and what a run
//! writes and prints ([`report`]: `mutants.json`, the summary by file and operator, survivors'
//! diffs, JUnit).

pub mod mutant;
pub mod observe;
pub mod report;
pub mod review;
pub mod run;
pub mod server;
pub mod suite;

pub use mutant::{Mutant, MutantError, SourceFile};
pub use observe::Observation;
pub use review::Review;
pub use suite::{SuiteCase, SuiteId};
