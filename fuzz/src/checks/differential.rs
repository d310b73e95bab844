//! Differential: the reference vs the in-process Pallas executor on a generated case. A
//! disagreement (or a compiler crash, or an executor error on a lowered case) is a finding.

use crate::check::{Depth, check_case_to};
use crate::engines::{self, Engine};
use crate::generators::{GenConfig, generate};
use arbitrary::Unstructured;
use compiler::compile::CodegenOptions;
use std::sync::OnceLock;

fn in_process() -> &'static [Box<dyn Engine>] {
    static ENGINES: OnceLock<Vec<Box<dyn Engine>>> = OnceLock::new();
    ENGINES.get_or_init(|| {
        engines::build(&engines::IN_PROCESS, None).expect("in-process engines need no pool")
    })
}

/// Checks one generated case; panics on a finding.
pub fn run(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    let config: GenConfig = u.arbitrary()?;
    let case = generate(u, &config.normalized())?;
    let report = check_case_to(
        Depth::FindingsOnly,
        &case,
        in_process(),
        &CodegenOptions::default(),
    );
    if report.outcome.is_finding() {
        panic!(
            "finding: {} ({:?})\n{}\n{}\n# emitted module:\n{}",
            report.outcome,
            report.decided_by,
            report.mismatch.map(|m| m.to_string()).unwrap_or_default(),
            lang::render::render_case(&case),
            report.emitted.as_deref().unwrap_or("(none)")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn smoke() {
        super::super::test_n_times(300, super::run);
    }
}
