//! The kernel skeleton: [`Gen::case`] decides, in order, everything around the items — the
//! dtype and loop type, the family (an `hl.grid` around the tile loop, or the tile loop as the
//! launch grid), `x`'s shape, whether the case writes the tensor it loads, the grid, the trace
//! output, the outer tile loop's range and block, the host allocations, the outer body, the
//! inputs, the config and the call — and the blocks of the outer loop and of the `tile.count`
//! loop ahead of it.

use super::{Base, Family, Gen, Outer, Plan, Scope};
use crate::generators::fixup::{canonical_lists, subscript_partial_lists};
use crate::generators::make::*;
use crate::generators::shape::{Dim, Val};
use arbitrary::Result;
use lang::ir::blocks::minimum_block;
use lang::ir::{
    AllocKind, AllocShape, Arg, CASE_VERSION, Call, Case, Config, DType, Expr, ExprKind, Index,
    Kernel, LoopType, Param, ParamKind, Span, Stmt, StmtKind, TileAttr, ViewOp,
};

/// The outer tile loop's variable.
const OUTER: &str = "outer";

/// The rank of `x`: 3-D mostly (the tiled dim has alignment 1, so the configured block is the
/// effective one), sometimes 4-D (views with hidden dims) or 2-D rows, those more often with
/// float32 inputs (2-D rows are float32-style).
const RANKS: [usize; 3] = [3, 4, 2];
const RANK_3: u32 = 14;
const RANK_4: u32 = 3;
const RANK_2_FLOAT32: u32 = 3;
const RANK_2_OTHER: u32 = 1;

/// The lanes of `x`'s last dim: mostly a full 128, now and then fewer.
const LANES: [usize; 5] = [128, 64, 16, 8, 1];
const LANE_WEIGHTS: [u32; 5] = [12, 2, 2, 1, 1];

/// How the outer loop's end spells `x`'s rows: mostly `x.size(0)`, then the literal, a host
/// name bound to `x.size(0)`, or an int parameter.
const END_SIZE: u32 = 4;
const END_LITERAL: u32 = 2;
const END_HOST_NAME: u32 = 1;
const END_INT_PARAM: u32 = 1;

/// The outer tile loop's range over `x`'s first dim, and its block.
struct OuterRange {
    /// `x.size(0)`.
    n: usize,
    begin: usize,
    end: usize,
    block: usize,
    /// The fewest live rows any tile has (the last one's).
    live_min: usize,
}

impl OuterRange {
    fn extent(&self) -> usize {
        self.end - self.begin
    }
}

/// Where a case's shape sits against its outer block
/// ([`GenConfig::boundary_shape_percent`](super::GenConfig::boundary_shape_percent)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Boundary {
    /// The loop's extent is one row short of a multiple of the block: the last tile is one
    /// row short of full.
    OneBelow,
    /// The extent is a multiple of the block: no partial tile.
    At,
    /// The extent is one row past a multiple: the last tile holds a single row.
    OneAbove,
    /// `x` has a single row.
    SingleRow,
    /// `x` has no rows: drawn as a single row, then emptied ([`empty_rows`]), so a loop over
    /// its rows runs no tile and torch returns the untouched or empty outputs. Helion 1.5.1
    /// cannot run such a kernel (known issues `helion-empty-launch-grid`,
    /// `helion-empty-operand-dma-slice`) and our model answers `unsupported`: the reference and
    /// Helion's eager mode check it.
    Empty,
}

impl Boundary {
    /// Whether a block of `block` rows puts an extent of `extent` rows at this boundary.
    fn fits(self, extent: usize, block: usize) -> bool {
        match self {
            Boundary::OneBelow => extent % block == block - 1,
            Boundary::At => block <= extent && extent.is_multiple_of(block),
            // A single row under a block of two rows or more: one tile, one live row.
            Boundary::OneAbove | Boundary::SingleRow | Boundary::Empty => extent % block == 1,
        }
    }

