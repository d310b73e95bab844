//! The planner's and the codegen's decisions on one compiled case, as a set: what a finding in
//! the emitted code can be caused by.
//!
//! A finding's bucket keys on its cause, not on the surface of the case that showed it
//! (issue: one injected fault gave 9 buckets when the signature keyed on index forms and the
//! loop type). Two cases that read a masked tile run out of a resident Ref make the same
//! decision whether the run is spelled `t.index` or `t.index + 0`, so they share a decision
//! set; the reducer drops constructs (and with them decisions) the finding does not need, so
//! the reduced case's set is the decisions the bug still needs, and findings of one cause
//! converge on one set.
//!
//! The set is read off the [`Plan`] (which loads stay resident, how every narrowing subscript
//! reads its run, which views stay Ref transforms, which subscripts take the static-value
//! fallback) and the loop skeleton the codegen emits ([`LoopType`]). It is computed by
//! [`crate::compile::compile`] for every lowered case, under the same fault set as the module,
//! so an injected planner fault shows in it as the planner's real output would.

use crate::plan::{Plan, SelectorKind};
use lang::ir::{Case, Expr, ExprKind, Index, LoopType, ViewOp, walk};
use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// How a view on a resident chain is spelled (the aten op Helion sees).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ViewKind {
    /// `.reshape(...)`.
    Reshape,
    /// `.view(...)`.
    View,
    /// `.squeeze(d)`.
    Squeeze,
    /// `.unsqueeze(d)`.
    Unsqueeze,
    /// `.view_as(other)`.
    ViewAs,
    /// A subscript of only `None` and `:` (a new axis on the Ref, spec §2.5).
    NewAxis,
}

impl ViewKind {
    /// Every view kind.
    pub const ALL: [ViewKind; 6] = [
        ViewKind::Reshape,
        ViewKind::View,
        ViewKind::Squeeze,
        ViewKind::Unsqueeze,
        ViewKind::ViewAs,
        ViewKind::NewAxis,
    ];

    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            ViewKind::Reshape => "reshape",
            ViewKind::View => "view",
            ViewKind::Squeeze => "squeeze",
            ViewKind::Unsqueeze => "unsqueeze",
            ViewKind::ViewAs => "view-as",
            ViewKind::NewAxis => "new-axis",
        }
    }

    fn of(op: &ViewOp) -> ViewKind {
        match op {
            ViewOp::Reshape(_) => ViewKind::Reshape,
            ViewOp::View(_) => ViewKind::View,
            ViewOp::Squeeze(_) => ViewKind::Squeeze,
            ViewOp::Unsqueeze(_) => ViewKind::Unsqueeze,
            ViewOp::ViewAs(_) => ViewKind::ViewAs,
        }
    }
}

/// One decision of the planner or the codegen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Decision {
    /// The loop skeleton the codegen emits for device loops (spec §1.4, D-1.5.1-10).
    Loop(LoopType),
    /// A load kept as a resident VMEM Ref (the root of an accepted chain, spec §2.1).
    ResidentLoad,
    /// A load read as a value (not on an accepted chain: R-MUT, an ineligible root, no
    /// narrowing use).
    ValueLoad,
    /// A narrowing subscript read as a run out of a resident Ref (spec §2.6): the selector's
    /// case, whether the run is masked by the inner loop's mask, whether the dim is squeezed.
    Run {
        /// Spec §2.6 case.
        kind: SelectorKind,
        /// Masked at the value boundary.
        mask: bool,
        /// A scalar selection, kept physically as size 1.
        squeeze: bool,
    },
    /// A narrowing subscript that also adds an axis (`blk[None, t.index, :]`) read as a run.
    /// The merged planner refuses it (`selector.adds-dimension`) before it decides the
    /// selector's kind (spec §2.6 check order), so only a planner that skips that check makes
    /// this decision, and the kind it picks next is not part of it: one cause whichever kind
    /// the run is read as (measured: `d14-mask-on-input-axis`, the historical defect, filed one
    /// bucket per selector kind, 4 in 60 s, while each kind's read dropped the same `None`).
    /// No plain path.
    NewAxisRun,
    /// An address-preserving view kept as a Ref transform (spec §2.5).
    RefView(ViewKind),
    /// A node of a resident chain that is a value boundary: read as `ref[...]` (spec §2.8).
    Materialize,
    /// A narrowing subscript lowered as basic indexing on a materialized value (spec §2.10,
    /// D-1.5.1-01).
    StaticValue,
}

