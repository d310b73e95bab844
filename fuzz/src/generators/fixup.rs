//! `fixup`: makes any case — mutated by a fuzzer, shrunk by the reducer, edited by hand —
//! admissible ([`super::validate_admissible`]), changing as little as it can.
//!
//! In order: module-level repairs (inputs whose constructor cannot make their shape or dtype,
//! poison inputs, the call's arguments, the config's ranges), IR forms that would not survive
//! render → parse (`Index::Expr` of an int literal, a grid with `block_size=`, ...), loop bounds
//! past the dims they tile, `block_sizes` resized to the config-driven block ids; then, until the
//! validator passes it, the statement the validator blames is removed (a `torch.empty` output
//! left partly unwritten becomes `torch.zeros` instead). Removing a statement can only make later
//! statements fail on undefined names, which removes them in turn, so the loop ends; a case with
//! nothing valid left is replaced by a small valid case.

use super::admissible::{Arm, Flaw, StmtPath, is_identifier, validate_admissible};
use super::config::GenConfig;
use super::make::{int, name, st};
use lang::ir::blocks::BlockTable;
use lang::ir::hash::FastMap;
use lang::ir::scope::HostEnv;
use lang::ir::walk::{each_expr, each_expr_mut, each_stmt, each_stmt_mut, stmt_exprs};
use lang::ir::{
    AllocKind, Arg, AtomicOp, BinOp, CASE_VERSION, Case, Ctor, DType, Expr, ExprKind, Index, Input,
    LoopKind, ParamKind, Stmt, StmtKind,
};

/// Most repair rounds before giving up on a case and replacing it.
const MAX_ROUNDS: usize = 400;

/// Makes `case` admissible: afterwards [`super::validate_admissible`] passes and
/// `parse_case(render_case(case))` gives the case back (span-stripped).
pub fn fixup(case: &mut Case) {
    fix_module(case);
    fix_syntax(case);
    canonical_lists(&mut case.kernel.body);
    fit_loops(case);
    for _ in 0..MAX_ROUNDS {
        fix_block_sizes(case);
        fix_return(case);
        let flaw = match validate_admissible(case) {
            Ok(()) => return,
            Err(f) => f,
        };
        let progressed = match flaw {
            Flaw::Module(_) | Flaw::Return(_) => false,
            Flaw::UnwrittenEmpty { name } => zero_alloc(case, &name),
            Flaw::Stmt { path, .. } => remove_at(&mut case.kernel.body, &path),
        };
        if !progressed {
            break;
        }
    }
    *case = super::generate_from_seed(0, &GenConfig::default());
}

// ---- module level ----------------------------------------------------------------------------

fn fix_module(case: &mut Case) {
    case.version = CASE_VERSION;
    if !is_identifier(&case.kernel.name) {
        case.kernel.name = "kernel".into();
    }
    for input in &mut case.inputs {
        fix_input(input);
    }
    if let Some(s) = &mut case.seed {
        *s &= i64::MAX as u64;
    }
    let kernel_name = case.kernel.name.clone();
    if case.call.result.as_deref().is_some_and(|r| {
        !is_identifier(r) || r == kernel_name || case.inputs.iter().any(|i| i.name == r)
    }) {
        case.call.result = None;
    }
    // One argument per parameter, of its kind.
    let first_input = case.inputs.first().map(|i| i.name.clone());
    let params = case.kernel.params.clone();
    case.call.args.resize(params.len(), Arg::Int(1));
    for (p, a) in params.iter().zip(case.call.args.iter_mut()) {
        let ok = match (p.kind, &*a) {
            (ParamKind::Tensor, Arg::Input(n)) => case.inputs.iter().any(|i| &i.name == n),
            (ParamKind::Int, Arg::Int(v)) => (-(1 << 20)..=(1 << 20)).contains(v),
            (ParamKind::Float, Arg::Float(v)) => v.is_finite(),
            (ParamKind::Bool, Arg::Bool(_)) => true,
            (ParamKind::Tensor, Arg::Int(_) | Arg::Float(_) | Arg::Bool(_))
            | (ParamKind::Int, Arg::Input(_) | Arg::Float(_) | Arg::Bool(_))
            | (ParamKind::Float, Arg::Input(_) | Arg::Int(_) | Arg::Bool(_))
            | (ParamKind::Bool, Arg::Input(_) | Arg::Int(_) | Arg::Float(_)) => false,
        };
        if !ok {
            *a = match (p.kind, &first_input) {
                (ParamKind::Tensor, Some(n)) => Arg::Input(n.clone()),
                (ParamKind::Tensor, None) | (ParamKind::Int, _) => Arg::Int(1),
                (ParamKind::Float, _) => Arg::Float(1.0),
                (ParamKind::Bool, _) => Arg::Bool(true),
            };
        }
    }
    let c = &mut case.config;
    if let Some(g) = &mut c.worklist_grouping {
        *g = (*g).clamp(0, 2);
    }
    if let Some(b) = &mut c.load_buffer_count {
        b.iter_mut().for_each(|x| *x = (*x).clamp(1, 8));
    }
}

