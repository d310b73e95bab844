//! `fixup` makes mutated cases well-formed: drop statements, change constants, shrink shapes,
//! resize block sizes, then fixup → the admissibility validator passes, parse ∘ render is the identity, and the
//! eager reference evaluates the case. It leaves well-formed cases alone.

use lang::frontend::parse_case;
use lang::ir::walk::{each_expr_mut, each_stmt_mut};
use lang::ir::{Case, Ctor, ExprKind, Index, Stmt, StmtKind};
use lang::render::render_case;
use pallas_diff_fuzz::generators::{GenConfig, fixup, generate_from_seed, validate_admissible};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn stmt_count(body: &[Stmt]) -> usize {
    let mut n = 0;
    lang::ir::walk::each_stmt(body, &mut |_| n += 1);
    n
}

/// Removes the `k`-th statement in pre-order.
fn drop_stmt(body: &mut Vec<Stmt>, k: &mut usize) -> bool {
    let mut i = 0;
    while i < body.len() {
        if *k == 0 {
            body.remove(i);
            return true;
        }
        *k -= 1;
        let done = match &mut body[i].kind {
            StmtKind::For(lp) => drop_stmt(&mut lp.body, k),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => drop_stmt(then_body, k) || drop_stmt(else_body, k),
            _ => false,
        };
        if done {
            return true;
        }
        i += 1;
    }
    false
}

fn mutate(case: &mut Case, rng: &mut SmallRng) {
    for _ in 0..rng.gen_range(1..=4) {
        match rng.gen_range(0..5) {
            0 => {
                let n = stmt_count(&case.kernel.body);
                let mut k = rng.gen_range(0..n.max(1));
                drop_stmt(&mut case.kernel.body, &mut k);
            }
            1 => {
                // Change an int constant, in an expression or an index entry.
                let mut exprs = 0usize;
                let target = rng.gen_range(0..40);
                let new = rng.gen_range(-4..20);
                each_stmt_mut(&mut case.kernel.body, &mut |s| {
                    let mut visit = |e: &mut lang::ir::Expr| {
                        each_expr_mut(e, &mut |x| match &mut x.kind {
                            ExprKind::Int(v) => {
                                if exprs == target {
                                    *v = new;
                                }
                                exprs += 1;
                            }
                            ExprKind::Subscript { indices, .. }
                            | ExprKind::Load { indices, .. } => {
                                for i in indices.iter_mut() {
                                    if let Index::Int(v) = i {
                                        if exprs == target {
                                            *v = new;
                                        }
                                        exprs += 1;
                                    }
                                }
                            }
                            _ => {}
                        })
                    };
                    match &mut s.kind {
                        StmtKind::Assign { value, .. } | StmtKind::AugAssign { value, .. } => {
                            visit(value)
                        }
                        StmtKind::For(lp) => {
                            for d in &mut lp.dims {
                                visit(&mut d.end);
                                if let Some(b) = &mut d.begin {
                                    visit(b);
                                }
                            }
                        }
                        StmtKind::If { cond, .. } => visit(cond),
                        _ => {}
                    }
                });
            }
            2 => {
                // Shrink an input: a smaller tensor of the same rank and dtype.
                let i = rng.gen_range(0..case.inputs.len());
                let input = &mut case.inputs[i];
                let (_, mut shape) = input
                    .dtype_and_shape()
                    .unwrap_or((lang::ir::DType::Float32, vec![1]));
                let d = rng.gen_range(0..shape.len());
                shape[d] = rng.gen_range(1..=shape[d].max(1));
                input.ctor = if rng.gen_bool(0.5) {
                    Ctor::Ones { shape }
                } else {
                    Ctor::Randn { shape }
                };
                input.chain.clear();
                if input.dtype == Some(lang::ir::DType::Int32) {
                    input.ctor = Ctor::Ones {
                        shape: input.ctor.shape(),
                    };
                }
            }
            3 => {
                // Block sizes: wrong length or out of range.
                let b = &mut case.config.block_sizes;
                match rng.gen_range(0..3) {
                    0 => b.push(rng.gen_range(-2..9)),
                    1 => {
                        b.pop();
                    }
                    _ => {
                        if let Some(x) = b.first_mut() {
                            *x = rng.gen_range(-2..9);
                        }
                    }
                }
            }
            _ => {
                // Poison an input.
                let i = rng.gen_range(0..case.inputs.len());
                let shape = case.inputs[i].ctor.shape();
                case.inputs[i].ctor = Ctor::Empty { shape };
            }
        }
    }
}

