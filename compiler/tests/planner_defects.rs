//! The historical defects of spec §4, each under the merged rules (the rule that now prevents
//! it), and config dependence: the same kernel folds under one block size and is refused under
//! another.

#[path = "planner_helpers.rs"]
mod helpers;

use helpers::*;
use pallas_diff_compiler::plan::SelectorKind;
use pallas_diff_compiler::verdict::Rule;

const ONES8: &str = "x = torch.ones(8, 2, 128)\nkernel(x)";

/// `for request in hl.grid(1): acc; for outer in hl.tile(<outer>): x_block = x[outer, :, :];
/// live = ...; <inner>; out[request] = acc`.
fn nest(config: &str, outer: &str, inner: &str, tail: &str) -> String {
    script(
        config,
        "x: torch.Tensor",
        &format!(
            r#"    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile({outer}):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
{inner}
        out[request, :, :] = acc
    return out"#
        ),
        tail,
    )
}

const FORI: &str = "block_sizes=[], pallas_loop_type=\"fori_loop\"";

#[test]
fn d1_read_after_write_is_rejected() {
    let src = script(
        FORI,
        "x: torch.Tensor, y: torch.Tensor",
        r#"    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            x[outer, :, :] = y[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=1):
                acc = acc + x_block[local.begin, :, :].float()
        out[request, :, :] = acc
    return out"#,
        "x = torch.ones(8, 2, 128)\ny = torch.zeros(8, 2, 128)\nkernel(x, y)",
    );
    assert_unsupported(&parse(&src), Rule::RootWrittenOnDevice);
}

#[test]
fn d1_written_tensor_read_by_a_static_index_compiles() {
    // Spec §2.0: a written tensor read as `x_block[1]` falls back to a value load.
    let src = script(
        FORI,
        "x: torch.Tensor, y: torch.Tensor",
        r#"    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            x[outer, :, :] = y[outer, :, :]
            acc = acc + x_block[1].float()
        out[request, :, :] = acc
    return out"#,
        "x = torch.ones(8, 2, 128)\ny = torch.zeros(8, 2, 128)\nkernel(x, y)",
    );
    let case = parse(&src);
    let plan = assert_lowered(&case);
    assert!(plan.is_static_value(expr_rendered(&case, "x_block[1]")));
}

#[test]
fn d1_atomic_on_the_same_storage_is_rejected() {
    let src = script(
        FORI,
        "x: torch.Tensor, y: torch.Tensor",
        r#"    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=1):
                acc = acc + x_block[local.begin, :, :].float()
        hl.atomic_add(x, [request, 0, 0], 1.0)
        out[request, :, :] = acc
    return out"#,
        "x = torch.ones(8, 2, 128)\ny = torch.zeros(8, 2, 128)\nkernel(x, y)",
    );
    assert_unsupported(&parse(&src), Rule::RootWrittenOnDevice);
}

#[test]
fn d2_tile_count_with_nonzero_begin_lowers() {
    let src = script(
        FORI,
        "x: torch.Tensor",
        r#"    out = torch.zeros([1, 1], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([1], dtype=torch.float32)
        for outer in hl.tile(4, 12, block_size=4):
            acc = acc + outer.count
        out[request, :] = acc
    return out"#,
        "x = torch.ones(1)\nkernel(x)",
    );
    assert_lowered(&parse(&src));
}

fn d5(block: i64) -> String {
    script(
        FORI,
        "x: torch.Tensor",
        &format!(
            r#"    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size={block}):
            x_block = x[outer, :, :]
            part = x_block[1:10, :, :]
            acc = acc + part.float().sum(dim=0) / part.size(0)
        out[request, :, :] = acc
    return out"#
        ),
        ONES8,
    )
}

