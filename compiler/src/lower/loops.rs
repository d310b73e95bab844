//! Loop lowerings (spec §1.2–1.4, §1.9): the launch grid, `unroll`, `fori_loop`,
//! `emit_pipeline`, `if` as `jax.lax.cond`, and the loop-dimension records tile attributes
//! read.
//!
//! Loop-carried values: a name assigned in a loop body that is bound before the loop and read
//! after it (or read in the body before being assigned) is carried — through the `fori_loop`
//! carry tuple, or through a scratch Ref (`_carry_<k>`, VMEM for tensors, SMEM for scalars)
//! around `emit_pipeline`; `unroll` is a Python `for` and needs nothing. An `if` passes the
//! names its branches assign as `cond` operands and returns those still needed after it.

use super::{Env, LResult, Lowerer, Val, gap, py_name};
use crate::verdict::{Rejection, Rule};
use lang::ir::sym::{Affine, BlockId, Sym};
use lang::ir::types::{Ty, broadcast, promote};
use lang::ir::{Expr, ExprKind, Loop, LoopType, Span, Stmt, StmtKind, walk};
use lang::pallas::{
    self, CmpOp, Expr as P, Function, IndexPart, Jnp, MemorySpace, Scratch, Target,
};
use lang::tensor::DType;

type PStmt = pallas::Stmt;
pub(crate) use lang::ir::live::Names;
use lang::ir::live::{definitely_assigned, exposed, live_after, stmt_reads};

/// The record of one loop dimension: everything tile attributes and masks read. Built only by
/// [`LoopDim::new`], which takes the begin and the end together, so `tile.count` can never see
/// one without the other (spec §4 D2).
#[derive(Clone, Debug, PartialEq)]
pub struct LoopDim {
    /// The block id.
    pub bid: BlockId,
    /// `hl.grid` (scalar index, block 1, never masked).
    pub grid: bool,
    /// The offset variable (`offset_<bid>`): the tile's first index.
    pub offset: String,
    /// The loop's begin.
    pub begin: P,
    /// The loop's end.
    pub end: P,
    /// The block size as emitted (`_BLOCK_SIZE_<bid>`, or 1 for grids).
    pub block: P,
    /// The effective block size.
    pub bs: i64,
    /// The mask variable (`mask_<bid>`), present iff the extent may not be a multiple of the
    /// block.
    pub mask: Option<String>,
    /// Whether every offset is known to be a multiple of the block (a static begin that is
    /// one), so `pl.multiple_of(offset, bs)` is a true claim (Mosaic verifies it on
    /// constants).
    pub aligned: bool,
}

impl LoopDim {
    /// The record of loop dimension `bid` running from `begin` to `end` by `bs`;
    /// `static_extent` is `end - begin` when both are static.
    pub fn new(
        bid: BlockId,
        grid: bool,
        begin: P,
        end: P,
        bs: i64,
        static_extent: Option<i64>,
    ) -> LoopDim {
        let begin_lit = begin.as_int();
        let masked = !grid
            && match static_extent {
                Some(e) => e > 0 && e % bs != 0,
                None => bs != 1,
            };
        LoopDim {
            bid,
            grid,
            offset: format!("offset_{bid}"),
            begin,
            end,
            block: if grid {
                P::Int(1)
            } else {
                P::name(format!("_BLOCK_SIZE_{bid}"))
            },
            bs,
            mask: masked.then(|| format!("mask_{bid}")),
            aligned: matches!(begin_lit, Some(b) if bs != 0 && b % bs == 0),
        }
    }

    /// `t.begin`: `offset_<bid>`.
    pub fn begin_attr(&self) -> P {
        P::name(&self.offset)
    }

    /// `t.end`: `offset + bs`, or `jnp.minimum(offset + bs, end)` when masked (spec §1.3).
    pub fn tile_end(&self) -> P {
        let next = P::name(&self.offset).plus(self.block.clone());
        match &self.mask {
            Some(_) => Jnp::Minimum(Box::new(next), Box::new(self.end.clone())).into(),
            None => next,
        }
    }

