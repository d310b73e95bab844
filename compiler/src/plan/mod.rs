//! The resident-Ref planner (spec §2): which loads stay VMEM Refs and how every narrowing
//! subscript reads a run out of one, decided once per config before codegen.
//!
//! This module owns the planner's output types ([`Plan`], [`ResidentPlan`], [`Variant`],
//! [`Selector`]) and its entry points [`plan`] and [`plan_case`]. Codegen only reads a
//! [`Plan`]; it never decides eligibility (spec §2.1). Every refusal is a
//! [`Rejection`] with a rule of the [`crate::verdict`] table.
//!
//! Plans are keyed by [`NodeKey`] of the borrowed [`Case`], like [`Types`]: a key is valid only
//! while the case it was taken from is borrowed.

pub mod addressing;
mod chain;
mod complete;
mod links;
mod selector;

use crate::faults::{Fault, FaultSet};
use crate::verdict::{Rejection, Rule};
use lang::ir::hash::{FastMap, FastSet};
use lang::ir::sym::{Affine, BlockId};
use lang::ir::types::Types;
use lang::ir::{Case, Expr, LoopDim, LoopType, NodeKey, Span};
use links::Links;

/// `_RESIDENT_REF_ATEN_VIEW_TARGETS`: the aten ops that are address-preserving resident Ref
/// transforms (spec §2.5), besides a `None`/`:`-only `hl.subscript`. Explicit on purpose.
pub const RESIDENT_REF_VIEW_TARGETS: [&str; 4] = [
    chain::RESHAPE,
    chain::SQUEEZE,
    chain::UNSQUEEZE,
    chain::VIEW,
];

/// The planner's decision for one config (Helion's `node.meta` entries, spec §2.1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// `pallas_resident_ref_plan`: one entry per node of an accepted chain — the load (root),
    /// every transport on the path (a `Name` read of a Ref: a same-graph reference, a `_new_var`
    /// rename or a capture placeholder), every address-preserving view and every planned
    /// narrowing subscript (spec §2.1, §2.8).
    pub resident: FastMap<NodeKey, ResidentPlan>,
    /// `pallas_static_basic_value_subscript`: narrowing subscripts lowered as plain basic
    /// indexing on a materialized value (db0613ca, spec §2.10).
    pub static_value: FastSet<NodeKey>,
}

impl Plan {
    /// The resident plan of `e`, if `e` is on an accepted chain.
    pub fn resident(&self, e: &Expr) -> Option<&ResidentPlan> {
        self.resident.get(&NodeKey::of(e))
    }

    /// Whether the narrowing subscript `e` is lowered as value basic indexing (spec §2.10).
    pub fn is_static_value(&self, e: &Expr) -> bool {
        self.static_value.contains(&NodeKey::of(e))
    }
}

/// Helion's `_ResidentPlan(materialize, variants, selector)` of one node (spec §2.1, §2.8).
#[derive(Clone, Debug, PartialEq)]
pub struct ResidentPlan {
    /// The node is a value boundary: codegen reads the Ref (`[...]`) instead of emitting a Ref
    /// transform (`.at[...]`, `.reshape(...)`) (spec §2.8, §3.3, §3.4). Always `false` for the
    /// load and for transports.
    pub materialize: bool,
    /// The physical Ref state of the node's *output*, one per worklist factor, in factor order
    /// (spec §2.4). For a transport: the variants it carries (equal to its input's).
    pub variants: Vec<Variant>,
    /// The normalized selector, for a narrowing subscript only (spec §2.6).
    pub selector: Option<Selector>,
    /// The physical Ref state of the node's *input* (the subscripted or viewed Ref), one per
    /// worklist factor; empty for the load. Codegen maps the selector's logical dim to a
    /// physical dim with it (spec §3.4 "using the input node's variant") and takes the tail
    /// clamp's extent from it.
    pub input_variants: Vec<Variant>,
}

/// Helion's `_ResidentVariant(worklist_factor, shape, squeezed_dims, live_guard)`: the physical
/// state of a Ref under one worklist factor (spec §2.4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    /// Worklist grouping factor: 1, or 2 for the grouped branch of `pallas_worklist_grouping=2`
    /// (spec §2.4). Only factor 1 is modelled.
    pub factor: u8,
    /// Physical dims of the Ref; a squeezed scalar selection keeps a hidden size-1 dim
    /// (spec §2.4, §2.7 step 8).
    pub shape: Vec<i64>,
    /// Physical dims hidden from the logical (traced) shape, ascending; logical dim k is the
    /// k-th physical dim not listed here (spec §2.4).
    pub squeezed_dims: Vec<usize>,
    /// `(physical_dim, block_id)` while that dim may contain tail padding of tile `block_id`
    /// (spec §2.4 root guard rule; discharged by §2.7 step 7).
    pub live_guard: Option<(usize, BlockId)>,
}

