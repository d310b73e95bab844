//! The compiler's entry point: a case in, a verdict and (when lowered) a Pallas module out.
//!
//! [`compile`] runs the stages in Helion's order — trace-time validation
//! ([`crate::validate`]), tracing ([`lang::ir::types::infer_deferring`]), resident-Ref planning
//! ([`crate::plan`]) and lowering ([`crate::lower`]) — and a rejection from any stage is the
//! case's verdict. A pointwise mismatch that Helion's tracing lets through is refused by its
//! codegen ([`lang::ir::types::Types::deferred`]), so it is the lowering's to refuse, after
//! planning and of the live kernel (Helion's codegen never sees a dead statement).
//!
//! The module is printed as Python ([`lang::pallas`]) when first asked for
//! ([`Compiled::source`]): the in-process engines run the typed module, and printing was ~8% of
//! a compile (perf, 2026-11-30). It never panics on a case that parses; a
//! panic is a harness bug.
//!
//! A [`Gap`] is not a verdict: the planner accepted the case (Helion would lower it) but the
//! codegen does not model one of its constructs. [`Compiled`] has one variant per end, so a
//! caller that matches on it cannot mistake a gap's `Lowered` verdict for a module.

use crate::decisions::Decisions;
use crate::verdict::{Rejection, Verdict};
use lang::ir::Case;
use lang::ir::blocks::BlockSizes;
use lang::ir::scope::HostEnv;
use lang::ir::types::Types;
use lang::pallas::{PallasModule, print_module};

pub use crate::lower::{CodegenOptions, Gap};

/// What [`compile`] produced: one of three ends, each with only what that end has.
///
/// Not boxed: a `Compiled` is made once per case and moved at most into its report, and a box
/// would add an allocation to each of the ~30% of generated cases that lower.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Compiled {
    /// Validation and planning accepted the case and the codegen emitted a module.
    Lowered(Lowered),
    /// Refused as Helion refuses it (at trace time, while planning, or by a codegen-time rule).
    Rejected(Refused),
    /// Accepted by the planner (Helion would lower it), not modelled by the codegen.
    Gap(NotModelled),
}

/// A lowered case.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The emitted module.
    pub module: PallasModule,
    /// The module printed as Python, once asked for ([`Compiled::source`]).
    source: std::sync::OnceLock<String>,
    /// Configured and effective block size per block id (spec §1.1a).
    pub block_sizes: BlockSizes,
    /// The planner's and codegen's decisions ([`crate::decisions`]).
    pub decisions: Decisions,
}

/// A refused case.
#[derive(Clone, Debug)]
pub struct Refused {
    /// The first rejection, in Helion's order.
    pub rejection: Rejection,
    /// Configured and effective block size per block id, as far as tracing got.
    pub block_sizes: BlockSizes,
}

/// A case the planner accepted and the codegen does not model.
#[derive(Clone, Debug)]
pub struct NotModelled {
    /// The construct the codegen does not model.
    pub gap: Gap,
    /// Configured and effective block size per block id.
    pub block_sizes: BlockSizes,
    /// The planner's decisions.
    pub decisions: Decisions,
}

/// The decisions of a case that was not planned.
static NO_DECISIONS: Decisions = Decisions::new();

impl Compiled {
    /// Helion's decision: `Lowered` when validation and planning accepted the case (a gap
    /// included: Helion would lower it), else the rejection.
    pub fn verdict(&self) -> Verdict {
        match self {
            Compiled::Lowered(_) | Compiled::Gap(_) => Verdict::Lowered,
            Compiled::Rejected(r) => Verdict::Rejected(r.rejection.clone()),
        }
    }

    /// The emitted module, when lowered.
    pub fn module(&self) -> Option<&PallasModule> {
        match self {
            Compiled::Lowered(l) => Some(&l.module),
            Compiled::Rejected(_) | Compiled::Gap(_) => None,
        }
    }

    /// The emitted module as Python source (present iff [`Compiled::module`] is), printed on
    /// first call.
    pub fn source(&self) -> Option<&str> {
        match self {
            Compiled::Lowered(l) => Some(l.source.get_or_init(|| print_module(&l.module))),
            Compiled::Rejected(_) | Compiled::Gap(_) => None,
        }
    }

    /// The rejection, when refused.
    pub fn rejection(&self) -> Option<&Rejection> {
        match self {
            Compiled::Rejected(r) => Some(&r.rejection),
            Compiled::Lowered(_) | Compiled::Gap(_) => None,
        }
    }

    /// The construct the codegen does not model, when there is one.
    pub fn gap(&self) -> Option<&Gap> {
        match self {
            Compiled::Gap(g) => Some(&g.gap),
            Compiled::Lowered(_) | Compiled::Rejected(_) => None,
        }
    }

    /// Configured and effective block size per block id (spec §1.1a).
    pub fn block_sizes(&self) -> &BlockSizes {
        match self {
            Compiled::Lowered(l) => &l.block_sizes,
            Compiled::Rejected(r) => &r.block_sizes,
            Compiled::Gap(g) => &g.block_sizes,
        }
    }

