//! Seeded generation: cases drawn from *seed* case scripts (real-style kernels: the corpus's,
//! and whatever `pallas-diff import` made of a user's file) by mutations that keep the kernel
//! valid, beside the grammar's own cases ([`GenConfig::seed_percent`] of a campaign's cases
//! when `fuzz --seeds DIR` gives seeds).
//!
//! This module owns the seed set ([`Seeds::load_dir`]: every case script and case JSON of a
//! directory that parses and is admissible, the rest listed with the reason) and the mutator
//! ([`mutate`]). A mutant is 1–3 of:
//! - a tensor input's dim moved to a boundary of a block: one below, at and one above a
//!   multiple of a block size the case uses (config or `block_size=`), or 0 and 1 rows;
//! - a config block size or a loop's `block_size=` halved or doubled;
//! - the loop type (`unroll`, `fori_loop`, `emit_pipeline`, absent);
//! - the load buffer counts (absent, or 1–3 per tensor parameter);
//! - a float input's dtype (float32 ↔ bfloat16);
//! - an index entry swapped for its neighbour (a constant ±1, a slice bound ±1, `t.index` ↔
//!   `t.index + 0`, `t.index + k` ↔ `t.index + (k ± 1)`);
//! - a tile loop's begin moved off 0 (`hl.tile(n)` → `hl.tile(1, n)`, or by a block);
//! - a tile loop's constant end made one short (a partial tail);
//! - an input's values (`randn` ↔ `rand` ↔ `ones`, another `torch.manual_seed`).
//!
//! Every mutant is held to [`validate_admissible`], as the grammar's cases are; a mutant that
//! fails it is drawn again (up to [`TRIES`] times), and after that the seed is checked under a
//! mutated config alone (a config mutation keeps any admissible seed admissible but for
//! Helion's own refusals, which are verdicts). Deterministic: the same bytes give the same
//! mutant.

use crate::generators::{GenConfig, validate_admissible};
use arbitrary::Unstructured;
use lang::ir::{
    BinOp, Case, Ctor, Expr, ExprKind, Index, InputOp, LoopKind, LoopType, ParamKind, Span,
    StmtKind, TileAttr,
    walk::{each_expr_mut, each_stmt_mut, stmt_exprs_mut},
};
use lang::tensor::DType;
use std::path::{Path, PathBuf};

/// Mutants drawn per seeded case before falling back to a config-only mutation.
pub const TRIES: usize = 8;

/// One seed: a case and its name (the file it came from, without the extension).
#[derive(Clone, Debug)]
pub struct Seed {
    /// The name reports and provenance use (`causal_conv1d_update`).
    pub name: String,
    /// The seed case.
    pub case: Case,
}

/// The seeds of a campaign.
#[derive(Clone, Debug, Default)]
pub struct Seeds {
    /// Seeds, sorted by name (a directory's order does not move a campaign's cases).
    pub seeds: Vec<Seed>,
}

/// A seed file not used, and why.
#[derive(Clone, Debug)]
pub struct Refused {
    /// The file.
    pub path: PathBuf,
    /// Why (a frontend error with file:line:col, or the admissibility flaw).
    pub reason: String,
}

/// A seed directory that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    /// The directory or a file in it cannot be read.
    // The reason is the error's source: the CLI prints the chain (`{:#}`), so naming it here
    // too printed it twice.
    #[error("cannot read seeds from '{path}'")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl Seeds {
    /// Every `.py` and `.json` case of `dir` (not recursive), parsed by the frontend and held
    /// to [`validate_admissible`]; the others are returned as [`Refused`].
    pub fn load_dir(dir: &Path) -> Result<(Seeds, Vec<Refused>), SeedError> {
        let io = |path: &Path, source| SeedError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| io(dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "py" || x == "json"))
            .collect();
        paths.sort();
        let (mut seeds, mut refused) = (Vec::new(), Vec::new());
        for path in paths {
            let text = std::fs::read_to_string(&path).map_err(|e| io(&path, e))?;
            let name = path
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
            match lang::frontend::load_case_text(&text, &path.display().to_string()) {
                Err(e) => refused.push(Refused {
                    path,
                    reason: e.to_string(),
                }),
                Ok(mut case) => {
                    case.strip_spans();
                    match validate_admissible(&case) {
                        Ok(()) => seeds.push(Seed { name, case }),
                        Err(flaw) => refused.push(Refused {
                            path,
                            reason: format!("not admissible: {flaw}"),
                        }),
                    }
                }
            }
        }
        Ok((Seeds { seeds }, refused))
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.seeds.is_empty()
    }
}

