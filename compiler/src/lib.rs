//! The model of Helion's Pallas lowering of narrowing subscripts on resident VMEM Refs.
//!
//! It owns the kernel IR ([`ir`]), the case-script frontend and renderer, the trace-time
//! validator, the resident-Ref planner and the Pallas codegen: the system under test.

pub mod tensor;