#[test]
fn d5_bounded_slice_past_extent_is_rejected() {
    let src = d5(4);
    let r = assert_unsupported(&parse(&src), Rule::SelectorWiderThanBlock);
    let line = line_of(&src, "part = x_block[1:10");
    assert_eq!(
        r.message,
        format!("the run is 9 wide but the block holds only 4 rows for this config at line {line}")
    );
    assert_eq!(r.span.line, line);
}

#[test]
fn d6_tile_index_plus_one_through_if_is_rejected() {
    let src = nest(
        "block_sizes=[4], pallas_loop_type=\"fori_loop\"",
        "x.size(0)",
        r#"            for local in hl.tile(live, block_size=2):
                rows = local.index + 1
                if live >= 2:
                    acc = acc + x_block[rows, :, :].float().sum(dim=0)"#,
        ONES8,
    );
    assert_unsupported(&parse(&src), Rule::SelectorShiftedTileRun);
}

#[test]
fn d6_tile_index_plus_zero_through_if_lowers() {
    let src = nest(
        "block_sizes=[4], pallas_loop_type=\"fori_loop\"",
        "x.size(0)",
        r#"            for local in hl.tile(live, block_size=2):
                rows = local.index + 0
                if live >= 2:
                    acc = acc + x_block[rows, :, :].float().sum(dim=0)"#,
        ONES8,
    );
    assert_lowered(&parse(&src));
}

#[test]
fn d9_tile_index_plus_zero_is_a_masked_tile_run() {
    // The merged test's form: `hl.tile(3, block_size=4)`, inner block 2 (7.0 on rows [1,2,4,8]).
    let src = nest(
        FORI,
        "3, block_size=4",
        r#"            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[local.index + 0, :, :].float().sum(dim=0)"#,
        "x = torch.tensor([1.0, 2.0, 4.0, 8.0]).reshape(4, 1, 1).expand(4, 2, 128).contiguous()\nkernel(x)",
    );
    let case = parse(&src);
    let plan = assert_lowered(&case);
    let run = plan
        .resident(expr_rendered(&case, "x_block[local.index + 0, :, :]"))
        .unwrap();
    let sel = run.selector.as_ref().unwrap();
    assert_eq!((sel.kind, sel.mask), (SelectorKind::Tile, true));
    assert!(run.materialize);
}

#[test]
fn d9_original_kernel_block_three_is_refused_by_divisibility() {
    // Spec §4 D9 as written (`hl.tile(3, block_size=3)`, inner block 2): `t.index + 0` is now a
    // tile run, but a 2-row run does not divide the 3-row block (spec §2.7 step 6).
    let src = nest(
        FORI,
        "3, block_size=3",
        r#"            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[local.index + 0, :, :].float().sum(dim=0)"#,
        ONES8,
    );
    assert_unsupported(&parse(&src), Rule::SelectorWidthNotDividing);
}

#[test]
fn d10_arange_bound_to_a_name_before_the_branch_lowers() {
    let src = nest(
        "block_sizes=[], pallas_loop_type=\"fori_loop\"",
        "x.size(0), block_size=4",
        r#"            picked = hl.arange(live - 3, live)
            if live >= 3:
                acc = acc + x_block[picked, :, :].float().sum(dim=0)"#,
        ONES8,
    );
    let case = parse(&src);
    let plan = assert_lowered(&case);
    let sel = plan
        .resident(expr_rendered(&case, "x_block[picked, :, :]"))
        .unwrap()
        .selector
        .clone()
        .unwrap();
    assert_eq!(
        (sel.kind, sel.width, sel.outer_block),
        (SelectorKind::Tail, 3, Some(1))
    );
    // The begin is the resolved start (live - 3), not the placeholder (spec §4 D10).
    match sel.begin {
        pallas_diff_compiler::plan::SelectorBegin::Symbolic(a) => {
            assert_eq!(
                a.add(&lang::ir::sym::Affine::constant(3)).as_live_extent(),
                Some(1)
            )
        }
        other => panic!("expected a symbolic begin, got {other:?}"),
    }
}

