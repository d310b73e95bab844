//! Expressions: names (bound before use), number literals, operators and comparisons, tile
//! attributes, subscripts (a host-tensor subscript is a load, any other a device subscript),
//! and the expression depth limit. Calls are [`super::call`]'s.

use super::KernelParser;
use crate::frontend::module::{literal_int, literal_number};
use crate::frontend::wellformed::{NameKind, expr_too_deep, unbound};
use crate::frontend::{FrontendError, MAX_EXPR_DEPTH};
use crate::ir::{BinOp, CmpOp, Expr, ExprKind, TensorOp, TileAttr};
use rustpython_parser::ast;

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

impl KernelParser<'_, '_> {
    /// One expression, one level deeper than its parent: every IR sub-expression is converted
    /// through here, so the count is the IR's nesting.
    pub(super) fn expr(&mut self, e: &ast::Expr) -> Result<Expr, FrontendError> {
        self.expr_depth += 1;
        if self.expr_depth > MAX_EXPR_DEPTH {
            let (construct, message) = expr_too_deep();
            return Err(self.err(e, construct, message));
        }
        let r = self.expr_node(e);
        self.expr_depth -= 1;
        r
    }

    /// A comparison: the next expression node, which must be one (an `if` condition, an
    /// `assert` term).
    pub(super) fn condition(&mut self, e: &ast::Expr) -> Result<Expr, FrontendError> {
        self.compare_here = true;
        let r = self.expr(e);
        self.compare_here = false;
        r
    }

    fn expr_node(&mut self, e: &ast::Expr) -> Result<Expr, FrontendError> {
        let span = self.ctx.span(e);
        let compare_ok = std::mem::take(&mut self.compare_here);
        let kind = match e {
            ast::Expr::Name(n) if self.tile_tuples.contains_key(n.id.as_str()) => {
                return Err(self.err(e, "tile tuple", format!("`{}` is the tuple of a multi-dim hl.tile's tiles: index a tensor with it whole (`x[{}]`) or take one tile (`{}[0]`)", n.id, n.id, n.id)));
            }
            ast::Expr::Name(n) => {
                match self.names.get(n.id.as_str()) {
                    None => return Err(self.err(e, "name", unbound(&n.id))),
                    Some(NameKind::HostBool) if !compare_ok => {
                        return Err(self.err(
                            e,
                            "bool parameter",
                            super::super::wellformed::BOOL_PARAM_USE,
                        ));
                    }
                    Some(_) => {}
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
                (ast::UnaryOp::USub, None, None)
                    if let ast::Expr::Call(c) = u.operand.as_ref()
                        && crate::frontend::module::dotted(&c.func).as_deref() == Some("float") =>
                {
                    ExprKind::Float(-self.float_call(c)?)
                }
                _ => {
                    return Err(self.err(
                        e,
                        "unary operator",
                        "unary operators apply to number literals only (write `0 - x`)",
                    ));
                }
            },
            ast::Expr::BinOp(b) => {
                let tensor_op = match b.op {
                    ast::Operator::Mod => Some(TensorOp::Mod),
                    ast::Operator::BitAnd => Some(TensorOp::And),
                    ast::Operator::BitOr => Some(TensorOp::Or),
                    _ => None,
                };
                if let Some(op) = tensor_op {
                    let kind = self.op_operator(e, op, &b.left, &b.right)?;
                    return Ok(Expr::new(kind, span));
                }
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
                if !compare_ok {
                    // A comparison as a value is a boolean mask (device code only).
                    let kind = self.op_operator(e, TensorOp::Cmp(op), &c.left, rhs)?;
                    return Ok(Expr::new(kind, span));
                }
                ExprKind::Compare {
                    op,
                    lhs: Box::new(self.expr(&c.left)?),
                    rhs: Box::new(self.expr(rhs)?),
                }
            }
            ast::Expr::Attribute(a) if a.attr.as_str() == "shape" => {
                return Err(self.err(e, ".shape", "`.shape` is a list of sizes: index it (`x.shape[0]`), unpack it (`m, n = x.shape`) or pass it where a list of sizes is expected"));
            }
            ast::Expr::Attribute(a) if a.attr.as_str() == "T" => {
                // `x.T` is `x.transpose(0, 1)` on a 2-D tensor only (torch reverses every dim
                // of another rank): the rank must be known statically.
                self.require_device(e, ".T")?;
                let value = self.expr(&a.value)?;
                match self.rank_of_value(&value) {
                    Some(2) => ExprKind::Op {
                        op: TensorOp::Transpose(0, 1),
                        args: vec![value],
                    },
                    Some(r) => {
                        return Err(self.err(e, ".T", format!("`.T` of a rank-{r} value is not part of a case script (it reverses every dim): write `.permute(...)`")));
                    }
                    None => {
                        return Err(self.err(e, ".T", "`.T` needs a value whose rank is known statically (a tensor name, or a subscript of one by tiles, ints, `:` and `None`): write `.transpose(0, 1)`"));
                    }
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
            ast::Expr::Subscript(s) if Self::is_size_subscript(s) => self.size_subscript(s)?,
            ast::Expr::Subscript(s) if matches!(&*s.value, ast::Expr::Name(n) if self.tile_tuples.contains_key(n.id.as_str())) =>
            {
                let ast::Expr::Name(n) = &*s.value else {
                    unreachable!("matched above")
                };
                let parts = &self.tile_tuples[n.id.as_str()];
                match literal_int(&s.slice)
                    .and_then(|k| usize::try_from(k).ok())
                    .and_then(|k| parts.get(k))
                {
                    Some(p) => ExprKind::Name(p.clone()),
                    None => {
                        return Err(self.err(
                            e,
                            "tile tuple",
                            format!(
                                "`{}` holds {} tiles: take one with an int literal below {}",
                                n.id,
                                parts.len(),
                                parts.len()
                            ),
                        ));
                    }
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
}