    /// The rows of a 2-D `x` at this boundary under the smallest block its sublane alignment
    /// allows (`minimum_block(rows, 8)`: the next power of two below 8 rows, else 8): 3 rows
    /// under a block of 4, 7 and 15 under 8 are one short; 9 under 8 is one past.
    fn rows_2d(self) -> &'static [usize] {
        match self {
            Boundary::OneBelow => &[3, 7, 15],
            Boundary::At => &[2, 4, 8, 16],
            Boundary::OneAbove => &[9],
            Boundary::SingleRow | Boundary::Empty => &[1],
        }
    }
}

/// The launch-grid blocks that leave no partial last block of `x`'s `rows`: divisors of `rows`
/// of at least `min_block`, never 1 over an odd `rows`: a config-driven block of 1 is raised to
/// 2 wherever a tile's `index` or a rank-1 tensor of its length exists (D-1.5.1-08), which
/// would leave a partial last block again. A block may exceed the loop's extent (one tile);
/// `rows` itself always qualifies unless it is below `min_block`. Empty where none does; the
/// caller then draws as usual.
fn whole_grid_blocks_of(rows: usize, min_block: usize) -> Vec<usize> {
    (min_block.max(1)..=rows)
        .filter(|&b| rows.is_multiple_of(b) && (b > 1 || rows.is_multiple_of(2) || rows == 1))
        .collect()
}

/// The rows of a 2-D `x` whose launch-grid block can divide them: `rows` when a power of two,
/// else the largest power of two in `lo..=hi` below it, else the smallest above it, else
/// `rows` (no power of two in range).
fn whole_block_rows(rows: usize, lo: usize, hi: usize) -> usize {
    if rows.is_power_of_two() {
        return rows;
    }
    let powers = || {
        (0..5)
            .map(|k| 1usize << k)
            .filter(|p| (lo..=hi).contains(p))
    };
    powers()
        .rfind(|&p| p < rows)
        .or_else(|| powers().find(|&p| p > rows))
        .unwrap_or(rows)
}

/// Empties `x` of a case drawn with one row ([`Boundary::Empty`]): `x` becomes
/// `torch.zeros` of no rows (every dtype has it), and the `int` argument `n` that stood for its
/// one row ([`Gen::outer_end`]) becomes 0. A loop bounded by `x.size(0)` (or by `n`) then runs no tile; one bounded by
/// a literal would still read the missing row ([`Gen::case`] keeps such a draw's single row).
fn empty_rows(case: &mut Case, x_shape: &[usize], dtype: DType) {
    let mut shape = x_shape.to_vec();
    shape[0] = 0;
    if let Some(x) = case.inputs.iter_mut().find(|i| i.name == "x") {
        x.ctor = lang::ir::Ctor::Zeros { shape };
        x.dtype = (dtype != DType::Float32).then_some(dtype);
        x.chain.clear();
    }
    for (p, a) in case.kernel.params.iter().zip(case.call.args.iter_mut()) {
        if p.name == "n" && p.kind == ParamKind::Int && *a == Arg::Int(1) {
            *a = Arg::Int(0);
        }
    }
}

/// The kernel's parameters and the call's arguments, in the same order.
struct Signature {
    params: Vec<Param>,
    args: Vec<Arg>,
}

impl Signature {
    fn push(&mut self, name: &str, kind: ParamKind, arg: Arg) {
        self.params.push(Param {
            name: name.into(),
            kind,
            span: Span::default(),
        });
        self.args.push(arg);
    }
}

