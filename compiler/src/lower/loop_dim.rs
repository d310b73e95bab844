//! The loop-dimension record (spec §1.3, §4 D2): everything tile attributes and masks read
//! about one dimension of a loop (offset, begin, end, block, mask), built in one place so
//! `tile.count` always uses the loop's own begin and end.

use lang::ir::sym::BlockId;
use lang::pallas::{self, Expr as P, Jnp};
use lang::tensor::DType;

/// The record of one loop dimension: everything tile attributes and masks read. Built only by
/// [`LoopDim::new`], which takes the begin and the end together, so `tile.count` can never see
/// one without the other (spec §4 D2).
#[derive(Clone, Debug, PartialEq)]
pub struct LoopDim {
    /// The block id.
    pub bid: BlockId,
    /// `hl.grid` (scalar index, block 1, never masked).
    pub grid: bool,
    /// The offset variable (`offset_<bid>`): the tile's first index.
    pub offset: String,
    /// The loop's begin.
    pub begin: P,
    /// The loop's end.
    pub end: P,
    /// The block size as emitted (`_BLOCK_SIZE_<bid>`, or 1 for grids).
    pub block: P,
    /// The effective block size.
    pub bs: i64,
    /// The mask variable (`mask_<bid>`), present iff the extent may not be a multiple of the
    /// block.
    pub mask: Option<String>,
    /// Whether every offset is known to be a multiple of the block (a static begin that is
    /// one), so `pl.multiple_of(offset, bs)` is a true claim (Mosaic verifies it on
    /// constants).
    pub aligned: bool,
}

impl LoopDim {
    /// The record of loop dimension `bid` running from `begin` to `end` by `bs`;
    /// `static_extent` is `end - begin` when both are static.
    pub fn new(
        bid: BlockId,
        grid: bool,
        begin: P,
        end: P,
        bs: i64,
        static_extent: Option<i64>,
    ) -> LoopDim {
        let begin_lit = begin.as_int();
        let masked = !grid
            && match static_extent {
                Some(e) => e > 0 && e % bs != 0,
                None => bs != 1,
            };
        LoopDim {
            bid,
            grid,
            offset: format!("offset_{bid}"),
            begin,
            end,
            block: if grid {
                P::Int(1)
            } else {
                P::name(format!("_BLOCK_SIZE_{bid}"))
            },
            bs,
            mask: masked.then(|| format!("mask_{bid}")),
            aligned: matches!(begin_lit, Some(b) if bs != 0 && b % bs == 0),
        }
    }

    /// `t.begin`: `offset_<bid>`.
    pub fn begin_attr(&self) -> P {
        P::name(&self.offset)
    }

    /// `t.end`: `offset + bs`, or `jnp.minimum(offset + bs, end)` when masked (spec §1.3).
    pub fn tile_end(&self) -> P {
        let next = P::name(&self.offset).plus(self.block.clone());
        match &self.mask {
            Some(_) => Jnp::Minimum(Box::new(next), Box::new(self.end.clone())).into(),
            None => next,
        }
    }

    /// `end - begin`.
    pub fn extent(&self) -> P {
        match self.begin {
            P::Int(0) => self.end.clone(),
            // Not folded, so the emitted `tile.count` shows both bounds (spec §4 D2).
            _ => P::Binary {
                op: pallas::BinOp::Sub,
                lhs: Box::new(self.end.clone()),
                rhs: Box::new(self.begin.clone()),
            },
        }
    }

    /// `t.count` and the trip count: `(end - begin + bs - 1) // bs`, from this loop's own
    /// begin and end.
    pub fn count(&self) -> P {
        self.extent()
            .plus(self.block.clone())
            .minus(P::Int(1))
            .floor_div(self.block.clone())
    }

    /// `t.count` as the pre-#3201 lowering computed it (fault D2): `cdiv(end - 0, bs)`, the
    /// loop's begin dropped.
    pub fn count_without_begin(&self) -> P {
        self.end
            .clone()
            .plus(self.block.clone())
            .minus(P::Int(1))
            .floor_div(self.block.clone())
    }

    /// `t.id`: `offset // bs`.
    pub fn id(&self) -> P {
        P::name(&self.offset).floor_div(self.block.clone())
    }

    /// `t.index`: `offset + jnp.arange(0, bs, dtype=jnp.int32)`.
    pub fn index(&self) -> P {
        P::name(&self.offset).plus(arange(self.block.clone()))
    }
}

/// `jnp.arange(0, n, dtype=jnp.int32)`.
pub(super) fn arange(n: P) -> P {
    Jnp::Arange {
        start: Box::new(P::Int(0)),
        stop: Box::new(n),
        dtype: DType::Int32,
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_count_uses_the_loops_own_begin_and_end() {
        // hl.tile(4, 12, block_size=4): count = (12 - 4 + 4 - 1) // 4 = 2 (spec §4 D2).
        let ld = LoopDim::new(0, false, P::Int(4), P::Int(12), 4, Some(8));
        assert!(ld.mask.is_none());
        let count = ld.count();
        let block = P::name("_BLOCK_SIZE_0");
        let eight = P::Binary {
            op: pallas::BinOp::Sub,
            lhs: Box::new(P::Int(12)),
            rhs: Box::new(P::Int(4)),
        };
        let expect = eight.plus(block.clone()).minus(P::Int(1)).floor_div(block);
        assert_eq!(count, expect);
        let masked = LoopDim::new(1, false, P::Int(0), P::name("live"), 2, None);
        assert_eq!(masked.mask.as_deref(), Some("mask_1"));
        let unit = LoopDim::new(2, false, P::Int(0), P::name("live"), 1, None);
        assert!(unit.mask.is_none());
    }
}
