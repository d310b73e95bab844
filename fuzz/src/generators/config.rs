//! The generator's knobs, declared once in `define_gen_config!`: one field list, each knob
//! with its default and (for counts and percentages) its range, gives [`GenConfig`] with its
//! `Default`, its serde form (kebab-case keys, unknown keys refused), [`GenConfigOverrides`]
//! (every knob optional, as `--flags` through `clap::Args` and as a JSON file), `impl Arbitrary
//! for GenConfig` (swarm testing: each input draws its own mix of enabled features, so rare
//! interactions are not drowned out by the defaults), the clamping in
//! [`GenConfig::normalize`], and the range and default in each knob's docs and `--help`.
//!
//! Precedence: `flags.or(json).apply(GenConfig::default())` — a flag wins over the JSON file,
//! which wins over the default.

use arbitrary::{Arbitrary, Unstructured};
use serde::{Deserialize, Serialize};

/// The `--help` text of a generator flag, from its field's doc lines: the leading space of
/// each line dropped, rustdoc links (`` [`GenConfig::wild_index`] ``) written as the flag they
/// name (`--wild-index`), then the range (where the knob has one) and the default on lines of
/// their own.
pub fn flag_help(doc: &[&str], range: Option<&str>, default: &str) -> String {
    let mut text = doc
        .iter()
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    while let Some(start) = text.find("[`") {
        let Some(len) = text[start..].find("`]") else {
            break;
        };
        let inner = &text[start + 2..start + len];
        let name = inner.rsplit("::").next().unwrap_or(inner);
        let flag = format!("`--{}`", name.replace('_', "-"));
        text.replace_range(start..start + len + 2, &flag);
    }
    match range {
        Some(range) => format!("{text}\n\nRange: {range}\nDefault: {default}"),
        None => format!("{text}\n\nDefault: {default}"),
    }
}

/// Declares the generator config. Each row is `/// doc` `name: Type = default;` for a switch,
/// or `/// doc` `name: Type = default, in lo..=hi;` for a count or a percentage. The range is
/// stated there once: swarm configs draw the knob from it (`impl Arbitrary for GenConfig`;
/// switches draw a `bool`), [`GenConfig::normalize`] clamps the knob to it, and the field's docs
/// and `--help` text state it ("From `lo` to `hi`.", "Range: lo to hi"), beside the default
/// ("Defaults to `<default>`.").
macro_rules! define_gen_config {
    ($(
        $(#[doc = $doc:literal])*
        $field:ident : $ty:ty = $default:expr $(, in $lo:literal ..= $hi:literal)?;
    )*) => {
        /// What the case generator produces: which index forms, loop types, dtypes and features
        /// it may use, the shape ranges, and how often each optional feature appears
        /// (percentages, 0–100). Unknown JSON keys are refused; keys are kebab-case.
        #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
        pub struct GenConfig {
            $(
                $(#[doc = $doc])*
                $(
                    #[doc = ""]
                    #[doc = concat!("From `", stringify!($lo), "` to `", stringify!($hi), "`.")]
                )?
                #[doc = ""]
                #[doc = concat!("Defaults to `", stringify!($default), "`.")]
                pub $field: $ty,
            )*
        }

        impl Default for GenConfig {
            fn default() -> Self {
                GenConfig { $( $field: $default, )* }
            }
        }

        impl GenConfig {
            /// Every count and percentage clamped to its range.
            fn clamp_to_ranges(&mut self) {
                $( $( self.$field = self.$field.clamp($lo, $hi); )? )*
            }
        }

        /// Every [`GenConfig`] knob as an option: command-line flags (`--max-rows 8`) and the
        /// JSON config file both deserialize to this, and [`GenConfigOverrides::or`] merges them
        /// so that flags win.
        #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::Args)]
        #[serde(rename_all = "kebab-case", deny_unknown_fields)]
        pub struct GenConfigOverrides {
            $(
                $(#[doc = $doc])*
                $(
                    #[doc = ""]
                    #[doc = concat!("From `", stringify!($lo), "` to `", stringify!($hi), "`.")]
                )?
                #[doc = ""]
                #[doc = concat!("Defaults to `", stringify!($default), "`.")]
                #[arg(
                    long,
                    long_help = flag_help(
                        &[$($doc),*],
                        knob_range!($($lo, $hi)?),
                        stringify!($default),
                    )
                )]
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $field: Option<$ty>,
            )*
        }

        impl GenConfigOverrides {
            /// Each knob from `self` where set, else from `other` (flags `.or(json)`).
            pub fn or(self, other: GenConfigOverrides) -> GenConfigOverrides {
                GenConfigOverrides { $( $field: self.$field.or(other.$field), )* }
            }

            /// `base` with every set knob replaced, then normalized ([`GenConfig::normalize`]).
            pub fn apply(&self, mut base: GenConfig) -> GenConfig {
                $( if let Some(v) = &self.$field { base.$field = v.clone(); } )*
                base.normalize();
                base
            }
        }

        impl<'a> Arbitrary<'a> for GenConfig {
            fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
                let mut cfg = GenConfig { $( $field: knob_swarm!(u $(, $lo, $hi)?), )* };
                cfg.normalize();
                Ok(cfg)
            }
        }
    };
}

