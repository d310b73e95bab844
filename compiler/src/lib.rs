//! The model of Helion's Pallas lowering of narrowing subscripts on resident VMEM Refs.
//!
//! It owns the kernel IR ([`ir`]), the case-script frontend ([`frontend`]) and renderer
//! ([`render`]), the trace-time validator ([`validate`]), the resident-Ref planner and the
//! Pallas codegen: the system under test.

pub mod compile;
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