    /// `end - begin`.
    pub fn extent(&self) -> P {
        match self.begin {
            P::Int(0) => self.end.clone(),
            // Not folded, so the emitted `tile.count` shows both bounds (spec §4 D2).
            _ => P::Binary {
                op: pallas::BinOp::Sub,
                lhs: Box::new(self.end.clone()),
                rhs: Box::new(self.begin.clone()),
            },
        }
    }

    /// `t.count` and the trip count: `(end - begin + bs - 1) // bs`, from this loop's own
    /// begin and end.
    pub fn count(&self) -> P {
        self.extent()
            .plus(self.block.clone())
            .minus(P::Int(1))
            .floor_div(self.block.clone())
    }

    /// `t.count` as the pre-#3201 lowering computed it (fault D2): `cdiv(end - 0, bs)`, the
    /// loop's begin dropped.
    pub fn count_without_begin(&self) -> P {
        self.end
            .clone()
            .plus(self.block.clone())
            .minus(P::Int(1))
            .floor_div(self.block.clone())
    }

    /// `t.id`: `offset // bs`.
    pub fn id(&self) -> P {
        P::name(&self.offset).floor_div(self.block.clone())
    }

    /// `t.index`: `offset + jnp.arange(0, bs, dtype=jnp.int32)`.
    pub fn index(&self) -> P {
        P::name(&self.offset).plus(arange(self.block.clone()))
    }
}

fn arange(n: P) -> P {
    Jnp::Arange {
        start: Box::new(P::Int(0)),
        stop: Box::new(n),
        dtype: DType::Int32,
    }
    .into()
}

fn assign(name: impl Into<String>, value: P) -> PStmt {
    PStmt::Assign {
        target: Target::Name(name.into()),
        value,
    }
}

/// The type a carried name has (values and static ints only).
pub(crate) fn carried_ty(v: &Val) -> Option<Ty> {
    match v {
        Val::Value { ty, .. } => Some(ty.clone()),
        Val::Int(c) => Some(Ty::Int(Some(Affine::constant(*c)))),
        Val::Ref { .. } | Val::Tile(_) | Val::Grid(_) | Val::Host(_) => None,
    }
}

/// The type of `a <op> b` (for `+=`), following torch promotion.
pub(crate) fn combine_ty(op: lang::ir::BinOp, a: &Ty, b: &Ty) -> Ty {
    let div = op == lang::ir::BinOp::Div;
    match (a, b) {
        (Ty::Tensor { dtype: x, dims: dx }, Ty::Tensor { dtype: y, dims: dy }) => {
            let mut dtype = promote(*x, *y);
            if div && dtype == DType::Int32 {
                dtype = DType::Float32;
            }
            Ty::Tensor {
                dtype,
                dims: broadcast(dx, dy).unwrap_or_else(|| dx.clone()),
            }
        }
        (Ty::Tensor { dtype, dims }, s) | (s, Ty::Tensor { dtype, dims }) => {
            let float = matches!(s, Ty::Float) || div;
            let dtype = if *dtype == DType::Int32 && float {
                DType::Float32
            } else {
                *dtype
            };
            Ty::Tensor {
                dtype,
                dims: dims.clone(),
            }
        }
        (Ty::Float, _) | (_, Ty::Float) => Ty::Float,
        _ if div => Ty::Float,
        _ => Ty::Int(None),
    }
}

fn same_shape(a: &Ty, b: &Ty) -> bool {
    match (a, b) {
        (Ty::Tensor { dims: x, .. }, Ty::Tensor { dims: y, .. }) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.size == q.size)
        }
        (Ty::Tensor { dims, .. }, _) | (_, Ty::Tensor { dims, .. }) => dims.is_empty(),
        _ => true,
    }
}

/// `value` converted to the carried type `to` when its dtype differs.
fn cast_to(value: P, from: &Ty, to: &Ty) -> P {
    match (from.dtype(), to.dtype()) {
        (Some(a), Some(b)) if a != b => value.astype(b),
        (None, Some(b)) => value.astype(b),
        _ => value,
    }
}