fn fix_input(input: &mut Input) {
    let fix_shape = |shape: &mut Vec<usize>| {
        shape.iter_mut().for_each(|d| *d = (*d).clamp(1, 4096));
        while shape.iter().product::<usize>() > 1 << 16 {
            if let Some(d) = shape.iter_mut().max() {
                *d = d.div_ceil(2);
            }
        }
    };
    match &mut input.ctor {
        Ctor::Randn { shape }
        | Ctor::Rand { shape }
        | Ctor::Ones { shape }
        | Ctor::Zeros { shape } => fix_shape(shape),
        Ctor::Empty { shape } => {
            let mut shape = std::mem::take(shape);
            fix_shape(&mut shape);
            input.ctor = Ctor::Zeros { shape };
        }
        Ctor::Full { shape, value } => {
            fix_shape(shape);
            if !value.is_finite() {
                *value = 1.0;
            }
            *value = value.clamp(-1e6, 1e6).round();
        }
        Ctor::Arange { n } => *n = (*n).clamp(1, 1 << 16),
        // Wellformed: int32 bounds, at most 2^16 values; counting up (a negative step is
        // wellformed too, the generator just does not draw one).
        Ctor::Range { start, end, step } => {
            *start = (*start).clamp(-(1 << 20), 1 << 20);
            *step = (*step).clamp(1, 64);
            *end = start.saturating_add(end.saturating_sub(*start).clamp(0, *step << 16));
        }
        Ctor::Eye { n, m } => {
            *n = (*n).clamp(1, 256);
            *m = (*m).clamp(1, 256);
        }
        Ctor::Randint { low, high, shape } => {
            fix_shape(shape);
            *low = (*low).clamp(-(1 << 20), 1 << 20);
            *high = (*high).clamp(*low + 1, *low + (1 << 20));
        }
        Ctor::Tensor {
            shape,
            values,
            float_literals,
        } => {
            fix_shape(shape);
            let n: usize = shape.iter().product();
            values.resize(n, 1.0);
            for v in values.iter_mut() {
                if !v.is_finite() {
                    *v = 0.0;
                }
                *v = v.clamp(-1e6, 1e6);
                if !*float_literals {
                    *v = v.round();
                }
            }
        }
    }
    if input.ctor_dtype().is_err() {
        input.dtype = Some(DType::Int32);
    }
    if matches!(input.ctor, Ctor::Randn { .. } | Ctor::Rand { .. })
        && input.dtype == Some(DType::Int32)
    {
        input.dtype = Some(DType::Float32);
    }
    while input.dtype_and_shape().is_err() && !input.chain.is_empty() {
        input.chain.pop();
    }
    let too_big = input.dtype_and_shape().map_or(true, |(_, s)| {
        s.contains(&0) || s.iter().product::<usize>() > 1 << 16
    });
    if too_big {
        input.chain.clear();
    }
}

// ---- render/parse canonical forms --------------------------------------------------------------

