//! Minimized reproducers: the reducer ([`reduce`]) that shrinks a finding's case while its
//! signature holds, and (with the corpus format and replay) the regression corpus.

pub mod entry;
pub mod finding;
pub mod fsio;
pub mod hunt;
pub mod json;
pub mod minimize;
pub mod reduce;
pub mod replay;
pub mod report;
pub mod repro;
pub mod signature;
pub mod sink;
pub mod spec;