impl<'a> Lowerer<'a> {
    /// Lowers a statement list; `live_after` are the names read after it.
    pub(super) fn lower_body(
        &mut self,
        stmts: &[Stmt],
        env: &mut Env,
        out: &mut Vec<PStmt>,
        live_after: &Names,
    ) -> LResult<()> {
        // Liveness is needed only where a loop or a branch decides what to carry, so it is
        // computed there, from the statements after it (`rest`) and `live_after`.
        for (i, s) in stmts.iter().enumerate() {
            self.lower_stmt(s, &stmts[i + 1..], env, out, live_after)?;
        }
        Ok(())
    }

    fn lower_stmt(
        &mut self,
        s: &Stmt,
        rest: &[Stmt],
        env: &mut Env,
        out: &mut Vec<PStmt>,
        live: &Names,
    ) -> LResult<()> {
        match &s.kind {
            StmtKind::Assign { target, value } => self.lower_assign(target, value, env, out),
            StmtKind::AugAssign { target, op, value } => {
                let old = env.get(target).cloned();
                let Some(old_ty) = old.as_ref().and_then(carried_ty) else {
                    return gap(
                        s.span,
                        format!("`{target} {}=` of a name that holds no value", op.symbol()),
                    );
                };
                if let (Some(Val::Int(a)), Some(b)) = (&old, self.static_int(value, env)) {
                    let folded = match op {
                        lang::ir::BinOp::Add => a.checked_add(b),
                        lang::ir::BinOp::Sub => a.checked_sub(b),
                        lang::ir::BinOp::Mul => a.checked_mul(b),
                        lang::ir::BinOp::FloorDiv | lang::ir::BinOp::Div => None,
                    };
                    if let Some(v) = folded {
                        env.insert(target.clone(), Val::Int(v));
                        return Ok(());
                    }
                }
                let lhs = self.lower_name(target, env, s.span)?;
                let rhs = self.lower_expr(value, env, out)?;
                let ty = combine_ty(*op, &old_ty, self.types.of(value));
                let py = py_name(target);
                out.push(assign(
                    py.clone(),
                    P::Binary {
                        op: super::expr::bin_op(*op),
                        lhs: Box::new(lhs),
                        rhs: Box::new(rhs),
                    },
                ));
                env.insert(target.clone(), Val::Value { py, ty });
                Ok(())
            }
            StmtKind::Store {
                tensor,
                indices,
                value,
                ..
            } => self.lower_store(tensor, indices, value, None, env, out, s.span),
            StmtKind::Atomic {
                op,
                tensor,
                indices,
                expected,
                value,
            } => self.lower_store(
                tensor,
                indices,
                value,
                Some((*op, expected.as_ref())),
                env,
                out,
                s.span,
            ),
            StmtKind::For(lp) => {
                let live = live_after(rest, live);
                self.lower_loop(lp, 0, s.span, env, out, &live)
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                let pred = self.lower_expr(cond, env, out)?;
                let live = live_after(rest, live);
                self.lower_branches(pred, then_body, else_body, env, out, &live, s.span)
            }
            StmtKind::Return(_) => gap(s.span, "`return` inside a device loop"),
        }
    }

    fn lower_assign(
        &mut self,
        target: &str,
        value: &Expr,
        env: &mut Env,
        out: &mut Vec<PStmt>,
    ) -> LResult<()> {
        if let ExprKind::Alloc { .. } = value.kind {
            return gap(value.span, "an allocation inside a device loop");
        }
        if let Some(v) = self.static_int(value, env) {
            env.insert(target.to_string(), Val::Int(v));
            return Ok(());
        }
        if let ExprKind::Name(n) = &value.kind {
            match env.get(n) {
                Some(v @ (Val::Tile(_) | Val::Grid(_) | Val::Host(_))) => {
                    let v = v.clone();
                    env.insert(target.to_string(), v);
                    return Ok(());
                }
                Some(Val::Value { .. } | Val::Ref { .. } | Val::Int(_)) | None => {}
            }
        }
        let is_ref = self.is_ref(value, env);
        let e = self.lower_expr(value, env, out)?;
        let py = py_name(target);
        out.push(assign(py.clone(), e));
        let val = if is_ref {
            Val::Ref { py }
        } else {
            Val::Value {
                py,
                ty: self.types.of(value).clone(),
            }
        };
        env.insert(target.to_string(), val);
        Ok(())
    }

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
            let trips = if e > b {
                e.saturating_sub(b).saturating_add(lb.bs - 1) / lb.bs
            } else {
                0
            };
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
    fn lower_loop(
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
        match e {
            P::Name(_) | P::Int(_) => e,
            other => {
                out.push(assign(name.clone(), other));
                P::Name(name)
            }
        }
    }

