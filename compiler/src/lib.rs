//! The model of Helion's Pallas lowering of narrowing subscripts on resident VMEM Refs.
//!
//! It owns the kernel IR ([`ir`]), the case-script frontend ([`frontend`]) and renderer
//! ([`render`]), the trace-time validator ([`validate`]), the resident-Ref planner and the
//! Pallas codegen: the system under test.

pub mod compile;
pub mod decisions;
pub mod expectations;
pub mod faults;
pub mod frontend;
pub mod ir;
pub mod lower;
pub mod pallas;
pub mod plan;
pub mod render;
pub mod sim;
pub mod tensor;
pub mod validate;
pub mod verdict;

/// The Helion release this model of the lowering targets. Where that release departs from the
/// upstream change's merged state (`shared/spec/helion-1.5.1-deltas.md`), the model follows the
/// release and the rule or function cites the delta id (`D-1.5.1-NN`); where the release has a
/// bug (a wrong value, a crash), the model stays correct and the difference is a Helion finding.
/// Modelled so far: D-1.5.1-07, -08, -09 (block sizes) and -10 (the default loop type); the
/// others are open (issue 18).
pub const HELION_VERSION: &str = "1.5.1";
