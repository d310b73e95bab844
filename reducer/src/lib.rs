//! The reducer: delta debugging on the IR, to a fixpoint, while a predicate (the finding's
//! signature) holds.
//!
//! Passes, in this order (each proposes candidates; candidates are tried in order, a candidate
//! that is smaller by [`Cost`] and still interesting is kept, and the sweep continues from the
//! same position in the new case's candidate list; a sweep that kept something is followed by
//! another from the start, so the result is a fixpoint: no single candidate is interesting):
//! 0. move the case to [`CANONICAL_LOOP_TYPE`];
//! 1. drop a tile loop with its `block_sizes` entries (its own and its inner loops'), drop a
//!    statement (innermost and last first), drop an `else`, unwrap a branch into its then- or
//!    else-graph, unwrap a loop into its body;
//! 2. drop an unused input (its parameter and argument with it): early, because one such
//!    candidate saves every shape and value candidate of that input;
//! 3. simplify an expression: an operand of `+ - * /` for the whole, a cast or view for its
//!    operand, an int literal toward 0 or 1, a load for `hl.zeros` of its shape, a device
//!    subscript for its value or without a `None`;
//! 4. shrink input shapes (halve a dim, or take one off; literal inputs keep their leading rows,
//!    other inputs become `torch.ones`) and block sizes (halve, down to 1);
//! 5. simplify input values: `torch.ones`, then one distinct power of two per row, instead of
//!    random values; drop `.to`/`.contiguous` from input chains.
//!
//! Deterministic: no randomness, passes in a fixed order. Budgeted by attempts and wall time
//! ([`Budget`]). Candidates that are not well-formed simply fail the predicate (which should
//! parse-check or evaluate them), so the reducer needs no knowledge of well-formedness.
//!
//! Expensive predicates (a JAX run per candidate) go through [`reduce_staged`]: a sequential
//! screen decides the cheap cases in-process and hands the rest to `run`, which is called for
//! up to `jobs` candidates at once, on a rayon pool of `jobs` threads owned by the reduction
//! (not the global pool: `jobs` is the JAX pool's size, and more callers of `run` at once would
//! only queue for its workers); the first interesting candidate *in candidate order* wins, so
//! the result does not depend on `jobs`.

use lang::ir::{
    Arg, Case, Ctor, Expr, ExprKind, Index, InputOp, Loop, LoopKind, LoopType, ParamKind, Stmt,
    StmtKind, ViewOp, walk,
};
use rayon::prelude::*;
use std::time::{Duration, Instant};

/// Limits of one reduction.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Most predicate calls.
    pub attempts: usize,
    /// Most wall-clock time.
    pub time: Duration,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            attempts: 5_000,
            time: Duration::from_secs(60),
        }
    }
}

/// The size of a case, compared lexicographically: the reducer only keeps strictly smaller cases.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cost {
    /// Statements in the kernel (all depths).
    pub statements: usize,
    /// Loads of host tensors: before expression nodes, because a load is a planner decision of
    /// its own (`compiler::decisions`) and `hl.zeros([1, 64])` in its place has more nodes.
    pub loads: usize,
    /// Device subscript entries that are symbolic ([`is_dynamic_index`]): before expression
    /// nodes, so that `blk[0:1]` in place of `blk[local.index]` is smaller.
    pub dynamic_indices: usize,
    /// Expression nodes in the kernel.
    pub exprs: usize,
    /// Input elements over all inputs.
    pub input_elements: usize,
    /// Input constructor complexity (random 3, literal 2, arange 1, ones/zeros/full 0) plus
    /// chain length.
    pub input_complexity: usize,
    /// Sum of block sizes (config and fixed literals).
    pub block_sizes: i64,
    /// Sum of |int literals| in the kernel.
    pub literals: i64,
    /// 0 when the effective loop type is [`CANONICAL_LOOP_TYPE`], else 1: last, so it only
    /// breaks ties, and a case that shows its finding under the canonical skeleton is smaller.
    pub loop_type: u8,
}

/// The loop type the reducer moves a case to when the finding still shows under it: the one
/// Helion 1.5.1 defaults to for symbolic inner bounds (D-1.5.1-10), which lowers every kernel
/// the other two do. Findings of one cause seen under several loop types then reduce to one
/// case and one bucket.
pub const CANONICAL_LOOP_TYPE: LoopType = LoopType::ForiLoop;

