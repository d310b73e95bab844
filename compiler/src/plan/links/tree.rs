//! Pass 1 of [`Links::build`]: the walk of the kernel tree that numbers graphs, parents,
//! evaluation order, definitions and name reads, and the child and slot orders it walks in.

use super::{
    DefKind, ExprInfo, Graph, GraphId, GraphKind, Links, Parent, Read, ReadRec, Slot, StmtInfo,
    addr,
};
use lang::ir::{AllocShape, Expr, ExprKind, Index, NodeKey, Stmt, StmtKind, ViewOp};

/// Graph positions in post-order (children first, siblings in source order, an `if`'s else
/// graph before its then graph; D-1.5.1-04).
pub(super) fn post_order(graphs: &[Graph<'_>]) -> Vec<usize> {
    let mut children: Vec<Vec<GraphId>> = vec![Vec::new(); graphs.len()];
    for (g, graph) in graphs.iter().enumerate() {
        if let Some(p) = graph.parent {
            children[p].push(g);
        }
    }
    // Then and else graphs are created in that order, next to each other: swap each pair.
    for list in &mut children {
        for i in 1..list.len() {
            if matches!(graphs[list[i]].kind, GraphKind::Else)
                && matches!(graphs[list[i - 1]].kind, GraphKind::Then(_))
            {
                list.swap(i - 1, i);
            }
        }
    }
    let mut order = vec![0; graphs.len()];
    let mut next = 0;
    // Iterative post-order: a deep nest must not overflow the stack.
    let mut stack: Vec<(GraphId, usize)> = vec![(0, 0)];
    while let Some((g, i)) = stack.pop() {
        if let Some(&c) = children[g].get(i) {
            stack.push((g, i + 1));
            stack.push((c, 0));
        } else {
            order[g] = next;
            next += 1;
        }
    }
    order
}

/// Calls `f` on the direct children of an expression (index entries included), in evaluation
/// order.
// Inlined into its callers, as it was before links.rs was split (out of line, with `stmt_slots`:
// ~8M more instructions in a 2,000-case campaign, callgrind).
#[inline]
fn for_each_child<'e>(e: &'e Expr, f: &mut impl FnMut(&'e Expr)) {
    fn index_children<'e>(indices: &'e [Index], f: &mut impl FnMut(&'e Expr)) {
        for index in indices {
            match index {
                Index::Full | Index::NewAxis | Index::Int(_) => {}
                Index::Slice { start, stop, step } => {
                    [start, stop, step].into_iter().flatten().for_each(&mut *f);
                }
                Index::Expr(x) => f(x),
            }
        }
    }
    match &e.kind {
        ExprKind::Name(_) | ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::TileAttr { .. } => {}
        ExprKind::Size { value, .. }
        | ExprKind::Cast { value, .. }
        | ExprKind::Sum { value, .. }
        | ExprKind::Permute { value, .. } => f(value),
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::Compare { lhs, rhs, .. } => {
            f(lhs);
            f(rhs);
        }
        ExprKind::Op { args, .. } => args.iter().for_each(&mut *f),
        ExprKind::Load { indices, .. } => index_children(indices, f),
        ExprKind::Subscript { value, indices } => {
            f(value);
            index_children(indices, f);
        }
        ExprKind::Arange { start, end, step } => {
            if let Some(s) = start {
                f(s);
            }
            f(end);
            if let Some(s) = step {
                f(s);
            }
        }
        ExprKind::Zeros { shape, .. } => shape.iter().for_each(f),
        ExprKind::Full { shape, value, .. } => {
            shape.iter().for_each(&mut *f);
            f(value);
        }
        ExprKind::View { value, op } => {
            f(value);
            match op {
                ViewOp::Reshape(d) | ViewOp::View(d) => d.iter().for_each(f),
                ViewOp::Squeeze(_) | ViewOp::Unsqueeze(_) => {}
                ViewOp::ViewAs(o) => f(o),
            }
        }
        ExprKind::Alloc { shape, .. } => match shape {
            AllocShape::Dims(d) => d.iter().for_each(f),
            AllocShape::Like(t) => f(t),
        },
    }
}

/// Top-level expressions of a statement with their slots, in evaluation order.
#[inline]
fn stmt_slots<'e>(stmt: &'e Stmt, f: &mut impl FnMut(&'e Expr, Slot)) {
    fn index_exprs<'e>(indices: &'e [Index], f: &mut impl FnMut(&'e Expr, Slot)) {
        for index in indices {
            match index {
                Index::Full | Index::NewAxis | Index::Int(_) => {}
                Index::Slice { start, stop, step } => {
                    for e in [start, stop, step].into_iter().flatten() {
                        f(e, Slot::WriteIndex);
                    }
                }
                Index::Expr(e) => f(e, Slot::WriteIndex),
            }
        }
    }
    match &stmt.kind {
        StmtKind::Assign { value, .. } => f(value, Slot::AssignValue),
        StmtKind::AugAssign { value, .. } => f(value, Slot::AugValue),
        StmtKind::Store { indices, value, .. } => {
            index_exprs(indices, f);
            f(value, Slot::WriteValue);
        }
        StmtKind::Atomic {
            indices,
            expected,
            value,
            ..
        } => {
            index_exprs(indices, f);
            if let Some(x) = expected {
                f(x, Slot::WriteValue);
            }
            f(value, Slot::WriteValue);
        }
        StmtKind::For(lp) => {
            for d in &lp.dims {
                if let Some(b) = &d.begin {
                    f(b, Slot::LoopBound);
                }
                f(&d.end, Slot::LoopBound);
                if let Some(b) = &d.block_size {
                    f(b, Slot::LoopBound);
                }
            }
        }
        StmtKind::If { cond, .. } => f(cond, Slot::IfCond),
        StmtKind::Return(values) => values.iter().for_each(|v| f(v, Slot::Return)),
    }
}

impl<'a> Links<'a> {
    /// Pass 1: graphs, parents, evaluation order, definitions, name reads, loads, subscripts and
    /// writes.
    pub(super) fn structure(
        &mut self,
        body: &'a [Stmt],
        graph: GraphId,
        depth: usize,
        order: &mut usize,
    ) {
        for stmt in body {
            let first_read = self.stmt_reads.len();
            stmt_slots(stmt, &mut |e, slot| {
                self.expr_tree(e, Parent::Stmt(stmt, slot), graph, order)
            });
            let mut info = StmtInfo {
                order: *order,
                ..StmtInfo::default()
            };
            *order += 1;
            match &stmt.kind {
                StmtKind::Return(_) => {}
                StmtKind::Assign { target, value } => {
                    info.name = self.intern(target);
                    info.def = Some(self.new_def(DefKind::Assign(value), graph));
                }
                StmtKind::AugAssign { target, .. } => {
                    info.name = self.intern(target);
                    let r = self.reads.len();
                    self.reads.push(ReadRec {
                        read: Read::Aug(stmt),
                        name: info.name,
                    });
                    self.stmt_reads.push(r);
                    info.def = Some(self.new_def(DefKind::Aug, graph));
                }
                StmtKind::Store { tensor, .. } | StmtKind::Atomic { tensor, .. } => {
                    self.writes.push(tensor);
                }
                StmtKind::For(lp) => {
                    let kind = if depth == 0 {
                        GraphKind::Grid
                    } else {
                        GraphKind::Loop(lp)
                    };
                    let g = self.graphs.len();
                    self.graphs.push(Graph {
                        kind,
                        parent: Some(graph),
                    });
                    info.body = (g, g);
                    let first_var = self.loop_var_names.len();
                    for v in &lp.vars {
                        let name = self.intern(v);
                        self.loop_var_names.push(name);
                    }
                    info.vars = first_var..self.loop_var_names.len();
                    let first = self.defs.len();
                    for _ in &lp.vars {
                        self.new_def(DefKind::LoopVar, g);
                    }
                    info.def = (!lp.vars.is_empty()).then_some(first);
                }
                StmtKind::If { .. } => {
                    let t = self.graphs.len();
                    self.graphs.push(Graph {
                        kind: GraphKind::Then(stmt),
                        parent: Some(graph),
                    });
                    let e = self.graphs.len();
                    self.graphs.push(Graph {
                        kind: GraphKind::Else,
                        parent: Some(graph),
                    });
                    info.body = (t, e);
                }
            }
            info.reads = first_read..self.stmt_reads.len();
            let body_graphs = info.body;
            self.stmts.insert(addr(stmt), info);
            match &stmt.kind {
                StmtKind::For(lp) => self.structure(&lp.body, body_graphs.0, depth + 1, order),
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    self.structure(then_body, body_graphs.0, depth, order);
                    self.structure(else_body, body_graphs.1, depth, order);
                }
                StmtKind::Assign { .. }
                | StmtKind::AugAssign { .. }
                | StmtKind::Store { .. }
                | StmtKind::Atomic { .. }
                | StmtKind::Return(_) => {}
            }
        }
    }

    pub(super) fn expr_tree(
        &mut self,
        e: &'a Expr,
        parent: Parent<'a>,
        graph: GraphId,
        order: &mut usize,
    ) {
        for_each_child(e, &mut |c| self.expr_tree(c, Parent::Expr(e), graph, order));
        let mut read = None;
        if let ExprKind::Name(n) = &e.kind {
            let name = self.intern(n);
            let r = self.reads.len();
            self.reads.push(ReadRec {
                read: Read::Name(e),
                name,
            });
            self.stmt_reads.push(r);
            read = Some(r);
        }
        self.exprs.insert(
            NodeKey::of(e),
            ExprInfo {
                parent,
                graph,
                order: *order,
                read,
            },
        );
        *order += 1;
        if matches!(e.kind, ExprKind::Load { .. }) {
            self.loads.push(e);
        } else if matches!(e.kind, ExprKind::Subscript { .. }) {
            self.subscripts.push(e);
        }
    }
}
