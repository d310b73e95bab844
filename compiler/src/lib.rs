//! The model of Helion's Pallas lowering of narrowing subscripts on resident VMEM Refs.
//!
//! The system under test: the trace-time validator ([`validate`]), the resident-Ref planner
//! ([`plan`]), the Pallas codegen ([`lower`]), the verdicts and rule table ([`verdict`]), the
//! planner's and codegen's decisions ([`decisions`]), the historical defects it can reintroduce
//! ([`faults`]) and the entry point that runs them in Helion's order ([`compile`]). It speaks the
//! vocabulary of `pallas-diff-lang` (IR, frontend, tensors, the Pallas AST) and owns none of it.

pub mod compile;
pub mod decisions;
pub mod faults;
pub mod lower;
pub mod plan;
pub mod validate;
pub mod verdict;

/// The Helion release this model of the lowering targets. Where that release departs from the
/// upstream change's merged state (`shared/spec/helion-1.5.1-deltas.md`), the model follows the
/// release and the rule or function cites the delta id (`D-1.5.1-NN`); where the release has a
/// bug (a wrong value, a crash), the model stays correct and the difference is a Helion finding.
/// Modelled so far: D-1.5.1-07, -08, -09 (block sizes) and -10 (the default loop type); the
/// others are open (issue 18).
pub const HELION_VERSION: &str = "1.5.1";
