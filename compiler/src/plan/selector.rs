//! Selector normalization (Helion's `_selector`, spec §2.6) — the one place a narrowing
//! subscript's index becomes a [`Selector`] — and its application to every variant of the
//! subscripted Ref (`_apply_selector_to_variants`, spec §2.7).

use super::addressing::{Addressing, slice_addressing, static_run_aligned};
use super::links::GraphKind;
use super::{Planner, Selector, SelectorBegin, SelectorKind, Variant, at};
use crate::faults::Fault;
use crate::verdict::{Rejection, Rule};
use lang::ir::blocks::required_alignment;
use lang::ir::sym::{Affine, BlockId, Sym};
use lang::ir::types::Ty;
use lang::ir::{BinOp, CmpOp, Expr, ExprKind, Index, Span, StmtKind, TileAttr};
use lang::render;

/// A normalized selector and what applying it needs besides the variants.
#[derive(Clone, Debug)]
pub(crate) struct Normalized {
    /// The selector.
    pub selector: Selector,
    /// Tile selectors: the driving loop's static end, if static (spec §2.7 step 6).
    pub static_end: Option<i64>,
}

/// The iota a tail index traces to (`prims.iota(length, start, step)`, spec §1.7).
struct Iota {
    start: Option<Affine>,
    length: Option<i64>,
    step: Option<i64>,
}

/// What an index entry is, before the case analysis of spec §2.6.
enum Source<'a> {
    Iota(Iota),
    Node(&'a Expr),
    Int(i64),
    StaticSlice(Option<i64>, Option<i64>, Option<i64>),
    Unsupported(String),
}

