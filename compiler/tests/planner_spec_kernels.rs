//! The planner on every spec kernel (`corpus/spec-kernels/*.py`) whose header states a verdict:
//! trace-time validation, the bind-time checks, then `plan_case`, must give that verdict (class
//! and rule id).

#[path = "planner_helpers.rs"]
mod helpers;

use corpus::expectations::{ExpectedVerdict, load_spec_kernels};
use pallas_diff_compiler::verdict::Rule;

/// Rules raised by codegen (loop lowering), after the planner accepted the kernel: for these the
/// planner alone must lower (spec §2.11 "codegen, other").
const CODEGEN_RULES: &[Rule] = &[Rule::ConfigUnrollDynamicBounds];

/// Kernels whose verdict depends on a part the planner does not own, with the reason; the
/// planner must still refuse them (with any rule).
const KNOWN_GAPS: &[(&str, &str)] = &[(
    "s1_10_2d_tensor_index",
    "validate.rs does not refuse a 2-D tensor index (TraceUnsupportedIndex); types::infer raises first",
)];

#[test]
fn planner_matches_every_spec_kernel_verdict() {
    let kernels = load_spec_kernels().expect("spec kernels load");
    let mut mismatches = Vec::new();
    let mut checked = 0;
    for k in &kernels {
        let Some(expected) = k.expectations.verdict else {
            continue;
        };
        checked += 1;
        let got = helpers::verdict(&k.case);
        if KNOWN_GAPS.iter().any(|(n, _)| *n == k.name()) {
            assert!(
                got.is_err(),
                "{}: a known gap must still be refused",
                k.name()
            );
            continue;
        }
        let ok = match (&expected, &got) {
            (ExpectedVerdict::Lowered, Ok(_)) => true,
            (ExpectedVerdict::Rejected { rule, .. }, Ok(_)) => CODEGEN_RULES.contains(rule),
            (ExpectedVerdict::Rejected { class, rule }, Err(r)) => {
                r.rule == *rule && r.class() == *class
            }
            _ => false,
        };
        if !ok {
            let got = match &got {
                Ok(_) => "lowered".to_string(),
                Err(r) => format!("rejected {} {} ({})", r.class(), r.rule, r.message),
            };
            mismatches.push(format!("{}: expected {expected:?}, got {got}", k.name()));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {checked} spec kernels disagree:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
