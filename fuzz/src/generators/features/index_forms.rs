//! Index forms: how each narrowing entry of a subscript selects (an int, a static, negative,
//! open, stepped or tail slice, a tile begin or index, an iota, a named index, ...), its `None`
//! entries, and whether the subscripted value is a view or another subscript; tagged with the
//! loop type and whether it sits in a branch. The one classifier ([`super::IndexForm`]).

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
        let lt = self.loop_type;
        let tag = |out: &mut Out, form| {
            out.insert(Feature::Index {
                form,
                loop_type: lt,
                in_branch,
            });
        };
        match &self.resolve(value).kind {
            ExprKind::View { .. } => tag(out, IndexForm::OfView),
            ExprKind::Subscript { .. } => tag(out, IndexForm::OfSubscript),
            ExprKind::Name(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Size { .. }
            | ExprKind::TileAttr { .. }
            | ExprKind::Binary { .. }
            | ExprKind::Compare { .. }
            | ExprKind::Load { .. }
            | ExprKind::Arange { .. }
            | ExprKind::Zeros { .. }
            | ExprKind::Full { .. }
            | ExprKind::Cast { .. }
            | ExprKind::Sum { .. }
            | ExprKind::Permute { .. }
            | ExprKind::Op { .. }
            | ExprKind::Alloc { .. } => {}
        }
        for (pos, i) in indices.iter().enumerate() {
            if matches!(i, Index::NewAxis) {
                out.insert(Feature::NoneAt(pos.min(255) as u8));
                tag(out, IndexForm::NewAxis);
            }
        }
        if narrowing.is_empty() {
            out.insert(Feature::View(ViewKind::NoneSubscript));
            return;
        }
        let mut tag = |form| tag(out, form);
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
            // A name bound earlier is a named index and also what it was bound to.
            if let Index::Expr(
                x @ Expr {
                    kind: ExprKind::Name(n),
                    ..
                },
            ) = &indices[k]
                && self.bound.contains_key(n.as_str())
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
        if step.is_some() {
            return IndexForm::SteppedSlice;
        }
        let (Some(a), Some(b)) = (start, stop) else {
            return IndexForm::OpenSlice;
        };
        match (self.literal(a), self.literal(b)) {
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
            _ if self.is_tail(a, b) => IndexForm::TailSlice,
            _ => IndexForm::DynamicSlice,
        }
    }

    /// `x - w .. x` with `x` the live extent: a data-dependent tail run.
    fn is_tail(&self, start: &Expr, end: &Expr) -> bool {
        let ExprKind::Binary {
            op: BinOp::Sub,
            lhs,
            ..
        } = &self.resolve(start).kind
        else {
            return false;
        };
        self.same(lhs, end) && self.is_live(end)
    }

    fn same(&self, a: &Expr, b: &Expr) -> bool {
        a.without_spans_eq(b)
    }

    /// What a name was last bound to, followed through `a = b` chains (up to
    /// [`RESOLVE_DEPTH`] links); any other expression is itself.
    pub(super) fn resolve<'e>(&'e self, e: &'e Expr) -> &'e Expr {
        let mut e = e;
        for _ in 0..RESOLVE_DEPTH {
            let ExprKind::Name(n) = &e.kind else { break };
            let Some(b) = self.bound.get(n.as_str()) else {
                break;
            };
            e = b;
        }
        e
    }

    /// The int literal an expression is, names resolved.
    fn literal(&self, e: &Expr) -> Option<i64> {
        self.resolve(e).as_int()
    }

    fn is_tile_index(&self, e: &Expr) -> bool {
        matches!(
            self.resolve(e).kind,
            ExprKind::TileAttr {
                attr: TileAttr::Index,
                ..
            }
        )
    }

    /// The form of an expression index; with `resolve`, a name is looked through.
    fn expr_form(&self, x: &Expr, resolve: bool) -> IndexForm {
        let x = if resolve { self.resolve(x) } else { x };
        match &x.kind {
            ExprKind::TileAttr {
                attr: TileAttr::Index,
                ..
            } => IndexForm::TileIndex,
            ExprKind::TileAttr {
                attr: TileAttr::Begin,
                ..
            } => IndexForm::TileBegin,
            ExprKind::Binary { op, lhs, rhs } => {
                // `t.index ± k` and `k + t.index`: one selector with a literal offset.
                let offset = match op {
                    BinOp::Add if self.is_tile_index(lhs) => self.literal(rhs),
                    BinOp::Add if self.is_tile_index(rhs) => self.literal(lhs),
                    BinOp::Sub if self.is_tile_index(lhs) => self.literal(rhs),
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::FloorDiv => None,
                };
                match offset {
                    Some(0) => IndexForm::TileIndexPlusZero,
                    Some(_) => IndexForm::TileIndexOffset,
                    None => match (op, &lhs.kind, &rhs.kind) {
                        (BinOp::Add, ExprKind::Int(_), ExprKind::Arange { .. }) => {
                            IndexForm::OffsetArange
                        }
                        _ => IndexForm::OtherExpr,
                    },
                }
            }
            ExprKind::Arange { start, end, step } => {
                // Any step but a literal 1 (a symbolic one, 2, 0 or negative) is not contiguous.
                let step = step.as_deref().map(|s| self.literal(s));
                if step.is_some_and(|s| s != Some(1)) {
                    IndexForm::StridedArange
                } else if start.as_deref().is_some_and(|s| self.is_tail(s, end)) {
                    IndexForm::TailArange
                } else if start.as_deref().is_none_or(|s| self.literal(s).is_some())
                    && self.literal(end).is_some()
                {
                    IndexForm::StaticArange
                } else {
                    IndexForm::DynamicArange
                }
            }
            // A name bound earlier in the kernel; a parameter or loop variable is another
            // expression.
            ExprKind::Name(n) if self.bound.contains_key(n.as_str()) => IndexForm::NamedIndex,
            ExprKind::Name(_) => IndexForm::OtherExpr,
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Size { .. }
            | ExprKind::TileAttr { .. }
            | ExprKind::Compare { .. }
            | ExprKind::Load { .. }
            | ExprKind::Subscript { .. }
            | ExprKind::Zeros { .. }
            | ExprKind::Full { .. }
            | ExprKind::Cast { .. }
            | ExprKind::Sum { .. }
            | ExprKind::View { .. }
            | ExprKind::Permute { .. }
            | ExprKind::Op { .. }
            | ExprKind::Alloc { .. } => IndexForm::OtherExpr,
        }
    }
}

/// How deep name resolution follows `a = b` chains.
const RESOLVE_DEPTH: usize = 8;

trait SpanFreeEq {
    fn without_spans_eq(&self, other: &Expr) -> bool;
}

impl SpanFreeEq for Expr {
    fn without_spans_eq(&self, other: &Expr) -> bool {
        // Spans differ between two occurrences of the same name; compare the rendered forms.
        lang::render::expr(self) == lang::render::expr(other)
    }
}
