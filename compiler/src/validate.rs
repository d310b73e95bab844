//! Trace-time validation: the refusals Helion makes while tracing `hl.subscript` on a device
//! value, before any config is known (spec §1.10 table, §2.11 first row;
//! `_validate_subscript_indices`, helion/_compiler/backend.py @9c46dd31).
//!
//! A refusal here is a *verdict* ([`Rejection`] with class `InvalidIndexingType` or
//! `ShapeSpecializingAllocation`), not an input error: the case is well-formed and Helion refuses
//! the kernel. Loads from host tensors (`hl.load`) are not subscripts and are not checked here.
//!
//! Per entry, in order: a negative int (`blk[-1]`, a deliberate language rule: on a partially
//! live tile −1 would name a padding row, spec §4 D8); a slice whose bounds are both static must
//! have a start (≥ 0), a stop greater than the start, and step 1 (`blk[2:]`, `blk[:3]`,
//! `blk[-3:2]`, `blk[2:2]`, `blk[0:4:2]`); a slice with a data-dependent bound becomes
//! `hl.arange(start, stop)` when both bounds are present (Helion's `visit_Slice`), and has no
//! static shape when one is missing (`blk[live - 2:]`); floats and comparisons are not indices.
//! Then the whole list: at most one narrowing entry.

use crate::faults::{Fault, FaultSet};
use crate::verdict::{Rejection, Rule};
use lang::ir::hash::FastMap;
use lang::ir::scope::HostEnv;
use lang::ir::types::{Ty, Types};
use lang::ir::{Case, DType, Expr, ExprKind, Index, Span, Stmt, StmtKind, walk};

/// The first trace-time refusal of the kernel in program order, if any.
pub fn validate(case: &Case) -> Option<Rejection> {
    validate_with_faults(case, FaultSet::NONE)
}

/// [`validate`] with injected faults: fault D8 lets a negative slice start through.
pub fn validate_with_faults(case: &Case, faults: FaultSet) -> Option<Rejection> {
    // Types, when the kernel traces at all, tell index tensors of the wrong rank; a kernel that
    // does not trace is refused later with the tracing error itself.
    let types = lang::ir::types::infer_deferring(case).ok();
    validate_traced(case, types.as_ref(), faults)
}

/// [`validate_with_faults`] given the kernel's trace (`None` when it does not trace), so that a
/// compile traces once: [`crate::compile::compile`] infers the types first and hands them to both
/// this check and the planner. The verdict is the same as [`validate_with_faults`]'s.
pub fn validate_traced(case: &Case, types: Option<&Types>, faults: FaultSet) -> Option<Rejection> {
    // The trace's host environment is `HostEnv::of(case)`; build it only when there is none.
    let own_host;
    let host = match types {
        Some(t) => &t.host,
        None => {
            own_host = HostEnv::of(case);
            &own_host
        }
    };
    let mut v = Validator {
        host,
        consts: FastMap::default(),
        types,
        faults,
        found: None,
    };
    v.body(&case.kernel.body);
    v.found
}

/// The first host-tensor load or store (program order) whose indices the Pallas backend
/// refuses when it lowers the traced kernel to device IR: a slice with a step other than 1 or a
/// negative static bound ([`Rule::TraceHostSliceUnsupported`]). Runs after tracing succeeded,
/// on the whole kernel (dead statements included: device IR is built before they go).
/// Data-dependent bounds pass (a SymInt bound is supported).
pub fn host_access(case: &Case, types: &Types) -> Option<Rejection> {
    let env = HostInts { host: &types.host };
    let refused = |indices: &[Index], span: Span| {
        indices.iter().find_map(|index| {
            let Index::Slice { start, stop, step } = index else {
                return None;
            };
            let negative = |b: &Option<Expr>| {
                b.as_ref()
                    .and_then(|x| lang::ir::arith::static_int(x, &env))
                    .is_some_and(|v| v < 0)
            };
            let strided = step
                .as_ref()
                .is_some_and(|x| lang::ir::arith::static_int(x, &env) != Some(1));
            (strided || negative(start) || negative(stop)).then(|| {
                Rejection::new(
                    Rule::TraceHostSliceUnsupported,
                    span,
                    &[("index", &index_repr(index))],
                )
            })
        })
    };
    let mut found = None;
    walk::each_stmt(&case.kernel.body, &mut |stmt| {
        if found.is_some() {
            return;
        }
        walk::stmt_exprs(stmt, &mut |e| {
            walk::each_expr(e, &mut |x| {
                if found.is_none()
                    && let ExprKind::Load { indices, .. } = &x.kind
                {
                    found = refused(indices, x.span);
                }
            });
        });
        if found.is_none()
            && let StmtKind::Store { indices, .. } = &stmt.kind
        {
            found = refused(indices, stmt.span);
        }
    });
    found
}