/// Rewrites IR forms the frontend would read back differently into the form it reads.
fn fix_syntax(case: &mut Case) {
    let host: Vec<String> = host_tensor_names(case);
    each_stmt_mut(&mut case.kernel.body, &mut |s| {
        match &mut s.kind {
            StmtKind::For(lp) => {
                if lp.dims.len() > 1 {
                    lp.list_form = true;
                }
                if lp.kind == LoopKind::Grid {
                    lp.dims.iter_mut().for_each(|d| d.block_size = None);
                }
                if lp.list_form && lp.dims.iter().any(|d| d.begin.is_some()) {
                    for d in &mut lp.dims {
                        d.begin.get_or_insert_with(|| int(0));
                    }
                }
            }
            StmtKind::AugAssign { op, .. } => {
                if matches!(op, BinOp::Div | BinOp::FloorDiv) {
                    *op = BinOp::Add;
                }
            }
            StmtKind::Atomic {
                op,
                expected,
                value,
                ..
            } => match (*op == AtomicOp::Cas, expected.is_some()) {
                (true, false) => *expected = Some(value.clone()),
                (false, true) => *expected = None,
                (true, true) | (false, false) => {}
            },
            StmtKind::Store { indices, .. } => fix_indices(indices),
            StmtKind::Assign { .. } | StmtKind::If { .. } | StmtKind::Return(_) => {}
        }
        if let StmtKind::Atomic { indices, .. } = &mut s.kind {
            fix_indices(indices);
        }
        top_exprs_mut(s, &mut |e| fix_expr(e, &host));
    });
}

/// Calls `f` on every top-level expression of one statement (not of nested statements).
fn top_exprs_mut(stmt: &mut Stmt, f: &mut dyn FnMut(&mut Expr)) {
    let indices_of = |indices: &mut [Index], f: &mut dyn FnMut(&mut Expr)| {
        for i in indices {
            match i {
                Index::Full | Index::NewAxis | Index::Int(_) => {}
                Index::Slice { start, stop, step } => {
                    [start, stop, step].into_iter().flatten().for_each(&mut *f)
                }
                Index::Expr(e) => f(e),
            }
        }
    };
    match &mut stmt.kind {
        StmtKind::Assign { value, .. } | StmtKind::AugAssign { value, .. } => f(value),
        StmtKind::Store { indices, value, .. } => {
            indices_of(indices, f);
            f(value);
        }
        StmtKind::Atomic {
            indices,
            expected,
            value,
            ..
        } => {
            indices_of(indices, f);
            if let Some(x) = expected {
                f(x);
            }
            f(value);
        }
        StmtKind::For(lp) => {
            for d in &mut lp.dims {
                if let Some(b) = &mut d.begin {
                    f(b);
                }
                f(&mut d.end);
                if let Some(b) = &mut d.block_size {
                    f(b);
                }
            }
        }
        StmtKind::If { cond, .. } => f(cond),
        StmtKind::Return(values) => values.iter_mut().for_each(f),
    }
}

/// Index lists of `hl.load` and `hl.store` leave trailing `:` implicit, since Python has no `:`
/// inside a list literal; a load or store that still needs a `:` or slice is written as a
/// subscript instead. An atomic has no subscript form: its `slice(None)` entries stay (Helion
/// 1.5.1 needs them, D-1.5.1-20), and a slice in it is left for the validator to refuse.
pub(crate) fn canonical_lists(body: &mut [Stmt]) {
    fn list(indices: &mut Vec<Index>, explicit: &mut bool) {
        if *explicit {
            while indices.len() > 1 && matches!(indices.last(), Some(Index::Full)) {
                indices.pop();
            }
            if indices
                .iter()
                .any(|i| matches!(i, Index::Full | Index::Slice { .. }))
            {
                *explicit = false;
            }
        }
    }
    each_stmt_mut(body, &mut |s| {
        match &mut s.kind {
            StmtKind::Store {
                indices, explicit, ..
            } => list(indices, explicit),
            StmtKind::Atomic { .. }
            | StmtKind::Assign { .. }
            | StmtKind::AugAssign { .. }
            | StmtKind::For(_)
            | StmtKind::If { .. }
            | StmtKind::Return(_) => {}
        }
        top_exprs_mut(s, &mut |e| {
            each_expr_mut(e, &mut |x| {
                if let ExprKind::Load {
                    indices, explicit, ..
                } = &mut x.kind
                {
                    list(indices, explicit);
                }
            })
        });
    });
}