impl SelectorKind {
    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            SelectorKind::Tile => "tile",
            SelectorKind::Tail => "tail",
            SelectorKind::Static => "static",
        }
    }

    /// Every selector kind.
    pub const ALL: [SelectorKind; 3] =
        [SelectorKind::Tile, SelectorKind::Tail, SelectorKind::Static];
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Loop(l) => write!(f, "loop={}", l.name()),
            Decision::ResidentLoad => f.write_str("resident-load"),
            Decision::ValueLoad => f.write_str("value-load"),
            Decision::Run {
                kind,
                mask,
                squeeze,
            } => {
                write!(f, "run={}", kind.name())?;
                if *mask {
                    f.write_str(".mask")?;
                }
                if *squeeze {
                    f.write_str(".squeeze")?;
                }
                Ok(())
            }
            Decision::NewAxisRun => f.write_str("new-axis-run"),
            Decision::RefView(v) => write!(f, "ref-view={}", v.name()),
            Decision::Materialize => f.write_str("materialize"),
            Decision::StaticValue => f.write_str("static-value"),
        }
    }
}

/// A name given for [`PlainSet::parse`] that is not a decision with a plain path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a decision with a plain path (a run `run=<tile|tail|static>[.mask][.squeeze]` or a view `ref-view=<reshape|view|squeeze|unsqueeze|view-as|new-axis>`)"
)]
pub struct NoPlainPath(pub String);

/// A decision name that is not one of [`Decision`]'s spellings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a planner or codegen decision")]
pub struct UnknownDecision(pub String);

impl FromStr for Decision {
    type Err = UnknownDecision;

    fn from_str(s: &str) -> Result<Decision, UnknownDecision> {
        let unknown = || UnknownDecision(s.to_string());
        if let Some(l) = s.strip_prefix("loop=") {
            return LoopType::ALL
                .into_iter()
                .find(|t| t.name() == l)
                .map(Decision::Loop)
                .ok_or_else(unknown);
        }
        if let Some(v) = s.strip_prefix("ref-view=") {
            return ViewKind::ALL
                .into_iter()
                .find(|k| k.name() == v)
                .map(Decision::RefView)
                .ok_or_else(unknown);
        }
        if let Some(run) = s.strip_prefix("run=") {
            let mut parts = run.split('.');
            let kind = parts.next().unwrap_or("");
            let kind = SelectorKind::ALL
                .into_iter()
                .find(|k| k.name() == kind)
                .ok_or_else(unknown)?;
            let (mut mask, mut squeeze) = (false, false);
            for p in parts {
                match p {
                    "mask" if !mask && !squeeze => mask = true,
                    "squeeze" if !squeeze => squeeze = true,
                    _ => return Err(unknown()),
                }
            }
            return Ok(Decision::Run {
                kind,
                mask,
                squeeze,
            });
        }
        match s {
            "resident-load" => Ok(Decision::ResidentLoad),
            "value-load" => Ok(Decision::ValueLoad),
            "new-axis-run" => Ok(Decision::NewAxisRun),
            "materialize" => Ok(Decision::Materialize),
            "static-value" => Ok(Decision::StaticValue),
            _ => Err(unknown()),
        }
    }
}

impl serde::Serialize for Decision {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Decision {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Decision, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The decisions of one compiled case (module docs), ordered for a stable key.
pub type Decisions = BTreeSet<Decision>;

/// Decisions the codegen lowers by their plain path instead (a
/// [`crate::compile::CodegenOptions`] field; empty by default): the ablation behind a finding's
/// cause. As Cranelift's fuel turns an optimization off to find the one a miscompile needs, a
/// harness turns one decision off on a reduced finding and keeps it in the bucket key only when
/// the finding goes away with it.
///
/// Only decisions with a plain path that computes the same values are in a set: a
/// materialized run (read the whole Ref, then `lax.dynamic_slice_in_dim` on the value at the
/// same start, and the same squeeze and mask) and a materialized Ref view (read the whole
/// Ref, then `jnp.reshape` to the same shape). A run or view that stays a Ref transform
/// (feeding another Ref op) has none and is lowered as planned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PlainSet(u32);

impl PlainSet {
    /// No decision taken by its plain path.
    pub const NONE: PlainSet = PlainSet(0);

