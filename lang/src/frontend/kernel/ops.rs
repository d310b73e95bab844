//! The [`TensorOp`]s of a kernel body: `torch.exp`/`relu`/`rsqrt`/`maximum`/`minimum`/`where`,
//! the float functions of [`UnaryFn`] (`torch.sigmoid`, `torch.sin`, ...),
//! `torch.sum`/`amax`/`amin` (and the method forms `x.sum(...)`, `x.amax(...)`, `x.exp()`, ...)
//! with `dim=` an int or a list and `keepdim=`, `x.transpose(d0, d1)` (`torch.transpose`),
//! `torch.matmul`/`bmm`/`addmm`/`baddbmm`, `hl.dot(a, b[, acc])`, `torch.nn.functional.pad`
//! with a constant fill, and the operators `%`, `&`, `|`
//! and comparisons as values. Every keyword an op does not model is refused (a dropped keyword
//! would check another kernel than the file's).

use super::KernelParser;
use crate::frontend::FrontendError;
use crate::frontend::module::literal_int;
use crate::ir::{Expr, ExprKind, ReduceKind, TensorOp, UnaryFn};
use rustpython_parser::ast;

/// The op a `torch.`/`hl.` function names (reductions and transpose are read with their
/// arguments by [`KernelParser::op_call`]).
fn function_op(f: &str) -> Option<TensorOp> {
    Some(match f {
        "torch.exp" => TensorOp::Exp,
        "torch.relu" => TensorOp::Relu,
        "torch.rsqrt" => TensorOp::Rsqrt,
        "torch.maximum" => TensorOp::Maximum,
        "torch.minimum" => TensorOp::Minimum,
        "torch.where" => TensorOp::Where,
        "torch.matmul" => TensorOp::Matmul,
        "torch.bmm" => TensorOp::Bmm,
        "torch.addmm" => TensorOp::Addmm,
        "torch.baddbmm" => TensorOp::Baddbmm,
        "hl.dot" => TensorOp::Dot,
        _ => TensorOp::Unary(f.strip_prefix("torch.").and_then(UnaryFn::from_name)?),
    })
}

/// `torch.nn.functional.pad` (the spelling of Helion's tests; `import torch.nn.functional as
/// F` is not part of a case script).
const PAD: &str = "torch.nn.functional.pad";

/// Whether `.method` is one of the ops' method forms.
pub(super) fn is_op_method(method: &str) -> bool {
    matches!(
        method,
        "amax" | "amin" | "argmax" | "argmin" | "transpose" | "exp" | "relu" | "rsqrt"
    ) || UnaryFn::from_name(method).is_some()
}

/// Whether `torch.<name>` / `hl.<name>` is an op call this module reads.
pub(super) fn is_op_function(f: &str) -> bool {
    function_op(f).is_some()
        || matches!(
            f,
            "torch.sum"
                | "torch.amax"
                | "torch.amin"
                | "torch.argmax"
                | "torch.argmin"
                | "torch.transpose"
                | PAD
        )
}

impl KernelParser<'_, '_> {
    fn op_node(&mut self, op: TensorOp, args: &[&ast::Expr]) -> Result<ExprKind, FrontendError> {
        let args = args
            .iter()
            .map(|a| self.expr(a))
            .collect::<Result<Vec<Expr>, _>>()?;
        Ok(ExprKind::Op { op, args })
    }

    /// A binary operator `%`, `&`, `|` or a comparison used as a value.
    pub(super) fn op_operator(
        &mut self,
        node: &ast::Expr,
        op: TensorOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
    ) -> Result<ExprKind, FrontendError> {
        self.require_device(node, op.construct())?;
        self.op_node(op, &[lhs, rhs])
    }

