//! Fake shapes: size arguments (a tile or a block-size symbol is its block's dim), views
//! (`reshape`/`view` with `-1`, `squeeze`, `unsqueeze`, `view_as`), and Helion's shape of a
//! subscript (spec §1.10), including when a literal slice of a tiled dim stays a symbol of its
//! own.

use super::{Dim, Infer, Ty, TypeError, err};
use crate::ir::blocks::BlockSource;
use crate::ir::sym::{Affine, BlockId, Sym};
use crate::ir::{Expr, Index, Span, ViewOp};

impl Infer<'_> {
    /// A size argument (`hl.zeros([t.block_size, 128])`, `.reshape(...)`): concrete, with the
    /// block id when it is a block-size symbol.
    pub(super) fn dim_arg(&mut self, e: &Expr) -> Result<Dim, TypeError> {
        let sizes = self.sizes;
        let ty = self.expr(e)?;
        // `hl.zeros([tile, n])`: a tile as a dim means its block size.
        if let Ty::Tile(b) = *ty {
            return Ok(Dim::tiled(sizes.effective[b], b));
        }
        let a = ty
            .int_value()
            .ok_or_else(|| err(e.span, "a dimension must be an int"))?;
        if let Some(c) = a.as_const() {
            return Ok(Dim::fixed(c));
        }
        if let Some(Sym::BlockSize(b)) = a.as_sym() {
            return Ok(Dim::tiled(self.sizes.effective[b], b));
        }
        Err(err(e.span, format!("dimension `{a}` is not static")))
    }

    pub(super) fn view(
        &mut self,
        dims: &[Dim],
        op: &ViewOp,
        span: Span,
    ) -> Result<Vec<Dim>, TypeError> {
        let numel: i64 = dims.iter().map(|d| d.size).product();
        Ok(match op {
            ViewOp::Reshape(args) | ViewOp::View(args) => {
                let mut out = Vec::new();
                let mut hole = None;
                for a in args {
                    if self.expr(a)?.const_int() == Some(-1) {
                        hole = Some(out.len());
                        out.push(Dim::fixed(-1));
                    } else {
                        out.push(self.dim_arg(a)?);
                    }
                }
                let known: i64 = out
                    .iter()
                    .filter(|d| d.size != -1)
                    .map(|d| d.size)
                    .product();
                if let Some(h) = hole {
                    if known == 0 || numel % known != 0 {
                        return Err(err(span, "reshape's -1 cannot be inferred"));
                    }
                    let size = numel / known;
                    out[h] = match hole_symbol(dims, &out, h) {
                        Hole::Constant => Dim::fixed(size),
                        // The block's symbol itself: a later view divides it out again
                        // (campaign finding 0088: `[u, 2, 16].reshape(-1, 2, 16)` is
                        // `[u, 2, 16]`, and its `.reshape(-1, 16)` is `[2*u, 16]`, which
                        // Helion 1.5.1 refuses as having no concrete physical shape).
                        Hole::Block(b) => Dim::tiled(size, b),
                        Hole::Opaque => Dim {
                            opaque: true,
                            ..Dim::fixed(size)
                        },
                    };
                }
                if out.iter().map(|d| d.size).product::<i64>() != numel {
                    return Err(err(
                        span,
                        format!(
                            "cannot reshape {:?} to {:?}",
                            dims.iter().map(|d| d.size).collect::<Vec<_>>(),
                            out.iter().map(|d| d.size).collect::<Vec<_>>()
                        ),
                    ));
                }
                out
            }
            ViewOp::Squeeze(d) => {
                let r = dims.len() as i64;
                let k = if *d < 0 { d + r } else { *d };
                if !(0..r).contains(&k) {
                    return Err(err(span, format!("squeeze({d}) of a rank-{r} tensor")));
                }
                let mut out = dims.to_vec();
                if out[k as usize].size == 1 {
                    out.remove(k as usize);
                }
                out
            }
            ViewOp::Unsqueeze(d) => {
                let r = dims.len() as i64;
                let k = if *d < 0 { d + r + 1 } else { *d };
                if !(0..=r).contains(&k) {
                    return Err(err(span, format!("unsqueeze({d}) of a rank-{r} tensor")));
                }
                let mut out = dims.to_vec();
                out.insert(k as usize, Dim::fixed(1));
                out
            }
            ViewOp::ViewAs(o) => match self.expr(o)? {
                Ty::Tensor { dims: od, .. } => {
                    if od.iter().map(|d| d.size).product::<i64>() != numel {
                        return Err(err(span, "view_as of a tensor with another element count"));
                    }
                    od.clone()
                }
                Ty::HostTensor { shape, .. } => shape.iter().map(|&s| Dim::fixed(s)).collect(),
                other => return Err(err(span, format!("view_as of a non-tensor ({other:?})"))),
            },
        })
    }

    /// Helion's fake shape of `base[indices]` (spec §1.10).
    pub(super) fn index(
        &mut self,
        dims: &[Dim],
        indices: &[Index],
        span: Span,
    ) -> Result<Vec<Dim>, TypeError> {
        let mut out = Vec::new();
        let mut k = 0usize;
        let consumed = indices
            .iter()
            .filter(|i| !matches!(i, Index::NewAxis))
            .count();
        if consumed > dims.len() {
            return Err(err(
                span,
                format!("{consumed} indices for a rank-{} tensor", dims.len()),
            ));
        }
        for index in indices {
            match index {
                Index::NewAxis => out.push(Dim::fixed(1)),
                Index::Full => {
                    out.push(dims[k]);
                    k += 1;
                }
                Index::Int(_) => k += 1,
                Index::Slice { start, stop, step } => {
                    let mut bound =
                        |b: &Option<Expr>| -> Result<Option<Option<Affine>>, TypeError> {
                            match b {
                                None => Ok(None),
                                Some(x) => Ok(Some(self.expr(x)?.int_value())),
                            }
                        };
                    let (s, t, st) = (bound(start)?, bound(stop)?, bound(step)?);
                    let step = match st {
                        None => 1,
                        Some(a) => a.and_then(|a| a.as_const()).unwrap_or(1).max(1),
                    };
                    let extent = dims[k].size;
                    let lo = match s {
                        None => Some(Affine::constant(0)),
                        Some(a) => a,
                    };
                    let hi = match t {
                        None => Some(Affine::constant(extent)),
                        Some(a) => a,
                    };
                    let start = lo.as_ref().and_then(|l| l.as_const());
                    let len = match (lo, hi) {
                        (Some(lo), Some(hi)) => hi.sub(&lo).as_const(),
                        _ => None,
                    };
                    let len = len.ok_or_else(|| err(span, "a slice needs a static width"))?;
                    // D-1.5.1-03: on a concrete dim a literal slice is sized the way PyTorch
                    // clips it (a negative bound counts from the end, then each bound into
                    // [0, size], the stop at least the start); on a tiled dim the size stays
                    // `b - a`, the width the planner reads from the literal. (A host tensor's
                    // `x[t, -16:]` traces so in Helion; its backend refuses it after tracing,
                    // `trace.host-slice-unsupported`.)
                    let from_end = |v: i64| {
                        if v < 0 {
                            (v + extent).max(0)
                        } else {
                            v.min(extent)
                        }
                    };
                    let len = match (dims[k].block, start, step) {
                        (None, Some(a), 1) => (from_end(a + len) - from_end(a)).max(0),
                        (None | Some(_), _, _) => len,
                    };
                    let mut dim = Dim::fixed(((len + step - 1).div_euclid(step)).max(0));
                    if let (Some(b), Some(a), 1) = (dims[k].block, start, step) {
                        dim.sliced = self.slice_size_varies(b, a, a + len)
                            && self.slice_size_at_most(b, a, a + len) > 1;
                    }
                    if let (Some(b), Some(a), 1) = (dims[k].block, start, step)
                        && self.slice_size_is_symbolic(b, a, a + len)
                    {
                        dim.slice_of = Some((b, a, a + len));
                        dim.at_most_one = self.slice_size_at_most(b, a, a + len) <= 1;
                    }
                    out.push(dim);
                    k += 1;
                }
                Index::Expr(x) => {
                    let sizes = self.sizes;
                    match self.expr(x)? {
                        &Ty::Tile(b) => out.push(Dim::tiled(sizes.effective[b], b)),
                        Ty::Int(_) | Ty::GridIndex(_) => {}
                        // A rank-k index tensor contributes its k dims (advanced indexing);
                        // trace-time validation refuses k != 1 (`validate`).
                        Ty::Tensor { dims: id, .. } => out.extend_from_slice(id),
                        other => return Err(err(x.span, format!("unsupported index {other:?}"))),
                    }
                    k += 1;
                }
            }
        }
        out.extend_from_slice(&dims[k..]);
        Ok(out)
    }

    /// Whether the size `Max(a, Min(b, u))` of slice `a:b` of block `block`'s dim stays a
    /// symbol of its own in 1.5.1 (D-1.5.1-03). The block symbol `u` ranges over `[1, next_pow2(extent
    /// hint)]` whatever the block: where that pins the size it is a number (`0:1` is always 1;
    /// under `hl.tile(2)` `2:3` is always 0, so `x_block * x_block[2:3]` traces, measured),
    /// and a block above the extent does not pin it (measured: block 16 over 8 rows,
    /// `x_block[4:8] * x_block[0:4]` is a ShapeMismatch; block 8 over 16 rows the same).
    /// The largest size of slice `a:b` of block `block`'s dim over the block symbol's range
    /// `[1, next_pow2(extent hint)]` (the size grows with the symbol).
    fn slice_size_at_most(&self, block: BlockId, a: i64, b: i64) -> i64 {
        a.max(b.min(self.block_symbol_top(block))) - a
    }

    /// The top of the range Helion gives block `block`'s symbol: `[1, next_pow2(extent hint)]`.
    fn block_symbol_top(&self, block: BlockId) -> i64 {
        let hint = self.sizes.extent_hint.get(block).copied().unwrap_or(1);
        (hint.max(1) as u64).next_power_of_two() as i64
    }

    fn slice_size_is_symbolic(&self, block: BlockId, a: i64, b: i64) -> bool {
        self.block_is_symbol(block) && self.slice_size_varies(block, a, b)
    }

    /// Whether the size `Max(a, Min(b, u)) - a` of slice `a:b` of block `block`'s dim takes
    /// more than one value over the block symbol's range `[1, next_pow2(extent hint)]`, so
    /// Helion cannot make it concrete for a resident view ([`Dim::sliced`], which also needs
    /// it to reach 2: a slice at most one row wide plans as a view in 1.5.1, measured).
    fn slice_size_varies(&self, block: BlockId, a: i64, b: i64) -> bool {
        let size = |u: i64| a.max(b.min(u)) - a;
        size(1) != size(self.block_symbol_top(block))
    }

    /// Whether block `block`'s size is a symbol while tracing. A fixed `block_size=` is a
    /// number, and a config block of 1 is specialized to 1 (measured: both trace
    /// `x_block[0:5] * x_block[1:6]` in 1.5.1), so only a config-driven block above 1 is.
    fn block_is_symbol(&self, block: BlockId) -> bool {
        matches!(self.blocks.blocks[block].source, BlockSource::Config(_))
            && self.sizes.effective[block] > 1
    }

    /// The size of dim `d` with every block symbol at the top of its range: a literal slice
    /// `a:b` of a tiled dim `Max(a, Min(b, u)) - a`, a whole tiled dim `u` (for a symbol),
    /// any other dim its size. Where two mismatching sizes agree so, torch's broadcasting
    /// lets them through while tracing ([`Infer::broadcast_pointwise`]).
    pub(super) fn symbol_top_size(&self, d: Dim) -> i64 {
        match (d.slice_of, d.block) {
            (Some((block, a, b)), _) => self.slice_size_at_most(block, a, b),
            (None, Some(block)) if self.block_is_symbol(block) => self.block_symbol_top(block),
            (None, Some(_) | None) => d.size,
        }
    }
}

