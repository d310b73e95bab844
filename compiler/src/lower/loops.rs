//! Loop lowerings (spec §1.2–1.4): the launch grid (the outermost loop, `pl.program_id(k)`),
//! nested loops one dim at a time with their bounds and loop-dimension records ([`LoopDim`]),
//! and `unroll` (a Python `for`, static or dynamic). `fori_loop` and `emit_pipeline` are in
//! `traced`, the names carried around a loop in `carry`.

use super::loop_dim::LoopDim;
use super::pad::{Bounds, LoopBounds};
use super::stmt::assign;
use super::{Env, LResult, Lowerer, Val, gap};
use crate::verdict::{Rejection, Rule};
use lang::ir::arith::ceil_div;
use lang::ir::live::{Names, stmt_reads};
use lang::ir::sym::{Affine, BlockId, Sym};
use lang::ir::types::Types;
use lang::ir::{Case, Loop, LoopType, Span, Stmt, StmtKind};
use lang::pallas::{self, CmpOp, Expr as P};

type PStmt = pallas::Stmt;

impl Lowerer<'_> {
    /// The outermost loop: the launch grid (spec §1.2). Returns the grid.
    pub(super) fn lower_grid_loop(
        &mut self,
        lp: &Loop,
        span: Span,
        env: &mut Env,
        out: &mut Vec<PStmt>,
    ) -> LResult<Vec<i64>> {
        let ids = self.types.blocks.loop_ids(lp).to_vec();
        if ids.len() != lp.dims.len() {
            return gap(span, "a loop whose block ids are unknown");
        }
        let mut grid = Vec::new();
        for (axis, ((var, &bid), _dim)) in lp.vars.iter().zip(&ids).zip(&lp.dims).enumerate() {
            let Some(lb) = self.bounds.by_block.get(&bid).cloned() else {
                return gap(span, "a loop without bounds");
            };
            let (Some(b), Some(e)) = (lb.static_begin(), lb.static_end()) else {
                return gap(span, "a launch-grid loop with non-static bounds");
            };
            let grid_kind = Self::is_grid(lp.kind);
            // `bs >= 1`: the division is total.
            let trips = if e > b {
                ceil_div(e.saturating_sub(b), lb.bs).unwrap_or(0)
            } else {
                0
            };
            if trips == 0 {
                // Mosaic has no empty launch (`pltpu.emit_pipeline` refuses `grid=(0,)`, and a
                // zero-size VMEM Ref is an invalid memref type), so neither our JAX engines nor
                // Helion 1.5.1 (known issue `helion-empty-launch-grid`) run it: the reference
                // and Helion's eager mode check such a case.
                return gap(span, "a launch grid with an empty dim");
            }
            grid.push(trips);
            let ld = LoopDim::new(
                bid,
                grid_kind,
                P::Int(b),
                P::Int(e),
                lb.bs,
                Some(e.saturating_sub(b)),
            );
            out.push(assign(
                &ld.offset,
                P::Int(b).plus(P::ProgramId(axis).times(ld.block.clone())),
            ));
            if let Some(m) = &ld.mask {
                out.push(assign(m, ld.index().compare(CmpOp::Lt, ld.end.clone())));
            }
            env.insert(
                var.clone(),
                if grid_kind {
                    Val::Grid(bid)
                } else {
                    Val::Tile(bid)
                },
            );
            self.loops.insert(bid, ld);
        }
        self.lower_body(&lp.body, env, out, &Names::default())?;
        Ok(grid)
    }

    /// A nested loop, dimension `k` of `lp` (a multi-dim `hl.tile([m, n])` nests one loop
    /// per dim, outermost first).
    pub(super) fn lower_loop(
        &mut self,
        lp: &Loop,
        k: usize,
        span: Span,
        env: &mut Env,
        out: &mut Vec<PStmt>,
        live: &Names,
    ) -> LResult<()> {
        let ids = self.types.blocks.loop_ids(lp).to_vec();
        let (Some(&bid), Some(dim), Some(var)) = (ids.get(k), lp.dims.get(k), lp.vars.get(k))
        else {
            return gap(span, "a loop whose block ids are unknown");
        };
        let Some(lb) = self.bounds.by_block.get(&bid).cloned() else {
            return gap(span, "a loop without bounds");
        };
        if let Some(e) = min_max_bound(dim, &self.min_max_names) {
            return gap(e.span, "`min(...)`/`max(...)` in a loop bound");
        }
        let grid_kind = Self::is_grid(lp.kind);
        let bs = lb.bs;
        // Begin and end, bound to names unless trivial.
        let begin_static = match &dim.begin {
            Some(b) => self.static_int(b, env),
            None => Some(0),
        };
        let end_static = self.static_int(&dim.end, env);
        let begin = match (&dim.begin, begin_static) {
            (_, Some(v)) => P::Int(v),
            (Some(b), None) => {
                let e = self.lower_expr(b, env, out)?;
                self.bind_trivial(e, format!("begin_{bid}"), out)
            }
            (None, None) => P::Int(0),
        };
        let end = match end_static {
            Some(v) => P::Int(v),
            None => {
                let e = self.lower_expr(&dim.end, env, out)?;
                self.bind_trivial(e, format!("end_{bid}"), out)
            }
        };
        let static_extent = begin_static
            .zip(end_static)
            .map(|(b, e)| e.saturating_sub(b));
        // The emitted loop may use an `int` argument's value, but for Helion 1.5.1 a bound
        // built from one is symbolic, which `unroll` refuses (D-1.5.1-14).
        let host = &self.types.host;
        let runtime_bound =
            host.is_runtime(&dim.end) || dim.begin.as_ref().is_some_and(|b| host.is_runtime(b));
        let ld = LoopDim::new(bid, grid_kind, begin, end, bs, static_extent);
        self.loops.insert(bid, ld.clone());
        let value_of_var = if grid_kind {
            Val::Grid(bid)
        } else {
            Val::Tile(bid)
        };
        match self.loop_type() {
            LoopType::Unroll => self.lower_unroll(
                lp,
                k,
                &ld,
                &lb,
                var,
                value_of_var,
                static_extent.is_some() && !runtime_bound,
                span,
                env,
                out,
                live,
            ),
            LoopType::ForiLoop | LoopType::EmitPipeline => {
                self.lower_traced_loop(lp, k, &ld, var, value_of_var, span, env, out, live)
            }
        }
    }

    fn bind_trivial(&mut self, e: P, name: String, out: &mut Vec<PStmt>) -> P {
        if e.is_atom() {
            return e;
        }
        out.push(assign(name.clone(), e));
        P::Name(name)
    }

    /// The body of dim `k`: the next dim's loop, or the loop body.
    pub(super) fn lower_loop_inner(
        &mut self,
        lp: &Loop,
        k: usize,
        span: Span,
        env: &mut Env,
        out: &mut Vec<PStmt>,
        live: &Names,
    ) -> LResult<()> {
        if k + 1 < lp.dims.len() {
            self.lower_loop(lp, k + 1, span, env, out, live)
        } else {
            // The body repeats: what it reads is live at its end.
            let mut body_live = live.clone();
            lp.body.iter().for_each(|s| stmt_reads(s, &mut body_live));
            self.lower_body(&lp.body, env, out, &body_live)
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn lower_unroll(
        &mut self,
        lp: &Loop,
        k: usize,
        ld: &LoopDim,
        lb: &LoopBounds,
        var: &str,
        value_of_var: Val,
        static_bounds: bool,
        span: Span,
        env: &mut Env,
        out: &mut Vec<PStmt>,
        live: &Names,
    ) -> LResult<()> {
        if static_bounds {
            let mut body = Vec::new();
            if let Some(m) = &ld.mask {
                body.push(assign(m, ld.index().compare(CmpOp::Lt, ld.end.clone())));
            }
            env.insert(var.to_string(), value_of_var);
            self.lower_loop_inner(lp, k, span, env, &mut body, live)?;
            out.push(PStmt::For {
                var: ld.offset.clone(),
                start: ld.begin.clone(),
                stop: ld.end.clone(),
                step: (ld.bs != 1).then(|| ld.block.clone()),
                body,
            });
            return Ok(());
        }
        // Dynamic unroll (`_codegen_dynamic_unroll`): only an enclosing tile's end, from a
        // static begin or that tile's begin.
        let outer = match unroll_of(lb, ld.bid, false, |b| self.loops.contains_key(&b)) {
            Unroll::Dynamic { outer } => outer,
            Unroll::Static | Unroll::Refused => {
                return Err(super::LowerError::Rejected(unroll_refused(span)));
            }
        };
        let Some(trips) = self.bounds.dynamic_unroll_trips(lb, outer) else {
            return gap(
                span,
                "a dynamic unroll whose trip count has no static bound",
            );
        };
        let i = self.fresh("_u");
        let mut body = Vec::new();
        body.push(assign(
            &ld.offset,
            ld.begin.clone().plus(P::name(&i).times(ld.block.clone())),
        ));
        if let Some(m) = &ld.mask {
            body.push(assign(m, ld.index().compare(CmpOp::Lt, ld.end.clone())));
        }
        env.insert(var.to_string(), value_of_var);
        let pred = P::name(&ld.offset).compare(CmpOp::Lt, ld.end.clone());
        if k + 1 < lp.dims.len() {
            return gap(span, "a multi-dimensional dynamic unroll");
        }
        let mut body_live = live.clone();
        lp.body.iter().for_each(|s| stmt_reads(s, &mut body_live));
        self.lower_branches(pred, &lp.body, &[], env, &mut body, &body_live, span)?;
        out.push(PStmt::For {
            var: i,
            start: P::Int(0),
            stop: P::Int(trips),
            step: None,
            body,
        });
        Ok(())
    }
}

/// How Helion 1.5.1's `unroll` codegen takes a nested loop dim (`tracing_ops.py`, the Pallas
/// `_for_loop`): static bounds are a Python `for`; a bound that is an enclosing tile's end
/// (from a static begin or that tile's begin) is `_codegen_dynamic_unroll`; any other
/// symbolic bound raises `InvalidConfig` (`config.unroll-dynamic-bounds`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unroll {
    /// Static bounds.
    Static,
    /// Bounded by the end of the enclosing tile `outer`.
    Dynamic { outer: BlockId },
    /// Refused.
    Refused,
}

