//! Root eligibility (`_root_variants`, spec §2.3–2.4), the mutation rule (R-MUT, spec §2.9),
//! address-preserving views (`_reshape_variants`, spec §2.5), chain analysis with value
//! boundaries (`_analyze_resident_chain`, spec §2.8) and first-wins failure recording.

use super::addressing::{Addressing, slice_addressing};
use super::links::GraphId;
use super::links::{GraphKind, Slot, Use, User};
use super::{Planner, ResidentPlan, Selector, Variant, at, lines};
use crate::verdict::{Rejection, Rule};
use lang::ir::blocks::required_alignment;
use lang::ir::hash::{FastMap, FastSet};
use lang::ir::sym::{BlockId, Sym};
use lang::ir::types::Ty;
use lang::ir::{
    AtomicOp, BinOp, CmpOp, Expr, ExprKind, Index, NodeKey, ReduceKind, StmtKind, TensorOp,
    UnaryFn, ViewOp,
};

/// The resident-Ref transform allowlist (spec §2.5), as named in messages.
pub(crate) const RESHAPE: &str = "aten.reshape.default";
pub(crate) const VIEW: &str = "aten.view.default";
pub(crate) const SQUEEZE: &str = "aten.squeeze.dim";
pub(crate) const UNSQUEEZE: &str = "aten.unsqueeze.default";
const SUBSCRIPT: &str = "hl.subscript";

/// A user the transform rules accepted: its output variants and, for a narrowing subscript,
/// its selector.
struct Planned<'a> {
    use_: Use<'a>,
    user: &'a Expr,
    variants: Vec<Variant>,
    selector: Option<Selector>,
}

/// Annotations of one root, committed only if the whole chain plans (spec §2.1).
pub(crate) type Scratch = FastMap<NodeKey, ResidentPlan>;

