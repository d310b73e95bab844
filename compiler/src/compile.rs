//! The compiler's entry point: a case in, a verdict and (when lowered) a Pallas module out.
//!
//! [`compile`] runs the stages in Helion's order — trace-time validation
//! ([`crate::validate`]), tracing ([`lang::ir::types::infer`]), resident-Ref planning
//! ([`crate::plan`]) and lowering ([`crate::lower`]) — and a rejection from any stage is the
//! case's verdict. The module is printed as Python ([`lang::pallas`]) when first asked for
//! ([`Compiled::source`]): the in-process engines run the typed module, and printing was ~8% of
//! a compile (perf, 2026-11-30). It never panics on a case that parses; a
//! panic is a harness bug.
//!
//! A [`Gap`] is not a verdict: the planner accepted the case (Helion would lower it) but the
//! codegen does not model one of its constructs. Callers must look at [`Compiled::outcome`]
//! rather than the verdict alone.

use crate::decisions::Decisions;
use crate::verdict::{Rejection, Rule, Verdict};
use lang::ir::Case;
use lang::ir::blocks::BlockSizes;
use lang::ir::scope::HostEnv;
use lang::pallas::{PallasModule, print_module};

pub use crate::lower::{CodegenOptions, Gap};

/// What [`compile`] produced.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// Helion's decision: `Lowered` when validation and planning accepted the case (and
    /// lowering raised no codegen-time refusal), else the first rejection.
    pub verdict: Verdict,
    /// The emitted module: present iff the verdict is `Lowered` and there is no gap.
    pub module: Option<PallasModule>,
    /// The module printed as Python, once asked for ([`Compiled::source`]).
    source: std::sync::OnceLock<String>,
    /// Configured and effective block size per block id (spec §1.1a).
    pub block_sizes: BlockSizes,
    /// A construct the codegen does not model (verdict `Lowered`, no module).
    pub gap: Option<Gap>,
    /// The planner's and codegen's decisions ([`crate::decisions`]); empty unless planned.
    pub decisions: Decisions,
}

/// The three ways a compile ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome<'a> {
    /// Lowered; the module ([`Compiled::source`] prints it).
    Lowered(&'a PallasModule),
    /// Refused as Helion refuses it.
    Rejected(&'a Rejection),
    /// Accepted by the planner, not modelled by the codegen.
    Gap(&'a Gap),
}

impl Compiled {
    /// How the compile ended.
    pub fn outcome(&self) -> Outcome<'_> {
        match (&self.verdict, &self.gap, &self.module) {
            (Verdict::Rejected(r), _, _) => Outcome::Rejected(r),
            (Verdict::Lowered, Some(g), _) => Outcome::Gap(g),
            (Verdict::Lowered, None, Some(m)) => Outcome::Lowered(m),
            (Verdict::Lowered, None, None) => unreachable_gap(),
        }
    }

    /// The emitted module as Python source (present iff `module` is), printed on first call.
    pub fn source(&self) -> Option<&str> {
        let module = self.module.as_ref()?;
        Some(self.source.get_or_init(|| print_module(module)))
    }
}

fn unreachable_gap() -> Outcome<'static> {
    // `compile` sets `module` whenever it sets neither a rejection nor a gap.
    static GAP: std::sync::OnceLock<Gap> = std::sync::OnceLock::new();
    Outcome::Gap(GAP.get_or_init(|| Gap {
        span: lang::ir::Span::default(),
        construct: "a lowered verdict without a module (a harness bug)".into(),
    }))
}

/// Compiles `case` under its config.
pub fn compile(case: &Case, options: &CodegenOptions) -> Compiled {
    let rejected = |r: Rejection, block_sizes: BlockSizes| Compiled {
        verdict: Verdict::Rejected(r),
        module: None,
        source: Default::default(),
        block_sizes,
        gap: None,
        decisions: Decisions::new(),
    };
    // Trace once: validation reads the types (index tensors of the wrong rank) and the planner
    // needs them. Tracing twice was a third of a compile (perf, 2026-11-30: `infer` 21.7% of
    // the in-process campaign's samples, half of it under `validate`).
    let traced = lang::ir::types::infer(case);
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
        Err(e) => {
            let r = Rejection::new(Rule::TraceTypeError, e.span, &[("message", &e.message)]);
            return rejected(r, untyped_block_sizes());
        }
    };
    let block_sizes = types.block_sizes.clone();
    // Trace-time checks ran on the whole kernel; dead device statements are gone before
    // planning (D-1.5.1-15). The live kernel is traced again for its types, only when
    // something was removed. The reported block sizes stay the whole kernel's; where a dead
    // node raised one (D-1.5.1-08, sizes registered before nodes are removed) the live
    // kernel's types do not see it: not modelled.
    let live = lang::ir::dead::without_dead(case);
    let (case, types) = match &live {
        Some(live) => match lang::ir::types::infer(live) {
            Ok(t) => (live, t),
            Err(_) => (case, types),
        },
        None => (case, types),
    };
    let plan = match crate::plan::plan_with_faults(case, &types, options.faults) {
        Ok(p) => p,
        Err(r) => return rejected(r, block_sizes),
    };
    let decisions = crate::decisions::decisions(case, &plan);
    match crate::lower::lower(case, &types, &plan, options) {
        Ok(module) => Compiled {
            verdict: Verdict::Lowered,
            module: Some(module),
            source: Default::default(),
            block_sizes,
            gap: None,
            decisions,
        },
        Err(crate::lower::LowerError::Rejected(r)) => rejected(r, block_sizes),
        Err(crate::lower::LowerError::Gap(g)) => Compiled {
            verdict: Verdict::Lowered,
            module: None,
            source: Default::default(),
            block_sizes,
            gap: Some(g),
            decisions,
        },
    }
}

/// The one-line verdict `pallas-diff emit` prints:
/// `rejected: <class> [<rule>] at <line>:<col>: <message>`, `lowered`, or
/// `not modelled at <line>:<col>: <construct>`.
pub fn verdict_line(c: &Compiled) -> String {
    match c.outcome() {
        Outcome::Lowered(_) => "lowered".to_string(),
        Outcome::Rejected(r) => format!("rejected: {r}"),
        Outcome::Gap(g) => g.to_string(),
    }
}