#[test]
fn d11_shifted_tile_run_is_rejected() {
    let src = nest(
        FORI,
        "x.size(0), block_size=4",
        r#"            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[local.index + 1, :, :].float().sum(dim=0)"#,
        ONES8,
    );
    assert_unsupported(&parse(&src), Rule::SelectorShiftedTileRun);
}

#[test]
fn d12_tail_tile_run_is_read_from_the_ref_and_masked() {
    let src = nest(
        FORI,
        "3, block_size=4",
        r#"            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[local.index, :, :].float().sum(dim=0)"#,
        "x = torch.tensor([1.0, 2.0, 4.0, 8.0]).reshape(4, 1, 1).expand(4, 2, 128).contiguous()\nkernel(x)",
    );
    let case = parse(&src);
    let plan = assert_lowered(&case);
    let run = plan
        .resident(expr_rendered(&case, "x_block[local.index, :, :]"))
        .unwrap();
    assert!(run.selector.as_ref().unwrap().mask);
}

#[test]
fn d13_strided_iota_is_rejected() {
    let src = nest(
        FORI,
        "x.size(0), block_size=4",
        r#"            acc = acc + x_block[hl.arange(0, 4, 2), :, :].float().sum(dim=0)"#,
        ONES8,
    );
    assert_unsupported(&parse(&src), Rule::SelectorTailOutsideConditional);
    // Inside the matching `if`, the stride itself is refused.
    let src = nest(
        FORI,
        "x.size(0), block_size=4",
        r#"            if live >= 2:
                acc = acc + x_block[hl.arange(live - 4, live, 2), :, :].float().sum(dim=0)"#,
        ONES8,
    );
    assert_unsupported(&parse(&src), Rule::SelectorTailNotContiguous);
}

#[test]
fn d14_none_ahead_of_a_run_is_rejected() {
    let src = nest(
        FORI,
        "x.size(0), block_size=4",
        r#"            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[None, local.index, :, :].float().sum(dim=0).sum(dim=0)"#,
        ONES8,
    );
    assert_unsupported(&parse(&src), Rule::SelectorAddsDimension);
}

#[test]
fn tail_predicate_must_be_exact() {
    for (cond, rule) in [
        ("live > 2", Rule::SelectorTailNotGuarded),
        ("live >= 2", Rule::SelectorTailNotGuarded),
    ] {
        let src = nest(
            FORI,
            "x.size(0), block_size=4",
            &format!(
                r#"            if {cond}:
                acc = acc + x_block[live - 3 : live, :, :].float().sum(dim=0)"#
            ),
            ONES8,
        );
        assert_unsupported(&parse(&src), rule);
    }
    // In the else-branch or outside any if: not inside its matching conditional.
    let src = nest(
        FORI,
        "x.size(0), block_size=4",
        r#"            if live >= 3:
                acc = acc + 1.0
            else:
                acc = acc + x_block[live - 3 : live, :, :].float().sum(dim=0)"#,
        ONES8,
    );
    assert_unsupported(&parse(&src), Rule::SelectorTailOutsideConditional);
}

#[test]
fn scalar_selectors() {
    // A symbolic scalar that is not a tile begin.
    let src = nest(
        FORI,
        "x.size(0), block_size=4",
        r#"            if live >= 1:
                acc = acc + x_block[live - 1, :, :].float()"#,
        ONES8,
    );
    assert_unsupported(&parse(&src), Rule::SelectorScalarNotTileBegin);
    // `t.begin` of a block-2 tile cannot squeeze.
    let src = nest(
        FORI,
        "x.size(0), block_size=4",
        r#"            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[local.begin, :, :].float()"#,
        ONES8,
    );
    assert_unsupported(&parse(&src), Rule::SelectorScalarWidth);
    // The outer tile's own begin: its loop is the grid, not a device loop around the subscript
    // that covers the Ref.
    let src = nest(
        FORI,
        "x.size(0), block_size=4",
        r#"            acc = acc + x_block[outer.begin, :, :].float()"#,
        ONES8,
    );
    assert_unsupported(&parse(&src), Rule::SelectorScalarWidth);
    // The outer tile's own index: a block-wide run whose loop (8 rows) does not cover the
    // 4-row Ref.
    let src = nest(
        FORI,
        "x.size(0), block_size=4",
        r#"            acc = acc + x_block[outer.index, :, :].float().sum(dim=0)"#,
        ONES8,
    );
    assert_unsupported(&parse(&src), Rule::SelectorLoopNotCovering);
}