/// A knob's range as `--help` states it, or `None` for a switch.
macro_rules! knob_range {
    () => {
        None
    };
    ($lo:literal, $hi:literal) => {
        Some(concat!(stringify!($lo), " to ", stringify!($hi)))
    };
}

/// A swarm config's draw of one knob: a switch is an arbitrary `bool`, a count or a percentage
/// is drawn from its range.
macro_rules! knob_swarm {
    ($u:ident) => {
        $u.arbitrary()?
    };
    ($u:ident, $lo:literal, $hi:literal) => {
        $u.int_in_range($lo..=$hi)?
    };
}

define_gen_config! {
    /// Constant int indices (`x_block[1, :, :]`, `x_block[:, 0, :]`).
    int_index: bool = true;
    /// Static slices inside the block (`x_block[1:3, :, :]`).
    static_slice: bool = true;
    /// Constant indices Helion refuses at trace or plan time: negative ints and slice bounds,
    /// bounds past the block, open and stepped slices, several narrowing entries at once, and
    /// branch predicates other than `live >= w`.
    wild_index: bool = true;
    /// `x_block[local.begin, :, :]` (a scalar tile-begin selector).
    tile_begin_index: bool = true;
    /// `x_block[local.index, :, :]` (a tile run).
    tile_index: bool = true;
    /// `x_block[local.index + k, :, :]`, over `hl.tile(live - k)` when `k > 0`.
    tile_index_offset: bool = true;
    /// Tails under `if live >= w:`: `x_block[live - w : live, ...]` and
    /// `hl.arange(live - w, live)`.
    tail: bool = true;
    /// Static and strided `hl.arange(a, b[, s])` and `a + hl.arange(n)` indices.
    arange_index: bool = true;
    /// `None` entries, at every position.
    new_axis: bool = true;
    /// Trailing `:` entries spelled out (`x[outer, :, :]`); when off they are left implicit
    /// (`x[outer]`).
    full_slice: bool = true;
    /// Indices bound to a name before a branch (`rows = local.index` then `if live >= 2:`).
    named_index: bool = true;
    /// `pallas_loop_type="unroll"` (or the key left absent).
    unroll: bool = true;
    /// `pallas_loop_type="fori_loop"`.
    fori_loop: bool = true;
    /// `pallas_loop_type="emit_pipeline"`.
    emit_pipeline: bool = true;
    /// Deepest loop nesting (grid, outer tile, inner tile).
    max_depth: u8 = 3, in 1..=3;
    /// float32 inputs.
    float32: bool = true;
    /// bfloat16 inputs.
    bfloat16: bool = true;
    /// int32 inputs.
    int32: bool = true;
    /// Fewest rows of the tiled (first) dimension.
    min_rows: u8 = 1, in 1..=16;
    /// Most rows of the tiled (first) dimension.
    max_rows: u8 = 16, in 1..=16;
    /// Largest `hl.grid(G)` when the grid runs over output rows.
    max_grid: u8 = 4, in 1..=16;
    /// Most reads, loops and branches in one outer tile body.
    max_items: u8 = 3, in 1..=8;
    /// View chains (`.reshape`, `.view`, `.unsqueeze`, `.squeeze`, `None` views).
    views: bool = true;
    /// `.permute(...)` in read chains.
    permute: bool = true;
    /// Stores and atomics to the loaded tensor, directly or through a host `view_as` alias.
    writes: bool = true;
    /// Tile attributes used as values (`acc + outer.count`).
    tile_attr_values: bool = true;
    /// Whole-block consumers beside narrowing ones (`x_block.float().sum(dim=0)`).
    whole_block: bool = true;
    /// The explicit `hl.load(...)` / `hl.store(...)` spellings.
    explicit_memory_ops: bool = true;
    /// Accumulator updates whose result depends on the order of the iterations
    /// (`acc = acc * 0.5 + v`, `acc = v - acc`), beside the ones that commute.
    ordered_updates: bool = true;
    /// Paired reads: the product of two reads of one base whose selected rows line up element
    /// by element (`x_block[local.index + -1, :, :].float() * x_block[local.index, :, :].float()`,
    /// two static windows of one width), so which row a selector lands on matters even where a
    /// sum over the rows would not notice.
    paired_reads: bool = true;
    /// `pallas_worklist_grouping` and `pallas_load_buffer_count` in the config.
    config_extras: bool = true;
    /// Torch ops on the values folded into the accumulator (`lang::ir::ops`): `torch.relu`,
    /// `torch.maximum`/`minimum`, `torch.exp`, `torch.rsqrt`, `%`, comparisons and `&`/`|`
    /// making masks for `torch.where`, `torch.amax`/`amin`/`sum` with `keepdim=True`. Our model
    /// answers `unsupported` for them; the reference and real Helion check them. Off by
    /// default, so the default campaign's cases stay what they were (the `torch-ops` profile,
    /// `ci/gen-torch-ops.json`, turns it on).
    torch_ops: bool = false;
    /// Inputs made as Helion's own tests make them: `torch.arange(start, end, step)`,
    /// `torch.eye(n, m)` and `torch.randint(low, high, size)` (off by default: the default
    /// campaign's draws stay the ones its measurements were taken on).
    input_ctors: bool = false;
    /// How often an accumulated value goes through a torch op ([`GenConfig::torch_ops`]),
    /// percent.
    torch_op_percent: u8 = 30, in 0..=100;
    /// How often an index drawn is one Helion refuses ([`GenConfig::wild_index`]), percent.
    wild_percent: u8 = 6, in 0..=100;
    /// How often a read is a paired read ([`GenConfig::paired_reads`]), percent.
    paired_read_percent: u8 = 15, in 0..=100;
    /// How often the outer tile loop starts past zero (`hl.tile(4, 12)`), percent.
    nonzero_begin_percent: u8 = 25, in 0..=100;
    /// How often the outer block divides the loop extent, percent.
    dividing_extent_percent: u8 = 50, in 0..=100;
    /// How often a case's shape sits at a tile boundary, percent: the outer tile loop's extent
    /// one row below, at, or one above a multiple of its block (a last tile one row short of
    /// full, no partial tile, a last tile of a single row), or `x` a single row or none (every
    /// loop over its rows runs no tile; where a loop is bounded by a literal, one row). These are the
    /// shapes that catch tile-mask and clamp bugs; otherwise the block is drawn as
    /// [`GenConfig::dividing_extent_percent`] says and the remainder falls where it may. Off
    /// by default, so the default campaign's draws stay the ones its measurements were taken
    /// on (`ci/gen-helion-language.json` sets it).
    boundary_shape_percent: u8 = 0, in 0..=100;
    /// How often an item of the outer body is a tile loop over absolute rows from the outer
    /// tile's begin, `for inner in hl.tile(outer.begin, outer.end - k)`, summing `x[inner, ...]`
    /// read straight from the tensor, percent. Helion takes `tile.end` as a dependent end and
    /// `tile.end - k` as another bound (issue 42: the corpus had neither until entry 0097 and
    /// mutants of `tracing_ops.py` that tell them apart survived). Off by default, so the
    /// default campaign's draws stay the ones its measurements were taken on
    /// (`ci/gen-helion-language.json` sets it).
    absolute_loop_percent: u8 = 0, in 0..=100;
    /// How often a case gathers rows through an index tensor, percent: an int32 input `idx`
    /// of `x`'s rows (`torch.randint(0, rows, (rows,))`), read per outer tile as
    /// `x[idx[outer], ...]` in an item of the outer body (Helion's one-hot gather out of a
    /// resident table, `emit_gather`; the production kernels read state caches so). Off by
    /// default, so the default campaign's draws stay the ones its measurements were taken on
    /// (`ci/gen-helion-language.json` sets it).
    gather_percent: u8 = 0, in 0..=100;
    /// How often a case is a production-shaped kernel, percent: a decode-step convolution over
    /// a state cache read through an index tensor, or a recurrent state update with `hl.dot`
    /// over ragged chunks (`grammar::production`, the shapes of Helion's pretuned
    /// `causal_conv1d` and `gdn_decode` kernels). Off by default, so the default campaign's
    /// draws stay the ones its measurements were taken on (`ci/gen-helion-language.json` sets
    /// it).
    production_percent: u8 = 0, in 0..=100;
    /// How often a case writes the tensor it loads, percent.
    write_percent: u8 = 6, in 0..=100;
    /// Of those writes, how often through a host `view_as` alias, percent.
    alias_write_percent: u8 = 50, in 0..=100;
    /// How often a read goes through a view chain, percent.
    view_percent: u8 = 15, in 0..=100;
    /// How often a read goes through `.permute`, percent.
    permute_percent: u8 = 3, in 0..=100;
    /// How often an item is a whole-block consumer, percent.
    whole_block_percent: u8 = 5, in 0..=100;
    /// How often an item adds a tile attribute, percent.
    tile_attr_percent: u8 = 12, in 0..=100;
    /// How often an inner index is bound to a name before its branch, percent.
    named_index_percent: u8 = 20, in 0..=100;
    /// How often the loaded tensor has one distinct power of two per row (else random or
    /// arange values), percent.
    power_of_two_rows_percent: u8 = 45, in 0..=100;
    /// How often the grid runs over several output rows (`hl.grid(G)`, `G > 1`), percent.
    grid_over_rows_percent: u8 = 25, in 0..=100;
    /// How often the outer tile loop is the launch grid itself (no `hl.grid`), percent.
    top_level_tile_percent: u8 = 15, in 0..=100;
    /// Under `unroll`, how often an inner loop still runs over `live` (which Helion refuses
    /// with `InvalidConfig`), percent.
    unroll_live_loop_percent: u8 = 15, in 0..=100;
    /// How often a tile loop fixes `block_size=` instead of taking a config entry, percent.
    fixed_block_percent: u8 = 30, in 0..=100;
    /// How often a config-driven block that is not a power of two stays in the config, percent
    /// (Helion 1.5.1 refuses it with `InvalidConfig`, D-1.5.1-09; this keeps the refusal
    /// tested). Otherwise the loop fixes it with `block_size=`, which Helion does not check.
    non_power_of_two_config_percent: u8 = 3, in 0..=100;
    /// How often a case keeps its `hl.load`/`hl.store` index lists shorter than their tensor's
    /// rank, percent of cases (Helion 1.5.1 raises an internal `AssertionError: invalid
    /// subscript` on them, D-1.5.1-20, the known issue `helion-partial-index-list-assertion`;
    /// drawn per list, 3% kept 3.6% and 1% kept 3.0% of a Helion campaign's cases, over the 2%
    /// of cases Helion may fail to run). Otherwise a store's or load's list is written as a
    /// subscript, which Helion accepts with trailing dims omitted, and an atomic's list is
    /// completed with `slice(None)` (a 30-minute campaign had 3.5% of its cases on atomics'
    /// partial lists before they were completed).
    partial_index_list_percent: u8 = 1, in 0..=100;
    /// When the outer tile loop is the launch grid, how often its block leaves a partial last
    /// block of `x`'s rows, percent. Helion 1.5.1's launcher cannot run one, whatever the loop
    /// type (the known issue `helion-dma-tail-tile-traced-shape`: 7 of 400 cases of a
    /// `--seed 101` campaign, 1.75%, were that crash when every such block was drawn like an
    /// inner one); at 5% the crash stays tested (at 10%, 2.0% of a 5,000-case `--seed 2030`
    /// campaign could not run in Helion, the fidelity issue's limit, 0.7% of them this crash).
    /// Otherwise the block divides the rows (a 2-D `x` then has power-of-two rows where the row
    /// range allows), and the loop's partial tiles come from a begin past 0 or an end short
    /// of the rows.
    partial_grid_block_percent: u8 = 5, in 0..=100;
    /// How often a branch that updates the accumulator in one arm leaves the other arm without
    /// it, percent. Helion 1.5.1 cannot run a kernel whose loop-carried value is reassigned
    /// only under a data-dependent `if` (the known issue `helion-branch-carried-unbound-local`:
    /// 61 of 5,000 cases of a `--seed 2026` Helion campaign, 1.2% of all and 4.3% of the
    /// lowered ones, when every such branch was one-armed); at 15% the crash stays tested.
    /// Otherwise the other arm reassigns it unchanged (`else: acc = acc`), which Helion runs.
    one_armed_branch_percent: u8 = 15, in 0..=100;
    /// Of the cases whose kernel the compiler refuses, how many a campaign keeps, percent; the
    /// others are drawn again from the same case's seed stream (`campaign::draw`). About 70% of
    /// first draws are refused; at 20% a campaign's cases are ~68% lowered, and every refusal
    /// rule keeps its share of the refusals. 100 checks the generator's cases as drawn.
    refused_keep_percent: u8 = 20, in 0..=100;
    /// With seed case scripts (`fuzz --seeds DIR`), how many of a campaign's cases are mutants
    /// of a seed rather than the grammar's own, percent (`generators::seeded`). Without seeds
    /// it does nothing; `--seeds` alone makes it 50.
    seed_percent: u8 = 0, in 0..=100;
}

