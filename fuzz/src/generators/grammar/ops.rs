//! Torch ops on a value folded into the accumulator ([`super::GenConfig::torch_ops`]): each
//! keeps the value's shape and float32 dtype, so the update around it is unchanged, and each
//! keeps magnitudes bounded (`exp` of a value clipped at 4, `rsqrt` of `relu(v) + 1`, the
//! `hl.dot` product scaled down), so the comparison's float tolerance is the one that decides.

use super::{Gen, when};
use crate::generators::make::*;
use arbitrary::Result;
use lang::ir::{BinOp, CmpOp, DType, Expr, ExprKind, ReduceKind, TensorOp};

/// The ops drawn, by weight: the exact ones most (relu, maximum/minimum, where over a mask),
/// then the transcendental ones, `%`, and the reductions with `keepdim=True` (only on a value
/// with dims).
const OP_RELU: u32 = 2;
const OP_MAXIMUM: u32 = 1;
const OP_MINIMUM: u32 = 1;
const OP_WHERE: u32 = 2;
const OP_WHERE_AND: u32 = 1;
const OP_WHERE_OR: u32 = 1;
const OP_EXP: u32 = 1;
const OP_RSQRT: u32 = 1;
const OP_MOD: u32 = 1;
const OP_MASK_CAST: u32 = 1;
const OP_AMAX: u32 = 1;
const OP_AMIN: u32 = 1;
const OP_SUM: u32 = 1;
/// `w + hl.dot(hl.dot(w, w.T), w) / 256` where `w = v + hl.zeros(acc's [S, C])` (`S` of 1 or 2;
/// `v` is a read reduced to the accumulator's shape or one that broadcasts to it): a narrowed
/// read feeding `hl.dot` (issue 39), of the accumulator's shape. `v`'s elements are
/// sums of at most a few normal draws, so `v v^T` is at most ~C * 4 and the product's terms
/// stay within float32's exact range after the scale; the matmul's float32 accumulation order
/// is the comparison's tolerance (`fuzz/src/compare.rs`). Helion 1.5.1 lowers it (measured on
/// `S` = 1 and 2 under `fori_loop`).
const OP_DOT: u32 = 1;

fn gt(a: Expr, b: Expr) -> Expr {
    op(TensorOp::Cmp(CmpOp::Gt), vec![a, b])
}

fn lt(a: Expr, b: Expr) -> Expr {
    op(TensorOp::Cmp(CmpOp::Lt), vec![a, b])
}

fn mul(a: Expr, k: f64) -> Expr {
    bin(BinOp::Mul, a, float(k))
}

fn reduce_last(kind: ReduceKind, v: Expr) -> Expr {
    op(
        TensorOp::Reduce {
            kind,
            dims: Some(vec![-1]),
            keepdim: true,
        },
        vec![v],
    )
}

impl Gen<'_, '_> {
    /// `v` through one torch op (module docs).
    pub(super) fn torch_op(&mut self, v: Expr) -> Result<Expr> {
        let dims = !self.acc_shape.is_empty();
        let matrix = self.acc_shape.len() == 2;
        Ok(
            match self.weighted(&[
                OP_RELU,
                OP_MAXIMUM,
                OP_MINIMUM,
                OP_WHERE,
                OP_WHERE_AND,
                OP_WHERE_OR,
                OP_EXP,
                OP_RSQRT,
                OP_MOD,
                OP_MASK_CAST,
                when(dims, OP_AMAX),
                when(dims, OP_AMIN),
                when(dims, OP_SUM),
                when(matrix, OP_DOT),
            ])? {
                0 => op(TensorOp::Relu, vec![v]),
                1 => op(TensorOp::Maximum, vec![v.clone(), mul(v, 0.5)]),
                2 => op(TensorOp::Minimum, vec![v.clone(), mul(v, 0.5)]),
                3 => op(
                    TensorOp::Where,
                    vec![gt(v.clone(), float(0.0)), v.clone(), mul(v, 0.25)],
                ),
                4 => op(
                    TensorOp::Where,
                    vec![
                        op(
                            TensorOp::And,
                            vec![gt(v.clone(), float(-1.0)), lt(v.clone(), float(4.0))],
                        ),
                        v,
                        float(0.0),
                    ],
                ),
                5 => op(
                    TensorOp::Where,
                    vec![
                        op(
                            TensorOp::Or,
                            vec![lt(v.clone(), float(-2.0)), gt(v.clone(), float(2.0))],
                        ),
                        sub(float(0.0), v.clone()),
                        v,
                    ],
                ),
                6 => op(
                    TensorOp::Exp,
                    vec![mul(
                        op(
                            TensorOp::Where,
                            vec![lt(v.clone(), float(4.0)), v, float(4.0)],
                        ),
                        0.25,
                    )],
                ),
                7 => op(
                    TensorOp::Rsqrt,
                    vec![add(op(TensorOp::Relu, vec![v]), float(1.0))],
                ),
                8 => op(TensorOp::Mod, vec![v, float(3.0)]),
                9 => add(cast(gt(v.clone(), float(0.0)), lang::ir::DType::Float32), v),
                10 => sub(v.clone(), reduce_last(ReduceKind::Amax, v)),
                11 => add(v.clone(), reduce_last(ReduceKind::Amin, v)),
                12 => add(v.clone(), mul(reduce_last(ReduceKind::Sum, v), 0.125)),
                _ => {
                    let w = add(
                        v,
                        ex(ExprKind::Zeros {
                            shape: ints(&self.acc_shape),
                            dtype: DType::Float32,
                        }),
                    );
                    let gram = op(
                        TensorOp::Dot,
                        vec![w.clone(), op(TensorOp::Transpose(0, 1), vec![w.clone()])],
                    );
                    add(
                        w.clone(),
                        mul(op(TensorOp::Dot, vec![gram, w]), 1.0 / 256.0),
                    )
                }
            },
        )
    }
}