/// The Python `min(...)`/`max(...)` in a bound of `dim`, if any, written there
/// (`hl.tile(start, min(end, tile.end))`) or through a name bound to one (`e = min(n,
/// t.end)`, then `hl.tile(t.begin, e)`; `min_max` are those names, [`min_max_names`]). Helion
/// 1.5.1 traces it to `torch.sym_min` and takes the loop under every loop type (measured:
/// `hl.tile(0, min(x.size(1), tile_q.end))` under `unroll` runs its `_dynamic_unroll_body`);
/// the model plans no such bound, so the loop is a [`super::Gap`], never a refusal.
pub(super) fn min_max_bound<'e>(
    dim: &'e lang::ir::LoopDim,
    min_max: &[String],
) -> Option<&'e lang::ir::Expr> {
    let mut found = None;
    for b in dim.begin.iter().chain(std::iter::once(&dim.end)) {
        lang::ir::walk::each_expr(b, &mut |e| {
            if found.is_none() && is_min_max(e, min_max) {
                found = Some(e);
            }
        });
    }
    found
}

fn is_min_max(e: &lang::ir::Expr, min_max: &[String]) -> bool {
    match &e.kind {
        lang::ir::ExprKind::Op {
            op: lang::ir::TensorOp::IntMin | lang::ir::TensorOp::IntMax,
            ..
        } => true,
        lang::ir::ExprKind::Name(n) => min_max.contains(n),
        _ => false,
    }
}