/// Helion's bind-time refusals of indirect accesses (loads and stores through tensor indices),
/// checked on the live kernel after the host-slice check, in Helion's order
/// (`indirect_access_modes`, helion/_compiler/pallas/tensorcore_plan.py):
/// 1. the first access its one-hot lowering does not take ([`Rule::IndirectUnsupported`];
///    `one_hot_access_supported`, helion/_compiler/pallas/gather.py: one tensor index; a load
///    from a float table, or through the first dim of an int32 one; a store into a float
///    tensor through its first dim by a rank-1 index);
/// 2. the first gather whose value a narrowing subscript reads
///    ([`Rule::IndirectNarrowedNeedsDma`]). Names are followed in program order: a name holds
///    a gather's value from its binding to a gather chain (a gather, or a name holding one,
///    under views, same-dtype casts and subscripts that narrow nothing) until it is bound to
///    anything else.
///
/// Silent where an index is computed with `hl.arange` (Helion may read it as a contiguous
/// window rather than an indirect access). Atomics are not indirect accesses in Helion's
/// sense. A table over the 16 MiB one-hot threshold is not told apart (the generator draws
/// none).
pub fn indirect_access(case: &Case, types: &Types) -> Option<Rejection> {
    // `None`: no indirect access; `Some(true)`: one one-hot takes.
    let structural = |indices: &[Index], dtype: DType, store: bool| -> Option<bool> {
        let mut positions = (0..indices.len()).filter(|&p| types.is_tensor_index(&indices[p]));
        let p = positions.next()?;
        if positions.next().is_some() {
            return Some(false);
        }
        let float = matches!(dtype, DType::Float32 | DType::Bfloat16);
        if !store {
            return Some(float || (p == 0 && dtype == DType::Int32));
        }
        let Index::Expr(i) = &indices[p] else {
            return Some(false);
        };
        Some(float && p == 0 && matches!(types.of(i), Ty::Tensor { dims, .. } if dims.len() == 1))
    };
    // The indirect accesses, each with whether one-hot takes it, in program order.
    let mut accesses: Vec<(&[Index], bool, Span)> = Vec::new();
    walk::each_stmt(&case.kernel.body, &mut |stmt| {
        walk::stmt_exprs(stmt, &mut |e| {
            walk::each_expr(e, &mut |x| {
                if let ExprKind::Load { indices, .. } = &x.kind
                    && let Ty::Tensor { dtype, .. } = types.of(x)
                    && let Some(ok) = structural(indices, *dtype, false)
                {
                    accesses.push((indices, ok, x.span));
                }
            });
        });
        if let StmtKind::Store {
            tensor, indices, ..
        } = &stmt.kind
            && let Some(t) = types.host.tensors.get(tensor)
            && let Some(ok) = structural(indices, t.dtype, true)
        {
            accesses.push((indices, ok, stmt.span));
        }
    });
    // Most kernels have none: nothing more to walk (this runs on every compile).
    if accesses.is_empty() {
        return None;
    }
    // Every value each name is bound to, to see through `rows = t.begin + hl.arange(8)`.
    let mut bindings: FastMap<&str, Vec<&Expr>> = FastMap::default();
    walk::each_stmt(&case.kernel.body, &mut |stmt| {
        if let StmtKind::Assign { target, value } | StmtKind::AugAssign { target, value, .. } =
            &stmt.kind
        {
            bindings.entry(target).or_default().push(value);
        }
    });
    let mut arange = false;
    for (indices, _, _) in &accesses {
        walk::each_index_expr(indices, &mut |x| {
            arange |= mentions_arange(x, &bindings, &mut Vec::new());
        });
    }
    if arange {
        return None;
    }
    if let Some((_, _, at)) = accesses.iter().find(|(_, ok, _)| !ok) {
        return Some(Rejection::new(Rule::IndirectUnsupported, *at, &[]));
    }
    let mut gathered: FastMap<&str, Span> = FastMap::default();
    let mut found = None;
    walk::each_stmt(&case.kernel.body, &mut |stmt| {
        if found.is_some() {
            return;
        }
        walk::stmt_exprs(stmt, &mut |e| {
            walk::each_expr(e, &mut |x| {
                if found.is_none()
                    && let ExprKind::Subscript { value, indices } = &x.kind
                    && indices
                        .iter()
                        .any(|i| !matches!(i, Index::Full | Index::NewAxis))
                    && let Some(at) = gather_chain(value, types, &gathered)
                {
                    found = Some(Rejection::new(Rule::IndirectNarrowedNeedsDma, at, &[]));
                }
            });
        });
        match &stmt.kind {
            StmtKind::Assign { target, value } => match gather_chain(value, types, &gathered) {
                Some(at) => {
                    gathered.insert(target, at);
                }
                None => {
                    gathered.remove(target.as_str());
                }
            },
            StmtKind::AugAssign { target, .. } => {
                gathered.remove(target.as_str());
            }
            StmtKind::Store { .. }
            | StmtKind::Atomic { .. }
            | StmtKind::For(_)
            | StmtKind::If { .. }
            | StmtKind::Return(_) => {}
        }
    });
    found
}

