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
//!
//! Layout: this module owns the links' types, [`Links::build`] and the structural queries
//! (an expression's facts and graph, graph nesting and order, a statement's definition). The
//! rest is split by what it computes: [`tree`] walks the kernel tree once for graphs, parents,
//! evaluation order, definitions and reads (pass 1); [`reaching`] computes reaching definitions
//! (pass 2) and answers the questions about them, `_resolve_node` among them; [`users`] walks a
//! value's effective users.

use lang::ir::{Case, Expr, Loop, NodeKey, Stmt};

mod reaching;
mod tree;
mod users;

use reaching::{Env, Flow};
use tree::post_order;

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

fn addr<T>(x: &T) -> usize {
    x as *const T as usize
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

    /// The definition an `Assign`/`AugAssign` statement makes.
    pub fn def_of(&self, stmt: &Stmt) -> Option<DefId> {
        self.stmts.get(&addr(stmt)).and_then(|i| i.def)
    }
}