/// What Helion's symbolic size of a `reshape`/`view` `-1` is ([`hole_symbol`]).
enum Hole {
    /// A constant.
    Constant,
    /// Exactly one block's size symbol.
    Block(BlockId),
    /// A size Helion cannot make concrete ([`Dim::opaque`]).
    Opaque,
}

/// The symbolic size of a `reshape`/`view` `-1`: the input's element count over the other
/// sizes, so the input's block symbols that the other sizes do not cancel stay in it. It is
/// concrete when none stays, or exactly one stays with no other factor (then it is that
/// block's size).
fn hole_symbol(input: &[Dim], out: &[Dim], hole: usize) -> Hole {
    if input.iter().any(|d| d.slice_of.is_some() || d.opaque) {
        return Hole::Opaque;
    }
    let mut symbols: Vec<BlockId> = input.iter().filter_map(|d| d.block).collect();
    let mut fixed_in: i64 = input
        .iter()
        .filter(|d| d.block.is_none())
        .map(|d| d.size)
        .product();
    let mut fixed_out: i64 = 1;
    for (_, d) in out.iter().enumerate().filter(|&(i, _)| i != hole) {
        match d.block {
            Some(b) => match symbols.iter().position(|&s| s == b) {
                Some(i) => {
                    symbols.swap_remove(i);
                }
                // A symbol the input does not hold would divide the `-1`.
                None => return Hole::Opaque,
            },
            None => fixed_out *= d.size,
        }
    }
    // The remaining constant factor, when it is an integer.
    if fixed_out != 0 && fixed_in % fixed_out == 0 {
        fixed_in /= fixed_out;
    } else if symbols.is_empty() {
        return Hole::Constant;
    } else {
        return Hole::Opaque;
    }
    match symbols[..] {
        [] => Hole::Constant,
        [b] if fixed_in == 1 => Hole::Block(b),
        _ => Hole::Opaque,
    }
}