/// The names the kernel binds, anywhere, to a value computed with Python's `min`/`max` (or
/// from such a name), to a fixpoint: whichever binding reaches a loop, its bound may be one.
pub(super) fn min_max_names(body: &[Stmt]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    loop {
        let before = names.len();
        lang::ir::walk::each_stmt(body, &mut |s| {
            let StmtKind::Assign { target, value } = &s.kind else {
                return;
            };
            if names.contains(target) {
                return;
            }
            let mut hit = false;
            lang::ir::walk::each_expr(value, &mut |e| hit |= is_min_max(e, &names));
            if hit {
                names.push(target.clone());
            }
        });
        if names.len() == before {
            return names;
        }
    }
}

/// The [`Unroll`] of the loop dim of block `bid` with bounds `lb`; `static_bounds` when both
/// bounds are static ints (not a runtime `int` argument, D-1.5.1-14); `enclosing(b)` when the
/// loop of block `b` was begun before this one (the lowering keeps every loop it has begun).
fn unroll_of(
    lb: &LoopBounds,
    bid: BlockId,
    static_bounds: bool,
    enclosing: impl Fn(BlockId) -> bool,
) -> Unroll {
    if static_bounds {
        return Unroll::Static;
    }
    let Some(Sym::TileEnd(outer)) = lb.end.as_ref().and_then(Affine::as_sym) else {
        return Unroll::Refused;
    };
    if !enclosing(outer) || outer == bid {
        return Unroll::Refused;
    }
    match (
        lb.begin.as_ref().and_then(Affine::as_sym),
        lb.static_begin(),
    ) {
        (Some(Sym::TileBegin(b)), _) if b == outer => Unroll::Dynamic { outer },
        (_, Some(_)) => Unroll::Dynamic { outer },
        _ => Unroll::Refused,
    }
}

