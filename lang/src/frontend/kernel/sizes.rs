//! Sizes spelled through a tensor, desugared to `t.size(i)` ([`ExprKind::Size`]): `t.shape[i]`
//! and `t.size()[i]` are one size; `t.size()`, `t.shape` and `t.shape[a:b]` are the list of
//! sizes wherever the subset takes a list of sizes (allocation shapes, `hl.zeros`/`hl.full`
//! shapes, `.reshape`/`.view`, `hl.tile`/`hl.grid` bounds, a `*t.shape[1:]` entry of such a
//! list, and the right-hand side of `m, n = t.size()`). A whole size list needs the tensor's
//! rank, which [`super::statics`] knows for parameters (from their inputs), allocations and
//! `hl.zeros`/`hl.full`; elsewhere the construct is refused with its position.

use super::KernelParser;
use crate::frontend::FrontendError;
use crate::frontend::module::literal_int;
use crate::ir::{Expr, ExprKind};
use rustpython_parser::ast;

/// The tensor of a size-list spelling: `t` in `t.size()` or `t.shape`.
fn size_list_of(e: &ast::Expr) -> Option<&ast::Expr> {
    match e {
        ast::Expr::Attribute(a) if a.attr.as_str() == "shape" => Some(&a.value),
        ast::Expr::Call(c)
            if c.args.is_empty()
                && c.keywords.is_empty()
                && matches!(&*c.func, ast::Expr::Attribute(a) if a.attr.as_str() == "size") =>
        {
            let ast::Expr::Attribute(a) = &*c.func else {
                return None;
            };
            Some(&a.value)
        }
        _ => None,
    }
}

impl KernelParser<'_, '_> {
    /// `t.size(i)` for one dim of the tensor name `t`, at `at`.
    fn size_expr(&self, tensor: &str, tensor_node: &ast::Expr, dim: i64, at: &ast::Expr) -> Expr {
        let value = Expr::name(tensor, self.ctx.span(tensor_node));
        Expr::new(
            ExprKind::Size {
                value: Box::new(value),
                dim,
            },
            self.ctx.span(at),
        )
    }

    /// Whether `e` spells one size through a tensor (`t.shape[i]`, `t.size()[i]`).
    pub(super) fn is_size_subscript(e: &ast::ExprSubscript) -> bool {
        size_list_of(&e.value).is_some()
    }

    /// `t.shape[i]` / `t.size()[i]` as `t.size(i)`; `t.shape[a:b]` alone is a list, refused
    /// outside a list of sizes.
    pub(super) fn size_subscript(
        &mut self,
        e: &ast::ExprSubscript,
    ) -> Result<ExprKind, FrontendError> {
        let t = size_list_of(&e.value).expect("checked by is_size_subscript");
        let Some(dim) = literal_int(&e.slice) else {
            return Err(self.err(&*e.slice, "size index", "a size of `.shape`/`.size()` is indexed by an int literal (`x.shape[0]`); a slice of sizes is a list, valid where a list of sizes is"));
        };
        let value = self.expr(t)?;
        Ok(ExprKind::Size {
            value: Box::new(value),
            dim,
        })
    }

    /// The sizes `e` spells, if it is a size list through a tensor (`t.size()`, `t.shape`,
    /// `t.shape[a:b]` with literal bounds).
    pub(super) fn size_list(&mut self, e: &ast::Expr) -> Result<Option<Vec<Expr>>, FrontendError> {
        let (t, range) = match e {
            ast::Expr::Subscript(s) => match (size_list_of(&s.value), &*s.slice) {
                (Some(t), ast::Expr::Slice(sl)) => (t, Some(sl)),
                _ => return Ok(None),
            },
            e => match size_list_of(e) {
                Some(t) => (t, None),
                None => return Ok(None),
            },
        };
        let (name, rank) = self.rank_of(t, "a list of sizes")?;
        let r = i64::try_from(rank).unwrap_or(i64::MAX);
        let (lo, hi) = match range {
            None => (0, r),
            Some(sl) => {
                let bound =
                    |b: &Option<Box<ast::Expr>>, default: i64| -> Result<i64, FrontendError> {
                        match b.as_deref() {
                            None => Ok(default),
                            Some(x) => literal_int(x)
                                .map(|v| if v < 0 { (v + r).max(0) } else { v.min(r) })
                                .ok_or_else(|| {
                                    self.err(
                                        x,
                                        "size slice",
                                        "a slice of sizes has int literal bounds (`x.shape[1:]`)",
                                    )
                                }),
                        }
                    };
                if let Some(step) = &sl.step {
                    return Err(self.err(&**step, "size slice", "a slice of sizes takes no step"));
                }
                (bound(&sl.lower, 0)?, bound(&sl.upper, r)?)
            }
        };
        Ok(Some(
            (lo..hi.max(lo))
                .map(|d| self.size_expr(&name, t, d, e))
                .collect(),
        ))
    }

    /// The entries of a list of sizes: a list or tuple literal whose entries are expressions or
    /// `*t.shape[...]`-style splices, or a whole size list (`t.size()`, `t.shape`).
    pub(super) fn size_entries(
        &mut self,
        e: &ast::Expr,
        construct: &str,
    ) -> Result<Vec<Expr>, FrontendError> {
        if let Some(sizes) = self.size_list(e)? {
            return Ok(sizes);
        }
        let elts = match e {
            ast::Expr::List(l) => &l.elts,
            ast::Expr::Tuple(t) => &t.elts,
            other => {
                return Err(self.err(
                    other,
                    construct,
                    format!("{construct} takes a list of dims"),
                ));
            }
        };
        self.splice(elts)
    }

    /// Expressions, with `*t.shape`-style entries spliced in.
    pub(super) fn splice(&mut self, elts: &[ast::Expr]) -> Result<Vec<Expr>, FrontendError> {
        let mut out = Vec::with_capacity(elts.len());
        for x in elts {
            match x {
                ast::Expr::Starred(s) => match self.size_list(&s.value)? {
                    Some(sizes) => out.extend(sizes),
                    None => {
                        return Err(self.err(x, "starred expression", "a `*` entry of a list of sizes splices sizes of a tensor (`*x.shape[1:]`, `*x.size()`)"));
                    }
                },
                x => out.push(self.expr(x)?),
            }
        }
        Ok(out)
    }
}
