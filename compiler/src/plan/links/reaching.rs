//! Pass 2 of [`Links::build`], reaching definitions, and the queries that read them:
//! which definitions reach a name read, how the read gets its value, `_resolve_node`, and the
//! reads each definition reaches.

use super::{DefId, DefKind, FastMap, Links, Read, ReadOrigin, addr};
use lang::ir::{Expr, ExprKind, Loop, NodeKey, Stmt, StmtKind};

/// Working state of the flow pass.
#[derive(Default)]
pub(super) struct Flow {
    /// Spare environments for branches and loop bodies.
    pool: Vec<Env>,
    /// Per loop (by address): the definitions its body makes that reach its end.
    made: FastMap<usize, Env>,
}

/// Reaching definitions as a flat bitset: `words` u64 per slot (an interned name, or a read).
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Env {
    words: usize,
    bits: Vec<u64>,
}

impl Env {
    pub(super) fn new(slots: usize, defs: usize) -> Env {
        let words = defs.div_ceil(64).max(1);
        Env {
            words,
            bits: vec![0; slots * words],
        }
    }
    fn slot(&self, slot: usize) -> std::ops::Range<usize> {
        let s = slot * self.words;
        s..s + self.words
    }
    pub(super) fn set(&mut self, name: u32, def: DefId) {
        let r = self.slot(name as usize);
        if let Some(w) = self.bits.get_mut(r) {
            w.fill(0);
            if let Some(x) = w.get_mut(def / 64) {
                *x |= 1 << (def % 64);
            }
        }
    }
    fn join(&mut self, other: &Env) {
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a |= b;
        }
    }
    /// A copy of `self`, in a buffer of `pool` when there is one (flow's environments are
    /// all the same size: cloning one per branch and loop pass was most of its allocations).
    fn copy_in(&self, pool: &mut Vec<Env>) -> Env {
        match pool.pop() {
            Some(mut e) if e.bits.len() == self.bits.len() => {
                e.bits.copy_from_slice(&self.bits);
                e
            }
            Some(_) | None => self.clone(),
        }
    }
    /// Appends the definitions in `slot`, ascending.
    pub(super) fn push_defs(&self, slot: usize, out: &mut Vec<DefId>) {
        if let Some(w) = self.bits.get(self.slot(slot)) {
            for (i, &word) in w.iter().enumerate() {
                let mut x = word;
                while x != 0 {
                    out.push(i * 64 + x.trailing_zeros() as usize);
                    x &= x - 1;
                }
            }
        }
    }
}

impl<'a> Links<'a> {
    /// Pass 2: reaching definitions, recorded per read into `reach` (when given).
    ///
    /// A loop's entry is the fixpoint of `entry = before ∪ body(entry)` (a definition late in
    /// the body reaches reads early in it: a loop-carried value). Every statement acts on each
    /// name on its own, as `out = gen ∪ (in if it can pass through)`, and so does a body; the
    /// fixpoint is therefore `before ∪ body(∅)`: the entry with the definitions the body makes
    /// that reach its end ([`Links::body_defs`], once per loop). One walk of the body then
    /// records its reads. Iterating the body to the fixpoint walked a body nested `d` loops
    /// deep `2^d` times: ~30M instructions of a 2,000-case campaign (callgrind).
    pub(super) fn flow(
        &self,
        body: &'a [Stmt],
        env: &mut Env,
        mut reach: Option<&mut Env>,
        st: &mut Flow,
    ) {
        for stmt in body {
            let Some(info) = self.stmts.get(&addr(stmt)) else {
                continue;
            };
            if let Some(reach) = reach.as_deref_mut() {
                for &r in &self.stmt_reads[info.reads.clone()] {
                    let (src, dst) = (env.slot(self.reads[r].name as usize), reach.slot(r));
                    if let (Some(s), Some(d)) = (env.bits.get(src), reach.bits.get_mut(dst)) {
                        d.copy_from_slice(s);
                    }
                }
            }
            match &stmt.kind {
                StmtKind::Assign { .. } | StmtKind::AugAssign { .. } => {
                    if let Some(d) = info.def {
                        env.set(info.name, d);
                    }
                }
                StmtKind::Store { .. } | StmtKind::Atomic { .. } | StmtKind::Return(_) => {}
                StmtKind::For(lp) => {
                    let mut entry = env.copy_in(&mut st.pool);
                    if let Some(first) = info.def {
                        for (k, &name) in self.loop_var_names[info.vars.clone()].iter().enumerate()
                        {
                            entry.set(name, first + k);
                        }
                    }
                    self.body_defs(lp, env, st);
                    if let Some(made) = st.made.get(&addr(lp)) {
                        entry.join(made);
                    }
                    if let Some(reach) = reach.as_deref_mut() {
                        let mut out = entry.copy_in(&mut st.pool);
                        self.flow(&lp.body, &mut out, Some(reach), st);
                        st.pool.push(out);
                    }
                    env.join(&entry);
                    st.pool.push(entry);
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    let mut te = env.copy_in(&mut st.pool);
                    self.flow(then_body, &mut te, reach.as_deref_mut(), st);
                    self.flow(else_body, env, reach.as_deref_mut(), st);
                    env.join(&te);
                    st.pool.push(te);
                }
            }
        }
    }

