//! Dead device statements, removed before planning as Helion 1.5.1 removes dead nodes
//! (D-1.5.1-15: `DeviceIR.add_graph` runs `graph.eliminate_dead_code()` on every graph, so pure
//! nodes without users (loads, subscripts, views, arithmetic) are gone before the planner sees
//! them). A dead whole-block use is then not "consumed whole", and a dead narrowing subscript is
//! neither planned nor checked; trace-time checks have already run on the whole kernel.
//!
//! A device statement is an assignment inside a `hl.tile`/`hl.grid` loop (host code runs as
//! Python and is never removed). Every assignment value is pure in the kernel language (stores
//! and atomics are statements, not values), so an assignment is dead when nothing else reads
//! its name: only reads by assignments to the same name (`acc = acc + v`) do not keep it, and
//! removal repeats until nothing changes (a value read only by dead statements is dead too).
//! Names are tracked, not FX nodes: a name read anywhere in the kernel keeps every assignment
//! to it, which can keep a node Helion would drop, never the reverse. The last statement of a
//! loop or branch body is kept, so no body becomes empty.

use super::hash::FastSet;
use super::walk::{each_expr, each_stmt, stmt_exprs};
use super::{Case, ExprKind, Stmt, StmtKind};

/// The case without its dead device statements, or `None` when it has none.
pub fn without_dead(case: &Case) -> Option<Case> {
    // Most campaign draws have nothing dead, so a read-only check on borrowed names comes
    // first: cloning the case to find that out was 1.5% of all fuzz CPU, its drop 0.6% and
    // the owned-name sets 2.4% (perf, `fuzz --cases 8000 --seed 0`, issue 19 item 4).
    let read = names_read(&case.kernel.body);
    if !case.kernel.body.iter().any(|s| host_has_dead(s, &read)) {
        return None;
    }
    let mut pruned = case.clone();
    // The first round reads what the check read (the copy is the same program), borrowed from
    // the case; later rounds read the pruned copy, which they change, so they own the names.
    let mut removed = false;
    for stmt in &mut pruned.kernel.body {
        removed |= prune_host(stmt, &|n| read.contains(n));
    }
    while removed {
        let read: FastSet<String> = names_read(&pruned.kernel.body)
            .into_iter()
            .map(str::to_owned)
            .collect();
        removed = false;
        for stmt in &mut pruned.kernel.body {
            removed |= prune_host(stmt, &|n| read.contains(n));
        }
    }
    Some(pruned)
}

/// The names some statement reads, except reads by an assignment to the same name, plus the
/// names a loop carries: a name bound before a loop and assigned in its body is an input of
/// Helion's loop node (the value after zero trips), so the assignment before the loop is used
/// even when the body never reads it (a campaign case: `acc = x_block.float().sum(dim=0)`
/// before `for local in hl.tile(live): acc = x_block[local.begin] * 0.5`, which Helion refuses as
/// consumed whole).
fn names_read(body: &[Stmt]) -> FastSet<&str> {
    // Room for the names of a typical kernel: growing from empty rehashed the set three or
    // four times per call.
    let mut read = FastSet::with_capacity_and_hasher(64, Default::default());
    carried(body, &mut Vec::new(), &mut read);
    each_stmt(body, &mut |stmt| {
        let own = match &stmt.kind {
            StmtKind::Assign { target, .. } | StmtKind::AugAssign { target, .. } => Some(target),
            StmtKind::Store { .. }
            | StmtKind::Atomic { .. }
            | StmtKind::For(_)
            | StmtKind::If { .. }
            | StmtKind::Return(_) => None,
        };
        match &stmt.kind {
            // The written tensor of a store or an atomic is read (it is an alias of a host
            // tensor, or a device value the store updates).
            StmtKind::Store { tensor, .. } | StmtKind::Atomic { tensor, .. } => {
                read.insert(tensor.as_str());
            }
            StmtKind::Assign { .. }
            | StmtKind::AugAssign { .. }
            | StmtKind::For(_)
            | StmtKind::If { .. }
            | StmtKind::Return(_) => {}
        }
        stmt_exprs(stmt, &mut |e| {
            each_expr(e, &mut |e| {
                if let ExprKind::Name(n) = &e.kind
                    && Some(n) != own
                {
                    read.insert(n.as_str());
                }
            })
        });
    });
    read
}

