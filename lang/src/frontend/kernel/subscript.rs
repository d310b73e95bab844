//! Index lists: the entries of a subscript (`x[t, :, None, 1:3]`) and the list argument of
//! `hl.load`/`hl.store`/atomics, where `slice(...)` spells a slice; an int literal is
//! [`Index::Int`] and a bare `:` is [`Index::Full`], the canonical forms.

use super::KernelParser;
use crate::frontend::FrontendError;
use crate::frontend::module::{dotted, literal_int};
use crate::ir::{Expr, Index};
use rustpython_parser::ast;

impl KernelParser<'_, '_> {
    pub(super) fn index_list(&mut self, e: &ast::Expr) -> Result<Vec<Index>, FrontendError> {
        match e {
            ast::Expr::List(l) => {
                let mut out = Vec::with_capacity(l.elts.len());
                for x in &l.elts {
                    match self.tile_tuple(x) {
                        Some(parts) => out.extend(parts),
                        None => out.push(self.list_entry(x)?),
                    }
                }
                Ok(out)
            }
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

    pub(super) fn indices(&mut self, slice: &ast::Expr) -> Result<Vec<Index>, FrontendError> {
        let entries = match slice {
            ast::Expr::Tuple(t) => t.elts.as_slice(),
            single => std::slice::from_ref(single),
        };
        let mut out = Vec::with_capacity(entries.len());
        for x in entries {
            match self.tile_tuple(x) {
                Some(parts) => out.extend(parts),
                None => out.push(self.index_entry(x)?),
            }
        }
        Ok(out)
    }

    /// The tiles a multi-dim tile variable stands for, as index entries, when `e` names one.
    fn tile_tuple(&self, e: &ast::Expr) -> Option<Vec<Index>> {
        let ast::Expr::Name(n) = e else {
            return None;
        };
        let parts = self.tile_tuples.get(n.id.as_str())?;
        let span = self.ctx.span(e);
        Some(
            parts
                .iter()
                .map(|p| Index::Expr(Expr::new(crate::ir::ExprKind::Name(p.clone()), span)))
                .collect(),
        )
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
}
