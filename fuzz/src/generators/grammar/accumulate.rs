//! The accumulator `acc` and the stores: how `acc` starts, the updates that fold each item's
//! value into it (ones that commute and ones whose result depends on the iteration order), the
//! stores that write it out (the grid's output row is in [`super::kernel`]; here the top-level
//! tile's rows and the per-token trace), and the writes of `y` into the loaded tensor.

use super::{Gen, Scope, when};
use crate::generators::make::*;
use arbitrary::Result;
use lang::ir::{AtomicOp, BinOp, DType, Expr, ExprKind, Index, Stmt, StmtKind, TileAttr};

/// How `acc` starts when no host tensor gives it: mostly `hl.zeros`, now and then `hl.full`
/// of ones.
const ACC_START_ZEROS: u32 = 5;
const ACC_START_ONES: u32 = 1;

/// The spellings of an accumulator update ([`Gen::acc_update`]). The commuting ones:
/// `acc = acc + v` most of all, then `acc += v` (never while `acc` is a view of a host tensor,
/// which an in-place update would write through), `acc = v + acc`, `acc = acc + v * 0.5` and
/// `acc = acc - v / 2.0`.
const UPDATE_ADD: u32 = 6;
const UPDATE_AUG_ADD: u32 = 2;
const UPDATE_ADD_SWAPPED: u32 = 1;
const UPDATE_ADD_HALF: u32 = 1;
const UPDATE_SUB_HALF: u32 = 1;
/// The order-dependent ones, under [`GenConfig::ordered_updates`]: `acc = acc * 0.5 + v`
/// (decay) and `acc = v - acc` (alternating signs).
///
/// [`GenConfig::ordered_updates`]: super::GenConfig::ordered_updates
const UPDATE_DECAY: u32 = 2;
const UPDATE_ALTERNATE: u32 = 1;

impl Gen<'_, '_> {
    pub(super) fn acc_init(&mut self, from_init: bool) -> Result<Expr> {
        if from_init {
            self.acc_is_view = true;
            let idx = self.trim(
                std::iter::once(ix(name("request")))
                    .chain(self.acc_shape.iter().map(|_| Index::Full))
                    .collect(),
            );
            return Ok(cast(load("init", idx, false), DType::Float32));
        }
        let shape = ints(&self.acc_shape);
        Ok(match self.weighted(&[ACC_START_ZEROS, ACC_START_ONES])? {
            0 => ex(ExprKind::Zeros {
                shape,
                dtype: DType::Float32,
            }),
            _ => ex(ExprKind::Full {
                shape,
                value: Box::new(float(1.0)),
                dtype: DType::Float32,
            }),
        })
    }

    /// `acc = acc + v`, or one of its other spellings. Most spellings commute across
    /// iterations, so a lowering that visits the right rows in the wrong order (a shifted or
    /// rotated run, a loop walked from the wrong begin) sums to the same total; the ordered
    /// ones (`acc * 0.5 + v` weights each iteration by its distance from the end, `v - acc`
    /// alternates signs) make the order of the contributions part of the result.
    pub(super) fn acc_update(&mut self, v: Expr) -> Result<Stmt> {
        // Drawn only when the knob is on: with it off the byte stream, and so every case of
        // the default config, is what it was before torch ops existed.
        let v = if self.cfg.torch_ops && self.pct(self.cfg.torch_op_percent)? {
            self.torch_op(v)?
        } else {
            v
        };
        self.acc_fold(v)
    }

    /// [`Gen::acc_update`] of a scalar (a tile attribute): torch's ops take tensors, so it is
    /// folded in as it is.
    pub(super) fn acc_fold(&mut self, v: Expr) -> Result<Stmt> {
        let ordered = self.cfg.ordered_updates;
        Ok(
            match self.weighted(&[
                UPDATE_ADD,
                when(!self.acc_is_view, UPDATE_AUG_ADD),
                UPDATE_ADD_SWAPPED,
                UPDATE_ADD_HALF,
                UPDATE_SUB_HALF,
                when(ordered, UPDATE_DECAY),
                when(ordered, UPDATE_ALTERNATE),
            ])? {
                0 => assign("acc", add(name("acc"), v)),
                1 => st(StmtKind::AugAssign {
                    target: "acc".into(),
                    op: BinOp::Add,
                    value: v,
                }),
                2 => assign("acc", add(v, name("acc"))),
                3 => assign("acc", add(name("acc"), bin(BinOp::Mul, v, float(0.5)))),
                4 => assign("acc", sub(name("acc"), bin(BinOp::Div, v, float(2.0)))),
                5 => assign("acc", add(bin(BinOp::Mul, name("acc"), float(0.5)), v)),
                _ => assign("acc", sub(v, name("acc"))),
            },
        )
    }