#[test]
fn static_selector_on_a_guarded_dim_may_address_padding() {
    // 9 rows, block 4: the static run on the tiled dim may read padding. Under the PR's
    // merged state a literal slice has no fallback and is refused; Helion 1.5.1 takes the
    // static-value fallback for it (D-1.5.1-01), which fits the run against the block.
    let src = nest(
        FORI,
        "x.size(0), block_size=4",
        r#"            acc = acc + x_block[1:3, :, :].float().sum(dim=0)"#,
        "x = torch.ones(9, 2, 128)\nkernel(x)",
    );
    assert_lowered(&parse(&src));
    // A slice of a literal slice of the tiled dim has no fallback (its input's size is
    // symbolic, D-1.5.1-03): the failure stands.
    let src = nest(
        FORI,
        "x.size(0), block_size=4",
        r#"            acc = acc + x_block[0:4, :, :][1:3, :, :].float().sum(dim=0)"#,
        "x = torch.ones(9, 2, 128)\nkernel(x)",
    );
    assert_unsupported(&parse(&src), Rule::SelectorStaticMayAddressPadding);
    // The same with `1 + hl.arange(2)` falls back to value basic indexing (db0613ca).
    let src = nest(
        FORI,
        "x.size(0), block_size=4",
        r#"            acc = acc + x_block[1 + hl.arange(2), :, :].float().sum(dim=0)"#,
        "x = torch.ones(9, 2, 128)\nkernel(x)",
    );
    let case = parse(&src);
    let plan = assert_lowered(&case);
    assert!(plan.is_static_value(expr_rendered(&case, "x_block[1 + hl.arange(2), :, :]")));
}

#[test]
fn driving_loop_rules() {
    let cases = [
        (
            "for local in hl.tile(1, 4, block_size=1):",
            Rule::SelectorLoopNotZeroBased,
        ),
        (
            "for local in hl.tile(2, block_size=1):",
            Rule::SelectorLoopNotCovering,
        ),
        (
            "for local in hl.tile(4, block_size=3):",
            Rule::SelectorWidthNotDividing,
        ),
    ];
    for (head, rule) in cases {
        let src = nest(
            FORI,
            "x.size(0), block_size=4",
            &format!(
                r#"            {head}
                acc = acc + x_block[local.index, :, :].float().sum(dim=0)"#
            ),
            ONES8,
        );
        assert_unsupported(&parse(&src), rule);
    }
}

#[test]
fn bf16_rows_of_a_2d_tensor_are_a_root_only_when_aligned() {
    // D-1.5.1-13: the bf16 sublane dim is not DIRECT; an 8-row block from a zero start is
    // aligned, so the root plans and the scalar selector is the one refused.
    let src = script(
        FORI,
        "x: torch.Tensor",
        r#"    out = torch.zeros([1, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=8):
            x_block = x[outer, :]
            for local in hl.tile(8, block_size=1):
                acc = acc + x_block[local.begin, :].float()
        out[request, :] = acc
    return out"#,
        "x = torch.ones(16, 128, dtype=torch.bfloat16)\nkernel(x)",
    );
    assert_unsupported(&parse(&src), Rule::SelectorUnaligned);
    // A 4-row block is not aligned: the root is refused.
    let four = src
        .replace("block_size=8)", "block_size=4)")
        .replace("hl.tile(8, ", "hl.tile(4, ");
    assert_unsupported(&parse(&four), Rule::RootNotDirectAddressing);
    // f32 with 128 lanes is DIRECT either way.
    assert_lowered(&parse(&src.replace(", dtype=torch.bfloat16)", ")")));
}

