//! The IR links the planner builds on top of the kernel tree (spec §2.2): the graph of every
//! expression (root, grid, device loop, then-branch, else-branch), its parent (an expression or
//! a statement slot), reaching definitions of names, index resolution through renames and
//! captures (`_resolve_node`) and the effective users of a value (`_effective_users`).
//!
//! Our IR is a tree, not FX graphs. The correspondence used throughout the planner:
//! * a node is an [`Expr`]; a name read in the graph that defines it is that node;
//! * `y = x` (an `Assign` whose value is a name) is Helion's `_new_var` transport;
//! * a name read inside a nested loop/if graph of the graph that defines it is a capture
//!   placeholder (a transport);
//! * a name read reached by several definitions (a loop-carried value or a merge after an `if`)
//!   or read outside the graph that defines it is a `_phi`/graph output: a semantic user.
//!
//! The outermost `hl.grid`/`hl.tile` body is Helion's root (grid) graph, not a device loop
//! (spec §1.2); nested loops are device loops (`ForLoopGraphInfo`).

use crate::ir::{AllocShape, Case, Expr, ExprKind, Index, Loop, NodeKey, Stmt, StmtKind, ViewOp};
use std::collections::{HashMap, HashSet};

/// Index of a graph in [`Links::graphs`].
pub(crate) type GraphId = usize;

/// What a graph is (Helion's graph-info kinds, spec §2.2).
#[derive(Clone, Copy, Debug)]
pub(crate) enum GraphKind<'a> {
    /// The kernel body (host code).
    Root,
    /// The body of an outermost loop: the launch grid, part of Helion's root graph.
    Grid,
    /// A device loop body (`ForLoopGraphInfo`), with its `for` statement.
    Loop(&'a Loop, &'a Stmt),
    /// The then-branch of an `if` (`IfGraphInfo`), with the `if` statement.
    Then(&'a Stmt),
    /// The else-branch of an `if` (`ElseGraphInfo`).
    Else,
}

/// One graph.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Graph<'a> {
    /// Its kind.
    pub kind: GraphKind<'a>,
    /// The enclosing graph (none for the root).
    pub parent: Option<GraphId>,
}

/// Where an expression sits in its statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// `name = <e>`.
    AssignValue,
    /// `name op= <e>`.
    AugValue,
    /// The name updated by `name op= e` (a read of it).
    AugTarget,
    /// An index entry of a store or atomic.
    WriteIndex,
    /// The stored value, or an atomic's value/expected operand.
    WriteValue,
    /// An `if` condition.
    IfCond,
    /// A loop bound or block size.
    LoopBound,
    /// A returned value.
    Return,
}

/// The parent of an expression.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Parent<'a> {
    /// A sub-expression of this expression.
    Expr(&'a Expr),
    /// A top-level expression of this statement.
    Stmt(&'a Stmt, Slot),
}

/// Facts about one expression node.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ExprInfo<'a> {
    /// Its parent.
    pub parent: Parent<'a>,
    /// The graph it is evaluated in.
    pub graph: GraphId,
    /// Evaluation order (post-order over the kernel: operands before their users).
    pub order: usize,
}

/// Index of a definition in [`Links::defs`].
pub(crate) type DefId = usize;

/// What binds a name.
#[derive(Clone, Copy, Debug)]
pub(crate) enum DefKind<'a> {
    /// `name = value`.
    Assign(&'a Expr),
    /// `name op= value`.
    Aug,
    /// A loop variable.
    LoopVar,
    /// A kernel parameter.
    Param,
}

/// One definition of a name.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Def<'a> {
    /// What binds it.
    pub kind: DefKind<'a>,
    /// The graph it is bound in.
    pub graph: GraphId,
}

