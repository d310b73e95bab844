//! Shared helpers of the planner tests: case scripts from kernel bodies, and the verdict of a
//! case (trace-time validation, the bind-time checks, then the planner). Included by the other `planner_*` test
//! files with `#[path]`; compiled on its own it has no tests.
#![allow(dead_code)]

use lang::frontend::parse_case;
use lang::ir::{Case, Expr, ExprKind, Index, Stmt, StmtKind, ViewOp};
use lang::render;
use pallas_diff_compiler::plan::{Plan, plan_case};
use pallas_diff_compiler::validate::{host_access, indirect_access, validate};
use pallas_diff_compiler::verdict::{ErrorClass, Rejection, Rule};

/// A case script: `config` is the inside of `helion.Config(...)`, `sig` the parameter list,
/// `body` the kernel body (indented by 4), `tail` the inputs and the call.
pub fn script(config: &str, sig: &str, body: &str, tail: &str) -> String {
    format!(
        "import torch\nimport helion\nimport helion.language as hl\n\n\n\
         @helion.kernel(\n    backend=\"pallas\",\n    static_shapes=True,\n    config=helion.Config({config}),\n)\n\
         def kernel({sig}) -> torch.Tensor:\n{body}\n\n{tail}\n"
    )
}

/// Parses a script (panics with the frontend error: a test bug).
pub fn parse(src: &str) -> Case {
    parse_case(src, "<test>")
        .unwrap_or_else(|e| panic!("frontend refused the test script: {e}\n{src}"))
}

/// The verdict of a case: trace-time validation, the bind-time checks of host slices and
/// indirect accesses (in `compile`'s order), then types and the planner.
pub fn verdict(case: &Case) -> Result<Plan, Rejection> {
    if let Some(r) = validate(case) {
        return Err(r);
    }
    if let Ok(types) = lang::ir::types::infer(case)
        && let Some(r) = host_access(case, &types).or_else(|| indirect_access(case, &types))
    {
        return Err(r);
    }
    plan_case(case)
}

/// Asserts the case is lowered and returns the plan.
#[track_caller]
pub fn assert_lowered(case: &Case) -> Plan {
    match verdict(case) {
        Ok(p) => p,
        Err(r) => panic!("expected lowered, got {r}"),
    }
}

/// Asserts the case is rejected by `rule` (and its class) and returns the rejection.
#[track_caller]
pub fn assert_rejected(case: &Case, rule: Rule) -> Rejection {
    match verdict(case) {
        Ok(_) => panic!("expected rejection by {rule}, got lowered"),
        Err(r) => {
            assert_eq!(r.rule, rule, "wrong rule: {r}");
            r
        }
    }
}

/// Asserts a planner rejection (`BackendUnsupported`) by `rule`.
#[track_caller]
pub fn assert_unsupported(case: &Case, rule: Rule) -> Rejection {
    let r = assert_rejected(case, rule);
    assert_eq!(r.class(), ErrorClass::BackendUnsupported);
    r
}

/// The 1-based line of the first line of `src` containing `needle`.
pub fn line_of(src: &str, needle: &str) -> u32 {
    src.lines()
        .position(|l| l.contains(needle))
        .map(|i| i as u32 + 1)
        .expect("needle in script")
}

/// Every expression of the case, in pre-order (statements in order, loop bounds before bodies).
pub fn all_exprs(case: &Case) -> Vec<&Expr> {
    let mut out = Vec::new();
    stmts(&case.kernel.body, &mut out);
    out
}

/// The expressions whose rendering is exactly `text`, in pre-order.
pub fn exprs_rendered<'c>(case: &'c Case, text: &str) -> Vec<&'c Expr> {
    all_exprs(case)
        .into_iter()
        .filter(|e| render::expr(e) == text)
        .collect()
}

/// The one expression rendered `text` (panics unless exactly one).
#[track_caller]
pub fn expr_rendered<'c>(case: &'c Case, text: &str) -> &'c Expr {
    let found = exprs_rendered(case, text);
    assert_eq!(
        found.len(),
        1,
        "expected one `{text}`, found {}",
        found.len()
    );
    found[0]
}

fn stmts<'c>(body: &'c [Stmt], out: &mut Vec<&'c Expr>) {
    for s in body {
        match &s.kind {
            StmtKind::Assign { value, .. } | StmtKind::AugAssign { value, .. } => expr(value, out),
            StmtKind::Store { indices, value, .. } => {
                index(indices, out);
                expr(value, out);
            }
            StmtKind::Atomic {
                indices,
                expected,
                value,
                ..
            } => {
                index(indices, out);
                if let Some(x) = expected {
                    expr(x, out);
                }
                expr(value, out);
            }
            StmtKind::For(lp) => {
                for d in &lp.dims {
                    for e in d.begin.iter().chain([&d.end]).chain(d.block_size.iter()) {
                        expr(e, out);
                    }
                }
                stmts(&lp.body, out);
            }
            StmtKind::If {
                cond,
                then_body,
                else_body,
            } => {
                expr(cond, out);
                stmts(then_body, out);
                stmts(else_body, out);
            }
            StmtKind::Return(values) => values.iter().for_each(|v| expr(v, out)),
        }
    }
}

fn index<'c>(indices: &'c [Index], out: &mut Vec<&'c Expr>) {
    for i in indices {
        match i {
            Index::Slice { start, stop, step } => [start, stop, step]
                .into_iter()
                .flatten()
                .for_each(|e| expr(e, out)),
            Index::Expr(e) => expr(e, out),
            _ => {}
        }
    }
}

fn expr<'c>(e: &'c Expr, out: &mut Vec<&'c Expr>) {
    out.push(e);
    match &e.kind {
        ExprKind::Size { value, .. }
        | ExprKind::Cast { value, .. }
        | ExprKind::Sum { value, .. }
        | ExprKind::Permute { value, .. } => expr(value, out),
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::Compare { lhs, rhs, .. } => {
            expr(lhs, out);
            expr(rhs, out);
        }
        ExprKind::Load { indices, .. } => index(indices, out),
        ExprKind::Subscript { value, indices } => {
            expr(value, out);
            index(indices, out);
        }
        ExprKind::Arange { start, end, step } => {
            start.iter().for_each(|s| expr(s, out));
            expr(end, out);
            step.iter().for_each(|s| expr(s, out));
        }
        ExprKind::Zeros { shape, .. } => shape.iter().for_each(|d| expr(d, out)),
        ExprKind::Full { shape, value, .. } => {
            shape.iter().for_each(|d| expr(d, out));
            expr(value, out);
        }
        ExprKind::View { value, op } => {
            expr(value, out);
            match op {
                ViewOp::Reshape(d) | ViewOp::View(d) => d.iter().for_each(|x| expr(x, out)),
                ViewOp::ViewAs(o) => expr(o, out),
                _ => {}
            }
        }
        _ => {}
    }
}