impl Gen<'_, '_> {
    /// The case: the decisions below, in the order they draw from the input. The order is part
    /// of what a seed means (moving a draw changes every case after it), so each step keeps its
    /// place even where it could be decided elsewhere.
    pub(super) fn case(mut self) -> Result<Case> {
        // Drawn only with the knob on (`pct(0)` draws nothing): default seeds are unchanged.
        if self.pct(self.cfg.production_percent)? {
            return self.production_case();
        }
        self.choose_dtype()?;
        self.choose_loop_type()?;
        self.choose_explicit_memory_ops()?;
        let family = self.choose_family()?;
        let whole_grid_blocks = self.choose_whole_grid_blocks(family)?;
        self.choose_x_shape(whole_grid_blocks)?;
        let (writes, alias) = self.choose_writes()?;
        self.writes_x = writes;
        let (grid, init_acc) = self.choose_grid(family, writes)?;
        // Drawn only with the knob on (`pct(0)` draws nothing): default seeds are unchanged.
        let gathers = !writes && self.pct(self.cfg.gather_percent)?;
        self.gathers = gathers;
        let plan = Plan {
            family,
            writes,
            alias,
            grid,
            init_acc,
            gathers,
        };
        self.choose_trace(&plan)?;
        let mut sig = Self::signature(&plan);
        let range = self.choose_outer_range(whole_grid_blocks)?;
        let mut host = Vec::new();
        let end = self.outer_end(&range, &mut host, &mut sig)?;
        let begin = (range.begin > 0).then(|| int(range.begin as i64));
        self.allocate_outputs(&plan, &mut host)?;
        let acc_init = self.acc_init(plan.init_acc)?;
        let count_loop = self.count_loop_ahead(&plan)?;
        let outer_loop = self.outer_loop(&plan, &range, begin, end, &acc_init)?;
        let device = match plan.family {
            Family::Grid => self.grid_around(&plan, acc_init, count_loop, outer_loop)?,
            Family::TopLevelTile => outer_loop,
        };
        let mut body = host;
        body.push(device);
        body.push(self.return_outputs());
        let (inputs, seed) = self.choose_inputs(&plan)?;
        let mut config = self.choose_config_loop_type()?;
        canonical_lists(&mut body);
        let kernel = Kernel {
            name: "kernel".into(),
            params: sig.params,
            body,
            span: Span::default(),
        };
        self.choose_config_extras(&mut config, &kernel)?;
        let call = self.choose_call(sig.args)?;
        let mut case = Case {
            version: CASE_VERSION,
            kernel,
            config,
            inputs,
            seed,
            call,
        };
        self.choose_partial_index_lists(&mut case)?;
        if self.boundary == Some(Boundary::Empty) {
            // Only where every loop over `x`'s rows follows its size: a loop bounded by a
            // literal would read the missing row, so such a draw keeps its single row.
            let mut emptied = case.clone();
            empty_rows(&mut emptied, &self.x_shape, self.dtype);
            if crate::generators::validate_admissible(&emptied).is_ok() {
                case = emptied;
            }
        }
        Ok(case)
    }

    /// The input dtype, among those the config enables.
    fn choose_dtype(&mut self) -> Result<()> {
        let dtypes: Vec<DType> = DType::ALL
            .into_iter()
            .filter(|d| match d {
                DType::Float32 => self.cfg.float32,
                DType::Bfloat16 => self.cfg.bfloat16,
                DType::Int32 => self.cfg.int32,
            })
            .collect();
        self.dtype = *self.u.choose(&dtypes)?;
        Ok(())
    }

    /// The `pallas_loop_type`, among those the config enables.
    pub(super) fn choose_loop_type(&mut self) -> Result<()> {
        let loop_types: Vec<LoopType> = LoopType::ALL
            .into_iter()
            .filter(|l| match l {
                LoopType::Unroll => self.cfg.unroll,
                LoopType::ForiLoop => self.cfg.fori_loop,
                LoopType::EmitPipeline => self.cfg.emit_pipeline,
            })
            .collect();
        self.loop_type = *self.u.choose(&loop_types)?;
        Ok(())
    }

    /// Whether loads and stores may be spelled `hl.load(...)` / `hl.store(...)` (each one then
    /// draws its own spelling).
    fn choose_explicit_memory_ops(&mut self) -> Result<()> {
        self.explicit = self.cfg.explicit_memory_ops && self.u.ratio(1, 6)?;
        Ok(())
    }

    /// The family: the tile loop as the launch grid when the config allows one loop level only,
    /// else at [`GenConfig::top_level_tile_percent`](super::GenConfig::top_level_tile_percent);
    /// otherwise an `hl.grid` around it.
    fn choose_family(&mut self) -> Result<Family> {
        Ok(
            if self.cfg.max_depth == 1 || self.pct(self.cfg.top_level_tile_percent)? {
                Family::TopLevelTile
            } else {
                Family::Grid
            },
        )
    }