/// Whether `e` computes with `hl.arange`, through the names it reads (`seen`: the names
/// already followed, so a loop-carried name ends the search).
fn mentions_arange<'a>(
    e: &'a Expr,
    bindings: &FastMap<&'a str, Vec<&'a Expr>>,
    seen: &mut Vec<&'a str>,
) -> bool {
    let mut found = false;
    walk::each_expr(e, &mut |x| {
        if matches!(x.kind, ExprKind::Arange { .. }) {
            found = true;
        } else if let ExprKind::Name(n) = &x.kind
            && !found
            && !seen.contains(&n.as_str())
            && let Some((name, values)) = bindings.get_key_value(n.as_str())
        {
            seen.push(name);
            found = values.iter().any(|v| mentions_arange(v, bindings, seen));
        }
    });
    found
}

/// The span of the gather `e` carries unchanged ([`indirect_access`]): a load through one
/// tensor index, or a name bound to one, under views, same-dtype casts and subscripts that
/// narrow nothing. `None` when anything else (arithmetic, a conversion, a permute, a
/// narrowing) stands between.
fn gather_chain(e: &Expr, types: &Types, gathered: &FastMap<&str, Span>) -> Option<Span> {
    match &e.kind {
        ExprKind::Load { indices, .. } => indices
            .iter()
            .any(|i| types.is_tensor_index(i))
            .then_some(e.span),
        ExprKind::Name(n) => gathered.get(n.as_str()).copied(),
        ExprKind::View { value, .. } => gather_chain(value, types, gathered),
        ExprKind::Subscript { value, indices }
            if indices
                .iter()
                .all(|i| matches!(i, Index::Full | Index::NewAxis)) =>
        {
            gather_chain(value, types, gathered)
        }
        ExprKind::Cast { value, dtype } if matches!(types.of(value), Ty::Tensor { dtype: d, .. } if d == dtype) => {
            gather_chain(value, types, gathered)
        }
        ExprKind::Subscript { .. }
        | ExprKind::Cast { .. }
        | ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Size { .. }
        | ExprKind::TileAttr { .. }
        | ExprKind::Binary { .. }
        | ExprKind::Compare { .. }
        | ExprKind::Arange { .. }
        | ExprKind::Zeros { .. }
        | ExprKind::Full { .. }
        | ExprKind::Sum { .. }
        | ExprKind::Permute { .. }
        | ExprKind::Alloc { .. }
        | ExprKind::Op { .. } => None,
    }
}