    /// The store of the top-level-tile family: the tile's first row, or the whole tile.
    pub(super) fn top_level_store(&mut self) -> Result<Stmt> {
        let var = self
            .outer
            .as_ref()
            .map(|o| o.var.clone())
            .unwrap_or_default();
        let rest: Vec<Index> = (1..self.x_shape.len()).map(|_| Index::Full).collect();
        let explicit = self.explicit && self.u.ratio(1, 2)?;
        if self.cfg.whole_block && self.pct(self.cfg.whole_block_percent)? {
            let idx = self.trim(std::iter::once(ix(name(&var))).chain(rest).collect());
            let v = add(cast(name("x_block"), DType::Float32), name("acc"));
            return Ok(st(StmtKind::Store {
                tensor: "out".into(),
                indices: idx,
                value: v,
                explicit,
            }));
        }
        // `acc` holds the last dims of a row: on a rank-4 input the dims between the row and
        // those are selected at 0, so the stored value has its target's rank (Helion 1.5.1
        // refuses a lower-rank store, D-1.5.1-20).
        let leading = rest.len().saturating_sub(self.acc_shape.len());
        let idx = self.trim(
            std::iter::once(ix(attr(&var, TileAttr::Begin)))
                .chain((0..leading).map(|_| Index::Int(0)))
                .chain(rest.into_iter().skip(leading))
                .collect(),
        );
        Ok(st(StmtKind::Store {
            tensor: "out".into(),
            indices: idx,
            value: name("acc"),
            explicit,
        }))
    }

    /// A store or atomic of `y`'s tile into `x` (or its host alias): spec D1 and R-MUT.
    pub(super) fn write_stmt(&mut self, alias: bool) -> Result<Stmt> {
        let var = "outer";
        let tensor = if alias { "x_alias" } else { "x" }.to_string();
        let idx = self.trim(
            std::iter::once(ix(name(var)))
                .chain((1..self.x_shape.len()).map(|_| Index::Full))
                .collect(),
        );
        let value = load("y", idx.clone(), false);
        if self.u.ratio(1, 2)? {
            let explicit = self.explicit && self.u.ratio(1, 2)?;
            return Ok(st(StmtKind::Store {
                tensor,
                indices: idx,
                value,
                explicit,
            }));
        }
        let ops: Vec<AtomicOp> = AtomicOp::ALL
            .into_iter()
            .filter(|op| match op {
                AtomicOp::Add | AtomicOp::Max | AtomicOp::Min | AtomicOp::Xchg => true,
                AtomicOp::And | AtomicOp::Or | AtomicOp::Xor | AtomicOp::Cas => {
                    self.dtype == DType::Int32
                }
            })
            .collect();
        let op = if self.u.ratio(1, 2)? {
            AtomicOp::Add
        } else {
            *self.u.choose(&ops)?
        };
        let expected = (op == AtomicOp::Cas).then(|| load("y", idx.clone(), false));
        Ok(st(StmtKind::Atomic {
            op,
            tensor,
            indices: idx,
            expected,
            value,
        }))
    }

    /// `trace[outer.begin + local.begin, :, :] = acc` inside a block-1 inner loop.
    pub(super) fn trace_store(&mut self, sc: &Scope) -> Result<Stmt> {
        let o = self.outer().clone();
        let i = sc
            .inner
            .clone()
            .expect("trace stores are inside inner loops");
        self.trace_written = true;
        let row = add(attr(&o.var, TileAttr::Begin), attr(&i.var, TileAttr::Begin));
        let idx = self.trim(
            std::iter::once(ix(row))
                .chain(self.acc_shape.iter().map(|_| Index::Full))
                .collect(),
        );
        Ok(st(StmtKind::Store {
            tensor: "trace".into(),
            indices: idx,
            value: name("acc"),
            explicit: false,
        }))
    }
}