fn assert_well_formed(case: &Case, what: &str) {
    if let Err(f) = validate_admissible(case) {
        panic!("{what}: fixup left a flaw: {f}\n{}", render_case(case));
    }
    let text = render_case(case);
    let back = parse_case(&text, "fixed.py").unwrap_or_else(|e| panic!("{what}: {e}\n{text}"));
    assert_eq!(
        back.without_spans(),
        case.without_spans(),
        "{what}: round trip\n{text}"
    );
    if let Err(e) = oracle::evaluate(case) {
        panic!("{what}: the reference refuses the fixed case: {e}\n{text}");
    }
}

#[test]
fn fixup_repairs_mutated_cases() {
    let cfg = GenConfig::default();
    let mut rng = SmallRng::seed_from_u64(11);
    let mut kept = 0;
    // More seeds for a local soak: PALLAS_DIFF_FIXUP_SEEDS=5000.
    let seeds: u64 = std::env::var("PALLAS_DIFF_FIXUP_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    for seed in 0..seeds {
        let mut case = generate_from_seed(seed, &cfg);
        let before = stmt_count(&case.kernel.body);
        mutate(&mut case, &mut rng);
        fixup(&mut case);
        assert_well_formed(&case, &format!("seed {seed}"));
        kept += stmt_count(&case.kernel.body) * 100 / before.max(1);
    }
    // Repairs remove only what they must: most of the kernel survives on average.
    let kept = kept / seeds as usize;
    assert!(
        kept > 50,
        "fixup kept only {kept}% of statements on average"
    );
}

#[test]
fn fixup_leaves_well_formed_cases_alone() {
    let cfg = GenConfig::default();
    for seed in 0..300 {
        let case = generate_from_seed(seed, &cfg);
        let mut fixed = case.clone();
        fixup(&mut fixed);
        assert_eq!(fixed, case, "seed {seed}");
    }
}

#[test]
fn fixup_repairs_named_breakages() {
    let base = generate_from_seed(5, &GenConfig::default());
    // Block sizes of the wrong length and below 1.
    let mut c = base.clone();
    c.config.block_sizes = vec![0, -3, 7, 7, 7, 7];
    fixup(&mut c);
    assert_well_formed(&c, "block sizes");
    assert_eq!(
        c.config.block_sizes.len(),
        lang::ir::blocks::BlockTable::of(&c.kernel).config_count()
    );
    // A poison input.
    let mut c = base.clone();
    let shape = c.inputs[0].ctor.shape();
    c.inputs[0].ctor = Ctor::Empty { shape };
    c.inputs[0].chain.clear();
    fixup(&mut c);
    assert_well_formed(&c, "poison input");
    assert!(!matches!(c.inputs[0].ctor, Ctor::Empty { .. }));
    // A read of a name that is never bound.
    let mut c = base.clone();
    c.kernel.body.insert(
        c.kernel.body.len() - 1,
        Stmt::new(
            StmtKind::Assign {
                target: "ghost".into(),
                value: lang::ir::Expr::name("nowhere", Default::default()),
            },
            Default::default(),
        ),
    );
    assert!(validate_admissible(&c).is_err());
    fixup(&mut c);
    assert_well_formed(&c, "unbound name");
    // Nothing valid left: a small valid case replaces it.
    let mut c = base.clone();
    c.kernel.body.clear();
    c.kernel.params.clear();
    c.call.args.clear();
    fixup(&mut c);
    assert_well_formed(&c, "empty kernel");
}
