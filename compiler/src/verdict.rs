//! Verdicts and rules: what the compiler decides about a case, and the one table of every rule
//! by which it can refuse one.
//!
//! A *verdict* is `Lowered` (the planner accepted every narrowing subscript and codegen emitted a
//! module) or `Rejected` with the [`Rule`] that refused it, its Helion error class, the rendered
//! message and the source span. A rejection is an outcome, not an error: the case is well-formed
//! and the kernel is refused as Helion refuses it.
//!
//! Every rule is declared once, in [`rules!`] below, with its stable id (search for the id to
//! find the rule, its class and its message template) and its spec section. Message templates
//! use `{name}` placeholders filled by [`Rule::message`].

use lang::ir::Span;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Helion's error classes (spec §2.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ErrorClass {
    /// Trace-time refusal of an index form (`helion.exc.InvalidIndexingType`). Helion 1.5.1
    /// has one message for every form, `Expected tile/int/None/tensor/etc in tensor[...], got
    /// <repr>.` (D-1.5.1-17); the rule ids keep the forms apart.
    InvalidIndexingType,
    /// A slice step ≤ 0 (`helion.exc.InvalidSliceStep`, D-1.5.1-17).
    InvalidSliceStep,
    /// Type-propagation refusal of a one-sided symbolic slice (`ShapeSpecializingAllocation`).
    ShapeSpecializingAllocation,
    /// Planner refusal: `Backend 'pallas' does not support: <detail>`.
    BackendUnsupported,
    /// Codegen/config refusal (`helion.exc.InvalidConfig`).
    InvalidConfig,
    /// Helion's tracing itself raised (a kernel whose fake types do not check: shape mismatch,
    /// unbound name, bad view); pallas-diff's `trace.type-error`.
    TracingError,
}

impl ErrorClass {
    /// The Python class name.
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::InvalidIndexingType => "InvalidIndexingType",
            ErrorClass::InvalidSliceStep => "InvalidSliceStep",
            ErrorClass::ShapeSpecializingAllocation => "ShapeSpecializingAllocation",
            ErrorClass::BackendUnsupported => "BackendUnsupported",
            ErrorClass::InvalidConfig => "InvalidConfig",
            ErrorClass::TracingError => "TracingError",
        }
    }
}

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

