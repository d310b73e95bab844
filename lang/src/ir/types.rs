//! Trace-time types of a kernel under one config: what Helion's fake tensors say.
//!
//! Every expression gets a [`Ty`]: a host tensor, a device tensor with per-dim sizes (each dim
//! tagged with the block id it came from, if any), a symbolic int ([`Affine`]), a tile, a grid
//! index, a float scalar or a predicate. Sizes are Helion's *fake* sizes, not eager ones: a
//! tile-indexed dim has the block size (not the clipped live extent) and `blk[1:10]` has 9 rows
//! whatever the block holds (spec §1.10) — the planner reasons with these, and the defects of
//! spec §4 live in the gap between them and the eager reference.
//!
//! Types depend on the config only through block sizes; [`infer`] uses the *effective* sizes
//! (spec §1.1a).

use super::blocks::{BlockSizes, BlockSource, BlockTable};
use super::hash::FastMap;
use super::scope::{HostEnv, StorageId};
use super::sym::{Affine, BlockId, Sym};
use super::{
    AllocShape, BinOp, Case, DType, Expr, ExprKind, Index, LoopKind, NodeKey, Span, Stmt, StmtKind,
    TileAttr, ViewOp,
};

/// One dimension of a device tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dim {
    /// Concrete size under this config.
    pub size: i64,
    /// The block id whose block size this dim is, if it came from a tile.
    pub block: Option<BlockId>,
    /// `(block, start, stop)` when the dim is a literal slice `start:stop` of the tiled dim of
    /// `block`: Helion sizes it `Max(start, Min(stop, u)) - start`, a symbol that only the same
    /// slice of the same block equals (D-1.5.1-03), so it broadcasts with nothing else but 1.
    pub slice_of: Option<(BlockId, i64, i64)>,
}

impl Dim {
    /// A dim of a fixed size.
    pub fn fixed(size: i64) -> Dim {
        Dim {
            size,
            block: None,
            slice_of: None,
        }
    }

    /// The dim of block `block`, `size` under this config.
    pub fn tiled(size: i64, block: BlockId) -> Dim {
        Dim {
            size,
            block: Some(block),
            slice_of: None,
        }
    }

    /// A concrete size 1, which broadcasts against anything.
    fn is_concrete_one(self) -> bool {
        self.size == 1 && self.block.is_none() && self.slice_of.is_none()
    }
}

/// The type of an expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// A host tensor (kernel parameter, host allocation or alias).
    HostTensor {
        /// Element type.
        dtype: DType,
        /// Concrete shape.
        shape: Vec<i64>,
        /// Storage identity.
        storage: StorageId,
    },
    /// A device tensor value.
    Tensor {
        /// Element type.
        dtype: DType,
        /// Dims.
        dims: Vec<Dim>,
    },
    /// A scalar int: affine over tile symbols when known, `None` when not affine.
    Int(Option<Affine>),
    /// A Python float scalar.
    Float,
    /// A predicate (`if` condition).
    Bool,
    /// A tile loop variable.
    Tile(BlockId),
    /// A grid loop variable (a scalar index).
    GridIndex(BlockId),
}

impl Ty {
    /// Dims of a device tensor, if it is one.
    pub fn dims(&self) -> Option<&[Dim]> {
        match self {
            Ty::Tensor { dims, .. } => Some(dims),
            Ty::HostTensor { .. }
            | Ty::Int(_)
            | Ty::Float
            | Ty::Bool
            | Ty::Tile(_)
            | Ty::GridIndex(_) => None,
        }
    }

    /// Element type of a (host or device) tensor.
    pub fn dtype(&self) -> Option<DType> {
        match self {
            Ty::Tensor { dtype, .. } | Ty::HostTensor { dtype, .. } => Some(*dtype),
            Ty::Int(_) | Ty::Float | Ty::Bool | Ty::Tile(_) | Ty::GridIndex(_) => None,
        }
    }
}

/// A kernel Helion could not trace (shape mismatch, unknown name, bad view, ...).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{span}: {message}")]
pub struct TypeError {
    /// Where.
    pub span: Span,
    /// What.
    pub message: String,
}

/// The types of every expression of a case under its config.
#[derive(Clone, Debug)]
pub struct Types {
    /// Type of every expression node, keyed by [`NodeKey`] of the borrowed case.
    pub exprs: FastMap<NodeKey, Ty>,
    /// Block ids.
    pub blocks: BlockTable,
    /// Configured and effective block sizes.
    pub block_sizes: BlockSizes,
    /// Host tensors and ints.
    pub host: HostEnv,
}