/// Host ints and sizes only. A device name bound to a literal int (`w = -4`, then `x[t, w:]`)
/// is not followed: an unknown step is refused as strided, an unknown bound passes.
struct HostInts<'a> {
    host: &'a HostEnv,
}

impl lang::ir::arith::IntEnv for HostInts<'_> {
    fn name(&self, name: &str) -> Option<i64> {
        self.host.ints.get(name).copied()
    }

    fn size(&self, size: &Expr, _value: &Expr, _dim: i64) -> Option<i64> {
        self.host.eval_int(size)
    }
}

struct Validator<'a> {
    host: &'a HostEnv,
    /// Device names bound to static ints (`w = 3` inside a loop).
    consts: FastMap<&'a str, i64>,
    types: Option<&'a Types>,
    faults: FaultSet,
    found: Option<Rejection>,
}

impl<'a> Validator<'a> {
    fn body(&mut self, body: &'a [Stmt]) {
        for stmt in body {
            if self.found.is_some() {
                return;
            }
            walk::stmt_exprs(stmt, &mut |e| {
                if self.found.is_none() {
                    walk::each_expr(e, &mut |x| {
                        if self.found.is_none() {
                            self.found = self.check_expr(x);
                        }
                    });
                }
            });
            match &stmt.kind {
                StmtKind::Assign { target, value } => match self.static_int(value) {
                    Some(v) => {
                        self.consts.insert(target, v);
                    }
                    None => {
                        self.consts.remove(target.as_str());
                    }
                },
                StmtKind::AugAssign { target, .. } => {
                    self.consts.remove(target.as_str());
                }
                StmtKind::For(lp) => {
                    for v in &lp.vars {
                        self.consts.remove(v.as_str());
                    }
                    self.body(&lp.body);
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    self.body(then_body);
                    self.body(else_body);
                }
                StmtKind::Store { .. } | StmtKind::Atomic { .. } | StmtKind::Return(_) => {}
            }
        }
    }

    /// The value of a compile-time static int expression (literals, host ints, host sizes,
    /// device names bound to static ints, and arithmetic on them).
    fn static_int(&self, e: &Expr) -> Option<i64> {
        lang::ir::arith::static_int(e, self)
    }