    /// Every decision with a plain path: the 12 runs and the 6 views ([`PlainSet::only`]).
    pub const ALL: PlainSet = PlainSet((1 << 18) - 1);

    /// The set of one decision, or `None` for a decision with no plain path.
    pub fn only(d: Decision) -> Option<PlainSet> {
        Self::bit(d).map(PlainSet)
    }

    /// Both sets.
    pub fn union(self, other: PlainSet) -> PlainSet {
        PlainSet(self.0 | other.0)
    }

    /// Whether `d` is lowered by its plain path.
    pub fn contains(self, d: Decision) -> bool {
        Self::bit(d).is_some_and(|b| self.0 & b != 0)
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// A comma-separated list of decision names (`run=tile.mask,ref-view=reshape`; empty for
    /// none), each one with a plain path.
    pub fn parse(s: &str) -> Result<PlainSet, NoPlainPath> {
        let mut set = PlainSet::NONE;
        for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let d: Decision = name
                .parse()
                .map_err(|e: UnknownDecision| NoPlainPath(e.0))?;
            let Some(one) = PlainSet::only(d) else {
                return Err(NoPlainPath(name.to_string()));
            };
            set.0 |= one.0;
        }
        Ok(set)
    }

    fn bit(d: Decision) -> Option<u32> {
        let index = match d {
            Decision::Run {
                kind,
                mask,
                squeeze,
            } => {
                let k = SelectorKind::ALL.iter().position(|&x| x == kind)?;
                k * 4 + usize::from(mask) * 2 + usize::from(squeeze)
            }
            Decision::RefView(v) => 12 + ViewKind::ALL.iter().position(|&x| x == v)?,
            Decision::Loop(_)
            | Decision::ResidentLoad
            | Decision::ValueLoad
            | Decision::NewAxisRun
            | Decision::Materialize
            | Decision::StaticValue => return None,
        };
        Some(1 << index)
    }
}

/// The decisions `plan` makes on `case`, with the loop skeleton of its effective loop type.
pub fn decisions(case: &Case, plan: &Plan) -> Decisions {
    let mut out = Decisions::new();
    if has_device_loop(case) {
        out.insert(Decision::Loop(case.effective_loop_type()));
    }
    walk::each_stmt(&case.kernel.body, &mut |s| {
        walk::stmt_exprs(s, &mut |e| {
            walk::each_expr(e, &mut |x| node(x, plan, &mut out))
        });
    });
    out
}

fn node(e: &Expr, plan: &Plan, out: &mut Decisions) {
    if plan.is_static_value(e) {
        out.insert(Decision::StaticValue);
    }
    let Some((decision, materialize)) = node_decision(e, plan) else {
        return;
    };
    out.insert(decision);
    if materialize {
        out.insert(Decision::Materialize);
    }
}

/// The decision `plan` makes on the node `e` itself (a load, or a node of a resident chain that
/// reads or views the Ref), and whether the node materializes; `None` for anything else. The one
/// mapping from plan to decision, for [`decisions`] and for the codegen's [`PlainSet`] test.
pub(crate) fn node_decision(e: &Expr, plan: &Plan) -> Option<(Decision, bool)> {
    let resident = plan.resident(e);
    Some(match &e.kind {
        ExprKind::Load { .. } if resident.is_some() => (Decision::ResidentLoad, false),
        ExprKind::Load { .. } => (Decision::ValueLoad, false),
        ExprKind::Subscript { indices, .. } => match resident {
            Some(r) => match &r.selector {
                Some(_) if indices.iter().any(|i| matches!(i, Index::NewAxis)) => {
                    (Decision::NewAxisRun, r.materialize)
                }
                Some(sel) => (
                    Decision::Run {
                        kind: sel.kind,
                        mask: sel.mask,
                        squeeze: sel.squeeze,
                    },
                    r.materialize,
                ),
                None => (Decision::RefView(ViewKind::NewAxis), r.materialize),
            },
            None => return None,
        },
        ExprKind::View { op, .. } => match resident {
            Some(r) => (Decision::RefView(ViewKind::of(op)), r.materialize),
            None => return None,
        },
        // Transports (a `Name` read of a Ref) carry their input's state: no decision of their
        // own. Nothing else is planned.
        ExprKind::Name(_)
        | ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Size { .. }
        | ExprKind::TileAttr { .. }
        | ExprKind::Binary { .. }
        | ExprKind::Compare { .. }
        | ExprKind::Arange { .. }
        | ExprKind::Zeros { .. }
        | ExprKind::Full { .. }
        | ExprKind::Cast { .. }
        | ExprKind::Sum { .. }
        | ExprKind::Permute { .. }
        | ExprKind::Op { .. }
        | ExprKind::Alloc { .. } => return None,
    })
}

fn has_device_loop(case: &Case) -> bool {
    let mut inner = false;
    walk::each_stmt(&case.kernel.body, &mut |s| {
        if let lang::ir::StmtKind::For(lp) = &s.kind {
            walk::each_stmt(&lp.body, &mut |t| {
                inner |= matches!(t.kind, lang::ir::StmtKind::For(_));
            });
        }
    });
    inner
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::{CodegenOptions, compile};
    use lang::frontend::parse_case;

    /// A one-load kernel: `blk = x[outer, :]` read by `line` in an inner `hl.tile` loop.
    fn kernel(block_sizes: &str, loop_type: &str, line: &str, rows: usize) -> String {
        [
            "import torch",
            "import helion",
            "import helion.language as hl",
            "",
            &format!(
                "@helion.kernel(backend=\"pallas\", static_shapes=True, \
                 config=helion.Config(block_sizes={block_sizes}, pallas_loop_type=\"{loop_type}\"))"
            ),
            "def k(x: torch.Tensor) -> torch.Tensor:",
            "    out = torch.zeros_like(x)",
            "    for outer in hl.tile(x.size(0)):",
            "        blk = x[outer, :]",
            "        acc = hl.zeros([128], dtype=torch.float32)",
            "        for local in hl.tile(outer.end - outer.begin):",
            &format!("            {line}"),
            "        out[outer.begin, :] = acc",
            "    return out",
            "",
            &format!("x = torch.randn({rows}, 128)"),
            "k(x)",
            "",
        ]
        .join("\n")
    }

    fn decisions_of(index: &str, loop_type: &str) -> Decisions {
        let line = format!("acc = blk[{index}, :].sum(dim=0)");
        let src = kernel("[4, 2]", loop_type, &line, 12);
        let case = parse_case(&src, "k.py").expect("parses");
        let c = compile(&case, &CodegenOptions::default());
        assert!(c.module().is_some(), "{}", crate::compile::verdict_line(&c));
        c.into_decisions()
    }

    #[test]
    fn a_plain_set_names_runs_and_views_only() {
        let run = Decision::Run {
            kind: SelectorKind::Tail,
            mask: false,
            squeeze: true,
        };
        let set = PlainSet::parse("run=tail.squeeze, ref-view=reshape").unwrap();
        assert!(set.contains(run) && set.contains(Decision::RefView(ViewKind::Reshape)));
        assert!(!set.contains(Decision::RefView(ViewKind::View)));
        assert_eq!(PlainSet::only(run).map(|s| s.contains(run)), Some(true));
        assert_eq!(PlainSet::parse(""), Ok(PlainSet::NONE));
        // Every run and view, each its own bit; nothing else has a plain path.
        let mut all = Vec::new();
        for kind in SelectorKind::ALL {
            for (mask, squeeze) in [(false, false), (false, true), (true, false), (true, true)] {
                all.push(Decision::Run {
                    kind,
                    mask,
                    squeeze,
                });
            }
        }
        all.extend(ViewKind::ALL.map(Decision::RefView));
        assert_eq!(all.len(), 18);
        for (i, d) in all.iter().enumerate() {
            assert!(PlainSet::ALL.contains(*d), "{d}");
            for other in &all[i + 1..] {
                assert!(!PlainSet::only(*d).unwrap().contains(*other), "{d} {other}");
            }
        }
        for d in [
            Decision::ResidentLoad,
            Decision::Materialize,
            Decision::StaticValue,
        ] {
            assert_eq!(PlainSet::only(d), None);
            assert!(PlainSet::parse(&d.to_string()).is_err());
        }
        assert!(PlainSet::parse("run=sideways").is_err());
    }

    #[test]
    fn a_run_that_adds_an_axis_is_its_own_decision_not_a_run_of_a_kind() {
        use crate::faults::{Fault, FaultSet};
        let d14 = CodegenOptions {
            faults: FaultSet::only(Fault::D14MaskOnInputAxis),
            ..CodegenOptions::default()
        };
        for index in ["local.index", "local.index + 0"] {
            let line = format!("acc = acc + blk[None, {index}, :].sum(dim=0).sum(dim=0)");
            let src = kernel("[4, 2]", "fori_loop", &line, 12);
            let case = parse_case(&src, "k.py").expect("parses");
            // The merged planner refuses it before choosing a kind.
            let merged = compile(&case, &CodegenOptions::default());
            assert!(
                merged.rejection().is_some(),
                "{index}: {}",
                crate::compile::verdict_line(&merged)
            );
            // A planner that accepts it makes one decision, not one per selector kind.
            let c = compile(&case, &d14);
            assert!(c.module().is_some(), "{}", crate::compile::verdict_line(&c));
            let d = c.decisions();
            assert!(d.contains(&Decision::NewAxisRun), "{index}: {d:?}");
            assert!(
                !d.iter().any(|x| matches!(x, Decision::Run { .. })),
                "{index}: {d:?}"
            );
        }
        assert_eq!("new-axis-run".parse(), Ok(Decision::NewAxisRun));
        assert_eq!(PlainSet::only(Decision::NewAxisRun), None);
    }

    #[test]
    fn a_run_by_its_plain_path_reads_the_whole_ref_and_keeps_the_values() {
        let line = "acc = acc + blk[local.index, :].sum(dim=0)";
        let src = kernel("[8, 2]", "fori_loop", line, 13);
        let case = parse_case(&src, "k.py").expect("parses");
        let planned = compile(&case, &CodegenOptions::default());
        let run = Decision::Run {
            kind: SelectorKind::Tile,
            mask: true,
            squeeze: false,
        };
        assert!(
            planned.decisions().contains(&run),
            "{}: {:?}",
            crate::compile::verdict_line(&planned),
            planned.decisions()
        );
        let plain = compile(
            &case,
            &CodegenOptions {
                plain: PlainSet::ALL,
                ..CodegenOptions::default()
            },
        );
        // The plan, and so the decisions, are the same; only the code differs.
        assert_eq!(plain.decisions(), planned.decisions());
        let (a, b) = (planned.source().unwrap(), plain.source().unwrap());
        assert!(!a.contains("dynamic_slice_in_dim"), "{a}");
        assert!(b.contains("jax.lax.dynamic_slice_in_dim("), "{b}");
        let inputs = case.kernel_tensor_args().expect("inputs");
        let options = sim::SimOptions::default();
        let run =
            |m: &lang::pallas::PallasModule| sim::simulate(m, &inputs, &options).expect("runs");
        let (want, got) = (run(planned.module().unwrap()), run(plain.module().unwrap()));
        assert_eq!(got[0].values, want[0].values);
    }

    #[test]
    fn spellings_of_one_tile_run_make_one_decision() {
        let plain = decisions_of("local.index", "fori_loop");
        let plus_zero = decisions_of("local.index + 0", "fori_loop");
        assert_eq!(plain, plus_zero);
        let run = Decision::Run {
            kind: SelectorKind::Tile,
            mask: true,
            squeeze: false,
        };
        for d in [
            Decision::Loop(LoopType::ForiLoop),
            Decision::ResidentLoad,
            run,
            Decision::Materialize,
        ] {
            assert!(plain.contains(&d), "{d} not in {plain:?}");
        }
        // The loop skeleton is a decision of its own.
        let pipelined = decisions_of("local.index", "emit_pipeline");
        assert!(pipelined.contains(&Decision::Loop(LoopType::EmitPipeline)));
        assert_eq!(
            plain.symmetric_difference(&pipelined).count(),
            2,
            "{plain:?} vs {pipelined:?}"
        );
    }

    #[test]
    fn names_round_trip() {
        let mut all = vec![
            Decision::ResidentLoad,
            Decision::ValueLoad,
            Decision::Materialize,
            Decision::StaticValue,
        ];
        all.extend(LoopType::ALL.map(Decision::Loop));
        all.extend(ViewKind::ALL.map(Decision::RefView));
        for kind in SelectorKind::ALL {
            for (mask, squeeze) in [(false, false), (true, false), (false, true), (true, true)] {
                all.push(Decision::Run {
                    kind,
                    mask,
                    squeeze,
                });
            }
        }
        for d in all {
            assert_eq!(d.to_string().parse::<Decision>(), Ok(d));
        }
        assert!("run=tile.squeeze.mask".parse::<Decision>().is_err());
        assert!("loop=while".parse::<Decision>().is_err());
    }
}
