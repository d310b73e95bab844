//! Expressions in the shape run: each evaluates to an abstract value (its shape, dtype and
//! contiguity, and the exact values of small int index tensors such as `t.index`,
//! `hl.arange(...)` and `t.index + k`), or to the reason eager PyTorch (or the frontend) would
//! refuse it.

use super::MAX_ELEMS;
use super::run::ShapeRun;
use super::static_rules::{syntax, syntax_indices};
use super::values::{R, TV, V, broadcast, int_op, norm_dim, promote};
use lang::ir::{BinOp, DType, Expr, ExprKind, Index, TileAttr, ViewOp};

impl ShapeRun<'_> {
    pub(super) fn syntax(&self, e: &Expr) -> R<()> {
        syntax(e)
    }

    pub(super) fn syntax_indices(&self, indices: &[Index]) -> R<()> {
        syntax_indices(indices)?;
        let mut r = Ok(());
        lang::ir::walk::each_index_expr(indices, &mut |x| {
            if r.is_ok() {
                r = syntax(x);
            }
        });
        r
    }

    pub(super) fn eval(&mut self, e: &Expr) -> R<V> {
        match &e.kind {
            ExprKind::Name(n) => self
                .env
                .get(n)
                .cloned()
                .ok_or_else(|| format!("name `{n}` is not defined")),
            ExprKind::Int(v) => Ok(V::Int(*v)),
            ExprKind::Float(_) => Ok(V::Float),
            ExprKind::Size { value, dim } => {
                let shape = match self.eval(value)? {
                    V::Host(h) => h.shape,
                    V::T(t) => t.shape,
                    other => return Err(format!(".size of {}", other.what())),
                };
                Ok(V::Int(shape[norm_dim(*dim, shape.len())?] as i64))
            }
            ExprKind::TileAttr { tile, attr } => {
                let Some(V::Tile(t)) = self.env.get(tile).cloned() else {
                    return Err(format!("`{tile}` is not a tile"));
                };
                Ok(match attr {
                    TileAttr::Begin => V::Int(t.begin),
                    TileAttr::End => V::Int(t.end),
                    TileAttr::Count => V::Int(t.count),
                    TileAttr::BlockSize => V::Int(t.block),
                    TileAttr::Id => V::Int(t.begin.div_euclid(t.block)),
                    TileAttr::Index => V::T(TV {
                        shape: vec![(t.end - t.begin) as usize],
                        dtype: DType::Int32,
                        ints: Some((t.begin..t.end).collect()),
                        contiguous: true,
                    }),
                })
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (self.eval(lhs)?, self.eval(rhs)?);
                self.binary(*op, a, b)
            }
            ExprKind::Compare { .. } => Err("a comparison outside an `if` condition".into()),
            ExprKind::Load {
                tensor, indices, ..
            } => {
                let Some(V::Host(h)) = self.env.get(tensor).cloned() else {
                    return Err(format!("load from `{tensor}`, which is not a host tensor"));
                };
                if self.path.len() < 2 {
                    return Err("a load outside any device loop".into());
                }
                let (shape, sel, _) = self.index(&h.shape, indices, true)?;
                self.read_host(tensor, indices)?;
                // The values of a rank-1 or scalar read of a small int input: the index a
                // gather reads (`idx[tile]`, `idx[request]`).
                let ints = match (&h.ints, sel.as_slice()) {
                    (Some(vals), [picked]) if shape.len() <= 1 => {
                        Some(picked.iter().map(|&i| vals[i]).collect())
                    }
                    _ => None,
                };
                // A load makes a new value: contiguous whatever its indices.
                Ok(V::T(TV {
                    shape,
                    dtype: h.dtype,
                    ints,
                    contiguous: true,
                }))
            }
            ExprKind::Subscript { value, indices } => {
                if let ExprKind::Name(n) = &value.kind
                    && self.host_names.contains(n)
                    && matches!(self.env.get(n), Some(V::Host(_)))
                {
                    return Err(format!("a subscript of host tensor `{n}` is a load"));
                }
                let V::T(t) = self.eval(value)? else {
                    return Err("a subscript of something that is not a device tensor".into());
                };
                let (shape, sel, contiguous) = self.index(&t.shape, indices, false)?;
                let ints = match (&t.ints, sel.as_slice()) {
                    (Some(vals), [one]) if shape.len() == 1 => {
                        Some(one.iter().map(|&i| vals[i]).collect())
                    }
                    _ => None,
                };
                Ok(V::T(TV {
                    shape,
                    dtype: t.dtype,
                    ints,
                    contiguous,
                }))
            }
            ExprKind::Arange { start, end, step } => {
                let mut int_of = |x: &Expr| match self.eval(x)? {
                    V::Int(v) => Ok(v),
                    other => Err(format!("hl.arange bound is {}", other.what())),
                };
                let a = match start {
                    Some(s) => int_of(s)?,
                    None => 0,
                };
                let b = int_of(end)?;
                let s = match step {
                    Some(s) => int_of(s)?,
                    None => 1,
                };
                if s <= 0 || b < a || b - a > 4096 {
                    return Err(format!(
                        "hl.arange({a}, {b}, {s}) is not a small positive range"
                    ));
                }
                let vals: Vec<i64> = (a..b.max(a)).step_by(s as usize).collect();
                Ok(V::T(TV {
                    shape: vec![vals.len()],
                    dtype: DType::Int32,
                    ints: Some(vals),
                    contiguous: true,
                }))
            }
            ExprKind::Zeros { shape, dtype } | ExprKind::Full { shape, dtype, .. } => {
                if let ExprKind::Full { value, .. } = &e.kind {
                    match self.eval(value)? {
                        V::Int(_) | V::Float => {}
                        other => return Err(format!("hl.full's value is {}", other.what())),
                    }
                }
                let dims = shape
                    .iter()
                    .map(|d| match self.eval(d)? {
                        V::Int(v) if (0..=4096).contains(&v) => Ok(v as usize),
                        other => Err(format!("a dim of hl.zeros/hl.full is {}", other.what())),
                    })
                    .collect::<R<Vec<_>>>()?;
                if dims.iter().product::<usize>() > MAX_ELEMS {
                    return Err("device allocation too large".into());
                }
                Ok(V::T(TV {
                    shape: dims,
                    dtype: *dtype,
                    ints: None,
                    contiguous: true,
                }))
            }
            ExprKind::Cast { value, dtype } => match self.eval(value)? {
                V::T(t) => {
                    let ints = if *dtype == DType::Int32 && t.dtype == DType::Int32 {
                        t.ints
                    } else {
                        None
                    };
                    Ok(V::T(TV {
                        dtype: *dtype,
                        ints,
                        ..t
                    }))
                }
                other => Err(format!("a cast of {}", other.what())),
            },
            ExprKind::Sum { value, dim } => match self.eval(value)? {
                V::T(t) => {
                    if t.dtype == DType::Int32 {
                        return Err(
                            "`.sum` of int32 (torch makes int64, which cases lack): cast first"
                                .into(),
                        );
                    }
                    let d = norm_dim(*dim, t.shape.len())?;
                    let mut shape = t.shape;
                    shape.remove(d);
                    Ok(V::T(TV {
                        shape,
                        dtype: t.dtype,
                        ints: None,
                        contiguous: true,
                    }))
                }
                other => Err(format!("`.sum` of {}", other.what())),
            },
            ExprKind::View { value, op } => {
                let V::T(t) = self.eval(value)? else {
                    return Err("a view on device is a view of a device tensor".into());
                };
                let numel: usize = t.shape.iter().product();
                let (shape, contiguous) = match op {
                    ViewOp::Reshape(d) => (self.reshape_dims(d, numel)?, t.contiguous),
                    ViewOp::View(d) => {
                        if !t.contiguous {
                            return Err("`.view` of a value that may not be contiguous".into());
                        }
                        (self.reshape_dims(d, numel)?, true)
                    }
                    ViewOp::Squeeze(d) => {
                        let mut s = t.shape.clone();
                        let d = norm_dim(*d, s.len())?;
                        if s[d] == 1 {
                            s.remove(d);
                        }
                        (s, t.contiguous)
                    }
                    ViewOp::Unsqueeze(d) => {
                        let mut s = t.shape.clone();
                        let d = norm_dim(*d, s.len() + 1)?;
                        s.insert(d, 1);
                        (s, t.contiguous)
                    }
                    ViewOp::ViewAs(o) => {
                        let shape = match self.eval(o)? {
                            V::T(o) => o.shape,
                            V::Host(h) => h.shape,
                            other => return Err(format!("view_as of {}", other.what())),
                        };
                        if !t.contiguous || shape.iter().product::<usize>() != numel {
                            return Err("`.view_as` of an incompatible value".into());
                        }
                        (shape, true)
                    }
                };
                let ints = if shape.len() == 1 { t.ints } else { None };
                Ok(V::T(TV {
                    shape,
                    dtype: t.dtype,
                    ints,
                    contiguous,
                }))
            }
            ExprKind::Op { op, args } => {
                let vs = args.iter().map(|a| self.eval(a)).collect::<R<Vec<V>>>()?;
                self.op(op, vs)
            }
            ExprKind::Permute { value, dims } => {
                let V::T(t) = self.eval(value)? else {
                    return Err("`.permute` of something that is not a device tensor".into());
                };
                let r = t.shape.len();
                let perm = dims
                    .iter()
                    .map(|&d| norm_dim(d, r))
                    .collect::<R<Vec<_>>>()?;
                let mut seen = vec![false; r];
                if perm.len() != r || perm.iter().any(|&p| std::mem::replace(&mut seen[p], true)) {
                    return Err(format!("{dims:?} is not a permutation of {r} dims"));
                }
                let identity = perm.iter().enumerate().all(|(i, &p)| i == p);
                let shape = perm.iter().map(|&p| t.shape[p]).collect();
                Ok(V::T(TV {
                    shape,
                    dtype: t.dtype,
                    ints: None,
                    contiguous: t.contiguous && identity,
                }))
            }
            ExprKind::Alloc { .. } => Err("host allocations belong before the device loops".into()),
        }
    }

    pub(super) fn binary(&mut self, op: BinOp, a: V, b: V) -> R<V> {
        let scalar_dtype = |v: &V| match v {
            V::Int(_) => Some(false),
            V::Float => Some(true),
            _ => None,
        };
        match (a, b) {
            (V::Int(x), V::Int(y)) => match op {
                BinOp::Div => {
                    if y == 0 {
                        Err("division by zero".into())
                    } else {
                        Ok(V::Float)
                    }
                }
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::FloorDiv => {
                    int_op(op, x, y).map(V::Int)
                }
            },
            (V::Int(_) | V::Float, V::Int(_) | V::Float) => Ok(V::Float),
            (V::T(t), s) if scalar_dtype(&s).is_some() => self.tensor_scalar(op, t, s, true),
            (s, V::T(t)) if scalar_dtype(&s).is_some() => self.tensor_scalar(op, t, s, false),
            (V::T(x), V::T(y)) => {
                let shape = broadcast(&x.shape, &y.shape)?;
                let mut dtype = promote(x.dtype, y.dtype);
                if op == BinOp::Div && dtype == DType::Int32 {
                    dtype = DType::Float32;
                }
                Ok(V::T(TV {
                    shape,
                    dtype,
                    ints: None,
                    contiguous: true,
                }))
            }
            (a, b) => Err(format!(
                "`{}` of {} and {}",
                op.symbol(),
                a.what(),
                b.what()
            )),
        }
    }

    /// `t <op> s` (`tensor_left`) or `s <op> t`, keeping exact values of index tensors.
    fn tensor_scalar(&mut self, op: BinOp, t: TV, s: V, tensor_left: bool) -> R<V> {
        let is_float = matches!(s, V::Float);
        if op == BinOp::FloorDiv && tensor_left && matches!(s, V::Int(0)) {
            return Err("floor division by zero".into());
        }
        let dtype = match (t.dtype, is_float, op) {
            (DType::Int32, true, _) | (DType::Int32, _, BinOp::Div) => DType::Float32,
            (d, _, _) => d,
        };
        let ints = match (&t.ints, &s, dtype) {
            (Some(vals), V::Int(k), DType::Int32) => vals
                .iter()
                .map(|&v| {
                    if tensor_left {
                        int_op(op, v, *k)
                    } else {
                        int_op(op, *k, v)
                    }
                })
                .collect::<R<Vec<_>>>()
                .ok(),
            _ => None,
        };
        Ok(V::T(TV {
            shape: t.shape,
            dtype,
            ints,
            contiguous: true,
        }))
    }
}