impl<'a> Planner<'a, '_> {
    /// Normalizes the narrowing subscript `sub` into a selector (spec §2.6), in the spec's check
    /// order.
    pub(crate) fn normalize(&self, sub: &'a Expr) -> Result<Normalized, Rejection> {
        let rej = |rule: Rule, args: &[(&str, &str)]| {
            let here = at(sub.span);
            let mut all: Vec<(&str, &str)> = vec![("at", here.as_str())];
            all.extend_from_slice(args);
            Err(Rejection::new(rule, sub.span, &all))
        };
        let ExprKind::Subscript { value, indices } = &sub.kind else {
            return rej(Rule::SelectorNoTensorMetadata, &[]);
        };
        if self.types.of(value).dims().is_none() {
            return rej(Rule::SelectorNoTensorMetadata, &[]);
        }
        let new_axes = indices
            .iter()
            .filter(|i| matches!(i, Index::NewAxis))
            .count();
        // Fault D14: a `None` ahead of the run is accepted; the selector keeps the run's
        // position among the input's dims, so its mask lands on the input axis.
        if new_axes > 0 && !self.faults.has(Fault::D14MaskOnInputAxis) {
            return rej(Rule::SelectorAddsDimension, &[]);
        }
        let narrowing: Vec<(usize, &'a Index)> = indices
            .iter()
            .enumerate()
            .filter(|(_, i)| i.is_narrowing())
            .collect();
        let [(logical_dim, index)] = narrowing.as_slice() else {
            return rej(
                Rule::SelectorNarrowsMultiple,
                &[("count", &narrowing.len().to_string())],
            );
        };
        let logical_dim = *logical_dim
            - indices[..*logical_dim]
                .iter()
                .filter(|i| matches!(i, Index::NewAxis))
                .count();
        let source = self.source_of(index);
        let named = matches!(
            index,
            Index::Expr(Expr {
                kind: ExprKind::Name(_),
                ..
            })
        );
        let base = |kind, begin, width, squeeze, mask| Selector {
            kind,
            logical_dim,
            local_block: None,
            outer_block: None,
            begin,
            width,
            squeeze,
            mask,
        };
        let plain = |selector| {
            Ok(Normalized {
                selector,
                static_end: None,
            })
        };
        match source {
            // A. Tail: a data-dependent constant-width run inside `if live >= width:`.
            Source::Iota(iota) => {
                // Fault D13: a strided iota with a static start is read as a contiguous run.
                if self.faults.has(Fault::D13StridedIotaContiguous)
                    && let (Some(start), Some(length), Some(step)) = (
                        iota.start.as_ref().and_then(Affine::as_const),
                        iota.length,
                        iota.step,
                    )
                    && step > 1
                    && start >= 0
                    && length >= 1
                {
                    return plain(base(
                        SelectorKind::Static,
                        SelectorBegin::Static(start),
                        length,
                        false,
                        false,
                    ));
                }
                let graph = self.links.graph_of(sub);
                let GraphKind::Then(if_stmt) = self.links.graphs[graph].kind else {
                    return rej(Rule::SelectorTailOutsideConditional, &[]);
                };
                let (Some(length), Some(1)) = (iota.length.filter(|&l| l >= 1), iota.step) else {
                    return rej(Rule::SelectorTailNotContiguous, &[]);
                };
                let start = match &iota.start {
                    Some(a) if a.as_const().is_none() => Some(a.clone()),
                    Some(_) => return rej(Rule::SelectorTailNotContiguous, &[]),
                    None => None,
                };
                let Some(start) = start else {
                    // A SymInt start that is not affine: no live extent can be proven.
                    return rej(Rule::SelectorTailNotGuarded, &[]);
                };
                let live = start.add(&Affine::constant(length));
                let Some(outer) = live.as_live_extent() else {
                    return rej(Rule::SelectorTailNotGuarded, &[]);
                };
                // The predicate must be `Ge(live, width)` as sympy compares it; `width <= live`
                // traces through Python's reflected comparison to that same object, and nothing
                // else is normalized (D-1.5.1-16: `live - w >= 0` and `live > w - 1` fail).
                let guarded = if let StmtKind::If { cond, .. } = &if_stmt.kind
                    && let ExprKind::Compare {
                        op: CmpOp::Ge,
                        lhs: live_side,
                        rhs: width_side,
                    }
                    | ExprKind::Compare {
                        op: CmpOp::Le,
                        lhs: width_side,
                        rhs: live_side,
                    } = &cond.kind
                {
                    self.types.of(live_side).int_value().as_ref() == Some(&live)
                        && self.types.of(width_side).const_int() == Some(length)
                } else {
                    false
                };
                if !guarded {
                    return rej(Rule::SelectorTailNotGuarded, &[]);
                }
                // Fault D10: a run bound to a name before its branch loses its start.
                let begin = if named && self.faults.has(Fault::D10NamedRunLosesStart) {
                    SelectorBegin::Symbolic(Affine::constant(0))
                } else {
                    SelectorBegin::Symbolic(start)
                };
                let mut s = base(SelectorKind::Tail, begin, length, false, false);
                s.outer_block = Some(outer);
                plain(s)
            }
            // B. Tile run, or C. a static int reached through a node.
            Source::Node(node) => {
                let ty = self.types.of(node);
                if let Some(k) = ty.const_int() {
                    return self.static_int(k, base, sub);
                }
                let (block, squeeze) = match ty {
                    Ty::Int(Some(a)) => match a.as_sym() {
                        Some(Sym::TileBegin(b)) => (b, true),
                        _ => return rej(Rule::SelectorScalarNotTileBegin, &[]),
                    },
                    Ty::Int(None) => return rej(Rule::SelectorScalarNotTileBegin, &[]),
                    Ty::GridIndex(b) => (*b, true),
                    Ty::Tensor { dims, .. } if dims.len() == 1 => match self.tile_run(node) {
                        Some(b) => (b, false),
                        None => match self.tile_offset(node, 0) {
                            // Faults D11 and #2006: a shifted run `t.index + k` is read as the
                            // unshifted run (the offset is dropped).
                            Some((b, _))
                                if self.faults.has(Fault::D11UnmaskedGather)
                                    || self.faults.has(Fault::Issue2006DroppedIndexOffset) =>
                            {
                                (b, false)
                            }
                            _ => return rej(Rule::SelectorShiftedTileRun, &[]),
                        },
                    },
                    Ty::Tensor { .. }
                    | Ty::HostTensor { .. }
                    | Ty::Float
                    | Ty::Bool
                    | Ty::Mask { .. }
                    | Ty::Tile(_) => {
                        return rej(
                            Rule::SelectorUnsupportedIndex,
                            &[("index", &render::expr(node))],
                        );
                    }
                };
                let (static_end, outer) = self.driving_loop(sub, block)?;
                let mut s = base(
                    SelectorKind::Tile,
                    SelectorBegin::Symbolic(Affine::sym(Sym::TileBegin(block))),
                    self.types.block_size(block),
                    squeeze,
                    !squeeze,
                );
                s.local_block = Some(block);
                s.outer_block = outer;
                // Fault D9: `t.index + 0` is recognized but lowered without its mask; fault D11:
                // an unrecognized rank-1 index read as an unmasked gather.
                let arithmetic = !matches!(
                    self.links.resolve(node).kind,
                    ExprKind::TileAttr {
                        attr: TileAttr::Index,
                        ..
                    }
                );
                if (arithmetic && self.faults.has(Fault::D9OffsetRunUnmasked))
                    || (self.tile_run(node).is_none() && self.faults.has(Fault::D11UnmaskedGather))
                {
                    s.mask = false;
                }
                Ok(Normalized {
                    selector: s,
                    static_end,
                })
            }
            // C. Static int.
            Source::Int(k) => self.static_int(k, base, sub),
            // D. Static slice.
            Source::StaticSlice(start, stop, step) => match (start, stop, step) {
                // Fault D8: a negative start passes (trace time let it through too).
                (Some(a), Some(b), None | Some(1))
                    if (a >= 0 || self.faults.has(Fault::D8NegativeSliceBound)) && b > a =>
                {
                    plain(base(
                        SelectorKind::Static,
                        SelectorBegin::Static(a),
                        b - a,
                        false,
                        false,
                    ))
                }
                _ => rej(Rule::SelectorStaticSliceNotContiguous, &[]),
            },
            // E. Anything else.
            Source::Unsupported(repr) => rej(Rule::SelectorUnsupportedIndex, &[("index", &repr)]),
        }
    }

    fn static_int(
        &self,
        k: i64,
        base: impl Fn(SelectorKind, SelectorBegin, i64, bool, bool) -> Selector,
        sub: &Expr,
    ) -> Result<Normalized, Rejection> {
        if k < 0 {
            return Err(Rejection::new(
                Rule::SelectorNegativeIndex,
                sub.span,
                &[("at", &at(sub.span))],
            ));
        }
        let selector = base(
            SelectorKind::Static,
            SelectorBegin::Static(k),
            1,
            true,
            false,
        );
        Ok(Normalized {
            selector,
            static_end: None,
        })
    }

    /// Classifies an index entry: an iota (an `hl.arange`, or a slice with a data-dependent
    /// bound, which Helion's `visit_Slice` turns into one, spec §1.7), a node resolved through
    /// renames and captures, a static int or a static slice.
    fn source_of(&self, index: &'a Index) -> Source<'a> {
        match index {
            Index::Int(k) => Source::Int(*k),
            Index::Slice { start, stop, step } => {
                let bound = |b: &Option<Expr>| b.as_ref().map(|e| self.types.of(e).int_value());
                let (s, t, st) = (bound(start), bound(stop), bound(step));
                let is_static = |b: &Option<Option<Affine>>| match b {
                    None => true,
                    Some(a) => a.as_ref().is_some_and(|a| a.as_const().is_some()),
                };
                let cst =
                    |b: &Option<Option<Affine>>| b.clone().flatten().and_then(|a| a.as_const());
                if is_static(&s) && is_static(&t) {
                    return Source::StaticSlice(cst(&s), cst(&t), cst(&st));
                }
                match (&s, &t, cst(&st)) {
                    (Some(sa), Some(ta), step) if st.is_none() || step == Some(1) => {
                        let length = match (sa, ta) {
                            (Some(a), Some(b)) => b.sub(a).as_const(),
                            _ => None,
                        };
                        Source::Iota(Iota {
                            start: sa.clone(),
                            length,
                            step: Some(1),
                        })
                    }
                    _ => Source::Unsupported(slice_repr(start, stop, step)),
                }
            }
            Index::Expr(e) => {
                let source = self.links.resolve(e);
                if let ExprKind::Arange { start, step, .. } = &source.kind {
                    let start = match start {
                        Some(s) => self.types.of(s).int_value(),
                        None => Some(Affine::constant(0)),
                    };
                    let step = match step {
                        Some(s) => self.types.of(s).const_int(),
                        None => Some(1),
                    };
                    let length = self
                        .types
                        .of(source)
                        .dims()
                        .and_then(|d| d.first())
                        .map(|d| d.size);
                    Source::Iota(Iota {
                        start,
                        length,
                        step,
                    })
                } else {
                    Source::Node(source)
                }
            }
            Index::Full | Index::NewAxis => Source::Unsupported(":".into()),
        }
    }

    /// `_tile_run`: the block id of `t.index`, or of `t.index + c` / `c + t.index` /
    /// `t.index - c` with `c` known equal to 0 (`tile_with_offset`, spec §2.6 B, §4 D9).
    fn tile_run(&self, node: &'a Expr) -> Option<BlockId> {
        let (b, offset) = self.tile_offset(node, 0)?;
        (offset == Affine::constant(0)).then_some(b)
    }

    fn tile_offset(&self, e: &'a Expr, depth: usize) -> Option<(BlockId, Affine)> {
        if depth > 64 {
            return None;
        }
        let e = self.links.resolve(e);
        match &e.kind {
            ExprKind::TileAttr {
                attr: TileAttr::Index,
                ..
            } => {
                let b = self.types.of(e).dims()?.first()?.block?;
                Some((b, Affine::constant(0)))
            }
            ExprKind::Binary {
                op: BinOp::Add,
                lhs,
                rhs,
            } => {
                if let (Some((b, o)), Some(c)) = (
                    self.tile_offset(lhs, depth + 1),
                    self.types.of(rhs).int_value(),
                ) {
                    Some((b, o.add(&c)))
                } else {
                    let (b, o) = self.tile_offset(rhs, depth + 1)?;
                    Some((b, o.add(&self.types.of(lhs).int_value()?)))
                }
            }
            ExprKind::Binary {
                op: BinOp::Sub,
                lhs,
                rhs,
            } => {
                let (b, o) = self.tile_offset(lhs, depth + 1)?;
                Some((b, o.sub(&self.types.of(rhs).int_value()?)))
            }
            ExprKind::TileAttr {
                attr:
                    TileAttr::Begin
                    | TileAttr::End
                    | TileAttr::Count
                    | TileAttr::BlockSize
                    | TileAttr::Id,
                ..
            }
            | ExprKind::Binary {
                op: BinOp::Mul | BinOp::Div | BinOp::FloorDiv,
                ..
            }
            | ExprKind::Name(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Size { .. }
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
            | ExprKind::Alloc { .. } => None,
        }
    }

    /// `_enclosing_loop_bounds`: the first device loop, walking up from the subscript's graph
    /// through loops and branches, whose block ids contain `block`; its begin must be 0 and its
    /// end static (≥ 1) or some tile's live extent (spec §2.6 B). Returns the static end and the
    /// outer tile of a live-extent end. Every refusal names the subscript's line, not the
    /// loop's (`location = _where(node)` of the subscript, D-1.5.1-06).
    fn driving_loop(
        &self,
        sub: &Expr,
        block: BlockId,
    ) -> Result<(Option<i64>, Option<BlockId>), Rejection> {
        if let Some(dim) = self.enclosing_loop_dim(self.links.graph_of(sub), block) {
            let rej = |rule: Rule| Err(Rejection::new(rule, sub.span, &[("at", &at(sub.span))]));
            if let Some(b) = &dim.begin
                && self.types.of(b).const_int() != Some(0)
            {
                return rej(Rule::SelectorLoopNotZeroBased);
            }
            return match self.types.of(&dim.end) {
                Ty::Int(Some(a)) => match (a.as_const(), a.as_live_extent()) {
                    (Some(c), _) if c < 1 => rej(Rule::SelectorLoopEmpty),
                    (Some(c), _) => Ok((Some(c), None)),
                    (None, Some(outer)) => Ok((None, Some(outer))),
                    (None, None) => rej(Rule::SelectorLiveExtentMismatch),
                },
                Ty::Int(None) => rej(Rule::SelectorLiveExtentMismatch),
                Ty::GridIndex(_)
                | Ty::HostTensor { .. }
                | Ty::Tensor { .. }
                | Ty::Float
                | Ty::Bool
                | Ty::Mask { .. }
                | Ty::Tile(_) => rej(Rule::SelectorUnsupportedEnd),
            };
        }
        Err(Rejection::new(
            Rule::SelectorNoDrivingLoop,
            sub.span,
            &[("at", &at(sub.span))],
        ))
    }

    /// Applies a normalized selector to every variant of the subscripted Ref (spec §2.7), in
    /// the spec's order per variant. `sub` is the subscript (for spans).
    pub(crate) fn apply(
        &self,
        sub: &Expr,
        norm: &Normalized,
        input: &[Variant],
    ) -> Result<Vec<Variant>, Rejection> {
        let s = &norm.selector;
        let rej =
            |rule: Rule, span: Span, args: &[(&str, &str)]| Err(Rejection::new(rule, span, args));
        // `line N`, formatted only for a refusal's message.
        let here = || at(sub.span);
        let ExprKind::Subscript { value, .. } = &sub.kind else {
            return rej(Rule::SelectorNoTensorMetadata, sub.span, &[("at", &here())]);
        };
        let (dtype, rank) = match self.types.of(value) {
            Ty::Tensor { dtype, dims } => (*dtype, dims.len()),
            _ => return rej(Rule::SelectorNoTensorMetadata, sub.span, &[("at", &here())]),
        };
        let mut out = Vec::with_capacity(input.len());
        for v in input {
            let width = match s.kind {
                SelectorKind::Tile => {
                    s.local_block.map_or(0, |b| self.types.block_size(b)) * i64::from(v.factor)
                }
                SelectorKind::Tail | SelectorKind::Static => s.width,
            };
            let Some(pd) = v.physical_dim(s.logical_dim).filter(|_| width >= 1) else {
                return rej(Rule::SelectorNoConcreteWidth, sub.span, &[("at", &here())]);
            };
            let lane = v.shape.last().copied().unwrap_or(0);
            if slice_addressing(dtype, rank, s.logical_dim, lane) != Addressing::Direct {
                let aligned = match (s.kind, &s.begin) {
                    (SelectorKind::Static, SelectorBegin::Static(b)) => {
                        static_run_aligned(dtype, rank, s.logical_dim, *b, width)
                    }
                    // D-1.5.1-13: a tile run whose width is a multiple of the alignment.
                    (SelectorKind::Tile, _) => {
                        width % required_alignment(rank, s.logical_dim, dtype.bitwidth()) == 0
                    }
                    (SelectorKind::Static, SelectorBegin::Symbolic(_))
                    | (SelectorKind::Tail, _) => false,
                };
                if !aligned {
                    return rej(Rule::SelectorUnaligned, sub.span, &[("at", &here())]);
                }
            }
            if s.squeeze && width != 1 {
                return rej(
                    Rule::SelectorScalarWidth,
                    sub.span,
                    &[("at", &here()), ("width", &width.to_string())],
                );
            }
            let extent = v.shape[pd];
            // Fault D5: a run past the block's extent is not refused.
            let d5 = self.faults.has(Fault::D5SlicePastExtent);
            if width > extent && !d5 {
                return rej(
                    Rule::SelectorWiderThanBlock,
                    sub.span,
                    &[
                        ("width", &width.to_string()),
                        ("extent", &extent.to_string()),
                        ("at", &here()),
                    ],
                );
            }
            match (s.kind, &s.begin) {
                (SelectorKind::Static, SelectorBegin::Static(begin)) => {
                    if begin.saturating_add(width) > extent && !d5 {
                        return rej(Rule::SelectorStaticPastExtent, sub.span, &[("at", &here())]);
                    }
                    if v.live_guard.is_some_and(|(d, _)| d == pd) {
                        return rej(
                            Rule::SelectorStaticMayAddressPadding,
                            sub.span,
                            &[("at", &here())],
                        );
                    }
                }
                (SelectorKind::Tile, _) => {
                    if extent % width != 0 {
                        return rej(Rule::SelectorWidthNotDividing, sub.span, &[("at", &here())]);
                    }
                    if norm.static_end.is_some_and(|e| e != extent) {
                        return rej(Rule::SelectorLoopNotCovering, sub.span, &[("at", &here())]);
                    }
                }
                (SelectorKind::Static, SelectorBegin::Symbolic(_)) | (SelectorKind::Tail, _) => {}
            }
            let mut next = v.clone();
            if let (Some((d, b)), Some(outer)) = (v.live_guard, s.outer_block)
                && d == pd
                && b == outer
            {
                next.live_guard = None;
            }
            next.shape[pd] = width;
            if s.squeeze && !next.squeezed_dims.contains(&pd) {
                next.squeezed_dims.push(pd);
                next.squeezed_dims.sort_unstable();
            }
            out.push(next);
        }
        Ok(out)
    }
}

fn slice_repr(start: &Option<Expr>, stop: &Option<Expr>, step: &Option<Expr>) -> String {
    let r = |b: &Option<Expr>| b.as_ref().map(render::expr).unwrap_or_default();
    match step {
        Some(_) => format!("{}:{}:{}", r(start), r(stop), r(step)),
        None => format!("{}:{}", r(start), r(stop)),
    }
}