/// Adds to `out` the names a loop of `body` carries: assigned in its body and in `bound`, the
/// names assigned before it (in this body or an enclosing one). `bound` is a stack that each
/// nested body grows (a copy of a set per loop and branch arm was 2.3% of an in-process
/// campaign's CPU, perf, 2026-12-04; a kernel binds a handful of names, so a linear
/// `contains` is cheaper than hashing); what a call pushes is every name `body` assigns,
/// nested bodies included, so a loop reads its body's assigned names off the stack instead of
/// walking the body again (a walk per loop and branch was a third of this module's time,
/// callgrind over the corpus cases).
fn carried<'a>(body: &'a [Stmt], bound: &mut Vec<&'a str>, out: &mut FastSet<&'a str>) {
    for stmt in body {
        match &stmt.kind {
            StmtKind::Assign { target, .. } | StmtKind::AugAssign { target, .. } => {
                bound.push(target.as_str());
            }
            StmtKind::For(lp) => {
                let mark = bound.len();
                carried(&lp.body, bound, out);
                let (before, inner) = bound.split_at(mark);
                out.extend(inner.iter().filter(|n| before.contains(*n)));
            }
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                // An arm does not see the other arm's names; after the branch, both count.
                let mark = bound.len();
                carried(then_body, bound, out);
                let then_names: Vec<&str> = bound.drain(mark..).collect();
                carried(else_body, bound, out);
                bound.extend(then_names);
            }
            StmtKind::Store { .. } | StmtKind::Atomic { .. } | StmtKind::Return(_) => {}
        }
    }
}

/// Whether `prune_host` would remove something under `stmt`, without changing it.
fn host_has_dead(stmt: &Stmt, read: &FastSet<&str>) -> bool {
    match &stmt.kind {
        StmtKind::For(lp) => body_has_dead(&lp.body, read),
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => then_body
            .iter()
            .chain(else_body)
            .any(|s| host_has_dead(s, read)),
        StmtKind::Assign { .. }
        | StmtKind::AugAssign { .. }
        | StmtKind::Store { .. }
        | StmtKind::Atomic { .. }
        | StmtKind::Return(_) => false,
    }
}

/// Whether `prune_body` would remove something from `body` or a body nested in it: a dead
/// assignment in a body of two or more statements (the last one is kept).
fn body_has_dead(body: &[Stmt], read: &FastSet<&str>) -> bool {
    body.iter().any(|s| match &s.kind {
        StmtKind::For(lp) => body_has_dead(&lp.body, read),
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => body_has_dead(then_body, read) || body_has_dead(else_body, read),
        StmtKind::Assign { target, .. } | StmtKind::AugAssign { target, .. } => {
            body.len() > 1 && !read.contains(target.as_str())
        }
        StmtKind::Store { .. } | StmtKind::Atomic { .. } | StmtKind::Return(_) => false,
    })
}

/// Removes the dead assignments of the device loops under the host statement `stmt`.
/// Whether anything was removed.
fn prune_host(stmt: &mut Stmt, read: &dyn Fn(&str) -> bool) -> bool {
    match &mut stmt.kind {
        StmtKind::For(lp) => prune_body(&mut lp.body, read),
        StmtKind::If {
            then_body,
            else_body,
            ..
        } => {
            // A host-level `if` holds host code; one inside a loop is pruned by its loop.
            let mut removed = false;
            for s in then_body.iter_mut().chain(else_body.iter_mut()) {
                removed |= prune_host(s, read);
            }
            removed
        }
        StmtKind::Assign { .. }
        | StmtKind::AugAssign { .. }
        | StmtKind::Store { .. }
        | StmtKind::Atomic { .. }
        | StmtKind::Return(_) => false,
    }
}