/// Writes an `hl.load`/`hl.store` whose index list is shorter than its tensor's rank as a
/// subscript (`x[outer]`, trailing dims omitted, which Helion 1.5.1 accepts), unless `keep()`
/// says to keep the list: Helion raises an internal `AssertionError: invalid subscript` on such
/// a list (D-1.5.1-20). An atomic has no subscript form, so its list is completed with
/// `slice(None)` entries instead, which Helion lowers (the same row of D-1.5.1-20).
pub(crate) fn subscript_partial_lists(case: &mut Case, keep: &mut dyn FnMut() -> bool) {
    // Most cases hold no index list at all; the host environment below (for the tensors'
    // ranks) was 1.6% of a campaign's instructions when built for every generated case.
    if !has_index_list(&case.kernel.body) {
        return;
    }
    let host = HostEnv::of(case);
    let rank_of = |tensor: &str| host.tensors.get(tensor).map(|t| t.shape.len());
    // How many trailing dims an index list leaves out, `None` when it names them all.
    let missing = |tensor: &str, indices: &[Index]| {
        let used = indices
            .iter()
            .filter(|i| !matches!(i, Index::NewAxis))
            .count();
        rank_of(tensor)
            .and_then(|rank| rank.checked_sub(used))
            .filter(|&m| m > 0)
    };
    let partial = |tensor: &str, indices: &[Index]| missing(tensor, indices).is_some();
    each_stmt_mut(&mut case.kernel.body, &mut |s| {
        match &mut s.kind {
            StmtKind::Store {
                tensor,
                indices,
                explicit,
                ..
            } => {
                if *explicit && partial(tensor, indices) && !keep() {
                    *explicit = false;
                }
            }
            StmtKind::Atomic {
                tensor, indices, ..
            } => {
                if let Some(m) = missing(tensor, indices)
                    && !keep()
                {
                    indices.extend(std::iter::repeat_n(Index::Full, m));
                }
            }
            StmtKind::Assign { .. }
            | StmtKind::AugAssign { .. }
            | StmtKind::For(_)
            | StmtKind::If { .. }
            | StmtKind::Return(_) => {}
        }
        top_exprs_mut(s, &mut |e| {
            each_expr_mut(e, &mut |x| {
                if let ExprKind::Load {
                    tensor,
                    indices,
                    explicit,
                } = &mut x.kind
                    && *explicit
                    && partial(tensor, indices)
                    && !keep()
                {
                    *explicit = false;
                }
            })
        });
    });
}

/// Whether `body` holds an `hl.load`/`hl.store` index list or an atomic.
fn has_index_list(body: &[Stmt]) -> bool {
    let mut found = false;
    each_stmt(body, &mut |s| {
        match &s.kind {
            StmtKind::Store { explicit, .. } => found |= *explicit,
            StmtKind::Atomic { .. } => found = true,
            StmtKind::Assign { .. }
            | StmtKind::AugAssign { .. }
            | StmtKind::For(_)
            | StmtKind::If { .. }
            | StmtKind::Return(_) => {}
        }
        stmt_exprs(s, &mut |e| {
            each_expr(e, &mut |x| {
                found |= matches!(x.kind, ExprKind::Load { explicit: true, .. });
            })
        });
    });
    found
}

fn fix_indices(indices: &mut [Index]) {
    for i in indices {
        match i {
            Index::Expr(Expr {
                kind: ExprKind::Int(k),
                ..
            }) => *i = Index::Int(*k),
            Index::Slice {
                start: None,
                stop: None,
                step: None,
            } => *i = Index::Full,
            Index::Full | Index::NewAxis | Index::Int(_) | Index::Slice { .. } | Index::Expr(_) => {
            }
        }
    }
}