#[test]
fn root_drops_scalar_dims_but_not_none() {
    // D-1.5.1-12: an int index beside the tile drops its dim and the root plans.
    let src = nest(
        FORI,
        "x.size(0), block_size=4",
        r#"            row = x[outer, 0, :]
            for local in hl.tile(live, block_size=1):
                acc = acc + row[local.begin, :].float()"#,
        ONES8,
    );
    assert_lowered(&parse(&src));
}

#[test]
fn consumed_whole_only_matters_without_fallback() {
    // `x_block.sum(0) + x_block[1]` compiles, and under Helion 1.5.1 so does
    // `x_block.sum(0) + x_block[1:3]` (D-1.5.1-01); `x_block[1:3][1]` does not: the second
    // subscript's input size is symbolic on the tiled dim (D-1.5.1-03).
    let ok = nest(
        FORI,
        "x.size(0), block_size=4",
        "            acc = acc + x_block.float().sum(dim=0) + x_block[1].float()",
        ONES8,
    );
    assert_lowered(&parse(&ok));
    let bad = nest(
        FORI,
        "x.size(0), block_size=4",
        "            acc = acc + x_block.float().sum(dim=0) + x_block[1:3].float().sum(dim=0)",
        ONES8,
    );
    assert_lowered(&parse(&bad));
    let bad = nest(
        FORI,
        "x.size(0), block_size=4",
        "            acc = acc + x_block.float().sum(dim=0) + x_block[1:3][1].float()",
        ONES8,
    );
    assert_unsupported(&parse(&bad), Rule::ChainConsumedWhole);
}

#[test]
fn a_ref_leaving_its_graph_is_not_a_transform() {
    // The block defined inside the outer loop and narrowed after it (a graph output).
    let src = script(
        FORI,
        "x: torch.Tensor",
        r#"    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
        for local in hl.tile(4, block_size=1):
            acc = acc + x_block[local.begin, :, :].float()
        out[request, :, :] = acc
    return out"#,
        ONES8,
    );
    let r = assert_unsupported(&parse(&src), Rule::ViewNotAddressPreserving);
    assert!(r.message.starts_with("output at "), "{}", r.message);
}

// ---- config dependence -----------------------------------------------------------------------

fn inner_covering(block: i64) -> String {
    nest(
        &format!("block_sizes=[{block}], pallas_loop_type=\"fori_loop\""),
        "x.size(0)",
        r#"            for local in hl.tile(4, block_size=4):
                acc = acc + x_block[local.index, :, :].float().sum(dim=0)"#,
        ONES8,
    )
}

#[test]
fn config_dependence_inner_loop_must_cover_the_block() {
    assert_lowered(&parse(&inner_covering(4)));
    assert_unsupported(&parse(&inner_covering(2)), Rule::SelectorWiderThanBlock);
    assert_unsupported(&parse(&inner_covering(8)), Rule::SelectorLoopNotCovering);
}

#[test]
fn config_dependence_padding_depends_on_the_block() {
    let src = |block: i64| {
        nest(
            &format!("block_sizes=[{block}], pallas_loop_type=\"fori_loop\""),
            "x.size(0)",
            r#"            for local in hl.tile(4, block_size=1):
                acc = acc + x_block[local.begin, :, :].float()"#,
            "x = torch.ones(12, 2, 128)\nkernel(x)",
        )
    };
    // 12 rows: block 4 divides (no padding); the inner loop covers the block, so the guard
    // (kept: its end is static) matters only when the block does not divide the rows.
    assert_lowered(&parse(&src(4)));
    // Block 8 over 12 rows: the loop of 4 does not cover the 8-row Ref.
    assert_unsupported(&parse(&src(8)), Rule::SelectorLoopNotCovering);
}
