//! Expressions and index lists in the walk: a surface tag per IR form (exhaustive matches, no
//! `_` arm, so a new form fails to compile until it has a tag), tile attributes used as values,
//! paired reads, whole-block consumers, views and permutes.

use super::walk::{Out, Walker};
use super::{AttrTag, Feature, Surface, ViewKind};
use lang::ir::{AllocKind, AllocShape, BinOp, CmpOp, Expr, ExprKind, Index, TileAttr, ViewOp};

impl Walker<'_> {
    pub(super) fn indices(&mut self, indices: &[Index], in_branch: bool, out: &mut Out) {
        for i in indices {
            out.insert(Feature::Surface(index_surface(i)));
        }
        for e in index_exprs(indices) {
            self.expr(e, in_branch, false, out);
        }
    }

    /// Tags `e` and its sub-expressions. `value` says a tile attribute here is used as a value.
    pub(super) fn expr(&mut self, e: &Expr, in_branch: bool, value: bool, out: &mut Out) {
        out.insert(Feature::Surface(expr_surface(e)));
        match &e.kind {
            ExprKind::Name(_) | ExprKind::Int(_) | ExprKind::Float(_) => {}
            ExprKind::Size { value: v, .. } => self.expr(v, in_branch, false, out),
            ExprKind::TileAttr { attr, .. } => {
                let (tag, s) = attr_tag(*attr);
                out.insert(Feature::Surface(s));
                if value && *attr != TileAttr::Index {
                    out.insert(Feature::TileAttrValue(tag));
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                out.insert(Feature::Surface(bin_surface(*op)));
                if *op == BinOp::Mul && self.block_read(lhs) && self.block_read(rhs) {
                    out.insert(Feature::PairedReads);
                }
                // `live = t.end - t.begin` is the loop's extent, not a value.
                let live = self.is_live(e);
                self.whole(lhs, out);
                self.whole(rhs, out);
                self.expr(lhs, in_branch, value && !live, out);
                self.expr(rhs, in_branch, value && !live, out);
            }
            ExprKind::Compare { op, lhs, rhs } => {
                out.insert(Feature::Surface(match op {
                    CmpOp::Ge => Surface::CmpGe,
                    CmpOp::Gt => Surface::CmpGt,
                    CmpOp::Le => Surface::CmpLe,
                    CmpOp::Lt => Surface::CmpLt,
                    CmpOp::Eq => Surface::CmpEq,
                    CmpOp::Ne => Surface::CmpNe,
                }));
                self.expr(lhs, in_branch, false, out);
                self.expr(rhs, in_branch, false, out);
            }
            ExprKind::Load { indices, .. } => {
                let gather = indices.iter().any(
                    |i| matches!(i, Index::Expr(x) if matches!(x.kind, ExprKind::Load { .. })),
                );
                if gather {
                    out.insert(Feature::Gather);
                }
                self.indices(indices, in_branch, out)
            }
            ExprKind::Subscript { value: v, indices } => {
                self.subscript(v, indices, in_branch, out);
                self.expr(v, in_branch, false, out);
                self.indices(indices, in_branch, out);
            }
            ExprKind::Arange { start, end, step } => {
                for x in [start.as_deref(), Some(&**end), step.as_deref()]
                    .into_iter()
                    .flatten()
                {
                    self.expr(x, in_branch, false, out);
                }
            }
            ExprKind::Zeros { shape, .. } => shape
                .iter()
                .for_each(|d| self.expr(d, in_branch, false, out)),
            ExprKind::Full {
                shape, value: v, ..
            } => {
                shape
                    .iter()
                    .for_each(|d| self.expr(d, in_branch, false, out));
                self.expr(v, in_branch, false, out);
            }
            ExprKind::Cast { value: v, .. } | ExprKind::Sum { value: v, .. } => {
                self.whole(v, out);
                self.expr(v, in_branch, value, out);
            }
            ExprKind::View { value: v, op } => {
                let (kind, s) = match op {
                    ViewOp::Reshape(_) => (ViewKind::Reshape, Surface::ViewReshape),
                    ViewOp::View(_) => (ViewKind::View, Surface::ViewView),
                    ViewOp::Squeeze(_) => (ViewKind::Squeeze, Surface::ViewSqueeze),
                    ViewOp::Unsqueeze(_) => (ViewKind::Unsqueeze, Surface::ViewUnsqueeze),
                    ViewOp::ViewAs(_) => (ViewKind::ViewAs, Surface::ViewViewAs),
                };
                out.insert(Feature::Surface(s));
                out.insert(Feature::View(kind));
                self.expr(v, in_branch, false, out);
                match op {
                    ViewOp::Reshape(d) | ViewOp::View(d) => {
                        d.iter().for_each(|x| self.expr(x, in_branch, false, out))
                    }
                    ViewOp::Squeeze(_) | ViewOp::Unsqueeze(_) => {}
                    ViewOp::ViewAs(o) => self.expr(o, in_branch, false, out),
                }
            }
            ExprKind::Permute { value: v, .. } => {
                out.insert(Feature::Permute);
                self.whole(v, out);
                self.expr(v, in_branch, false, out);
            }
            ExprKind::Op { op, args } => {
                out.insert(Feature::TorchOp(super::OpTag::of(op)));
                args.iter()
                    .for_each(|a| self.expr(a, in_branch, false, out));
            }
            ExprKind::Alloc { kind, shape, .. } => {
                out.insert(Feature::Surface(match kind {
                    AllocKind::Empty => Surface::AllocEmpty,
                    AllocKind::Zeros => Surface::AllocZeros,
                }));
                match shape {
                    AllocShape::Dims(d) => {
                        out.insert(Feature::Surface(Surface::AllocDims));
                        d.iter().for_each(|x| self.expr(x, in_branch, false, out));
                    }
                    AllocShape::Like(t) => {
                        out.insert(Feature::Surface(Surface::AllocLike));
                        self.expr(t, in_branch, false, out);
                    }
                }
            }
        }
    }

    /// A narrowing read of a loaded block, under casts and sums.
    fn block_read(&self, e: &Expr) -> bool {
        if let ExprKind::Cast { value, .. } | ExprKind::Sum { value, .. } = &e.kind {
            return self.block_read(value);
        }
        let ExprKind::Subscript { value, indices } = &e.kind else {
            return false;
        };
        indices.iter().any(Index::is_narrowing)
            && matches!(&value.kind, ExprKind::Name(n) if self.loads.contains_key(n.as_str()))
    }

    /// A loaded block consumed by a non-view operation.
    fn whole(&self, operand: &Expr, out: &mut Out) {
        if let ExprKind::Name(n) = &operand.kind
            && self.loads.contains_key(n.as_str())
        {
            out.insert(Feature::WholeBlockConsumer);
        }
    }
}

