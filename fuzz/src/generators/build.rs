//! The generator proper: bytes in, one well-formed [`Case`] out.
//!
//! Every case has the spec's shape. Either an outer `hl.grid(G)` whose body keeps an
//! accumulator `acc`, runs an `hl.tile` over the loaded tensor's first dim and stores `acc` into
//! a host-allocated output row, or (the "top-level tile" family) the tile loop is the launch grid
//! itself and each tile stores its own `acc`. Inside the tile loop the block `x_block = x[outer,
//! ...]` is read by *items*: direct narrowed reads, paired reads (the product of two reads whose
//! rows line up), inner tile loops over the live extent or a static extent, tail branches, tile
//! attributes used as values, whole-block consumers, view and permute chains, and writes to the
//! loaded tensor. Items fold into `acc` by updates that commute and by ones that do not, so the
//! rows a read selects and the order the iterations run in both show in the output.
//!
//! The generator knows, for every read it builds, the smallest number of live rows any tile can
//! have (`live_min`), which extra rows a branch guarantees (`if live >= w:`) and how far an inner
//! loop's `local.index + k` reaches, so every index it writes is in range under PyTorch's eager
//! semantics; shapes are tracked by [`super::shape`] and brought back to the accumulator's.
//! Forms that Helion refuses (negative bounds, open slices, iotas outside their branch, ...) are
//! drawn on purpose at the rate [`GenConfig::wild_percent`] says.

use super::admissible::contiguous_after;
use super::config::GenConfig;
use super::make::*;
use super::shape::{Dim, Val, reduce_to, slice_len};
use arbitrary::{Result, Unstructured};
use lang::ir::blocks::minimum_block;
use lang::ir::{
    AllocKind, AllocShape, Arg, AtomicOp, BinOp, CASE_VERSION, Call, Case, CmpOp, Config, Ctor,
    DType, Expr, ExprKind, Index, Input, InputOp, Kernel, LoopType, Param, ParamKind, Span, Stmt,
    StmtKind, TileAttr, ViewOp,
};

/// Generates one case from `u`, steered by `cfg` (normalized first).
pub fn generate(u: &mut Unstructured<'_>, cfg: &GenConfig) -> Result<Case> {
    let cfg = cfg.normalized();
    Gen::new(u, &cfg).case()
}

/// Something the items can narrow: a name bound to the block or to a view of it.
#[derive(Clone, Debug)]
struct Base {
    name: String,
    val: Val,
}

/// Facts about the outer tile loop that every read relies on.
#[derive(Clone, Debug)]
struct Outer {
    var: String,
    block: usize,
    /// The fewest live rows any tile of the loop has.
    live_min: usize,
    /// Every tile is full (`live == block` always).
    all_full: bool,
    /// The loop covers the whole dim from zero in full tiles, so Helion's resident block has
    /// no live guard (spec §2.4) and static selectors on it can plan.
    unguarded: bool,
    /// The block and the views of it defined so far.
    bases: Vec<Base>,
    live: String,
}

/// The innermost tile loop of a scope.
#[derive(Clone, Debug)]
struct Inner {
    var: String,
    /// `local.index + shift` stays below `live` (the loop runs over `live - shift`, or a static
    /// extent with room for the shift).
    shift: usize,
    block: usize,
}

/// Where an item is generated.
#[derive(Clone, Debug)]
struct Scope {
    inner: Option<Inner>,
    /// Inside a branch that guarantees `live >= w`.
    tail: Option<usize>,
    /// Loop levels still allowed below this scope.
    depth_left: u8,
}

/// Which value the trace output records, when the case has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    /// `for request in hl.grid(G):` around the tile loop.
    Grid,
    /// The tile loop is the launch grid.
    TopLevelTile,
}

struct Gen<'u, 'a> {
    u: &'u mut Unstructured<'a>,
    cfg: GenConfig,
    dtype: DType,
    x_shape: Vec<usize>,
    acc_shape: Vec<usize>,
    loop_type: LoopType,
    block_sizes: Vec<i64>,
    counters: Vec<(&'static str, usize)>,
    outer: Option<Outer>,
    /// The case has a `trace` output written per token (needs block-1 inner loops).
    trace: bool,
    trace_written: bool,
    explicit: bool,
    /// Names bound to scalar selectors (`rows = local.begin`).
    scalar_names: Vec<String>,
    /// `acc` starts as a view of a host tensor (`init[request].float()` is no copy in eager
    /// PyTorch), so it is never updated in place.
    acc_is_view: bool,
    /// The kernel multiplies two float32 reads of the loaded tensor ([`Gen::paired_read`]).
    /// Its inputs then hold values whose products are exact in float32 (powers of two per
    /// row, small ints, constants), so that no engine's result depends on whether it fuses
    /// `a * b + c` into one rounding (XLA contracts it to an FMA; eager PyTorch does not).
    exact_products: bool,
}

impl<'u, 'a> Gen<'u, 'a> {
    fn new(u: &'u mut Unstructured<'a>, cfg: &GenConfig) -> Self {
        Gen {
            u,
            cfg: cfg.clone(),
            dtype: DType::Float32,
            x_shape: Vec::new(),
            acc_shape: Vec::new(),
            loop_type: LoopType::ForiLoop,
            block_sizes: Vec::new(),
            counters: Vec::new(),
            outer: None,
            trace: false,
            trace_written: false,
            explicit: false,
            scalar_names: Vec::new(),
            acc_is_view: false,
            exact_products: false,
        }
    }

    // ---- small draws ------------------------------------------------------------------------

    fn pct(&mut self, p: u8) -> Result<bool> {
        if p == 0 {
            return Ok(false);
        }
        if p >= 100 {
            return Ok(true);
        }
        Ok(self.u.int_in_range(0..=99u8)? < p)
    }

    fn range(&mut self, lo: usize, hi: usize) -> Result<usize> {
        if hi <= lo {
            Ok(lo)
        } else {
            self.u.int_in_range(lo..=hi)
        }
    }

    /// Picks an index by weight; zero weights are never picked.
    fn weighted(&mut self, weights: &[u32]) -> Result<usize> {
        let total: u32 = weights.iter().sum();
        if total == 0 {
            return Ok(0);
        }
        let mut r = self.u.int_in_range(0..=total - 1)?;
        for (i, &w) in weights.iter().enumerate() {
            if r < w {
                return Ok(i);
            }
            r -= w;
        }
        Ok(weights.len() - 1)
    }

    fn wild(&mut self) -> Result<bool> {
        if !self.cfg.wild_index {
            return Ok(false);
        }
        let p = self.cfg.wild_percent;
        self.pct(p)
    }

    fn fresh(&mut self, stem: &'static str) -> String {
        match self.counters.iter_mut().find(|(s, _)| *s == stem) {
            Some((_, n)) => {
                *n += 1;
                format!("{stem}_{n}")
            }
            None => {
                self.counters.push((stem, 0));
                stem.to_string()
            }
        }
    }

    fn full(&self) -> Index {
        Index::Full
    }

    /// Drops trailing `:` entries when the config leaves them implicit (keeps one entry).
    fn trim(&self, mut entries: Vec<Index>) -> Vec<Index> {
        if !self.cfg.full_slice {
            while entries.len() > 1 && matches!(entries.last(), Some(Index::Full)) {
                entries.pop();
            }
        }
        entries
    }

    // ---- the case ---------------------------------------------------------------------------

