//! The spec-kernel corpus (`corpus/spec-kernels/*.py`) through the frontend: every script is a
//! case, its expectation header parses and is coherent with the kernel, and parse ∘ render is
//! the identity on it.

use corpus::expectations::{
    ExpectedVerdict, OutputCheck, SpecKernel, load_spec_kernels, spec_kernels_dir,
};
use lang::frontend::parse_case;
use lang::ir::{ExprKind, StmtKind};
use lang::render::render_case;

fn corpus() -> Vec<SpecKernel> {
    let kernels = load_spec_kernels().unwrap_or_else(|e| panic!("spec kernels do not load: {e}"));
    assert!(
        kernels.len() >= 60,
        "only {} spec kernels in {}",
        kernels.len(),
        spec_kernels_dir().display()
    );
    kernels
}

/// The names the kernel returns (`return out` / `return out, final`).
fn returned_names(k: &SpecKernel) -> Vec<String> {
    let mut names = Vec::new();
    for stmt in &k.case.kernel.body {
        if let StmtKind::Return(values) = &stmt.kind {
            for v in values {
                if let ExprKind::Name(n) = &v.kind {
                    names.push(n.clone());
                }
            }
        }
    }
    names
}

#[test]
fn every_script_parses_with_a_coherent_header() {
    for k in corpus() {
        let name = k.name();
        let ex = &k.expectations;
        assert!(ex.source.is_some(), "{name}: no `source`");
        assert!(ex.verdict.is_some(), "{name}: no `verdict`");
        let returned = returned_names(&k);
        for out in &ex.outputs {
            assert!(
                returned.contains(&out.name),
                "{name}: output `{}` is not returned (returns {returned:?})",
                out.name
            );
            match &out.check {
                OutputCheck::All(v) | OutputCheck::Sum(v) => assert!(v.is_finite(), "{name}"),
                OutputCheck::Values(vs) => assert!(!vs.is_empty(), "{name}: empty values"),
            }
        }
        assert!(
            ex.invalid.is_none() || ex.outputs.is_empty(),
            "{name}: invalid with outputs"
        );
    }
}

#[test]
fn parse_render_is_the_identity() {
    for k in corpus() {
        let path = k.path.display().to_string();
        let rendered = render_case(&k.case);
        let reparsed = parse_case(&rendered, &path)
            .unwrap_or_else(|e| panic!("{path}: rendered script does not parse: {e}\n{rendered}"));
        assert_eq!(
            reparsed.without_spans(),
            k.case.without_spans(),
            "{path}: parse(render(parse(s))) differs\n{rendered}"
        );
        assert_eq!(
            render_case(&reparsed),
            rendered,
            "{path}: render is not a fixed point"
        );
    }
}

#[test]
fn upstream_tests_and_spec_sections_are_covered() {
    let names: Vec<String> = corpus().iter().map(SpecKernel::name).collect();
    let has = |prefix: &str| names.iter().any(|n| n.starts_with(prefix));
    for test in [
        "test_resident_subview_names_unsupported_transform",
        "test_resident_subview_reports_incompatible_static_view",
        "test_resident_subview_recursive_failure_keeps_cause",
        "test_resident_subview_masked_boundary_is_structural",
        "test_resident_subview_scalar_fori_loop",
        "test_resident_subview_scalar_emit_pipeline",
        "test_resident_subview_static_unroll",
        "test_resident_subview_keeps_dma_prefetch",
        "test_resident_subview_tile_and_dynamic_runs",
        "test_resident_subview_nonuniform_tail_is_masked",
        "test_resident_subview_offset_tile_run",
        "test_resident_subview_constant_runs",
        "test_resident_subview_of_untiled_dimension",
        "test_resident_subview_composed_views",
        "test_resident_subview_materializes_before_incompatible_reshape",
        "test_resident_subview_index_through_control_flow",
        "test_resident_subview_config_dependent_eligibility",
        "test_resident_subview_rejects_shifted_live_extent",
        "test_resident_subview_names_the_blocking_consumer",
        "test_resident_subview_declines_when_source_is_written",
        "test_resident_subview_rejects_unsupported_selections",
        "test_resident_subview_rejects_negative_bounds",
        "test_resident_subview_plain_subscripts_unchanged",
        "test_tile_count_inside_fori_loop_unroll",
        "test_tile_count_inside_fori_loop_fori_loop",
        "s3_5_ex1",
        "s3_5_ex2",
        "s3_5_ex3",
        "s3_5_ex4",
        "s3_5_ex5",
        "d1_",
        "d2_",
        "d5_",
        "d6_",
        "d8_",
        "d9_",
        "d10_",
        "d12_",
        "d13_",
        "d14_",
        "s1_10_",
    ] {
        assert!(has(test), "no spec kernel for {test}");
    }
}

#[test]
fn both_verdicts_occur() {
    let kernels = corpus();
    let lowered = kernels
        .iter()
        .filter(|k| k.expectations.verdict == Some(ExpectedVerdict::Lowered))
        .count();
    let rejected = kernels
        .iter()
        .filter(|k| {
            matches!(
                k.expectations.verdict,
                Some(ExpectedVerdict::Rejected { .. })
            )
        })
        .count();
    assert!(
        lowered >= 20 && rejected >= 20,
        "{lowered} lowered, {rejected} rejected"
    );
}