/// The [`Cost`] of a case.
pub fn cost(case: &Case) -> Cost {
    let mut statements = 0;
    let mut loads = 0;
    let mut dynamic_indices = 0;
    let mut exprs = 0;
    let mut literals = 0i64;
    let mut fixed_blocks = 0i64;
    walk::each_stmt(&case.kernel.body, &mut |s| {
        statements += 1;
        if let StmtKind::For(lp) = &s.kind {
            for d in &lp.dims {
                if let Some(Expr {
                    kind: ExprKind::Int(b),
                    ..
                }) = &d.block_size
                {
                    fixed_blocks += b;
                }
            }
        }
        walk::stmt_exprs(s, &mut |e| {
            walk::each_expr(e, &mut |x| {
                exprs += 1;
                match &x.kind {
                    ExprKind::Int(v) => literals += v.abs(),
                    ExprKind::Load { .. } => loads += 1,
                    ExprKind::Subscript { indices, .. } => {
                        dynamic_indices += indices.iter().filter(|i| is_dynamic_index(i)).count()
                    }
                    // Counted as expression nodes only.
                    ExprKind::Name(_)
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
                    | ExprKind::Alloc { .. } => {}
                }
            })
        });
    });
    let mut input_elements = 0;
    let mut input_complexity = 0;
    for i in &case.inputs {
        if let Ok((_, shape)) = i.dtype_and_shape() {
            input_elements += shape.iter().product::<usize>();
        }
        input_complexity += i.chain.len()
            + match i.ctor {
                Ctor::Randn { .. }
                | Ctor::Rand { .. }
                | Ctor::Randint { .. }
                | Ctor::Empty { .. } => 3,
                Ctor::Tensor { .. } => 2,
                Ctor::Arange { .. } | Ctor::Range { .. } | Ctor::Eye { .. } => 1,
                Ctor::Ones { .. } | Ctor::Zeros { .. } | Ctor::Full { .. } => 0,
            };
    }
    Cost {
        statements,
        loads,
        dynamic_indices,
        exprs,
        input_elements,
        input_complexity,
        block_sizes: case.config.block_sizes.iter().sum::<i64>() + fixed_blocks,
        literals,
        loop_type: u8::from(case.effective_loop_type() != CANONICAL_LOOP_TYPE),
    }
}

/// What a reduction did.
#[derive(Clone, Debug)]
pub struct Reduced {
    /// The smallest interesting case found.
    pub case: Case,
    /// Predicate calls made.
    pub attempts: usize,
    /// Candidates kept.
    pub steps: usize,
    /// Whether the budget ran out before a fixpoint.
    pub exhausted: bool,
}

/// Reduces `case` while `interesting` holds. `interesting(case)` must be true for the input.
pub fn reduce(case: &Case, budget: Budget, mut interesting: impl FnMut(&Case) -> bool) -> Reduced {
    reduce_staged(
        case,
        budget,
        1,
        |c| {
            if interesting(c) {
                Screen::Interesting
            } else {
                Screen::Boring
            }
        },
        |()| false,
    )
}

/// What the cheap, sequential stage of a staged predicate says about a candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Screen<T> {
    /// Interesting, decided without the expensive stage.
    Interesting,
    /// Not interesting.
    Boring,
    /// Ask the expensive stage, with what the screen prepared.
    Run(T),
}

/// Reduces `case` while the staged predicate holds: `screen` runs on every candidate, in order,
/// on the calling thread; candidates it passes on ([`Screen::Run`]) are decided by `run`, up to
/// `jobs` of them at once on a pool of `jobs` threads. The kept candidate is always the first
/// interesting one in candidate order, as in a sequential reduction, so the result is the same
/// for every `jobs`. Attempts count `screen` calls. A panic in `run` is re-raised here.
pub fn reduce_staged<T: Send>(
    case: &Case,
    budget: Budget,
    jobs: usize,
    mut screen: impl FnMut(&Case) -> Screen<T>,
    run: impl Fn(T) -> bool + Sync,
) -> Reduced {
    let jobs = jobs.max(1);
    // One pool per reduction, its threads shared by every batch; built only when a batch can
    // hold more than one run: `jobs` 1 (a campaign without JAX workers) starts no thread.
    let pool = (jobs > 1).then(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(jobs)
            .thread_name(|i| format!("reduce-{i}"))
            .build()
            .expect("cannot start the reduction's threads")
    });
    let start = Instant::now();
    let mut best = case.clone();
    let mut best_cost = cost(&best);
    let mut attempts = 0;
    let mut steps = 0;
    let mut list = candidates(&best);
    let mut pos = 0;
    let mut progressed = false;
    let out_of_budget =
        |attempts: usize| attempts >= budget.attempts || start.elapsed() >= budget.time;
    loop {
        // Gather a batch: candidates from `pos` on, until `jobs` need the expensive stage or
        // one is interesting outright.
        let mut batch: Vec<(usize, Case, Option<T>)> = Vec::new();
        let mut next = pos;
        let mut exhausted = false;
        while next < list.len() && batch.len() < jobs {
            if out_of_budget(attempts) {
                exhausted = true;
                break;
            }
            let i = next;
            next += 1;
            if cost(&list[i]) >= best_cost {
                continue;
            }
            attempts += 1;
            match screen(&list[i]) {
                Screen::Boring => {}
                Screen::Interesting => {
                    batch.push((i, list[i].clone(), None));
                    break;
                }
                Screen::Run(t) => batch.push((i, list[i].clone(), Some(t))),
            }
        }
        if batch.is_empty() {
            if exhausted {
                return Reduced {
                    case: best,
                    attempts,
                    steps,
                    exhausted: true,
                };
            }
            if progressed {
                progressed = false;
                pos = 0;
                continue;
            }
            return Reduced {
                case: best,
                attempts,
                steps,
                exhausted: false,
            };
        }
        let verdicts = decide(
            batch.iter_mut().map(|(_, _, t)| t.take()).collect(),
            &run,
            pool.as_ref(),
        );
        match batch.into_iter().zip(verdicts).find(|(_, yes)| *yes) {
            Some(((i, c, _), _)) => {
                best_cost = cost(&c);
                best = c;
                steps += 1;
                progressed = true;
                list = candidates(&best);
                pos = i;
            }
            None => pos = next,
        }
        if exhausted {
            return Reduced {
                case: best,
                attempts,
                steps,
                exhausted: true,
            };
        }
    }
}