    fn case(mut self) -> Result<Case> {
        let dtypes: Vec<DType> = DType::ALL
            .into_iter()
            .filter(|d| match d {
                DType::Float32 => self.cfg.float32,
                DType::Bfloat16 => self.cfg.bfloat16,
                DType::Int32 => self.cfg.int32,
            })
            .collect();
        self.dtype = *self.u.choose(&dtypes)?;
        let loop_types: Vec<LoopType> = LoopType::ALL
            .into_iter()
            .filter(|l| match l {
                LoopType::Unroll => self.cfg.unroll,
                LoopType::ForiLoop => self.cfg.fori_loop,
                LoopType::EmitPipeline => self.cfg.emit_pipeline,
            })
            .collect();
        self.loop_type = *self.u.choose(&loop_types)?;
        self.explicit = self.cfg.explicit_memory_ops && self.u.ratio(1, 6)?;

        let family = if self.cfg.max_depth == 1 || self.pct(self.cfg.top_level_tile_percent)? {
            Family::TopLevelTile
        } else {
            Family::Grid
        };
        // Rank of x: 3-D mostly (the tiled dim has alignment 1, so the configured block is the
        // effective one), sometimes 4-D (views with hidden dims) or 2-D f32-style rows.
        let flat_weight = if self.dtype == DType::Float32 { 3 } else { 1 };
        let rank = [3usize, 4, 2][self.weighted(&[14, 3, flat_weight])?];
        // Mostly enough rows for several tiles with partial ones among them.
        let (lo, hi) = (self.cfg.min_rows as usize, self.cfg.max_rows as usize);
        let rows = if hi >= 4 && self.u.ratio(4, 5)? {
            self.range(lo.max(4), hi)?
        } else {
            self.range(lo, hi)?
        };
        let lanes = [128usize, 64, 16, 8, 1][self.weighted(&[12, 2, 2, 1, 1])?];
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

        let writes = self.cfg.writes && self.pct(self.cfg.write_percent)?;
        let alias = writes && self.pct(self.cfg.alias_write_percent)?;
        let mut grid = 1;
        let mut init_acc = false;
        if family == Family::Grid && !writes && self.pct(self.cfg.grid_over_rows_percent)? {
            grid = self.range(
                2.min(self.cfg.max_grid as usize),
                self.cfg.max_grid as usize,
            )?;
            init_acc = self.u.ratio(1, 2)?;
        }
        // A per-token trace output: only with one request (rows are overwritten per request).
        self.trace = family == Family::Grid
            && grid == 1
            && self.x_shape.len() <= 3
            && self.cfg.max_depth >= 3
            && self.u.ratio(1, 5)?;

        let mut params = vec![Param {
            name: "x".into(),
            kind: ParamKind::Tensor,
            span: Span::default(),
        }];
        let mut args = vec![Arg::Input("x".into())];
        if writes {
            params.push(Param {
                name: "y".into(),
                kind: ParamKind::Tensor,
                span: Span::default(),
            });
            args.push(Arg::Input("y".into()));
        }
        if init_acc {
            params.push(Param {
                name: "init".into(),
                kind: ParamKind::Tensor,
                span: Span::default(),
            });
            args.push(Arg::Input("init".into()));
        }

        // The outer tile loop's bounds and block.
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
        let block = self.outer_block(extent, min_block)?;
        let count = extent.div_ceil(block);
        let live_min = extent - (count - 1) * block;

        let mut host = Vec::new();
        let end_expr = if end == n {
            match self.weighted(&[4, 2, 1, 1])? {
                0 => size("x", 0),
                1 => int(n as i64),
                2 => {
                    host.push(assign("n", size("x", 0)));
                    name("n")
                }
                _ => {
                    params.push(Param {
                        name: "n".into(),
                        kind: ParamKind::Int,
                        span: Span::default(),
                    });
                    args.push(Arg::Int(n as i64));
                    name("n")
                }
            }
        } else {
            int(end as i64)
        };
        let begin_expr = (begin > 0).then(|| int(begin as i64));

        let out_dims: Vec<usize> = match family {
            Family::Grid => [vec![grid], self.acc_shape.clone()].concat(),
            Family::TopLevelTile => self.x_shape.clone(),
        };
        let out_alloc = match (family, self.u.ratio(1, 4)?) {
            (Family::Grid, true) => AllocKind::Empty,
            _ => AllocKind::Zeros,
        };
        let out_shape = if family == Family::TopLevelTile && self.u.ratio(1, 2)? {
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
        if alias {
            host.push(assign(
                "x_alias",
                view(name("x"), ViewOp::ViewAs(Box::new(name("x")))),
            ));
        }

        let acc_init = self.acc_init(init_acc)?;
        // A `tile.count` loop ahead of the outer loop in the grid body: its config slot comes
        // first in registration order, so it is drawn first.
        let count_loop = if family == Family::Grid
            && self.cfg.tile_attr_values
            && self.pct(self.cfg.tile_attr_percent / 2)?
        {
            Some(self.count_loop()?)
        } else {
            None
        };
        // The outer loop: its config slot is registered before any inner loop's.
        let outer_var = "outer".to_string();
        let block_expr = self.block_expr(block)?;
        let x_load = self.trim(
            std::iter::once(ix(name(&outer_var)))
                .chain((1..self.x_shape.len()).map(|_| self.full()))
                .collect(),
        );
        let x_dims: Vec<Dim> = std::iter::once(Dim::Rows)
            .chain(self.x_shape[1..].iter().map(|&d| Dim::Fixed(d)))
            .collect();
        self.outer = Some(Outer {
            var: outer_var.clone(),
            block,
            live_min,
            all_full: extent.is_multiple_of(block),
            unguarded: begin == 0 && end == n && extent.is_multiple_of(block),
            bases: vec![Base {
                name: "x_block".into(),
                val: Val::new(x_dims),
            }],
            live: "live".into(),
        });
        let explicit_load = self.explicit && self.u.ratio(1, 2)?;
        let mut outer_body = vec![assign("x_block", load("x", x_load, explicit_load))];
        if family == Family::TopLevelTile {
            outer_body.push(assign("acc", acc_init.clone()));
        }
        let write = if writes {
            Some(self.write_stmt(alias)?)
        } else {
            None
        };
        let write_first = self.u.ratio(1, 2)?;
        if write_first {
            outer_body.extend(write.clone());
        }
        outer_body.push(assign(
            "live",
            sub(
                attr(&outer_var, TileAttr::End),
                attr(&outer_var, TileAttr::Begin),
            ),
        ));
        let depth_left = match family {
            Family::Grid => self.cfg.max_depth.saturating_sub(2),
            Family::TopLevelTile => self.cfg.max_depth.saturating_sub(1),
        };
        outer_body.extend(self.view_prelude()?);
        let n_items = self.range(1, self.cfg.max_items as usize)?;
        let scope = Scope {
            inner: None,
            tail: None,
            depth_left,
        };
        for _ in 0..n_items {
            let item = self.item(&scope)?;
            outer_body.extend(item);
        }
        if !write_first {
            outer_body.extend(write);
        }
        if family == Family::TopLevelTile {
            outer_body.push(self.top_level_store()?);
        }
        let outer_loop = tile_loop(&outer_var, begin_expr, end_expr, block_expr, outer_body);

        let mut body = host;
        match family {
            Family::Grid => {
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
                body.push(grid_loop("request", int(grid as i64), grid_body));
            }
            Family::TopLevelTile => body.push(outer_loop),
        }
        let mut ret = vec![name("out")];
        if self.trace {
            ret.push(name("trace"));
        }
        body.push(st(StmtKind::Return(ret)));

        let mut inputs = vec![self.x_input()?];
        let mut random = matches!(inputs[0].ctor, Ctor::Randn { .. } | Ctor::Rand { .. });
        if writes {
            let y = self.y_input()?;
            random |= matches!(y.ctor, Ctor::Randn { .. } | Ctor::Rand { .. });
            inputs.push(y);
        }
        if init_acc {
            let shape = [vec![grid], self.acc_shape.clone()].concat();
            inputs.push(Input {
                name: "init".into(),
                ctor: Ctor::Randn { shape },
                dtype: None,
                chain: vec![],
                span: Span::default(),
            });
            random = true;
        }
        let seed = if random {
            Some(self.u.int_in_range(0..=999u64)?)
        } else {
            None
        };

        let mut config = Config {
            block_sizes: self.block_sizes.clone(),
            ..Config::default()
        };
        config.loop_type = if self.loop_type == LoopType::Unroll && self.u.ratio(1, 3)? {
            None
        } else {
            Some(self.loop_type)
        };
        super::fixup::canonical_lists(&mut body);
        let kernel = Kernel {
            name: "kernel".into(),
            params,
            body,
            span: Span::default(),
        };
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
        let result = self.u.ratio(1, 2)?.then(|| "result".to_string());
        let mut case = Case {
            version: CASE_VERSION,
            kernel,
            config,
            inputs,
            seed,
            call: Call {
                args,
                result,
                span: Span::default(),
            },
        };
        // Decided after the case is whole, since it needs every tensor's rank; the draws come
        // last so that they shift nothing before them.
        // One draw per case, not per list: a case has several lists, and per list 1% kept
        // 3.0% of a Helion campaign's cases (28 of 934, seed 23).
        let keep = self.pct(self.cfg.partial_index_list_percent)?;
        super::fixup::subscript_partial_lists(&mut case, &mut || keep);
        Ok(case)
    }

    /// The outer block: a divisor of the extent or not, as the config asks, at least
    /// `min_block` (so the configured block is the effective one).
    fn outer_block(&mut self, extent: usize, min_block: usize) -> Result<usize> {
        if min_block > 1 {
            let choices: Vec<usize> = [min_block, min_block * 2]
                .into_iter()
                .filter(|&b| b <= 16)
                .collect();
            return Ok(*self.u.choose(&choices)?);
        }
        let hi = extent.clamp(1, 8);
        let dividing = self.pct(self.cfg.dividing_extent_percent)?;
        let fits: Vec<usize> = (1..=hi)
            .filter(|b| extent.is_multiple_of(*b) == dividing)
            .collect();
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

    /// `block_size=<b>` or a new config slot holding `b`.
    fn block_expr(&mut self, b: usize) -> Result<Option<Expr>> {
        if self.pct(self.cfg.fixed_block_percent)?
            || (!b.is_power_of_two() && !self.pct(self.cfg.non_power_of_two_config_percent)?)
        {
            Ok(Some(int(b as i64)))
        } else {
            self.block_sizes.push(b as i64);
            Ok(None)
        }
    }

    fn acc_init(&mut self, from_init: bool) -> Result<Expr> {
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
        Ok(match self.weighted(&[5, 1])? {
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
            vec![self.acc_update(attr(&var, a))?],
        ))
    }

    /// `acc = acc + v`, or one of its other spellings. Most spellings commute across
    /// iterations, so a lowering that visits the right rows in the wrong order (a shifted or
    /// rotated run, a loop walked from the wrong begin) sums to the same total; the ordered
    /// ones (`acc * 0.5 + v` weights each iteration by its distance from the end, `v - acc`
    /// alternates signs) make the order of the contributions part of the result.
    fn acc_update(&mut self, v: Expr) -> Result<Stmt> {
        let aug = if self.acc_is_view { 0 } else { 2 };
        let (decay, alternate) = if self.cfg.ordered_updates {
            (2, 1)
        } else {
            (0, 0)
        };
        Ok(match self.weighted(&[6, aug, 1, 1, 1, decay, alternate])? {
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
        })
    }

    /// The store of the top-level-tile family: the tile's first row, or the whole tile.
    fn top_level_store(&mut self) -> Result<Stmt> {
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
    fn write_stmt(&mut self, alias: bool) -> Result<Stmt> {
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

    // ---- inputs -----------------------------------------------------------------------------

    fn x_input(&mut self) -> Result<Input> {
        let shape = self.x_shape.clone();
        let dtype = self.dtype;
        let n = shape[0];
        let rank = shape.len() as i64;
        let row_shape: Vec<i64> = std::iter::once(n as i64)
            .chain((1..rank).map(|_| 1))
            .collect();
        let full_shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        let spread = vec![
            InputOp::Reshape(row_shape),
            InputOp::Expand(full_shape.clone()),
            InputOp::Contiguous,
        ];
        let input = |ctor: Ctor, dtype: Option<DType>, chain: Vec<InputOp>| Input {
            name: "x".into(),
            ctor,
            dtype,
            chain,
            span: Span::default(),
        };
        let exact = self.exact_products && dtype == DType::Float32;
        if self.pct(self.cfg.power_of_two_rows_percent)? || (exact && self.u.ratio(1, 2)?) {
            // One distinct power of two per row: a wrong row shows in the sum.
            let values: Vec<f64> = (0..n).map(|i| f64::from(1u32 << i)).collect();
            let float_literals = dtype.is_float();
            let ctor = Ctor::Tensor {
                shape: vec![n],
                values,
                float_literals,
            };
            return Ok(match (dtype, self.u.ratio(1, 2)?) {
                (DType::Float32, _) => input(ctor, None, spread),
                (DType::Bfloat16, true) => input(
                    ctor,
                    None,
                    [spread, vec![InputOp::To(DType::Bfloat16)]].concat(),
                ),
                (DType::Bfloat16 | DType::Int32, _) => input(ctor, Some(dtype), spread),
            });
        }
        let numel: usize = shape.iter().product();
        // Random float32 values only where no product of two of them is taken.
        let random = if exact { 0 } else { 4 };
        Ok(
            match (
                dtype.is_float(),
                self.weighted(&[random, random / 2, 2, 2, 1, 1])?,
            ) {
                (true, 0) => input(Ctor::Randn { shape }, Some(dtype), vec![]),
                (true, 1) => input(
                    Ctor::Rand { shape },
                    (dtype != DType::Float32).then_some(dtype),
                    vec![],
                ),
                (_, 2) => input(
                    Ctor::Arange { n: numel },
                    Some(dtype),
                    vec![InputOp::Reshape(full_shape)],
                ),
                (_, 3) => input(Ctor::Arange { n }, Some(dtype), spread),
                (_, 4) => input(Ctor::Ones { shape }, Some(dtype), vec![]),
                (false, 0 | 1) => input(
                    Ctor::Arange { n: numel },
                    Some(dtype),
                    vec![InputOp::Reshape(full_shape)],
                ),
                _ => input(Ctor::Full { shape, value: 3.0 }, Some(dtype), vec![]),
            },
        )
    }

    fn y_input(&mut self) -> Result<Input> {
        let shape = self.x_shape.clone();
        // `y` lands in `x` (through a write a fault may let reads see): no random values where
        // reads of `x` are multiplied.
        let exact = self.exact_products && self.dtype == DType::Float32;
        let ctor = if self.dtype.is_float() && !exact && self.u.ratio(1, 2)? {
            Ctor::Randn { shape }
        } else if self.u.ratio(1, 2)? {
            Ctor::Zeros { shape }
        } else {
            Ctor::Ones { shape }
        };
        Ok(Input {
            name: "y".into(),
            ctor,
            dtype: Some(self.dtype),
            chain: vec![],
            span: Span::default(),
        })
    }

    // ---- items ------------------------------------------------------------------------------

    fn outer(&self) -> &Outer {
        self.outer
            .as_ref()
            .expect("items are generated inside the outer tile loop")
    }

    /// Views of the block bound to names before the items, so items can narrow them
    /// (`grouped = x_block[:, None, :, :]`, `x_block.reshape(-1, 2, 128)`, ...).
    fn view_prelude(&mut self) -> Result<Vec<Stmt>> {
        let mut out = Vec::new();
        // Helion reshapes only a resident block with no live guard: fewer preludes otherwise.
        let p = if self.outer().unguarded {
            self.cfg.view_percent
        } else {
            self.cfg.view_percent / 3
        };
        if !(self.cfg.views || self.cfg.permute) || !self.pct(p)? {
            return Ok(out);
        }
        let base = self.outer().bases[0].clone();
        let (e, val) = self.view_chain(name(&base.name), base.val.clone(), 2)?;
        if val.rows_count() == 1 && val != base.val {
            let n = self.fresh("grouped");
            out.push(assign(&n, e));
            self.outer
                .as_mut()
                .expect("outer")
                .bases
                .push(Base { name: n, val });
        }
        Ok(out)
    }

    /// Up to `steps` view (or permute) steps on `e`.
    fn view_chain(&mut self, mut e: Expr, mut val: Val, steps: usize) -> Result<(Expr, Val)> {
        let n = self.range(1, steps)?;
        let keep_minor = self.u.ratio(4, 5)?;
        for _ in 0..n {
            let permute_ok = self.cfg.permute
                && val.rank() >= 2
                && self.pct(self.cfg.permute_percent.saturating_mul(3))?;
            if permute_ok {
                let mut perm: Vec<usize> = (0..val.rank()).collect();
                let i = self.range(0, perm.len() - 1)?;
                let j = self.range(0, perm.len() - 1)?;
                perm.swap(i, j);
                if perm.iter().enumerate().all(|(k, &p)| k == p) {
                    let last = perm.len() - 1;
                    perm.swap(0, last);
                }
                e = permute(e, perm.iter().map(|&p| p as i64).collect());
                val = Val {
                    dims: perm.iter().map(|&p| val.dims[p]).collect(),
                    contiguous: false,
                };
                continue;
            }
            if !self.cfg.views {
                break;
            }
            let (ne, nv) = self.view_step(e, val, keep_minor)?;
            e = ne;
            val = nv;
        }
        Ok((e, val))
    }

    /// One view: a `None` subscript, `.unsqueeze`, `.squeeze`, or `.reshape`/`.view`.
    /// With `keep_minor`, the two minor dims stay as they are (Helion's resident views need
    /// that); otherwise any view of the element count.
    fn view_step(&mut self, e: Expr, val: Val, keep_minor: bool) -> Result<(Expr, Val)> {
        let rank = val.rank();
        let keep = keep_minor && rank >= 2;
        // Highest position a new axis may take.
        let lim = if keep { rank - 2 } else { rank };
        let ones: Vec<usize> = (0..rank)
            .filter(|&i| val.dims[i] == Dim::Fixed(1) && (!keep || i + 2 < rank))
            .collect();
        let choice = self.weighted(&[
            if self.cfg.new_axis { 3 } else { 0 },
            3,
            if ones.is_empty() { 0 } else { 2 },
            if val.rows_count() <= 1 { 4 } else { 0 },
        ])?;
        let mut dims = val.dims.clone();
        Ok(match choice {
            0 => {
                let p = self.range(0, lim)?;
                let mut idx: Vec<Index> = (0..rank).map(|_| Index::Full).collect();
                idx.insert(p, Index::NewAxis);
                dims.insert(p, Dim::Fixed(1));
                let idx = self.trim(idx);
                (
                    subscript(e, idx),
                    Val {
                        dims,
                        contiguous: val.contiguous,
                    },
                )
            }
            1 => {
                let p = self.range(0, lim)?;
                dims.insert(p, Dim::Fixed(1));
                let d = if self.u.ratio(1, 5)? {
                    p as i64 - rank as i64 - 1
                } else {
                    p as i64
                };
                (
                    view(e, ViewOp::Unsqueeze(d)),
                    Val {
                        dims,
                        contiguous: val.contiguous,
                    },
                )
            }
            2 => {
                let p = *self.u.choose(&ones)?;
                dims.remove(p);
                (
                    view(e, ViewOp::Squeeze(p as i64)),
                    Val {
                        dims,
                        contiguous: val.contiguous,
                    },
                )
            }
            _ => {
                // Reshape: keep the row dim as -1; insert a 1, merge the two minor dims, merge
                // the row dim with the next fixed dim, or keep the dims.
                let r = val.rows_axis();
                match self.range(0, 3)? {
                    0 => {
                        let p = self.range(0, lim)?;
                        dims.insert(p, Dim::Fixed(1));
                    }
                    1 if !keep && rank >= 2 && !matches!(r, Some(a) if a + 2 >= rank) => {
                        let (a, b) = (dims[rank - 2], dims[rank - 1]);
                        if let (Dim::Fixed(a), Dim::Fixed(b)) = (a, b) {
                            dims.truncate(rank - 2);
                            dims.push(Dim::Fixed(a * b));
                        }
                    }
                    2 if matches!(r, Some(a) if a + 3 + usize::from(keep) <= rank) => {
                        let a = r.unwrap_or(0);
                        dims.remove(a + 1);
                    }
                    _ => {}
                }
                let spelled: Vec<Expr> = dims
                    .iter()
                    .map(|d| match d {
                        Dim::Fixed(n) => int(*n as i64),
                        Dim::Rows => int(-1),
                    })
                    .collect();
                let use_view = val.contiguous && self.u.ratio(1, 2)?;
                let op = if use_view {
                    ViewOp::View(spelled)
                } else {
                    ViewOp::Reshape(spelled)
                };
                // A reshape may return a view of a non-contiguous value: keep the flag.
                (
                    view(e, op),
                    Val {
                        dims,
                        contiguous: val.contiguous,
                    },
                )
            }
        })
    }

    fn item(&mut self, sc: &Scope) -> Result<Vec<Stmt>> {
        if self.cfg.tile_attr_values && self.pct(self.cfg.tile_attr_percent)? {
            return Ok(vec![self.tile_attr_item(sc)?]);
        }
        if self.cfg.whole_block && self.pct(self.cfg.whole_block_percent)? {
            return Ok(vec![self.whole_block_item(sc)?]);
        }
        let can_loop = sc.depth_left > 0 && sc.inner.is_none();
        let live_ok =
            self.loop_type != LoopType::Unroll || self.pct(self.cfg.unroll_live_loop_percent)?;
        let inner_forms =
            self.cfg.tile_index || self.cfg.tile_begin_index || self.cfg.tile_index_offset;
        let weights = [
            if self.outer().unguarded { 4 } else { 1 }, // direct read
            if can_loop && live_ok && inner_forms {
                5
            } else {
                0
            }, // loop over live
            match (can_loop && inner_forms, live_ok, self.outer().all_full) {
                (false, _, _) => 0,
                (true, true, true) => 2,
                (true, true, false) => 1,
                (true, false, _) => 5,
            }, // static loop
            if self.cfg.tail && sc.tail.is_none() {
                3
            } else {
                0
            }, // tail branch
            if sc.inner.is_some() && inner_forms {
                6
            } else {
                0
            }, // inner read
            if sc.inner.is_some() && self.cfg.named_index {
                self.cfg.named_index_percent as u32 / 4
            } else {
                0
            },
            if sc.inner.as_ref().is_some_and(|i| i.block == 1) && self.trace {
                2
            } else {
                0
            }, // trace store
        ];
        Ok(match self.weighted(&weights)? {
            0 => vec![self.direct_read(sc)?],
            1 => vec![self.live_loop(sc)?],
            2 => vec![self.static_loop(sc)?],
            3 => self.tail_item(sc)?,
            4 => vec![self.inner_read(sc)?],
            5 => self.named_branch(sc)?,
            _ => vec![self.trace_store(sc)?],
        })
    }

    fn tile_attr_item(&mut self, sc: &Scope) -> Result<Stmt> {
        let o = self.outer().clone();
        let var = match &sc.inner {
            Some(i) if self.u.ratio(1, 2)? => i.var.clone(),
            _ => o.var.clone(),
        };
        let a = *self.u.choose(&[
            TileAttr::Begin,
            TileAttr::End,
            TileAttr::Count,
            TileAttr::Id,
            TileAttr::BlockSize,
        ])?;
        let v = match self.weighted(&[6, 1, 1])? {
            0 => attr(&var, a),
            1 => name(&o.live),
            _ => bin(
                BinOp::FloorDiv,
                attr(&var, a),
                int(self.range(1, 3)? as i64),
            ),
        };
        self.acc_update(v)
    }

    fn whole_block_item(&mut self, sc: &Scope) -> Result<Stmt> {
        let base = self.outer().bases[0].clone();
        let whole = self.reduce(name(&base.name), base.val.clone())?;
        let v = if self.u.ratio(2, 3)? {
            // A narrowing consumer beside the whole-block one (`x_block.sum(0) + x_block[1]`).
            let narrow = self.read_expr(sc, false)?;
            add(whole, narrow)
        } else {
            whole
        };
        self.acc_update(v)
    }

    fn direct_read(&mut self, sc: &Scope) -> Result<Stmt> {
        let v = self.read_or_pair(sc, false)?;
        self.acc_update(v)
    }

    fn inner_read(&mut self, sc: &Scope) -> Result<Stmt> {
        let v = self.read_or_pair(sc, true)?;
        self.acc_update(v)
    }

    /// A read ([`Gen::read_expr`]) or, at [`GenConfig::paired_read_percent`], a paired read.
    fn read_or_pair(&mut self, sc: &Scope, through_inner: bool) -> Result<Expr> {
        if self.cfg.paired_reads && self.pct(self.cfg.paired_read_percent)? {
            return self.paired_read(sc, through_inner);
        }
        self.read_expr(sc, through_inner)
    }

    /// `base[.., a, ..].float() * base[.., b, ..].float()`, reduced to the accumulator's shape:
    /// two selectors on the row dim of one base that select the same number of rows (two
    /// selectors of the innermost tile, `local.index + -1` beside `local.index`; or two static
    /// windows of one width), multiplied element by element before the rows are summed. A sum
    /// of each read alone is blind to *which* rows a run reads as long as it reads a
    /// permutation of the right ones (a rotated run, a dropped offset inside one tile: helion
    /// #2006); the product pairs row `i` of one run with row `i` of the other, so it is not.
    fn paired_read(&mut self, sc: &Scope, through_inner: bool) -> Result<Expr> {
        let base = self.pick_base()?;
        let ax = base.val.rows_axis().unwrap_or(0);
        let (a, b) = match (&sc.inner, through_inner) {
            (Some(inner), true) => {
                let inner = inner.clone();
                let (a, a_scalar) = self.inner_selector(&inner)?;
                let (b, b_scalar) = self.inner_selector(&inner)?;
                // A scalar beside a run would broadcast against the wrong dim when the rows
                // are not the leading dim: square the first read instead.
                if a_scalar == b_scalar || ax == 0 {
                    (a, b)
                } else {
                    (a.clone(), a)
                }
            }
            _ => {
                // Static windows the live rows always hold (on a guarded block Helion refuses
                // them, which is a verdict worth having too).
                let rows = self.guaranteed_rows(sc);
                let w = self.range(1, rows)?;
                let i = self.range(0, rows - w)? as i64;
                let j = self.range(0, rows - w)? as i64;
                if w == 1 && self.cfg.int_index && self.u.ratio(1, 2)? {
                    (Index::Int(i), Index::Int(j))
                } else {
                    let window = |s: i64| Index::Slice {
                        start: Some(int(s)),
                        stop: Some(int(s + w as i64)),
                        step: None,
                    };
                    (window(i), window(j))
                }
            }
        };
        let dim_a = self.select_dim(&a, base.val.dims[ax]);
        let dim_b = self.select_dim(&b, base.val.dims[ax]);
        // The product's shape: the base's, with the row dim as the selectors leave it (a
        // scalar beside a run broadcasts, and only happens with the rows leading).
        let mut dims = base.val.dims.clone();
        match dim_a.or(dim_b) {
            Some(d) => dims[ax] = d,
            None => {
                dims.remove(ax);
            }
        }
        let read = |sel: Index, g: &Self| {
            let mut entries: Vec<Index> = (0..base.val.rank()).map(|_| Index::Full).collect();
            entries[ax] = sel;
            cast(subscript(name(&base.name), g.trim(entries)), DType::Float32)
        };
        let e = bin(BinOp::Mul, read(a, self), read(b, self));
        self.exact_products = true;
        self.reduce(e, Val::new(dims))
    }

    /// `trace[outer.begin + local.begin, :, :] = acc` inside a block-1 inner loop.
    fn trace_store(&mut self, sc: &Scope) -> Result<Stmt> {
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

    /// The inner loop's block: a fixed `block_size=` or a config slot.
    /// Mostly a divisor of `extent_max` (Helion needs the run width to divide the block).
    fn inner_block(&mut self, extent_max: usize) -> Result<(usize, Option<Expr>)> {
        let hi = extent_max.clamp(1, 4);
        let divisors: Vec<usize> = (1..=hi).filter(|d| extent_max.is_multiple_of(*d)).collect();
        let b = if self.u.ratio(1, 3)? {
            1
        } else if self.u.ratio(5, 6)? {
            *self.u.choose(&divisors)?
        } else {
            self.range(1, hi)?
        };
        let e = self.block_expr(b)?;
        Ok((b, e))
    }

    /// `for local in hl.tile(live[ - k]):` with reads of the block through `local`.
    fn live_loop(&mut self, sc: &Scope) -> Result<Stmt> {
        let o = self.outer().clone();
        let shift = if self.cfg.tile_index_offset && o.live_min >= 2 && self.u.ratio(1, 4)? {
            self.range(1, o.live_min - 1)?
        } else {
            0
        };
        let end = if shift > 0 {
            sub(name(&o.live), int(shift as i64))
        } else {
            name(&o.live)
        };
        let (block, block_expr) = self.inner_block(o.block)?;
        let var = self.fresh("local");
        let inner = Inner {
            var: var.clone(),
            shift,
            block,
        };
        let body = self.loop_body(sc, inner)?;
        Ok(tile_loop(&var, None, end, block_expr, body))
    }

    /// `for local in hl.tile(S):` over a static extent that every tile has rows for.
    fn static_loop(&mut self, sc: &Scope) -> Result<Stmt> {
        let o = self.outer().clone();
        let extent = if o.all_full && self.u.ratio(4, 5)? {
            o.block
        } else {
            self.range(1, o.live_min)?
        };
        let room = o.live_min.max(if o.all_full { o.block } else { 0 }) - extent;
        let shift = if self.cfg.tile_index_offset && room > 0 && self.u.ratio(1, 4)? {
            self.range(1, room)?
        } else {
            0
        };
        let (block, block_expr) = self.inner_block(extent)?;
        let var = self.fresh("local");
        let inner = Inner {
            var: var.clone(),
            shift,
            block,
        };
        let body = self.loop_body(sc, inner)?;
        let begin = self.u.ratio(1, 8)?.then(|| int(0));
        Ok(tile_loop(&var, begin, int(extent as i64), block_expr, body))
    }

    fn loop_body(&mut self, sc: &Scope, inner: Inner) -> Result<Vec<Stmt>> {
        let inner_sc = Scope {
            inner: Some(inner),
            tail: sc.tail,
            depth_left: sc.depth_left - 1,
        };
        let n = self.range(1, 2)?;
        let mut body = Vec::new();
        // The first item reads through the loop variable, so the loop means something.
        body.push(self.inner_read(&inner_sc)?);
        for _ in 1..n {
            body.extend(self.item(&inner_sc)?);
        }
        Ok(body)
    }

    /// `if live >= w:` with a tail read (and sometimes an `else`).
    fn tail_item(&mut self, sc: &Scope) -> Result<Vec<Stmt>> {
        let o = self.outer().clone();
        let w = self.range(1, o.block.max(1))?;
        let live = name(&o.live);
        // Conditions that imply `live >= w` (exact first; the others Helion does not accept).
        let wild = self.wild()?;
        let (cond, in_else) = if !wild {
            (cmp(CmpOp::Ge, live.clone(), int(w as i64)), false)
        } else {
            match self.range(0, 4)? {
                0 => (cmp(CmpOp::Gt, live.clone(), int(w as i64 - 1)), false),
                1 => (cmp(CmpOp::Ge, live.clone(), int(w as i64 + 1)), false),
                2 => (cmp(CmpOp::Le, int(w as i64), live.clone()), false),
                3 => (cmp(CmpOp::Eq, live.clone(), int(w as i64)), false),
                _ => (cmp(CmpOp::Lt, live.clone(), int(w as i64)), true),
            }
        };
        let tail_sc = Scope {
            inner: sc.inner.clone(),
            tail: Some(w),
            depth_left: sc.depth_left,
        };
        let mut pre = Vec::new();
        let base = self.pick_base()?;
        let rows_ax = base.val.rows_axis().unwrap_or(0);
        let sel = match self.weighted(&[
            5,
            if self.cfg.arange_index { 2 } else { 0 },
            if self.cfg.arange_index && self.cfg.named_index {
                1
            } else {
                0
            },
            if self.cfg.arange_index { 1 } else { 0 },
        ])? {
            0 => Index::Slice {
                start: Some(sub(live.clone(), int(w as i64))),
                stop: Some(live.clone()),
                step: None,
            },
            1 => ix(arange(
                Some(sub(live.clone(), int(w as i64))),
                live.clone(),
                None,
            )),
            2 => {
                let picked = self.fresh("picked");
                pre.push(assign(
                    &picked,
                    arange(Some(sub(live.clone(), int(w as i64))), live.clone(), None),
                ));
                ix(name(&picked))
            }
            _ => {
                // Strided: values below w, which the branch guarantees.
                let s = self.range(2, 3)?;
                let a = self.range(0, w.saturating_sub(1))?;
                ix(arange(
                    Some(int(a as i64)),
                    int(w as i64),
                    Some(int(s as i64)),
                ))
            }
        };
        let read = self.read_with(&tail_sc, &base, rows_ax, sel)?;
        let read = self.acc_update(read)?;
        let other = if self.u.ratio(1, 3)? || in_else {
            let o = self.tile_attr_item(sc)?;
            vec![o]
        } else {
            vec![]
        };
        let stmt = if in_else {
            if_(cond, other, vec![read])
        } else {
            if_(cond, vec![read], other)
        };
        pre.push(stmt);
        Ok(pre)
    }

    /// `rows = local.index` then `if <cond>: acc = acc + x_block[rows, ...]` (spec D6).
    fn named_branch(&mut self, sc: &Scope) -> Result<Vec<Stmt>> {
        let o = self.outer().clone();
        let inner = sc
            .inner
            .clone()
            .expect("named branches are inside inner loops");
        let (sel, scalar) = self.inner_selector(&inner)?;
        let Index::Expr(sel) = sel else {
            unreachable!("inner selectors are expressions")
        };
        let rows = self.fresh("rows");
        if scalar {
            self.scalar_names.push(rows.clone());
        }
        let c = self.range(1, o.block.max(2))? as i64;
        let live = name(&o.live);
        let cond = match self.weighted(&[6, 2, 1, 1])? {
            0 => cmp(CmpOp::Ge, live, int(c)),
            1 => cmp(CmpOp::Ge, attr(&inner.var, TileAttr::Count), int(1)),
            2 => cmp(CmpOp::Ne, live, int(c)),
            _ => cmp(CmpOp::Lt, int(c), live),
        };
        let base = self.pick_base()?;
        let ax = base.val.rows_axis().unwrap_or(0);
        let read = self.read_with(sc, &base, ax, ix(name(&rows)))?;
        let upd = self.acc_update(read)?;
        Ok(vec![assign(&rows, sel), if_(cond, vec![upd], vec![])])
    }

    fn pick_base(&mut self) -> Result<Base> {
        let bases: Vec<Base> = self
            .outer()
            .bases
            .iter()
            .filter(|b| b.val.rows_count() == 1)
            .cloned()
            .collect();
        // A view bound before the items is mostly read (an unread one is a whole consumer).
        let i = if bases.len() > 1 && self.u.ratio(3, 4)? {
            self.range(1, bases.len() - 1)?
        } else {
            0
        };
        Ok(bases[i].clone())
    }

    /// A selector through the inner loop's tile: `local.index`, `local.index + k`, `local.begin`.
    fn inner_selector(&mut self, inner: &Inner) -> Result<(Index, bool)> {
        let v = &inner.var;
        let weights = [
            if self.cfg.tile_index && inner.shift == 0 {
                4
            } else {
                0
            },
            if self.cfg.tile_index_offset { 2 } else { 0 },
            match (self.cfg.tile_begin_index, inner.block) {
                (false, _) => 0,
                (true, 1) => 4,
                (true, _) => 1,
            },
        ];
        Ok(match self.weighted(&weights)? {
            0 if weights[0] > 0 => (ix(attr(v, TileAttr::Index)), false),
            1 if weights[1] > 0 => {
                let live_min = self.outer().live_min;
                let k = if inner.shift > 0 {
                    self.range(0, inner.shift)? as i64
                } else if self.u.ratio(1, 3)? {
                    // `t.index + -k`: torch wraps the first rows' negative indices to the last
                    // rows (every tile has at least `live_min` of them), so the case is valid
                    // eagerly while the lowering must refuse the shifted run (the way a
                    // dropped offset, helion #2006, or an unmasked gather, D11, shows).
                    -(self.range(1, live_min.clamp(1, 3))? as i64)
                } else {
                    0
                };
                (ix(add(attr(v, TileAttr::Index), int(k))), false)
            }
            2 if weights[2] > 0 => (ix(attr(v, TileAttr::Begin)), true),
            _ => (ix(attr(v, TileAttr::Index)), false),
        })
    }

    /// A read of a base, reduced to the accumulator's shape. With `through_inner`, the row
    /// selector comes from the innermost tile loop.
    fn read_expr(&mut self, sc: &Scope, through_inner: bool) -> Result<Expr> {
        let base = self.pick_base()?;
        let rows_ax = base.val.rows_axis().unwrap_or(0);
        if through_inner && let Some(inner) = sc.inner.clone() {
            let (sel, _) = self.inner_selector(&inner)?;
            return self.read_with(sc, &base, rows_ax, sel);
        }
        // A static selector on the row dim, or on another dim.
        let other_dims: Vec<usize> = (0..base.val.rank()).filter(|&a| a != rows_ax).collect();
        // Reads of other dims leave the row dim (and its live guard) whole: Helion plans them
        // only on unguarded blocks.
        let on_rows = other_dims.is_empty()
            || if self.outer().unguarded {
                self.u.ratio(5, 6)?
            } else {
                self.u.ratio(15, 16)?
            };
        if on_rows {
            let sel = self.static_row_selector(sc)?;
            self.read_with(sc, &base, rows_ax, sel)
        } else {
            let ax = *self.u.choose(&other_dims)?;
            let Dim::Fixed(d) = base.val.dims[ax] else {
                unreachable!("only the row dim varies")
            };
            let sel = self.fixed_selector(d)?;
            self.read_with(sc, &base, ax, sel)
        }
    }

    /// The rows every tile is guaranteed to have here.
    fn guaranteed_rows(&self, sc: &Scope) -> usize {
        let o = self.outer();
        o.live_min.max(sc.tail.unwrap_or(0))
    }

    /// A constant selector on the row dim: an int, a slice, an iota (static or strided), or one
    /// Helion refuses (negative, open, stepped, past the block).
    fn static_row_selector(&mut self, sc: &Scope) -> Result<Index> {
        let rows = self.guaranteed_rows(sc);
        let block = self.outer().block;
        if self.wild()? {
            // Negative bounds weigh double: they are how Python code names the last rows
            // (`x[-1]`, `x[-3:-1]`), the refused idiom a kernel author reaches for first.
            return Ok(match self.weighted(&[2, 2, 1, 1, 1, 1])? {
                0 => Index::Int(-(self.range(1, rows)? as i64)),
                1 => self.negative_slice(block, true)?,
                2 => {
                    let a = self.range(0, block - 1)? as i64;
                    let b = (block + self.range(1, 8)?) as i64;
                    Index::Slice {
                        start: Some(int(a)),
                        stop: Some(int(b)),
                        step: None,
                    }
                }
                3 => {
                    let a = self.range(0, block)? as i64;
                    if self.u.ratio(1, 2)? {
                        Index::Slice {
                            start: Some(int(a)),
                            stop: None,
                            step: None,
                        }
                    } else {
                        Index::Slice {
                            start: None,
                            stop: Some(int(a.max(1))),
                            step: None,
                        }
                    }
                }
                4 => {
                    let b = self.range(1, block)? as i64;
                    Index::Slice {
                        start: Some(int(0)),
                        stop: Some(int(b)),
                        step: Some(int(self.range(2, 3)? as i64)),
                    }
                }
                _ => {
                    let a = self.range(0, block)? as i64;
                    Index::Slice {
                        start: Some(int(a)),
                        stop: Some(int(a)),
                        step: None,
                    }
                }
            });
        }
        let weights = [
            if self.cfg.int_index { 7 } else { 0 },
            if self.cfg.static_slice || !(self.cfg.int_index || self.cfg.arange_index) {
                7
            } else {
                0
            },
            if self.cfg.arange_index { 1 } else { 0 },
            if self.cfg.arange_index { 1 } else { 0 },
            if self.cfg.arange_index { 1 } else { 0 },
        ];
        Ok(match self.weighted(&weights)? {
            0 => Index::Int(self.range(0, rows - 1)? as i64),
            1 => {
                let a = self.range(0, block - 1)?;
                let b = self.range(a + 1, block)?;
                Index::Slice {
                    start: Some(int(a as i64)),
                    stop: Some(int(b as i64)),
                    step: None,
                }
            }
            2 => {
                let a = self.range(0, rows - 1)?;
                let b = self.range(a + 1, rows)?;
                ix(arange(Some(int(a as i64)), int(b as i64), None))
            }
            3 => {
                // `a + hl.arange(n)` (a static index for Helion's value fallback).
                let n = self.range(1, rows)?;
                let a = self.range(0, rows - n)?;
                ix(add(int(a as i64), arange(None, int(n as i64), None)))
            }
            _ => {
                let s = self.range(2, 3)?;
                let a = self.range(0, rows - 1)?;
                let b = self.range(a + 1, rows)?;
                ix(arange(
                    Some(int(a as i64)),
                    int(b as i64),
                    Some(int(s as i64)),
                ))
            }
        })
    }

    /// A slice with a negative start on a dim of `d` elements (the block's rows when `rows`,
    /// else a fixed dim), as Python code writes one: `[-k:-j]`, `[-k:b]`. Helion refuses a
    /// negative start at trace time (spec D8: the dim's size is unknown there, so the bound
    /// cannot be normalized). Mostly the raw width `stop - start` stays within `d`, so that a
    /// lowering that let the bound through would take it to the planner as a run inside the
    /// block (and read at a negative offset) rather than refuse it as too wide; sometimes it
    /// is wider, as `[-3:2]` on four rows is. Torch normalizes `[-k:b]` to `[d-k:b]`: on the
    /// row dim an empty result is fine (its sum is zeros), on a fixed dim the slice is kept
    /// non-empty so the value keeps a shape later views can name.
    fn negative_slice(&mut self, d: usize, rows: bool) -> Result<Index> {
        let k = self.range(1, d)?;
        let slice = |a: usize, b: i64| Index::Slice {
            start: Some(int(-(a as i64))),
            stop: Some(int(b)),
            step: None,
        };
        if k >= 2 && self.u.ratio(2, 3)? {
            return Ok(slice(k, -(self.range(1, k - 1)? as i64)));
        }
        let stop = if rows && self.u.ratio(2, 3)? {
            self.range(0, d - k)?
        } else {
            self.range(d - k + 1, d)?
        };
        Ok(slice(k, stop as i64))
    }

    /// A selector on a fixed dim of size `d`.
    fn fixed_selector(&mut self, d: usize) -> Result<Index> {
        if self.wild()? {
            return Ok(match self.range(0, 2)? {
                0 => Index::Int(-(self.range(1, d)? as i64)),
                1 => self.negative_slice(d, false)?,
                _ => Index::Slice {
                    start: Some(int(0)),
                    stop: Some(int((d + self.range(1, 128)?) as i64)),
                    step: None,
                },
            });
        }
        let weights = [
            if self.cfg.int_index { 3 } else { 0 },
            3,
            if self.cfg.arange_index { 1 } else { 0 },
        ];
        Ok(match self.weighted(&weights)? {
            0 => Index::Int(self.range(0, d - 1)? as i64),
            1 => {
                // Full width (aligned on every dim), one element, or a run.
                let (a, b) = match self.weighted(&[3, 1, 1])? {
                    0 => (0, d),
                    1 => {
                        let a = self.range(0, d - 1)?;
                        (a, a + 1)
                    }
                    _ => {
                        let a = self.range(0, d - 1)?;
                        (a, self.range(a + 1, d)?)
                    }
                };
                Index::Slice {
                    start: Some(int(a as i64)),
                    stop: Some(int(b as i64)),
                    step: None,
                }
            }
            _ => {
                let a = self.range(0, d - 1)?;
                let b = self.range(a + 1, d)?;
                ix(arange(Some(int(a as i64)), int(b as i64), None))
            }
        })
    }

    /// `base[entries]` with `sel` at axis `ax`, `:` elsewhere, sometimes a `None` and (wild) a
    /// second narrowing entry, then optional views, permutes and a nested static selection,
    /// reduced to the accumulator's shape.
    fn read_with(&mut self, sc: &Scope, base: &Base, ax: usize, sel: Index) -> Result<Expr> {
        let _ = sc;
        let mut base_e = name(&base.name);
        let mut val = base.val.clone();
        let mut ax = ax;
        // An inline permute before narrowing (Helion refuses narrowing a permuted Ref).
        if self.cfg.permute && val.rank() >= 2 && self.pct(self.cfg.permute_percent)? {
            let mut perm: Vec<usize> = (0..val.rank()).collect();
            let j = self.range(0, perm.len() - 1)?;
            perm.swap(ax, j);
            if j == ax {
                let k = (ax + 1) % perm.len();
                perm.swap(ax, k);
            }
            base_e = permute(base_e, perm.iter().map(|&p| p as i64).collect());
            ax = perm.iter().position(|&p| p == ax).unwrap_or(0);
            val = Val {
                dims: perm.iter().map(|&p| val.dims[p]).collect(),
                contiguous: false,
            };
        }
        let rank = val.rank();
        let mut entries: Vec<Index> = (0..rank).map(|_| Index::Full).collect();
        let mut dims: Vec<Option<Dim>> = val.dims.iter().map(|d| Some(*d)).collect();
        dims[ax] = self.select_dim(&sel, val.dims[ax]);
        entries[ax] = sel;
        // Wild: a second narrowing entry (Helion's trace refuses more than one).
        // (Not beside a tensor index: NumPy and PyTorch place the result dims differently.)
        let others: Vec<usize> = (0..rank)
            .filter(|&a| a != ax && matches!(val.dims[a], Dim::Fixed(_)))
            .collect();
        let primary_advanced = matches!(&entries[ax], Index::Expr(x) if !self.is_scalar(x));
        if !others.is_empty() && !primary_advanced && self.wild()? && self.u.ratio(1, 3)? {
            let a = *self.u.choose(&others)?;
            if let Dim::Fixed(d) = val.dims[a] {
                entries[a] = Index::Int(self.range(0, d - 1)? as i64);
                dims[a] = None;
            }
        }
        let mut out_dims: Vec<Dim> = dims.into_iter().flatten().collect();
        if self.cfg.new_axis && self.u.ratio(1, 24)? {
            let p = self.range(0, entries.len())?;
            entries.insert(p, Index::NewAxis);
            // The output position of the new axis counts the entries before it that keep a dim.
            let out_pos = entries[..p]
                .iter()
                .filter(|e| {
                    !matches!(e, Index::Int(_)) && !matches!(e, Index::Expr(x) if self.is_scalar(x))
                })
                .count();
            out_dims.insert(out_pos.min(out_dims.len()), Dim::Fixed(1));
        }
        let contiguous = contiguous_after(&entries, val.contiguous, &|x| !self.is_scalar(x));
        let entries = self.trim(entries);
        let mut e = subscript(base_e, entries);
        let mut v = Val {
            dims: out_dims,
            contiguous,
        };
        // Post-narrowing views and a nested static selection (spec example 4).
        if self.cfg.views && self.pct(self.cfg.view_percent)? {
            let (ne, nv) = self.view_chain(e, v, 2)?;
            e = ne;
            v = nv;
            let fixed: Vec<usize> = (0..v.rank())
                .filter(|&a| matches!(v.dims[a], Dim::Fixed(_)))
                .collect();
            if !fixed.is_empty() && self.u.ratio(1, 2)? {
                let a = *self.u.choose(&fixed)?;
                let Dim::Fixed(d) = v.dims[a] else {
                    unreachable!("filtered to fixed dims")
                };
                let sel = if self.wild()? {
                    self.negative_slice(d, false)?
                } else {
                    let lo = self.range(0, d - 1)?;
                    let hi = self.range(lo + 1, d)?;
                    Index::Slice {
                        start: Some(int(lo as i64)),
                        stop: Some(int(hi as i64)),
                        step: None,
                    }
                };
                let Some(dim) = self.select_dim(&sel, Dim::Fixed(d)) else {
                    unreachable!("a slice keeps its dim")
                };
                let mut idx: Vec<Index> = (0..v.rank()).map(|_| Index::Full).collect();
                idx[a] = sel;
                v.dims[a] = dim;
                v.contiguous = v.contiguous && a == 0;
                e = subscript(e, self.trim(idx));
            }
        }
        self.reduce(e, v)
    }

    /// The dim a selector leaves: none for a scalar, a run of rows, or a fixed count.
    fn select_dim(&self, sel: &Index, d: Dim) -> Option<Dim> {
        match sel {
            Index::Full => Some(d),
            Index::NewAxis => Some(d),
            Index::Int(_) => None,
            Index::Slice { start, stop, step } => {
                let lit = |e: &Option<Expr>| match e.as_ref().map(|x| &x.kind) {
                    Some(ExprKind::Int(v)) => Ok(Some(*v)),
                    None => Ok(None),
                    Some(_) => Err(()),
                };
                match (d, lit(start), lit(stop), lit(step)) {
                    (Dim::Fixed(n), Ok(a), Ok(b), Ok(s)) => {
                        Some(Dim::Fixed(slice_len(a, b, s.unwrap_or(1).max(1), n)))
                    }
                    _ => Some(Dim::Rows),
                }
            }
            Index::Expr(e) => {
                if self.is_scalar(e) {
                    None
                } else {
                    match iota_len(e) {
                        Some(n) => Some(Dim::Fixed(n)),
                        None => Some(Dim::Rows),
                    }
                }
            }
        }
    }

    /// Whether an index expression is a scalar (drops its dim), names bound to scalars included.
    fn is_scalar(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Name(n) => self.scalar_names.iter().any(|s| s == n),
            _ => is_scalar_expr(e),
        }
    }

    fn reduce(&mut self, e: Expr, v: Val) -> Result<Expr> {
        let acc = self.acc_shape.clone();
        let mut bits = Vec::new();
        for _ in 0..4 {
            bits.push(self.u.ratio(1, 2)?);
        }
        let mut it = bits.into_iter();
        Ok(reduce_to(e, v, &acc, &mut || it.next().unwrap_or(false)))
    }
}

/// Whether an index expression is a scalar (an int, a tile begin): it drops its dim.
fn is_scalar_expr(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int(_) => true,
        ExprKind::TileAttr { attr, .. } => *attr != TileAttr::Index,
        ExprKind::Binary { lhs, rhs, .. } => is_scalar_expr(lhs) && is_scalar_expr(rhs),
        _ => false,
    }
}

/// The length of a static iota index (`hl.arange(a, b[, s])`, `a + hl.arange(n)`).
fn iota_len(e: &Expr) -> Option<usize> {
    match &e.kind {
        ExprKind::Arange { start, end, step } => {
            let lit = |x: &Expr| match x.kind {
                ExprKind::Int(v) => Some(v),
                _ => None,
            };
            let a = start.as_deref().map_or(Some(0), lit)?;
            let b = lit(end)?;
            let s = step.as_deref().map_or(Some(1), lit)?;
            (s > 0).then(|| {
                if b > a {
                    ((b - a + s - 1) / s) as usize
                } else {
                    0
                }
            })
        }
        ExprKind::Binary { lhs, rhs, .. } => iota_len(lhs).or_else(|| iota_len(rhs)),
        _ => None,
    }
}