    /// Whether the launch grid's blocks tile `x`'s rows exactly: drawn only for the top-level
    /// tile family, where the outer loop is the launch grid and `x` and `out` reach the kernel
    /// as BlockSpec blocks of it (D-1.5.1-19). Helion 1.5.1's launcher cannot run a partial
    /// last block (known issue `helion-dma-tail-tile-traced-shape`), so such blocks are kept
    /// only at [`GenConfig::partial_grid_block_percent`](super::GenConfig::partial_grid_block_percent).
    fn choose_whole_grid_blocks(&mut self, family: Family) -> Result<bool> {
        Ok(match family {
            Family::TopLevelTile => !self.pct(self.cfg.partial_grid_block_percent)?,
            Family::Grid => false,
        })
    }

    /// `x`'s shape (rank, rows, sublanes, lanes) and the accumulator's (`x`'s last two dims).
    /// With `whole_grid_blocks`, a 2-D `x`'s rows are a power of two where the row range has
    /// one: its block must reach the sublane alignment of 8 (or the next power of two of a
    /// smaller dim), and only such rows are a multiple of that block.
    fn choose_x_shape(&mut self, whole_grid_blocks: bool) -> Result<()> {
        let flat = if self.dtype == DType::Float32 {
            RANK_2_FLOAT32
        } else {
            RANK_2_OTHER
        };
        let rank = RANKS[self.weighted(&[RANK_3, RANK_4, flat])?];
        // Mostly enough rows for several tiles with partial ones among them.
        let (lo, hi) = (self.cfg.min_rows as usize, self.cfg.max_rows as usize);
        let mut rows = if hi >= 4 && self.u.ratio(4, 5)? {
            self.range(lo.max(4), hi)?
        } else {
            self.range(lo, hi)?
        };
        self.boundary = self.choose_boundary()?;
        match self.boundary {
            Some(Boundary::SingleRow | Boundary::Empty) => rows = 1,
            // A 2-D `x`'s block is at least its sublane alignment (`minimum_block(rows, 8)`):
            // the rows themselves put it at the boundary.
            Some(kind) if rank == 2 => {
                let near: Vec<usize> = kind
                    .rows_2d()
                    .iter()
                    .copied()
                    .filter(|r| (lo..=hi).contains(r))
                    .collect();
                if !near.is_empty() {
                    rows = *self.u.choose(&near)?;
                }
            }
            // Otherwise the rows become the nearest count (fewer first) that some block of 2 to
            // 8 rows puts at the boundary: 12 rows have no block leaving one row over.
            Some(kind) => {
                let at = |r: &usize| (2..=8).any(|b| kind.fits(*r, b));
                if let Some(r) = (lo..=rows).rev().find(at).or_else(|| (rows..=hi).find(at)) {
                    rows = r;
                }
            }
            None => {}
        }
        if whole_grid_blocks && rank == 2 {
            rows = whole_block_rows(rows, lo, hi);
        }
        let lanes = LANES[self.weighted(&LANE_WEIGHTS)?];
        let sublanes = self.range(1, 2)?;
        let mut shape = match rank {
            2 => vec![rows, lanes],
            3 => vec![rows, sublanes, lanes],
            _ => vec![rows, self.range(1, 2)?, sublanes, lanes],
        };
        // Outputs shaped like x stay within 16x2x128 elements.
        while shape.iter().product::<usize>() > 4096 && shape[0] > 1 {
            shape[0] -= 1;
        }
        self.x_shape = shape;
        self.acc_shape = self.x_shape[(self.x_shape.len().max(3) - 2)..].to_vec();
        Ok(())
    }

    /// The tile boundary the case's shape sits at, if any
    /// ([`GenConfig::boundary_shape_percent`](super::GenConfig::boundary_shape_percent)); a
    /// single row, or none, only where the config's row range starts at one.
    fn choose_boundary(&mut self) -> Result<Option<Boundary>> {
        if !self.pct(self.cfg.boundary_shape_percent)? {
            return Ok(None);
        }
        let mut kinds = vec![Boundary::OneBelow, Boundary::At, Boundary::OneAbove];
        if self.cfg.min_rows <= 1 {
            kinds.push(Boundary::SingleRow);
            kinds.push(Boundary::Empty);
        }
        Ok(Some(*self.u.choose(&kinds)?))
    }

