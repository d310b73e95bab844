//! The forms that make *which* row a selector reads part of the output: paired reads (the product
//! of two reads of one base whose rows line up), accumulator updates that do not commute, shifted
//! runs `local.index + -k`, and negative slice starts that would reach the planner were Helion
//! to let them through (spec D8). Without them a lowering that reads a permutation of the right
//! rows (helion #2006's dropped offset inside one tile) sums to the right answer.

use lang::ir::walk::{each_expr, each_stmt, stmt_exprs};
use lang::ir::{BinOp, Case, Ctor, DType, Expr, ExprKind, Index, StmtKind, TileAttr};
use pallas_diff_fuzz::generators::{GenConfig, generate_from_seed};

fn exprs(case: &Case, f: &mut dyn FnMut(&Expr)) {
    each_stmt(&case.kernel.body, &mut |s| {
        stmt_exprs(s, &mut |e| each_expr(e, &mut *f))
    });
}

/// The index lists of a paired read: `a.float() * b.float()` with both sides subscripts of one
/// base.
fn paired(e: &Expr) -> Option<(Vec<Index>, Vec<Index>)> {
    let ExprKind::Binary {
        op: BinOp::Mul,
        lhs,
        rhs,
    } = &e.kind
    else {
        return None;
    };
    let sub = |x: &Expr| -> Option<(String, Vec<Index>)> {
        let ExprKind::Cast { value, .. } = &x.kind else {
            return None;
        };
        let ExprKind::Subscript { value, indices } = &value.kind else {
            return None;
        };
        let ExprKind::Name(n) = &value.kind else {
            return None;
        };
        Some((n.clone(), indices.clone()))
    };
    let ((na, a), (nb, b)) = (sub(lhs)?, sub(rhs)?);
    (na == nb).then_some((a, b))
}

/// `t.index + k` with `k < 0`.
fn negative_shift(i: &Index) -> bool {
    matches!(i, Index::Expr(e) if matches!(&e.kind, ExprKind::Binary { op: BinOp::Add, lhs, rhs }
        if matches!(lhs.kind, ExprKind::TileAttr { attr: TileAttr::Index, .. })
            && matches!(rhs.kind, ExprKind::Int(k) if k < 0)))
}

fn has_paired(case: &Case) -> bool {
    let mut found = false;
    exprs(case, &mut |e| found |= paired(e).is_some());
    found
}

/// `acc = acc * 0.5 + v` or `acc = v - acc`.
fn ordered_updates(case: &Case) -> (bool, bool) {
    let (mut decay, mut alternate) = (false, false);
    each_stmt(&case.kernel.body, &mut |s| {
        if let StmtKind::Assign { target, value } = &s.kind
            && target == "acc"
            && let ExprKind::Binary { op, lhs, rhs } = &value.kind
        {
            let is_acc = |x: &Expr| matches!(&x.kind, ExprKind::Name(n) if n == "acc");
            decay |= *op == BinOp::Add
                && matches!(&lhs.kind, ExprKind::Binary { op: BinOp::Mul, lhs: a, .. } if is_acc(a));
            alternate |= *op == BinOp::Sub && is_acc(rhs) && !is_acc(lhs);
        }
    });
    (decay, alternate)
}

#[test]
fn paired_reads_shifted_runs_and_ordered_updates_are_generated() {
    let cfg = GenConfig::default();
    let (mut pairs, mut shifted_pairs, mut decay, mut alternate) = (0, 0, false, false);
    for seed in 0..3000 {
        let case = generate_from_seed(seed, &cfg);
        exprs(&case, &mut |e| {
            if let Some((a, b)) = paired(e) {
                pairs += 1;
                if a != b && (a.iter().any(negative_shift) || b.iter().any(negative_shift)) {
                    shifted_pairs += 1;
                }
            }
        });
        let (d, a) = ordered_updates(&case);
        decay |= d;
        alternate |= a;
    }
    assert!(pairs > 100, "{pairs} paired reads in 3000 cases");
    assert!(
        shifted_pairs > 5,
        "{shifted_pairs} paired reads beside a `local.index + -k` run in 3000 cases"
    );
    assert!(decay && alternate, "ordered updates: {decay} {alternate}");
}

#[test]
fn the_knobs_turn_them_off() {
    let cfg = GenConfig {
        paired_reads: false,
        ordered_updates: false,
        ..GenConfig::default()
    };
    for seed in 0..1000 {
        let case = generate_from_seed(seed, &cfg);
        assert!(!has_paired(&case), "seed {seed}: a paired read");
        assert_eq!(ordered_updates(&case), (false, false), "seed {seed}");
    }
}

#[test]
fn paired_float32_reads_multiply_exactly() {
    // XLA contracts `a * b + c` into an FMA and eager PyTorch does not: the products of a case's
    // float32 inputs must be exact, or engines would differ in the last bit.
    let cfg = GenConfig::default();
    for seed in 0..3000 {
        let case = generate_from_seed(seed, &cfg);
        if !has_paired(&case) {
            continue;
        }
        for input in &case.inputs {
            let float32 = input.dtype.unwrap_or(DType::Float32) == DType::Float32;
            let random = matches!(input.ctor, Ctor::Randn { .. } | Ctor::Rand { .. });
            assert!(
                !(float32 && random && input.name != "init"),
                "seed {seed}: `{}` is random float32 beside a paired read",
                input.name
            );
        }
    }
}

/// The outer tile loop's block: its `block_size=`, or its config slot (the first, unless a
/// `chunk` loop registered one before it: such cases are skipped).
fn outer_block(case: &Case) -> Option<i64> {
    let mut found = None;
    let mut chunk_first = false;
    each_stmt(&case.kernel.body, &mut |s| {
        if let StmtKind::For(lp) = &s.kind {
            if lp.vars.first().is_some_and(|v| v.starts_with("chunk")) && found.is_none() {
                chunk_first = true;
            }
            if lp.vars.first().is_some_and(|v| v == "outer") {
                found = Some(match lp.dims.first().and_then(|d| d.block_size.as_ref()) {
                    Some(e) => match e.kind {
                        ExprKind::Int(b) => Some(b),
                        _ => None,
                    },
                    None if chunk_first => None,
                    None => case.config.block_sizes.first().copied(),
                });
            }
        }
    });
    found.flatten()
}

#[test]
fn negative_slice_starts_mostly_fit_the_block() {
    // A negative start on the block's rows whose raw width `stop - start` fits the block
    // reaches the planner when a lowering lets it through trace time (spec D8); a wider one is
    // refused as too wide. Both are drawn, the first mostly.
    let cfg = GenConfig {
        wild_percent: 100,
        ..GenConfig::default()
    };
    let (mut fits, mut wider) = (0, 0);
    for seed in 0..2000 {
        let case = generate_from_seed(seed, &cfg);
        let Some(block) = outer_block(&case) else {
            continue;
        };
        exprs(&case, &mut |e| {
            if let ExprKind::Subscript { value, indices } = &e.kind
                && matches!(&value.kind, ExprKind::Name(n) if n == "x_block")
                && let Some(Index::Slice {
                    start: Some(a),
                    stop: Some(b),
                    step: None,
                }) = indices.first()
                && let (ExprKind::Int(a), ExprKind::Int(b)) = (&a.kind, &b.kind)
                && *a < 0
            {
                if b - a <= block {
                    fits += 1;
                } else {
                    wider += 1;
                }
            }
        });
    }
    assert!(
        fits > 2 * wider && wider > 0,
        "negative starts on the rows: {fits} within the block, {wider} wider"
    );
}