    /// The planner's and codegen's decisions ([`crate::decisions`]); empty unless planned.
    pub fn decisions(&self) -> &Decisions {
        match self {
            Compiled::Lowered(l) => &l.decisions,
            Compiled::Gap(g) => &g.decisions,
            Compiled::Rejected(_) => &NO_DECISIONS,
        }
    }

    /// [`Compiled::module`], owned.
    pub fn into_module(self) -> Option<PallasModule> {
        match self {
            Compiled::Lowered(l) => Some(l.module),
            Compiled::Rejected(_) | Compiled::Gap(_) => None,
        }
    }

    /// [`Compiled::decisions`], owned.
    pub fn into_decisions(self) -> Decisions {
        match self {
            Compiled::Lowered(l) => l.decisions,
            Compiled::Gap(g) => g.decisions,
            Compiled::Rejected(_) => Decisions::new(),
        }
    }
}

/// Compiles `case` under its config.
pub fn compile(case: &Case, options: &CodegenOptions) -> Compiled {
    let rejected = |rejection: Rejection, block_sizes: BlockSizes| {
        Compiled::Rejected(Refused {
            rejection,
            block_sizes,
        })
    };
    // Trace once: validation reads the types (index tensors of the wrong rank) and the planner
    // needs them. Tracing twice was a third of a compile (perf, 2026-11-30: `infer` 21.7% of
    // the in-process campaign's samples, half of it under `validate`).
    let traced = lang::ir::types::infer_deferring(case);
    // The trace's block sizes are `case.block_sizes` under `HostEnv::of(case)`: the same as
    // these, which a kernel that does not trace still reports.
    let untyped_block_sizes = || {
        let host = HostEnv::of(case);
        case.block_sizes(|e| host.eval_int(e))
    };
    if let Some(r) = crate::validate::validate_traced(case, traced.as_ref().ok(), options.faults) {
        let block_sizes = match &traced {
            Ok(t) => t.block_sizes.clone(),
            Err(_) => untyped_block_sizes(),
        };
        return rejected(r, block_sizes);
    }
    let types = match traced {
        Ok(t) => t,
        Err(e) => return rejected(Rejection::of_trace(&e), untyped_block_sizes()),
    };
    let block_sizes = types.block_sizes.clone();
    if let Some(r) = crate::validate::host_access(case, &types) {
        return rejected(r, block_sizes);
    }
    // Trace-time checks ran on the whole kernel; dead device statements are gone before
    // planning (D-1.5.1-15). The live kernel is traced again for its types, only when
    // something was removed, under the whole kernel's block sizes: Helion registers them while
    // tracing, before dead nodes go, so a dead load still raises a block (D-1.5.1-08; a
    // campaign case, `x_block = x[outer, :, :]` of a (1, 1, 1) tensor never read, runs tiles
    // of 2 in Helion and the reference).
    let live_case;
    let (case, types) = match live_kernel(case, &block_sizes) {
        Some((live, t)) => {
            live_case = live;
            (&live_case, t)
        }
        None => (case, types),
    };
    // Helion classifies indirect accesses on the live graph (measured: a dead load through two
    // tensor indices does not make it refuse).
    if let Some(r) = crate::validate::indirect_access(case, &types) {
        return rejected(r, block_sizes);
    }
    let plan = match crate::plan::plan_with_faults(case, &types, options.faults) {
        Ok(p) => p,
        Err(r) => return rejected(r, block_sizes),
    };
    let decisions = crate::decisions::decisions(case, &plan);
    match crate::lower::lower(case, &types, &plan, options) {
        Ok(module) => Compiled::Lowered(Lowered {
            module,
            source: Default::default(),
            block_sizes,
            decisions,
        }),
        Err(crate::lower::LowerError::Rejected(r)) => rejected(r, block_sizes),
        Err(crate::lower::LowerError::Gap(gap)) => Compiled::Gap(NotModelled {
            gap,
            block_sizes,
            decisions,
        }),
    }
}

/// The kernel the planner sees when dead device statements were removed (D-1.5.1-15), with
/// its types traced under the whole kernel's `block_sizes` (D-1.5.1-08); `None` when nothing
/// is dead, or when the live kernel does not trace (the whole kernel is planned then).
pub fn live_kernel(case: &Case, block_sizes: &BlockSizes) -> Option<(Case, Types)> {
    let live = lang::ir::dead::without_dead(case)?;
    let types = lang::ir::types::infer_deferring_with_block_sizes(&live, block_sizes).ok()?;
    Some((live, types))
}

/// The one-line verdict `pallas-diff emit` prints:
/// `rejected: <class> [<rule>] at <line>:<col>: <message>`, `lowered`, or
/// `not modelled at <line>:<col>: <construct>`.
pub fn verdict_line(c: &Compiled) -> String {
    match c {
        Compiled::Lowered(_) => "lowered".to_string(),
        Compiled::Rejected(r) => format!("rejected: {}", r.rejection),
        Compiled::Gap(g) => g.gap.to_string(),
    }
}
