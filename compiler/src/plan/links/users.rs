//! `_effective_users`: the semantic users of a value, found through same-graph references,
//! `_new_var` renames and capture placeholders, in the order of Helion's walk (spec §2.2).

use super::{DefId, GraphId, Links, Parent, Read, Slot, Use, User, addr};
use lang::ir::{Expr, ExprKind, NodeKey, ViewOp};

impl<'a> Links<'a> {
    /// `_effective_users`: the semantic users of the value of `node`, each with the transports
    /// on its path, in the order of Helion's walk (see [`Links::walk_key`]). Shape reads
    /// (`.size(d)`, the `view_as` shape operand) are skipped; name reads reached by exactly
    /// this definition inside its graph are walked through.
    pub fn effective_users(&self, node: &'a Expr) -> Vec<Use<'a>> {
        let mut out = Vec::new();
        self.each_user(node, &mut |user, transports| {
            out.push(Use {
                user,
                transports: transports.to_vec(),
            })
        });
        let from = self.graph_of(node);
        out.sort_by_cached_key(|u| self.walk_key(from, u));
        out
    }

    /// Calls `f` on each semantic user of `node` that [`Links::effective_users`] finds, with
    /// the transports on its path, in discovery order rather than Helion's walk order: for
    /// walks that only need the set of users (the failure walk, spec §2.8), which then pay
    /// for neither the walk keys nor a copy of every path.
    pub fn each_user(&self, node: &'a Expr, f: &mut impl FnMut(User<'a>, &[&'a Expr])) {
        self.collect_users(node, &mut Vec::new(), f, &mut Vec::new());
    }

    /// Calls `f` on each user of the value a definition binds (the reads it reaches), as
    /// [`Links::each_user`] does.
    pub fn each_def_user(&self, d: DefId, f: &mut impl FnMut(User<'a>, &[&'a Expr])) {
        self.collect_def_users(d, &mut Vec::new(), f, &mut Vec::new());
    }

    /// The position of `u` in `_effective_users`' walk from a value in graph `from`
    /// (D-1.5.1-05), as a path compared lexicographically. The walk pops a node off a stack,
    /// appends its direct users in creation order, then pushes its `_new_var` renames (in
    /// creation order) and its capture placeholders (in graph order); so a node's direct
    /// users come first, then its captures, the last graph first, each walked to the end,
    /// then its renames, the last first. Path steps: `(0, order)` a direct user, `(1, -graph
    /// order)` a capture into a child graph, `(2, -order)` a rename.
    fn walk_key(&self, from: GraphId, u: &Use<'a>) -> Vec<(u8, i64)> {
        let mut key = Vec::new();
        let mut current = from;
        for t in &u.transports {
            let g = self.graph_of(t);
            self.capture_path(current, g, &mut key);
            current = g;
            let rename = self
                .info(t)
                .is_some_and(|i| matches!(i.parent, Parent::Stmt(_, Slot::AssignValue)));
            if rename {
                key.push((2, -(self.info(t).map_or(0, |i| i.order) as i64)));
            }
        }
        let (g, order) = match u.user {
            User::Expr { user, .. } => {
                (self.graph_of(user), self.info(user).map_or(0, |i| i.order))
            }
            User::Merge(e) => (current, self.info(e).map_or(0, |i| i.order)),
            User::Stmt(s, _) => (
                current,
                self.stmts.get(&addr(s)).map_or(usize::MAX, |i| i.order),
            ),
        };
        self.capture_path(current, g, &mut key);
        key.push((0, order as i64));
        key
    }

    /// The capture steps from graph `outer` down to graph `inner` nested in it.
    fn capture_path(&self, outer: GraphId, inner: GraphId, key: &mut Vec<(u8, i64)>) {
        let mut chain = Vec::new();
        let mut g = inner;
        while g != outer {
            chain.push(g);
            match self.graphs.get(g).and_then(|x| x.parent) {
                Some(p) => g = p,
                None => return,
            }
        }
        for &c in chain.iter().rev() {
            key.push((1, -(self.graph_order.get(c).copied().unwrap_or(0) as i64)));
        }
    }

    fn collect_users<F: FnMut(User<'a>, &[&'a Expr])>(
        &self,
        node: &'a Expr,
        path: &mut Vec<&'a Expr>,
        f: &mut F,
        seen: &mut Vec<NodeKey>,
    ) {
        let Some(info) = self.info(node) else { return };
        match info.parent {
            Parent::Expr(p) => {
                let shape_read = match &p.kind {
                    ExprKind::Size { .. } => true,
                    ExprKind::View {
                        value,
                        op: ViewOp::ViewAs(_),
                    } => !std::ptr::eq(&**value, node),
                    ExprKind::View {
                        op:
                            ViewOp::Reshape(_)
                            | ViewOp::View(_)
                            | ViewOp::Squeeze(_)
                            | ViewOp::Unsqueeze(_),
                        ..
                    }
                    | ExprKind::Name(_)
                    | ExprKind::Int(_)
                    | ExprKind::Float(_)
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
                    | ExprKind::Op { .. }
                    | ExprKind::Alloc { .. } => false,
                };
                if !shape_read {
                    f(
                        User::Expr {
                            user: p,
                            operand: node,
                        },
                        path,
                    );
                }
            }
            Parent::Stmt(s, Slot::AssignValue) => {
                if let Some(d) = self.def_of(s) {
                    self.collect_def_users(d, path, f, seen);
                }
            }
            Parent::Stmt(s, slot) => f(User::Stmt(s, slot), path),
        }
    }

    fn collect_def_users<F: FnMut(User<'a>, &[&'a Expr])>(
        &self,
        d: DefId,
        path: &mut Vec<&'a Expr>,
        f: &mut F,
        seen: &mut Vec<NodeKey>,
    ) {
        let dg = self.defs[d].graph;
        for r in self.def_users(d) {
            match *r {
                Read::Name(re) => {
                    let g = self.graph_of(re);
                    if self.reaching(re) == [d] && self.within(g, dg) {
                        // A handful of name reads per walk: a Vec beats hashing (and
                        // growing a set from empty) for the walks a planner makes.
                        if !seen.contains(&NodeKey::of(re)) {
                            seen.push(NodeKey::of(re));
                            path.push(re);
                            self.collect_users(re, path, f, seen);
                            path.pop();
                        }
                    } else {
                        f(User::Merge(re), path);
                    }
                }
                Read::Aug(s) => f(User::Stmt(s, Slot::AugTarget), path),
            }
        }
    }
}
