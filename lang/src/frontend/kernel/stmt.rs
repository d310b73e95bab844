//! Statements: assignments (a name binding records what the name denotes), subscript stores,
//! augmented assignments, `hl.store` and the atomics, `hl.tile`/`hl.grid` loops with their
//! bounds, block sizes and variables, `if` branches and `return`, and the block depth limit.

use super::{HostAssert, KernelParser};
use crate::frontend::module::{dotted, stmt_construct};
use crate::frontend::wellformed::{NameKind, assigned_kind, blocks_too_deep, unbound};
use crate::frontend::{FrontendError, MAX_BLOCK_DEPTH};
use crate::ir::{AtomicOp, BinOp, Expr, ExprKind, Loop, LoopDim, LoopKind, Stmt, StmtKind};
use rustpython_parser::ast::{self, Ranged};

impl KernelParser<'_, '_> {
    pub fn parse_body(&mut self, body: &[ast::Stmt]) -> Result<Vec<Stmt>, FrontendError> {
        let mut out = Vec::new();
        for stmt in body {
            if let ast::Stmt::Assign(a) = stmt
                && let [target @ (ast::Expr::Tuple(_) | ast::Expr::List(_))] = a.targets.as_slice()
            {
                self.unpack(stmt, target, &a.value, &mut out)?;
                continue;
            }
            if self.depth == 0 {
                self.root_len = out.len();
            }
            if let Some(s) = self.stmt(stmt)? {
                out.push(s);
            }
        }
        Ok(out)
    }

    /// The comparisons an `assert` condition is the conjunction of: `a == b`, a chain
    /// `a == b == c` (`a == b` and `b == c`), and `and` of those.
    fn assert_terms(&mut self, e: &ast::Expr, out: &mut Vec<Expr>) -> Result<(), FrontendError> {
        match e {
            ast::Expr::BoolOp(b) if matches!(b.op, ast::BoolOp::And) => {
                for v in &b.values {
                    self.assert_terms(v, out)?;
                }
                Ok(())
            }
            ast::Expr::Compare(c) => {
                let mut lhs = &*c.left;
                for (op, rhs) in c.ops.iter().zip(&c.comparators) {
                    let pair = ast::Expr::Compare(ast::ExprCompare {
                        range: c.range,
                        left: Box::new(lhs.clone()),
                        ops: vec![*op],
                        comparators: vec![rhs.clone()],
                    });
                    out.push(self.condition(&pair)?);
                    lhs = rhs;
                }
                Ok(())
            }
            other => Err(self.err(other, "assert", "a case script's `assert` is a comparison of host ints, a chain of them, or `and` of them (`assert x.size(0) == y.size(0)`)")),
        }
    }

    /// `name = value` at `stmt`: binds the name (its kind and static facts) after converting
    /// the value. Inside a device loop, a name the kernel has not bound yet that is a module
    /// global (an input) is refused: Helion's type propagation finds the global, a host
    /// variable, and raises `CannotModifyHostVariableOnDevice` when the script runs, while the
    /// IR has no module globals in the kernel's scope.
    fn bind(
        &mut self,
        node: &impl Ranged,
        target: &str,
        value: Expr,
    ) -> Result<StmtKind, FrontendError> {
        if self.depth > 0
            && !self.names.contains_key(target)
            && self.globals.iter().any(|g| g == target)
        {
            return Err(self.err(
                node,
                "assignment",
                format!("`{target}` is a module global of the script (an input or an import): assigned inside a device loop, Helion raises CannotModifyHostVariableOnDevice; rename the input or the local"),
            ));
        }
        let kind = self.kind_of_assigned(&value);
        let known = self.known_of(&value);
        self.names.insert(target.to_string(), kind);
        self.known.insert(target.to_string(), known);
        Ok(StmtKind::Assign {
            target: target.to_string(),
            value,
        })
    }