/// Decides a batch: `None` entries were interesting in the screen; the others run on `pool`,
/// one task each (a run is a JAX round trip, so no two share a thread while one is idle), and
/// the verdicts come back in batch order.
fn decide<T: Send>(
    items: Vec<Option<T>>,
    run: &(impl Fn(T) -> bool + Sync),
    pool: Option<&rayon::ThreadPool>,
) -> Vec<bool> {
    let pending = items.iter().filter(|t| t.is_some()).count();
    match pool {
        Some(pool) if pending > 1 => pool.install(|| {
            items
                .into_par_iter()
                .with_max_len(1)
                .map(|t| t.is_none_or(run))
                .collect()
        }),
        Some(_) | None => items.into_iter().map(|t| t.is_none_or(run)).collect(),
    }
}

/// All one-step simplifications of `case`, in pass order.
pub fn candidates(case: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    loop_type_candidates(case, &mut out);
    loop_with_slots_candidates(case, &mut out);
    statement_candidates(case, &mut out);
    unused_input_candidates(case, &mut out);
    expr_candidates(case, &mut out);
    shape_candidates(case, &mut out);
    input_candidates(case, &mut out);
    out
}

/// The case under [`CANONICAL_LOOP_TYPE`]: one candidate, first, since it applies to most
/// cases and a finding that keeps it converges with the same cause seen under the other types.
fn loop_type_candidates(case: &Case, out: &mut Vec<Case>) {
    if case.effective_loop_type() != CANONICAL_LOOP_TYPE {
        let mut c = case.clone();
        c.config.loop_type = Some(CANONICAL_LOOP_TYPE);
        out.push(c);
    }
}

/// Paths to statements: indices through bodies (loop body, then-graph = 0 / else-graph = 1).
fn body_at<'a>(body: &'a mut Vec<Stmt>, path: &[(usize, u8)]) -> Option<&'a mut Vec<Stmt>> {
    let Some((&(i, which), rest)) = path.split_first() else {
        return Some(body);
    };
    let stmt = body.get_mut(i)?;
    let inner = match (&mut stmt.kind, which) {
        (StmtKind::For(lp), _) => &mut lp.body,
        (StmtKind::If { then_body, .. }, 0) => then_body,
        (StmtKind::If { else_body, .. }, _) => else_body,
        _ => return None,
    };
    body_at(inner, rest)
}

fn collect_bodies(body: &[Stmt], prefix: &mut Vec<(usize, u8)>, out: &mut Vec<Vec<(usize, u8)>>) {
    out.push(prefix.clone());
    for (i, s) in body.iter().enumerate() {
        match &s.kind {
            StmtKind::For(lp) => {
                prefix.push((i, 0));
                collect_bodies(&lp.body, prefix, out);
                prefix.pop();
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                prefix.push((i, 0));
                collect_bodies(then_body, prefix, out);
                prefix.pop();
                prefix.push((i, 1));
                collect_bodies(else_body, prefix, out);
                prefix.pop();
            }
            StmtKind::Assign { .. }
            | StmtKind::AugAssign { .. }
            | StmtKind::Store { .. }
            | StmtKind::Atomic { .. }
            | StmtKind::Return(_) => {}
        }
    }
}

fn statement_candidates(case: &Case, out: &mut Vec<Case>) {
    let mut bodies = Vec::new();
    collect_bodies(&case.kernel.body, &mut Vec::new(), &mut bodies);
    // Innermost bodies first: deep statements are the most likely to be irrelevant.
    bodies.sort_by_key(|p| std::cmp::Reverse(p.len()));
    for path in bodies {
        let mut probe = case.clone();
        let Some(body) = body_at(&mut probe.kernel.body, &path) else {
            continue;
        };
        let n = body.len();
        for i in (0..n).rev() {
            let mut c = case.clone();
            let body = body_at(&mut c.kernel.body, &path).expect("path exists");
            let removed = body.remove(i);
            match removed.kind {
                StmtKind::Return(_) => continue,
                StmtKind::For(lp) => {
                    out.push(c.clone());
                    // Unwrap: the loop body in place of the loop.
                    let mut u = case.clone();
                    let body = body_at(&mut u.kernel.body, &path).expect("path exists");
                    body.splice(i..=i, lp.body);
                    out.push(u);
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    out.push(c.clone());
                    for branch in [then_body, else_body] {
                        let mut u = case.clone();
                        let body = body_at(&mut u.kernel.body, &path).expect("path exists");
                        body.splice(i..=i, branch);
                        out.push(u);
                    }
                }
                StmtKind::Assign { .. }
                | StmtKind::AugAssign { .. }
                | StmtKind::Store { .. }
                | StmtKind::Atomic { .. } => out.push(c),
            }
        }
    }
}