/// A mutant of one of `seeds` from `bytes`: the seed's index and the case. `None` when the
/// seed set is empty.
pub fn draw_seeded(seeds: &Seeds, bytes: &[u8], cfg: &GenConfig) -> Option<(usize, Case)> {
    if seeds.is_empty() {
        return None;
    }
    let mut u = Unstructured::new(bytes);
    let i = u.choose_index(seeds.seeds.len()).unwrap_or(0);
    Some((i, mutate(&seeds.seeds[i].case, &mut u, cfg)))
}

/// An admissible mutant of `seed` (see the module docs).
pub fn mutate(seed: &Case, u: &mut Unstructured<'_>, cfg: &GenConfig) -> Case {
    for _ in 0..TRIES {
        let mut case = seed.clone();
        let n = u.int_in_range(1..=3u8).unwrap_or(1);
        for _ in 0..n {
            mutate_once(&mut case, u, cfg);
        }
        if case != *seed && validate_admissible(&case).is_ok() {
            return case;
        }
    }
    let mut case = seed.clone();
    mutate_config(&mut case, u, cfg);
    if validate_admissible(&case).is_ok() {
        case
    } else {
        seed.clone()
    }
}

/// One mutation, its kind drawn.
fn mutate_once(case: &mut Case, u: &mut Unstructured<'_>, cfg: &GenConfig) {
    match u.int_in_range(0..=7u8).unwrap_or(0) {
        0 | 1 => boundary_shape(case, u),
        2 => mutate_config(case, u, cfg),
        3 => dtype(case, u, cfg),
        4 => neighbour_index(case, u),
        5 => tile_begin(case, u),
        6 => partial_tail(case, u),
        _ => values(case, u),
    }
}

/// Block sizes the case uses: its config's and its loops' constant `block_size=`s.
fn block_sizes(case: &Case) -> Vec<i64> {
    let mut out: Vec<i64> = case.config.block_sizes.clone();
    each_stmt_mut(&mut case.kernel.body.clone(), &mut |s| {
        if let StmtKind::For(lp) = &s.kind {
            for d in &lp.dims {
                if let Some(Expr {
                    kind: ExprKind::Int(b),
                    ..
                }) = &d.block_size
                {
                    out.push(*b);
                }
            }
        }
    });
    out.retain(|&b| b > 0);
    if out.is_empty() {
        out.push(8);
    }
    out
}

/// The shape of a shape-carrying constructor.
fn ctor_shape(ctor: &mut Ctor) -> Option<&mut Vec<usize>> {
    match ctor {
        Ctor::Randn { shape }
        | Ctor::Rand { shape }
        | Ctor::Ones { shape }
        | Ctor::Zeros { shape }
        | Ctor::Empty { shape }
        | Ctor::Full { shape, .. }
        | Ctor::Randint { shape, .. } => Some(shape),
        Ctor::Arange { .. } | Ctor::Range { .. } | Ctor::Eye { .. } | Ctor::Tensor { .. } => None,
    }
}

/// A dim of a made-up input (no reshape or expand after it) moved to a block boundary.
fn boundary_shape(case: &mut Case, u: &mut Unstructured<'_>) {
    let blocks = block_sizes(case);
    let movable: Vec<usize> = (0..case.inputs.len())
        .filter(|&i| {
            let input = &mut case.inputs[i];
            !input
                .chain
                .iter()
                .any(|op| matches!(op, InputOp::Reshape(_) | InputOp::Expand(_)))
                && ctor_shape(&mut input.ctor).is_some_and(|s| !s.is_empty())
        })
        .collect();
    let Ok(&i) = u.choose(&movable) else { return };
    let Some(shape) = ctor_shape(&mut case.inputs[i].ctor) else {
        return;
    };
    let Ok(d) = u.choose_index(shape.len()) else {
        return;
    };
    let b = *u.choose(&blocks).unwrap_or(&8);
    let k = i64::from(u.int_in_range(1..=2u8).unwrap_or(1));
    let target = match u.int_in_range(0..=4u8).unwrap_or(0) {
        0 => b * k - 1,
        1 => b * k,
        2 => b * k + 1,
        3 => 1,
        _ => 0,
    };
    shape[d] = usize::try_from(target.max(0)).unwrap_or(0);
}