    fn check_expr(&self, e: &Expr) -> Option<Rejection> {
        let ExprKind::Subscript { indices, .. } = &e.kind else {
            return None;
        };
        for index in indices {
            if let Some(r) = self.check_index(index, e.span) {
                return Some(r);
            }
        }
        let narrowing = indices.iter().filter(|i| i.is_narrowing()).count();
        if narrowing > 1 {
            let repr = format!(
                "[{}]",
                indices
                    .iter()
                    .map(index_repr)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            return Some(Rejection::new(
                Rule::TraceMultipleNarrowing,
                e.span,
                &[("index", &repr)],
            ));
        }
        None
    }

    fn check_index(&self, index: &Index, span: Span) -> Option<Rejection> {
        // The entry's repr only when refusing: rendering every entry of every subscript was a
        // third of validation (callgrind, 2,000 cases: 16M of 47M instructions).
        let reject =
            |rule: Rule| Some(Rejection::new(rule, span, &[("index", &index_repr(index))]));
        match index {
            Index::Full | Index::NewAxis => None,
            Index::Int(k) if *k < 0 => reject(Rule::TraceNegativeIndex),
            Index::Int(_) => None,
            Index::Slice { start, stop, step } => {
                let s = start.as_ref().map(|x| self.static_int(x));
                let t = stop.as_ref().map(|x| self.static_int(x));
                let dynamic = matches!(s, Some(None)) || matches!(t, Some(None));
                if dynamic {
                    // Both bounds present: traced as hl.arange(start, stop); a step other than
                    // 1 keeps it a slice, which has no static shape either.
                    let step_one = match step {
                        None => true,
                        Some(x) => self.static_int(x) == Some(1),
                    };
                    if s.is_none() || t.is_none() || !step_one {
                        return reject(Rule::TraceOneSidedDynamicSlice);
                    }
                    return None;
                }
                // Type propagation refuses a step ≤ 0 first (D-1.5.1-17).
                if let Some(st) = step.as_ref().and_then(|x| self.static_int(x))
                    && st <= 0
                {
                    return reject(Rule::TraceSliceStepNotPositive);
                }
                match (s.flatten(), t.flatten()) {
                    (None, _) | (_, None) => reject(Rule::TraceSliceMissingBound),
                    (Some(a), _) if a < 0 && !self.faults.has(Fault::D8NegativeSliceBound) => {
                        reject(Rule::TraceSliceNegativeStart)
                    }
                    (Some(a), Some(b)) if b <= a => reject(Rule::TraceSliceEmpty),
                    _ => match step {
                        None => None,
                        Some(x) if self.static_int(x) == Some(1) => None,
                        Some(_) => reject(Rule::TraceSliceStep),
                    },
                }
            }
            Index::Expr(x) => match &x.kind {
                ExprKind::Float(_) | ExprKind::Compare { .. } | ExprKind::Alloc { .. } => {
                    reject(Rule::TraceUnsupportedIndex)
                }
                ExprKind::Name(_)
                | ExprKind::Int(_)
                | ExprKind::Size { .. }
                | ExprKind::TileAttr { .. }
                | ExprKind::Binary { .. }
                | ExprKind::Load { .. }
                | ExprKind::Subscript { .. }
                | ExprKind::Arange { .. }
                | ExprKind::Zeros { .. }
                | ExprKind::Full { .. }
                | ExprKind::Cast { .. }
                | ExprKind::Sum { .. }
                | ExprKind::View { .. }
                | ExprKind::Permute { .. }
                | ExprKind::Op { .. } => match self.static_int(x) {
                    Some(k) if k < 0 => reject(Rule::TraceNegativeIndex),
                    Some(_) => None,
                    None => match self.types.map(|t| t.of(x)) {
                        Some(Ty::Tensor { dims, .. }) if dims.len() != 1 => {
                            reject(Rule::TraceUnsupportedIndex)
                        }
                        Some(Ty::Float | Ty::Bool | Ty::Mask { .. } | Ty::HostTensor { .. }) => {
                            reject(Rule::TraceUnsupportedIndex)
                        }
                        Some(_) | None => None,
                    },
                },
            },
        }
    }
}

/// A Python-like repr of an index entry, for messages (`slice(-3, 2, None)`, `-1`, `None`).
pub(crate) fn index_repr(index: &Index) -> String {
    let opt = |e: &Option<Expr>| e.as_ref().map_or("None".to_string(), lang::render::expr);
    match index {
        Index::Full => "slice(None, None, None)".into(),
        Index::NewAxis => "None".into(),
        Index::Int(k) => k.to_string(),
        Index::Slice { start, stop, step } => {
            format!("slice({}, {}, {})", opt(start), opt(stop), opt(step))
        }
        // Type propagation hands Helion's check a literal float as its `LiteralType`.
        Index::Expr(e) if matches!(e.kind, ExprKind::Float(_)) => {
            format!("LiteralType({})", lang::render::expr(e))
        }
        Index::Expr(e) => lang::render::expr(e),
    }
}

/// Device names bound to static ints first, then the host's ints and sizes.
impl lang::ir::arith::IntEnv for Validator<'_> {
    fn name(&self, name: &str) -> Option<i64> {
        self.consts
            .get(name)
            .copied()
            .or_else(|| self.host.ints.get(name).copied())
    }

    fn size(&self, size: &Expr, _value: &Expr, _dim: i64) -> Option<i64> {
        self.host.eval_int(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::ErrorClass;
    use lang::frontend::parse_case;

    fn kernel(index: &str) -> String {
        format!(
            r#"import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True, config=helion.Config(block_sizes=[4]))
def k(x: torch.Tensor):
    out = torch.zeros([2, 128], dtype=torch.float32)
    for g in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0)):
            blk = x[outer, :, :]
            live = outer.end - outer.begin
            acc = acc + blk[{index}].float().sum(dim=0)
        out[:, :] = acc
    return out


x = torch.ones(8, 2, 128)
k(x)
"#
        )
    }

