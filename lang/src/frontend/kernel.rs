//! The kernel body: statements and expressions of the case-script subset, to IR.
//!
//! The parser tracks what each name denotes (a host tensor, a host int, a tile, a grid index, a
//! device value) because Python spells a host-tensor load and a device subscript the same way:
//! `x[outer, :]` on a host tensor is an `hl.load`, `x_block[1]` on a device value is an
//! `hl.subscript` (Helion's `visit_Subscript` makes the same distinction).

use super::module::{Ctx, dotted, literal_int, literal_number, stmt_construct};
use super::wellformed::{NameKind, assigned_kind, blocks_too_deep, expr_too_deep, unbound};
use super::{FrontendError, MAX_BLOCK_DEPTH, MAX_EXPR_DEPTH};
use crate::ir::hash::FastMap;
use crate::ir::{
    AllocKind, AllocShape, AtomicOp, BinOp, CmpOp, DType, Expr, ExprKind, Index, Loop, LoopDim,
    LoopKind, Param, ParamKind, Stmt, StmtKind, TileAttr, ViewOp,
};
use rustpython_parser::ast::{self, Ranged};

pub(crate) struct KernelParser<'c, 's> {
    ctx: &'c Ctx<'s>,
    names: FastMap<String, NameKind>,
    /// Enclosing device loops.
    depth: usize,
    /// Enclosing loops and branches ([`MAX_BLOCK_DEPTH`]).
    blocks: usize,
    /// Nesting of the expression being converted ([`MAX_EXPR_DEPTH`]): one per IR node, as
    /// [`super::wellformed`] counts it, so both readers refuse the same cases.
    expr_depth: usize,
}

/// `torch.float32` / `torch.bfloat16` / `torch.int32`.
pub(crate) fn dtype_of(ctx: &Ctx<'_>, e: &ast::Expr) -> Result<DType, FrontendError> {
    match dotted(e).as_deref() {
        Some("torch.float32") => Ok(DType::Float32),
        Some("torch.bfloat16") => Ok(DType::Bfloat16),
        Some("torch.int32") => Ok(DType::Int32),
        other => Err(ctx.err(
            e,
            "dtype",
            format!(
                "dtype `{}` is not part of a case script (torch.float32, torch.bfloat16, torch.int32)",
                other.unwrap_or("<expression>")
            ),
        )),
    }
}

/// The Python name of an expression kind, for messages. Named per variant rather than from the
/// `Debug` form: formatting a whole expression recurses over all of it.
fn expr_construct(e: &ast::Expr) -> String {
    let name = match e {
        ast::Expr::Lambda(_) => "lambda",
        ast::Expr::IfExp(_) => "conditional expression",
        ast::Expr::ListComp(_)
        | ast::Expr::SetComp(_)
        | ast::Expr::DictComp(_)
        | ast::Expr::GeneratorExp(_) => "comprehension",
        ast::Expr::BoolOp(_) => "and/or",
        ast::Expr::Dict(_) => "dict",
        ast::Expr::JoinedStr(_) | ast::Expr::FormattedValue(_) => "f-string",
        ast::Expr::Starred(_) => "starred expression",
        ast::Expr::NamedExpr(_) => ":=",
        ast::Expr::BinOp(_) => "binop",
        ast::Expr::UnaryOp(_) => "unaryop",
        ast::Expr::Set(_) => "set",
        ast::Expr::Await(_) => "await",
        ast::Expr::Yield(_) => "yield",
        ast::Expr::YieldFrom(_) => "yieldfrom",
        ast::Expr::Compare(_) => "compare",
        ast::Expr::Call(_) => "call",
        ast::Expr::Constant(_) => "constant",
        ast::Expr::Attribute(_) => "attribute",
        ast::Expr::Subscript(_) => "subscript",
        ast::Expr::Name(_) => "name",
        ast::Expr::List(_) => "list",
        ast::Expr::Tuple(_) => "tuple",
        ast::Expr::Slice(_) => "slice",
    };
    name.into()
}