    /// `torch.<f>(...)` / `hl.dot(...)`, `f` accepted by [`is_op_function`].
    pub(super) fn op_call(
        &mut self,
        c: &ast::ExprCall,
        f: &str,
    ) -> Result<ExprKind, FrontendError> {
        self.require_device(c, f)?;
        let args: Vec<&ast::Expr> = c.args.iter().collect();
        if let Some(kind) = f.strip_prefix("torch.").and_then(ReduceKind::from_name) {
            let [x, rest @ ..] = args.as_slice() else {
                return Err(self.err(c, f, format!("{f} takes a tensor")));
            };
            return self.reduce(c, f, kind, x, rest);
        }
        if f == PAD {
            return self.pad(c);
        }
        if f == "torch.transpose" {
            let [x, rest @ ..] = args.as_slice() else {
                return Err(self.err(c, f, format!("{f} takes a tensor and two dims")));
            };
            return self.transpose(c, f, x, rest);
        }
        let op = function_op(f).expect("is_op_function");
        let mut args = args;
        for kw in &c.keywords {
            match (kw.arg.as_ref().map(|a| a.as_str()), &op) {
                (Some("acc"), TensorOp::Dot) if args.len() == 2 => args.push(&kw.value),
                (Some(_) | None, _) => return Err(self.unmodelled_keyword(kw, f)),
            }
        }
        // `hl.dot(a, b, None)` is `hl.dot(a, b)`.
        if matches!(op, TensorOp::Dot)
            && let [a, b, ast::Expr::Constant(k)] = args.as_slice()
            && matches!(k.value, ast::Constant::None)
        {
            args = vec![*a, *b];
        }
        let (lo, hi) = op.arity();
        if !(lo..=hi).contains(&args.len()) {
            return Err(self.err(
                c,
                f,
                format!(
                    "{f} takes {lo}{} operands, not {}",
                    if hi > lo {
                        format!(" or {hi}")
                    } else {
                        String::new()
                    },
                    args.len()
                ),
            ));
        }
        self.op_node(op, &args)
    }

    /// `x.<method>(...)` for [`is_op_method`], or `x.sum(...)` beyond one int dim.
    pub(super) fn op_method(
        &mut self,
        c: &ast::ExprCall,
        x: &ast::Expr,
        method: &str,
    ) -> Result<ExprKind, FrontendError> {
        let construct = format!(".{method}");
        self.require_device(c, &construct)?;
        let args: Vec<&ast::Expr> = c.args.iter().collect();
        if let Some(kind) = ReduceKind::from_name(method) {
            return self.reduce(c, &construct, kind, x, &args);
        }
        if method == "transpose" {
            return self.transpose(c, &construct, x, &args);
        }
        let op = match method {
            "exp" => TensorOp::Exp,
            "relu" => TensorOp::Relu,
            "rsqrt" => TensorOp::Rsqrt,
            other if UnaryFn::from_name(other).is_some() => {
                TensorOp::Unary(UnaryFn::from_name(other).expect("matched"))
            }
            other => {
                return Err(self.err(
                    c,
                    &format!(".{other}"),
                    format!("method `.{other}()` is not part of a case script"),
                ));
            }
        };
        if !c.args.is_empty() || !c.keywords.is_empty() {
            return Err(self.err(c, &construct, format!("`{construct}()` takes no arguments")));
        }
        self.op_node(op, &[x])
    }