/// Removes the dead assignments of a device body and of the bodies nested in it.
fn prune_body(body: &mut Vec<Stmt>, read: &dyn Fn(&str) -> bool) -> bool {
    let mut removed = false;
    for stmt in body.iter_mut() {
        match &mut stmt.kind {
            StmtKind::For(lp) => removed |= prune_body(&mut lp.body, read),
            StmtKind::If {
                then_body,
                else_body,
                ..
            } => {
                removed |= prune_body(then_body, read);
                removed |= prune_body(else_body, read);
            }
            StmtKind::Assign { .. }
            | StmtKind::AugAssign { .. }
            | StmtKind::Store { .. }
            | StmtKind::Atomic { .. }
            | StmtKind::Return(_) => {}
        }
    }
    let dead = |s: &Stmt| match &s.kind {
        StmtKind::Assign { target, .. } | StmtKind::AugAssign { target, .. } => !read(target),
        StmtKind::Store { .. }
        | StmtKind::Atomic { .. }
        | StmtKind::For(_)
        | StmtKind::If { .. }
        | StmtKind::Return(_) => false,
    };
    while let Some(i) = body.iter().position(dead) {
        if body.len() == 1 {
            break;
        }
        body.remove(i);
        removed = true;
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::parse_case;

    fn case(body: &str) -> Case {
        let src = format!(
            "import torch\nimport helion\nimport helion.language as hl\n\n\n\
             @helion.kernel(backend=\"pallas\", static_shapes=True, config=helion.Config(block_sizes=[], pallas_loop_type=\"fori_loop\"))\n\
             def k(x: torch.Tensor):\n    out = torch.zeros([1, 2, 128], dtype=torch.float32)\n\
             \x20   for request in hl.grid(1):\n        acc = hl.zeros([2, 128], dtype=torch.float32)\n\
             {body}\n        out[request, :, :] = acc\n    return out\n\n\nx = torch.ones(8, 2, 128)\nk(x)\n"
        );
        parse_case(&src, "k.py").unwrap_or_else(|e| panic!("{e}\n{src}"))
    }

    fn assigned(c: &Case) -> Vec<String> {
        let mut names = Vec::new();
        each_stmt(&c.kernel.body, &mut |s| {
            if let StmtKind::Assign { target, .. } = &s.kind {
                names.push(target.clone());
            }
        });
        names
    }

    #[test]
    fn unread_device_values_go_transitively_and_nothing_else_does() {
        // dead_view of D-1.5.1-15, plus a value read only by a dead one.
        let c = case(
            "        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            unused = x_block.permute(1, 0, 2)
            twice = unused + unused
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=1):
                acc = acc + x_block[local.begin, :, :]",
        );
        let pruned = without_dead(&c).expect("dead statements");
        assert_eq!(
            assigned(&pruned),
            ["out", "acc", "x_block", "live", "acc"],
            "{pruned:#?}"
        );
        assert!(without_dead(&pruned).is_none(), "a fixpoint");
    }

    #[test]
    fn a_value_a_loop_carries_is_used_but_no_body_is_emptied() {
        // Helion 1.5.1 refuses both nests with "the block is also consumed whole at L17" (the
        // `junk = x_block.sum(dim=0)` line): the loop carries `junk`, whether its body reads it
        // or not. Not carried (no `junk` in the body), the same line is dead and Helion lowers.
        for update in [
            "junk = junk + x_block[local.begin, :, :]",
            "junk = x_block[local.begin, :, :] * 0.5",
        ] {
            let c = case(&format!(
                "        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            junk = x_block.sum(dim=0)
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=1):
                {update}
                acc = acc + x_block[local.begin, :, :]"
            ));
            assert!(without_dead(&c).is_none(), "{update}");
        }
        let c = case(
            "        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            junk = x_block.sum(dim=0)
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=1):
                acc = acc + x_block[local.begin, :, :]",
        );
        let pruned = without_dead(&c).expect("junk is dead");
        assert_eq!(assigned(&pruned), ["out", "acc", "x_block", "live", "acc"]);
        let only = case(
            "        for outer in hl.tile(x.size(0), block_size=4):
            junk = x[outer, :, :].sum(dim=0)",
        );
        assert!(
            without_dead(&only).is_none(),
            "the loop keeps its last statement"
        );
    }
}