fn attr_tag(a: TileAttr) -> (AttrTag, Surface) {
    match a {
        TileAttr::Begin => (AttrTag::Begin, Surface::AttrBegin),
        TileAttr::End => (AttrTag::End, Surface::AttrEnd),
        TileAttr::Index => (AttrTag::Index, Surface::AttrIndex),
        TileAttr::Count => (AttrTag::Count, Surface::AttrCount),
        TileAttr::BlockSize => (AttrTag::BlockSize, Surface::AttrBlockSize),
        TileAttr::Id => (AttrTag::Id, Surface::AttrId),
    }
}

pub(super) fn bin_surface(op: BinOp) -> Surface {
    match op {
        BinOp::Add => Surface::BinAdd,
        BinOp::Sub => Surface::BinSub,
        BinOp::Mul => Surface::BinMul,
        BinOp::Div => Surface::BinDiv,
        BinOp::FloorDiv => Surface::BinFloorDiv,
    }
}

fn expr_surface(e: &Expr) -> Surface {
    match &e.kind {
        ExprKind::Name(_) => Surface::ExprName,
        ExprKind::Int(_) => Surface::ExprInt,
        ExprKind::Float(_) => Surface::ExprFloat,
        ExprKind::Size { .. } => Surface::ExprSize,
        ExprKind::TileAttr { .. } => Surface::ExprTileAttr,
        ExprKind::Binary { .. } => Surface::ExprBinary,
        ExprKind::Compare { .. } => Surface::ExprCompare,
        ExprKind::Load {
            explicit: false, ..
        } => Surface::ExprLoad,
        ExprKind::Load { explicit: true, .. } => Surface::ExprLoadExplicit,
        ExprKind::Subscript { .. } => Surface::ExprSubscript,
        ExprKind::Arange { .. } => Surface::ExprArange,
        ExprKind::Zeros { .. } => Surface::ExprZeros,
        ExprKind::Full { .. } => Surface::ExprFull,
        ExprKind::Cast { .. } => Surface::ExprCast,
        ExprKind::Sum { .. } => Surface::ExprSum,
        ExprKind::View { .. } => Surface::ExprView,
        ExprKind::Permute { .. } => Surface::ExprPermute,
        ExprKind::Alloc { .. } => Surface::ExprAlloc,
        ExprKind::Op { .. } => Surface::ExprOp,
    }
}

fn index_surface(i: &Index) -> Surface {
    match i {
        Index::Full => Surface::IndexFull,
        Index::NewAxis => Surface::IndexNewAxis,
        Index::Int(_) => Surface::IndexInt,
        Index::Slice { .. } => Surface::IndexSlice,
        Index::Expr(_) => Surface::IndexExpr,
    }
}

fn index_exprs(indices: &[Index]) -> Vec<&Expr> {
    let mut out = Vec::new();
    for i in indices {
        match i {
            Index::Full | Index::NewAxis | Index::Int(_) => {}
            Index::Slice { start, stop, step } => {
                out.extend([start, stop, step].into_iter().flatten())
            }
            Index::Expr(e) => out.push(e),
        }
    }
    out
}
