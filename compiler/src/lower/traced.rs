//! The traced loop lowerings `fori_loop` and `emit_pipeline` (spec §1.4): the body as a
//! Python function of the loop index, its loop-carried values (`carry`) passed as the
//! `fori_loop` carry tuple or kept in `_carry_<k>` scratch Refs around `emit_pipeline`, and
//! the hooks of DMA-staged loads (`dma`, D-1.5.1-11) under `fori_loop`.

use super::carry::{carried_ty, cast_to, same_shape};
use super::dma::{Depth, DmaSlot};
use super::loop_dim::{LoopDim, arange};
use super::stmt::assign;
use super::{Env, LResult, Lowerer, Val, gap, py_name};
use lang::ir::live::Names;
use lang::ir::types::Ty;
use lang::ir::{Loop, LoopType, Span};
use lang::pallas::{self, CmpOp, Expr as P, Function, IndexPart, MemorySpace, Scratch, Target};
use lang::tensor::DType;

type PStmt = pallas::Stmt;

impl Lowerer<'_> {
    /// `fori_loop` and `emit_pipeline` (spec §1.4).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn lower_traced_loop(
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
        // Staged loads of this loop (`fori_loop` only, D-1.5.1-11, see `dma`): the
        // double-buffered ones are primed before the loop, the single-buffered ones copied in
        // each iteration.
        let slots = if pipeline {
            Vec::new()
        } else {
            self.dma_slots(lp, &j)
        };
        let (double, sync): (Vec<DmaSlot>, Vec<DmaSlot>) = slots
            .iter()
            .map(|(_, s)| s.clone())
            .partition(|s| s.load.depth == Depth::Double);
        let (prologue, count) = if double.is_empty() {
            (Vec::new(), None)
        } else {
            let (p, n) = self.dma_prologue(&double, ld);
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
            body.extend(self.dma_body_head(&double, ld, n));
        }
        body.extend(self.dma_sync_copies(&sync, ld));
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
                    Ty::HostTensor { .. }
                    | Ty::Bool
                    | Ty::Mask { .. }
                    | Ty::Tile(_)
                    | Ty::GridIndex(_) => {
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
}