/// Replacements of one expression node by a simpler one.
fn simpler(e: &Expr) -> Vec<Expr> {
    match &e.kind {
        ExprKind::Binary { lhs, rhs, .. } => vec![(**lhs).clone(), (**rhs).clone()],
        ExprKind::Cast { value, .. } | ExprKind::Permute { value, .. } => vec![(**value).clone()],
        // An op's operands are candidates (one of them may keep the failure alive).
        ExprKind::Op { args, .. } => args.clone(),
        ExprKind::View { value, op } => match op {
            ViewOp::Reshape(_)
            | ViewOp::View(_)
            | ViewOp::Squeeze(_)
            | ViewOp::Unsqueeze(_)
            | ViewOp::ViewAs(_) => {
                vec![(**value).clone()]
            }
        },
        ExprKind::Int(v) if *v > 1 => vec![
            Expr::int(0, e.span),
            Expr::int(1, e.span),
            Expr::int(v / 2, e.span),
        ],
        ExprKind::Int(v) if *v < 0 => vec![Expr::int(0, e.span), Expr::int(-v, e.span)],
        ExprKind::Int(_)
        | ExprKind::Name(_)
        | ExprKind::Float(_)
        | ExprKind::Size { .. }
        | ExprKind::TileAttr { .. }
        | ExprKind::Compare { .. }
        | ExprKind::Load { .. }
        | ExprKind::Subscript { .. }
        | ExprKind::Arange { .. }
        | ExprKind::Zeros { .. }
        | ExprKind::Full { .. }
        | ExprKind::Sum { .. }
        | ExprKind::Alloc { .. } => vec![],
    }
}

/// Simplifications that need the case around the expression: a load by `hl.zeros` of its
/// shape (an accumulator's initial value is rarely what a finding needs, and every load is a
/// planner decision of its own, `compiler::decisions`); a device subscript by its value, or
/// without one of its `None` entries.
fn simpler_in(
    case: &Case,
    types: Option<&lang::ir::types::Types>,
    tile_vars: &[String],
    e: &Expr,
) -> Vec<Expr> {
    let mut out = simpler(e);
    match &e.kind {
        ExprKind::Load {
            tensor, indices, ..
        } => {
            if let Some(z) = zeros_for_load(case, tile_vars, tensor, indices, e.span) {
                out.push(z);
            }
        }
        ExprKind::Subscript { value, indices } => {
            out.push((**value).clone());
            let with = |i: usize, entry: Option<Index>| {
                let mut indices = indices.clone();
                match entry {
                    Some(entry) => indices[i] = entry,
                    None => {
                        indices.remove(i);
                    }
                }
                Expr {
                    kind: ExprKind::Subscript {
                        value: value.clone(),
                        indices,
                    },
                    span: e.span,
                }
            };
            let widths = types.map(|t| entry_widths(t, indices, e));
            for (i, index) in indices.iter().enumerate() {
                if matches!(index, Index::NewAxis) {
                    out.push(with(i, None));
                }
                // A symbolic run for a static one of its own width (`blk[0:8]` for an 8-row
                // `blk[local.index]`): the shape downstream is unchanged, so the swap survives
                // where `0:1` breaks a broadcast, and findings that need "some run" converge
                // on the static run whatever kind they were found with.
                if is_dynamic_index(index)
                    && let Some(Some(w)) = widths.as_ref().and_then(|ws| ws.get(i))
                    && *w > 1
                {
                    out.push(with(
                        i,
                        Some(Index::Slice {
                            start: Some(Expr::int(0, e.span)),
                            stop: Some(Expr::int(*w, e.span)),
                            step: None,
                        }),
                    ));
                }
                // A symbolic run for the simplest static one of the same rank (`0:1`), or a
                // static row: the decision a finding needs is often "some run out of a
                // resident Ref", not which kind.
                if is_dynamic_index(index) {
                    let lit = |v| Some(Expr::int(v, e.span));
                    out.push(with(
                        i,
                        Some(Index::Slice {
                            start: lit(0),
                            stop: lit(1),
                            step: None,
                        }),
                    ));
                    out.push(with(i, Some(Index::Int(0))));
                }
            }
        }
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Name(_)
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
        | ExprKind::Alloc { .. } => {}
    }
    out
}