    /// Whether the case writes `y` into the tensor it loads, and whether through a host
    /// `view_as` alias.
    fn choose_writes(&mut self) -> Result<(bool, bool)> {
        let writes = self.cfg.writes && self.pct(self.cfg.write_percent)?;
        let alias = writes && self.pct(self.cfg.alias_write_percent)?;
        Ok((writes, alias))
    }

    /// The grid (`hl.grid(G)`, `G > 1` only when it runs over output rows, never beside a
    /// write) and whether `acc` then starts from a host tensor `init`.
    fn choose_grid(&mut self, family: Family, writes: bool) -> Result<(usize, bool)> {
        let mut grid = 1;
        let mut init_acc = false;
        if family == Family::Grid && !writes && self.pct(self.cfg.grid_over_rows_percent)? {
            grid = self.range(
                2.min(self.cfg.max_grid as usize),
                self.cfg.max_grid as usize,
            )?;
            init_acc = self.u.ratio(1, 2)?;
        }
        Ok((grid, init_acc))
    }

    /// Whether the case has a per-token trace output: only with one request (rows are
    /// overwritten per request), and room for the inner loops that write it.
    fn choose_trace(&mut self, plan: &Plan) -> Result<()> {
        self.trace = plan.family == Family::Grid
            && plan.grid == 1
            && self.x_shape.len() <= 3
            && self.cfg.max_depth >= 3
            && self.u.ratio(1, 5)?;
        Ok(())
    }

    /// The tensor parameters: `x`, then `y` when the case writes, then `init` when `acc` starts
    /// from it, then `idx` when it gathers. (An int parameter `n` may follow:
    /// [`Gen::outer_end`].)
    fn signature(plan: &Plan) -> Signature {
        let mut sig = Signature {
            params: Vec::new(),
            args: Vec::new(),
        };
        sig.push("x", ParamKind::Tensor, Arg::Input("x".into()));
        if plan.writes {
            sig.push("y", ParamKind::Tensor, Arg::Input("y".into()));
        }
        if plan.init_acc {
            sig.push("init", ParamKind::Tensor, Arg::Input("init".into()));
        }
        if plan.gathers {
            sig.push("idx", ParamKind::Tensor, Arg::Input("idx".into()));
        }
        sig
    }

    /// The outer tile loop's bounds and block; with `whole_grid_blocks`, a block that divides
    /// `x`'s rows ([`Gen::whole_grid_block`]).
    fn choose_outer_range(&mut self, whole_grid_blocks: bool) -> Result<OuterRange> {
        let n = self.x_shape[0];
        let min_block = if self.x_shape.len() == 2 {
            minimum_block(n as i64, 8) as usize
        } else {
            1
        };
        let nonzero = n >= 2 && self.pct(self.cfg.nonzero_begin_percent)?;
        let begin = if nonzero { self.range(1, n - 1)? } else { 0 };
        let end = if self.u.ratio(1, 6)? {
            self.range(begin + 1, n)?
        } else {
            n
        };
        let extent = end - begin;
        let block = match whole_grid_blocks.then(|| whole_grid_blocks_of(n, min_block)) {
            Some(blocks) if !blocks.is_empty() => self.whole_grid_block(&blocks, extent)?,
            _ => self.outer_block(extent, min_block)?,
        };
        let count = extent.div_ceil(block);
        let live_min = extent - (count - 1) * block;
        Ok(OuterRange {
            n,
            begin,
            end,
            block,
            live_min,
        })
    }

    /// The outer loop's end as the kernel spells it: a literal when the loop stops short of
    /// `x`'s rows; otherwise `x.size(0)`, the literal, a host name bound to `x.size(0)`, or an
    /// int parameter `n`.
    fn outer_end(
        &mut self,
        range: &OuterRange,
        host: &mut Vec<Stmt>,
        sig: &mut Signature,
    ) -> Result<Expr> {
        let n = range.n;
        if range.end != n {
            return Ok(int(range.end as i64));
        }
        Ok(
            match self.weighted(&[END_SIZE, END_LITERAL, END_HOST_NAME, END_INT_PARAM])? {
                0 => size("x", 0),
                1 => int(n as i64),
                2 => {
                    host.push(assign("n", size("x", 0)));
                    name("n")
                }
                _ => {
                    sig.push("n", ParamKind::Int, Arg::Int(n as i64));
                    name("n")
                }
            },
        )
    }