    /// `m, n = x.size()` / `m, n = x.shape` (one name per dim of a tensor whose rank is known)
    /// and `a, b = e1, e2` (when no right-hand side reads a target, so that assigning in order
    /// is Python's simultaneous assignment), desugared to one assignment per name.
    fn unpack(
        &mut self,
        stmt: &ast::Stmt,
        target: &ast::Expr,
        value: &ast::Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<(), FrontendError> {
        let (ast::Expr::Tuple(ast::ExprTuple { elts: targets, .. })
        | ast::Expr::List(ast::ExprList { elts: targets, .. })) = target
        else {
            unreachable!("called on tuple and list targets")
        };
        let names = targets
            .iter()
            .map(|t| match t {
                ast::Expr::Name(n) => Ok(n.id.to_string()),
                other => Err(self.err(
                    other,
                    "tuple assignment",
                    "tuple unpacking binds plain names (`m, n = x.size()`)",
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if let ast::Expr::Call(c) = value
            && dotted(&c.func).as_deref() == Some("torch.broadcast_tensors")
        {
            return self.broadcast_in_place(stmt, c, &names);
        }
        let values: Vec<Expr> = match self.size_list(value)? {
            Some(sizes) => sizes,
            None => match value {
                ast::Expr::Tuple(ast::ExprTuple { elts, .. })
                | ast::Expr::List(ast::ExprList { elts, .. }) => {
                    let values = elts
                        .iter()
                        .map(|e| self.expr(e))
                        .collect::<Result<Vec<_>, _>>()?;
                    for (v, node) in values.iter().zip(elts) {
                        let mut read = None;
                        crate::ir::walk::each_expr(v, &mut |x| {
                            // A projection: the name an expression reads directly.
                            let named = if let ExprKind::Name(n) = &x.kind {
                                Some(n.as_str())
                            } else if let ExprKind::Load { tensor, .. } = &x.kind {
                                Some(tensor.as_str())
                            } else if let ExprKind::TileAttr { tile, .. } = &x.kind {
                                Some(tile.as_str())
                            } else {
                                None
                            };
                            if let Some(n) = named.filter(|n| names.iter().any(|t| t == n)) {
                                read.get_or_insert_with(|| n.to_string());
                            }
                        });
                        if let Some(n) = read {
                            return Err(self.err(node, "tuple assignment", format!("`{n}` is read on the right and assigned on the left: assign one name per statement")));
                        }
                    }
                    values
                }
                other => {
                    return Err(self.err(other, "tuple assignment", "tuple unpacking takes the sizes of a tensor (`m, n = x.size()`, `x.shape`) or a tuple of the same length"));
                }
            },
        };
        if values.len() != names.len() {
            return Err(self.err(
                stmt,
                "tuple assignment",
                format!("{} names for {} values", names.len(), values.len()),
            ));
        }
        let span = self.ctx.span(stmt);
        for ((name, node), value) in names.into_iter().zip(targets).zip(values) {
            let kind = self.bind(node, &name, value)?;
            out.push(Stmt::new(kind, span));
        }
        Ok(())
    }

    /// `x, y = torch.broadcast_tensors(x, y)` on the host: each name rebinds to its own
    /// broadcast, which is the tensor itself when the shapes agree ([`HostAssert::same_shape`],
    /// decided on the inputs). Any other form (other targets, a device value) is refused.
    fn broadcast_in_place(
        &mut self,
        stmt: &ast::Stmt,
        c: &ast::ExprCall,
        names: &[String],
    ) -> Result<(), FrontendError> {
        const F: &str = "torch.broadcast_tensors";
        if self.depth > 0 {
            return Err(self.err(
                c,
                F,
                format!("{F} inside a device loop is not part of a case script"),
            ));
        }
        self.no_keywords(c, F)?;
        let operands = c
            .args
            .iter()
            .map(|a| match a {
                ast::Expr::Name(n) => Some(n.id.to_string()),
                _ => None,
            })
            .collect::<Option<Vec<_>>>();
        if operands.as_deref() != Some(names) {
            return Err(self.err(c, F, format!("{F} of a case script rebinds its operands in place (`x, y = {F}(x, y)`), each a host tensor")));
        }
        for n in names {
            if self.names.get(n.as_str()) != Some(&NameKind::HostTensor) {
                return Err(self.err(c, F, format!("{F} of `{n}`, not a host tensor")));
            }
        }
        self.asserts.push(HostAssert {
            span: self.ctx.span(stmt),
            at: self.root_len,
            comparisons: Vec::new(),
            same_shape: names.to_vec(),
        });
        Ok(())
    }

    fn stmt(&mut self, stmt: &ast::Stmt) -> Result<Option<Stmt>, FrontendError> {
        let span = self.ctx.span(stmt);
        let kind = match stmt {
            ast::Stmt::Pass(_) => return Ok(None),
            ast::Stmt::Expr(e) => match &*e.value {
                ast::Expr::Constant(c) if matches!(c.value, ast::Constant::Str(_)) => {
                    return Ok(None);
                }
                ast::Expr::Call(call) => self.call_stmt(call)?,
                other => {
                    return Err(self.err(
                        other,
                        "expression",
                        "a bare expression statement is not part of a case script",
                    ));
                }
            },
            ast::Stmt::Assign(a) => {
                let [target] = a.targets.as_slice() else {
                    return Err(self.err(
                        stmt,
                        "assignment",
                        "chained assignment is not part of a case script",
                    ));
                };
                match target {
                    ast::Expr::Name(n) => {
                        let value = self.expr(&a.value)?;
                        self.bind(target, n.id.as_str(), value)?
                    }
                    ast::Expr::Subscript(sub) => {
                        let tensor = self.host_tensor_name(&sub.value, "store")?;
                        self.require_device(stmt, "subscript store")?;
                        let indices = self.indices(&sub.slice)?;
                        let value = self.expr(&a.value)?;
                        StmtKind::Store {
                            tensor,
                            indices,
                            value,
                            explicit: false,
                        }
                    }
                    ast::Expr::Tuple(_) | ast::Expr::List(_) => {
                        unreachable!("tuple targets are unpacked by parse_body")
                    }
                    other => {
                        return Err(self.err(
                            other,
                            "assignment",
                            "only names and subscripts can be assigned",
                        ));
                    }
                }
            }
            ast::Stmt::AugAssign(a) => {
                let ast::Expr::Name(n) = &*a.target else {
                    return Err(self.err(stmt, "augmented assignment", "augmented assignment updates a name only (write `t[i] = t[i] + v` for a store)"));
                };
                if !self.names.contains_key(n.id.as_str()) {
                    return Err(self.err(&*a.target, "name", unbound(&n.id)));
                }
                let op = match a.op {
                    ast::Operator::Add => BinOp::Add,
                    ast::Operator::Sub => BinOp::Sub,
                    ast::Operator::Mult => BinOp::Mul,
                    _ => {
                        return Err(self.err(
                            stmt,
                            "augmented assignment",
                            "only `+=`, `-=` and `*=` are part of a case script",
                        ));
                    }
                };
                StmtKind::AugAssign {
                    target: n.id.to_string(),
                    op,
                    value: self.expr(&a.value)?,
                }
            }
            ast::Stmt::For(f) => {
                self.enter_block(stmt)?;
                let kind = self.for_stmt(f)?;
                self.blocks -= 1;
                kind
            }
            ast::Stmt::If(i) => {
                self.enter_block(stmt)?;
                self.require_device(stmt, "if")?;
                // `if not c:` (Helion's tests branch on `not flag`) is `if c:` with the
                // branches swapped: one condition form in the IR, the same control flow.
                let (test, negated) = match &*i.test {
                    ast::Expr::UnaryOp(u) if matches!(u.op, ast::UnaryOp::Not) => {
                        (&*u.operand, true)
                    }
                    test => (test, false),
                };
                let cond = self.condition(test)?;
                if !super::super::wellformed::is_condition(&cond, &self.names) {
                    return Err(self.err(test, "if", super::super::wellformed::CONDITION_FORMS));
                }
                let mut then_body = self.parse_body(&i.body)?;
                let mut else_body = self.parse_body(&i.orelse)?;
                if negated {
                    std::mem::swap(&mut then_body, &mut else_body);
                }
                self.blocks -= 1;
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                }
            }
            ast::Stmt::Assert(a) => {
                if self.depth > 0 {
                    return Err(self.err(stmt, "assert", "`assert` inside a device loop is not part of a case script (Helion asserts on the host)"));
                }
                let mut comparisons = Vec::new();
                self.assert_terms(&a.test, &mut comparisons)?;
                self.asserts.push(HostAssert {
                    span,
                    at: self.root_len,
                    comparisons,
                    same_shape: Vec::new(),
                });
                return Ok(None);
            }
            ast::Stmt::Return(r) => {
                if self.depth > 0 {
                    return Err(self.err(
                        stmt,
                        "return",
                        "`return` inside a device loop is not part of a case script",
                    ));
                }
                let values = match r.value.as_deref() {
                    None => Vec::new(),
                    Some(ast::Expr::Tuple(t)) => t
                        .elts
                        .iter()
                        .map(|e| self.expr(e))
                        .collect::<Result<_, _>>()?,
                    Some(e) => vec![self.expr(e)?],
                };
                StmtKind::Return(values)
            }
            other => {
                let construct = stmt_construct(other);
                let what = match construct.as_str() {
                    "while" => "`while` loops are".to_string(),
                    "with" => "`with` blocks are".to_string(),
                    "try" => "`try` blocks are".to_string(),
                    c => format!("`{c}` statements are"),
                };
                return Err(self.err(
                    other,
                    &construct,
                    format!("{what} not part of a case script"),
                ));
            }
        };
        Ok(Some(Stmt::new(kind, span)))
    }

    /// Enters one more loop or branch (`stmt`).
    fn enter_block(&mut self, stmt: &ast::Stmt) -> Result<(), FrontendError> {
        self.blocks += 1;
        if self.blocks > MAX_BLOCK_DEPTH {
            let (construct, message) = blocks_too_deep();
            return Err(self.err(stmt, construct, message));
        }
        Ok(())
    }

    fn kind_of_assigned(&self, value: &Expr) -> NameKind {
        assigned_kind(self.depth, &value.kind)
    }

    fn call_stmt(&mut self, call: &ast::ExprCall) -> Result<StmtKind, FrontendError> {
        let func = dotted(&call.func).unwrap_or_default();
        self.require_device(call, &func)?;
        if func == "hl.store" {
            self.no_keywords(call, "hl.store")?;
            let [t, idx, v] = call.args.as_slice() else {
                return Err(self.err(
                    call,
                    "hl.store",
                    "hl.store takes (tensor, [indices], value)",
                ));
            };
            let tensor = self.host_tensor_name(t, "hl.store")?;
            return Ok(StmtKind::Store {
                tensor,
                indices: self.index_list(idx)?,
                value: self.expr(v)?,
                explicit: true,
            });
        }
        if let Some(op) = func.strip_prefix("hl.").and_then(AtomicOp::from_name) {
            self.no_keywords(call, &func)?;
            let (t, idx, expected, v) = match op {
                AtomicOp::Cas => match call.args.as_slice() {
                    [t, idx, x, v] => (t, idx, Some(x), v),
                    _ => {
                        return Err(self.err(
                            call,
                            &func,
                            "hl.atomic_cas takes (tensor, [indices], expected, value)",
                        ));
                    }
                },
                AtomicOp::Add
                | AtomicOp::And
                | AtomicOp::Max
                | AtomicOp::Min
                | AtomicOp::Or
                | AtomicOp::Xchg
                | AtomicOp::Xor => match call.args.as_slice() {
                    [t, idx, v] => (t, idx, None, v),
                    _ => {
                        return Err(self.err(
                            call,
                            &func,
                            format!("{func} takes (tensor, [indices], value)"),
                        ));
                    }
                },
            };
            let tensor = self.host_tensor_name(t, &func)?;
            let expected = expected.map(|x| self.expr(x)).transpose()?;
            return Ok(StmtKind::Atomic {
                op,
                tensor,
                indices: self.index_list(idx)?,
                expected,
                value: self.expr(v)?,
            });
        }
        Err(self.err(call, if func.is_empty() { "call" } else { &func }, format!("`{func}(...)` as a statement is not part of a case script (hl.store and the hl.atomic_* ops are)")))
    }
}

/// The entries of a list or tuple literal.
fn elts(e: &ast::Expr) -> Option<&[ast::Expr]> {
    match e {
        ast::Expr::List(ast::ExprList { elts, .. })
        | ast::Expr::Tuple(ast::ExprTuple { elts, .. }) => Some(elts.as_slice()),
        _ => None,
    }
}

impl KernelParser<'_, '_> {
    fn for_stmt(&mut self, f: &ast::StmtFor) -> Result<StmtKind, FrontendError> {
        if !f.orelse.is_empty() {
            return Err(self.err(f, "for-else", "`for ... else` is not part of a case script"));
        }
        let ast::Expr::Call(call) = &*f.iter else {
            return Err(self.err(
                &*f.iter,
                "for",
                "device loops iterate `hl.tile(...)` or `hl.grid(...)`",
            ));
        };
        let kind = match dotted(&call.func).as_deref() {
            Some("hl.tile") => LoopKind::Tile,
            Some("hl.grid") => LoopKind::Grid,
            _ => return Err(self.err(&*f.iter, "for", "device loops iterate `hl.tile(...)` or `hl.grid(...)` (Python `range` loops are not part of a case script)")),
        };
        let fname = match kind {
            LoopKind::Tile => "hl.tile",
            LoopKind::Grid => "hl.grid",
        };
        // A whole size list (`hl.tile(out.size())`, `hl.tile(x.shape[1:])`) is the list form
        // over those sizes, desugared here; a tuple of bounds is the list form too.
        // The bounds, converted: a tuple of bounds is the list form, and a whole size list
        // (`hl.tile(out.size())`, `hl.tile(x.shape[1:])`) is the list form over those sizes.
        let (list_form, bounds): (bool, Vec<(Option<Expr>, Expr)>) = match call.args.as_slice() {
            [one] if elts(one).is_none() && self.size_list(one)?.is_some() => {
                let sizes = self.size_list(one)?.unwrap_or_default();
                (true, sizes.into_iter().map(|e| (None, e)).collect())
            }
            [l] if elts(l).is_some() => (
                true,
                self.splice(elts(l).unwrap_or_default())?
                    .into_iter()
                    .map(|e| (None, e))
                    .collect(),
            ),
            [b, e]
                if elts(b)
                    .zip(elts(e))
                    .is_some_and(|(b, e)| b.len() == e.len()) =>
            {
                let b = self.splice(elts(b).unwrap_or_default())?;
                let e = self.splice(elts(e).unwrap_or_default())?;
                if b.len() != e.len() {
                    return Err(self.err(
                        call,
                        fname,
                        format!("{fname}'s begin and end lists differ in length"),
                    ));
                }
                (true, b.into_iter().map(Some).zip(e).collect())
            }
            [end] => (false, vec![(None, self.expr(end)?)]),
            [begin, end] => (false, vec![(Some(self.expr(begin)?), self.expr(end)?)]),
            _ => {
                return Err(self.err(
                    call,
                    fname,
                    format!("{fname} takes (end), (begin, end), or lists of them"),
                ));
            }
        };
        if bounds.is_empty() {
            return Err(self.err(f, fname, format!("{fname}([]) has no dimension to iterate")));
        }
        let mut block_sizes: Vec<Option<Expr>> = vec![None; bounds.len()];
        for kw in &call.keywords {
            match kw.arg.as_ref().map(|a| a.as_str()) {
                Some("block_size") if kind == LoopKind::Tile => {
                    block_sizes = match (elts(&kw.value), list_form) {
                        (Some(l), true) if l.len() == bounds.len() => l
                            .iter()
                            .map(|x| match x {
                                ast::Expr::Constant(c)
                                    if matches!(c.value, ast::Constant::None) =>
                                {
                                    Ok(None)
                                }
                                x => self.expr(x).map(Some),
                            })
                            .collect::<Result<_, _>>()?,
                        (None, false) => vec![Some(self.expr(&kw.value)?)],
                        _ => {
                            return Err(self.err(
                                kw,
                                "block_size",
                                "block_size of a list-form hl.tile is a list of the same length",
                            ));
                        }
                    };
                }
                Some(other) => {
                    return Err(self.err(
                        kw,
                        other,
                        format!("keyword `{other}` of {fname} is not part of a case script"),
                    ));
                }
                None => return Err(self.err(kw, "**", "**kwargs are not part of a case script")),
            }
        }
        self.config_ids += block_sizes.iter().filter(|b| b.is_none()).count();
        let dims: Vec<LoopDim> = bounds
            .into_iter()
            .zip(block_sizes)
            .map(|((begin, end), block_size)| LoopDim {
                begin,
                end,
                block_size,
            })
            .collect();
        let vars: Vec<String> = match &*f.target {
            // One variable over several dims is the tuple of their tiles: one variable per
            // dim, named apart, and the tuple's name spliced where it indexes.
            ast::Expr::Name(n) if dims.len() > 1 && kind == LoopKind::Tile => {
                let parts: Vec<String> = (0..dims.len())
                    .map(|i| {
                        let mut name = format!("{}_{i}", n.id);
                        while self.names.contains_key(&name)
                            || self.globals.contains(&name)
                            || self.tile_tuples.contains_key(&name)
                        {
                            name.push('_');
                        }
                        name
                    })
                    .collect();
                self.tile_tuples.insert(n.id.to_string(), parts.clone());
                self.names.remove(n.id.as_str());
                parts
            }
            ast::Expr::Name(n) => vec![n.id.to_string()],
            ast::Expr::Tuple(t) => t
                .elts
                .iter()
                .map(|x| match x {
                    ast::Expr::Name(n) => Ok(n.id.to_string()),
                    other => Err(self.err(other, "for", "loop variables are plain names")),
                })
                .collect::<Result<_, _>>()?,
            other => return Err(self.err(other, "for", "loop variables are plain names")),
        };
        if vars.len() != dims.len() {
            return Err(self.err(
                &*f.target,
                "for",
                format!(
                    "{} loop variables for a {}-dimensional {fname}",
                    vars.len(),
                    dims.len()
                ),
            ));
        }
        let var_kind = match kind {
            LoopKind::Tile => NameKind::Tile,
            LoopKind::Grid => NameKind::GridIndex,
        };
        for v in &vars {
            self.names.insert(v.clone(), var_kind);
        }
        self.depth += 1;
        let body = self.parse_body(&f.body)?;
        self.depth -= 1;
        Ok(StmtKind::For(Loop {
            kind,
            vars,
            dims,
            list_form,
            body,
        }))
    }
}
