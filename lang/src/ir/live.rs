//! Liveness on the kernel IR: which names a statement reads, which are read after it, which a
//! body may read before assigning them, and which it certainly assigns. The lowering asks these
//! to decide what a loop or a branch carries (`fori_loop` carry tuples, `emit_pipeline`
//! scratch, `cond` operands); they are questions about the IR, not about Helion.

use super::hash::FastSet;
use super::{AllocShape, Expr, ExprKind, Index, Stmt, StmtKind, ViewOp};

/// A set of names, borrowed from the IR.
pub type Names<'a> = FastSet<&'a str>;

/// Names read after a statement: by the statements after it in its body (`rest`), or after
/// that body (`outer`).
pub fn live_after<'a>(rest: &'a [Stmt], outer: &Names<'a>) -> Names<'a> {
    let mut live = Names::with_capacity_and_hasher(outer.len().max(32), Default::default());
    live.extend(outer.iter().copied());
    rest.iter().for_each(|s| stmt_reads(s, &mut live));
    live
}

/// Names a statement reads (expressions, `+=` targets, tile variables of attributes).
pub fn stmt_reads<'a>(s: &'a Stmt, out: &mut Names<'a>) {
    stmt_top_reads(s, out);
    match &s.kind {
        StmtKind::For(lp) => lp.body.iter().for_each(|s| stmt_reads(s, out)),
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => then_body
            .iter()
            .chain(else_body)
            .for_each(|s| stmt_reads(s, out)),
        StmtKind::Assign { .. }
        | StmtKind::AugAssign { .. }
        | StmtKind::Store { .. }
        | StmtKind::Atomic { .. }
        | StmtKind::Return(_) => {}
    }
}

/// Names a statement reads itself (not in nested bodies).
pub fn stmt_top_reads<'a>(s: &'a Stmt, out: &mut Names<'a>) {
    match &s.kind {
        StmtKind::Assign { value, .. } => expr_reads(value, out),
        StmtKind::AugAssign { target, value, .. } => {
            out.insert(target);
            expr_reads(value, out);
        }
        StmtKind::Store {
            tensor,
            indices,
            value,
            ..
        } => {
            out.insert(tensor);
            index_reads(indices, out);
            expr_reads(value, out);
        }
        StmtKind::Atomic {
            tensor,
            indices,
            expected,
            value,
            ..
        } => {
            out.insert(tensor);
            index_reads(indices, out);
            if let Some(x) = expected {
                expr_reads(x, out);
            }
            expr_reads(value, out);
        }
        StmtKind::For(lp) => {
            for d in &lp.dims {
                if let Some(b) = &d.begin {
                    expr_reads(b, out);
                }
                expr_reads(&d.end, out);
                if let Some(b) = &d.block_size {
                    expr_reads(b, out);
                }
            }
        }
        StmtKind::If { cond, .. } => expr_reads(cond, out),
        StmtKind::Return(values) => values.iter().for_each(|v| expr_reads(v, out)),
    }
}

/// Names an index list reads.
pub fn index_reads<'a>(indices: &'a [Index], out: &mut Names<'a>) {
    for i in indices {
        match i {
            Index::Full | Index::NewAxis | Index::Int(_) => {}
            Index::Slice { start, stop, step } => [start, stop, step]
                .into_iter()
                .flatten()
                .for_each(|e| expr_reads(e, out)),
            Index::Expr(e) => expr_reads(e, out),
        }
    }
}

/// Names an expression reads (variables and the tiles of attributes).
pub fn expr_reads<'a>(e: &'a Expr, out: &mut Names<'a>) {
    match &e.kind {
        ExprKind::Name(n) => {
            out.insert(n);
        }
        ExprKind::TileAttr { tile, .. } => {
            out.insert(tile);
        }
        ExprKind::Int(_) | ExprKind::Float(_) => {}
        ExprKind::Size { value, .. }
        | ExprKind::Cast { value, .. }
        | ExprKind::Sum { value, .. }
        | ExprKind::Permute { value, .. } => expr_reads(value, out),
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::Compare { lhs, rhs, .. } => {
            expr_reads(lhs, out);
            expr_reads(rhs, out);
        }
        ExprKind::Load {
            tensor, indices, ..
        } => {
            out.insert(tensor);
            index_reads(indices, out);
        }
        ExprKind::Subscript { value, indices } => {
            expr_reads(value, out);
            index_reads(indices, out);
        }
        ExprKind::Arange { start, end, step } => {
            [start, step]
                .into_iter()
                .flatten()
                .for_each(|e| expr_reads(e, out));
            expr_reads(end, out);
        }
        ExprKind::Zeros { shape, .. } => shape.iter().for_each(|d| expr_reads(d, out)),
        ExprKind::Full { shape, value, .. } => {
            shape.iter().for_each(|d| expr_reads(d, out));
            expr_reads(value, out);
        }
        ExprKind::View { value, op } => {
            expr_reads(value, out);
            match op {
                ViewOp::Reshape(dims) | ViewOp::View(dims) => {
                    dims.iter().for_each(|d| expr_reads(d, out))
                }
                ViewOp::Squeeze(_) | ViewOp::Unsqueeze(_) => {}
                ViewOp::ViewAs(other) => expr_reads(other, out),
            }
        }
        ExprKind::Op { args, .. } => args.iter().for_each(|a| expr_reads(a, out)),
        ExprKind::Alloc { shape, .. } => match shape {
            AllocShape::Dims(dims) => dims.iter().for_each(|d| expr_reads(d, out)),
            AllocShape::Like(t) => expr_reads(t, out),
        },
    }
}

/// Names `body` may read before assigning them (upward-exposed uses).
pub fn exposed<'a>(body: &'a [Stmt], defined: &mut Names<'a>, out: &mut Names<'a>) {
    for s in body {
        let mut r = Names::default();
        stmt_top_reads(s, &mut r);
        out.extend(r.into_iter().filter(|n| !defined.contains(n)));
        match &s.kind {
            StmtKind::Assign { target, .. } | StmtKind::AugAssign { target, .. } => {
                defined.insert(target);
            }
            StmtKind::For(lp) => {
                let mut inner = defined.clone();
                inner.extend(lp.vars.iter().map(String::as_str));
                exposed(&lp.body, &mut inner, out);
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                let mut t = defined.clone();
                exposed(then_body, &mut t, out);
                let mut e = defined.clone();
                exposed(else_body, &mut e, out);
                defined.extend(t.intersection(&e).copied().collect::<Vec<_>>());
            }
            StmtKind::Store { .. } | StmtKind::Atomic { .. } | StmtKind::Return(_) => {}
        }
    }
}

/// Names certainly assigned by `body` (not inside loops, which may run zero times).
pub fn definitely_assigned(body: &[Stmt]) -> Names<'_> {
    let mut d = Names::default();
    for s in body {
        match &s.kind {
            StmtKind::Assign { target, .. } | StmtKind::AugAssign { target, .. } => {
                d.insert(target);
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                let t = definitely_assigned(then_body);
                let e = definitely_assigned(else_body);
                d.extend(t.intersection(&e).copied());
            }
            StmtKind::For(_)
            | StmtKind::Store { .. }
            | StmtKind::Atomic { .. }
            | StmtKind::Return(_) => {}
        }
    }
    d
}
