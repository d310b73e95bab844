//! Index forms: how each narrowing entry of a subscript selects (an int, a static, negative,
//! open, stepped or tail slice, a tile begin or index, an iota, a named index, ...), tagged with
//! the loop type and whether it sits in a branch.

use super::walk::{Out, Walker};
use super::{Feature, IndexForm, ViewKind};
use lang::ir::{BinOp, Expr, ExprKind, Index, TileAttr};

impl Walker<'_> {
    pub(super) fn subscript(
        &self,
        value: &Expr,
        indices: &[Index],
        in_branch: bool,
        out: &mut Out,
    ) {
        let narrowing: Vec<usize> = (0..indices.len())
            .filter(|&k| indices[k].is_narrowing())
            .collect();
        for (pos, i) in indices.iter().enumerate() {
            if matches!(i, Index::NewAxis) {
                out.insert(Feature::NoneAt(pos.min(255) as u8));
            }
        }
        if narrowing.is_empty() {
            out.insert(Feature::View(ViewKind::NoneSubscript));
            return;
        }
        let lt = self.loop_type;
        let mut tag = |form| {
            out.insert(Feature::Index {
                form,
                loop_type: lt,
                in_branch,
            });
        };
        if narrowing.len() > 1 {
            tag(IndexForm::MultipleNarrowing);
        }
        // The extent of the narrowed dim, when the value is a named tile load.
        let extent_of = |pos: usize| -> Option<i64> {
            let ExprKind::Name(n) = &value.kind else {
                return None;
            };
            let (tensor, tiled, bid) = self.loads.get(n.as_str())?;
            let dim = indices[..pos]
                .iter()
                .filter(|i| !matches!(i, Index::NewAxis))
                .count();
            if dim == *tiled {
                self.effective.get(*bid).copied()
            } else {
                self.host
                    .tensors
                    .get(*tensor)?
                    .shape
                    .get(dim)
                    .map(|&d| d as i64)
            }
        };
        for &k in &narrowing {
            let form = match &indices[k] {
                Index::Int(v) => {
                    if *v < 0 {
                        IndexForm::NegativeInt
                    } else {
                        IndexForm::Int
                    }
                }
                Index::Slice { start, stop, step } => {
                    self.slice_form(start, stop, step, extent_of(k))
                }
                Index::Expr(x) => self.expr_form(x, false),
                Index::Full | Index::NewAxis => continue,
            };
            tag(form);
            if let Index::Expr(
                x @ Expr {
                    kind: ExprKind::Name(_),
                    ..
                },
            ) = &indices[k]
            {
                tag(self.expr_form(x, true));
            }
        }
    }

    fn slice_form(
        &self,
        start: &Option<Expr>,
        stop: &Option<Expr>,
        step: &Option<Expr>,
        extent: Option<i64>,
    ) -> IndexForm {
        let lit = |e: &Option<Expr>| {
            e.as_ref().and_then(|x| match x.kind {
                ExprKind::Int(v) => Some(v),
                _ => None,
            })
        };
        if step.is_some() {
            return IndexForm::SteppedSlice;
        }
        if start.is_none() || stop.is_none() {
            return IndexForm::OpenSlice;
        }
        match (lit(start), lit(stop)) {
            (Some(a), Some(b)) => {
                if a < 0 || b < 0 {
                    IndexForm::NegativeSlice
                } else if b <= a {
                    IndexForm::EmptySlice
                } else if extent.is_some_and(|x| b > x) {
                    IndexForm::PastExtentSlice
                } else {
                    IndexForm::StaticSlice
                }
            }
            _ => {
                let (Some(a), Some(b)) = (start, stop) else {
                    return IndexForm::DynamicSlice;
                };
                match &a.kind {
                    ExprKind::Binary {
                        op: BinOp::Sub,
                        lhs,
                        ..
                    } if self.same(lhs, b) && self.is_live(b) => IndexForm::TailSlice,
                    _ => IndexForm::DynamicSlice,
                }
            }
        }
    }

    fn same(&self, a: &Expr, b: &Expr) -> bool {
        a.without_spans_eq(b)
    }

    /// The form of an expression index; with `resolve`, a name is looked through.
    fn expr_form(&self, x: &Expr, resolve: bool) -> IndexForm {
        match &x.kind {
            ExprKind::TileAttr {
                attr: TileAttr::Index,
                ..
            } => IndexForm::TileIndex,
            ExprKind::TileAttr {
                attr: TileAttr::Begin,
                ..
            } => IndexForm::TileBegin,
            ExprKind::Binary {
                op: BinOp::Add,
                lhs,
                rhs,
            } => match (&lhs.kind, &rhs.kind) {
                (
                    ExprKind::TileAttr {
                        attr: TileAttr::Index,
                        ..
                    },
                    ExprKind::Int(_),
                ) => IndexForm::TileIndexOffset,
                (ExprKind::Int(_), ExprKind::Arange { .. }) => IndexForm::OffsetArange,
                _ => IndexForm::OtherExpr,
            },
            ExprKind::Arange { start, end, step } => {
                let step_lit = step
                    .as_deref()
                    .map(|s| matches!(s.kind, ExprKind::Int(v) if v > 1));
                if step_lit == Some(true) {
                    IndexForm::StridedArange
                } else if self.is_live(end)
                    && start.as_deref().is_some_and(|s| matches!(&s.kind, ExprKind::Binary { op: BinOp::Sub, lhs, .. } if self.same(lhs, end)))
                {
                    IndexForm::TailArange
                } else {
                    IndexForm::StaticArange
                }
            }
            ExprKind::Name(n) if resolve => match self.bound.get(n.as_str()) {
                Some(b) => self.expr_form(b, false),
                None => IndexForm::OtherExpr,
            },
            ExprKind::Name(_) => IndexForm::NamedIndex,
            _ => IndexForm::OtherExpr,
        }
    }
}

trait SpanFreeEq {
    fn without_spans_eq(&self, other: &Expr) -> bool;
}

impl SpanFreeEq for Expr {
    fn without_spans_eq(&self, other: &Expr) -> bool {
        // Spans differ between two occurrences of the same name; compare the rendered forms.
        lang::render::expr(self) == lang::render::expr(other)
    }
}