    /// The host allocations: `out` (zeros, or `torch.empty` where the grid overwrites every
    /// row; dims, or shaped like `x`), the `trace` output and the host alias `x_alias`.
    fn allocate_outputs(&mut self, plan: &Plan, host: &mut Vec<Stmt>) -> Result<()> {
        let out_dims: Vec<usize> = match plan.family {
            Family::Grid => [vec![plan.grid], self.acc_shape.clone()].concat(),
            Family::TopLevelTile => self.x_shape.clone(),
        };
        let out_alloc = match (plan.family, self.u.ratio(1, 4)?) {
            (Family::Grid, true) => AllocKind::Empty,
            _ => AllocKind::Zeros,
        };
        let out_shape = if plan.family == Family::TopLevelTile && self.u.ratio(1, 2)? {
            AllocShape::Like(Box::new(name("x")))
        } else {
            AllocShape::Dims(ints(&out_dims))
        };
        host.push(assign(
            "out",
            ex(ExprKind::Alloc {
                kind: out_alloc,
                shape: out_shape,
                dtype: Some(DType::Float32),
            }),
        ));
        if self.trace {
            host.push(assign(
                "trace",
                ex(ExprKind::Alloc {
                    kind: AllocKind::Zeros,
                    shape: AllocShape::Like(Box::new(name("x"))),
                    dtype: Some(DType::Float32),
                }),
            ));
        }
        if plan.alias {
            host.push(assign(
                "x_alias",
                view(name("x"), ViewOp::ViewAs(Box::new(name("x")))),
            ));
        }
        Ok(())
    }

    /// A `tile.count` loop ahead of the outer loop in the grid body: its config slot comes
    /// first in registration order, so it is drawn first.
    fn count_loop_ahead(&mut self, plan: &Plan) -> Result<Option<Stmt>> {
        if plan.family == Family::Grid
            && self.cfg.tile_attr_values
            && self.pct(self.cfg.tile_attr_percent / 2)?
        {
            Ok(Some(self.count_loop()?))
        } else {
            Ok(None)
        }
    }

    /// `for outer in hl.tile(...)`: its block (its config slot is registered before any inner
    /// loop's), then what its body knows about it ([`Outer`]), then the body.
    fn outer_loop(
        &mut self,
        plan: &Plan,
        range: &OuterRange,
        begin: Option<Expr>,
        end: Expr,
        acc_init: &Expr,
    ) -> Result<Stmt> {
        let block_expr = self.block_expr(range.block)?;
        self.enter_outer_loop(range);
        let body = self.outer_body(plan, acc_init)?;
        Ok(tile_loop(OUTER, begin, end, block_expr, body))
    }

    /// What every read in the outer body relies on: the block's rows and how many of them are
    /// live, and the block `x_block` as the first base to narrow.
    fn enter_outer_loop(&mut self, range: &OuterRange) {
        let extent = range.extent();
        let x_dims: Vec<Dim> = std::iter::once(Dim::Rows)
            .chain(self.x_shape[1..].iter().map(|&d| Dim::Fixed(d)))
            .collect();
        self.outer = Some(Outer {
            var: OUTER.to_string(),
            block: range.block,
            live_min: range.live_min,
            all_full: extent.is_multiple_of(range.block),
            unguarded: range.begin == 0
                && range.end == range.n
                && extent.is_multiple_of(range.block),
            bases: vec![Base {
                name: "x_block".into(),
                val: Val::new(x_dims),
            }],
            live: "live".into(),
        });
    }