impl Variant {
    /// The physical dim of logical dim `logical`: the `logical`-th non-squeezed physical dim
    /// (spec §2.4).
    pub fn physical_dim(&self, logical: usize) -> Option<usize> {
        (0..self.shape.len())
            .filter(|d| !self.squeezed_dims.contains(d))
            .nth(logical)
    }

    /// The logical (traced) shape: the physical shape without the squeezed dims.
    pub fn logical_shape(&self) -> Vec<i64> {
        self.shape
            .iter()
            .enumerate()
            .filter(|(d, _)| !self.squeezed_dims.contains(d))
            .map(|(_, &s)| s)
            .collect()
    }
}

/// How a selector picks its run (spec §2.6 cases A–D).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SelectorKind {
    /// Case B: the current block of a zero-based tile loop (`t.index`, `t.index + 0`, or the
    /// scalar `t.begin`); begin is the inner loop's `offset_<bid>` (spec §3.4).
    Tile,
    /// Case A: a constant-width window ending at a tile's live extent inside
    /// `if live >= width:`; begin is clamped `jnp.clip(start, 0, extent - width)` (spec §3.4).
    Tail,
    /// Cases C and D: a literal int or literal slice.
    Static,
}

/// The begin of a selector's run (spec §2.6).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SelectorBegin {
    /// A literal begin (static selectors).
    Static(i64),
    /// A symbolic begin: `t.begin` of the local block for tile selectors, the resolved iota
    /// start (through renames and captures, spec §4 D10) for tail selectors.
    Symbolic(Affine),
}

/// Helion's `_ResidentSelector`: one contiguous run `[begin, begin + width)` on one logical
/// dim, normalized in exactly one place (spec §2.6) and applied to every variant (spec §2.7).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Selector {
    /// Which case of spec §2.6.
    pub kind: SelectorKind,
    /// The narrowed dim of the input's logical shape (= of the output: no `None` is allowed,
    /// spec §2.6, §4 D14).
    pub logical_dim: usize,
    /// Tile selectors: the block id of the local (driving) tile loop (spec §2.6 B).
    pub local_block: Option<BlockId>,
    /// The tile whose live extent bounds the run: the driving loop's end (tile) or the tail's
    /// `live` (tail); the live guard of that tile on the narrowed dim is discharged
    /// (spec §2.6, §2.7 step 7).
    pub outer_block: Option<BlockId>,
    /// Where the run begins (spec §2.6, §3.4).
    pub begin: SelectorBegin,
    /// Width of the run: the effective block size of the local block for tile selectors
    /// (factor 1), the iota length for tails, `stop - start` or 1 for statics (spec §2.7 step 1).
    pub width: i64,
    /// Scalar selection (`blk[k]`, `blk[t.begin]`): the dim is hidden from the logical shape
    /// and kept physically as size 1 (spec §2.7 step 8, §3.4 `[0, ...]`).
    pub squeeze: bool,
    /// Vector tile runs (`t.index`) are masked by the inner loop's mask at the value boundary
    /// (spec §2.6 B, §3.4); a masked selection must materialize (spec §2.8).
    pub mask: bool,
}

/// Plans every load and narrowing subscript of `case` under its config (spec §2), with the
/// types `types::infer(case)` computed for the same config. Assumes trace-time validation
/// ([`crate::validate`]) passed; never panics if it did not.
///
/// Order (spec §2.1, §2.9, §2.10): the worklist-grouping gap; then every load in program order
/// is planned transactionally (R-MUT, root eligibility, chain analysis), failures recorded
/// first-wins on the narrowing subscripts they reach; then the completeness pass reports the
/// first unplanned narrowing subscript in program order that has no static-value fallback.
pub fn plan(case: &Case, types: &Types) -> Result<Plan, Rejection> {
    plan_with_faults(case, types, FaultSet::NONE)
}