/// The config: a block size halved or doubled, the loop type, the buffer counts.
fn mutate_config(case: &mut Case, u: &mut Unstructured<'_>, cfg: &GenConfig) {
    match u.int_in_range(0..=2u8).unwrap_or(0) {
        0 if !case.config.block_sizes.is_empty() => {
            let i = u.choose_index(case.config.block_sizes.len()).unwrap_or(0);
            let b = &mut case.config.block_sizes[i];
            *b = if u.arbitrary().unwrap_or(false) {
                (*b * 2).min(128)
            } else {
                (*b / 2).max(1)
            };
        }
        0 => fixed_block(case, u),
        1 => {
            let mut types: Vec<Option<LoopType>> = vec![None];
            for (on, t) in [
                (cfg.unroll, LoopType::Unroll),
                (cfg.fori_loop, LoopType::ForiLoop),
                (cfg.emit_pipeline, LoopType::EmitPipeline),
            ] {
                if on {
                    types.push(Some(t));
                }
            }
            case.config.loop_type = *u.choose(&types).unwrap_or(&None);
        }
        _ => {
            let tensors = case
                .kernel
                .params
                .iter()
                .filter(|p| p.kind == ParamKind::Tensor)
                .count();
            case.config.load_buffer_count = if u.arbitrary().unwrap_or(false) {
                None
            } else {
                Some(
                    (0..tensors)
                        .map(|_| i64::from(u.int_in_range(1..=3u8).unwrap_or(2)))
                        .collect(),
                )
            };
        }
    }
}

/// A loop's constant `block_size=` halved or doubled.
fn fixed_block(case: &mut Case, u: &mut Unstructured<'_>) {
    let double = u.arbitrary().unwrap_or(false);
    let mut sizes = Vec::new();
    each_stmt_mut(&mut case.kernel.body, &mut |s| {
        if let StmtKind::For(lp) = &mut s.kind {
            for d in &mut lp.dims {
                if let Some(Expr {
                    kind: ExprKind::Int(b),
                    ..
                }) = &mut d.block_size
                {
                    sizes.push(*b);
                }
            }
        }
    });
    let Ok(pick) = u.choose_index(sizes.len()) else {
        return;
    };
    let mut k = 0;
    each_stmt_mut(&mut case.kernel.body, &mut |s| {
        if let StmtKind::For(lp) = &mut s.kind {
            for d in &mut lp.dims {
                if let Some(Expr {
                    kind: ExprKind::Int(b),
                    ..
                }) = &mut d.block_size
                {
                    if k == pick {
                        *b = if double {
                            (*b * 2).min(128)
                        } else {
                            (*b / 2).max(1)
                        };
                    }
                    k += 1;
                }
            }
        }
    });
}

/// A float input's dtype swapped (float32 ↔ bfloat16), where the config enables both.
fn dtype(case: &mut Case, u: &mut Unstructured<'_>, cfg: &GenConfig) {
    if !(cfg.float32 && cfg.bfloat16) {
        return;
    }
    let floats: Vec<usize> = (0..case.inputs.len())
        .filter(|&i| {
            let inp = &case.inputs[i];
            inp.chain.iter().all(|op| !matches!(op, InputOp::To(_)))
                && matches!(inp.dtype, None | Some(DType::Float32 | DType::Bfloat16))
                && !matches!(inp.ctor, Ctor::Arange { .. } | Ctor::Tensor { .. })
        })
        .collect();
    let Ok(&i) = u.choose(&floats) else { return };
    let inp = &mut case.inputs[i];
    inp.dtype = Some(match inp.dtype {
        Some(DType::Bfloat16) => DType::Float32,
        _ => DType::Bfloat16,
    });
}

/// One index entry of a load or subscript swapped for its neighbour.
fn neighbour_index(case: &mut Case, u: &mut Unstructured<'_>) {
    let mut count = 0usize;
    visit_indices(case, &mut |_| count += 1);
    let Ok(pick) = u.choose_index(count) else {
        return;
    };
    let up = u.arbitrary().unwrap_or(false);
    let step = if up { 1 } else { -1 };
    let mut k = 0usize;
    visit_indices(case, &mut |index| {
        if k == pick {
            neighbour(index, step);
        }
        k += 1;
    });
}