impl<'a> Planner<'a, '_> {
    /// Plans one load transactionally: commits its chain's annotations, or records the failure
    /// on every narrowing subscript reachable from it (first wins).
    pub(crate) fn plan_root(&mut self, load: &'a Expr, written: &FastSet<usize>) {
        let mut scratch = Scratch::default();
        let result = self.root_variants(load, written).and_then(|variants| {
            self.analyze(load, variants, None, Vec::new(), true, &mut scratch)
        });
        match result {
            Ok(()) => self.resident.extend(scratch),
            Err(rej) => self.record_from_node(load, &rej),
        }
    }

    /// R-MUT and `_root_variants` (spec §2.9, §2.3 in order, §2.4 root guard rule).
    fn root_variants(
        &self,
        load: &'a Expr,
        written: &FastSet<usize>,
    ) -> Result<Vec<Variant>, Rejection> {
        let rej = |rule: Rule, args: &[(&str, &str)]| {
            let here = at(load.span);
            let mut all: Vec<(&str, &str)> = vec![("at", here.as_str())];
            all.extend_from_slice(args);
            Err(Rejection::new(rule, load.span, &all))
        };
        let ExprKind::Load {
            tensor, indices, ..
        } = &load.kind
        else {
            return rej(Rule::RootNoTensorMetadata, &[]);
        };
        let Some(host) = self.types.host.tensors.get(tensor) else {
            return rej(Rule::RootNoTensorMetadata, &[]);
        };
        if written.contains(&host.storage) {
            return rej(Rule::RootWrittenOnDevice, &[]);
        }
        let Ty::Tensor { dtype, dims } = self.types.of(load) else {
            return rej(Rule::RootNoTensorMetadata, &[]);
        };
        let graph = self.links.graphs[self.links.graph_of(load)].kind;
        let loop_ids: &[BlockId] = match graph {
            GraphKind::Loop(lp) => self.types.blocks.loop_ids(lp),
            GraphKind::Root | GraphKind::Grid | GraphKind::Then(_) | GraphKind::Else => &[],
        };
        // D-1.5.1-12 check 6: the candidate is the one narrowed entry that is not a Python
        // int; among several, the one driven by this loop's own tile.
        let narrowed: Vec<usize> = (0..indices.len())
            .filter(|&d| indices[d].is_narrowing())
            .collect();
        let mut candidates: Vec<usize> = narrowed
            .iter()
            .copied()
            .filter(|&d| !self.is_python_int(&indices[d]))
            .collect();
        if candidates.len() != 1 {
            candidates = narrowed.clone();
        }
        if candidates.len() > 1 {
            let in_loop: Vec<usize> = candidates
                .iter()
                .copied()
                .filter(|&d| {
                    self.index_block(&indices[d])
                        .is_some_and(|b| loop_ids.contains(&b))
                })
                .collect();
            if in_loop.len() == 1 {
                candidates = in_loop;
            }
        }
        let [dim] = candidates.as_slice() else {
            return rej(
                Rule::RootTilesMultipleDims,
                &[("count", &candidates.len().to_string())],
            );
        };
        let dim = *dim;
        // Check 7: the rank may drop only by the other narrowed entries that are scalars
        // (an int, a SymInt or a 0-d tensor), and no index may be `None`.
        let dropped: Vec<usize> = narrowed
            .iter()
            .copied()
            .filter(|&d| d != dim && self.is_scalar_index(&indices[d]))
            .collect();
        let difference = host.shape.len() as i64 - dims.len() as i64;
        let dropped_count = if difference == 0 { 0 } else { dropped.len() };
        if difference < 0
            || dropped_count as i64 != difference
            || indices.iter().any(|i| matches!(i, Index::NewAxis))
        {
            let value_shape: Vec<i64> = dims.iter().map(|d| d.size).collect();
            let host_shape: Vec<i64> = host.shape.iter().map(|&s| s as i64).collect();
            let shown: &[usize] = if difference == 0 { &[] } else { &dropped };
            let repr: Vec<String> = indices.iter().map(crate::validate::index_repr).collect();
            return rej(
                Rule::RootChangesRank,
                &[
                    ("tensor_shape", &py_tuple(&host_shape)),
                    ("value_shape", &py_tuple(&value_shape)),
                    ("selected", &py_tuple(&narrowed)),
                    ("dim", &dim.to_string()),
                    ("dropped", &py_tuple(shown)),
                    ("indices", &format!("[{}]", repr.join(", "))),
                ],
            );
        }
        let physical = dim
            - dropped
                .iter()
                .filter(|&&d| d < dim && difference != 0)
                .count();
        // Check 8.
        let Some(block) = self.index_block(&indices[dim]) else {
            return rej(Rule::RootNotTileIndexed, &[]);
        };
        let shape: Vec<i64> = dims.iter().map(|d| d.size).collect();
        if shape.iter().any(|&s| s < 1) {
            return rej(Rule::RootNoConcreteShape, &[]);
        }
        // The loop of this tile, when the load sits directly in it (`device_loop_bounds`).
        let own_dim = match graph {
            GraphKind::Loop(lp) => loop_ids
                .iter()
                .position(|&b| b == block)
                .and_then(|k| lp.dims.get(k)),
            GraphKind::Root | GraphKind::Grid | GraphKind::Then(_) | GraphKind::Else => None,
        };
        let lane = shape.last().copied().unwrap_or(0);
        if slice_addressing(*dtype, shape.len(), physical, lane) != Addressing::Direct {
            // D-1.5.1-13: a non-direct dim is admitted when the loop's start and the block
            // are multiples of the TPU alignment.
            let align = required_alignment(shape.len(), physical, dtype.bitwidth());
            let begin_aligned = own_dim.is_some_and(|d| {
                d.begin
                    .as_ref()
                    .is_none_or(|b| self.aligned_begin(b, align, self.links.graph_of(load)))
            });
            if !begin_aligned || shape[physical] % align != 0 {
                return rej(Rule::RootNotDirectAddressing, &[]);
            }
        }
        let size = host.shape.get(dim).map_or(-1, |&s| s as i64);
        let full = own_dim.is_some_and(|d| {
            // An `int` argument is a runtime scalar in 1.5.1, never `known_equal` to a size
            // (D-1.5.1-14), so a loop over it guards its roots.
            let host = &self.types.host;
            d.begin
                .as_ref()
                .is_none_or(|b| self.types.of(b).const_int() == Some(0) && !host.is_runtime(b))
                && self.types.of(&d.end).const_int() == Some(size)
                && !host.is_runtime(&d.end)
        });
        let unguarded = full && size % shape[physical] == 0;
        let live_guard = if unguarded {
            None
        } else {
            Some((physical, block))
        };
        Ok(vec![Variant {
            factor: 1,
            shape,
            squeezed_dims: Vec::new(),
            live_guard,
        }])
    }

    /// Whether an index entry traces to a Python int (a literal, or a name bound to a
    /// constant; not an `int` argument, which is a runtime SymInt, D-1.5.1-14).
    fn is_python_int(&self, index: &Index) -> bool {
        match index {
            Index::Int(_) => true,
            Index::Expr(e) => {
                self.types.of(e).const_int().is_some() && !self.types.host.is_runtime(e)
            }
            Index::Full | Index::NewAxis | Index::Slice { .. } => false,
        }
    }

    /// Whether an index entry drops its dim: an int, a SymInt or a 0-d tensor.
    fn is_scalar_index(&self, index: &Index) -> bool {
        match index {
            Index::Int(_) => true,
            Index::Expr(e) => match self.types.of(e) {
                Ty::Int(_) | Ty::GridIndex(_) => true,
                Ty::Tensor { dims, .. } => dims.is_empty(),
                Ty::HostTensor { .. } | Ty::Float | Ty::Bool | Ty::Mask { .. } | Ty::Tile(_) => {
                    false
                }
            },
            Index::Full | Index::NewAxis | Index::Slice { .. } => false,
        }
    }

    /// `resolve_block_id` of an index entry: the block of a tile, or of a bare block-size
    /// symbol.
    fn index_block(&self, index: &Index) -> Option<BlockId> {
        let Index::Expr(e) = index else {
            return None;
        };
        match self.types.of(e) {
            Ty::Tile(b) => Some(*b),
            Ty::Int(Some(a)) => match a.as_sym() {
                Some(Sym::BlockSize(b)) => Some(b),
                Some(Sym::TileBegin(_) | Sym::TileEnd(_) | Sym::TileCount(_) | Sym::TileId(_))
                | None => None,
            },
            // A grid index is a SymInt of no tile's block size.
            Ty::Int(None)
            | Ty::GridIndex(_)
            | Ty::HostTensor { .. }
            | Ty::Tensor { .. }
            | Ty::Float
            | Ty::Bool
            | Ty::Mask { .. } => None,
        }
    }

    /// `aligned_tile_begin` (D-1.5.1-13): a loop start `begin`, in graph `g`, is a multiple of
    /// `align` as sympy proves it: a constant, an affine form whose every term is a multiple,
    /// or the bare begin of an enclosing device loop's tile whose own start and block are
    /// multiples. An `int` argument is an unknown symbol.
    fn aligned_begin(&self, begin: &Expr, align: i64, g: GraphId) -> bool {
        if self.types.host.is_runtime(begin) {
            return false;
        }
        let Ty::Int(Some(a)) = self.types.of(begin) else {
            return false;
        };
        if a.constant % align == 0 && a.terms.values().all(|k| k % align == 0) {
            return true;
        }
        let Some(Sym::TileBegin(parent)) = a.as_sym() else {
            return false;
        };
        if self.types.block_size(parent) % align != 0 {
            return false;
        }
        // `_enclosing_loop_bounds` of `parent`.
        self.enclosing_loop_dim(g, parent).is_some_and(|d| {
            d.begin.as_ref().is_none_or(|b| {
                !self.types.host.is_runtime(b)
                    && self.types.of(b).const_int().is_some_and(|c| c % align == 0)
            })
        })
    }

    /// `_analyze_resident_chain` (spec §2.8) for `node` with its output `variants`.
    fn analyze(
        &mut self,
        node: &'a Expr,
        variants: Vec<Variant>,
        selector: Option<Selector>,
        input_variants: Vec<Variant>,
        is_root: bool,
        scratch: &mut Scratch,
    ) -> Result<(), Rejection> {
        let uses = self.links.effective_users(node);
        let mut planned: Vec<Planned<'a>> = Vec::new();
        let mut unsupported: Vec<(Use<'a>, Rejection)> = Vec::new();
        for u in uses {
            match self.classify(&u, &variants) {
                Ok(p) => planned.push(p),
                Err(rej) => {
                    self.record_from_use(&u, &rej);
                    unsupported.push((u, rej));
                }
            }
        }
        // `line N`, formatted only for a refusal's message.
        let here = || at(node.span);
        if is_root {
            if !planned.is_empty() && !unsupported.is_empty() {
                let spans: Vec<_> = unsupported.iter().map(|(u, _)| u.span()).collect();
                return Err(Rejection::new(
                    Rule::ChainConsumedWhole,
                    spans[0],
                    &[("lines", &lines(&spans))],
                ));
            }
            if let Some((_, rej)) = unsupported.into_iter().next() {
                return Err(rej);
            }
            if planned.is_empty() {
                return Err(Rejection::new(
                    Rule::ChainNoUsers,
                    node.span,
                    &[("at", &here())],
                ));
            }
        } else {
            let masked = selector.as_ref().is_some_and(|s| s.mask);
            if masked || !unsupported.is_empty() || planned.is_empty() {
                if masked && !planned.is_empty() {
                    let r = Rejection::new(
                        Rule::ChainMaskedFeedsNarrowing,
                        node.span,
                        &[("at", &here())],
                    );
                    for p in &planned {
                        self.record_from_use(&p.use_, &r);
                    }
                }
                if variants.iter().any(|v| v.live_guard.is_some()) {
                    return Err(Rejection::new(
                        Rule::ChainPaddingAtBoundary,
                        node.span,
                        &[("at", &here())],
                    ));
                }
                if !masked && !planned.is_empty() && !unsupported.is_empty() {
                    let spans: Vec<_> = unsupported.iter().map(|(u, _)| u.span()).collect();
                    let r = Rejection::new(
                        Rule::ChainViewConsumedElsewhere,
                        node.span,
                        &[("at", &here()), ("lines", &lines(&spans))],
                    );
                    for p in &planned {
                        self.record_from_use(&p.use_, &r);
                    }
                }
                scratch.insert(
                    NodeKey::of(node),
                    ResidentPlan {
                        materialize: true,
                        variants,
                        selector,
                        input_variants,
                    },
                );
                return Ok(());
            }
        }
        scratch.insert(
            NodeKey::of(node),
            ResidentPlan {
                materialize: false,
                variants: variants.clone(),
                selector,
                input_variants,
            },
        );
        for p in planned {
            for t in &p.use_.transports {
                scratch.insert(
                    NodeKey::of(t),
                    ResidentPlan {
                        materialize: false,
                        variants: variants.clone(),
                        selector: None,
                        input_variants: variants.clone(),
                    },
                );
            }
            self.analyze(
                p.user,
                p.variants,
                p.selector,
                variants.clone(),
                false,
                scratch,
            )?;
        }
        Ok(())
    }

    /// The transform rules (spec §2.5–2.7) for one semantic user of a Ref with `variants`.
    fn classify(&self, u: &Use<'a>, variants: &[Variant]) -> Result<Planned<'a>, Rejection> {
        let not_transform = |target: &str, span| {
            Rejection::new(
                Rule::ViewNotAddressPreserving,
                span,
                &[("target", target), ("at", &at(span))],
            )
        };
        let (user, operand) = match u.user {
            User::Expr { user, operand } => (user, operand),
            User::Stmt(s, slot) => return Err(not_transform(&stmt_target(s, slot), s.span)),
            User::Merge(e) => {
                let target = if self.links.reaching(e).len() > 1 {
                    "_phi"
                } else {
                    "output"
                };
                return Err(not_transform(target, e.span));
            }
        };
        let planned = |variants, selector| Planned {
            use_: u.clone(),
            user,
            variants,
            selector,
        };
        match &user.kind {
            ExprKind::Subscript { value, indices } if std::ptr::eq(&**value, operand) => {
                if indices.iter().any(Index::is_narrowing) {
                    let norm = self.normalize(user)?;
                    let out = self.apply(user, &norm, variants)?;
                    Ok(planned(out, Some(norm.selector)))
                } else {
                    Ok(planned(self.view_rule(user, SUBSCRIPT, variants)?, None))
                }
            }
            ExprKind::View { value, op } if std::ptr::eq(&**value, operand) => {
                let target = match op {
                    ViewOp::Reshape(_) => RESHAPE,
                    ViewOp::View(_) | ViewOp::ViewAs(_) => VIEW,
                    ViewOp::Squeeze(_) => SQUEEZE,
                    ViewOp::Unsqueeze(_) => UNSQUEEZE,
                };
                Ok(planned(self.view_rule(user, target, variants)?, None))
            }
            ExprKind::Name(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Size { .. }
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
            | ExprKind::View { .. }
            | ExprKind::Permute { .. }
            | ExprKind::Op { .. }
            | ExprKind::Alloc { .. } => Err(not_transform(expr_target(user), user.span)),
        }
    }

    /// `_reshape_variants` (spec §2.5 view rule).
    fn view_rule(
        &self,
        user: &Expr,
        target: &str,
        variants: &[Variant],
    ) -> Result<Vec<Variant>, Rejection> {
        let here = || at(user.span);
        let rej = |rule: Rule| {
            Err(Rejection::new(
                rule,
                user.span,
                &[("target", target), ("at", &here())],
            ))
        };
        let Some(out_dims) = self.types.of(user).dims() else {
            return rej(Rule::ViewNoTensorMetadata);
        };
        // `_physical_shape` of the output: a symbolic product, or a literal slice of a tiled
        // dim, is no concrete size (`Dim::opaque`, `Dim::sliced`).
        let opaque = out_dims.iter().any(|d| d.opaque || d.sliced);
        let out: Vec<i64> = out_dims.iter().map(|d| d.size).collect();
        let mut result = Vec::with_capacity(variants.len());
        for v in variants {
            if v.live_guard.is_some() {
                return rej(Rule::ViewPartiallyLive);
            }
            if v.shape.len() < 2 {
                return rej(Rule::ViewRankBelowTwo);
            }
            if opaque || out.iter().any(|&s| s < 0) {
                return rej(Rule::ViewNoConcreteShape);
            }
            let numel = |s: &[i64]| s.iter().fold(1i64, |a, &b| a.saturating_mul(b));
            if numel(&v.shape) != numel(&out) {
                return rej(Rule::ViewElementCount);
            }
            if out.len() < 2 || out[out.len() - 2..] != v.shape[v.shape.len() - 2..] {
                return rej(Rule::ViewMinorDims);
            }
            result.push(Variant {
                factor: v.factor,
                shape: out.clone(),
                squeezed_dims: Vec::new(),
                live_guard: None,
            });
        }
        Ok(result)
    }

    /// Records `rej` (first wins) on the user of `u`, if it is a narrowing subscript, and on
    /// every narrowing subscript reachable from it. Only logged: [`Planner::first_failure`]
    /// walks the log for the one subscript a refusal reports, so a kernel whose subscripts all
    /// plan never pays for the walk, and a refused one walks only until that subscript is
    /// reached.
    pub(crate) fn record_from_use(&mut self, u: &Use<'a>, rej: &Rejection) {
        let mut work = Vec::new();
        self.push_user(u.user, &mut work);
        self.failure_log.push((work, rej.clone()));
    }

    /// Records `rej` on every narrowing subscript reachable from `node` (not on `node`).
    pub(crate) fn record_from_node(&mut self, node: &'a Expr, rej: &Rejection) {
        self.failure_log
            .push((vec![Reach::Users(node)], rej.clone()));
    }

    /// The failure recorded on the narrowing subscript `sub` (`setdefault`, spec §2.8): the
    /// first logged failure whose walk reaches it. Replaying the whole log into a first-wins
    /// map gave the same answer and was 3.3% of an in-process campaign's instructions
    /// (callgrind, 2,000 cases), spent on subscripts no verdict reads.
    pub(crate) fn first_failure(&self, sub: &Expr) -> Option<&Rejection> {
        self.failure_log
            .iter()
            .find(|(work, _)| self.walk_reaches(work, sub))
            .map(|(_, rej)| rej)
    }

    fn push_user(&self, user: User<'a>, work: &mut Vec<Reach<'a>>) {
        match user {
            User::Expr { user, .. } => work.push(Reach::Node(user)),
            User::Merge(e) => work.push(Reach::Through(e)),
            User::Stmt(s, Slot::AugValue | Slot::AugTarget) => {
                if let Some(d) = self.links.def_of(s) {
                    work.push(Reach::Def(d));
                }
            }
            User::Stmt(..) => {}
        }
    }

    /// Whether the failure walk from `start` records on the narrowing subscript `sub`. Only
    /// the set of nodes the walk reaches matters, not the order it reaches them in: a
    /// subscript is only ever a [`Reach::Node`], a name read only a [`Reach::Through`].
    fn walk_reaches(&self, start: &[Reach<'a>], sub: &Expr) -> bool {
        let mut work = start.to_vec();
        let mut seen_nodes = FastSet::default();
        let mut seen_defs = FastSet::default();
        while let Some(item) = work.pop() {
            match item {
                Reach::Node(e) | Reach::Through(e) => {
                    if !seen_nodes.insert(NodeKey::of(e)) {
                        continue;
                    }
                    if matches!(item, Reach::Node(_)) && std::ptr::eq(e, sub) {
                        return true;
                    }
                    self.links
                        .each_user(e, &mut |u, _| self.push_user(u, &mut work));
                }
                Reach::Users(e) => self
                    .links
                    .each_user(e, &mut |u, _| self.push_user(u, &mut work)),
                Reach::Def(d) => {
                    if seen_defs.insert(d) {
                        self.links
                            .each_def_user(d, &mut |u, _| self.push_user(u, &mut work));
                    }
                }
            }
        }
        false
    }
}

/// An item of the failure-recording walk.
#[derive(Clone, Copy)]
pub(crate) enum Reach<'a> {
    /// A semantic node (recorded if it is a narrowing subscript).
    Node(&'a Expr),
    /// A `_phi`/output name read: walked through.
    Through(&'a Expr),
    /// The users of a node that failed (the node itself is not recorded).
    Users(&'a Expr),
    /// The value bound by an augmented assignment.
    Def(usize),
}

/// The FX target of a [`TensorOp`] node.
fn op_target(op: &TensorOp) -> &'static str {
    match op {
        TensorOp::Exp => "aten.exp.default",
        TensorOp::Relu => "aten.relu.default",
        TensorOp::Rsqrt => "aten.rsqrt.default",
        TensorOp::Unary(UnaryFn::Sigmoid) => "aten.sigmoid.default",
        TensorOp::Unary(UnaryFn::Sin) => "aten.sin.default",
        TensorOp::Unary(UnaryFn::Cos) => "aten.cos.default",
        TensorOp::Unary(UnaryFn::Tanh) => "aten.tanh.default",
        TensorOp::Unary(UnaryFn::Exp2) => "aten.exp2.default",
        TensorOp::Unary(UnaryFn::Log) => "aten.log.default",
        TensorOp::Unary(UnaryFn::Sqrt) => "aten.sqrt.default",
        TensorOp::Maximum => "aten.maximum.default",
        TensorOp::Minimum => "aten.minimum.default",
        // Python's `min`/`max` of SymInts traces to `torch.sym_min`/`sym_max`.
        TensorOp::IntMin => "torch.sym_min",
        TensorOp::IntMax => "torch.sym_max",
        TensorOp::Mod => "aten.remainder.Tensor",
        TensorOp::And => "aten.bitwise_and.Tensor",
        TensorOp::Or => "aten.bitwise_or.Tensor",
        TensorOp::Cmp(CmpOp::Ge) => "aten.ge.Tensor",
        TensorOp::Cmp(CmpOp::Gt) => "aten.gt.Tensor",
        TensorOp::Cmp(CmpOp::Le) => "aten.le.Tensor",
        TensorOp::Cmp(CmpOp::Lt) => "aten.lt.Tensor",
        TensorOp::Cmp(CmpOp::Eq) => "aten.eq.Tensor",
        TensorOp::Cmp(CmpOp::Ne) => "aten.ne.Tensor",
        TensorOp::Where => "aten.where.self",
        TensorOp::Reduce {
            kind: ReduceKind::Sum,
            ..
        } => "aten.sum.dim_IntList",
        TensorOp::Reduce {
            kind: ReduceKind::Amax,
            ..
        } => "aten.amax.default",
        TensorOp::Reduce {
            kind: ReduceKind::Amin,
            ..
        } => "aten.amin.default",
        TensorOp::Reduce {
            kind: ReduceKind::Argmax,
            ..
        } => "aten.argmax.default",
        TensorOp::Reduce {
            kind: ReduceKind::Argmin,
            ..
        } => "aten.argmin.default",
        TensorOp::Transpose(..) => "aten.transpose.int",
        TensorOp::Matmul => "aten.mm.default",
        TensorOp::Bmm => "aten.bmm.default",
        TensorOp::Addmm => "aten.addmm.default",
        TensorOp::Baddbmm => "aten.baddbmm.default",
        TensorOp::Dot => "helion.language.matmul_ops.dot",
        TensorOp::Pad(_) => "aten.constant_pad_nd.default",
    }
}

/// The FX target of an expression user, as named in "not an address-preserving" messages.
fn expr_target(e: &Expr) -> &'static str {
    match &e.kind {
        ExprKind::Binary { op, .. } => match op {
            BinOp::Add => "aten.add.Tensor",
            BinOp::Sub => "aten.sub.Tensor",
            BinOp::Mul => "aten.mul.Tensor",
            BinOp::Div => "aten.div.Tensor",
            BinOp::FloorDiv => "aten.floor_divide.default",
        },
        ExprKind::Compare { op, .. } => match op {
            CmpOp::Ge => "aten.ge.Tensor",
            CmpOp::Gt => "aten.gt.Tensor",
            CmpOp::Le => "aten.le.Tensor",
            CmpOp::Lt => "aten.lt.Tensor",
            CmpOp::Eq => "aten.eq.Tensor",
            CmpOp::Ne => "aten.ne.Tensor",
        },
        ExprKind::Op { op, .. } => op_target(op),
        ExprKind::Cast { .. } => "prims.convert_element_type.default",
        ExprKind::Sum { .. } => "aten.sum.dim_IntList",
        ExprKind::Permute { .. } => "aten.permute.default",
        ExprKind::Load { .. } => "hl.load",
        ExprKind::Subscript { .. } => SUBSCRIPT,
        ExprKind::View { .. } => VIEW,
        ExprKind::Arange { .. } => "prims.iota.default",
        ExprKind::Zeros { .. } | ExprKind::Full { .. } => "aten.full.default",
        ExprKind::Size { .. } => "aten.sym_size.int",
        ExprKind::Alloc { .. } => "aten.empty.memory_format",
        ExprKind::Name(_) | ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::TileAttr { .. } => {
            "call_function"
        }
    }
}

/// The FX target of a statement user.
fn stmt_target(s: &lang::ir::Stmt, slot: Slot) -> String {
    match (&s.kind, slot) {
        (StmtKind::Store { .. }, _) => "hl.store".into(),
        (StmtKind::Atomic { op, .. }, _) => format!("hl.{}", atomic_name(*op)),
        (StmtKind::AugAssign { op, .. }, _) => match op {
            BinOp::Add => "aten.add.Tensor",
            BinOp::Sub => "aten.sub.Tensor",
            BinOp::Mul => "aten.mul.Tensor",
            BinOp::Div => "aten.div.Tensor",
            BinOp::FloorDiv => "aten.floor_divide.default",
        }
        .into(),
        (StmtKind::If { .. }, _) => "_if".into(),
        (StmtKind::For(_), _) => "_for_loop".into(),
        (StmtKind::Return(_), _) | (StmtKind::Assign { .. }, _) => "output".into(),
    }
}

fn atomic_name(op: AtomicOp) -> &'static str {
    op.name()
}

/// A Python tuple's repr of `items` (`()`, `(8,)`, `(8, 2)`), as Helion's messages print shapes.
fn py_tuple<T: std::fmt::Display>(items: &[T]) -> String {
    match items {
        [] => "()".to_string(),
        [one] => format!("({one},)"),
        _ => {
            let parts: Vec<String> = items.iter().map(ToString::to_string).collect();
            format!("({})", parts.join(", "))
        }
    }
}