/// The width of the one result dim each entry of the subscript `e` makes (`None` for an entry
/// that makes none or several), read off the inferred type of `e`.
fn entry_widths(types: &lang::ir::types::Types, indices: &[Index], e: &Expr) -> Vec<Option<i64>> {
    let Some(dims) = types.of(e).dims() else {
        return vec![None; indices.len()];
    };
    let mut at = 0usize;
    indices
        .iter()
        .map(|index| {
            let made = match index {
                Index::Int(_) => 0,
                Index::Full | Index::NewAxis | Index::Slice { .. } => 1,
                Index::Expr(x) => match types.of(x) {
                    lang::ir::types::Ty::Tile(_) => 1,
                    t => t.dims().map_or(0, <[_]>::len),
                },
            };
            let width = (made == 1).then(|| dims.get(at).map(|d| d.size)).flatten();
            at += made;
            width
        })
        .collect()
}

/// `hl.zeros` with the shape and dtype of `tensor[indices]`, for a kernel parameter bound to a
/// module-level input, indexed by tile variables (a dim of the tile), grid variables and ints
/// (no dim) and `:` (the input's dim); `None` for anything else.
fn zeros_for_load(
    case: &Case,
    tile_vars: &[String],
    tensor: &str,
    indices: &[Index],
    span: lang::ir::Span,
) -> Option<Expr> {
    let p = case.kernel.params.iter().position(|p| p.name == tensor)?;
    let Some(Arg::Input(input)) = case.call.args.get(p) else {
        return None;
    };
    let (dtype, shape) = case
        .inputs
        .iter()
        .find(|i| &i.name == input)?
        .dtype_and_shape()
        .ok()?;
    if indices.len() > shape.len() {
        return None;
    }
    let mut dims = Vec::new();
    for (d, &size) in shape.iter().enumerate() {
        match indices.get(d) {
            None | Some(Index::Full) => dims.push(Expr::int(i64::try_from(size).ok()?, span)),
            Some(Index::Expr(x)) => match &x.kind {
                ExprKind::Name(n) if tile_vars.contains(n) => dims.push(x.clone()),
                ExprKind::Name(_) | ExprKind::Int(_) => {}
                ExprKind::Float(_)
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
                | ExprKind::View { .. }
                | ExprKind::Permute { .. }
                | ExprKind::Op { .. }
                | ExprKind::Alloc { .. } => return None,
            },
            Some(Index::Int(_)) => {}
            Some(Index::NewAxis | Index::Slice { .. }) => return None,
        }
    }
    Some(Expr {
        kind: ExprKind::Zeros { shape: dims, dtype },
        span,
    })
}

/// A device subscript entry that is neither `:`, `None`, an int nor a literal slice.
fn is_dynamic_index(index: &Index) -> bool {
    match index {
        Index::Full | Index::NewAxis | Index::Int(_) => false,
        Index::Slice { start, stop, step } => [start, stop, step]
            .into_iter()
            .flatten()
            .any(|b| !matches!(b.kind, ExprKind::Int(_))),
        Index::Expr(_) => true,
    }
}

fn tile_vars(case: &Case) -> Vec<String> {
    let mut vars = Vec::new();
    walk::each_stmt(&case.kernel.body, &mut |s| {
        if let StmtKind::For(lp) = &s.kind
            && lp.kind == LoopKind::Tile
        {
            vars.extend(lp.vars.iter().cloned());
        }
    });
    vars
}

fn expr_candidates(case: &Case, out: &mut Vec<Case>) {
    let tile_vars = tile_vars(case);
    let types = lang::ir::types::infer(case).ok();
    // Number the expression nodes in a fixed pre-order, then rewrite node k in a fresh copy.
    let mut count = 0usize;
    walk::each_stmt(&case.kernel.body, &mut |s| {
        walk::stmt_exprs(s, &mut |e| walk::each_expr(e, &mut |_| count += 1))
    });
    for k in 0..count {
        let mut replacements = Vec::new();
        let mut i = 0;
        walk::each_stmt(&case.kernel.body, &mut |s| {
            walk::stmt_exprs(s, &mut |e| {
                walk::each_expr(e, &mut |x| {
                    if i == k {
                        replacements = simpler_in(case, types.as_ref(), &tile_vars, x);
                    }
                    i += 1;
                })
            })
        });
        for r in replacements {
            let mut c = case.clone();
            let mut i = 0;
            walk::each_stmt_mut(&mut c.kernel.body, &mut |s| {
                walk::stmt_exprs_mut(s, &mut |x| {
                    if i == k {
                        *x = r.clone();
                    }
                    i += 1;
                })
            });
            out.push(c);
        }
    }
}

