//! The planner never panics: every spec kernel and mutated variants of it (statements dropped,
//! int literals changed, block sizes, worklist grouping and loop types varied) give `Ok` or a
//! `Rejection` from `plan_case`, whether or not trace-time validation would have passed.
//! Also the planner's speed on the typical case (an ignored test printing the median).

#[path = "planner_helpers.rs"]
mod helpers;

use corpus::expectations::{load_spec_kernel, spec_kernels_dir};
use lang::ir::{Case, ExprKind, Index, LoopType, Stmt, StmtKind, walk};
use pallas_diff_compiler::plan::{plan, plan_case};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Every parseable spec kernel (a script mid-edit that does not parse is skipped here; the
/// spec-kernel test reports it).
fn corpus() -> Vec<(String, Case)> {
    let mut out = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(spec_kernels_dir())
        .expect("spec kernels dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .collect();
    paths.sort();
    for p in paths {
        if let Ok(k) = load_spec_kernel(&p) {
            out.push((k.name(), k.case));
        }
    }
    assert!(!out.is_empty(), "no spec kernels");
    out
}

fn stmt_count(body: &[Stmt]) -> usize {
    let mut n = 0;
    walk::each_stmt(body, &mut |_| n += 1);
    n
}

/// Removes the `k`-th statement (pre-order); returns whether it was found.
fn drop_stmt(body: &mut Vec<Stmt>, k: &mut usize) -> bool {
    let mut i = 0;
    while i < body.len() {
        if *k == 0 {
            body.remove(i);
            return true;
        }
        *k -= 1;
        let found = match &mut body[i].kind {
            StmtKind::For(lp) => drop_stmt(&mut lp.body, k),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => drop_stmt(then_body, k) || drop_stmt(else_body, k),
            _ => false,
        };
        if found {
            return true;
        }
        i += 1;
    }
    false
}

/// Calls `f` on every int literal site (expression or index entry) of the kernel body.
fn each_int(case: &mut Case, f: &mut dyn FnMut(&mut i64)) {
    fn indices(ix: &mut [Index], f: &mut dyn FnMut(&mut i64)) {
        for i in ix {
            if let Index::Int(v) = i {
                f(v);
            }
        }
    }
    let mut on_expr = |e: &mut lang::ir::Expr| match &mut e.kind {
        ExprKind::Int(v) => f(v),
        ExprKind::Load { indices: ix, .. } | ExprKind::Subscript { indices: ix, .. } => {
            indices(ix, f)
        }
        _ => {}
    };
    walk::each_stmt_mut(&mut case.kernel.body, &mut |s| match &mut s.kind {
        StmtKind::Assign { value, .. } | StmtKind::AugAssign { value, .. } => {
            walk::each_expr_mut(value, &mut on_expr)
        }
        StmtKind::Store {
            indices: ix, value, ..
        }
        | StmtKind::Atomic {
            indices: ix, value, ..
        } => {
            walk::each_index_expr_mut(ix, &mut on_expr);
            walk::each_expr_mut(value, &mut on_expr);
        }
        StmtKind::For(lp) => {
            for d in &mut lp.dims {
                for e in d
                    .begin
                    .iter_mut()
                    .chain([&mut d.end])
                    .chain(d.block_size.iter_mut())
                {
                    walk::each_expr_mut(e, &mut on_expr);
                }
            }
        }
        StmtKind::If { cond, .. } => walk::each_expr_mut(cond, &mut on_expr),
        StmtKind::Return(values) => values
            .iter_mut()
            .for_each(|v| walk::each_expr_mut(v, &mut on_expr)),
    });
}

fn int_sites(case: &Case) -> usize {
    let mut c = case.clone();
    let mut n = 0;
    each_int(&mut c, &mut |_| n += 1);
    n
}

fn mutants(case: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    for k in 0..stmt_count(&case.kernel.body) {
        let mut c = case.clone();
        if drop_stmt(&mut c.kernel.body, &mut k.clone()) {
            out.push(c);
        }
    }
    for site in 0..int_sites(case) {
        for v in [0, 1, -1, 7] {
            let mut c = case.clone();
            let mut i = 0;
            each_int(&mut c, &mut |x| {
                if i == site {
                    *x = v;
                }
                i += 1;
            });
            out.push(c);
        }
    }
    for slot in 0..case.config.block_sizes.len() {
        for b in [1, 2, 3, 8, 16, 0] {
            let mut c = case.clone();
            c.config.block_sizes[slot] = b;
            out.push(c);
        }
    }
    let mut c = case.clone();
    c.config.block_sizes.clear();
    out.push(c);
    for g in [0, 1, 2, 5] {
        let mut c = case.clone();
        c.config.worklist_grouping = Some(g);
        out.push(c);
    }
    for lt in LoopType::ALL {
        let mut c = case.clone();
        c.config.loop_type = Some(lt);
        out.push(c);
    }
    out
}

#[test]
fn planner_never_panics_on_spec_kernels_and_mutants() {
    let mut runs = 0;
    let mut planner_panics = Vec::new();
    let mut other_panics = Vec::new();
    for (name, case) in corpus() {
        let mut all = vec![case.clone()];
        all.extend(mutants(&case));
        for c in all {
            runs += 1;
            let types = match catch_unwind(AssertUnwindSafe(|| lang::ir::types::infer(&c))) {
                Ok(Ok(t)) => t,
                Ok(Err(_)) => continue,
                Err(_) => {
                    other_panics.push(format!("{name}: types::infer panicked"));
                    continue;
                }
            };
            if catch_unwind(AssertUnwindSafe(|| plan(&c, &types))).is_err() {
                planner_panics.push(format!("{name}:\n{}", lang::render::render_case(&c)));
            }
            // The whole verdict path as well (validation first).
            let _ = catch_unwind(AssertUnwindSafe(|| helpers::verdict(&c)));
        }
    }
    assert!(runs > 1000, "only {runs} runs");
    assert!(
        planner_panics.is_empty(),
        "planner panicked on {} cases:\n{}",
        planner_panics.len(),
        planner_panics.join("\n---\n")
    );
    if !other_panics.is_empty() {
        eprintln!("outside the planner: {}", other_panics.join("; "));
    }
}

#[test]
fn plan_case_turns_type_errors_into_tracing_rejections() {
    let src = helpers::script(
        "block_sizes=[4]",
        "x: torch.Tensor",
        r#"    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        for outer in hl.tile(x.size(0)):
            x_block = x[outer, :, :]
            out[request, :, :] = x_block.reshape(3, 3)
    return out"#,
        "x = torch.ones(8, 2, 128)\nkernel(x)",
    );
    let r = plan_case(&helpers::parse(&src)).unwrap_err();
    assert_eq!(r.rule, pallas_diff_compiler::verdict::Rule::TraceTypeError);
    assert_eq!(
        r.class(),
        pallas_diff_compiler::verdict::ErrorClass::TracingError
    );
}
