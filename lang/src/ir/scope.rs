//! Names and storage: which host tensors and ints exist before the device loops run, which
//! storage each tensor name denotes (aliases made with `view_as` share it, spec §2.9), and the
//! captures of a branch or loop graph (the outer names it reads, spec §2.2).

use super::hash::FastSet;
use super::{AllocKind, AllocShape, Arg, Case, Expr, ExprKind, ParamKind, Stmt, StmtKind, ViewOp};
use crate::tensor::DType;
use std::collections::BTreeMap;

/// Identity of a tensor's storage: equal ids mean writes through one are visible through the
/// other (Helion compares `id(tensor.untyped_storage())`).
pub type StorageId = usize;

/// Where a host tensor comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum HostOrigin {
    /// A kernel parameter bound to a module-level input.
    Param {
        /// The module-level input's name.
        input: String,
    },
    /// A host allocation inside the kernel.
    Alloc(AllocKind),
    /// `other.view_as(...)` (or another view) of a host tensor: an alias.
    Alias {
        /// The tensor it aliases.
        of: String,
    },
}

/// A tensor that exists on the host side of the kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct HostTensor {
    /// Element type.
    pub dtype: DType,
    /// Concrete shape (`static_shapes=True`).
    pub shape: Vec<usize>,
    /// Storage identity.
    pub storage: StorageId,
    /// Where it comes from.
    pub origin: HostOrigin,
}

/// The host environment of a kernel: tensors and ints bound before or between device loops.
#[derive(Clone, Debug, Default)]
pub struct HostEnv {
    /// Host tensors by name.
    pub tensors: BTreeMap<String, HostTensor>,
    /// Host ints by name (int parameters and `n = x.size(0)`-style bindings).
    pub ints: BTreeMap<String, i64>,
    /// The host ints Helion 1.5.1 passes to the kernel as runtime scalars: `int` parameters
    /// and host ints computed from one (D-1.5.1-14). Their value is known (the call's
    /// argument), but no size is `known_equal` to them and no loop bounded by them is static.
    pub runtime_ints: FastSet<String>,
}

impl HostEnv {
    /// Binds the parameters to the call's arguments and runs the root graph's host assignments.
    /// Lenient: names it cannot resolve are left out (the frontend reports them).
    pub fn of(case: &Case) -> HostEnv {
        let mut env = HostEnv::default();
        // The storage of each module-level input is its position here (a handful of inputs:
        // a scan, no owned names).
        let mut storage_of_input: Vec<&str> = Vec::new();
        for (param, arg) in case.kernel.params.iter().zip(&case.call.args) {
            match (param.kind, arg) {
                (ParamKind::Tensor, Arg::Input(name)) => {
                    let Some(input) = case.inputs.iter().find(|i| &i.name == name) else {
                        continue;
                    };
                    let Ok((dtype, shape)) = input.dtype_and_shape() else {
                        continue;
                    };
                    let storage = match storage_of_input.iter().position(|i| i == name) {
                        Some(s) => s,
                        None => {
                            storage_of_input.push(name);
                            storage_of_input.len() - 1
                        }
                    };
                    env.tensors.insert(
                        param.name.clone(),
                        HostTensor {
                            dtype,
                            shape,
                            storage,
                            origin: HostOrigin::Param {
                                input: name.clone(),
                            },
                        },
                    );
                }
                (ParamKind::Int, Arg::Int(v)) => {
                    env.ints.insert(param.name.clone(), *v);
                    env.runtime_ints.insert(param.name.clone());
                }
                (ParamKind::Tensor, Arg::Int(_))
                | (ParamKind::Int, Arg::Input(_))
                | (ParamKind::Float | ParamKind::Bool, _)
                | (ParamKind::Tensor | ParamKind::Int, Arg::Float(_) | Arg::Bool(_)) => {}
            }
        }
        let mut next_storage = storage_of_input.len();
        for stmt in &case.kernel.body {
            let StmtKind::Assign { target, value } = &stmt.kind else {
                continue;
            };
            if let Some(v) = env.eval_int(value) {
                env.ints.insert(target.clone(), v);
                if env.is_runtime(value) {
                    env.runtime_ints.insert(target.clone());
                } else {
                    env.runtime_ints.remove(target);
                }
            } else if let Some(t) = env.host_tensor(value, &mut next_storage) {
                env.tensors.insert(target.clone(), t);
            }
        }
        env
    }

    /// Whether `e` reads a runtime host int (D-1.5.1-14): its value is known here, but Helion
    /// treats it as symbolic.
    pub fn is_runtime(&self, e: &Expr) -> bool {
        if self.runtime_ints.is_empty() {
            return false;
        }
        let mut found = false;
        super::walk::each_expr(e, &mut |x| {
            if let ExprKind::Name(n) = &x.kind {
                found |= self.runtime_ints.contains(n);
            }
        });
        found
    }

    /// Evaluates a host int expression: literals, int names, `t.size(d)`, `+ - * //`
    /// ([`super::arith::static_int`]).
    pub fn eval_int(&self, e: &Expr) -> Option<i64> {
        super::arith::static_int(e, self)
    }

