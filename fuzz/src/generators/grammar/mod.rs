//! The generator proper, the grammar cases are drawn from: bytes in, one admissible [`Case`] out.
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
//!
//! Layout: this module owns the generator's state ([`Gen`], and what it knows about the outer
//! loop and the scope an item is drawn in) and its small draws (percentages, ranges, weighted
//! choices, fresh names). The rest is split by what it decides: [`kernel`] the kernel skeleton
//! around the items, [`items`] the items, [`loops`] inner loops and branches, [`subscripts`] the
//! index forms of reads, [`views`] view chains, [`accumulate`] the accumulator and the stores,
//! [`inputs`] the input tensors. Each weighted choice's weights are named constants next to
//! it, with why they are what they are where that is known.

mod accumulate;
mod inputs;
mod items;
mod kernel;
mod loops;
mod ops;
mod production;
mod subscripts;
mod views;

use super::config::GenConfig;
use super::shape::Val;
use arbitrary::{Result, Unstructured};
use lang::ir::{Case, DType, Index, LoopType};

/// Generates one case from `u`, steered by `cfg` (normalized first).
pub fn generate(u: &mut Unstructured<'_>, cfg: &GenConfig) -> Result<Case> {
    let cfg = cfg.normalized();
    Gen::new(u, &cfg).case()
}

/// `weight` where `allowed`, else 0: the choice is never picked.
fn when(allowed: bool, weight: u32) -> u32 {
    if allowed { weight } else { 0 }
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

/// What a case is made of, decided before its body: see [`Gen::case`].
#[derive(Clone, Copy, Debug)]
struct Plan {
    family: Family,
    /// The kernel writes `y` into the tensor it loads.
    writes: bool,
    /// Through a host `view_as` alias of it.
    alias: bool,
    /// `hl.grid(grid)`: more than 1 only when the grid runs over output rows.
    grid: usize,
    /// `acc` starts from the host tensor `init` (one row per request).
    init_acc: bool,
    /// The kernel takes an index tensor `idx` that items gather `x`'s rows through.
    gathers: bool,
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
    /// The tile boundary the case's shape sits at ([`kernel::Boundary`]), drawn with `x`'s
    /// shape.
    boundary: Option<kernel::Boundary>,
    /// The kernel writes the tensor it loads ([`Plan::writes`]): no item reads `x` from the
    /// tensor after the block's load then.
    writes_x: bool,
    /// [`Plan::gathers`]: items may read `x[idx[outer], ...]`.
    gathers: bool,
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
            boundary: None,
            writes_x: false,
            gathers: false,
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

    /// Picks an index by weight; zero weights are never picked. The weight tables are named
    /// constants next to each choice, with [`when`] for the ones the config or the scope rules
    /// out.
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

    fn outer(&self) -> &Outer {
        self.outer
            .as_ref()
            .expect("items are generated inside the outer tile loop")
    }
}