    /// The outer body: the block's load, the top-level tile's `acc`, the write (before or after
    /// the items), `live`, the items, and the top-level tile's store.
    fn outer_body(&mut self, plan: &Plan, acc_init: &Expr) -> Result<Vec<Stmt>> {
        let x_load = self.trim(
            std::iter::once(ix(name(OUTER)))
                .chain((1..self.x_shape.len()).map(|_| self.full()))
                .collect(),
        );
        let explicit_load = self.explicit && self.u.ratio(1, 2)?;
        let mut body = vec![assign("x_block", load("x", x_load, explicit_load))];
        if plan.family == Family::TopLevelTile {
            body.push(assign("acc", acc_init.clone()));
        }
        let write = if plan.writes {
            Some(self.write_stmt(plan.alias)?)
        } else {
            None
        };
        let write_first = self.u.ratio(1, 2)?;
        if write_first {
            body.extend(write.clone());
        }
        body.push(assign(
            "live",
            sub(attr(OUTER, TileAttr::End), attr(OUTER, TileAttr::Begin)),
        ));
        body.extend(self.outer_items(plan.family)?);
        if !write_first {
            body.extend(write);
        }
        if plan.family == Family::TopLevelTile {
            body.push(self.top_level_store()?);
        }
        Ok(body)
    }

    /// The view prelude and the items of the outer body, with the loop levels left below it.
    fn outer_items(&mut self, family: Family) -> Result<Vec<Stmt>> {
        let depth_left = match family {
            Family::Grid => self.cfg.max_depth.saturating_sub(2),
            Family::TopLevelTile => self.cfg.max_depth.saturating_sub(1),
        };
        let mut items = self.view_prelude()?;
        let n_items = self.range(1, self.cfg.max_items as usize)?;
        let scope = Scope {
            inner: None,
            tail: None,
            depth_left,
        };
        for _ in 0..n_items {
            let item = self.item(&scope)?;
            items.extend(item);
        }
        Ok(items)
    }

    /// `for request in hl.grid(G):` around the outer loop: `acc`'s start, the `tile.count`
    /// loop, the outer loop, and the store of `acc` into the request's output row.
    fn grid_around(
        &mut self,
        plan: &Plan,
        acc_init: Expr,
        count_loop: Option<Stmt>,
        outer_loop: Stmt,
    ) -> Result<Stmt> {
        let mut grid_body = vec![assign("acc", acc_init)];
        grid_body.extend(count_loop);
        grid_body.push(outer_loop);
        let idx = self.trim(
            std::iter::once(ix(name("request")))
                .chain(self.acc_shape.iter().map(|_| Index::Full))
                .collect(),
        );
        let explicit = self.explicit && self.u.ratio(1, 2)?;
        grid_body.push(st(StmtKind::Store {
            tensor: "out".into(),
            indices: idx,
            value: name("acc"),
            explicit,
        }));
        Ok(grid_loop("request", int(plan.grid as i64), grid_body))
    }

    /// `return out` (and `trace`).
    fn return_outputs(&self) -> Stmt {
        let mut ret = vec![name("out")];
        if self.trace {
            ret.push(name("trace"));
        }
        st(StmtKind::Return(ret))
    }

    /// The config with the block sizes registered so far and the loop type (under unroll the
    /// key is sometimes left absent, which means unroll too).
    fn choose_config_loop_type(&mut self) -> Result<Config> {
        let mut config = Config {
            block_sizes: self.block_sizes.clone(),
            ..Config::default()
        };
        config.loop_type = if self.loop_type == LoopType::Unroll && self.u.ratio(1, 3)? {
            None
        } else {
            Some(self.loop_type)
        };
        Ok(config)
    }

    /// Now and then `pallas_worklist_grouping` or `pallas_load_buffer_count`.
    fn choose_config_extras(&mut self, config: &mut Config, kernel: &Kernel) -> Result<()> {
        if self.cfg.config_extras && self.u.ratio(1, 20)? {
            if self.u.ratio(1, 2)? {
                config.worklist_grouping = Some(self.range(0, 2)? as i64);
            } else {
                // One count per tensor parameter (D-1.5.1-11); one list in eight has one entry
                // too many, which 1.5.1 refuses cleanly (`config.load-buffer-count`), so the
                // refusal stays tested.
                let tensors = kernel
                    .params
                    .iter()
                    .filter(|p| p.kind == ParamKind::Tensor)
                    .count();
                let len = tensors + usize::from(self.u.ratio(1, 8)?);
                let counts = (0..len)
                    .map(|_| self.range(1, 2).map(|c| c as i64))
                    .collect::<Result<Vec<_>>>()?;
                config.load_buffer_count = Some(counts);
            }
        }
        Ok(())
    }