    fn host_tensor(&self, e: &Expr, next_storage: &mut StorageId) -> Option<HostTensor> {
        match &e.kind {
            ExprKind::Alloc { kind, shape, dtype } => {
                let (shape, like_dtype) = match shape {
                    AllocShape::Dims(dims) => (
                        dims.iter()
                            .map(|d| self.eval_int(d).map(|v| v.max(0) as usize))
                            .collect::<Option<Vec<_>>>()?,
                        None,
                    ),
                    AllocShape::Like(t) => {
                        let ExprKind::Name(n) = &t.kind else {
                            return None;
                        };
                        let t = self.tensors.get(n)?;
                        (t.shape.clone(), Some(t.dtype))
                    }
                };
                let dtype = dtype.or(like_dtype).unwrap_or(DType::Float32);
                *next_storage += 1;
                Some(HostTensor {
                    dtype,
                    shape,
                    storage: *next_storage - 1,
                    origin: HostOrigin::Alloc(*kind),
                })
            }
            ExprKind::View { value, op } => {
                let ExprKind::Name(n) = &value.kind else {
                    return None;
                };
                let base = self.tensors.get(n)?;
                let shape = match op {
                    ViewOp::ViewAs(other) => {
                        let ExprKind::Name(o) = &other.kind else {
                            return None;
                        };
                        self.tensors.get(o)?.shape.clone()
                    }
                    ViewOp::Reshape(dims) | ViewOp::View(dims) => {
                        let dims: Vec<i64> = dims
                            .iter()
                            .map(|d| self.eval_int(d))
                            .collect::<Option<_>>()?;
                        let numel: usize = base.shape.iter().product();
                        let known: i64 = dims.iter().filter(|&&d| d != -1).product();
                        dims.iter()
                            .map(|&d| {
                                if d == -1 {
                                    numel / known.max(1) as usize
                                } else {
                                    d.max(0) as usize
                                }
                            })
                            .collect()
                    }
                    ViewOp::Squeeze(d) => {
                        let mut s = base.shape.clone();
                        let d = if *d < 0 { *d + s.len() as i64 } else { *d } as usize;
                        if s.get(d) == Some(&1) {
                            s.remove(d);
                        }
                        s
                    }
                    ViewOp::Unsqueeze(d) => {
                        let mut s = base.shape.clone();
                        let d = if *d < 0 { *d + s.len() as i64 + 1 } else { *d } as usize;
                        s.insert(d.min(s.len()), 1);
                        s
                    }
                };
                Some(HostTensor {
                    dtype: base.dtype,
                    shape,
                    storage: base.storage,
                    origin: HostOrigin::Alias { of: n.clone() },
                })
            }
            ExprKind::Name(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Size { .. }
            | ExprKind::TileAttr { .. }
            | ExprKind::Binary { .. }
            | ExprKind::Compare { .. }
            | ExprKind::Load { .. }
            | ExprKind::Subscript { .. }
            | ExprKind::Arange { .. }
            | ExprKind::Zeros { .. }
            | ExprKind::Full { .. }
            | ExprKind::Cast { .. }
            | ExprKind::Sum { .. }
            | ExprKind::Permute { .. }
            | ExprKind::Op { .. } => None,
        }
    }
}

/// The names a graph reads before (or without) binding them itself: its captures, in order of
/// first use. Loop variables bound by nested loops are local.
pub fn captures(body: &[Stmt]) -> Vec<String> {
    fn reads(e: &Expr, bound: &FastSet<String>, out: &mut Vec<String>) {
        super::walk::each_expr(e, &mut |x| {
            let name = match &x.kind {
                ExprKind::Name(n) => Some(n),
                ExprKind::TileAttr { tile, .. } => Some(tile),
                ExprKind::Int(_)
                | ExprKind::Float(_)
                | ExprKind::Size { .. }
                | ExprKind::Binary { .. }
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
            };
            if let Some(n) = name
                && !bound.contains(n)
                && !out.contains(n)
            {
                out.push(n.clone());
            }
        });
    }
    fn walk(body: &[Stmt], bound: &mut FastSet<String>, out: &mut Vec<String>) {
        for stmt in body {
            match &stmt.kind {
                StmtKind::Assign { target, value } => {
                    reads(value, bound, out);
                    bound.insert(target.clone());
                }
                StmtKind::AugAssign { target, value, .. } => {
                    if !bound.contains(target) && !out.contains(target) {
                        out.push(target.clone());
                    }
                    reads(value, bound, out);
                }
                StmtKind::Store { tensor, .. } | StmtKind::Atomic { tensor, .. } => {
                    if !bound.contains(tensor) && !out.contains(tensor) {
                        out.push(tensor.clone());
                    }
                    super::walk::stmt_exprs(stmt, &mut |e| reads(e, bound, out));
                }
                StmtKind::For(lp) => {
                    super::walk::stmt_exprs(stmt, &mut |e| reads(e, bound, out));
                    let mut inner = bound.clone();
                    inner.extend(lp.vars.iter().cloned());
                    walk(&lp.body, &mut inner, out);
                    bound.extend(inner);
                }
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                } => {
                    reads(cond, bound, out);
                    let mut t = bound.clone();
                    walk(then_body, &mut t, out);
                    let mut e = bound.clone();
                    walk(else_body, &mut e, out);
                    bound.extend(t.intersection(&e).cloned().collect::<Vec<_>>());
                }
                StmtKind::Return(values) => values.iter().for_each(|v| reads(v, bound, out)),
            }
        }
    }
    let mut out = Vec::new();
    walk(body, &mut FastSet::default(), &mut out);
    out
}

impl super::arith::IntEnv for HostEnv {
    fn name(&self, name: &str) -> Option<i64> {
        self.ints.get(name).copied()
    }

    fn size(&self, _size: &Expr, value: &Expr, dim: i64) -> Option<i64> {
        let ExprKind::Name(n) = &value.kind else {
            return None;
        };
        let t = self.tensors.get(n)?;
        let d = super::arith::norm_dim(dim, t.shape.len())?;
        Some(t.shape[d] as i64)
    }
}
