//! Expressions on values (spec §1.3, §1.7, §1.8): names, literals, tile attributes, symbolic
//! ints, arithmetic, `hl.arange`, `hl.zeros`/`hl.full`, casts, `.sum(dim)`, views and permutes
//! of values. Loads are in [`super::memory`], subscripts in [`super::subscript`].

use super::{Env, LResult, Lowerer, Val, gap};
use lang::ir::sym::{Affine, BlockId, Sym};
use lang::ir::types::Ty;
use lang::ir::{BinOp, CmpOp, Expr, ExprKind, Span, TileAttr};
use lang::pallas::{self, Expr as P, Jnp};
use lang::tensor::DType;

type PStmt = pallas::Stmt;

/// The Pallas operator of an IR operator.
pub(crate) fn bin_op(op: BinOp) -> pallas::BinOp {
    match op {
        BinOp::Add => pallas::BinOp::Add,
        BinOp::Sub => pallas::BinOp::Sub,
        BinOp::Mul => pallas::BinOp::Mul,
        BinOp::Div => pallas::BinOp::Div,
        BinOp::FloorDiv => pallas::BinOp::FloorDiv,
    }
}

pub(crate) fn cmp_op(op: CmpOp) -> pallas::CmpOp {
    match op {
        CmpOp::Ge => pallas::CmpOp::Ge,
        CmpOp::Gt => pallas::CmpOp::Gt,
        CmpOp::Le => pallas::CmpOp::Le,
        CmpOp::Lt => pallas::CmpOp::Lt,
        CmpOp::Eq => pallas::CmpOp::Eq,
        CmpOp::Ne => pallas::CmpOp::Ne,
    }
}

/// The zero literal of a dtype.
pub(crate) fn zero(dtype: DType) -> P {
    if dtype.is_float() {
        P::Float(0.0)
    } else {
        P::Int(0)
    }
}

pub(crate) use lang::ir::arith::norm_dim;

/// Names bound to ints in the lowering's environment; sizes by their trace type (a loop-carried
/// int is not static, so trace types are not used for names).
struct StaticInts<'l, 'a> {
    lowerer: &'l Lowerer<'a>,
    env: &'l Env,
}

impl lang::ir::arith::IntEnv for StaticInts<'_, '_> {
    fn name(&self, name: &str) -> Option<i64> {
        match self.env.get(name) {
            Some(Val::Int(v)) => Some(*v),
            _ => None,
        }
    }

    fn size(&self, size: &Expr, _value: &Expr, _dim: i64) -> Option<i64> {
        self.lowerer.types.of(size).const_int()
    }
}

