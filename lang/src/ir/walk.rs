//! Generic traversals of the IR: every expression of a statement tree, pre-order, and the
//! mutable counterparts used by rewriting passes (span stripping, the reducer, `fixup`).

use super::{AllocShape, Case, Expr, ExprKind, Index, Stmt, StmtKind, ViewOp};

/// Calls `f` on `e` and every sub-expression (index entries included), pre-order.
pub fn each_expr<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Name(_) | ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::TileAttr { .. } => {}
        ExprKind::Size { value, .. }
        | ExprKind::Cast { value, .. }
        | ExprKind::Sum { value, .. }
        | ExprKind::Permute { value, .. } => each_expr(value, f),
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::Compare { lhs, rhs, .. } => {
            each_expr(lhs, f);
            each_expr(rhs, f);
        }
        ExprKind::Load { indices, .. } => each_index_expr(indices, f),
        ExprKind::Subscript { value, indices } => {
            each_expr(value, f);
            each_index_expr(indices, f);
        }
        ExprKind::Arange { start, end, step } => {
            if let Some(s) = start {
                each_expr(s, f);
            }
            each_expr(end, f);
            if let Some(s) = step {
                each_expr(s, f);
            }
        }
        ExprKind::Zeros { shape, .. } => shape.iter().for_each(|d| each_expr(d, f)),
        ExprKind::Full { shape, value, .. } => {
            shape.iter().for_each(|d| each_expr(d, f));
            each_expr(value, f);
        }
        ExprKind::View { value, op } => {
            each_expr(value, f);
            match op {
                ViewOp::Reshape(dims) | ViewOp::View(dims) => {
                    dims.iter().for_each(|d| each_expr(d, f))
                }
                ViewOp::Squeeze(_) | ViewOp::Unsqueeze(_) => {}
                ViewOp::ViewAs(other) => each_expr(other, f),
            }
        }
        ExprKind::Op { args, .. } => args.iter().for_each(|a| each_expr(a, f)),
        ExprKind::Alloc { shape, .. } => match shape {
            AllocShape::Dims(dims) => dims.iter().for_each(|d| each_expr(d, f)),
            AllocShape::Like(t) => each_expr(t, f),
        },
    }
}

/// Calls `f` on every expression inside index entries.
pub fn each_index_expr<'a>(indices: &'a [Index], f: &mut dyn FnMut(&'a Expr)) {
    for index in indices {
        match index {
            Index::Full | Index::NewAxis | Index::Int(_) => {}
            Index::Slice { start, stop, step } => {
                for e in [start, stop, step].into_iter().flatten() {
                    each_expr(e, f);
                }
            }
            Index::Expr(e) => each_expr(e, f),
        }
    }
}

/// Mutable pre-order traversal of `e` and its sub-expressions.
pub fn each_expr_mut(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    f(e);
    match &mut e.kind {
        ExprKind::Name(_) | ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::TileAttr { .. } => {}
        ExprKind::Size { value, .. }
        | ExprKind::Cast { value, .. }
        | ExprKind::Sum { value, .. }
        | ExprKind::Permute { value, .. } => each_expr_mut(value, f),
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::Compare { lhs, rhs, .. } => {
            each_expr_mut(lhs, f);
            each_expr_mut(rhs, f);
        }
        ExprKind::Load { indices, .. } => each_index_expr_mut(indices, f),
        ExprKind::Subscript { value, indices } => {
            each_expr_mut(value, f);
            each_index_expr_mut(indices, f);
        }
        ExprKind::Arange { start, end, step } => {
            if let Some(s) = start {
                each_expr_mut(s, f);
            }
            each_expr_mut(end, f);
            if let Some(s) = step {
                each_expr_mut(s, f);
            }
        }
        ExprKind::Zeros { shape, .. } => shape.iter_mut().for_each(|d| each_expr_mut(d, f)),
        ExprKind::Full { shape, value, .. } => {
            shape.iter_mut().for_each(|d| each_expr_mut(d, f));
            each_expr_mut(value, f);
        }
        ExprKind::View { value, op } => {
            each_expr_mut(value, f);
            match op {
                ViewOp::Reshape(dims) | ViewOp::View(dims) => {
                    dims.iter_mut().for_each(|d| each_expr_mut(d, f))
                }
                ViewOp::Squeeze(_) | ViewOp::Unsqueeze(_) => {}
                ViewOp::ViewAs(other) => each_expr_mut(other, f),
            }
        }
        ExprKind::Op { args, .. } => args.iter_mut().for_each(|a| each_expr_mut(a, f)),
        ExprKind::Alloc { shape, .. } => match shape {
            AllocShape::Dims(dims) => dims.iter_mut().for_each(|d| each_expr_mut(d, f)),
            AllocShape::Like(t) => each_expr_mut(t, f),
        },
    }
}

/// Mutable traversal of the expressions inside index entries.
pub fn each_index_expr_mut(indices: &mut [Index], f: &mut dyn FnMut(&mut Expr)) {
    for index in indices {
        match index {
            Index::Full | Index::NewAxis | Index::Int(_) => {}
            Index::Slice { start, stop, step } => {
                for e in [start, stop, step].into_iter().flatten() {
                    each_expr_mut(e, f);
                }
            }
            Index::Expr(e) => each_expr_mut(e, f),
        }
    }
}