impl<'c, 's> KernelParser<'c, 's> {
    pub fn new(ctx: &'c Ctx<'s>, params: &[Param]) -> Self {
        let names = params
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    match p.kind {
                        ParamKind::Tensor => NameKind::HostTensor,
                        ParamKind::Int => NameKind::HostInt,
                    },
                )
            })
            .collect();
        KernelParser {
            ctx,
            names,
            depth: 0,
            blocks: 0,
            expr_depth: 0,
        }
    }

    fn err(
        &self,
        node: &impl Ranged,
        construct: &str,
        message: impl Into<String>,
    ) -> FrontendError {
        self.ctx.err(node, construct, message)
    }

    pub fn parse_body(&mut self, body: &[ast::Stmt]) -> Result<Vec<Stmt>, FrontendError> {
        let mut out = Vec::new();
        for stmt in body {
            if let Some(s) = self.stmt(stmt)? {
                out.push(s);
            }
        }
        Ok(out)
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
                        let kind = self.kind_of_assigned(&value);
                        self.names.insert(n.id.to_string(), kind);
                        StmtKind::Assign {
                            target: n.id.to_string(),
                            value,
                        }
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
                        return Err(self.err(target, "tuple assignment", "tuple unpacking is not part of a case script; assign one name per statement"));
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
                let cond = self.expr(&i.test)?;
                if !matches!(cond.kind, ExprKind::Compare { .. }) {
                    return Err(self.err(&*i.test, "if", "an `if` condition is one comparison of device scalars (e.g. `if live >= 3:`)"));
                }
                let then_body = self.parse_body(&i.body)?;
                let else_body = self.parse_body(&i.orelse)?;
                self.blocks -= 1;
                StmtKind::If {
                    cond,
                    then_body,
                    else_body,
                }
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

    fn require_device(&self, node: &impl Ranged, construct: &str) -> Result<(), FrontendError> {
        if self.depth == 0 {
            return Err(self.err(node, construct, format!("{construct} outside any hl.tile/hl.grid loop is host code, which a case script does not have")));
        }
        Ok(())
    }

    fn kind_of_assigned(&self, value: &Expr) -> NameKind {
        assigned_kind(self.depth, &value.kind)
    }

    fn host_tensor_name(&self, e: &ast::Expr, construct: &str) -> Result<String, FrontendError> {
        match e {
            ast::Expr::Name(n) if self.names.get(n.id.as_str()) == Some(&NameKind::HostTensor) => Ok(n.id.to_string()),
            _ => Err(self.err(e, construct, format!("a {construct} writes a host tensor (a kernel parameter or a host allocation) by name"))),
        }
    }

    fn call_stmt(&mut self, call: &ast::ExprCall) -> Result<StmtKind, FrontendError> {
        let func = dotted(&call.func).unwrap_or_default();
        self.require_device(call, &func)?;
        if func == "hl.store" {
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
            let (t, idx, expected, v) = match (op, call.args.as_slice()) {
                (AtomicOp::Cas, [t, idx, x, v]) => (t, idx, Some(x), v),
                (AtomicOp::Cas, _) => {
                    return Err(self.err(
                        call,
                        &func,
                        "hl.atomic_cas takes (tensor, [indices], expected, value)",
                    ));
                }
                (_, [t, idx, v]) => (t, idx, None, v),
                _ => {
                    return Err(self.err(
                        call,
                        &func,
                        format!("{func} takes (tensor, [indices], value)"),
                    ));
                }
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
        let (list_form, begins, ends): (bool, Vec<Option<&ast::Expr>>, Vec<&ast::Expr>) =
            match call.args.as_slice() {
                [ast::Expr::List(l)] => (true, vec![None; l.elts.len()], l.elts.iter().collect()),
                [ast::Expr::List(b), ast::Expr::List(e)] if b.elts.len() == e.elts.len() => (
                    true,
                    b.elts.iter().map(Some).collect(),
                    e.elts.iter().collect(),
                ),
                [end] => (false, vec![None], vec![end]),
                [begin, end] => (false, vec![Some(begin)], vec![end]),
                _ => {
                    return Err(self.err(
                        call,
                        fname,
                        format!("{fname} takes (end), (begin, end), or lists of them"),
                    ));
                }
            };
        if ends.is_empty() {
            return Err(self.err(f, fname, format!("{fname}([]) has no dimension to iterate")));
        }
        let mut block_sizes: Vec<Option<Expr>> = vec![None; ends.len()];
        for kw in &call.keywords {
            match kw.arg.as_ref().map(|a| a.as_str()) {
                Some("block_size") if kind == LoopKind::Tile => {
                    block_sizes =
                        match (&kw.value, list_form) {
                            (ast::Expr::List(l), true) if l.elts.len() == ends.len() => l
                                .elts
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
                            (v, false) => vec![Some(self.expr(v)?)],
                            _ => return Err(self.err(
                                kw,
                                "block_size",
                                "block_size of a list-form hl.tile is a list of the same length",
                            )),
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
        let dims: Vec<LoopDim> = begins
            .into_iter()
            .zip(ends)
            .zip(block_sizes)
            .map(|((b, e), block_size)| {
                Ok(LoopDim {
                    begin: b.map(|b| self.expr(b)).transpose()?,
                    end: self.expr(e)?,
                    block_size,
                })
            })
            .collect::<Result<_, FrontendError>>()?;
        let vars: Vec<String> = match &*f.target {
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

    fn index_list(&mut self, e: &ast::Expr) -> Result<Vec<Index>, FrontendError> {
        match e {
            ast::Expr::List(l) => l.elts.iter().map(|x| self.list_entry(x)).collect(),
            other => Err(self.err(
                other,
                "index list",
                "the index argument is a list literal, e.g. [tile, 0]",
            )),
        }
    }

    /// An entry of an `hl.load`/`hl.store`/atomic index list, where Python has no `:` syntax:
    /// `slice(None)` is `:`, `slice(a, b[, s])` a slice, anything else as in a subscript.
    fn list_entry(&mut self, e: &ast::Expr) -> Result<Index, FrontendError> {
        let ast::Expr::Call(c) = e else {
            return self.index_entry(e);
        };
        if dotted(&c.func).as_deref() != Some("slice") {
            return self.index_entry(e);
        }
        if !c.keywords.is_empty() {
            return Err(self.err(e, "slice", "slice(...) takes positional arguments"));
        }
        let mut part = |x: &ast::Expr| -> Result<Option<Expr>, FrontendError> {
            match x {
                ast::Expr::Constant(k) if matches!(k.value, ast::Constant::None) => Ok(None),
                x => self.expr(x).map(Some),
            }
        };
        let (start, stop, step) = match c.args.as_slice() {
            [stop] => (None, part(stop)?, None),
            [a, b] => (part(a)?, part(b)?, None),
            [a, b, st] => (part(a)?, part(b)?, part(st)?),
            _ => return Err(self.err(e, "slice", "slice takes 1 to 3 arguments")),
        };
        Ok(match (&start, &stop, &step) {
            (None, None, None) => Index::Full,
            _ => Index::Slice { start, stop, step },
        })
    }

    fn indices(&mut self, slice: &ast::Expr) -> Result<Vec<Index>, FrontendError> {
        match slice {
            ast::Expr::Tuple(t) => t.elts.iter().map(|x| self.index_entry(x)).collect(),
            single => Ok(vec![self.index_entry(single)?]),
        }
    }

    fn index_entry(&mut self, e: &ast::Expr) -> Result<Index, FrontendError> {
        match e {
            ast::Expr::Constant(c) if matches!(c.value, ast::Constant::None) => Ok(Index::NewAxis),
            ast::Expr::Constant(c) if matches!(c.value, ast::Constant::Ellipsis) => Err(self.err(
                e,
                "...",
                "`...` is not part of a case script; spell out `:` per dim",
            )),
            ast::Expr::Constant(c) if matches!(c.value, ast::Constant::Bool(_)) => Err(self.err(
                e,
                "bool index",
                "bool indices are not part of a case script",
            )),
            ast::Expr::Slice(s) => {
                if s.lower.is_none() && s.upper.is_none() && s.step.is_none() {
                    return Ok(Index::Full);
                }
                let mut bound =
                    |b: &Option<Box<ast::Expr>>| b.as_deref().map(|x| self.expr(x)).transpose();
                Ok(Index::Slice {
                    start: bound(&s.lower)?,
                    stop: bound(&s.upper)?,
                    step: bound(&s.step)?,
                })
            }
            other => match literal_int(other) {
                Some(k) => Ok(Index::Int(k)),
                None => Ok(Index::Expr(self.expr(other)?)),
            },
        }
    }

    /// One expression, one level deeper than its parent: every IR sub-expression is converted
    /// through here, so the count is the IR's nesting.
    fn expr(&mut self, e: &ast::Expr) -> Result<Expr, FrontendError> {
        self.expr_depth += 1;
        if self.expr_depth > MAX_EXPR_DEPTH {
            let (construct, message) = expr_too_deep();
            return Err(self.err(e, construct, message));
        }
        let r = self.expr_node(e);
        self.expr_depth -= 1;
        r
    }

    fn expr_node(&mut self, e: &ast::Expr) -> Result<Expr, FrontendError> {
        let span = self.ctx.span(e);
        let kind = match e {
            ast::Expr::Name(n) => {
                if !self.names.contains_key(n.id.as_str()) {
                    return Err(self.err(e, "name", unbound(&n.id)));
                }
                ExprKind::Name(n.id.to_string())
            }
            ast::Expr::Constant(c) => match &c.value {
                ast::Constant::Int(_) => ExprKind::Int(
                    literal_int(e).ok_or_else(|| self.err(e, "int", "int literal out of range"))?,
                ),
                ast::Constant::Float(f) if f.is_finite() => ExprKind::Float(*f),
                ast::Constant::Float(_) => {
                    return Err(self.err(
                        e,
                        "float",
                        "float literal out of range (it overflows to inf)",
                    ));
                }
                ast::Constant::None => {
                    return Err(self.err(e, "None", "`None` is only valid as a subscript entry"));
                }
                ast::Constant::Bool(_) => {
                    return Err(self.err(e, "bool", "bool literals are not part of a case script"));
                }
                _ => {
                    return Err(self.err(
                        e,
                        "literal",
                        "only int and float literals are part of a case script",
                    ));
                }
            },
            ast::Expr::UnaryOp(u) => match (u.op, literal_int(e), literal_number(e)) {
                (ast::UnaryOp::USub, Some(v), _) => ExprKind::Int(v),
                (ast::UnaryOp::USub, None, Some((v, true))) => ExprKind::Float(v),
                _ => {
                    return Err(self.err(
                        e,
                        "unary operator",
                        "unary operators apply to number literals only (write `0 - x`)",
                    ));
                }
            },
            ast::Expr::BinOp(b) => {
                let op = match b.op {
                    ast::Operator::Add => BinOp::Add,
                    ast::Operator::Sub => BinOp::Sub,
                    ast::Operator::Mult => BinOp::Mul,
                    ast::Operator::Div => BinOp::Div,
                    ast::Operator::FloorDiv => BinOp::FloorDiv,
                    other => {
                        return Err(self.err(
                            e,
                            "operator",
                            format!("operator {other:?} is not part of a case script (+ - * / //)"),
                        ));
                    }
                };
                ExprKind::Binary {
                    op,
                    lhs: Box::new(self.expr(&b.left)?),
                    rhs: Box::new(self.expr(&b.right)?),
                }
            }
            ast::Expr::Compare(c) => {
                let ([op], [rhs]) = (c.ops.as_slice(), c.comparators.as_slice()) else {
                    return Err(self.err(
                        e,
                        "comparison",
                        "chained comparisons are not part of a case script",
                    ));
                };
                let op = match op {
                    ast::CmpOp::GtE => CmpOp::Ge,
                    ast::CmpOp::Gt => CmpOp::Gt,
                    ast::CmpOp::LtE => CmpOp::Le,
                    ast::CmpOp::Lt => CmpOp::Lt,
                    ast::CmpOp::Eq => CmpOp::Eq,
                    ast::CmpOp::NotEq => CmpOp::Ne,
                    other => {
                        return Err(self.err(
                            e,
                            "comparison",
                            format!("comparison {other:?} is not part of a case script"),
                        ));
                    }
                };
                ExprKind::Compare {
                    op,
                    lhs: Box::new(self.expr(&c.left)?),
                    rhs: Box::new(self.expr(rhs)?),
                }
            }
            ast::Expr::Attribute(a) => {
                let attr = a.attr.to_string();
                match (&*a.value, TileAttr::from_name(&attr)) {
                    (ast::Expr::Name(n), Some(t)) if self.names.get(n.id.as_str()) == Some(&NameKind::Tile) => {
                        ExprKind::TileAttr { tile: n.id.to_string(), attr: t }
                    }
                    _ => return Err(self.err(e, &format!(".{attr}"), format!("attribute `.{attr}` is not part of a case script (tile attributes .begin .end .index .count .block_size .id on hl.tile variables)"))),
                }
            }
            ast::Expr::Subscript(s) => {
                if let ast::Expr::Name(n) = &*s.value
                    && self.names.get(n.id.as_str()) == Some(&NameKind::HostTensor)
                {
                    self.require_device(e, "a host-tensor subscript")?;
                    let indices = self.indices(&s.slice)?;
                    let kind = ExprKind::Load {
                        tensor: n.id.to_string(),
                        indices,
                        explicit: false,
                    };
                    return Ok(Expr::new(kind, span));
                }
                self.require_device(e, "a subscript")?;
                let value = Box::new(self.expr(&s.value)?);
                ExprKind::Subscript {
                    value,
                    indices: self.indices(&s.slice)?,
                }
            }
            ast::Expr::Call(c) => self.call_expr(c)?,
            other => {
                let construct = expr_construct(other);
                return Err(self.err(
                    other,
                    &construct,
                    format!("`{construct}` is not part of a case script"),
                ));
            }
        };
        Ok(Expr::new(kind, span))
    }

    fn dtype_kw(
        &mut self,
        c: &ast::ExprCall,
        func: &str,
        required: bool,
    ) -> Result<Option<DType>, FrontendError> {
        let mut dtype = None;
        for kw in &c.keywords {
            match kw.arg.as_ref().map(|a| a.as_str()) {
                Some("dtype") => dtype = Some(dtype_of(self.ctx, &kw.value)?),
                Some(other) => {
                    return Err(self.err(
                        kw,
                        other,
                        format!("keyword `{other}` of {func} is not part of a case script"),
                    ));
                }
                None => return Err(self.err(kw, "**", "**kwargs are not part of a case script")),
            }
        }
        if required && dtype.is_none() {
            return Err(self.err(c, func, format!("{func} needs dtype=")));
        }
        Ok(dtype)
    }

    fn expr_list(&mut self, e: &ast::Expr, construct: &str) -> Result<Vec<Expr>, FrontendError> {
        match e {
            ast::Expr::List(l) => l.elts.iter().map(|x| self.expr(x)).collect(),
            ast::Expr::Tuple(t) => t.elts.iter().map(|x| self.expr(x)).collect(),
            other => Err(self.err(
                other,
                construct,
                format!("{construct} takes a list of dims"),
            )),
        }
    }

    fn dims_args(
        &mut self,
        args: &[ast::Expr],
        construct: &str,
    ) -> Result<Vec<Expr>, FrontendError> {
        match args {
            [one @ (ast::Expr::List(_) | ast::Expr::Tuple(_))] => self.expr_list(one, construct),
            _ => args.iter().map(|a| self.expr(a)).collect(),
        }
    }

    fn call_expr(&mut self, c: &ast::ExprCall) -> Result<ExprKind, FrontendError> {
        let func = dotted(&c.func);
        match func.as_deref() {
            Some("hl.arange") => {
                self.dtype_kw(c, "hl.arange", false).and_then(|d| match d {
                    None => Ok(()),
                    Some(_) => Err(self.err(
                        c,
                        "hl.arange",
                        "hl.arange uses the index dtype; dtype= is not part of a case script",
                    )),
                })?;
                let mut args = c
                    .args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<Vec<_>, _>>()?
                    .into_iter();
                return match (args.next(), args.next(), args.next(), args.next()) {
                    (Some(end), None, None, None) => Ok(ExprKind::Arange {
                        start: None,
                        end: Box::new(end),
                        step: None,
                    }),
                    (Some(s), Some(end), None, None) => Ok(ExprKind::Arange {
                        start: Some(Box::new(s)),
                        end: Box::new(end),
                        step: None,
                    }),
                    (Some(s), Some(end), Some(st), None) => Ok(ExprKind::Arange {
                        start: Some(Box::new(s)),
                        end: Box::new(end),
                        step: Some(Box::new(st)),
                    }),
                    _ => Err(self.err(
                        c,
                        "hl.arange",
                        "hl.arange takes (end), (start, end) or (start, end, step)",
                    )),
                };
            }
            Some(f @ ("hl.zeros" | "hl.full")) => {
                self.require_device(c, f)?;
                let dtype = self.dtype_kw(c, f, true)?.unwrap_or(DType::Float32);
                return match (f, c.args.as_slice()) {
                    ("hl.zeros", [shape]) => Ok(ExprKind::Zeros {
                        shape: self.expr_list(shape, f)?,
                        dtype,
                    }),
                    ("hl.full", [shape, v]) => Ok(ExprKind::Full {
                        shape: self.expr_list(shape, f)?,
                        value: Box::new(self.expr(v)?),
                        dtype,
                    }),
                    _ => Err(self.err(
                        c,
                        f,
                        format!(
                            "{f} takes a shape list{}",
                            if f == "hl.full" { " and a value" } else { "" }
                        ),
                    )),
                };
            }
            Some("hl.load") => {
                self.require_device(c, "hl.load")?;
                let [t, idx] = c.args.as_slice() else {
                    return Err(self.err(c, "hl.load", "hl.load takes (tensor, [indices]); an extra mask is not part of a case script"));
                };
                let tensor = self.host_tensor_name(t, "hl.load")?;
                return Ok(ExprKind::Load {
                    tensor,
                    indices: self.index_list(idx)?,
                    explicit: true,
                });
            }
            Some(f @ ("torch.empty" | "torch.zeros" | "torch.empty_like" | "torch.zeros_like")) => {
                if self.depth > 0 {
                    return Err(self.err(
                        c,
                        f,
                        format!(
                            "{f} allocates on the host: call it outside the hl.tile/hl.grid loops"
                        ),
                    ));
                }
                let kind = if f.contains("empty") {
                    AllocKind::Empty
                } else {
                    AllocKind::Zeros
                };
                let dtype = self.dtype_kw(c, f, false)?;
                let shape = if f.ends_with("_like") {
                    let [t] = c.args.as_slice() else {
                        return Err(self.err(c, f, format!("{f} takes one tensor")));
                    };
                    AllocShape::Like(Box::new(self.expr(t)?))
                } else {
                    AllocShape::Dims(self.dims_args(&c.args, f)?)
                };
                return Ok(ExprKind::Alloc { kind, shape, dtype });
            }
            _ => {}
        }
        let ast::Expr::Attribute(attr) = &*c.func else {
            let name = func.unwrap_or_else(|| "call".into());
            return Err(self.err(
                c,
                &name,
                format!("`{name}(...)` is not part of a case script"),
            ));
        };
        let method = attr.attr.to_string();
        if let Some(module) =
            dotted(&attr.value).filter(|m| m == "torch" || m == "hl" || m == "helion")
        {
            return Err(self.err(
                c,
                &format!("{module}.{method}"),
                format!("`{module}.{method}` is not part of a case script"),
            ));
        }
        let value = Box::new(self.expr(&attr.value)?);
        if !c.keywords.is_empty() && !matches!(method.as_str(), "sum") {
            return Err(self.err(
                c,
                &format!(".{method}"),
                format!("keyword arguments of `.{method}` are not part of a case script"),
            ));
        }
        let int_arg = |this: &Self, construct: &str| -> Result<i64, FrontendError> {
            match c.args.as_slice() {
                [a] => literal_int(a).ok_or_else(|| {
                    this.err(a, construct, format!("{construct} takes an int literal"))
                }),
                _ => Err(this.err(c, construct, format!("{construct} takes one int literal"))),
            }
        };
        Ok(match method.as_str() {
            "size" => ExprKind::Size {
                value,
                dim: int_arg(self, ".size")?,
            },
            "float" if c.args.is_empty() => ExprKind::Cast {
                value,
                dtype: DType::Float32,
            },
            "to" => {
                let [d] = c.args.as_slice() else {
                    return Err(self.err(c, ".to", ".to takes one dtype"));
                };
                ExprKind::Cast {
                    value,
                    dtype: dtype_of(self.ctx, d)?,
                }
            }
            "sum" => {
                let dim = match (c.args.as_slice(), c.keywords.as_slice()) {
                    ([a], []) => literal_int(a),
                    ([], [kw]) if kw.arg.as_ref().map(|a| a.as_str()) == Some("dim") => {
                        literal_int(&kw.value)
                    }
                    _ => None,
                };
                let dim = dim.ok_or_else(|| self.err(c, ".sum", "`.sum` takes one int dim (`.sum(dim=0)`); full reductions and keepdim are not part of a case script"))?;
                ExprKind::Sum { value, dim }
            }
            "reshape" => ExprKind::View {
                value,
                op: ViewOp::Reshape(self.dims_args(&c.args, ".reshape")?),
            },
            "view" => ExprKind::View {
                value,
                op: ViewOp::View(self.dims_args(&c.args, ".view")?),
            },
            "squeeze" => ExprKind::View {
                value,
                op: ViewOp::Squeeze(int_arg(self, ".squeeze")?),
            },
            "unsqueeze" => ExprKind::View {
                value,
                op: ViewOp::Unsqueeze(int_arg(self, ".unsqueeze")?),
            },
            "view_as" => {
                let [o] = c.args.as_slice() else {
                    return Err(self.err(c, ".view_as", ".view_as takes one tensor"));
                };
                ExprKind::View {
                    value,
                    op: ViewOp::ViewAs(Box::new(self.expr(o)?)),
                }
            }
            "permute" => {
                let dims = match c.args.as_slice() {
                    [one @ (ast::Expr::List(_) | ast::Expr::Tuple(_))] => match one {
                        ast::Expr::List(ast::ExprList { elts, .. })
                        | ast::Expr::Tuple(ast::ExprTuple { elts, .. }) => {
                            elts.iter().map(literal_int).collect::<Option<Vec<_>>>()
                        }
                        _ => None,
                    },
                    args => args.iter().map(literal_int).collect::<Option<Vec<_>>>(),
                };
                ExprKind::Permute {
                    value,
                    dims: dims
                        .ok_or_else(|| self.err(c, ".permute", ".permute takes int literals"))?,
                }
            }
            other => {
                return Err(self.err(
                    c,
                    &format!(".{other}"),
                    format!("method `.{other}()` is not part of a case script"),
                ));
            }
        })
    }
}