impl Types {
    /// The type of `e` (which must belong to the case the types were inferred for).
    pub fn of(&self, e: &Expr) -> &Ty {
        self.exprs.get(&NodeKey::of(e)).unwrap_or(&Ty::Int(None))
    }

    /// The effective block size of a block id.
    pub fn block_size(&self, b: BlockId) -> i64 {
        self.block_sizes.effective.get(b).copied().unwrap_or(1)
    }
}

/// Infers the types of `case` under its config.
pub fn infer(case: &Case) -> Result<Types, TypeError> {
    let host = HostEnv::of(case);
    let blocks = BlockTable::of(&case.kernel);
    let block_sizes = case.block_sizes_with(&blocks, &host, |e| host.eval_int(e));
    let mut cx = Infer {
        host: &host,
        blocks: &blocks,
        sizes: &block_sizes,
        env: FastMap::default(),
        // Room for every expression of a typical generated case: growing the table was 2.5% of
        // `infer` (perf, 2026-11-30).
        exprs: FastMap::with_capacity_and_hasher(256, Default::default()),
    };
    for (name, t) in &host.tensors {
        cx.env.insert(
            name,
            Ty::HostTensor {
                dtype: t.dtype,
                shape: t.shape.iter().map(|&d| d as i64).collect(),
                storage: t.storage,
            },
        );
    }
    for (name, v) in &host.ints {
        cx.env.insert(name, Ty::Int(Some(Affine::constant(*v))));
    }
    cx.body(&case.kernel.body)?;
    let exprs = std::mem::take(&mut cx.exprs);
    drop(cx);
    Ok(Types {
        exprs,
        blocks,
        block_sizes,
        host,
    })
}

struct Infer<'a> {
    host: &'a HostEnv,
    blocks: &'a BlockTable,
    sizes: &'a BlockSizes,
    /// Names borrow from the case and the host environment: an owned key per assignment was a
    /// fifth of `infer`'s allocations.
    env: FastMap<&'a str, Ty>,
    exprs: FastMap<NodeKey, Ty>,
}

fn err(span: Span, message: impl Into<String>) -> TypeError {
    TypeError {
        span,
        message: message.into(),
    }
}

/// torch type promotion between two tensor dtypes.
pub fn promote(a: DType, b: DType) -> DType {
    match (a, b) {
        (DType::Float32, _) | (_, DType::Float32) => DType::Float32,
        (DType::Bfloat16, _) | (_, DType::Bfloat16) => DType::Bfloat16,
        (DType::Int32, DType::Int32) => DType::Int32,
    }
}

/// Helion 1.5.1's store rank rule (`TensorType.propagate_setitem`, D-1.5.1-20): a stored value
/// has the rank of the indexed target, or rank 0, or a higher rank whose extra leading dims are
/// 1; torch's broadcasting of a lower-rank value is refused (`RankMismatch` in Helion, a
/// tracing refusal here).
fn store_rank(target: &[Dim], value: &[Dim], span: Span) -> Result<(), TypeError> {
    let (lhs, rhs) = (target.len(), value.len());
    let extra_ones = rhs > lhs && value[..rhs - lhs].iter().all(|d| d.size == 1);
    if rhs == 0 || rhs == lhs || extra_ones {
        return Ok(());
    }
    let shape = |d: &[Dim]| {
        let v: Vec<String> = d.iter().map(|d| d.size.to_string()).collect();
        format!("({}{})", v.join(", "), if v.len() == 1 { "," } else { "" })
    };
    Err(err(
        span,
        format!(
            "Expected ndim={lhs}, but got ndim={rhs} (LHS shape: {}, RHS shape: {}). You have {}.",
            shape(target),
            shape(value),
            if rhs < lhs {
                "too few indices"
            } else {
                "too many indices"
            }
        ),
    ))
}