    /// Computes (once) the definitions the body of `lp` makes that reach its end, into
    /// `st.made`; `like` is any environment of the pass (for the size).
    fn body_defs(&self, lp: &'a Loop, like: &Env, st: &mut Flow) {
        if st.made.contains_key(&addr(lp)) {
            return;
        }
        let mut made = like.copy_in(&mut st.pool);
        made.bits.fill(0);
        self.flow(&lp.body, &mut made, None, st);
        st.made.insert(addr(lp), made);
    }

    /// The reaching definitions of a name read.
    pub fn reaching(&self, name_read: &Expr) -> &[DefId] {
        self.info(name_read)
            .and_then(|i| i.read)
            .and_then(|r| {
                let (&from, &to) = (self.reach_at.get(r)?, self.reach_at.get(r + 1)?);
                self.reach.get(from..to)
            })
            .unwrap_or(&[])
    }

    /// How a name read gets its value.
    pub fn read_origin(&self, name_read: &Expr) -> ReadOrigin<'a> {
        let g = self.graph_of(name_read);
        let ds = self.reaching(name_read);
        if ds
            .iter()
            .any(|&d| self.defs[d].graph != g && self.within(g, self.defs[d].graph))
        {
            return ReadOrigin::Placeholder;
        }
        match ds {
            [d] if self.defs[*d].graph == g => ReadOrigin::Same(self.defs[*d]),
            _ => ReadOrigin::Merge,
        }
    }

    /// `_resolve_node`: follows name reads with one reaching `name = value` definition (same
    /// graph, `_new_var` rename or capture placeholder) to the defining value; stops at the first
    /// other node. Cycles stop the walk (never loop).
    pub fn resolve(&self, mut e: &'a Expr) -> &'a Expr {
        let mut seen: Vec<NodeKey> = Vec::new();
        while let ExprKind::Name(_) = &e.kind {
            if seen.contains(&NodeKey::of(e)) || seen.len() > 256 {
                break;
            }
            seen.push(NodeKey::of(e));
            let g = self.graph_of(e);
            match self.reaching(e) {
                [d] => match self.defs[*d].kind {
                    DefKind::Assign(value) if self.within(g, self.defs[*d].graph) => e = value,
                    DefKind::Assign(_) | DefKind::Aug | DefKind::LoopVar | DefKind::Param => {
                        break;
                    }
                },
                _ => break,
            }
        }
        e
    }

    /// The reads a definition reaches, in evaluation order.
    pub fn def_users(&self, d: DefId) -> &[Read<'a>] {
        match (self.def_users_at.get(d), self.def_users_at.get(d + 1)) {
            (Some(&from), Some(&to)) => self.def_users.get(from..to).unwrap_or(&[]),
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lang::ir::Case;

    /// The reaching definitions of every read by iterating each loop body to its fixpoint
    /// (the definition [`Links::flow`] shortcuts).
    fn iterated(l: &Links<'_>, body: &[Stmt], env: &mut Env, reach: &mut Env) {
        for stmt in body {
            let Some(info) = l.stmts.get(&addr(stmt)) else {
                continue;
            };
            for &r in &l.stmt_reads[info.reads.clone()] {
                let (src, dst) = (env.slot(l.reads[r].name as usize), reach.slot(r));
                reach.bits[dst].copy_from_slice(&env.bits[src]);
            }
            match &stmt.kind {
                StmtKind::Assign { .. } | StmtKind::AugAssign { .. } => {
                    if let Some(d) = info.def {
                        env.set(info.name, d);
                    }
                }
                StmtKind::Store { .. } | StmtKind::Atomic { .. } | StmtKind::Return(_) => {}
                StmtKind::For(lp) => {
                    let mut entry = env.clone();
                    if let Some(first) = info.def {
                        for (k, &name) in l.loop_var_names[info.vars.clone()].iter().enumerate() {
                            entry.set(name, first + k);
                        }
                    }
                    loop {
                        let mut out = entry.clone();
                        iterated(l, &lp.body, &mut out, reach);
                        let mut next = entry.clone();
                        next.join(&out);
                        if next == entry {
                            break;
                        }
                        entry = next;
                    }
                    env.join(&entry);
                }
                StmtKind::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    let mut te = env.clone();
                    iterated(l, then_body, &mut te, reach);
                    iterated(l, else_body, env, reach);
                    env.join(&te);
                }
            }
        }
    }

    fn check(case: &Case, what: &str) {
        let l = Links::build(case);
        let mut env = Env::new(l.names.len(), l.defs.len());
        for (d, def) in l.defs.iter().enumerate() {
            if let DefKind::Param = def.kind {
                let name = l.names[case.kernel.params[d].name.as_str()];
                env.set(name, d);
            }
        }
        let mut reach = Env::new(l.reads.len(), l.defs.len());
        iterated(&l, &case.kernel.body, &mut env, &mut reach);
        for r in 0..l.reads.len() {
            let mut want = Vec::new();
            reach.push_defs(r, &mut want);
            assert_eq!(
                &l.reach[l.reach_at[r]..l.reach_at[r + 1]],
                want.as_slice(),
                "{what}: read {r}"
            );
        }
    }

    #[test]
    fn one_walk_per_loop_reaches_what_iterating_to_the_fixpoint_does() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
        let mut checked = 0;
        for dir in ["cases", "spec-kernels"] {
            let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "py"))
                .collect();
            paths.sort();
            for path in paths {
                let src = std::fs::read_to_string(&path).unwrap();
                let Ok(case) = lang::frontend::parse_case(&src, &path.display().to_string()) else {
                    continue;
                };
                check(&case, &path.display().to_string());
                checked += 1;
            }
        }
        assert!(checked > 50, "only {checked} corpus cases parsed");
        // Loop-carried values through nested loops and branches, definitions late in a body.
        let src = "import torch\nimport helion\nimport helion.language as hl\n\n\n\
            @helion.kernel(backend=\"pallas\", static_shapes=True, config=helion.Config(block_sizes=[2, 2]))\n\
            def k(x: torch.Tensor):\n\
            \x20   out = torch.zeros([2, 128], dtype=torch.float32)\n\
            \x20   for g in hl.grid(1):\n\
            \x20       acc = hl.zeros([2, 128], dtype=torch.float32)\n\
            \x20       b = acc\n\
            \x20       c = acc\n\
            \x20       for outer in hl.tile(x.size(0)):\n\
            \x20           a = b\n\
            \x20           for inner in hl.tile(4):\n\
            \x20               if inner.begin >= 2:\n\
            \x20                   c = acc\n\
            \x20               else:\n\
            \x20                   acc = c + a\n\
            \x20               b = acc\n\
            \x20           acc = acc + a\n\
            \x20       out[:, :] = acc + b\n\
            \x20   return out\n\n\
            x = torch.ones(8, 2, 128)\nk(x)\n";
        let case = lang::frontend::parse_case(src, "<nested>").unwrap();
        check(&case, "<nested>");
    }
}