    /// The body of dim `k`: the next dim's loop, or the loop body.
    fn lower_loop_inner(
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

    /// Names carried around loop `lp`: assigned in its body, bound before to a value, and
    /// read after the loop or before being assigned in the body.
    fn carried(&self, lp: &Loop, env: &Env, live: &Names, span: Span) -> LResult<Vec<String>> {
        let mut exp = Names::default();
        let mut defined: Names = lp.vars.iter().map(String::as_str).collect();
        exposed(&lp.body, &mut defined, &mut exp);
        let mut out = Vec::new();
        for n in walk::assigned(&lp.body) {
            match env.get(&n) {
                Some(Val::Value { .. } | Val::Int(_)) => {
                    if live.contains(n.as_str()) || exp.contains(n.as_str()) {
                        out.push(n);
                    }
                }
                Some(Val::Ref { .. }) if live.contains(n.as_str()) || exp.contains(n.as_str()) => {
                    return gap(
                        span,
                        format!("the resident Ref `{n}` is reassigned inside a loop"),
                    );
                }
                Some(Val::Ref { .. } | Val::Tile(_) | Val::Grid(_) | Val::Host(_)) | None => {}
            }
        }
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn lower_unroll(
        &mut self,
        lp: &Loop,
        k: usize,
        ld: &LoopDim,
        lb: &super::pad::LoopBounds,
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
        let reject = || {
            Err(super::LowerError::Rejected(Rejection::new(
                Rule::ConfigUnrollDynamicBounds,
                span,
                &[],
            )))
        };
        let Some(Sym::TileEnd(outer)) = lb.end.as_ref().and_then(Affine::as_sym) else {
            return reject();
        };
        if !self.loops.contains_key(&outer) || outer == ld.bid {
            return reject();
        }
        let trips = match (
            lb.begin.as_ref().and_then(Affine::as_sym),
            lb.static_begin(),
        ) {
            (Some(Sym::TileBegin(b)), _) if b == outer => {
                let obs = self.bounds.by_block.get(&outer).map_or(1, |o| o.bs);
                (obs + ld.bs - 1) / ld.bs
            }
            (_, Some(s)) => match self.bounds.by_block.get(&outer).and_then(|o| o.end_hi) {
                Some(hi) => (hi.saturating_sub(s).max(0).saturating_add(ld.bs - 1)) / ld.bs,
                None => {
                    return gap(
                        span,
                        "a dynamic unroll whose trip count has no static bound",
                    );
                }
            },
            _ => return reject(),
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

    /// `fori_loop` and `emit_pipeline` (spec §1.4).
    #[allow(clippy::too_many_arguments)]
    fn lower_traced_loop(
        &mut self,
        lp: &Loop,
        k: usize,
        ld: &LoopDim,
        var: &str,
        value_of_var: Val,
        span: Span,
        env: &mut Env,
        out: &mut Vec<PStmt>,
        live: &Names,
    ) -> LResult<()> {
        let pipeline = self.loop_type() == LoopType::EmitPipeline;
        let carried = self.carried(lp, env, live, span)?;
        let init_tys: Vec<Ty> = carried
            .iter()
            .filter_map(|n| env.get(n).and_then(carried_ty))
            .collect();
        let inits: Vec<P> = carried
            .iter()
            .map(|n| self.lower_name(n, env, span))
            .collect::<LResult<_>>()?;
        let py: Vec<String> = carried.iter().map(|n| py_name(n)).collect();
        let mark = env.mark();
        for (n, (p, t)) in carried.iter().zip(py.iter().zip(&init_tys)) {
            env.insert(
                n.clone(),
                Val::Value {
                    py: p.clone(),
                    ty: t.clone(),
                },
            );
        }
        env.insert(var.to_string(), value_of_var);
        let j = if pipeline {
            "_pipeline_indices".to_string()
        } else {
            self.fresh("_j")
        };
        let jv = if pipeline {
            P::name(&j).index(vec![IndexPart::Int(0)])
        } else {
            P::name(&j)
        };
        // Double-buffered loads of this loop (`fori_loop` only, see `dma`).
        let slots = if pipeline {
            Vec::new()
        } else {
            self.dma_slots(lp, &j)
        };
        let dma: Vec<super::dma::DmaSlot> = slots.iter().map(|(_, s)| s.clone()).collect();
        let (prologue, count) = if dma.is_empty() {
            (Vec::new(), None)
        } else {
            let (p, n) = self.dma_prologue(&dma, ld);
            (p, Some(n))
        };
        let mut body = Vec::new();
        body.push(assign(
            &ld.offset,
            ld.begin.clone().plus(jv.clone().times(ld.block.clone())),
        ));
        if let Some(m) = &ld.mask {
            let vec = jv.times(ld.block.clone()).plus(arange(ld.block.clone()));
            body.push(assign(m, vec.compare(CmpOp::Lt, ld.extent())));
        }
        if let Some(n) = &count {
            body.extend(self.dma_body_head(&dma, ld, n));
        }
        self.dma_active.extend(slots.iter().cloned());
        let lowered = self.lower_loop_inner(lp, k, span, env, &mut body, live);
        for (key, _) in &slots {
            self.dma_active.remove(key);
        }
        lowered?;
        // The carried types after one iteration: the loop's stable types.
        let mut out_tys = Vec::new();
        for (n, t0) in carried.iter().zip(&init_tys) {
            let Some(t) = env.get(n).and_then(carried_ty) else {
                return gap(
                    span,
                    format!("the loop-carried `{n}` holds no value after the body"),
                );
            };
            if !same_shape(t0, &t) {
                return gap(
                    span,
                    format!("the loop-carried `{n}` changes shape in the body"),
                );
            }
            out_tys.push(t);
        }
        let results: Vec<P> = carried
            .iter()
            .map(|n| self.lower_name(n, env, span))
            .collect::<LResult<_>>()?;
        let inits: Vec<P> = inits
            .into_iter()
            .zip(init_tys.iter().zip(&out_tys))
            .map(|(e, (a, b))| cast_to(e, a, b))
            .collect();
        env.rollback(mark);
        if pipeline {
            let mut pre = Vec::new();
            let mut reads = Vec::new();
            let mut writes = Vec::new();
            let mut post = Vec::new();
            for (((p, init), result), t) in py.iter().zip(inits).zip(results).zip(&out_tys) {
                let (space, shape, dtype, index) = match t {
                    Ty::Tensor { dtype, dims } if !dims.is_empty() => (
                        MemorySpace::Vmem,
                        dims.iter().map(|d| d.size).collect(),
                        *dtype,
                        IndexPart::Ellipsis,
                    ),
                    Ty::Tensor { dtype, .. } => {
                        (MemorySpace::Smem, vec![1], *dtype, IndexPart::Int(0))
                    }
                    Ty::Int(_) => (MemorySpace::Smem, vec![1], DType::Int32, IndexPart::Int(0)),
                    Ty::Float => (
                        MemorySpace::Smem,
                        vec![1],
                        DType::Float32,
                        IndexPart::Int(0),
                    ),
                    Ty::HostTensor { .. } | Ty::Bool | Ty::Tile(_) | Ty::GridIndex(_) => {
                        return gap(
                            span,
                            format!("the loop-carried `{p}` is not a tensor or scalar"),
                        );
                    }
                };
                let s = format!("_carry_{}", self.scratch.len());
                self.scratch.push((
                    s.clone(),
                    Scratch {
                        space,
                        shape,
                        dtype,
                    },
                ));
                pre.push(PStmt::Store {
                    target: P::name(&s),
                    index: vec![index.clone()],
                    value: init,
                });
                reads.push(assign(p, P::name(&s).index(vec![index.clone()])));
                writes.push(PStmt::Store {
                    target: P::name(&s),
                    index: vec![index.clone()],
                    value: result,
                });
                post.push(assign(p, P::name(&s).index(vec![index])));
            }
            let mut full = reads;
            full.extend(body);
            full.extend(writes);
            let name = format!("_pipeline_body_{}", ld.bid);
            out.extend(pre);
            out.push(PStmt::Def(Function {
                name: name.clone(),
                params: vec![j],
                body: full,
            }));
            out.push(PStmt::Expr(P::EmitPipeline {
                body: name,
                grid: vec![ld.count()],
            }));
            out.extend(post);
        } else {
            let name = format!("_fori_body_{}", ld.bid);
            let mut full = Vec::new();
            let carry_param = if carried.is_empty() {
                "_".to_string()
            } else {
                "_carry".to_string()
            };
            if !carried.is_empty() {
                full.push(PStmt::Assign {
                    target: Target::Tuple(py.clone()),
                    value: P::name("_carry"),
                });
            }
            full.extend(body);
            if !carried.is_empty() {
                full.push(PStmt::Return(Some(P::Tuple(results))));
            }
            out.extend(prologue);
            out.push(PStmt::Def(Function {
                name: name.clone(),
                params: vec![j, carry_param],
                body: full,
            }));
            let call = P::ForiLoop {
                lower: Box::new(P::Int(0)),
                upper: Box::new(match &count {
                    Some(n) => P::name(n),
                    None => ld.count(),
                }),
                body: name,
                init: Box::new(if carried.is_empty() {
                    P::None
                } else {
                    P::Tuple(inits)
                }),
            };
            if carried.is_empty() {
                out.push(PStmt::Expr(call));
            } else {
                out.push(PStmt::Assign {
                    target: Target::Tuple(py.clone()),
                    value: call,
                });
            }
        }
        for ((n, p), t) in carried.iter().zip(py).zip(out_tys) {
            env.insert(n.clone(), Val::Value { py: p, ty: t });
        }
        Ok(())
    }

    /// `if` (and the guard of a dynamic unroll) as `jax.lax.cond(pred, then, else, *operands)`
    /// (spec §1.9).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn lower_branches(
        &mut self,
        pred: P,
        then_body: &[Stmt],
        else_body: &[Stmt],
        env: &mut Env,
        out: &mut Vec<PStmt>,
        live: &Names,
        span: Span,
    ) -> LResult<()> {
        let mut all = walk::assigned(then_body);
        for n in walk::assigned(else_body) {
            if !all.contains(&n) {
                all.push(n);
            }
        }
        let both: Names = definitely_assigned(then_body)
            .intersection(&definitely_assigned(else_body))
            .cloned()
            .collect();
        let mut operands = Vec::new();
        let mut outputs = Vec::new();
        for n in &all {
            let bound = match env.get(n) {
                Some(Val::Value { .. } | Val::Int(_)) => true,
                Some(Val::Ref { .. }) if live.contains(n.as_str()) => {
                    return gap(
                        span,
                        format!("the resident Ref `{n}` is reassigned inside a branch"),
                    );
                }
                Some(Val::Ref { .. } | Val::Tile(_) | Val::Grid(_) | Val::Host(_)) | None => false,
            };
            if bound {
                operands.push(n.clone());
            }
            if live.contains(n.as_str()) && (bound || both.contains(n.as_str())) {
                outputs.push(n.clone());
            }
        }
        let k = self.fresh("_cond");
        let suffix = k.trim_start_matches("_cond").to_string();
        let names = [
            format!("_if_branch_{suffix}"),
            format!("_else_branch_{suffix}"),
        ];
        let operand_exprs: Vec<P> = operands
            .iter()
            .map(|n| self.lower_name(n, env, span))
            .collect::<LResult<_>>()?;
        let mut bodies = Vec::new();
        // Per branch: what each output denotes at the branch's end.
        let mut ends: Vec<Vec<Option<Val>>> = Vec::new();
        for branch in [then_body, else_body] {
            let mark = env.mark();
            for n in &operands {
                let ty = env.get(n).and_then(carried_ty).unwrap_or(Ty::Int(None));
                env.insert(n.clone(), Val::Value { py: py_name(n), ty });
            }
            let mut b = Vec::new();
            self.lower_body(branch, env, &mut b, live)?;
            bodies.push(b);
            ends.push(outputs.iter().map(|n| env.get(n).cloned()).collect());
            env.rollback(mark);
        }
        // Output types, harmonized between the branches.
        let mut tys = Vec::new();
        for (k, n) in outputs.iter().enumerate() {
            let (Some(a), Some(b)) = (
                ends[0][k].as_ref().and_then(carried_ty),
                ends[1][k].as_ref().and_then(carried_ty),
            ) else {
                return gap(
                    span,
                    format!("`{n}` holds no value after one branch of an `if`"),
                );
            };
            if !same_shape(&a, &b) {
                return gap(
                    span,
                    format!("`{n}` has different shapes after the two branches of an `if`"),
                );
            }
            let t = match (a.dtype(), b.dtype()) {
                (Some(x), Some(y)) if x != y => match &a {
                    Ty::Tensor { dims, .. } => Ty::Tensor {
                        dtype: promote(x, y),
                        dims: dims.clone(),
                    },
                    other => other.clone(),
                },
                _ => a.clone(),
            };
            tys.push(t);
        }
        for (i, (body, end)) in bodies.iter_mut().zip(&ends).enumerate() {
            let results: Vec<P> = outputs
                .iter()
                .zip(end)
                .zip(&tys)
                .map(|((n, v), t)| {
                    let e = self.val_expr(n, v.as_ref(), span)?;
                    let from = v.as_ref().and_then(carried_ty).unwrap_or(Ty::Int(None));
                    Ok(cast_to(e, &from, t))
                })
                .collect::<LResult<_>>()?;
            match results.len() {
                0 => {}
                1 => body.push(PStmt::Return(results.into_iter().next())),
                _ => body.push(PStmt::Return(Some(P::Tuple(results)))),
            }
            let params = operands.iter().map(|n| py_name(n)).collect();
            out.push(PStmt::Def(Function {
                name: names[i].clone(),
                params,
                body: std::mem::take(body),
            }));
        }
        let call = P::Cond {
            pred: Box::new(pred),
            then_fn: names[0].clone(),
            else_fn: names[1].clone(),
            operands: operand_exprs,
        };
        let py: Vec<String> = outputs.iter().map(|n| py_name(n)).collect();
        match py.len() {
            0 => out.push(PStmt::Expr(call)),
            1 => out.push(assign(py[0].clone(), call)),
            _ => out.push(PStmt::Assign {
                target: Target::Tuple(py.clone()),
                value: call,
            }),
        }
        for ((n, p), t) in outputs.iter().zip(py).zip(tys) {
            env.insert(n.clone(), Val::Value { py: p, ty: t });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_count_uses_the_loops_own_begin_and_end() {
        // hl.tile(4, 12, block_size=4): count = (12 - 4 + 4 - 1) // 4 = 2 (spec §4 D2).
        let ld = LoopDim::new(0, false, P::Int(4), P::Int(12), 4, Some(8));
        assert!(ld.mask.is_none());
        let count = ld.count();
        let block = P::name("_BLOCK_SIZE_0");
        let eight = P::Binary {
            op: pallas::BinOp::Sub,
            lhs: Box::new(P::Int(12)),
            rhs: Box::new(P::Int(4)),
        };
        let expect = eight.plus(block.clone()).minus(P::Int(1)).floor_div(block);
        assert_eq!(count, expect);
        let masked = LoopDim::new(1, false, P::Int(0), P::name("live"), 2, None);
        assert_eq!(masked.mask.as_deref(), Some("mask_1"));
        let unit = LoopDim::new(2, false, P::Int(0), P::name("live"), 1, None);
        assert!(unit.mask.is_none());
    }
}