impl Lowerer<'_> {
    /// The value of `e` when it is syntactically static: int literals, static names, sizes and
    /// arithmetic on those. (Trace types are not used: a loop-carried int is not static.)
    pub(super) fn static_int(&self, e: &Expr, env: &Env) -> Option<i64> {
        lang::ir::arith::static_int(e, &StaticInts { lowerer: self, env })
    }

    /// Whether `e` evaluates to a resident Ref (a planned load, view or subscript that does not
    /// materialize, or a name bound to one).
    pub(super) fn is_ref(&self, e: &Expr, env: &Env) -> bool {
        if let ExprKind::Name(n) = &e.kind {
            matches!(env.get(n), Some(Val::Ref { .. }))
        } else {
            self.plan.resident(e).is_some_and(|p| !p.materialize)
        }
    }

    /// A name read.
    pub(super) fn lower_name(&self, n: &str, env: &Env, span: Span) -> LResult<P> {
        self.val_expr(n, env.get(n), span)
    }

    /// The expression of what `n` denotes.
    pub(super) fn val_expr(&self, n: &str, v: Option<&Val>, span: Span) -> LResult<P> {
        match v {
            Some(Val::Value { py, .. } | Val::Ref { py }) => Ok(P::name(py)),
            Some(Val::Int(v)) => Ok(P::Int(*v)),
            Some(Val::Grid(b)) => Ok(P::name(format!("offset_{b}"))),
            Some(Val::Tile(_)) => gap(span, format!("the tile `{n}` used as a value")),
            Some(Val::Host(_)) => gap(
                span,
                format!("the host tensor `{n}` used as a device value"),
            ),
            None => gap(span, format!("`{n}` is not bound here")),
        }
    }

    /// Lowers a value expression; helper bindings go to `out`.
    pub(super) fn lower_expr(&mut self, e: &Expr, env: &Env, out: &mut Vec<PStmt>) -> LResult<P> {
        if matches!(
            e.kind,
            ExprKind::Name(_) | ExprKind::Size { .. } | ExprKind::Binary { .. }
        ) && let Some(v) = self.static_int(e, env)
        {
            return Ok(P::Int(v));
        }
        Ok(match &e.kind {
            ExprKind::Name(n) => self.lower_name(n, env, e.span)?,
            ExprKind::Int(v) => P::Int(*v),
            ExprKind::Float(v) => P::Float(*v),
            ExprKind::Size { .. } => match self.types.of(e) {
                Ty::Int(Some(a)) => {
                    let a = a.clone();
                    self.lower_affine(&a, e.span)?
                }
                other => return gap(e.span, format!("a size of type {other:?}")),
            },
            ExprKind::TileAttr { tile, attr } => match env.get(tile) {
                Some(Val::Tile(b)) => self.tile_attr(*b, *attr, e.span)?,
                _ => return gap(e.span, format!("`{tile}.{}` of a non-tile", attr.name())),
            },
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.lower_expr(lhs, env, out)?;
                let r = self.lower_expr(rhs, env, out)?;
                P::Binary {
                    op: bin_op(*op),
                    lhs: Box::new(l),
                    rhs: Box::new(r),
                }
            }
            ExprKind::Compare { op, lhs, rhs } => {
                let l = self.lower_expr(lhs, env, out)?;
                let r = self.lower_expr(rhs, env, out)?;
                l.compare(cmp_op(*op), r)
            }
            ExprKind::Load {
                tensor, indices, ..
            } => self.lower_load(e, tensor, indices, env, out)?,
            ExprKind::Subscript { value, indices } => {
                self.lower_subscript(e, value, indices, env, out)?
            }
            ExprKind::Arange { start, step, .. } => {
                let len = match self.types.of(e).dims() {
                    Some([d]) => d.size,
                    _ => return gap(e.span, "hl.arange without a static length"),
                };
                let step = match step {
                    Some(s) => match self.static_int(s, env) {
                        Some(v) => v,
                        None => return gap(e.span, "hl.arange with a non-static step"),
                    },
                    None => 1,
                };
                let start = match start {
                    Some(s) => self.lower_expr(s, env, out)?,
                    None => P::Int(0),
                };
                let base: P = Jnp::Arange {
                    start: Box::new(P::Int(0)),
                    stop: Box::new(P::Int(len)),
                    dtype: DType::Int32,
                }
                .into();
                start.plus(P::Int(step).times(base))
            }
            ExprKind::Zeros { shape, dtype } => {
                let shape = self.lower_alloc_dims(shape, env, out)?;
                Jnp::Full {
                    shape,
                    value: Box::new(zero(*dtype)),
                    dtype: *dtype,
                }
                .into()
            }
            ExprKind::Full {
                shape,
                value,
                dtype,
            } => {
                let shape = self.lower_alloc_dims(shape, env, out)?;
                let value = self.lower_expr(value, env, out)?;
                Jnp::Full {
                    shape,
                    value: Box::new(value),
                    dtype: *dtype,
                }
                .into()
            }
            ExprKind::Cast { value, dtype } => self.lower_expr(value, env, out)?.astype(*dtype),
            ExprKind::Sum { value, dim } => {
                let rank = self.types.of(value).dims().map_or(0, <[_]>::len);
                let Some(axis) = norm_dim(*dim, rank) else {
                    return gap(e.span, format!("sum over dim {dim} of a rank-{rank} value"));
                };
                let x = self.lower_expr(value, env, out)?;
                Jnp::Sum {
                    x: Box::new(x),
                    axis,
                }
                .into()
            }
            ExprKind::View { value, .. } => {
                if self.plan.resident(e).is_some() {
                    self.lower_resident_view(e, value, env, out)?
                } else {
                    let Some(dims) = self.types.of(e).dims() else {
                        return gap(e.span, "a view of a non-tensor");
                    };
                    let shape = dims.iter().map(|d| d.size).collect();
                    let x = self.lower_expr(value, env, out)?;
                    Jnp::Reshape {
                        x: Box::new(x),
                        shape,
                    }
                    .into()
                }
            }
            ExprKind::Permute { value, dims } => {
                let rank = self.types.of(value).dims().map_or(0, <[_]>::len);
                let axes = dims
                    .iter()
                    .map(|&d| norm_dim(d, rank))
                    .collect::<Option<Vec<_>>>();
                let Some(axes) = axes else {
                    return gap(e.span, "an invalid permutation");
                };
                let x = self.lower_expr(value, env, out)?;
                Jnp::Transpose {
                    x: Box::new(x),
                    axes,
                }
                .into()
            }
            ExprKind::Alloc { .. } => return gap(e.span, "an allocation on device"),
            ExprKind::Op { op, args } => self.lower_op(e, op, args, env, out)?,
        })
    }

    /// The dims of `hl.zeros`/`hl.full`: a tile stands for its block (`hl.zeros([tile_m,
    /// 128])` is `jnp.full((_BLOCK_SIZE_0, 128), ...)`, as Helion emits it); any other dim is
    /// an int expression.
    fn lower_alloc_dims(
        &mut self,
        dims: &[Expr],
        env: &Env,
        out: &mut Vec<PStmt>,
    ) -> LResult<Vec<P>> {
        dims.iter()
            .map(|d| match &d.kind {
                ExprKind::Name(n) => match env.get(n) {
                    Some(Val::Tile(b)) => match self.loops.get(b) {
                        Some(ld) => Ok(ld.block.clone()),
                        None => gap(d.span, format!("the tile `{n}` outside its loop")),
                    },
                    _ => self.lower_expr(d, env, out),
                },
                _ => self.lower_expr(d, env, out),
            })
            .collect()
    }

    /// A tile attribute (spec §1.3 table).
    pub(super) fn tile_attr(&self, b: BlockId, attr: TileAttr, span: Span) -> LResult<P> {
        let Some(ld) = self.loops.get(&b) else {
            return gap(span, format!("an attribute of tile {b} outside its loop"));
        };
        Ok(match attr {
            TileAttr::Begin => ld.begin_attr(),
            TileAttr::End => ld.tile_end(),
            TileAttr::Index => ld.index(),
            TileAttr::BlockSize => ld.block.clone(),
            TileAttr::Count
                if self
                    .options
                    .faults
                    .has(crate::faults::Fault::D2TileCountWithoutBegin) =>
            {
                ld.count_without_begin()
            }
            TileAttr::Count => ld.count(),
            TileAttr::Id => ld.id(),
        })
    }

    /// A symbolic int from its symbols' loop records: positive terms first.
    pub(super) fn lower_affine(&self, a: &Affine, span: Span) -> LResult<P> {
        let sym = |s: Sym| -> LResult<P> {
            let attr = match s {
                Sym::TileBegin(_) => TileAttr::Begin,
                Sym::TileEnd(_) => TileAttr::End,
                Sym::BlockSize(_) => TileAttr::BlockSize,
                Sym::TileCount(_) => TileAttr::Count,
                Sym::TileId(_) => TileAttr::Id,
            };
            self.tile_attr(s.block_id(), attr, span)
        };
        let mut acc: Option<P> = None;
        for (&s, &k) in a.terms.iter().filter(|(_, k)| **k > 0) {
            let term = if k == 1 {
                sym(s)?
            } else {
                P::Int(k).times(sym(s)?)
            };
            acc = Some(match acc {
                None => term,
                Some(x) => P::Binary {
                    op: pallas::BinOp::Add,
                    lhs: Box::new(x),
                    rhs: Box::new(term),
                },
            });
        }
        for (&s, &k) in a.terms.iter().filter(|(_, k)| **k < 0) {
            let term = if k == -1 {
                sym(s)?
            } else {
                P::Int(-k).times(sym(s)?)
            };
            let base = acc.unwrap_or(P::Int(0));
            acc = Some(P::Binary {
                op: pallas::BinOp::Sub,
                lhs: Box::new(base),
                rhs: Box::new(term),
            });
        }
        Ok(match acc {
            None => P::Int(a.constant),
            Some(x) if a.constant > 0 => P::Binary {
                op: pallas::BinOp::Add,
                lhs: Box::new(x),
                rhs: Box::new(P::Int(a.constant)),
            },
            Some(x) if a.constant < 0 => P::Binary {
                op: pallas::BinOp::Sub,
                lhs: Box::new(x),
                rhs: Box::new(P::Int(-a.constant)),
            },
            Some(x) => x,
        })
    }
}
