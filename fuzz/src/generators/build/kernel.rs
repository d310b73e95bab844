//! The kernel skeleton: [`Gen::case`] decides, in order, everything around the items — the
//! dtype and loop type, the family (an `hl.grid` around the tile loop, or the tile loop as the
//! launch grid), `x`'s shape, whether the case writes the tensor it loads, the grid, the trace
//! output, the outer tile loop's bounds and block, the host allocations, the outer body, the
//! inputs, the config and the call — and the blocks of the outer loop and of the `tile.count`
//! loop ahead of it.

use super::{Base, Family, Gen, Outer, Scope};
use crate::generators::make::*;
use crate::generators::shape::{Dim, Val};
use arbitrary::Result;
use lang::ir::blocks::minimum_block;
use lang::ir::{
    AllocKind, AllocShape, Arg, CASE_VERSION, Call, Case, Config, Ctor, DType, ExprKind, Index,
    Input, Kernel, LoopType, Param, ParamKind, Span, Stmt, StmtKind, TileAttr, ViewOp,
};

impl Gen<'_, '_> {
    pub(super) fn case(mut self) -> Result<Case> {
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
        crate::generators::fixup::canonical_lists(&mut body);
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
        crate::generators::fixup::subscript_partial_lists(&mut case, &mut || keep);
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
}