fn ctor_shape_mut(ctor: &mut Ctor) -> Option<&mut Vec<usize>> {
    match ctor {
        Ctor::Randn { shape }
        | Ctor::Rand { shape }
        | Ctor::Ones { shape }
        | Ctor::Zeros { shape }
        | Ctor::Full { shape, .. }
        | Ctor::Randint { shape, .. }
        | Ctor::Empty { shape } => Some(shape),
        Ctor::Arange { .. } | Ctor::Range { .. } | Ctor::Eye { .. } | Ctor::Tensor { .. } => None,
    }
}

fn shape_candidates(case: &Case, out: &mut Vec<Case>) {
    for (k, b) in case.config.block_sizes.iter().enumerate() {
        if *b > 1 {
            let mut c = case.clone();
            c.config.block_sizes[k] = b / 2;
            out.push(c);
        }
    }
    for (i, input) in case.inputs.iter().enumerate() {
        let Ok((_, shape)) = input.dtype_and_shape() else {
            continue;
        };
        for d in 0..shape.len() {
            if shape[d] <= 1 {
                continue;
            }
            for new in [shape[d] / 2, shape[d] - 1] {
                let mut c = case.clone();
                let mut target = shape.clone();
                target[d] = new;
                let input = &mut c.inputs[i];
                // Rebuild as the simplest constructor of the target shape with the same dtype
                // and value family; the chain is dropped (values are simplified separately).
                let dtype = input.dtype_and_shape().map(|(t, _)| t).ok();
                if d == 0 && truncate_rows(input, new) {
                    // Literal values keep their leading rows (a wrong row stays visible).
                } else if let Some(shape_ref) = ctor_shape_mut(&mut input.ctor).filter(|_| {
                    input
                        .chain
                        .iter()
                        .all(|op| matches!(op, InputOp::To(_) | InputOp::Contiguous))
                }) {
                    *shape_ref = target.clone();
                } else {
                    input.ctor = Ctor::Ones {
                        shape: target.clone(),
                    };
                    input.chain.clear();
                    input.dtype = dtype;
                }
                out.push(c);
            }
        }
    }
}

/// Keeps the first `rows` rows of a literal input: a `torch.tensor([...])` (row-major values),
/// or the one-value-per-row form `torch.tensor([v0, v1, ...]).reshape(n, 1, ..).expand(n, ..)`
/// (`.contiguous()`). Returns false (leaving the input as it was) for any other input.
fn truncate_rows(input: &mut lang::ir::Input, rows: usize) -> bool {
    let Ctor::Tensor { shape, values, .. } = &mut input.ctor else {
        return false;
    };
    let Some(&old_rows) = shape.first() else {
        return false;
    };
    if rows == 0 || rows >= old_rows {
        return false;
    }
    let per_row = values.len() / old_rows.max(1);
    match input.chain.as_mut_slice() {
        [] | [InputOp::To(_)] | [InputOp::Contiguous] => {
            values.truncate(rows * per_row);
            shape[0] = rows;
            true
        }
        [InputOp::Reshape(r), InputOp::Expand(e), rest @ ..]
            if shape.len() == 1
                && r.first() == Some(&(old_rows as i64))
                && e.first() == Some(&(old_rows as i64))
                && rest
                    .iter()
                    .all(|op| matches!(op, InputOp::Contiguous | InputOp::To(_))) =>
        {
            values.truncate(rows);
            shape[0] = rows;
            r[0] = rows as i64;
            e[0] = rows as i64;
            true
        }
        _ => false,
    }
}

fn input_candidates(case: &Case, out: &mut Vec<Case>) {
    for (i, input) in case.inputs.iter().enumerate() {
        let Ok((dtype, shape)) = input.dtype_and_shape() else {
            continue;
        };
        let simple = matches!(
            input.ctor,
            Ctor::Ones { .. } | Ctor::Zeros { .. } | Ctor::Full { .. }
        ) && input.chain.is_empty();
        if !simple {
            let mut c = case.clone();
            c.inputs[i].ctor = Ctor::Ones {
                shape: shape.clone(),
            };
            c.inputs[i].chain.clear();
            c.inputs[i].dtype = Some(dtype);
            out.push(c);
            // One distinct power of two per row: a wrong row stays visible.
            if let Some((&rows, rest)) = shape.split_first() {
                let mut c = case.clone();
                let values: Vec<f64> = (0..rows).map(|r| 2f64.powi((r % 24) as i32)).collect();
                let mut chain = vec![InputOp::Reshape(
                    std::iter::once(rows as i64)
                        .chain(rest.iter().map(|_| 1))
                        .collect(),
                )];
                if !rest.is_empty() {
                    chain.push(InputOp::Expand(shape.iter().map(|&d| d as i64).collect()));
                    chain.push(InputOp::Contiguous);
                }
                c.inputs[i].ctor = Ctor::Tensor {
                    shape: vec![rows],
                    values,
                    float_literals: dtype.is_float(),
                };
                c.inputs[i].chain = chain;
                c.inputs[i].dtype = Some(dtype);
                out.push(c);
            }
        }
    }
}