macro_rules! rules {
    ($( $(#[$doc:meta])* $variant:ident = $id:literal, $class:ident, $template:literal; )*) => {
        /// Every rule by which the compiler can refuse a case. Declared once, here.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(into = "String", try_from = "String")]
        pub enum Rule { $( $(#[$doc])* $variant ),* }

        impl Rule {
            /// All rules, in table order.
            pub const ALL: &'static [Rule] = &[ $( Rule::$variant ),* ];

            /// The stable rule id, e.g. `selector.adds-dimension`.
            pub fn id(self) -> &'static str {
                match self { $( Rule::$variant => $id ),* }
            }

            /// The Helion error class the rule raises.
            pub fn class(self) -> ErrorClass {
                match self { $( Rule::$variant => ErrorClass::$class ),* }
            }

            /// The message template (`{name}` placeholders).
            pub fn template(self) -> &'static str {
                match self { $( Rule::$variant => $template ),* }
            }
        }
    };
}

rules! {
    // ---- trace time (spec §1.10, §2.11 first row): hl.subscript's fake -------------------
    /// `blk[-1]`: negative int index (a deliberate language rule, spec §4 D8).
    TraceNegativeIndex = "trace.negative-index", InvalidIndexingType,
        "Expected tile/int/None/tensor/etc in tensor[...], got {index}.";
    /// `blk[-3:2]`: slice with a negative start.
    TraceSliceNegativeStart = "trace.slice-negative-start", InvalidIndexingType,
        "Expected tile/int/None/tensor/etc in tensor[...], got {index}.";
    /// `blk[2:]`, `blk[:3]`: slice with a missing bound.
    TraceSliceMissingBound = "trace.slice-missing-bound", InvalidIndexingType,
        "Expected tile/int/None/tensor/etc in tensor[...], got {index}.";
    /// `blk[0:4:2]`: slice step other than 1.
    TraceSliceStep = "trace.slice-step", InvalidIndexingType,
        "Expected tile/int/None/tensor/etc in tensor[...], got {index}.";
    /// `blk[2:2]`: empty slice.
    TraceSliceEmpty = "trace.slice-empty", InvalidIndexingType,
        "Expected tile/int/None/tensor/etc in tensor[...], got {index}.";
    /// `blk[0, 1, :]`: more than one narrowing entry.
    TraceMultipleNarrowing = "trace.multiple-narrowing", InvalidIndexingType,
        "Expected tile/int/None/tensor/etc in tensor[...], got {index}.";
    /// A float, a 2-D tensor or another object as an index.
    TraceUnsupportedIndex = "trace.unsupported-index", InvalidIndexingType,
        "Expected tile/int/None/tensor/etc in tensor[...], got {index}.";
    /// `blk[3:0:-1]`: a slice step ≤ 0, refused by type propagation before the index checks
    /// (D-1.5.1-17).
    TraceSliceStepNotPositive = "trace.slice-step-not-positive", InvalidSliceStep,
        "Slice step must be greater than zero, as in PyTorch indexing; got {index}.";
    /// `blk[live - 2:]`: one-sided slice with a symbolic bound: type propagation sizes it
    /// with the tensor's size, a device allocation of a symbolic size (D-1.5.1-17's text).
    TraceOneSidedDynamicSlice = "trace.one-sided-dynamic-slice", ShapeSpecializingAllocation,
        "Using a tensor size in a device allocation requires specialization. Use `hl.specialize` or `hl.constexpr` to specialize the size.";
    /// A host-tensor load or store whose slice has a step other than 1 or a negative static
    /// bound (`dst[tile, ::2] = src[tile, ::2]`, `x[tile, -4:]`): refused while the traced
    /// kernel is lowered to device IR, when the Pallas backend classifies every load and
    /// store's indices (`_is_supported_slice`, helion/_compiler/pallas/plan_tiling.py:588 and
    /// :901 in 1.5.1, reached from `indirect_access_modes` at bind time).
    TraceHostSliceUnsupported = "trace.host-slice-unsupported", BackendUnsupported,
        "slice expr {index}";
    /// Type propagation failed (Helion's tracing raised before any planning; spec §2.11).
    TraceTypeError = "trace.type-error", TracingError,
        "tracing the kernel failed: {message}";

    // ---- root eligibility (spec §2.3) ----------------------------------------------------
    /// The load adds a dimension (`x[outer, None, :]`), or drops one that is not a scalar
    /// index beside the tiled one (D-1.5.1-12 check 7; `x[outer, 0, :]` is admitted).
    RootChangesRank = "root.changes-rank", BackendUnsupported,
        "the source load at {at} has an unsupported rank change: tensor_shape={tensor_shape}, value_shape={value_shape}, selected={selected}, resident_dim={dim}, dropped_dims={dropped}, indices={indices}";
    /// Zero or several candidate tiled dimensions (D-1.5.1-12 check 6: Python-int entries
    /// are not candidates; among several, the one of this loop's own tile wins).
    RootTilesMultipleDims = "root.tiles-multiple-dims", BackendUnsupported,
        "the source load at {at} must have exactly one tiled dimension narrowed by an inner loop, but it has {count} candidates";
    /// The load's narrowing index is not a tile.
    RootNotTileIndexed = "root.not-tile-indexed", BackendUnsupported,
        "the source load at {at} is not indexed by a tile";
    /// The physical shape is not concrete for this config.
    RootNoConcreteShape = "root.no-concrete-shape", BackendUnsupported,
        "the source load at {at} has no concrete physical shape for this config";
    /// The tiled dim is not DIRECT-addressed (e.g. bf16 rows of a 2-D tensor) and its loop's
    /// start or its block is not a multiple of the TPU alignment (D-1.5.1-13).
    RootNotDirectAddressing = "root.not-direct-addressing", BackendUnsupported,
        "the source load at {at} is not aligned for direct VMEM addressing in this config";
    /// R-MUT (spec §2.9): the loaded storage is written by a store or atomic.
    RootWrittenOnDevice = "root.written-on-device", BackendUnsupported,
        "the tensor it reads is also written on device";
    /// The load's tensor or output has no tensor metadata (spec §2.3 check 1; defensive).
    RootNoTensorMetadata = "root.no-tensor-metadata", BackendUnsupported,
        "the source load at {at} has no tensor value metadata";

    // ---- address-preserving views (spec §2.5; D-1.5.1-18: the target prints bare, as
    // `str(node.target)` does, with no backticks) ---------------------------------------------
    /// A consumer outside the allowlist (permute, arithmetic, casts, ...).
    ViewNotAddressPreserving = "view.not-address-preserving", BackendUnsupported,
        "{target} at {at} is not an address-preserving resident Ref transform; expected one of aten.reshape.default, aten.squeeze.dim, aten.unsqueeze.default, aten.view.default, hl.subscript";
    /// A view of a Ref that may hold tail padding.
    ViewPartiallyLive = "view.partially-live", BackendUnsupported,
        "{target} at {at} cannot reshape a partially live resident Ref for this config";
    /// A view of a rank-1 Ref.
    ViewRankBelowTwo = "view.rank-below-two", BackendUnsupported,
        "{target} at {at} requires a resident Ref with at least two physical dimensions";
    /// A view whose output shape is not concrete.
    ViewNoConcreteShape = "view.no-concrete-shape", BackendUnsupported,
        "{target} at {at} has no concrete physical shape for this config";
    /// A view changing the element count of the physical block.
    ViewElementCount = "view.element-count", BackendUnsupported,
        "{target} at {at} changes the resident block's physical element count for this config";
    /// A view changing the two minor dims.
    ViewMinorDims = "view.minor-dims", BackendUnsupported,
        "{target} at {at} changes the resident block's two minor dimensions for this config";
    /// A view whose output has no tensor metadata (spec §2.5 view rule 1; defensive).
    ViewNoTensorMetadata = "view.no-tensor-metadata", BackendUnsupported,
        "{target} at {at} has no tensor value metadata";

    // ---- selector normalization (spec §2.6) ------------------------------------------------
    /// Any `None` in a narrowing subscript.
    SelectorAddsDimension = "selector.adds-dimension", BackendUnsupported,
        "the selector at {at} adds a dimension; resident Ref narrowing does not support None";
    /// More than one narrowing entry reached the planner.
    SelectorNarrowsMultiple = "selector.narrows-multiple", BackendUnsupported,
        "the selector at {at} must narrow exactly one dimension, but it narrows {count}";
    /// An iota index not directly in the then-graph of an `if`.
    SelectorTailOutsideConditional = "selector.tail-outside-conditional", BackendUnsupported,
        "the dynamic tail selector at {at} is not inside its matching conditional";
    /// An iota with step ≠ 1, length < 1 or a static start.
    SelectorTailNotContiguous = "selector.tail-not-contiguous", BackendUnsupported,
        "the dynamic tail selector at {at} is not a contiguous positive iota";
    /// A tail run whose `if` is not exactly `live >= width`.
    SelectorTailNotGuarded = "selector.tail-not-guarded", BackendUnsupported,
        "the dynamic tail selector at {at} is not guarded by its exact live-width predicate";
    /// A symbolic scalar index that is not a tile begin.
    SelectorScalarNotTileBegin = "selector.scalar-not-tile-begin", BackendUnsupported,
        "the scalar selector at {at} is not a tile begin";
    /// A vector index that is not `t.index` (+ 0).
    SelectorShiftedTileRun = "selector.shifted-tile-run", BackendUnsupported,
        "the selector at {at} is not an unshifted tile run";
    /// No enclosing tile loop drives the selector's tile.
    SelectorNoDrivingLoop = "selector.no-driving-loop", BackendUnsupported,
        "the selector at {at} is not driven by an enclosing tile loop";
    /// The driving loop does not begin at 0.
    SelectorLoopNotZeroBased = "selector.loop-not-zero-based", BackendUnsupported,
        "the selector's tile loop at {at} must start at zero";
    /// The driving loop has a static end < 1.
    SelectorLoopEmpty = "selector.loop-empty", BackendUnsupported,
        "the selector's tile loop at {at} is empty";
    /// The driving loop's symbolic end is not a live extent.
    SelectorLiveExtentMismatch = "selector.live-extent-mismatch", BackendUnsupported,
        "the selector's live extent at {at} does not match the source tile";
    /// The driving loop's end is neither static nor a symbol.
    SelectorUnsupportedEnd = "selector.unsupported-end", BackendUnsupported,
        "the selector's tile loop at {at} has an unsupported end";
    /// A static int selector below zero (defensive re-check).
    SelectorNegativeIndex = "selector.negative-index", BackendUnsupported,
        "the selector at {at} has a negative index";
    /// A static slice selector that is not `a:b` with 0 ≤ a < b, step 1.
    SelectorStaticSliceNotContiguous = "selector.static-slice-not-contiguous", BackendUnsupported,
        "the static selector at {at} is not a positive contiguous slice";
    /// Any other index form.
    SelectorUnsupportedIndex = "selector.unsupported-index", BackendUnsupported,
        "the selector at {at} has unsupported index {index}";
    /// A narrowing subscript whose input has no tensor metadata (spec §2.6 pre-check; defensive).
    SelectorNoTensorMetadata = "selector.no-tensor-metadata", BackendUnsupported,
        "the selector at {at} has no tensor indexing metadata";

    // ---- applying a selector to variants (spec §2.7) -----------------------------------------
    /// Width not an int ≥ 1.
    SelectorNoConcreteWidth = "selector.no-concrete-width", BackendUnsupported,
        "the selector at {at} has no concrete positive width for this config";
    /// A non-DIRECT dim narrowed by something other than an aligned static run or a tile run
    /// whose width is a multiple of the alignment (D-1.5.1-13).
    SelectorUnaligned = "selector.unaligned", BackendUnsupported,
        "the selector at {at} is not aligned for direct VMEM addressing in this config";
    /// A squeezing selector wider than 1 (`blk[t.begin]` with block 2).
    SelectorScalarWidth = "selector.scalar-width", BackendUnsupported,
        "the scalar selector at {at} cannot use width {width} for this config";
    /// Width > extent (spec §4 D5).
    SelectorWiderThanBlock = "selector.wider-than-block", BackendUnsupported,
        "the run is {width} wide but the block holds only {extent} rows for this config at {at}";
    /// Static begin + width > extent (`blk[7]` on 4 rows).
    SelectorStaticPastExtent = "selector.static-past-extent", BackendUnsupported,
        "the static run at {at} reaches past the resident Ref for this config";
    /// A static selector on the guarded (possibly padded) dim.
    SelectorStaticMayAddressPadding = "selector.static-may-address-padding", BackendUnsupported,
        "the static selector at {at} may address padding in the source tile for this config";
    /// A tile run whose width does not divide the extent.
    SelectorWidthNotDividing = "selector.width-not-dividing", BackendUnsupported,
        "the selector width at {at} does not divide the Ref for this config";
    /// A static-end driving loop that does not cover the Ref exactly.
    SelectorLoopNotCovering = "selector.loop-not-covering", BackendUnsupported,
        "the inner loop at {at} does not cover exactly the Ref for this config";

    // ---- chain analysis (spec §2.8) --------------------------------------------------------
    /// The Ref flows into a graph the planner does not know.
    ChainUnknownGraph = "chain.unknown-graph", BackendUnsupported,
        "the resident Ref crosses an unknown graph at {at}";
    /// Narrowing users beside an unsupported (whole-block) user.
    ChainConsumedWhole = "chain.consumed-whole", BackendUnsupported,
        "the block is also consumed whole at {lines}";
    /// A load with no users besides shape reads.
    ChainNoUsers = "chain.no-users", BackendUnsupported,
        "the resident load at {at} has no address-preserving users";
    /// A masked (tile.index) selection feeding another narrowing subscript.
    ChainMaskedFeedsNarrowing = "chain.masked-feeds-narrowing", BackendUnsupported,
        "the masked selection at {at} must materialize before another narrowing subscript";
    /// Materializing a Ref that may still hold padding.
    ChainPaddingAtBoundary = "chain.padding-at-boundary", BackendUnsupported,
        "the resident Ref at {at} may contain padding and cannot be materialized for this config";
    /// A view that is both narrowed further and consumed otherwise.
    ChainViewConsumedElsewhere = "chain.view-consumed-elsewhere", BackendUnsupported,
        "the resident view at {at} must materialize because it is also consumed at {lines}";

    // ---- completeness (spec §2.10) -----------------------------------------------------------
    /// A narrowing subscript with no plan and no static-value fallback.
    PlanNotResident = "plan.not-resident", BackendUnsupported,
        "narrowing subscript {name} requires a resident Ref, but its input is not derived from an eligible direct Pallas load";

    // ---- indirect accesses (bind time) ------------------------------------------------------
    /// A load or store through a tensor index that Helion 1.5.1's one-hot lowering does not
    /// take (`one_hot_access_supported`, helion/_compiler/pallas/gather.py: several tensor
    /// indices; a load from an int32 table through another dim than its first; a store into an
    /// int32 tensor, through another dim than the first or by an index of rank other than 1),
    /// and no DMA can (none under `HELION_PALLAS_INTERPRET=1`): `indirect_access_modes`,
    /// tensorcore_plan.py, at bind time.
    IndirectUnsupported = "indirect.unsupported", BackendUnsupported,
        "an indirect access is unsupported by both one-hot and DMA lowering; use one unmasked tensor index and a supported load/store dtype and shape";
    /// A gather (a host-tensor load through an int-tensor index) whose value a narrowing
    /// subscript reads, directly or through views (`aten.reshape`/`view`/`squeeze`/`unsqueeze`),
    /// same-dtype casts (torch returns the tensor itself) and subscripts that narrow nothing
    /// (`:`, `None`). Helion 1.5.1 serves such a read from a resident Ref, which only an
    /// indirect DMA can fill, and under `HELION_PALLAS_INTERPRET=1` no access is DMA-eligible
    /// (`indirect_loads_requiring_resident_refs`, helion/_compiler/pallas/view_ops.py, checked by
    /// `indirect_access_modes` in tensorcore_plan.py at bind time; measured: `w =
    /// t[idx[tb], :, td]` then `w[:, 0, :]` is refused, `(w * 1.0)[:, 0, :]` and a bfloat16 `w`
    /// read through `.float()` are gathered by one-hot). On a TPU the DMA admission may take it.
    IndirectNarrowedNeedsDma = "indirect.narrowed-needs-dma", BackendUnsupported,
        "an indirect resident access requires DMA but is not eligible for a DMA schedule";

    // ---- config and loop lowering (spec §1.4, §2.4) ------------------------------------------
    /// `unroll` with a loop bound that is not static nor an enclosing `tile.end`.
    ConfigUnrollDynamicBounds = "config.unroll-dynamic-bounds", InvalidConfig,
        "pallas_loop_type='unroll' requires static inner-loop bounds, an enclosing Tile.end bound, or pallas_worklist_grouping in (1, 2).";
    /// A config-driven block size that is not a power of two (Helion 1.5.1,
    /// `_PowerOfTwoBlockIdItem._normalize` at config normalization, after tracing and before
    /// planning: delta D-1.5.1-09). A fixed `block_size=` is not checked.
    ConfigBlockSizeNotPowerOfTwo = "config.block-size-not-power-of-two", InvalidConfig,
        "config[block_sizes][{index}] must be a power of two, got {value}";
    /// `pallas_load_buffer_count` (absent: `[1] * T`) is not one count of 1 or 2 per tensor
    /// parameter, checked at config normalization when inner loops run under `fori_loop` or
    /// `unroll` (D-1.5.1-11).
    ConfigLoadBufferCount = "config.load-buffer-count", InvalidConfig,
        "pallas_load_buffer_count must be a list containing one buffer count (1 or 2) per input tensor (expected {expected}, got {value})";
    /// `pallas_worklist_grouping` outside {0, 1, 2} (Helion 1.5.1 `pre_codegen`, D-1.5.1-20).
    ConfigWorklistGroupingInvalid = "config.worklist-grouping-invalid", InvalidConfig,
        "Invalid pallas_worklist_grouping {grouping}. Expected one of (0, 1, 2).";
}

impl Rule {
    /// Renders the message template with `args` (`("at", "line 12")`, ...). Unfilled
    /// placeholders stay visible, so a missing argument is noticed rather than hidden.
    pub fn message(self, args: &[(&str, &str)]) -> String {
        // One pass over the template: the planner records a rejection for every failed use,
        // most of them never reported (a `replace` per argument was 1.3% of a campaign's
        // instructions). A placeholder without an argument stays as written.
        let mut rest = self.template();
        let mut out = String::with_capacity(rest.len() + 32);
        while let Some(open) = rest.find('{') {
            let after = &rest[open + 1..];
            let Some(close) = after.find('}') else {
                break;
            };
            out.push_str(&rest[..open]);
            let key = &after[..close];
            match args.iter().find(|(k, _)| *k == key) {
                Some((_, v)) => out.push_str(v),
                None => out.push_str(&rest[open..open + close + 2]),
            }
            rest = &after[close + 1..];
        }
        out.push_str(rest);
        out
    }

    /// Whether Helion's refusal message `text` is this rule's message: the template's literal
    /// pieces (between `{placeholders}`) appear in `text` in order, after Helion's planner
    /// prefix `Backend 'pallas' does not support: ` and its `\nWhile processing:` suffix are
    /// dropped. The one table from rule ids to Helion's messages is the templates themselves.
    pub fn matches_message(self, text: &str) -> bool {
        let text = text.split("\nWhile processing:").next().unwrap_or(text);
        let text = text
            .strip_prefix("Backend 'pallas' does not support: ")
            .unwrap_or(text);
        let mut rest = text;
        let mut template = self.template();
        while !template.is_empty() {
            let (piece, after) = match template.find('{') {
                Some(i) => {
                    let close = template[i..]
                        .find('}')
                        .map_or(template.len(), |j| i + j + 1);
                    (&template[..i], &template[close..])
                }
                None => (template, ""),
            };
            let piece = piece.trim();
            if !piece.is_empty() {
                match rest.find(piece) {
                    Some(i) => rest = &rest[i + piece.len()..],
                    None => return false,
                }
            }
            template = after;
        }
        true
    }

    /// Looks a rule up by its id.
    pub fn from_id(id: &str) -> Option<Rule> {
        Rule::ALL.iter().copied().find(|r| r.id() == id)
    }
}

impl From<Rule> for String {
    fn from(r: Rule) -> String {
        r.id().to_string()
    }
}

impl TryFrom<String> for Rule {
    type Error = String;
    fn try_from(s: String) -> Result<Rule, String> {
        Rule::from_id(&s).ok_or_else(|| format!("unknown rule id `{s}`"))
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A refusal: the rule, the rendered message and where; its error class is the rule's
/// ([`Rejection::class`]). Serialized with the class too, for readers of the JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "RejectionRecord", try_from = "RejectionRecord")]
pub struct Rejection {
    /// The rule.
    pub rule: Rule,
    /// The rendered message (the detail, without the class prefix).
    pub message: String,
    /// The construct it is about.
    pub span: Span,
}

/// [`Rejection`] as written to JSON: with its class, which reading checks against the rule's.
#[derive(Serialize, Deserialize)]
struct RejectionRecord {
    class: ErrorClass,
    rule: Rule,
    message: String,
    span: Span,
}

impl From<Rejection> for RejectionRecord {
    fn from(r: Rejection) -> RejectionRecord {
        RejectionRecord {
            class: r.class(),
            rule: r.rule,
            message: r.message,
            span: r.span,
        }
    }
}

impl TryFrom<RejectionRecord> for Rejection {
    type Error = String;
    fn try_from(r: RejectionRecord) -> Result<Rejection, String> {
        if r.class != r.rule.class() {
            return Err(format!(
                "rule {} has class {}, not {}",
                r.rule,
                r.rule.class().name(),
                r.class.name()
            ));
        }
        Ok(Rejection {
            rule: r.rule,
            message: r.message,
            span: r.span,
        })
    }
}

impl Rejection {
    /// The `trace.type-error` of a kernel that does not trace, or of a mismatch that Helion
    /// refuses at codegen ([`lang::ir::types::Types::deferred`]).
    pub fn of_trace(e: &lang::ir::types::TypeError) -> Rejection {
        Rejection::new(Rule::TraceTypeError, e.span, &[("message", &e.message)])
    }

    /// A rejection by `rule` at `span` with message arguments.
    pub fn new(rule: Rule, span: Span, args: &[(&str, &str)]) -> Rejection {
        Rejection {
            rule,
            message: rule.message(args),
            span,
        }
    }

    /// Helion's error class: the rule's.
    pub fn class(&self) -> ErrorClass {
        self.rule.class()
    }

    /// The message as Helion prints it (`Backend 'pallas' does not support: ...` for planner
    /// rejections).
    pub fn helion_message(&self) -> String {
        match self.class() {
            ErrorClass::BackendUnsupported => {
                format!("Backend 'pallas' does not support: {}", self.message)
            }
            ErrorClass::InvalidIndexingType
            | ErrorClass::InvalidSliceStep
            | ErrorClass::ShapeSpecializingAllocation
            | ErrorClass::InvalidConfig
            | ErrorClass::TracingError => self.message.clone(),
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} [{}] at {}: {}",
            self.class(),
            self.rule,
            self.span,
            self.message
        )
    }
}

/// What the compiler decided about a case under its config.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Verdict {
    /// Every narrowing subscript was planned; codegen emitted a module.
    Lowered,
    /// Refused, as Helion refuses it.
    Rejected(Rejection),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helion_messages_match_rule_templates_piece_by_piece() {
        let r = Rule::ConfigBlockSizeNotPowerOfTwo;
        assert!(r.matches_message("config[block_sizes][0] must be a power of two, got 3"));
        assert!(!r.matches_message("Too many values for config['block_sizes'], expected 1, got 2"));
        let r = Rule::ChainConsumedWhole;
        assert!(r.matches_message(
            "Backend 'pallas' does not support: the block is also consumed whole at /tmp/k.py:20\nWhile processing:\n..."
        ));
        assert!(!r.matches_message("Backend 'pallas' does not support: the selector at k.py:19 is not an unshifted tile run"));
        // D-1.5.1-18's texts: a view target prints bare, and `<function subscript at 0x…>` for
        // a `None`/`:`-only subscript.
        let r = Rule::ViewNotAddressPreserving;
        assert!(r.matches_message("Backend 'pallas' does not support: aten.permute.default at /tmp/k.py:17 is not an address-preserving resident Ref transform; expected one of aten.reshape.default, aten.squeeze.dim, aten.unsqueeze.default, aten.view.default, hl.subscript"));
        assert!(Rule::ViewPartiallyLive.matches_message("Backend 'pallas' does not support: <function subscript at 0x7f3a2b1c> at /tmp/k.py:17 cannot reshape a partially live resident Ref for this config"));
        assert!(Rule::ViewNoConcreteShape.matches_message("Backend 'pallas' does not support: aten.view.default at /tmp/k.py:17 has no concrete physical shape for this config"));
    }
    use std::collections::HashSet;

    #[test]
    fn a_rejection_is_written_with_its_rules_class_and_read_back_only_with_it() {
        let r = Rejection::new(
            Rule::ChainConsumedWhole,
            Span::default(),
            &[("lines", "17")],
        );
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["class"], "BackendUnsupported");
        assert_eq!(
            serde_json::from_value::<Rejection>(json.clone()).unwrap(),
            r
        );
        let mut wrong = json;
        wrong["class"] = "InvalidConfig".into();
        let e = serde_json::from_value::<Rejection>(wrong).unwrap_err();
        assert!(
            e.to_string().contains("has class BackendUnsupported"),
            "{e}"
        );
    }

    #[test]
    fn rule_ids_are_unique_and_round_trip() {
        let mut seen = HashSet::new();
        for &r in Rule::ALL {
            assert!(seen.insert(r.id()), "duplicate id {}", r.id());
            assert_eq!(Rule::from_id(r.id()), Some(r));
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<Rule>(&json).unwrap(), r);
        }
    }

    #[test]
    fn messages_fill_placeholders() {
        let m = Rule::SelectorWiderThanBlock.message(&[
            ("width", "9"),
            ("extent", "4"),
            ("at", "line 5"),
        ]);
        assert_eq!(
            m,
            "the run is 9 wide but the block holds only 4 rows for this config at line 5"
        );
        // A value is never read as a template; a placeholder without its argument stays.
        let m = Rule::SelectorWiderThanBlock.message(&[("width", "{extent}"), ("at", "line 5")]);
        assert_eq!(
            m,
            "the run is {extent} wide but the block holds only {extent} rows for this config at line 5"
        );
    }
}