    /// The call, its result bound to a name or not.
    fn choose_call(&mut self, args: Vec<Arg>) -> Result<Call> {
        let result = self.u.ratio(1, 2)?.then(|| "result".to_string());
        Ok(Call {
            args,
            result,
            span: Span::default(),
        })
    }

    /// Whether the case keeps its index lists shorter than their tensor's rank
    /// ([`GenConfig::partial_index_list_percent`](super::GenConfig::partial_index_list_percent)).
    /// Decided after the case is whole, since it needs every tensor's rank; the draws come last
    /// so that they shift nothing before them. One draw per case, not per list: a case has
    /// several lists, and per list 1% kept 3.0% of a Helion campaign's cases (28 of 934, seed
    /// 23).
    fn choose_partial_index_lists(&mut self, case: &mut Case) -> Result<()> {
        let keep = self.pct(self.cfg.partial_index_list_percent)?;
        subscript_partial_lists(case, &mut || keep);
        Ok(())
    }

    /// The outer block: a divisor of the extent or not, as the config asks, at least
    /// `min_block` (so the configured block is the effective one).
    fn outer_block(&mut self, extent: usize, min_block: usize) -> Result<usize> {
        if min_block > 1 {
            let mut choices: Vec<usize> = [min_block, min_block * 2]
                .into_iter()
                .filter(|&b| b <= 16)
                .collect();
            if let Some(kind) = self.boundary
                && choices.iter().any(|&b| kind.fits(extent, b))
            {
                choices.retain(|&b| kind.fits(extent, b));
            }
            return Ok(*self.u.choose(&choices)?);
        }
        let hi = extent.clamp(1, 8);
        // At a boundary, blocks of two rows or more (a block of one has no partial tile); up
        // to 8 whatever the extent, so a one-row extent can sit under a wider block.
        let at_boundary: Vec<usize> = match self.boundary {
            Some(kind) => (2..=8).filter(|&b| kind.fits(extent, b)).collect(),
            None => Vec::new(),
        };
        let fits: Vec<usize> = if at_boundary.is_empty() {
            let dividing = self.pct(self.cfg.dividing_extent_percent)?;
            (1..=hi)
                .filter(|b| extent.is_multiple_of(*b) == dividing)
                .collect()
        } else {
            at_boundary
        };
        // Prefer blocks of two rows or more that leave at least two tiles, so partial and full
        // tiles both occur and runs inside a block have room.
        let several: Vec<usize> = fits
            .iter()
            .copied()
            .filter(|&b| b < extent && (b > 1 || extent < 3))
            .collect();
        if !several.is_empty() && self.u.ratio(3, 4)? {
            return Ok(*self.u.choose(&several)?);
        }
        if !fits.is_empty() {
            return Ok(*self.u.choose(&fits)?);
        }
        Ok(hi)
    }

    /// A launch-grid block among `blocks` (each divides `x`'s rows), mostly one of two rows or
    /// more that leaves several tiles of the loop's `extent`, as [`Gen::outer_block`] prefers.
    fn whole_grid_block(&mut self, blocks: &[usize], extent: usize) -> Result<usize> {
        let several: Vec<usize> = blocks
            .iter()
            .copied()
            .filter(|&b| b > 1 && b < extent)
            .collect();
        if !several.is_empty() && self.u.ratio(3, 4)? {
            return Ok(*self.u.choose(&several)?);
        }
        Ok(*self.u.choose(blocks)?)
    }

    /// `for chunk in hl.tile(b, e, block_size=k): acc = acc + chunk.count` (spec D2).
    fn count_loop(&mut self) -> Result<Stmt> {
        let k = self.range(1, 4)?;
        let b = self.range(0, 8)?;
        let e = b + self.range(1, 12)?;
        let a = *self.u.choose(&[
            TileAttr::Count,
            TileAttr::Id,
            TileAttr::Begin,
            TileAttr::BlockSize,
        ])?;
        let begin = (b > 0 || self.u.ratio(1, 4)?).then(|| int(b as i64));
        let block = self.block_expr(k)?;
        let var = self.fresh("chunk");
        Ok(tile_loop(
            &var,
            begin,
            int(e as i64),
            block,
            vec![self.acc_fold(attr(&var, a))?],
        ))
    }
}