/// Drops an unused tensor parameter with its argument and input.
fn unused_input_candidates(case: &Case, out: &mut Vec<Case>) {
    for (p, param) in case.kernel.params.iter().enumerate() {
        if param.kind != ParamKind::Tensor {
            continue;
        }
        let mut used = false;
        walk::each_stmt(&case.kernel.body, &mut |s| {
            if let StmtKind::Store { tensor, .. } | StmtKind::Atomic { tensor, .. } = &s.kind
                && tensor == &param.name
            {
                used = true
            }
            walk::stmt_exprs(s, &mut |e| {
                walk::each_expr(e, &mut |x| {
                    if let ExprKind::Name(n) | ExprKind::Load { tensor: n, .. } = &x.kind
                        && n == &param.name
                    {
                        used = true
                    }
                })
            })
        });
        if used {
            continue;
        }
        let mut c = case.clone();
        c.kernel.params.remove(p);
        let arg = c.call.args.remove(p);
        if let Arg::Input(name) = arg
            && !c
                .call
                .args
                .iter()
                .any(|a| matches!(a, Arg::Input(n) if n == &name))
        {
            c.inputs.retain(|i| i.name != name);
        }
        out.push(c);
    }
}

/// `case` with one tile loop removed together with the config slots it and the loops inside it
/// take (`Config::block_sizes` entries, registered in pre-order: `lang::ir::blocks`), one
/// candidate per loop that takes any. Dropping a loop but not its slots would shift every later
/// loop's block size, so such a candidate rarely keeps the finding.
fn loop_with_slots_candidates(case: &Case, out: &mut Vec<Case>) {
    for target in 0.. {
        let mut c = case.clone();
        let (mut seen, mut slot) = (0, 0);
        let Some(slots) = drop_loop(&mut c.kernel.body, target, &mut seen, &mut slot) else {
            break;
        };
        if !slots.is_empty() && slots.end <= c.config.block_sizes.len() {
            c.config.block_sizes.drain(slots);
            out.push(c);
        }
    }
}

/// Config slots a loop's own dims take.
fn own_slots(lp: &Loop) -> usize {
    match lp.kind {
        LoopKind::Tile => lp.dims.iter().filter(|d| d.block_size.is_none()).count(),
        LoopKind::Grid => 0,
    }
}

/// Config slots the loops of `body` take, nested ones included.
fn body_slots(body: &[Stmt]) -> usize {
    body.iter()
        .map(|s| match &s.kind {
            StmtKind::For(lp) => own_slots(lp) + body_slots(&lp.body),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => body_slots(then_body) + body_slots(else_body),
            StmtKind::Assign { .. }
            | StmtKind::AugAssign { .. }
            | StmtKind::Store { .. }
            | StmtKind::Atomic { .. }
            | StmtKind::Return(_) => 0,
        })
        .sum()
}

