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

use lang::ir::{AllocShape, Case, Expr, ExprKind, Index, Loop, NodeKey, Stmt, StmtKind, ViewOp};

/// Index of a graph in [`Links::graphs`].
pub(crate) type GraphId = usize;

/// What a graph is (Helion's graph-info kinds, spec §2.2).
#[derive(Clone, Copy, Debug)]
pub(crate) enum GraphKind<'a> {
    /// The kernel body (host code).
    Root,
    /// The body of an outermost loop: the launch grid, part of Helion's root graph.
    Grid,
    /// A device loop body (`ForLoopGraphInfo`), with its loop.
    Loop(&'a Loop),
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
    /// For a name read: its index among the reads.
    pub read: Option<usize>,
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
    pub fn span(&self) -> lang::ir::Span {
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

pub(crate) use lang::ir::hash::FastMap;

/// Facts about one statement.
#[derive(Clone, Debug, Default)]
struct StmtInfo {
    /// The definition it makes (`Assign`, `AugAssign`), or its first loop variable's (`For`).
    def: Option<DefId>,
    /// The name it binds (`Assign`, `AugAssign`).
    name: u32,
    /// Body graphs: (loop, loop) for `For`, (then, else) for `If`.
    body: (GraphId, GraphId),
    /// Evaluation order (after its own expressions).
    order: usize,
    /// Name reads of its own expressions (a range of `stmt_reads`); for `AugAssign`, the read of
    /// its target comes last.
    reads: std::ops::Range<usize>,
    /// `For`: its loop variables' interned names (a range of `loop_var_names`).
    vars: std::ops::Range<usize>,
}

/// A name read.
#[derive(Clone, Copy, Debug)]
struct ReadRec<'a> {
    read: Read<'a>,
    name: u32,
}

/// All links of one case.
pub(crate) struct Links<'a> {
    /// Graphs; 0 is the root.
    pub graphs: Vec<Graph<'a>>,
    /// Each graph's position in Helion's `device_ir.graphs` order (D-1.5.1-04): post-order,
    /// siblings in source order, an `if`'s else before its then.
    pub graph_order: Vec<usize>,
    /// Every expression.
    pub exprs: FastMap<NodeKey, ExprInfo<'a>>,
    /// Every definition.
    pub defs: Vec<Def<'a>>,
    /// Every statement, by address.
    stmts: FastMap<usize, StmtInfo>,
    /// Names, interned.
    names: FastMap<&'a str, u32>,
    /// Name reads, in evaluation order.
    reads: Vec<ReadRec<'a>>,
    /// Read indices of the statements' reads, concatenated (ranges in [`StmtInfo::reads`]).
    stmt_reads: Vec<usize>,
    /// Interned names of the loops' variables, concatenated (ranges in [`StmtInfo::vars`]).
    loop_var_names: Vec<u32>,
    /// Reaching definitions of each read (sorted), concatenated: read `r`'s are
    /// `reach[reach_at[r]..reach_at[r + 1]]`. Flat, like `def_users`: a `Vec` per read and per
    /// definition was ~2% of the planner's instructions in allocations.
    reach: Vec<DefId>,
    /// Offsets into `reach`, one per read and one past the end.
    reach_at: Vec<usize>,
    /// Reads reached by each definition, in evaluation order, concatenated: definition `d`'s
    /// are `def_users[def_users_at[d]..def_users_at[d + 1]]`.
    def_users: Vec<Read<'a>>,
    /// Offsets into `def_users`, one per definition and one past the end.
    def_users_at: Vec<usize>,
    /// Loads in evaluation order.
    pub loads: Vec<&'a Expr>,
    /// Subscripts in evaluation order.
    pub subscripts: Vec<&'a Expr>,
    /// Tensors written by stores and atomics.
    pub writes: Vec<&'a str>,
}