    fn reduce(
        &mut self,
        c: &ast::ExprCall,
        construct: &str,
        kind: ReduceKind,
        x: &ast::Expr,
        rest: &[&ast::Expr],
    ) -> Result<ExprKind, FrontendError> {
        let mut dim: Option<&ast::Expr> = None;
        let mut keepdim: Option<&ast::Expr> = None;
        match rest {
            [] => {}
            [d] => dim = Some(d),
            [d, k] => {
                dim = Some(d);
                keepdim = Some(k);
            }
            _ => {
                return Err(self.err(
                    c,
                    construct,
                    format!("{construct} takes a tensor, dims and keepdim"),
                ));
            }
        }
        for kw in &c.keywords {
            match kw.arg.as_ref().map(|a| a.as_str()) {
                Some("dim") if dim.is_none() => dim = Some(&kw.value),
                Some("keepdim") if keepdim.is_none() => keepdim = Some(&kw.value),
                Some(_) | None => return Err(self.unmodelled_keyword(kw, construct)),
            }
        }
        let dims = match dim {
            None => None,
            Some(ast::Expr::Constant(k)) if matches!(k.value, ast::Constant::None) => None,
            Some(d @ (ast::Expr::List(_) | ast::Expr::Tuple(_))) => {
                let elts = match d {
                    ast::Expr::List(l) => &l.elts,
                    ast::Expr::Tuple(t) => &t.elts,
                    _ => unreachable!("matched above"),
                };
                Some(
                    elts.iter()
                        .map(literal_int)
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| {
                            self.err(d, construct, format!("{construct} takes int literal dims"))
                        })?,
                )
            }
            Some(d) => Some(vec![literal_int(d).ok_or_else(|| {
                self.err(d, construct, format!("{construct} takes int literal dims"))
            })?]),
        };
        // torch's `argmax`/`argmin` take one int dim (a list, even of one, is a TypeError).
        if kind.is_index() && matches!(dim, Some(ast::Expr::List(_) | ast::Expr::Tuple(_))) {
            return Err(self.err(
                dim.unwrap_or(x),
                construct,
                format!("{construct} takes one int dim or none"),
            ));
        }
        let keepdim = match keepdim {
            None => false,
            Some(ast::Expr::Constant(k)) => match k.value {
                ast::Constant::Bool(b) => b,
                _ => return Err(self.err(c, construct, "keepdim is True or False")),
            },
            Some(other) => return Err(self.err(other, construct, "keepdim is True or False")),
        };
        // `x.sum(k)` of one dim without keepdim is the version-1 node: one meaning, one node.
        if let (ReduceKind::Sum, Some([d]), false) = (kind, dims.as_deref(), keepdim) {
            return Ok(ExprKind::Sum {
                value: Box::new(self.expr(x)?),
                dim: *d,
            });
        }
        self.op_node(
            TensorOp::Reduce {
                kind,
                dims,
                keepdim,
            },
            &[x],
        )
    }

    /// `torch.nn.functional.pad(x, pads, mode="constant", value=v)`: pads a tuple or list of
    /// int literals; the fill a Python number (`float("-inf")` included), 0 when absent or
    /// `None`. Another mode is refused.
    fn pad(&mut self, c: &ast::ExprCall) -> Result<ExprKind, FrontendError> {
        let mut pads: Option<&ast::Expr> = None;
        let mut mode: Option<&ast::Expr> = None;
        let mut value: Option<&ast::Expr> = None;
        let mut positional = c.args.iter();
        let Some(x) = positional.next() else {
            return Err(self.err(c, PAD, format!("{PAD} takes a tensor and its pads")));
        };
        for (slot, a) in [&mut pads, &mut mode, &mut value]
            .into_iter()
            .zip(positional.by_ref())
        {
            *slot = Some(a);
        }
        if positional.next().is_some() {
            return Err(self.err(c, PAD, format!("{PAD} takes (input, pad, mode, value)")));
        }
        for kw in &c.keywords {
            let slot = match kw.arg.as_ref().map(|a| a.as_str()) {
                Some("pad") => &mut pads,
                Some("mode") => &mut mode,
                Some("value") => &mut value,
                Some(_) | None => return Err(self.unmodelled_keyword(kw, PAD)),
            };
            if slot.replace(&kw.value).is_some() {
                return Err(self.err(kw, PAD, format!("{PAD}: an argument given twice")));
            }
        }
        let Some(pads) = pads else {
            return Err(self.err(c, PAD, format!("{PAD} takes the pads")));
        };
        let pad_list = match pads {
            ast::Expr::Tuple(t) => Some(&t.elts),
            ast::Expr::List(l) => Some(&l.elts),
            _ => None,
        }
        .and_then(|elts| elts.iter().map(literal_int).collect::<Option<Vec<i64>>>())
        .ok_or_else(|| {
            self.err(
                pads,
                PAD,
                format!("the pads of {PAD} are a tuple of int literals"),
            )
        })?;
        if pad_list.iter().any(|&p| p < 0) {
            return Err(self.err(
                pads,
                PAD,
                format!("{PAD}: a negative pad (cropping) is not part of a case script"),
            ));
        }
        if let Some(m) = mode {
            let constant = matches!(m, ast::Expr::Constant(k) if matches!(&k.value, ast::Constant::Str(s) if s == "constant"));
            if !constant {
                return Err(self.err(
                    m,
                    PAD,
                    format!("{PAD}: only mode=\"constant\" is part of a case script"),
                ));
            }
        }
        let fill = match value {
            None => Expr {
                kind: ExprKind::Int(0),
                span: self.ctx.span(c),
            },
            Some(ast::Expr::Constant(k)) if matches!(k.value, ast::Constant::None) => Expr {
                kind: ExprKind::Int(0),
                span: self.ctx.span(c),
            },
            Some(v) => self.expr(v)?,
        };
        let x = self.expr(x)?;
        Ok(ExprKind::Op {
            op: TensorOp::Pad(pad_list),
            args: vec![x, fill],
        })
    }

    fn transpose(
        &mut self,
        c: &ast::ExprCall,
        construct: &str,
        x: &ast::Expr,
        rest: &[&ast::Expr],
    ) -> Result<ExprKind, FrontendError> {
        if !c.keywords.is_empty() {
            return Err(self.err(
                c,
                construct,
                format!("keyword arguments of `{construct}` are not part of a case script"),
            ));
        }
        let [a, b] = rest else {
            return Err(self.err(c, construct, format!("{construct} takes two int dims")));
        };
        let (Some(a), Some(b)) = (literal_int(a), literal_int(b)) else {
            return Err(self.err(
                c,
                construct,
                format!("{construct} takes two int literal dims"),
            ));
        };
        self.op_node(TensorOp::Transpose(a, b), &[x])
    }
}