fn fix_expr(e: &mut Expr, host: &[String]) {
    each_expr_mut(e, &mut |x| {
        let replacement = match &mut x.kind {
            ExprKind::Float(v) if !v.is_finite() => Some(ExprKind::Float(0.0)),
            ExprKind::Int(v) if v.abs() > 1 << 20 => {
                Some(ExprKind::Int((*v).clamp(-(1 << 20), 1 << 20)))
            }
            ExprKind::Arange {
                start: start @ None,
                step: Some(_),
                ..
            } => {
                *start = Some(Box::new(int(0)));
                None
            }
            ExprKind::Subscript { value, indices } => {
                fix_indices(indices);
                if let ExprKind::Name(n) = &value.kind
                    && host.contains(n)
                {
                    Some(ExprKind::Load {
                        tensor: n.clone(),
                        indices: std::mem::take(indices),
                        explicit: false,
                    })
                } else {
                    None
                }
            }
            ExprKind::Load {
                tensor, indices, ..
            } => {
                fix_indices(indices);
                (!host.contains(tensor)).then(|| ExprKind::Subscript {
                    value: Box::new(name(tensor)),
                    indices: std::mem::take(indices),
                })
            }
            ExprKind::Name(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Size { .. }
            | ExprKind::TileAttr { .. }
            | ExprKind::Binary { .. }
            | ExprKind::Compare { .. }
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
        if let Some(k) = replacement {
            x.kind = k;
        }
    });
}

fn host_tensor_names(case: &Case) -> Vec<String> {
    let mut names: Vec<String> = case
        .kernel
        .params
        .iter()
        .filter(|p| p.kind == ParamKind::Tensor)
        .map(|p| p.name.clone())
        .collect();
    for s in &case.kernel.body {
        if let StmtKind::Assign { target, value } = &s.kind
            && matches!(value.kind, ExprKind::Alloc { .. } | ExprKind::View { .. })
        {
            names.push(target.clone());
        }
    }
    names
}

// ---- loops and block sizes ---------------------------------------------------------------------

/// Clamps int-literal loop bounds to the dims the loop variable indexes in loads and stores
/// (a shrunk input otherwise makes every read of it fail).
fn fit_loops(case: &mut Case) {
    let env = HostEnv::of(case);
    let shapes: FastMap<String, Vec<usize>> = env
        .tensors
        .iter()
        .map(|(n, t)| (n.clone(), t.shape.clone()))
        .collect();
    let mut limit: FastMap<String, usize> = FastMap::default();
    lang::ir::walk::each_stmt(&case.kernel.body, &mut |s| {
        let mut see = |tensor: &str, indices: &[Index]| {
            let Some(shape) = shapes.get(tensor) else {
                return;
            };
            let mut dim = 0;
            for i in indices {
                if let Index::Expr(Expr {
                    kind: ExprKind::Name(v),
                    ..
                }) = i
                    && let Some(&d) = shape.get(dim)
                {
                    let l = limit.entry(v.clone()).or_insert(d);
                    *l = (*l).min(d);
                }
                if !matches!(i, Index::NewAxis) {
                    dim += 1;
                }
            }
        };
        match &s.kind {
            StmtKind::Store {
                tensor, indices, ..
            }
            | StmtKind::Atomic {
                tensor, indices, ..
            } => see(tensor, indices),
            StmtKind::Assign { .. }
            | StmtKind::AugAssign { .. }
            | StmtKind::For(_)
            | StmtKind::If { .. }
            | StmtKind::Return(_) => {}
        }
        lang::ir::walk::stmt_exprs(s, &mut |e| {
            lang::ir::walk::each_expr(e, &mut |x| {
                if let ExprKind::Load {
                    tensor, indices, ..
                } = &x.kind
                {
                    see(tensor, indices);
                }
            })
        });
    });
    each_stmt_mut(&mut case.kernel.body, &mut |s| {
        let StmtKind::For(lp) = &mut s.kind else {
            return;
        };
        for (var, d) in lp.vars.iter().zip(lp.dims.iter_mut()) {
            let Some(&max) = limit.get(var) else { continue };
            if let ExprKind::Int(e) = &mut d.end.kind {
                *e = (*e).clamp(1, (max as i64).max(1));
                let end = *e;
                if let Some(Expr {
                    kind: ExprKind::Int(b),
                    ..
                }) = &mut d.begin
                {
                    *b = (*b).clamp(0, end - 1);
                }
            }
        }
    });
}

fn fix_block_sizes(case: &mut Case) {
    let wanted = BlockTable::of(&case.kernel).config_count();
    let b = &mut case.config.block_sizes;
    b.resize(wanted, 1);
    b.iter_mut().for_each(|x| *x = (*x).clamp(1, 64));
}

/// Ends the kernel with one `return` of the host tensors it named that still exist (the first
/// tensor parameter when none does).
fn fix_return(case: &mut Case) {
    let host = host_tensor_names(case);
    let body = &mut case.kernel.body;
    let mut returned: Vec<Expr> = Vec::new();
    body.retain(|s| {
        let StmtKind::Return(values) = &s.kind else {
            return true;
        };
        returned.extend(values.iter().cloned());
        false
    });
    let mut keep: Vec<Expr> = Vec::new();
    for v in returned {
        if let ExprKind::Name(n) = &v.kind
            && host.contains(n)
            && !keep
                .iter()
                .any(|k| matches!(&k.kind, ExprKind::Name(m) if m == n))
        {
            keep.push(v);
        }
    }
    if keep.is_empty()
        && let Some(n) = host.first()
    {
        keep.push(name(n));
    }
    body.push(st(StmtKind::Return(keep)));
}

fn zero_alloc(case: &mut Case, target_name: &str) -> bool {
    let mut changed = false;
    for s in &mut case.kernel.body {
        if let StmtKind::Assign { target, value } = &mut s.kind
            && target == target_name
            && let ExprKind::Alloc {
                kind: kind @ AllocKind::Empty,
                ..
            } = &mut value.kind
        {
            *kind = AllocKind::Zeros;
            changed = true;
        }
    }
    changed
}

/// Removes the statement at `path`; false when there is none.
fn remove_at(body: &mut Vec<Stmt>, path: &StmtPath) -> bool {
    let Some((&(_, last), parents)) = path.split_last() else {
        return false;
    };
    let mut cur = body;
    for (k, &(_, i)) in parents.iter().enumerate() {
        let arm = path[k + 1].0;
        let Some(stmt) = cur.get_mut(i) else {
            return false;
        };
        cur = match (&mut stmt.kind, arm) {
            (StmtKind::For(lp), Arm::Loop) => &mut lp.body,
            (StmtKind::If { then_body, .. }, Arm::Then) => then_body,
            (StmtKind::If { else_body, .. }, Arm::Else) => else_body,
            (StmtKind::For(_), Arm::Root | Arm::Then | Arm::Else)
            | (StmtKind::If { .. }, Arm::Root | Arm::Loop)
            | (
                StmtKind::Assign { .. }
                | StmtKind::AugAssign { .. }
                | StmtKind::Store { .. }
                | StmtKind::Atomic { .. }
                | StmtKind::Return(_),
                _,
            ) => return false,
        };
    }
    if last < cur.len() {
        cur.remove(last);
        true
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = r#"import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def partial(x: torch.Tensor, y: torch.Tensor):
    for outer in hl.tile(x.size(0), block_size=4):
        hl.atomic_add(x, [outer], y[outer, :, :])
        hl.store(x, [outer], hl.load(y, [outer]))
    return x


x = torch.ones(8, 2, 128, dtype=torch.float32)
y = torch.ones(8, 2, 128, dtype=torch.float32)
partial(x, y)
"#;

    fn lists(case: &Case) -> Vec<(usize, bool)> {
        let mut out = Vec::new();
        each_stmt_mut(&mut case.kernel.body.clone(), &mut |s| match &s.kind {
            StmtKind::Store {
                indices, explicit, ..
            } => out.push((indices.len(), *explicit)),
            StmtKind::Atomic { indices, .. } => out.push((indices.len(), true)),
            StmtKind::Assign { .. }
            | StmtKind::AugAssign { .. }
            | StmtKind::For(_)
            | StmtKind::If { .. }
            | StmtKind::Return(_) => {}
        });
        out
    }

    #[test]
    fn partial_lists_become_what_helion_runs_unless_kept() {
        let parsed = lang::frontend::parse_case(SCRIPT, "partial.py").unwrap();
        // Atomic first, then the store (the load is inside the store's value).
        assert_eq!(lists(&parsed), vec![(1, true), (1, true)]);

        let mut kept = parsed.clone();
        subscript_partial_lists(&mut kept, &mut || true);
        assert_eq!(kept, parsed, "a kept case is untouched");

        let mut fixed = parsed.clone();
        subscript_partial_lists(&mut fixed, &mut || false);
        // The atomic's list is completed with `slice(None)`; the store becomes a subscript.
        assert_eq!(lists(&fixed), vec![(3, true), (1, false)]);
        let rendered = lang::render::render_case(&fixed);
        assert!(
            rendered.contains("hl.atomic_add(x, [outer, slice(None), slice(None)], "),
            "{rendered}"
        );
        assert!(rendered.contains("x[outer] = y[outer]"), "{rendered}");
    }
}