impl GenConfig {
    /// Puts every knob in its range and keeps the config able to generate: at least one loop
    /// type and one dtype enabled (fori_loop and float32 when none is), every count and
    /// percentage within the range its row in `define_gen_config!` states, and
    /// `min_rows <= max_rows`.
    pub fn normalize(&mut self) {
        if !(self.unroll || self.fori_loop || self.emit_pipeline) {
            self.fori_loop = true;
        }
        if !(self.float32 || self.bfloat16 || self.int32) {
            self.float32 = true;
        }
        self.clamp_to_ranges();
        if self.min_rows > self.max_rows {
            std::mem::swap(&mut self.min_rows, &mut self.max_rows);
        }
    }

    /// A copy with [`GenConfig::normalize`] applied.
    pub fn normalized(&self) -> GenConfig {
        let mut c = self.clone();
        c.normalize();
        c
    }
}

#[cfg(test)]
mod help_tests {
    use super::flag_help;

    #[test]
    fn flag_help_reads_as_help() {
        let help = flag_help(
            &[
                " How often a read is a paired read ([`GenConfig::paired_reads`]),",
                " percent.",
            ],
            Some("0 to 100"),
            "15",
        );
        assert_eq!(
            help,
            "How often a read is a paired read (`--paired-reads`),\npercent.\n\n\
             Range: 0 to 100\nDefault: 15"
        );
        assert_eq!(
            flag_help(&[" `None` entries, at every position."], None, "true"),
            "`None` entries, at every position.\n\nDefault: true"
        );
    }
}