/// [`plan`] with injected faults (spec §4 defects reintroduced, see [`crate::faults`]).
pub fn plan_with_faults(case: &Case, types: &Types, faults: FaultSet) -> Result<Plan, Rejection> {
    // Config normalization comes between tracing and planning (D-1.5.1-09).
    if let Some((index, &value)) = case
        .config
        .block_sizes
        .iter()
        .enumerate()
        .find(|(_, b)| !(**b > 0 && (**b as u64).is_power_of_two()))
    {
        return Err(Rejection::new(
            Rule::ConfigBlockSizeNotPowerOfTwo,
            case.kernel.span,
            &[("index", &index.to_string()), ("value", &value.to_string())],
        ));
    }
    if let Some(counts) = &case.config.load_buffer_count
        && case.has_inner_loops()
        && matches!(
            case.effective_loop_type(),
            LoopType::ForiLoop | LoopType::Unroll
        )
    {
        let expected = case.tensor_param_count();
        if counts.len() != expected || counts.iter().any(|c| !(1..=2).contains(c)) {
            let items: Vec<String> = counts.iter().map(ToString::to_string).collect();
            return Err(Rejection::new(
                Rule::ConfigLoadBufferCount,
                case.kernel.span,
                &[
                    ("expected", &expected.to_string()),
                    ("value", &format!("[{}]", items.join(", "))),
                ],
            ));
        }
    }
    match case.config.worklist_grouping {
        // 2 is valid; its compact-worklist variants are a codegen gap (`lower`).
        None | Some(0..=2) => {}
        Some(g) => {
            return Err(Rejection::new(
                Rule::ConfigWorklistGroupingInvalid,
                case.kernel.span,
                &[("grouping", &g.to_string())],
            ));
        }
    }
    let mut planner = Planner::new(case, types);
    planner.faults = faults;
    planner.plan_roots();
    planner.complete()?;
    Ok(Plan {
        resident: planner.resident,
        static_value: planner.static_value,
    })
}

/// Runs Helion's tracing ([`lang::ir::types::infer_deferring`]) and then [`plan`]: a type
/// error is a `trace.type-error` rejection (Helion's tracing itself raised), and so is a
/// pointwise mismatch its codegen refuses ([`Types::deferred`]) when planning accepts the case.
pub fn plan_case(case: &Case) -> Result<Plan, Rejection> {
    let types = lang::ir::types::infer_deferring(case).map_err(|e| Rejection::of_trace(&e))?;
    let plan = plan(case, &types)?;
    // A mismatch Helion refuses at codegen comes after planning (`Types::deferred`).
    match &types.deferred {
        Some(e) => Err(Rejection::of_trace(e)),
        None => Ok(plan),
    }
}

/// The planner's working state for one case and config.
pub(crate) struct Planner<'a, 't> {
    types: &'t Types,
    links: Links<'a>,
    /// Failures, in recording order, with where their walk to the narrowing subscripts they
    /// reach starts (first wins per subscript, spec §2.8: [`Planner::first_failure`]).
    failure_log: Vec<(Vec<chain::Reach<'a>>, Rejection)>,
    /// Committed annotations.
    resident: FastMap<NodeKey, ResidentPlan>,
    /// Static-value fallbacks.
    static_value: FastSet<NodeKey>,
    /// Injected faults (none outside `pallas-diff hunt` / `--inject`).
    pub(crate) faults: FaultSet,
}

impl<'a, 't> Planner<'a, 't> {
    fn new(case: &'a Case, types: &'t Types) -> Self {
        Planner {
            types,
            links: Links::build(case),
            failure_log: Vec::new(),
            resident: FastMap::default(),
            static_value: FastSet::default(),
            faults: FaultSet::NONE,
        }
    }

    /// `_enclosing_loop_bounds`: the dim of the first device loop, from graph `g` outward
    /// through loops and branches, whose block ids contain `block`.
    fn enclosing_loop_dim(&self, g: links::GraphId, block: BlockId) -> Option<&'a LoopDim> {
        let mut at = Some(g);
        while let Some(id) = at {
            let graph = self.links.graphs[id];
            if let links::GraphKind::Loop(lp) = graph.kind
                && let Some(k) = self
                    .types
                    .blocks
                    .loop_ids(lp)
                    .iter()
                    .position(|&b| b == block)
            {
                return lp.dims.get(k);
            }
            at = graph.parent;
        }
        None
    }

    /// Plans every load in Helion's graph order (D-1.5.1-04; R-MUT collects the written
    /// storages first, spec §2.9).
    fn plan_roots(&mut self) {
        let types = self.types;
        let written: FastSet<usize> = self
            .links
            .writes
            .iter()
            .filter_map(|t| types.host.tensors.get(*t).map(|h| h.storage))
            .collect();
        // Fault D1: R-MUT skipped, so a written tensor can stay a lazy Ref.
        let written = if self.faults.has(Fault::D1ReadAfterWrite) {
            FastSet::default()
        } else {
            written
        };
        for load in self.links.in_graph_order(&self.links.loads) {
            self.plan_root(load, &written);
        }
    }
}

/// `line N`: how messages name a position.
pub(crate) fn at(span: Span) -> String {
    format!("line {}", span.line)
}

/// `line A, line B, line C`: the first three positions, in walk order, duplicates kept
/// (`blockers[:3]`, D-1.5.1-05: two users on one line name it twice).
pub(crate) fn lines(spans: &[Span]) -> String {
    spans
        .iter()
        .take(3)
        .map(|s| format!("line {}", s.line))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests;