    fn verdict(index: &str) -> Option<Rejection> {
        let case = parse_case(&kernel(index), "k.py").unwrap();
        validate(&case)
    }

    #[test]
    fn refused_forms_carry_class_rule_and_span() {
        let cases = [
            ("-1", Rule::TraceNegativeIndex),
            ("-3:2", Rule::TraceSliceNegativeStart),
            ("2:", Rule::TraceSliceMissingBound),
            (":3", Rule::TraceSliceMissingBound),
            ("0:4:2", Rule::TraceSliceStep),
            ("2:2", Rule::TraceSliceEmpty),
            ("0, 1, :", Rule::TraceMultipleNarrowing),
            ("live - 2:", Rule::TraceOneSidedDynamicSlice),
            ("1.5", Rule::TraceUnsupportedIndex),
            ("3:0:-1", Rule::TraceSliceStepNotPositive),
        ];
        for (index, rule) in cases {
            let r = verdict(index).unwrap_or_else(|| panic!("`blk[{index}]` was not refused"));
            assert_eq!(r.rule, rule, "blk[{index}]");
            let class = match rule {
                Rule::TraceOneSidedDynamicSlice => ErrorClass::ShapeSpecializingAllocation,
                Rule::TraceSliceStepNotPositive => ErrorClass::InvalidSliceStep,
                _ => ErrorClass::InvalidIndexingType,
            };
            assert_eq!(r.class(), class, "blk[{index}]");
            // `acc = acc + blk[...]` is on line 14; the subscript starts at column 25.
            assert_eq!(r.span, Span::new(14, 25), "blk[{index}]");
        }
        // Helion 1.5.1's one template, with Python's repr of the entry (D-1.5.1-17).
        for (index, repr) in [
            ("-1", "-1"),
            ("-3:2", "slice(-3, 2, None)"),
            ("2:", "slice(2, None, None)"),
            ("0, 1, :", "[0, 1, slice(None, None, None)]"),
            ("1.5", "LiteralType(1.5)"),
        ] {
            let r = verdict(index).unwrap();
            assert_eq!(
                r.message,
                format!("Expected tile/int/None/tensor/etc in tensor[...], got {repr}.")
            );
        }
        assert_eq!(
            verdict("3:0:-1").unwrap().message,
            "Slice step must be greater than zero, as in PyTorch indexing; got slice(3, 0, -1)."
        );
    }

    fn host_verdict(src_index: &str, dst_index: &str) -> Option<Rejection> {
        let source = format!(
            r#"import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True, config=helion.Config(block_sizes=[4]))
def k(src: torch.Tensor, dst: torch.Tensor):
    for tile in hl.tile(src.size(0)):
        dst[tile, {dst_index}] = src[tile, {src_index}]
    return dst


src = torch.ones(8, 32)
dst = torch.zeros(8, 32)
k(src, dst)
"#
        );
        let case = parse_case(&source, "k.py").unwrap();
        let types = lang::ir::types::infer(&case).unwrap();
        host_access(&case, &types)
    }

    #[test]
    fn strided_and_negative_host_slices_are_backend_unsupported() {
        // The strided store a seeded campaign found (Helion 1.5.1: "Backend 'pallas' does not
        // support: slice expr slice(None, None, 2)"); the load comes first on its line, but the
        // store is the statement and the load is its value: program order reaches the load.
        let r = host_verdict("::2", "::2").unwrap();
        assert_eq!(r.rule, Rule::TraceHostSliceUnsupported);
        assert_eq!(r.class(), ErrorClass::BackendUnsupported);
        assert_eq!(r.message, "slice expr slice(None, None, 2)");
        assert_eq!(r.span.line, 9);
        let r = host_verdict("0:16", "-16:").unwrap();
        assert_eq!(r.message, "slice expr slice(-16, None, None)");
        // Contiguous slices with non-negative or open bounds pass.
        for (s, d) in [
            ("0:16", "16:"),
            (":", ":"),
            ("4:20", "0:16"),
            ("0:32:1", ":"),
        ] {
            assert_eq!(host_verdict(s, d), None, "src[tile, {s}] -> dst[tile, {d}]");
        }
    }

