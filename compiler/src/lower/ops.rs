//! The torch ops of a kernel body that the codegen lowers (`lang::ir::ops`): the elementwise
//! selections and masks that Helion's Inductor lowering emits as one `jnp` call or operator each
//! (`torch.maximum`/`minimum` as `jnp.maximum`/`jnp.minimum`, `torch.relu(x)` as
//! `jnp.maximum(x, 0)`, a comparison as the comparison, `&`/`|` of masks or ints as the
//! bitwise operator, `torch.where` as `jnp.where`), and the matrix products (`hl.dot`,
//! `torch.matmul`/`bmm`/`addmm`/`baddbmm`) as `lax.dot_general` ([`Lowerer::lower_dot`]).
//! JAX's promotion of a Python scalar (weak types) is torch's for the case dtypes; a 0-d
//! tensor beside a tensor of another dtype is not (torch keeps the dimensioned operand's dtype
//! within a category), so that is a gap. A transpose is `jnp.transpose`. Every other op
//! (transcendental functions, `%`, reductions, pads, Python's `min`/`max`) is a
//! [`super::Gap`]: the reference and real Helion still check it.

use super::expr::{cmp_op, norm_dim};
use super::{Env, LResult, Lowerer, gap};
use lang::ir::DType;
use lang::ir::types::Ty;
use lang::ir::{Expr, ExprKind, TensorOp};
use lang::pallas::{self, Expr as P, Jnp};

type PStmt = pallas::Stmt;

