//! parse ∘ render is the identity over generated IR (span-stripped): the issue-2 property, over
//! the default config, swarm configs, and the seeds the campaign driver uses.

use lang::frontend::parse_case;
use lang::ir::Case;
use lang::render::render_case;
use pallas_diff_fuzz::generators::{GenConfig, generate_from_seed, strategies};
use proptest::prelude::*;

/// The span-stripped case parsed back from the rendering of `case`, or why not.
fn round_trip(case: &Case) -> Result<(), String> {
    let text = render_case(case);
    let back = parse_case(&text, "generated.py").map_err(|e| format!("{e}\n{text}"))?;
    if back.without_spans() != case.without_spans() {
        return Err(format!(
            "parsed back to a different case\n{text}\n--- rendered again ---\n{}",
            render_case(&back)
        ));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn parse_render_is_identity(case in strategies::cases(GenConfig::default())) {
        prop_assert!(round_trip(&case).is_ok(), "{}", round_trip(&case).unwrap_err());
    }

    #[test]
    fn parse_render_is_identity_under_swarm_configs((_cfg, case) in strategies::swarm_cases()) {
        prop_assert!(round_trip(&case).is_ok(), "{}", round_trip(&case).unwrap_err());
    }
}

#[test]
fn seeded_cases_round_trip() {
    let cfg = GenConfig::default();
    for seed in 0..2000 {
        let case = generate_from_seed(seed, &cfg);
        if let Err(e) = round_trip(&case) {
            panic!("seed {seed}: {e}");
        }
    }
}

#[test]
fn a_mismatch_is_detected() {
    // The property can fail: a case whose IR the frontend would read differently.
    let mut case = generate_from_seed(7, &GenConfig::default());
    case.kernel.body.insert(
        0,
        lang::ir::Stmt::new(
            lang::ir::StmtKind::Assign {
                target: "k".into(),
                value: lang::ir::Expr::new(
                    lang::ir::ExprKind::Alloc {
                        kind: lang::ir::AllocKind::Zeros,
                        shape: lang::ir::AllocShape::Dims(vec![]),
                        dtype: None,
                    },
                    Default::default(),
                ),
            },
            Default::default(),
        ),
    );
    case.config.block_sizes.push(1);
    assert!(round_trip(&case).is_err());
}

#[test]
fn explicit_index_list_with_full_slices_round_trips() {
    let mut case = generate_from_seed(
        0,
        &GenConfig {
            explicit_memory_ops: false,
            ..GenConfig::default()
        },
    );
    let mut made_explicit = false;
    lang::ir::walk::each_stmt_mut(&mut case.kernel.body, &mut |s| {
        if let lang::ir::StmtKind::Assign { target, value } = &mut s.kind
            && target == "x_block"
            && let lang::ir::ExprKind::Load {
                indices, explicit, ..
            } = &mut value.kind
            && indices.iter().any(|i| matches!(i, lang::ir::Index::Full))
        {
            *explicit = true;
            made_explicit = true;
        }
    });
    assert!(
        made_explicit,
        "seed 0 no longer loads x_block with `:` entries"
    );
    round_trip(&case).unwrap();
}