fn neighbour(index: &mut Index, step: i64) {
    let span = Span::default();
    match index {
        Index::Int(i) => *i += step,
        Index::Slice { start, stop, .. } => {
            for bound in [start, stop].into_iter().flatten() {
                if let ExprKind::Int(b) = &mut bound.kind {
                    *b += step;
                    return;
                }
            }
        }
        Index::Expr(e) => match &mut e.kind {
            ExprKind::TileAttr {
                attr: TileAttr::Index,
                ..
            } => {
                let inner = e.clone();
                *e = Expr::new(
                    ExprKind::Binary {
                        op: BinOp::Add,
                        lhs: Box::new(inner),
                        rhs: Box::new(Expr::new(ExprKind::Int(0), span)),
                    },
                    span,
                );
            }
            ExprKind::Binary {
                op: BinOp::Add,
                rhs,
                ..
            } => {
                if let ExprKind::Int(k) = &mut rhs.kind {
                    *k += step;
                }
            }
            _ => {}
        },
        Index::Full | Index::NewAxis => {}
    }
}

/// Every index entry of every load and subscript, in a fixed order.
fn visit_indices(case: &mut Case, f: &mut dyn FnMut(&mut Index)) {
    each_stmt_mut(&mut case.kernel.body, &mut |s| {
        stmt_exprs_mut(s, &mut |e| {
            each_expr_mut(e, &mut |e| {
                if let ExprKind::Load { indices, .. } | ExprKind::Subscript { indices, .. } =
                    &mut e.kind
                {
                    indices.iter_mut().for_each(&mut *f);
                }
            });
        });
        if let StmtKind::Store { indices, .. } = &mut s.kind {
            indices.iter_mut().for_each(&mut *f);
        }
    });
}

/// The tile dims of every tile loop, in a fixed order.
fn visit_tile_dims(case: &mut Case, f: &mut dyn FnMut(&mut lang::ir::LoopDim)) {
    each_stmt_mut(&mut case.kernel.body, &mut |s| {
        if let StmtKind::For(lp) = &mut s.kind
            && lp.kind == LoopKind::Tile
        {
            lp.dims.iter_mut().for_each(&mut *f);
        }
    });
}

/// A tile loop that starts at 0 starts at 1 or at a block instead.
fn tile_begin(case: &mut Case, u: &mut Unstructured<'_>) {
    let b = *u.choose(&block_sizes(case)).unwrap_or(&1);
    let begin = if u.arbitrary().unwrap_or(false) { 1 } else { b };
    let mut count = 0;
    visit_tile_dims(case, &mut |d| count += usize::from(d.begin.is_none()));
    let Ok(pick) = u.choose_index(count) else {
        return;
    };
    let mut k = 0;
    visit_tile_dims(case, &mut |d| {
        if d.begin.is_none() {
            if k == pick {
                d.begin = Some(Expr::new(ExprKind::Int(begin), Span::default()));
            }
            k += 1;
        }
    });
}

/// A tile loop's constant end made one short, so its last tile is partial.
fn partial_tail(case: &mut Case, u: &mut Unstructured<'_>) {
    let mut count = 0;
    visit_tile_dims(case, &mut |d| {
        count += usize::from(matches!(d.end.kind, ExprKind::Int(n) if n > 1));
    });
    let Ok(pick) = u.choose_index(count) else {
        return;
    };
    let mut k = 0;
    visit_tile_dims(case, &mut |d| {
        if let ExprKind::Int(n) = &mut d.end.kind
            && *n > 1
        {
            if k == pick {
                *n -= 1;
            }
            k += 1;
        }
    });
}

/// An input's values: `randn` ↔ `rand` ↔ `ones`, or another `torch.manual_seed`.
fn values(case: &mut Case, u: &mut Unstructured<'_>) {
    if u.arbitrary().unwrap_or(false) {
        case.seed = Some(case.seed.unwrap_or(0).wrapping_add(1) % 1_000_003);
        return;
    }
    let Ok(i) = u.choose_index(case.inputs.len()) else {
        return;
    };
    let inp = &mut case.inputs[i];
    if matches!(inp.dtype, Some(DType::Int32)) {
        return;
    }
    inp.ctor = match &inp.ctor {
        Ctor::Randn { shape } => Ctor::Rand {
            shape: shape.clone(),
        },
        Ctor::Rand { shape } => Ctor::Ones {
            shape: shape.clone(),
        },
        Ctor::Ones { shape } => Ctor::Randn {
            shape: shape.clone(),
        },
        other => other.clone(),
    };
}

#[cfg(test)]
mod tests;
