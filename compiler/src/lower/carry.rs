//! Loop-carried values: a name assigned in a loop body that is bound before the loop and read
//! after it (or read in the body before being assigned) is carried — through the `fori_loop`
//! carry tuple, or through a scratch Ref (`_carry_<k>`, VMEM for tensors, SMEM for scalars)
//! around `emit_pipeline` (`traced`); `unroll` is a Python `for` and needs nothing. An `if`
//! passes the names its branches assign as `cond` operands and returns those still needed
//! after it (`branch`). This module decides which names a loop carries and the types they
//! carry.

use super::{Env, LResult, Lowerer, Val, gap};
use lang::ir::live::{Names, exposed};
use lang::ir::sym::Affine;
use lang::ir::types::Ty;
use lang::ir::{Loop, Span, walk};
use lang::pallas::Expr as P;

/// The type a carried name has (values and static ints only).
pub(super) fn carried_ty(v: &Val) -> Option<Ty> {
    match v {
        Val::Value { ty, .. } => Some(ty.clone()),
        Val::Int(c) => Some(Ty::Int(Some(Affine::constant(*c)))),
        Val::Ref { .. } | Val::Tile(_) | Val::Grid(_) | Val::Host(_) => None,
    }
}

/// Whether two carried types agree in shape (a scalar matches only a rank-0 tensor).
pub(super) fn same_shape(a: &Ty, b: &Ty) -> bool {
    match (a, b) {
        (Ty::Tensor { dims: x, .. }, Ty::Tensor { dims: y, .. }) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.size == q.size)
        }
        (Ty::Tensor { dims, .. }, _) | (_, Ty::Tensor { dims, .. }) => dims.is_empty(),
        (
            Ty::HostTensor { .. }
            | Ty::Int(_)
            | Ty::Float
            | Ty::Bool
            | Ty::Mask { .. }
            | Ty::Tile(_)
            | Ty::GridIndex(_),
            Ty::HostTensor { .. }
            | Ty::Int(_)
            | Ty::Float
            | Ty::Bool
            | Ty::Mask { .. }
            | Ty::Tile(_)
            | Ty::GridIndex(_),
        ) => true,
    }
}

/// `value` converted to the carried type `to` when its dtype differs.
pub(super) fn cast_to(value: P, from: &Ty, to: &Ty) -> P {
    match (from.dtype(), to.dtype()) {
        (Some(a), Some(b)) if a != b => value.astype(b),
        (None, Some(b)) => value.astype(b),
        _ => value,
    }
}

impl Lowerer<'_> {
    /// Names carried around loop `lp`: assigned in its body, bound before to a value, and
    /// read after the loop or before being assigned in the body.
    pub(super) fn carried(
        &self,
        lp: &Loop,
        env: &Env,
        live: &Names,
        span: Span,
    ) -> LResult<Vec<String>> {
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
}
