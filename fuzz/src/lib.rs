//! Fuzzing for pallas-diff: the generators of well-formed cases ([`generators`]) that the
//! differential checks, engines and campaigns are built on.

pub mod generators;

pub mod campaign;
pub mod check;
pub mod checks;
pub mod compare;
pub mod engines;
pub mod exception;
pub mod input_sets;
pub mod known_issues;
pub mod outcome;