fn unroll_refused(span: Span) -> Rejection {
    Rejection::new(Rule::ConfigUnrollDynamicBounds, span, &[])
}

/// The `config.unroll-dynamic-bounds` refusal of the first nested loop (program order) that
/// `unroll` refuses, judged from the trace types alone; `None` under another loop type.
///
/// Helion raises it when its codegen reaches the loop, after emitting everything before it;
/// the lowering raises it at the same point, but stops earlier at a construct the codegen does
/// not model (a [`super::Gap`]), which Helion emits. So a gap is not the verdict until this
/// finds no refused loop (campaign finding 0006: `torch.rsqrt` before `hl.tile(live - 3)`;
/// Helion's `test_bmm_nonzero_k_begin`: a tile used as a value before `hl.tile(k_start, k_end)`
/// over `int` arguments). [`super::lower`] also orders it against a pointwise mismatch the
/// codegen refuses ([`Types::deferred`]). The bounds are static when their trace types are
/// constants, where the lowering reads its environment; the two differ only where the
/// lowering stopped anyway.
pub(super) fn unroll_refusal(case: &Case, types: &Types, bounds: &Bounds) -> Option<Rejection> {
    if case.effective_loop_type() != LoopType::Unroll {
        return None;
    }
    fn walk(
        body: &[Stmt],
        types: &Types,
        bounds: &Bounds,
        min_max: &[String],
        seen: &mut Vec<BlockId>,
        nested: bool,
    ) -> Option<Rejection> {
        for s in body {
            match &s.kind {
                StmtKind::For(lp) => {
                    let ids = types.blocks.loop_ids(lp);
                    for (dim, &bid) in lp.dims.iter().zip(ids) {
                        if nested
                            && min_max_bound(dim, min_max).is_none()
                            && let Some(lb) = bounds.by_block.get(&bid)
                        {
                            let runtime = types.host.is_runtime(&dim.end)
                                || dim.begin.as_ref().is_some_and(|b| types.host.is_runtime(b));
                            let static_bounds = !runtime
                                && lb.static_begin().is_some()
                                && lb.static_end().is_some();
                            if unroll_of(lb, bid, static_bounds, |b| seen.contains(&b))
                                == Unroll::Refused
                            {
                                return Some(unroll_refused(s.span));
                            }
                        }
                        seen.push(bid);
                    }
                    if let Some(r) = walk(&lp.body, types, bounds, min_max, seen, true) {
                        return Some(r);
                    }
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    if let Some(r) = walk(then_body, types, bounds, min_max, seen, nested)
                        .or_else(|| walk(else_body, types, bounds, min_max, seen, nested))
                    {
                        return Some(r);
                    }
                }
                StmtKind::Assign { .. }
                | StmtKind::AugAssign { .. }
                | StmtKind::Store { .. }
                | StmtKind::Atomic { .. }
                | StmtKind::Return(_) => {}
            }
        }
        None
    }
    let min_max = min_max_names(&case.kernel.body);
    walk(
        &case.kernel.body,
        types,
        bounds,
        &min_max,
        &mut Vec::new(),
        false,
    )
}
