//! Branches that update the accumulator: a one-armed one (which Helion 1.5.1 cannot run, known
//! issue `helion-branch-carried-unbound-local`) appears at about `one-armed-branch-percent` of
//! them, and the knob turns it off and up; otherwise the other arm reassigns `acc` unchanged.

use lang::ir::{Case, Stmt, StmtKind, walk};
use pallas_diff_fuzz::generators::{GenConfig, generate_from_seed};

/// Whether a body assigns the accumulator (at its top level: the generator puts the update
/// there).
fn assigns_acc(body: &[Stmt]) -> bool {
    body.iter().any(|s| match &s.kind {
        StmtKind::Assign { target, .. } | StmtKind::AugAssign { target, .. } => target == "acc",
        StmtKind::For(_)
        | StmtKind::If { .. }
        | StmtKind::Store { .. }
        | StmtKind::Atomic { .. }
        | StmtKind::Return(_) => false,
    })
}

/// (branches that update `acc` in some arm, of those the ones with an arm that does not).
fn branch_arms(case: &Case) -> (usize, usize) {
    let (mut updating, mut one_armed) = (0, 0);
    walk::each_stmt(&case.kernel.body, &mut |s| {
        if let StmtKind::If {
            then_body,
            else_body,
            ..
        } = &s.kind
        {
            let (t, e) = (assigns_acc(then_body), assigns_acc(else_body));
            if t || e {
                updating += 1;
                if t != e {
                    one_armed += 1;
                }
            }
        }
    });
    (updating, one_armed)
}

fn one_armed_share(percent: u8, n: u64) -> (usize, usize) {
    let cfg = GenConfig {
        one_armed_branch_percent: percent,
        ..GenConfig::default()
    };
    (0..n)
        .map(|seed| branch_arms(&generate_from_seed(seed, &cfg)))
        .fold((0, 0), |(a, b), (u, o)| (a + u, b + o))
}

#[test]
fn one_armed_branches_follow_their_knob() {
    let n = 4_000;
    let (updating, one_armed) = one_armed_share(GenConfig::default().one_armed_branch_percent, n);
    assert!(updating > 500, "{updating} updating branches in {n} cases");
    let share = one_armed as f64 / updating as f64;
    eprintln!("default: {one_armed} of {updating} updating branches are one-armed");
    // 15% drawn for the branches whose other arm is not already a tile-attribute update.
    assert!((0.05..0.2).contains(&share), "default: {share:.3}");

    let (updating, one_armed) = one_armed_share(0, n);
    assert!(updating > 500);
    assert_eq!(one_armed, 0, "knob 0 leaves no one-armed branch");

    let (updating, one_armed) = one_armed_share(100, n);
    let share = one_armed as f64 / updating as f64;
    assert!(share > 0.4, "knob 100: {one_armed} of {updating}");
}