/// Calls `f` on every statement of `body`, pre-order, descending into loops and branches.
pub fn each_stmt<'a>(body: &'a [Stmt], f: &mut dyn FnMut(&'a Stmt)) {
    for stmt in body {
        f(stmt);
        match &stmt.kind {
            StmtKind::For(lp) => each_stmt(&lp.body, f),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                each_stmt(then_body, f);
                each_stmt(else_body, f);
            }
            StmtKind::Assign { .. }
            | StmtKind::AugAssign { .. }
            | StmtKind::Store { .. }
            | StmtKind::Atomic { .. }
            | StmtKind::Return(_) => {}
        }
    }
}

/// Calls `f` on every top-level expression a statement holds (not descending into nested
/// statements): values, conditions, loop bounds, index entries of stores.
pub fn stmt_exprs<'a>(stmt: &'a Stmt, f: &mut dyn FnMut(&'a Expr)) {
    match &stmt.kind {
        StmtKind::Assign { value, .. } | StmtKind::AugAssign { value, .. } => f(value),
        StmtKind::Store { indices, value, .. } => {
            each_top_index_expr(indices, f);
            f(value);
        }
        StmtKind::Atomic {
            indices,
            expected,
            value,
            ..
        } => {
            each_top_index_expr(indices, f);
            if let Some(x) = expected {
                f(x);
            }
            f(value);
        }
        StmtKind::For(lp) => {
            for d in &lp.dims {
                if let Some(b) = &d.begin {
                    f(b);
                }
                f(&d.end);
                if let Some(b) = &d.block_size {
                    f(b);
                }
            }
        }
        StmtKind::If { cond, .. } => f(cond),
        StmtKind::Return(values) => values.iter().for_each(f),
    }
}

fn each_top_index_expr<'a>(indices: &'a [Index], f: &mut dyn FnMut(&'a Expr)) {
    for index in indices {
        match index {
            Index::Full | Index::NewAxis | Index::Int(_) => {}
            Index::Slice { start, stop, step } => {
                [start, stop, step].into_iter().flatten().for_each(&mut *f)
            }
            Index::Expr(e) => f(e),
        }
    }
}

/// Calls `f` on every expression of one statement and their sub-expressions, pre-order (not
/// on nested statements), mutably: the counterpart of [`stmt_exprs`] with [`each_expr`].
pub fn stmt_exprs_mut(stmt: &mut Stmt, f: &mut dyn FnMut(&mut Expr)) {
    match &mut stmt.kind {
        StmtKind::Assign { value, .. } | StmtKind::AugAssign { value, .. } => {
            each_expr_mut(value, f)
        }
        StmtKind::Store { indices, value, .. } => {
            each_index_expr_mut(indices, f);
            each_expr_mut(value, f);
        }
        StmtKind::Atomic {
            indices,
            expected,
            value,
            ..
        } => {
            each_index_expr_mut(indices, f);
            if let Some(x) = expected {
                each_expr_mut(x, f);
            }
            each_expr_mut(value, f);
        }
        StmtKind::For(lp) => {
            for d in &mut lp.dims {
                if let Some(b) = &mut d.begin {
                    each_expr_mut(b, f);
                }
                each_expr_mut(&mut d.end, f);
                if let Some(b) = &mut d.block_size {
                    each_expr_mut(b, f);
                }
            }
        }
        StmtKind::If { cond, .. } => each_expr_mut(cond, f),
        StmtKind::Return(values) => values.iter_mut().for_each(|v| each_expr_mut(v, f)),
    }
}

/// Mutable pre-order traversal of every statement.
pub fn each_stmt_mut(body: &mut [Stmt], f: &mut dyn FnMut(&mut Stmt)) {
    for stmt in body {
        f(stmt);
        match &mut stmt.kind {
            StmtKind::For(lp) => each_stmt_mut(&mut lp.body, f),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                each_stmt_mut(then_body, f);
                each_stmt_mut(else_body, f);
            }
            StmtKind::Assign { .. }
            | StmtKind::AugAssign { .. }
            | StmtKind::Store { .. }
            | StmtKind::Atomic { .. }
            | StmtKind::Return(_) => {}
        }
    }
}

impl Case {
    /// Sets every span to the default (0:0): spans say where a node was parsed from, so two cases
    /// are the same program iff their span-stripped forms are equal.
    pub fn strip_spans(&mut self) {
        self.kernel.span = Default::default();
        self.call.span = Default::default();
        for p in &mut self.kernel.params {
            p.span = Default::default();
        }
        for i in &mut self.inputs {
            i.span = Default::default();
        }
        each_stmt_mut(&mut self.kernel.body, &mut |s| {
            s.span = Default::default();
            stmt_exprs_mut(s, &mut |e| e.span = Default::default());
        });
    }

    /// A copy with spans stripped (see [`Case::strip_spans`]).
    pub fn without_spans(&self) -> Case {
        let mut c = self.clone();
        c.strip_spans();
        c
    }
}

/// Names assigned anywhere in `body` (nested loops and branches included), in order, once each.
pub fn assigned(body: &[Stmt]) -> Vec<String> {
    assigned_names(body)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// [`assigned`], borrowed from the statements.
pub fn assigned_names(body: &[Stmt]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    each_stmt(body, &mut |s| match &s.kind {
        StmtKind::Assign { target, .. } | StmtKind::AugAssign { target, .. } => {
            if !out.contains(&target.as_str()) {
                out.push(target.as_str());
            }
        }
        StmtKind::Store { .. }
        | StmtKind::Atomic { .. }
        | StmtKind::For(_)
        | StmtKind::If { .. }
        | StmtKind::Return(_) => {}
    });
    out
}