/// Removes the `target`-th loop of `body` in pre-order (`seen` loops and `slot` config slots
/// come before `body`); returns the config slots it took.
fn drop_loop(
    body: &mut Vec<Stmt>,
    target: usize,
    seen: &mut usize,
    slot: &mut usize,
) -> Option<std::ops::Range<usize>> {
    for i in 0..body.len() {
        match &mut body[i].kind {
            StmtKind::For(lp) => {
                if *seen == target {
                    let n = own_slots(lp) + body_slots(&lp.body);
                    body.remove(i);
                    return Some(*slot..*slot + n);
                }
                *seen += 1;
                *slot += own_slots(lp);
                if let Some(r) = drop_loop(&mut lp.body, target, seen, slot) {
                    return Some(r);
                }
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                if let Some(r) = drop_loop(then_body, target, seen, slot) {
                    return Some(r);
                }
                if let Some(r) = drop_loop(else_body, target, seen, slot) {
                    return Some(r);
                }
            }
            StmtKind::Assign { .. }
            | StmtKind::AugAssign { .. }
            | StmtKind::Store { .. }
            | StmtKind::Atomic { .. }
            | StmtKind::Return(_) => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use lang::frontend::parse_case;
    use lang::render::render_case;

    const BIG: &str = r#"import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True, config=helion.Config(block_sizes=[4, 2], pallas_loop_type="fori_loop"))
def k(x: torch.Tensor, y: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0)):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live):
                acc = acc + x_block[local.index, :, :].float().sum(dim=0)
            if live >= 3:
                acc = acc + x_block[live - 3 : live, :, :].float().sum(dim=0)
            acc = acc + x_block[1, :, :].float() * 2
        out[request, :, :] = acc
    return out


torch.manual_seed(0)
x = torch.randn(9, 2, 128, dtype=torch.bfloat16)
y = torch.randn(4, 4)
k(x, y)
"#;

    /// Interesting: still parses, and still reads `x_block[1, ...]`.
    fn reads_row_one(c: &Case) -> bool {
        let Ok(back) = parse_case(&render_case(c), "c.py") else {
            return false;
        };
        let mut found = false;
        walk::each_stmt(&back.kernel.body, &mut |s| {
            walk::stmt_exprs(s, &mut |e| {
                walk::each_expr(e, &mut |x| {
                    if let ExprKind::Subscript { indices, .. } = &x.kind {
                        found |= indices.first() == Some(&Index::Int(1));
                    }
                })
            })
        });
        found
    }

    #[test]
    fn a_symbolic_run_is_offered_as_a_static_run_of_its_own_width() {
        let case = parse_case(BIG, "big.py").unwrap();
        let rendered: Vec<String> = candidates(&case).iter().map(render_case).collect();
        // `local.index` under an inner block of 2, and the 3-row tail `live - 3 : live`.
        for swap in ["x_block[0:2, :, :].float()", "x_block[0:3, :, :].float()"] {
            assert!(rendered.iter().any(|r| r.contains(swap)), "{swap}");
        }
    }

    #[test]
    fn reduces_to_the_interesting_statement_deterministically() {
        let case = parse_case(BIG, "big.py").unwrap();
        assert!(reads_row_one(&case));
        let a = reduce(&case, Budget::default(), reads_row_one);
        let b = reduce(&case, Budget::default(), reads_row_one);
        assert_eq!(
            render_case(&a.case),
            render_case(&b.case),
            "reduction is deterministic"
        );
        assert!(!a.exhausted);
        assert!(reads_row_one(&a.case));
        assert!(cost(&a.case) < cost(&case));
        let text = render_case(&a.case);
        assert!(
            !text.contains("local.index"),
            "irrelevant loop kept:\n{text}"
        );
        assert!(
            !text.contains("live - 3"),
            "irrelevant branch kept:\n{text}"
        );
        assert!(
            !text.contains("y: torch.Tensor"),
            "unused input kept:\n{text}"
        );
        assert!(!text.contains("randn"), "random input kept:\n{text}");
    }

    /// The staged form of [`reads_row_one`]: every candidate goes to `run`, in parallel.
    fn staged(case: &Case, jobs: usize, run: impl Fn(Case) -> bool + Sync) -> Reduced {
        reduce_staged(
            case,
            Budget::default(),
            jobs,
            |c| Screen::Run(c.clone()),
            run,
        )
    }

    #[test]
    fn a_parallel_reduction_keeps_what_a_sequential_one_keeps() {
        let case = parse_case(BIG, "big.py").unwrap();
        let one = staged(&case, 1, |c| reads_row_one(&c));
        let three = staged(&case, 3, |c| reads_row_one(&c));
        assert_eq!(render_case(&one.case), render_case(&three.case));
        assert_eq!(one.steps, three.steps);
        assert_eq!(
            render_case(&one.case),
            render_case(&reduce(&case, Budget::default(), reads_row_one).case)
        );
    }

    #[test]
    fn a_panicking_predicate_stops_the_reduction_with_its_own_message() {
        let case = parse_case(BIG, "big.py").unwrap();
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            staged(&case, 2, |c| {
                if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 3 {
                    panic!("predicate bug");
                }
                reads_row_one(&c)
            })
        }))
        .expect_err("the panic is re-raised");
        assert_eq!(caught.downcast_ref::<&str>(), Some(&"predicate bug"));
    }

    #[test]
    fn budget_stops_the_reduction() {
        let case = parse_case(BIG, "big.py").unwrap();
        let r = reduce(
            &case,
            Budget {
                attempts: 3,
                time: Duration::from_secs(60),
            },
            reads_row_one,
        );
        assert!(r.exhausted);
        assert!(r.attempts <= 3);
    }

    const THREE_LOOPS: &str = r#"import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True, config=helion.Config(block_sizes=[3, 4, 2], pallas_loop_type="fori_loop"))
def k(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for chunk in hl.tile(0, 6):
            acc = acc + chunk.count
        for outer in hl.tile(x.size(0)):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live):
                acc = acc + x_block[local.index, :, :].float().sum(dim=0)
        out[request, :, :] = acc
    return out


x = torch.ones(8, 2, 128)
k(x)
"#;

    #[test]
    fn a_dropped_loop_takes_its_config_slots_with_it() {
        let case = lang::frontend::parse_case(THREE_LOOPS, "k.py").unwrap();
        let mut drops = Vec::new();
        loop_with_slots_candidates(&case, &mut drops);
        // The grid takes no slot; `chunk` takes slot 0; `outer` takes 1 and (inside) 2; `local`
        // takes 2.
        let slots: Vec<Vec<i64>> = drops.iter().map(|c| c.config.block_sizes.clone()).collect();
        assert_eq!(slots, vec![vec![], vec![4, 2], vec![3], vec![3, 4]]);
        // Dropping `chunk` leaves `outer` and `local` their own block sizes.
        let without_chunk = &drops[1];
        let table = lang::ir::blocks::BlockTable::of(&without_chunk.kernel);
        assert_eq!(table.config_count(), without_chunk.config.block_sizes.len());
    }
}