/// A read of a name.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Read<'a> {
    /// A `Name` expression.
    Name(&'a Expr),
    /// The target of `name op= e`.
    Aug(&'a Stmt),
}

/// The semantic user of a value, found by [`Links::effective_users`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum User<'a> {
    /// An expression using the value through `operand` (a direct child of `user`).
    Expr {
        /// The using expression.
        user: &'a Expr,
        /// Its child the value flows through.
        operand: &'a Expr,
    },
    /// A statement using the value in `slot`.
    Stmt(&'a Stmt, Slot),
    /// A name read that is a `_phi` (several reaching definitions) or a graph output (read
    /// outside the graph that defines it).
    Merge(&'a Expr),
}

/// A semantic user with the transports on its path (spec §2.2 `_effective_users`).
#[derive(Clone, Debug)]
pub(crate) struct Use<'a> {
    /// The user.
    pub user: User<'a>,
    /// Name reads the value passed through (same-graph references, `_new_var` renames,
    /// capture placeholders), in path order.
    pub transports: Vec<&'a Expr>,
}

impl<'a> Use<'a> {
    /// The source position of the user.
    pub fn span(&self) -> crate::ir::Span {
        match self.user {
            User::Expr { user, .. } => user.span,
            User::Stmt(s, _) => s.span,
            User::Merge(e) => e.span,
        }
    }
}

/// How a name read gets its value (for the static-value fallback's input walk, spec §2.10).
#[derive(Clone, Copy, Debug)]
pub(crate) enum ReadOrigin<'a> {
    /// One definition in the same graph: the read is that node.
    Same(Def<'a>),
    /// A capture placeholder (the definition is in an enclosing graph).
    Placeholder,
    /// A `_phi` or graph output.
    Merge,
}

/// All links of one case.
pub(crate) struct Links<'a> {
    /// Graphs; 0 is the root.
    pub graphs: Vec<Graph<'a>>,
    /// Every expression.
    pub exprs: HashMap<NodeKey, ExprInfo<'a>>,
    /// Every definition.
    pub defs: Vec<Def<'a>>,
    /// Reaching definitions of every name read (sorted, deduplicated).
    reach: HashMap<NodeKey, (&'a Expr, Vec<DefId>)>,
    /// Reaching definitions of the target of every augmented assignment, by statement address.
    aug_reach: HashMap<usize, (&'a Stmt, Vec<DefId>)>,
    /// Definition made by every `Assign`/`AugAssign` statement, by statement address.
    def_of_stmt: HashMap<usize, DefId>,
    /// Body graphs of every `for` (one) and `if` (then, else), by statement address.
    body_graphs: HashMap<usize, (GraphId, GraphId)>,
    /// Evaluation order of every augmented assignment's update, by statement address.
    stmt_order: HashMap<usize, usize>,
    /// Reads reached by each definition, in evaluation order.
    def_users: Vec<Vec<Read<'a>>>,
    /// Loads in evaluation order.
    pub loads: Vec<&'a Expr>,
    /// Subscripts in evaluation order.
    pub subscripts: Vec<&'a Expr>,
    /// Tensors written by stores and atomics.
    pub writes: Vec<&'a str>,
}

fn addr<T>(x: &T) -> usize {
    x as *const T as usize
}

/// Name → reaching definitions during the walk.
type Env = HashMap<String, Vec<DefId>>;

fn join_env(a: &mut Env, b: &Env) {
    for (k, v) in b {
        let e = a.entry(k.clone()).or_default();
        for d in v {
            if !e.contains(d) {
                e.push(*d);
            }
        }
        e.sort_unstable();
    }
}

/// The direct children of an expression (index entries included), in evaluation order.
pub(crate) fn children(e: &Expr) -> Vec<&Expr> {
    let mut out: Vec<&Expr> = Vec::new();
    fn index_children<'e>(indices: &'e [Index], out: &mut Vec<&'e Expr>) {
        for index in indices {
            match index {
                Index::Full | Index::NewAxis | Index::Int(_) => {}
                Index::Slice { start, stop, step } => {
                    out.extend([start, stop, step].into_iter().flatten());
                }
                Index::Expr(x) => out.push(x),
            }
        }
    }
    match &e.kind {
        ExprKind::Name(_) | ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::TileAttr { .. } => {}
        ExprKind::Size { value, .. }
        | ExprKind::Cast { value, .. }
        | ExprKind::Sum { value, .. }
        | ExprKind::Permute { value, .. } => out.push(value),
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::Compare { lhs, rhs, .. } => {
            out.push(lhs);
            out.push(rhs);
        }
        ExprKind::Load { indices, .. } => index_children(indices, &mut out),
        ExprKind::Subscript { value, indices } => {
            out.push(value);
            index_children(indices, &mut out);
        }
        ExprKind::Arange { start, end, step } => {
            out.extend(start.as_deref());
            out.push(end);
            out.extend(step.as_deref());
        }
        ExprKind::Zeros { shape, .. } => out.extend(shape.iter()),
        ExprKind::Full { shape, value, .. } => {
            out.extend(shape.iter());
            out.push(value);
        }
        ExprKind::View { value, op } => {
            out.push(value);
            match op {
                ViewOp::Reshape(d) | ViewOp::View(d) => out.extend(d.iter()),
                ViewOp::Squeeze(_) | ViewOp::Unsqueeze(_) => {}
                ViewOp::ViewAs(o) => out.push(o),
            }
        }
        ExprKind::Alloc { shape, .. } => match shape {
            AllocShape::Dims(d) => out.extend(d.iter()),
            AllocShape::Like(t) => out.push(t),
        },
    }
    out
}

/// Top-level expressions of a statement with their slots, in evaluation order.
fn stmt_slots(stmt: &Stmt) -> Vec<(&Expr, Slot)> {
    let mut out = Vec::new();
    fn index_exprs<'e>(indices: &'e [Index], out: &mut Vec<(&'e Expr, Slot)>) {
        for index in indices {
            match index {
                Index::Full | Index::NewAxis | Index::Int(_) => {}
                Index::Slice { start, stop, step } => {
                    out.extend(
                        [start, stop, step]
                            .into_iter()
                            .flatten()
                            .map(|e| (e, Slot::WriteIndex)),
                    );
                }
                Index::Expr(e) => out.push((e, Slot::WriteIndex)),
            }
        }
    }
    match &stmt.kind {
        StmtKind::Assign { value, .. } => out.push((value, Slot::AssignValue)),
        StmtKind::AugAssign { value, .. } => out.push((value, Slot::AugValue)),
        StmtKind::Store { indices, value, .. } => {
            index_exprs(indices, &mut out);
            out.push((value, Slot::WriteValue));
        }
        StmtKind::Atomic {
            indices,
            expected,
            value,
            ..
        } => {
            index_exprs(indices, &mut out);
            if let Some(x) = expected {
                out.push((x, Slot::WriteValue));
            }
            out.push((value, Slot::WriteValue));
        }
        StmtKind::For(lp) => {
            for d in &lp.dims {
                out.extend(d.begin.iter().map(|e| (e, Slot::LoopBound)));
                out.push((&d.end, Slot::LoopBound));
                out.extend(d.block_size.iter().map(|e| (e, Slot::LoopBound)));
            }
        }
        StmtKind::If { cond, .. } => out.push((cond, Slot::IfCond)),
        StmtKind::Return(values) => out.extend(values.iter().map(|v| (v, Slot::Return))),
    }
    out
}

impl<'a> Links<'a> {
    /// Builds the links of `case`.
    pub fn build(case: &'a Case) -> Links<'a> {
        let mut l = Links {
            graphs: vec![Graph {
                kind: GraphKind::Root,
                parent: None,
            }],
            exprs: HashMap::new(),
            defs: Vec::new(),
            reach: HashMap::new(),
            aug_reach: HashMap::new(),
            def_of_stmt: HashMap::new(),
            body_graphs: HashMap::new(),
            stmt_order: HashMap::new(),
            def_users: Vec::new(),
            loads: Vec::new(),
            subscripts: Vec::new(),
            writes: Vec::new(),
        };
        let mut order = 0;
        l.structure(&case.kernel.body, 0, 0, &mut order);
        let mut env = Env::new();
        for p in &case.kernel.params {
            let id = l.defs.len();
            l.defs.push(Def {
                kind: DefKind::Param,
                graph: 0,
            });
            env.insert(p.name.clone(), vec![id]);
        }
        l.flow(&case.kernel.body, &mut env, 0);
        let mut reads: Vec<(usize, Read<'a>, Vec<DefId>)> = Vec::new();
        for (k, (e, ds)) in &l.reach {
            let o = l.exprs.get(k).map_or(0, |i| i.order);
            reads.push((o, Read::Name(e), ds.clone()));
        }
        for (a, (s, ds)) in &l.aug_reach {
            let o = l.stmt_order.get(a).copied().unwrap_or(0);
            reads.push((o, Read::Aug(s), ds.clone()));
        }
        reads.sort_by_key(|(o, _, _)| *o);
        l.def_users = vec![Vec::new(); l.defs.len()];
        for (_, r, ds) in reads {
            for d in ds {
                if let Some(u) = l.def_users.get_mut(d) {
                    u.push(r);
                }
            }
        }
        l
    }

    /// Pass 1: graphs, parents, evaluation order, loads, subscripts and writes.
    fn structure(&mut self, body: &'a [Stmt], graph: GraphId, depth: usize, order: &mut usize) {
        for stmt in body {
            for (e, slot) in stmt_slots(stmt) {
                self.expr_tree(e, Parent::Stmt(stmt, slot), graph, order);
            }
            match &stmt.kind {
                StmtKind::Assign { .. } | StmtKind::Return(_) => {}
                StmtKind::AugAssign { .. } => {
                    self.stmt_order.insert(addr(stmt), *order);
                    *order += 1;
                }
                StmtKind::Store { tensor, .. } | StmtKind::Atomic { tensor, .. } => {
                    self.writes.push(tensor);
                }
                StmtKind::For(lp) => {
                    let kind = if depth == 0 {
                        GraphKind::Grid
                    } else {
                        GraphKind::Loop(lp, stmt)
                    };
                    let g = self.graphs.len();
                    self.graphs.push(Graph {
                        kind,
                        parent: Some(graph),
                    });
                    self.body_graphs.insert(addr(stmt), (g, g));
                    self.structure(&lp.body, g, depth + 1, order);
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
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
                    self.body_graphs.insert(addr(stmt), (t, e));
                    self.structure(then_body, t, depth, order);
                    self.structure(else_body, e, depth, order);
                }
            }
        }
    }

    fn expr_tree(&mut self, e: &'a Expr, parent: Parent<'a>, graph: GraphId, order: &mut usize) {
        for c in children(e) {
            self.expr_tree(c, Parent::Expr(e), graph, order);
        }
        self.exprs.insert(
            NodeKey::of(e),
            ExprInfo {
                parent,
                graph,
                order: *order,
            },
        );
        *order += 1;
        match &e.kind {
            ExprKind::Load { .. } => self.loads.push(e),
            ExprKind::Subscript { .. } => self.subscripts.push(e),
            ExprKind::Name(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Size { .. }
            | ExprKind::TileAttr { .. }
            | ExprKind::Binary { .. }
            | ExprKind::Compare { .. }
            | ExprKind::Arange { .. }
            | ExprKind::Zeros { .. }
            | ExprKind::Full { .. }
            | ExprKind::Cast { .. }
            | ExprKind::Sum { .. }
            | ExprKind::View { .. }
            | ExprKind::Permute { .. }
            | ExprKind::Alloc { .. } => {}
        }
    }

    fn new_def(&mut self, kind: DefKind<'a>, graph: GraphId) -> DefId {
        self.defs.push(Def { kind, graph });
        self.defs.len() - 1
    }

    /// Records the reaching definitions of every name read in `e`.
    fn reads_in(&mut self, e: &'a Expr, env: &Env) {
        if let ExprKind::Name(n) = &e.kind {
            let ds = env.get(n).cloned().unwrap_or_default();
            self.reach.insert(NodeKey::of(e), (e, ds));
        }
        for c in children(e) {
            self.reads_in(c, env);
        }
    }

    /// Pass 2: reaching definitions. Loop bodies are walked until their entry environment is
    /// stable (a definition late in the body reaches reads early in it: a loop-carried value).
    fn flow(&mut self, body: &'a [Stmt], env: &mut Env, graph: GraphId) {
        for stmt in body {
            for (e, _) in stmt_slots(stmt) {
                self.reads_in(e, env);
            }
            match &stmt.kind {
                StmtKind::Assign { target, value } => {
                    let d = match self.def_of_stmt.get(&addr(stmt)) {
                        Some(&d) => d,
                        None => {
                            let d = self.new_def(DefKind::Assign(value), graph);
                            self.def_of_stmt.insert(addr(stmt), d);
                            d
                        }
                    };
                    env.insert(target.clone(), vec![d]);
                }
                StmtKind::AugAssign { target, .. } => {
                    let ds = env.get(target).cloned().unwrap_or_default();
                    self.aug_reach.insert(addr(stmt), (stmt, ds));
                    let d = match self.def_of_stmt.get(&addr(stmt)) {
                        Some(&d) => d,
                        None => {
                            let d = self.new_def(DefKind::Aug, graph);
                            self.def_of_stmt.insert(addr(stmt), d);
                            d
                        }
                    };
                    env.insert(target.clone(), vec![d]);
                }
                StmtKind::Store { .. } | StmtKind::Atomic { .. } | StmtKind::Return(_) => {}
                StmtKind::For(lp) => {
                    let Some(&(g, _)) = self.body_graphs.get(&addr(stmt)) else {
                        continue;
                    };
                    let var_defs: Vec<DefId> = match self.def_of_stmt.get(&addr(stmt)) {
                        Some(&first) => (first..first + lp.vars.len()).collect(),
                        None => {
                            let ids: Vec<DefId> = lp
                                .vars
                                .iter()
                                .map(|_| self.new_def(DefKind::LoopVar, g))
                                .collect();
                            if let Some(&f) = ids.first() {
                                self.def_of_stmt.insert(addr(stmt), f);
                            }
                            ids
                        }
                    };
                    let mut entry = env.clone();
                    for (v, d) in lp.vars.iter().zip(&var_defs) {
                        entry.insert(v.clone(), vec![*d]);
                    }
                    // At most a few rounds: environments only grow, over finitely many defs.
                    for _ in 0..8 {
                        let mut out = entry.clone();
                        self.flow(&lp.body, &mut out, g);
                        let mut next = entry.clone();
                        join_env(&mut next, &out);
                        if next == entry {
                            break;
                        }
                        entry = next;
                    }
                    join_env(env, &entry);
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    let Some(&(t, e)) = self.body_graphs.get(&addr(stmt)) else {
                        continue;
                    };
                    let mut te = env.clone();
                    self.flow(then_body, &mut te, t);
                    let mut ee = env.clone();
                    self.flow(else_body, &mut ee, e);
                    *env = te;
                    join_env(env, &ee);
                }
            }
        }
    }

    /// Facts about `e` (an expression of the case the links were built from).
    pub fn info(&self, e: &Expr) -> Option<&ExprInfo<'a>> {
        self.exprs.get(&NodeKey::of(e))
    }

    /// The graph `e` is evaluated in (the root if unknown).
    pub fn graph_of(&self, e: &Expr) -> GraphId {
        self.info(e).map_or(0, |i| i.graph)
    }

    /// Whether graph `inner` is `outer` or nested inside it.
    pub fn within(&self, mut inner: GraphId, outer: GraphId) -> bool {
        loop {
            if inner == outer {
                return true;
            }
            match self.graphs.get(inner).and_then(|g| g.parent) {
                Some(p) => inner = p,
                None => return false,
            }
        }
    }

    /// The reaching definitions of a name read.
    pub fn reaching(&self, name_read: &Expr) -> &[DefId] {
        self.reach
            .get(&NodeKey::of(name_read))
            .map_or(&[], |(_, d)| d.as_slice())
    }

    /// How a name read gets its value.
    pub fn read_origin(&self, name_read: &Expr) -> ReadOrigin<'a> {
        let g = self.graph_of(name_read);
        let ds = self.reaching(name_read);
        if ds
            .iter()
            .any(|&d| self.defs[d].graph != g && self.within(g, self.defs[d].graph))
        {
            return ReadOrigin::Placeholder;
        }
        match ds {
            [d] if self.defs[*d].graph == g => ReadOrigin::Same(self.defs[*d]),
            _ => ReadOrigin::Merge,
        }
    }

    /// `_resolve_node`: follows name reads with one reaching `name = value` definition (same
    /// graph, `_new_var` rename or capture placeholder) to the defining value; stops at the first
    /// other node. Cycles stop the walk (never loop).
    pub fn resolve(&self, mut e: &'a Expr) -> &'a Expr {
        let mut seen = HashSet::new();
        while let ExprKind::Name(_) = &e.kind {
            if !seen.insert(NodeKey::of(e)) {
                break;
            }
            let g = self.graph_of(e);
            match self.reaching(e) {
                [d] => match self.defs[*d].kind {
                    DefKind::Assign(value) if self.within(g, self.defs[*d].graph) => e = value,
                    DefKind::Assign(_) | DefKind::Aug | DefKind::LoopVar | DefKind::Param => {
                        break;
                    }
                },
                _ => break,
            }
        }
        e
    }

    /// The reads a definition reaches, in evaluation order.
    pub fn def_users(&self, d: DefId) -> &[Read<'a>] {
        self.def_users.get(d).map_or(&[], Vec::as_slice)
    }

    /// The definition an `Assign`/`AugAssign` statement makes.
    pub fn def_of(&self, stmt: &Stmt) -> Option<DefId> {
        self.def_of_stmt.get(&addr(stmt)).copied()
    }

    /// `_effective_users`: the semantic users of the value of `node`, in evaluation order, each
    /// with the transports on its path. Shape reads (`.size(d)`, the `view_as` shape operand)
    /// are skipped; name reads reached by exactly this definition inside its graph are walked
    /// through.
    pub fn effective_users(&self, node: &'a Expr) -> Vec<Use<'a>> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        self.collect_users(node, Vec::new(), &mut out, &mut seen);
        out.sort_by_key(|u| self.use_order(u));
        out
    }

    /// The users of the value a definition binds (the reads it reaches).
    pub fn users_of_def(&self, d: DefId) -> Vec<Use<'a>> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        self.collect_def_users(d, Vec::new(), &mut out, &mut seen);
        out.sort_by_key(|u| self.use_order(u));
        out
    }

    fn use_order(&self, u: &Use<'a>) -> usize {
        match u.user {
            User::Expr { user, .. } => self.info(user).map_or(0, |i| i.order),
            User::Merge(e) => self.info(e).map_or(0, |i| i.order),
            User::Stmt(s, _) => match self.stmt_order.get(&addr(s)) {
                Some(&o) => o,
                None => stmt_slots(s)
                    .last()
                    .and_then(|(e, _)| self.info(e))
                    .map_or(usize::MAX, |i| i.order),
            },
        }
    }

    fn collect_users(
        &self,
        node: &'a Expr,
        transports: Vec<&'a Expr>,
        out: &mut Vec<Use<'a>>,
        seen: &mut HashSet<NodeKey>,
    ) {
        let Some(info) = self.info(node) else { return };
        match info.parent {
            Parent::Expr(p) => {
                let shape_read = match &p.kind {
                    ExprKind::Size { .. } => true,
                    ExprKind::View {
                        value,
                        op: ViewOp::ViewAs(_),
                    } => !std::ptr::eq(&**value, node),
                    _ => false,
                };
                if !shape_read {
                    out.push(Use {
                        user: User::Expr {
                            user: p,
                            operand: node,
                        },
                        transports,
                    });
                }
            }
            Parent::Stmt(s, Slot::AssignValue) => {
                if let Some(d) = self.def_of(s) {
                    self.collect_def_users(d, transports, out, seen);
                }
            }
            Parent::Stmt(s, slot) => out.push(Use {
                user: User::Stmt(s, slot),
                transports,
            }),
        }
    }

    fn collect_def_users(
        &self,
        d: DefId,
        transports: Vec<&'a Expr>,
        out: &mut Vec<Use<'a>>,
        seen: &mut HashSet<NodeKey>,
    ) {
        let dg = self.defs[d].graph;
        for r in self.def_users(d) {
            match *r {
                Read::Name(re) => {
                    let g = self.graph_of(re);
                    if self.reaching(re) == [d] && self.within(g, dg) {
                        if seen.insert(NodeKey::of(re)) {
                            let mut t = transports.clone();
                            t.push(re);
                            self.collect_users(re, t, out, seen);
                        }
                    } else {
                        out.push(Use {
                            user: User::Merge(re),
                            transports: transports.clone(),
                        });
                    }
                }
                Read::Aug(s) => out.push(Use {
                    user: User::Stmt(s, Slot::AugTarget),
                    transports: transports.clone(),
                }),
            }
        }
    }
}