/// A shape for messages: sizes, and a literal slice of a tiled dim as Helion prints it
/// (`Max(1, Min(7, u1)) - 1`, with the block id for the symbol).
pub fn shape_repr(dims: &[Dim]) -> String {
    let parts: Vec<String> = dims
        .iter()
        .map(|d| match d.slice_of {
            Some((b, 0, stop)) => format!("Max(0, Min({stop}, u{b}))"),
            Some((b, a, stop)) => format!("Max({a}, Min({stop}, u{b})) - {a}"),
            None => d.size.to_string(),
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

/// Broadcasts two shapes (numpy rules); `None` when incompatible.
pub fn broadcast(a: &[Dim], b: &[Dim]) -> Option<Vec<Dim>> {
    let n = a.len().max(b.len());
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let x = (i + a.len()).checked_sub(n).map(|k| a[k]);
        let y = (i + b.len()).checked_sub(n).map(|k| b[k]);
        out.push(match (x, y) {
            (Some(x), None) => x,
            (None, Some(y)) => y,
            // Helion compares symbolic sizes as sympy does: a literal slice of a tiled dim
            // equals only the same slice (measured: `x_block[1:7] * x_block[0:6]` is a
            // ShapeMismatch in 1.5.1).
            (Some(x), Some(y))
                if x.slice_of != y.slice_of && !x.is_concrete_one() && !y.is_concrete_one() =>
            {
                return None;
            }
            (Some(x), Some(y)) if x.size == y.size => Dim {
                size: x.size,
                block: x.block.or(y.block),
                slice_of: x.slice_of,
            },
            (Some(x), Some(y)) if x.size == 1 => y,
            (Some(x), Some(y)) if y.size == 1 => x,
            _ => return None,
        });
    }
    Some(out)
}

impl<'a> Infer<'a> {
    fn body(&mut self, body: &'a [Stmt]) -> Result<(), TypeError> {
        for stmt in body {
            self.stmt(stmt)?;
        }
        Ok(())
    }

    fn stmt(&mut self, stmt: &'a Stmt) -> Result<(), TypeError> {
        match &stmt.kind {
            StmtKind::Assign { target, value } => {
                let mut ty = self.expr(value)?;
                let host_binding = matches!(value.kind, ExprKind::Alloc { .. })
                    || matches!(
                        (&value.kind, &ty),
                        (ExprKind::View { .. }, Ty::HostTensor { .. })
                    );
                if let (true, Some(t)) = (host_binding, self.host.tensors.get(target)) {
                    ty = Ty::HostTensor {
                        dtype: t.dtype,
                        shape: t.shape.iter().map(|&d| d as i64).collect(),
                        storage: t.storage,
                    };
                    self.exprs.insert(NodeKey::of(value), ty.clone());
                }
                self.env.insert(target, ty);
            }
            StmtKind::AugAssign { target, op, value } => {
                let old = self
                    .env
                    .get(target.as_str())
                    .cloned()
                    .ok_or_else(|| err(stmt.span, format!("name `{target}` is not bound")))?;
                let rhs = self.expr(value)?;
                let ty = self.binary(*op, &old, &rhs, stmt.span)?;
                self.env.insert(target, ty);
            }
            StmtKind::Store {
                tensor,
                indices,
                value,
                ..
            }
            | StmtKind::Atomic {
                tensor,
                indices,
                value,
                ..
            } => {
                let (dtype, shape) = match self.env.get(tensor.as_str()) {
                    Some(Ty::HostTensor { dtype, shape, .. }) => (*dtype, shape.clone()),
                    _ => return Err(err(stmt.span, format!("`{tensor}` is not a host tensor"))),
                };
                let dims: Vec<Dim> = shape.iter().map(|&d| Dim::fixed(d)).collect();
                let target = self.index(&dims, indices, stmt.span)?;
                if let StmtKind::Atomic {
                    expected: Some(x), ..
                } = &stmt.kind
                {
                    self.expr(x)?;
                }
                let v = self.expr(value)?;
                match &v {
                    Ty::Tensor { dims: vd, .. } => {
                        if matches!(stmt.kind, StmtKind::Store { .. }) {
                            store_rank(&target, vd, stmt.span)?;
                        }
                        let b = broadcast(&target, vd);
                        if b.as_ref()
                            .map(|b| b.iter().map(|d| d.size).collect::<Vec<_>>())
                            != Some(target.iter().map(|d| d.size).collect())
                        {
                            return Err(err(
                                stmt.span,
                                format!(
                                    "stored value of shape {:?} does not fit `{tensor}[...]` of shape {:?}",
                                    vd.iter().map(|d| d.size).collect::<Vec<_>>(),
                                    target.iter().map(|d| d.size).collect::<Vec<_>>()
                                ),
                            ));
                        }
                    }
                    Ty::Int(_) | Ty::Float => {}
                    other => return Err(err(stmt.span, format!("cannot store {other:?}"))),
                }
                let _ = dtype;
            }
            StmtKind::For(lp) => {
                for d in &lp.dims {
                    if let Some(b) = &d.begin {
                        self.expr(b)?;
                    }
                    self.expr(&d.end)?;
                    if let Some(b) = &d.block_size {
                        self.expr(b)?;
                    }
                }
                for (var, &id) in lp.vars.iter().zip(self.blocks.loop_ids(lp)) {
                    let ty = match lp.kind {
                        LoopKind::Tile => Ty::Tile(id),
                        LoopKind::Grid => Ty::GridIndex(id),
                    };
                    self.env.insert(var, ty);
                }
                // Loop-carried values keep their type across iterations, except ints whose value
                // changes (`cnt = cnt + 1`): those are widened to "not static" before a second
                // pass, which checks that the body is stable under its own outputs.
                //
                // When no name bound at the loop's entry changed type (after widening), the
                // second pass would see the environment the first saw and compute the same types
                // (a name the body reads before binding it must have been bound at the entry, or
                // the first pass would have failed), so it is skipped. Without the skip, a body
                // two loops deep was typed four times.
                let entry: Vec<(&'a str, Ty)> =
                    self.env.iter().map(|(&n, t)| (n, t.clone())).collect();
                self.body(&lp.body)?;
                let mut stable = true;
                for (name, at_entry) in &entry {
                    // The environment only grows: every name bound at the entry is still bound.
                    let Some(ty) = self.env.get_mut(name) else {
                        stable = false;
                        continue;
                    };
                    if let (Ty::Int(Some(a)), Ty::Int(Some(b))) = (at_entry, &*ty)
                        && a != b
                    {
                        *ty = Ty::Int(None);
                    }
                    stable &= ty == at_entry;
                }
                if !stable {
                    self.body(&lp.body)?;
                }
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                self.expr(cond)?;
                self.body(then_body)?;
                self.body(else_body)?;
            }
            StmtKind::Return(values) => {
                for v in values {
                    self.expr(v)?;
                }
            }
        }
        Ok(())
    }

    fn int_value(&self, ty: &Ty) -> Option<Affine> {
        match ty {
            Ty::Int(a) => a.clone(),
            Ty::GridIndex(b) => Some(Affine::sym(Sym::TileBegin(*b))),
            _ => None,
        }
    }

    /// A size argument (`hl.zeros([t.block_size, 128])`, `.reshape(...)`): concrete, with the
    /// block id when it is a block-size symbol.
    fn dim_arg(&mut self, e: &Expr) -> Result<Dim, TypeError> {
        let ty = self.expr(e)?;
        // `hl.zeros([tile, n])`: a tile as a dim means its block size.
        if let Ty::Tile(b) = ty {
            return Ok(Dim::tiled(self.sizes.effective[b], b));
        }
        let a = self
            .int_value(&ty)
            .ok_or_else(|| err(e.span, "a dimension must be an int"))?;
        if let Some(c) = a.as_const() {
            return Ok(Dim::fixed(c));
        }
        if let Some(Sym::BlockSize(b)) = a.as_sym() {
            return Ok(Dim::tiled(self.sizes.effective[b], b));
        }
        Err(err(e.span, format!("dimension `{a}` is not static")))
    }

    fn expr(&mut self, e: &Expr) -> Result<Ty, TypeError> {
        let ty = self.expr_inner(e)?;
        self.exprs.insert(NodeKey::of(e), ty.clone());
        Ok(ty)
    }

    fn expr_inner(&mut self, e: &Expr) -> Result<Ty, TypeError> {
        Ok(match &e.kind {
            ExprKind::Name(n) => self
                .env
                .get(n.as_str())
                .cloned()
                .ok_or_else(|| err(e.span, format!("name `{n}` is not bound here")))?,
            ExprKind::Int(v) => Ty::Int(Some(Affine::constant(*v))),
            ExprKind::Float(_) => Ty::Float,
            ExprKind::Size { value, dim } => {
                let t = self.expr(value)?;
                let sizes: Vec<(i64, Option<BlockId>)> = match &t {
                    Ty::HostTensor { shape, .. } => shape.iter().map(|&s| (s, None)).collect(),
                    Ty::Tensor { dims, .. } => dims.iter().map(|d| (d.size, d.block)).collect(),
                    _ => return Err(err(e.span, "`.size()` of a non-tensor")),
                };
                let r = sizes.len() as i64;
                let d = if *dim < 0 { dim + r } else { *dim };
                let (s, b) = *usize::try_from(d)
                    .ok()
                    .and_then(|d| sizes.get(d))
                    .ok_or_else(|| err(e.span, format!("dim {dim} out of range for rank {r}")))?;
                match b {
                    Some(b) => Ty::Int(Some(Affine::sym(Sym::BlockSize(b)))),
                    None => Ty::Int(Some(Affine::constant(s))),
                }
            }
            ExprKind::TileAttr { tile, attr } => {
                let b = match self.env.get(tile.as_str()) {
                    Some(Ty::Tile(b)) => *b,
                    _ => return Err(err(e.span, format!("`{tile}` is not a tile"))),
                };
                match attr {
                    TileAttr::Begin => Ty::Int(Some(Affine::sym(Sym::TileBegin(b)))),
                    TileAttr::End => Ty::Int(Some(Affine::sym(Sym::TileEnd(b)))),
                    TileAttr::Count => Ty::Int(Some(Affine::sym(Sym::TileCount(b)))),
                    TileAttr::Id => Ty::Int(Some(Affine::sym(Sym::TileId(b)))),
                    TileAttr::BlockSize => Ty::Int(Some(Affine::sym(Sym::BlockSize(b)))),
                    TileAttr::Index => Ty::Tensor {
                        dtype: DType::Int32,
                        dims: vec![Dim::tiled(self.sizes.effective[b], b)],
                    },
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (l, r) = (self.expr(lhs)?, self.expr(rhs)?);
                self.binary(*op, &l, &r, e.span)?
            }
            ExprKind::Compare { lhs, rhs, .. } => {
                let (l, r) = (self.expr(lhs)?, self.expr(rhs)?);
                if self.int_value(&l).is_none() && !matches!(l, Ty::Int(_) | Ty::Float)
                    || self.int_value(&r).is_none() && !matches!(r, Ty::Int(_) | Ty::Float)
                {
                    return Err(err(e.span, "an `if` compares scalars"));
                }
                Ty::Bool
            }
            ExprKind::Load {
                tensor, indices, ..
            } => {
                let (dtype, shape) = match self.env.get(tensor.as_str()) {
                    Some(Ty::HostTensor { dtype, shape, .. }) => (*dtype, shape.clone()),
                    _ => return Err(err(e.span, format!("`{tensor}` is not a host tensor"))),
                };
                let dims: Vec<Dim> = shape.iter().map(|&d| Dim::fixed(d)).collect();
                Ty::Tensor {
                    dtype,
                    dims: self.index(&dims, indices, e.span)?,
                }
            }
            ExprKind::Subscript { value, indices } => {
                let (dtype, dims) = match self.expr(value)? {
                    Ty::Tensor { dtype, dims } => (dtype, dims),
                    other => {
                        return Err(err(
                            e.span,
                            format!("subscript of a non-tensor ({other:?})"),
                        ));
                    }
                };
                Ty::Tensor {
                    dtype,
                    dims: self.index(&dims, indices, e.span)?,
                }
            }
            ExprKind::Arange { start, end, step } => {
                let s = match start {
                    Some(s) => {
                        let t = self.expr(s)?;
                        self.int_value(&t)
                    }
                    None => Some(Affine::constant(0)),
                };
                let t = self.expr(end)?;
                let en = self.int_value(&t);
                let st = match step {
                    Some(s) => {
                        let t = self.expr(s)?;
                        self.int_value(&t).and_then(|a| a.as_const())
                    }
                    None => Some(1),
                };
                let len = match (s, en, st) {
                    (Some(s), Some(en), Some(st)) if st > 0 => en
                        .sub(&s)
                        .as_const()
                        .map(|d| (d + st - 1).div_euclid(st).max(0)),
                    _ => None,
                };
                let len = len.ok_or_else(|| err(e.span, "hl.arange needs a static length"))?;
                Ty::Tensor {
                    dtype: DType::Int32,
                    dims: vec![Dim::fixed(len)],
                }
            }
            ExprKind::Zeros { shape, dtype } | ExprKind::Full { shape, dtype, .. } => {
                if let ExprKind::Full { value, .. } = &e.kind {
                    self.expr(value)?;
                }
                let dims = shape
                    .iter()
                    .map(|d| self.dim_arg(d))
                    .collect::<Result<_, _>>()?;
                Ty::Tensor {
                    dtype: *dtype,
                    dims,
                }
            }
            ExprKind::Cast { value, dtype } => match self.expr(value)? {
                Ty::Tensor { dims, .. } => Ty::Tensor {
                    dtype: *dtype,
                    dims,
                },
                other => return Err(err(e.span, format!("cast of a non-tensor ({other:?})"))),
            },
            ExprKind::Sum { value, dim } => match self.expr(value)? {
                Ty::Tensor { dtype, mut dims } => {
                    let r = dims.len() as i64;
                    let d = if *dim < 0 { dim + r } else { *dim };
                    if !(0..r).contains(&d) {
                        return Err(err(
                            e.span,
                            format!("sum over dim {dim} of a rank-{r} tensor"),
                        ));
                    }
                    dims.remove(d as usize);
                    Ty::Tensor { dtype, dims }
                }
                other => return Err(err(e.span, format!("sum of a non-tensor ({other:?})"))),
            },
            ExprKind::View { value, op } => {
                let base = self.expr(value)?;
                match base {
                    Ty::HostTensor { .. } => {
                        if let ViewOp::ViewAs(o) = op {
                            self.expr(o)?;
                        }
                        // Host views are aliases; the assignment takes their shape from the
                        // host environment (see `stmt`).
                        return Ok(base);
                    }
                    Ty::Tensor { dtype, dims } => Ty::Tensor {
                        dtype,
                        dims: self.view(&dims, op, e.span)?,
                    },
                    other => return Err(err(e.span, format!("view of a non-tensor ({other:?})"))),
                }
            }
            ExprKind::Permute { value, dims: perm } => match self.expr(value)? {
                Ty::Tensor { dtype, dims } => {
                    let r = dims.len();
                    let mut seen = vec![false; r];
                    let mut out = Vec::with_capacity(r);
                    for &p in perm {
                        let p = if p < 0 { p + r as i64 } else { p };
                        let Some(i) = usize::try_from(p).ok().filter(|&i| i < r && !seen[i]) else {
                            return Err(err(
                                e.span,
                                format!("permute {perm:?} is not a permutation of {r} dims"),
                            ));
                        };
                        seen[i] = true;
                        out.push(dims[i]);
                    }
                    if out.len() != r {
                        return Err(err(
                            e.span,
                            format!("permute {perm:?} is not a permutation of {r} dims"),
                        ));
                    }
                    Ty::Tensor { dtype, dims: out }
                }
                other => return Err(err(e.span, format!("permute of a non-tensor ({other:?})"))),
            },
            ExprKind::Alloc { shape, dtype, .. } => {
                match shape {
                    AllocShape::Dims(d) => d.iter().try_for_each(|x| self.expr(x).map(|_| ()))?,
                    AllocShape::Like(t) => {
                        self.expr(t)?;
                    }
                }
                let _ = dtype;
                // The host environment already resolved the allocation; the assignment's name
                // carries it. The expression itself types as that host tensor where it is bound.
                Ty::Int(None)
            }
        })
    }

    fn view(&mut self, dims: &[Dim], op: &ViewOp, span: Span) -> Result<Vec<Dim>, TypeError> {
        let numel: i64 = dims.iter().map(|d| d.size).product();
        Ok(match op {
            ViewOp::Reshape(args) | ViewOp::View(args) => {
                let mut out = Vec::new();
                let mut hole = None;
                for a in args {
                    let ty = self.expr(a)?;
                    match self.int_value(&ty) {
                        Some(x) if x.as_const() == Some(-1) => {
                            hole = Some(out.len());
                            out.push(Dim::fixed(-1));
                        }
                        _ => out.push(self.dim_arg(a)?),
                    }
                }
                let known: i64 = out
                    .iter()
                    .filter(|d| d.size != -1)
                    .map(|d| d.size)
                    .product();
                if let Some(h) = hole {
                    if known == 0 || numel % known != 0 {
                        return Err(err(span, "reshape's -1 cannot be inferred"));
                    }
                    out[h] = Dim::fixed(numel / known);
                }
                if out.iter().map(|d| d.size).product::<i64>() != numel {
                    return Err(err(
                        span,
                        format!(
                            "cannot reshape {:?} to {:?}",
                            dims.iter().map(|d| d.size).collect::<Vec<_>>(),
                            out.iter().map(|d| d.size).collect::<Vec<_>>()
                        ),
                    ));
                }
                out
            }
            ViewOp::Squeeze(d) => {
                let r = dims.len() as i64;
                let k = if *d < 0 { d + r } else { *d };
                if !(0..r).contains(&k) {
                    return Err(err(span, format!("squeeze({d}) of a rank-{r} tensor")));
                }
                let mut out = dims.to_vec();
                if out[k as usize].size == 1 {
                    out.remove(k as usize);
                }
                out
            }
            ViewOp::Unsqueeze(d) => {
                let r = dims.len() as i64;
                let k = if *d < 0 { d + r + 1 } else { *d };
                if !(0..=r).contains(&k) {
                    return Err(err(span, format!("unsqueeze({d}) of a rank-{r} tensor")));
                }
                let mut out = dims.to_vec();
                out.insert(k as usize, Dim::fixed(1));
                out
            }
            ViewOp::ViewAs(o) => match self.expr(o)? {
                Ty::Tensor { dims: od, .. } => {
                    if od.iter().map(|d| d.size).product::<i64>() != numel {
                        return Err(err(span, "view_as of a tensor with another element count"));
                    }
                    od
                }
                Ty::HostTensor { shape, .. } => shape.iter().map(|&s| Dim::fixed(s)).collect(),
                other => return Err(err(span, format!("view_as of a non-tensor ({other:?})"))),
            },
        })
    }

    /// Helion's fake shape of `base[indices]` (spec §1.10).
    fn index(
        &mut self,
        dims: &[Dim],
        indices: &[Index],
        span: Span,
    ) -> Result<Vec<Dim>, TypeError> {
        let mut out = Vec::new();
        let mut k = 0usize;
        let consumed = indices
            .iter()
            .filter(|i| !matches!(i, Index::NewAxis))
            .count();
        if consumed > dims.len() {
            return Err(err(
                span,
                format!("{consumed} indices for a rank-{} tensor", dims.len()),
            ));
        }
        for index in indices {
            match index {
                Index::NewAxis => out.push(Dim::fixed(1)),
                Index::Full => {
                    out.push(dims[k]);
                    k += 1;
                }
                Index::Int(_) => k += 1,
                Index::Slice { start, stop, step } => {
                    let mut bound =
                        |b: &Option<Expr>| -> Result<Option<Option<Affine>>, TypeError> {
                            match b {
                                None => Ok(None),
                                Some(x) => {
                                    let t = self.expr(x)?;
                                    Ok(Some(self.int_value(&t)))
                                }
                            }
                        };
                    let (s, t, st) = (bound(start)?, bound(stop)?, bound(step)?);
                    let step = match st {
                        None => 1,
                        Some(a) => a.and_then(|a| a.as_const()).unwrap_or(1).max(1),
                    };
                    let extent = dims[k].size;
                    let lo = match s {
                        None => Some(Affine::constant(0)),
                        Some(a) => a,
                    };
                    let hi = match t {
                        None => Some(Affine::constant(extent)),
                        Some(a) => a,
                    };
                    let start = lo.as_ref().and_then(|l| l.as_const());
                    let len = match (lo, hi) {
                        (Some(lo), Some(hi)) => hi.sub(&lo).as_const(),
                        _ => None,
                    };
                    let len = len.ok_or_else(|| err(span, "a slice needs a static width"))?;
                    // D-1.5.1-03: on a concrete dim a literal slice is sized the way PyTorch
                    // clips it (stop into [0, size], then at least start); on a tiled dim the
                    // size stays `b - a`, the width the planner reads from the literal.
                    let len = match (dims[k].block, start, step) {
                        (None, Some(a), 1) if a >= 0 => (a + len).clamp(0, extent).max(a) - a,
                        (None | Some(_), _, _) => len,
                    };
                    let mut dim = Dim::fixed(((len + step - 1).div_euclid(step)).max(0));
                    if let (Some(b), Some(a), 1) = (dims[k].block, start, step)
                        && self.slice_size_is_symbolic(b, a, a + len)
                    {
                        dim.slice_of = Some((b, a, a + len));
                    }
                    out.push(dim);
                    k += 1;
                }
                Index::Expr(x) => {
                    match self.expr(x)? {
                        Ty::Tile(b) => out.push(Dim::tiled(self.sizes.effective[b], b)),
                        Ty::Int(_) | Ty::GridIndex(_) => {}
                        // A rank-k index tensor contributes its k dims (advanced indexing);
                        // trace-time validation refuses k != 1 (`validate`).
                        Ty::Tensor { dims: id, .. } => out.extend_from_slice(&id),
                        other => return Err(err(x.span, format!("unsupported index {other:?}"))),
                    }
                    k += 1;
                }
            }
        }
        out.extend_from_slice(&dims[k..]);
        Ok(out)
    }

    /// Whether the size `Max(a, Min(b, u))` of slice `a:b` of block `block`'s dim stays a
    /// symbol of its own in 1.5.1 (D-1.5.1-03). The block symbol `u` ranges over `[1, next_pow2(extent
    /// hint)]` whatever the block: where that pins the size it is a number (`0:1` is always 1;
    /// under `hl.tile(2)` `2:3` is always 0, so `x_block * x_block[2:3]` traces, measured),
    /// and a block above the extent does not pin it (measured: block 16 over 8 rows,
    /// `x_block[4:8] * x_block[0:4]` is a ShapeMismatch; block 8 over 16 rows the same).
    fn slice_size_is_symbolic(&self, block: BlockId, a: i64, b: i64) -> bool {
        // A fixed `block_size=` is a number, and a config block of 1 is specialized to 1
        // (measured: both trace `x_block[0:5] * x_block[1:6]` in 1.5.1), so only a
        // config-driven block above 1 is a symbol whose slices differ.
        if !matches!(self.blocks.blocks[block].source, BlockSource::Config(_))
            || self.sizes.effective[block] <= 1
        {
            return false;
        }
        let hint = self.sizes.extent_hint.get(block).copied().unwrap_or(1);
        let top = (hint.max(1) as u64).next_power_of_two() as i64;
        let size = |u: i64| a.max(b.min(u)) - a;
        size(1) != size(top)
    }

    fn binary(&mut self, op: BinOp, l: &Ty, r: &Ty, span: Span) -> Result<Ty, TypeError> {
        let li = self.int_value(l);
        let ri = self.int_value(r);
        Ok(match (l, r) {
            (Ty::Tensor { dtype: a, dims: da }, Ty::Tensor { dtype: b, dims: db }) => {
                let dims = broadcast(da, db).ok_or_else(|| {
                    err(
                        span,
                        format!(
                            "shapes {} and {} do not broadcast",
                            shape_repr(da),
                            shape_repr(db)
                        ),
                    )
                })?;
                let mut dtype = promote(*a, *b);
                if op == BinOp::Div && dtype == DType::Int32 {
                    dtype = DType::Float32;
                }
                Ty::Tensor { dtype, dims }
            }
            (Ty::Tensor { dtype, dims }, s) | (s, Ty::Tensor { dtype, dims }) => {
                let float_scalar = matches!(s, Ty::Float);
                let scalar_ok =
                    float_scalar || self.int_value(s).is_some() || matches!(s, Ty::Int(_));
                if !scalar_ok {
                    return Err(err(span, format!("cannot combine a tensor with {s:?}")));
                }
                let dtype = if *dtype == DType::Int32 && (float_scalar || op == BinOp::Div) {
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
            _ if li.is_some() || ri.is_some() || matches!((l, r), (Ty::Int(_), Ty::Int(_))) => {
                if !matches!(l, Ty::Int(_) | Ty::GridIndex(_))
                    || !matches!(r, Ty::Int(_) | Ty::GridIndex(_))
                {
                    return Err(err(
                        span,
                        format!("cannot apply `{}` to {l:?} and {r:?}", op.symbol()),
                    ));
                }
                match op {
                    BinOp::Div => Ty::Float,
                    BinOp::Add => Ty::Int(li.zip(ri).map(|(a, b)| a.add(&b))),
                    BinOp::Sub => Ty::Int(li.zip(ri).map(|(a, b)| a.sub(&b))),
                    BinOp::Mul => Ty::Int(li.zip(ri).and_then(|(a, b)| a.mul(&b))),
                    BinOp::FloorDiv => Ty::Int(li.zip(ri).and_then(|(a, b)| a.floor_div(&b))),
                }
            }
            _ => {
                return Err(err(
                    span,
                    format!("cannot apply `{}` to {l:?} and {r:?}", op.symbol()),
                ));
            }
        })
    }
}