impl Lowerer<'_> {
    /// `e`, the op `op` on `args`.
    pub(super) fn lower_op(
        &mut self,
        e: &Expr,
        op: &TensorOp,
        args: &[Expr],
        env: &Env,
        out: &mut Vec<PStmt>,
    ) -> LResult<P> {
        let lowered = match op {
            TensorOp::Maximum
            | TensorOp::Minimum
            | TensorOp::Relu
            | TensorOp::Cmp(_)
            | TensorOp::And
            | TensorOp::Or
            | TensorOp::Where => true,
            TensorOp::Matmul
            | TensorOp::Bmm
            | TensorOp::Addmm
            | TensorOp::Baddbmm
            | TensorOp::Dot => return self.lower_dot(e, op, args, env, out),
            TensorOp::Transpose(d0, d1) => {
                return self.lower_transpose(e, *d0, *d1, args, env, out);
            }
            TensorOp::Exp
            | TensorOp::Rsqrt
            | TensorOp::Unary(_)
            | TensorOp::IntMin
            | TensorOp::IntMax
            | TensorOp::Mod
            | TensorOp::Reduce { .. }
            | TensorOp::Pad(_) => false,
        };
        if !lowered {
            return gap(e.span, op.construct());
        }
        // torch promotes a 0-d tensor operand only across categories (a float32 scalar beside a
        // bfloat16 block keeps bfloat16), JAX by its dtype: the two agree only where the
        // tensor operands share one dtype.
        let values = match op {
            TensorOp::Where => args.get(1..).unwrap_or_default(),
            _ => args,
        };
        let tensors: Vec<(lang::ir::DType, bool)> = values
            .iter()
            .filter_map(|a| match self.types.of(a) {
                Ty::Tensor { dtype, dims } => Some((*dtype, dims.is_empty())),
                _ => None,
            })
            .collect();
        if tensors.iter().any(|t| t.1) && tensors.iter().any(|t| t.0 != tensors[0].0) {
            return gap(
                e.span,
                format!(
                    "{} of a 0-d tensor and a tensor of another dtype",
                    op.construct()
                ),
            );
        }
        let mut xs = Vec::with_capacity(args.len());
        for a in args {
            xs.push(self.lower_expr(a, env, out)?);
        }
        let b = Box::new;
        Ok(match (op, xs.as_slice()) {
            (TensorOp::Maximum, [l, r]) => Jnp::Maximum(b(l.clone()), b(r.clone())).into(),
            (TensorOp::Minimum, [l, r]) => Jnp::Minimum(b(l.clone()), b(r.clone())).into(),
            (TensorOp::Relu, [x]) => Jnp::Maximum(b(x.clone()), b(P::Int(0))).into(),
            (TensorOp::Cmp(c), [l, r]) => l.clone().compare(cmp_op(*c), r.clone()),
            (TensorOp::And | TensorOp::Or, [l, r]) => P::Binary {
                op: if matches!(op, TensorOp::And) {
                    pallas::BinOp::BitAnd
                } else {
                    pallas::BinOp::BitOr
                },
                lhs: b(l.clone()),
                rhs: b(r.clone()),
            },
            (TensorOp::Where, [c, x, y]) => Jnp::Where {
                cond: b(c.clone()),
                a: b(x.clone()),
                b: b(y.clone()),
            }
            .into(),
            // A wrong operand count (the well-formedness check refuses it first).
            _ => return gap(e.span, op.construct()),
        })
    }

    /// `x.transpose(d0, d1)` (and `.T`) as `jnp.transpose` with the two dims swapped, the
    /// value Helion's Inductor lowering of `aten.transpose` reads; a 0-d value is itself.
    fn lower_transpose(
        &mut self,
        e: &Expr,
        d0: i64,
        d1: i64,
        args: &[Expr],
        env: &Env,
        out: &mut Vec<PStmt>,
    ) -> LResult<P> {
        let [x] = args else {
            return gap(e.span, "a transpose of several values");
        };
        let rank = self.types.of(x).dims().map_or(0, <[_]>::len);
        let v = self.lower_expr(x, env, out)?;
        if rank == 0 {
            return Ok(v);
        }
        let (Some(i), Some(j)) = (norm_dim(d0, rank), norm_dim(d1, rank)) else {
            return gap(
                e.span,
                format!("a transpose of dims {d0}, {d1} of a rank-{rank} value"),
            );
        };
        let mut axes: Vec<usize> = (0..rank).collect();
        axes.swap(i, j);
        Ok(Jnp::Transpose {
            x: Box::new(v),
            axes,
        }
        .into())
    }

    /// A matrix product (`hl.dot`, `torch.matmul`/`bmm`/`addmm`/`baddbmm`) as Helion's
    /// `_pallas_dot` emits it: `acc + lax.dot_general(lhs, rhs, ...)`, with
    /// `preferred_element_type=jnp.float32` for bfloat16 factors and the sum cast back to a
    /// narrower result dtype. Like `_associate_latest_matmul_fact`, each factor's lanes past
    /// its contracted dim's tile are masked to zero first (the products along K would
    /// otherwise sum padding, or a resident block's rows past the tile). Gaps: integer
    /// factors or factors of two dtypes, ranks other than two 2-D or two 3-D operands, a
    /// float32 product into a narrower accumulator, and a contracted dim that is a literal
    /// slice of a tile (its size is a symbol Helion's K mask does not resolve to a block).
    fn lower_dot(
        &mut self,
        e: &Expr,
        op: &TensorOp,
        args: &[Expr],
        env: &Env,
        out: &mut Vec<PStmt>,
    ) -> LResult<P> {
        let (acc, lhs, rhs) = match (op, args) {
            (TensorOp::Dot, [a, b]) | (TensorOp::Matmul | TensorOp::Bmm, [a, b]) => (None, a, b),
            (TensorOp::Dot, [a, b, acc]) => (Some(acc), a, b),
            (TensorOp::Addmm | TensorOp::Baddbmm, [bias, a, b]) => (Some(bias), a, b),
            _ => return gap(e.span, op.construct()),
        };
        let (
            Ty::Tensor {
                dtype: da,
                dims: sa,
            },
            Ty::Tensor {
                dtype: db,
                dims: sb,
            },
        ) = (self.types.of(lhs).clone(), self.types.of(rhs).clone())
        else {
            return gap(e.span, format!("{} of a non-tensor", op.construct()));
        };
        let Ty::Tensor { dtype: dout, .. } = self.types.of(e).clone() else {
            return gap(e.span, op.construct());
        };
        if da != db || !matches!(da, DType::Float32 | DType::Bfloat16) {
            return gap(
                e.span,
                format!("{} of {da:?} and {db:?} factors", op.construct()),
            );
        }
        let batched = match (sa.len(), sb.len()) {
            (2, 2) => false,
            (3, 3) => true,
            (ra, rb) => {
                return gap(
                    e.span,
                    format!("{} of rank-{ra} and rank-{rb} factors", op.construct()),
                );
            }
        };
        let preferred_f32 = da == DType::Bfloat16;
        if !preferred_f32 && dout != DType::Float32 {
            // `acc + dot` of a float32 product stays float32 in JAX, and Helion casts back
            // only after a float32-accumulated product.
            return gap(
                e.span,
                format!(
                    "{} of float32 factors into a {dout:?} result",
                    op.construct()
                ),
            );
        }
        let (ka, kb) = (&sa[sa.len() - 1], &sb[sb.len() - 2]);
        if ka.slice_of.is_some() || kb.slice_of.is_some() || ka.opaque || kb.opaque {
            return gap(
                e.span,
                format!("{} contracting a literal slice of a tile", op.construct()),
            );
        }
        let mut factor = |x: &Expr, k: &lang::ir::types::Dim, pos: usize, rank: usize| {
            let v = self.lower_expr(x, env, out)?;
            // An ordinary load masks its tile dims already (`lower_load`); Helion's
            // `remove_unnecessary_masking` drops the repeated mask the same way.
            let masked_load =
                matches!(x.kind, ExprKind::Load { .. }) && self.plan.resident(x).is_none();
            let mask = k
                .block
                .filter(|_| !masked_load)
                .and_then(|b| self.loops.get(&b))
                .and_then(|ld| ld.mask.clone());
            Ok::<P, super::LowerError>(match mask {
                Some(m) => self.apply_mask(v, &m, pos, rank, da),
                None => v,
            })
        };
        let a = factor(lhs, ka, sa.len() - 1, sa.len())?;
        let b = factor(rhs, kb, sb.len() - 2, sb.len())?;
        let mut v: P = Jnp::DotGeneral {
            lhs: Box::new(a),
            rhs: Box::new(b),
            contract: (sa.len() - 1, sb.len() - 2),
            batched,
            preferred_f32,
            highest: false,
        }
        .into();
        if let Some(acc) = acc {
            let acc = self.lower_expr(acc, env, out)?;
            v = acc.plus(v);
        }
        if preferred_f32 && dout != DType::Float32 {
            v = v.astype(dout);
        }
        Ok(v)
    }
}