    /// A gather `w = t[idx[tb], :, td]` of a `dtype` table, then `body` (which reads `w`) and
    /// `extra` (another statement of the tile loop).
    fn gather_verdict(dtype: &str, body: &str, extra: &str) -> Option<Rejection> {
        let source = format!(
            r#"import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True, config=helion.Config(block_sizes=[2, 128]))
def k(x: torch.Tensor, t: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tb, td in hl.tile([x.size(0), x.size(1)]):
        w = t[idx[tb], :, td]
        acc = {body}
        {extra}
        out[tb, td] = acc.float()
    return out


x = torch.ones(5, 256)
t = torch.ones(7, 3, 256, dtype={dtype})
idx = torch.randint(0, 7, (5,), dtype=torch.int32)
k(x, t, idx)
"#
        );
        let case = parse_case(&source, "k.py").unwrap();
        let types = lang::ir::types::infer(&case).unwrap();
        indirect_access(&case, &types)
    }

    #[test]
    fn a_narrowed_gather_needs_dma_unless_something_computes_between() {
        // Measured on Helion 1.5.1 (interpret mode): each of these is refused at bind time.
        for (dtype, body) in [
            ("torch.float32", "w[:, 0, :]"),
            ("torch.float32", "w.float()[:, 1, :]"),
            ("torch.float32", "w.to(torch.float32)[:, 1, :]"),
            ("torch.bfloat16", "w[:, 2, :].float()"),
            ("torch.float32", "w[:, None].squeeze(1)[:, 0, :]"),
        ] {
            let r = gather_verdict(dtype, body, "pass_ = 0").unwrap_or_else(|| panic!("{body}"));
            assert_eq!(r.rule, Rule::IndirectNarrowedNeedsDma, "{body}");
            assert_eq!(r.class(), ErrorClass::BackendUnsupported);
            assert_eq!((r.span.line, r.span.col), (10, 13), "the gather's position");
        }
        // A value computed from the gather is gathered by one-hot and read as a value (also
        // measured); so is a gather read whole.
        for (dtype, body) in [
            ("torch.float32", "(w * 1.0)[:, 0, :]"),
            ("torch.bfloat16", "w.float()[:, 0, :]"),
            ("torch.float32", "w.sum(1)"),
        ] {
            assert_eq!(gather_verdict(dtype, body, "pass_ = 0"), None, "{body}");
        }
        // A name rebound to something else no longer holds the gather.
        assert_eq!(
            gather_verdict(
                "torch.float32",
                "w.sum(1)",
                "w = w * 2.0\n        acc = acc + w[:, 0, :]"
            ),
            None
        );
        // Beside a scatter one-hot takes (a float tensor, its first dim, a rank-1 index) the
        // refusal stands (measured: a cache written back through the index it was read by).
        let r = gather_verdict("torch.float32", "w[:, 0, :]", "t[idx[tb], 0, td] = acc");
        assert_eq!(r.map(|r| r.rule), Some(Rule::IndirectNarrowedNeedsDma));
        // An access one-hot cannot take (two tensor indices) is refused first, with its own
        // message; dead, it is not there (both measured).
        let r = gather_verdict(
            "torch.float32",
            "w[:, 0, :]",
            "acc = acc + t[idx[tb], idx[tb], td].sum(1)",
        );
        assert_eq!(
            r.map(|r| (r.rule, r.span.line)),
            Some((Rule::IndirectUnsupported, 12))
        );
    }

    #[test]
    fn accepted_forms_pass_trace_time() {
        for index in [
            "1",
            "1:3",
            "1:10",
            "live - 3 : live",
            "outer.begin",
            ":, 0, :",
            "None, :",
            "0:4:1",
        ] {
            assert_eq!(verdict(index), None, "blk[{index}]");
        }
    }
}