/// Graph positions in post-order (children first, siblings in source order, an `if`'s else
/// graph before its then graph; D-1.5.1-04).
fn post_order(graphs: &[Graph<'_>]) -> Vec<usize> {
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

fn addr<T>(x: &T) -> usize {
    x as *const T as usize
}

/// Calls `f` on the direct children of an expression (index entries included), in evaluation
/// order.
pub(crate) fn for_each_child<'e>(e: &'e Expr, f: &mut impl FnMut(&'e Expr)) {
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

/// Working state of the flow pass.
#[derive(Default)]
struct Flow {
    /// Spare environments for branches and loop bodies.
    pool: Vec<Env>,
    /// Per loop (by address): the definitions its body makes that reach its end.
    made: FastMap<usize, Env>,
}

/// Reaching definitions as a flat bitset: `words` u64 per slot (an interned name, or a read).
#[derive(Clone, PartialEq, Eq)]
struct Env {
    words: usize,
    bits: Vec<u64>,
}

impl Env {
    fn new(slots: usize, defs: usize) -> Env {
        let words = defs.div_ceil(64).max(1);
        Env {
            words,
            bits: vec![0; slots * words],
        }
    }
    fn slot(&self, slot: usize) -> std::ops::Range<usize> {
        let s = slot * self.words;
        s..s + self.words
    }
    fn set(&mut self, name: u32, def: DefId) {
        let r = self.slot(name as usize);
        if let Some(w) = self.bits.get_mut(r) {
            w.fill(0);
            if let Some(x) = w.get_mut(def / 64) {
                *x |= 1 << (def % 64);
            }
        }
    }
    fn join(&mut self, other: &Env) {
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a |= b;
        }
    }
    /// A copy of `self`, in a buffer of `pool` when there is one (flow's environments are
    /// all the same size: cloning one per branch and loop pass was most of its allocations).
    fn copy_in(&self, pool: &mut Vec<Env>) -> Env {
        match pool.pop() {
            Some(mut e) if e.bits.len() == self.bits.len() => {
                e.bits.copy_from_slice(&self.bits);
                e
            }
            Some(_) | None => self.clone(),
        }
    }
    /// Appends the definitions in `slot`, ascending.
    fn push_defs(&self, slot: usize, out: &mut Vec<DefId>) {
        if let Some(w) = self.bits.get(self.slot(slot)) {
            for (i, &word) in w.iter().enumerate() {
                let mut x = word;
                while x != 0 {
                    out.push(i * 64 + x.trailing_zeros() as usize);
                    x &= x - 1;
                }
            }
        }
    }
}

impl<'a> Links<'a> {
    /// Builds the links of `case`.
    pub fn build(case: &'a Case) -> Links<'a> {
        let mut l = Links {
            graphs: vec![Graph {
                kind: GraphKind::Root,
                parent: None,
            }],
            graph_order: Vec::new(),
            // Sized as `Types::exprs` is (256 nodes): growing these maps from empty was 1% of
            // an in-process campaign's CPU in rehashing (perf, 2026-12-04).
            exprs: FastMap::with_capacity_and_hasher(256, Default::default()),
            defs: Vec::new(),
            stmts: FastMap::with_capacity_and_hasher(64, Default::default()),
            names: FastMap::with_capacity_and_hasher(32, Default::default()),
            reads: Vec::new(),
            stmt_reads: Vec::new(),
            loop_var_names: Vec::new(),
            reach: Vec::new(),
            reach_at: Vec::new(),
            def_users: Vec::new(),
            def_users_at: Vec::new(),
            loads: Vec::new(),
            subscripts: Vec::new(),
            writes: Vec::new(),
        };
        let mut params = Vec::new();
        for p in &case.kernel.params {
            let name = l.intern(&p.name);
            params.push((name, l.new_def(DefKind::Param, 0)));
        }
        let mut order = 0;
        l.structure(&case.kernel.body, 0, 0, &mut order);
        l.graph_order = post_order(&l.graphs);
        let mut env = Env::new(l.names.len(), l.defs.len());
        for (name, d) in params {
            env.set(name, d);
        }
        let mut reach_bits = Env::new(l.reads.len(), l.defs.len());
        l.flow(
            &case.kernel.body,
            &mut env,
            Some(&mut reach_bits),
            &mut Flow::default(),
        );
        l.reach_at.reserve(l.reads.len() + 1);
        l.reach_at.push(0);
        for r in 0..l.reads.len() {
            reach_bits.push_defs(r, &mut l.reach);
            l.reach_at.push(l.reach.len());
        }
        // Reads per definition, in read order: a stable sort of (definition, read) by
        // definition.
        let mut pairs: Vec<(DefId, Read<'a>)> = Vec::with_capacity(l.reach.len());
        for (r, rec) in l.reads.iter().enumerate() {
            for &d in &l.reach[l.reach_at[r]..l.reach_at[r + 1]] {
                pairs.push((d, rec.read));
            }
        }
        pairs.sort_by_key(|&(d, _)| d);
        let at: Vec<usize> = (0..=l.defs.len())
            .map(|d| pairs.partition_point(|&(p, _)| p < d))
            .collect();
        l.def_users = pairs.into_iter().map(|(_, read)| read).collect();
        l.def_users_at = at;
        l
    }

    fn intern(&mut self, name: &'a str) -> u32 {
        let next = self.names.len() as u32;
        *self.names.entry(name).or_insert(next)
    }

    fn new_def(&mut self, kind: DefKind<'a>, graph: GraphId) -> DefId {
        self.defs.push(Def { kind, graph });
        self.defs.len() - 1
    }

    /// Pass 1: graphs, parents, evaluation order, definitions, name reads, loads, subscripts and
    /// writes.
    fn structure(&mut self, body: &'a [Stmt], graph: GraphId, depth: usize, order: &mut usize) {
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

    fn expr_tree(&mut self, e: &'a Expr, parent: Parent<'a>, graph: GraphId, order: &mut usize) {
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

    /// Pass 2: reaching definitions, recorded per read into `reach` (when given).
    ///
    /// A loop's entry is the fixpoint of `entry = before ∪ body(entry)` (a definition late in
    /// the body reaches reads early in it: a loop-carried value). Every statement acts on each
    /// name on its own, as `out = gen ∪ (in if it can pass through)`, and so does a body; the
    /// fixpoint is therefore `before ∪ body(∅)`: the entry with the definitions the body makes
    /// that reach its end ([`Links::body_defs`], once per loop). One walk of the body then
    /// records its reads. Iterating the body to the fixpoint walked a body nested `d` loops
    /// deep `2^d` times: ~30M instructions of a 2,000-case campaign (callgrind).
    fn flow(&self, body: &'a [Stmt], env: &mut Env, mut reach: Option<&mut Env>, st: &mut Flow) {
        for stmt in body {
            let Some(info) = self.stmts.get(&addr(stmt)) else {
                continue;
            };
            if let Some(reach) = reach.as_deref_mut() {
                for &r in &self.stmt_reads[info.reads.clone()] {
                    let (src, dst) = (env.slot(self.reads[r].name as usize), reach.slot(r));
                    if let (Some(s), Some(d)) = (env.bits.get(src), reach.bits.get_mut(dst)) {
                        d.copy_from_slice(s);
                    }
                }
            }
            match &stmt.kind {
                StmtKind::Assign { .. } | StmtKind::AugAssign { .. } => {
                    if let Some(d) = info.def {
                        env.set(info.name, d);
                    }
                }
                StmtKind::Store { .. } | StmtKind::Atomic { .. } | StmtKind::Return(_) => {}
                StmtKind::For(lp) => {
                    let mut entry = env.copy_in(&mut st.pool);
                    if let Some(first) = info.def {
                        for (k, &name) in self.loop_var_names[info.vars.clone()].iter().enumerate()
                        {
                            entry.set(name, first + k);
                        }
                    }
                    self.body_defs(lp, env, st);
                    if let Some(made) = st.made.get(&addr(lp)) {
                        entry.join(made);
                    }
                    if let Some(reach) = reach.as_deref_mut() {
                        let mut out = entry.copy_in(&mut st.pool);
                        self.flow(&lp.body, &mut out, Some(reach), st);
                        st.pool.push(out);
                    }
                    env.join(&entry);
                    st.pool.push(entry);
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    let mut te = env.copy_in(&mut st.pool);
                    self.flow(then_body, &mut te, reach.as_deref_mut(), st);
                    self.flow(else_body, env, reach.as_deref_mut(), st);
                    env.join(&te);
                    st.pool.push(te);
                }
            }
        }
    }

    /// Computes (once) the definitions the body of `lp` makes that reach its end, into
    /// `st.made`; `like` is any environment of the pass (for the size).
    fn body_defs(&self, lp: &'a Loop, like: &Env, st: &mut Flow) {
        if st.made.contains_key(&addr(lp)) {
            return;
        }
        let mut made = like.copy_in(&mut st.pool);
        made.bits.fill(0);
        self.flow(&lp.body, &mut made, None, st);
        st.made.insert(addr(lp), made);
    }

    /// Facts about `e` (an expression of the case the links were built from).
    pub fn info(&self, e: &Expr) -> Option<&ExprInfo<'a>> {
        self.exprs.get(&NodeKey::of(e))
    }

    /// The graph `e` is evaluated in (the root if unknown).
    pub fn graph_of(&self, e: &Expr) -> GraphId {
        self.info(e).map_or(0, |i| i.graph)
    }

    /// `nodes` (in evaluation order) sorted by their graph's position in Helion's graph order,
    /// keeping evaluation order inside a graph (D-1.5.1-04).
    pub fn in_graph_order(&self, nodes: &[&'a Expr]) -> Vec<&'a Expr> {
        let mut sorted = nodes.to_vec();
        sorted.sort_by_key(|e| self.graph_order.get(self.graph_of(e)).copied().unwrap_or(0));
        sorted
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
        self.info(name_read)
            .and_then(|i| i.read)
            .and_then(|r| {
                let (&from, &to) = (self.reach_at.get(r)?, self.reach_at.get(r + 1)?);
                self.reach.get(from..to)
            })
            .unwrap_or(&[])
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
        let mut seen: Vec<NodeKey> = Vec::new();
        while let ExprKind::Name(_) = &e.kind {
            if seen.contains(&NodeKey::of(e)) || seen.len() > 256 {
                break;
            }
            seen.push(NodeKey::of(e));
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
        match (self.def_users_at.get(d), self.def_users_at.get(d + 1)) {
            (Some(&from), Some(&to)) => self.def_users.get(from..to).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// The definition an `Assign`/`AugAssign` statement makes.
    pub fn def_of(&self, stmt: &Stmt) -> Option<DefId> {
        self.stmts.get(&addr(stmt)).and_then(|i| i.def)
    }

    /// `_effective_users`: the semantic users of the value of `node`, each with the transports
    /// on its path, in the order of Helion's walk (see [`Links::walk_key`]). Shape reads
    /// (`.size(d)`, the `view_as` shape operand) are skipped; name reads reached by exactly
    /// this definition inside its graph are walked through.
    pub fn effective_users(&self, node: &'a Expr) -> Vec<Use<'a>> {
        let mut out = Vec::new();
        self.each_user(node, &mut |user, transports| {
            out.push(Use {
                user,
                transports: transports.to_vec(),
            })
        });
        let from = self.graph_of(node);
        out.sort_by_cached_key(|u| self.walk_key(from, u));
        out
    }

    /// Calls `f` on each semantic user of `node` that [`Links::effective_users`] finds, with
    /// the transports on its path, in discovery order rather than Helion's walk order: for
    /// walks that only need the set of users (the failure walk, spec §2.8), which then pay
    /// for neither the walk keys nor a copy of every path.
    pub fn each_user(&self, node: &'a Expr, f: &mut impl FnMut(User<'a>, &[&'a Expr])) {
        self.collect_users(node, &mut Vec::new(), f, &mut Vec::new());
    }

    /// Calls `f` on each user of the value a definition binds (the reads it reaches), as
    /// [`Links::each_user`] does.
    pub fn each_def_user(&self, d: DefId, f: &mut impl FnMut(User<'a>, &[&'a Expr])) {
        self.collect_def_users(d, &mut Vec::new(), f, &mut Vec::new());
    }

    /// The position of `u` in `_effective_users`' walk from a value in graph `from`
    /// (D-1.5.1-05), as a path compared lexicographically. The walk pops a node off a stack,
    /// appends its direct users in creation order, then pushes its `_new_var` renames (in
    /// creation order) and its capture placeholders (in graph order); so a node's direct
    /// users come first, then its captures, the last graph first, each walked to the end,
    /// then its renames, the last first. Path steps: `(0, order)` a direct user, `(1, -graph
    /// order)` a capture into a child graph, `(2, -order)` a rename.
    fn walk_key(&self, from: GraphId, u: &Use<'a>) -> Vec<(u8, i64)> {
        let mut key = Vec::new();
        let mut current = from;
        for t in &u.transports {
            let g = self.graph_of(t);
            self.capture_path(current, g, &mut key);
            current = g;
            let rename = self
                .info(t)
                .is_some_and(|i| matches!(i.parent, Parent::Stmt(_, Slot::AssignValue)));
            if rename {
                key.push((2, -(self.info(t).map_or(0, |i| i.order) as i64)));
            }
        }
        let (g, order) = match u.user {
            User::Expr { user, .. } => {
                (self.graph_of(user), self.info(user).map_or(0, |i| i.order))
            }
            User::Merge(e) => (current, self.info(e).map_or(0, |i| i.order)),
            User::Stmt(s, _) => (
                current,
                self.stmts.get(&addr(s)).map_or(usize::MAX, |i| i.order),
            ),
        };
        self.capture_path(current, g, &mut key);
        key.push((0, order as i64));
        key
    }

    /// The capture steps from graph `outer` down to graph `inner` nested in it.
    fn capture_path(&self, outer: GraphId, inner: GraphId, key: &mut Vec<(u8, i64)>) {
        let mut chain = Vec::new();
        let mut g = inner;
        while g != outer {
            chain.push(g);
            match self.graphs.get(g).and_then(|x| x.parent) {
                Some(p) => g = p,
                None => return,
            }
        }
        for &c in chain.iter().rev() {
            key.push((1, -(self.graph_order.get(c).copied().unwrap_or(0) as i64)));
        }
    }

    fn collect_users<F: FnMut(User<'a>, &[&'a Expr])>(
        &self,
        node: &'a Expr,
        path: &mut Vec<&'a Expr>,
        f: &mut F,
        seen: &mut Vec<NodeKey>,
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
                    ExprKind::View {
                        op:
                            ViewOp::Reshape(_)
                            | ViewOp::View(_)
                            | ViewOp::Squeeze(_)
                            | ViewOp::Unsqueeze(_),
                        ..
                    }
                    | ExprKind::Name(_)
                    | ExprKind::Int(_)
                    | ExprKind::Float(_)
                    | ExprKind::TileAttr { .. }
                    | ExprKind::Binary { .. }
                    | ExprKind::Compare { .. }
                    | ExprKind::Load { .. }
                    | ExprKind::Subscript { .. }
                    | ExprKind::Arange { .. }
                    | ExprKind::Zeros { .. }
                    | ExprKind::Full { .. }
                    | ExprKind::Cast { .. }
                    | ExprKind::Sum { .. }
                    | ExprKind::Permute { .. }
                    | ExprKind::Alloc { .. } => false,
                };
                if !shape_read {
                    f(
                        User::Expr {
                            user: p,
                            operand: node,
                        },
                        path,
                    );
                }
            }
            Parent::Stmt(s, Slot::AssignValue) => {
                if let Some(d) = self.def_of(s) {
                    self.collect_def_users(d, path, f, seen);
                }
            }
            Parent::Stmt(s, slot) => f(User::Stmt(s, slot), path),
        }
    }

    fn collect_def_users<F: FnMut(User<'a>, &[&'a Expr])>(
        &self,
        d: DefId,
        path: &mut Vec<&'a Expr>,
        f: &mut F,
        seen: &mut Vec<NodeKey>,
    ) {
        let dg = self.defs[d].graph;
        for r in self.def_users(d) {
            match *r {
                Read::Name(re) => {
                    let g = self.graph_of(re);
                    if self.reaching(re) == [d] && self.within(g, dg) {
                        // A handful of name reads per walk: a Vec beats hashing (and
                        // growing a set from empty) for the walks a planner makes.
                        if !seen.contains(&NodeKey::of(re)) {
                            seen.push(NodeKey::of(re));
                            path.push(re);
                            self.collect_users(re, path, f, seen);
                            path.pop();
                        }
                    } else {
                        f(User::Merge(re), path);
                    }
                }
                Read::Aug(s) => f(User::Stmt(s, Slot::AugTarget), path),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reaching definitions of every read by iterating each loop body to its fixpoint
    /// (the definition [`Links::flow`] shortcuts).
    fn iterated(l: &Links<'_>, body: &[Stmt], env: &mut Env, reach: &mut Env) {
        for stmt in body {
            let Some(info) = l.stmts.get(&addr(stmt)) else {
                continue;
            };
            for &r in &l.stmt_reads[info.reads.clone()] {
                let (src, dst) = (env.slot(l.reads[r].name as usize), reach.slot(r));
                reach.bits[dst].copy_from_slice(&env.bits[src]);
            }
            match &stmt.kind {
                StmtKind::Assign { .. } | StmtKind::AugAssign { .. } => {
                    if let Some(d) = info.def {
                        env.set(info.name, d);
                    }
                }
                StmtKind::Store { .. } | StmtKind::Atomic { .. } | StmtKind::Return(_) => {}
                StmtKind::For(lp) => {
                    let mut entry = env.clone();
                    if let Some(first) = info.def {
                        for (k, &name) in l.loop_var_names[info.vars.clone()].iter().enumerate() {
                            entry.set(name, first + k);
                        }
                    }
                    loop {
                        let mut out = entry.clone();
                        iterated(l, &lp.body, &mut out, reach);
                        let mut next = entry.clone();
                        next.join(&out);
                        if next == entry {
                            break;
                        }
                        entry = next;
                    }
                    env.join(&entry);
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    let mut te = env.clone();
                    iterated(l, then_body, &mut te, reach);
                    iterated(l, else_body, env, reach);
                    env.join(&te);
                }
            }
        }
    }

    fn check(case: &Case, what: &str) {
        let l = Links::build(case);
        let mut env = Env::new(l.names.len(), l.defs.len());
        for (d, def) in l.defs.iter().enumerate() {
            if let DefKind::Param = def.kind {
                let name = l.names[case.kernel.params[d].name.as_str()];
                env.set(name, d);
            }
        }
        let mut reach = Env::new(l.reads.len(), l.defs.len());
        iterated(&l, &case.kernel.body, &mut env, &mut reach);
        for r in 0..l.reads.len() {
            let mut want = Vec::new();
            reach.push_defs(r, &mut want);
            assert_eq!(
                &l.reach[l.reach_at[r]..l.reach_at[r + 1]],
                want.as_slice(),
                "{what}: read {r}"
            );
        }
    }

    #[test]
    fn one_walk_per_loop_reaches_what_iterating_to_the_fixpoint_does() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
        let mut checked = 0;
        for dir in ["cases", "spec-kernels"] {
            let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "py"))
                .collect();
            paths.sort();
            for path in paths {
                let src = std::fs::read_to_string(&path).unwrap();
                let Ok(case) = lang::frontend::parse_case(&src, &path.display().to_string()) else {
                    continue;
                };
                check(&case, &path.display().to_string());
                checked += 1;
            }
        }
        assert!(checked > 50, "only {checked} corpus cases parsed");
        // Loop-carried values through nested loops and branches, definitions late in a body.
        let src = "import torch\nimport helion\nimport helion.language as hl\n\n\n\
            @helion.kernel(backend=\"pallas\", static_shapes=True, config=helion.Config(block_sizes=[2, 2]))\n\
            def k(x: torch.Tensor):\n\
            \x20   out = torch.zeros([2, 128], dtype=torch.float32)\n\
            \x20   for g in hl.grid(1):\n\
            \x20       acc = hl.zeros([2, 128], dtype=torch.float32)\n\
            \x20       b = acc\n\
            \x20       c = acc\n\
            \x20       for outer in hl.tile(x.size(0)):\n\
            \x20           a = b\n\
            \x20           for inner in hl.tile(4):\n\
            \x20               if inner.begin >= 2:\n\
            \x20                   c = acc\n\
            \x20               else:\n\
            \x20                   acc = c + a\n\
            \x20               b = acc\n\
            \x20           acc = acc + a\n\
            \x20       out[:, :] = acc + b\n\
            \x20   return out\n\n\
            x = torch.ones(8, 2, 128)\nk(x)\n";
        let case = lang::frontend::parse_case(src, "<nested>").unwrap();
        check(&case, "<nested>");
    }
}
