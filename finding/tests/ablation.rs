//! The ablation behind a bucket's cause (`minimize::ablate`), in process: a read-after-write
//! miscompile (fault `d1-read-after-write`: a loaded tensor that is also written stays a lazy
//! Ref) seen through a static run and through a Ref view needs neither consumer's code, only
//! the resident load: the view leaves the key, and the bucket of the view's finding absorbs the
//! run's.

use compiler::compile::CodegenOptions;
use compiler::decisions::{Decision, ViewKind};
use compiler::faults::{Fault, FaultSet};
use compiler::plan::SelectorKind;
use fuzz::check::check_case;
use fuzz::engines;
use lang::frontend::parse_case;
use pallas_diff_finding::minimize::{reduce_finding, shared};
use pallas_diff_finding::signature::{Buckets, CostRecord, signature};
use reducer::Budget;

fn script(read: &str) -> String {
    format!(
        "import torch\nimport helion\nimport helion.language as hl\n\n\n\
         @helion.kernel(backend=\"pallas\", static_shapes=True, \
         config=helion.Config(block_sizes=[], pallas_loop_type=\"fori_loop\"))\n\
         def kernel(x: torch.Tensor, y: torch.Tensor):\n\
         \x20   out = torch.zeros([1, 1, 64], dtype=torch.float32)\n\
         \x20   for request in hl.grid(1):\n\
         \x20       acc = hl.zeros([1, 64], dtype=torch.float32)\n\
         \x20       for outer in hl.tile(6, block_size=2):\n\
         \x20           x_block = x[outer, :, :]\n\
         \x20           x[outer, :, :] = y[outer, :, :]\n\
         \x20           acc = acc + {read}\n\
         \x20       out[request, :, :] = acc\n\
         \x20   return out\n\n\n\
         x = torch.ones(6, 1, 64, dtype=torch.float32)\n\
         y = torch.zeros(6, 1, 64, dtype=torch.float32)\n\
         kernel(x, y)\n"
    )
}

#[test]
fn one_read_after_write_seen_through_a_run_and_a_view_is_one_bucket() {
    let options = CodegenOptions {
        faults: FaultSet::only(Fault::D1ReadAfterWrite),
        ..CodegenOptions::default()
    };
    let engines =
        shared(engines::build(&[fuzz::engines::EngineId::PallasSim], None).expect("pallas-sim"));
    let boxed = engines::build(&[fuzz::engines::EngineId::PallasSim], None).expect("pallas-sim");
    let mut sigs = Vec::new();
    for (read, consumer) in [
        (
            "x_block[0:1, :, :].sum(dim=0)",
            Decision::Run {
                kind: SelectorKind::Static,
                mask: false,
                squeeze: false,
            },
        ),
        (
            "x_block.unsqueeze(0).sum(dim=0).sum(dim=0)",
            Decision::RefView(ViewKind::Unsqueeze),
        ),
    ] {
        let src = script(read);
        let case = parse_case(&src, "k.py").unwrap_or_else(|e| panic!("{e}\n{src}"));
        let report = check_case(&case, &boxed, &options);
        let sig = signature(&case, &report);
        assert_eq!(
            sig.outcome,
            fuzz::outcome::Outcome::Mismatch,
            "{read}: {:?}",
            report.outcome
        );
        assert!(sig.decisions.contains(&consumer), "{read}: {}", sig.key());
        let r = reduce_finding(&case, &sig, &engines, Budget::default(), 1, &options).unwrap();
        assert!(sig.holds_for(&r.signature), "{read}");
        // The consumer is planned, recorded, and shown not needed.
        assert!(
            r.signature.decisions.contains(&consumer),
            "{read}: {:?}",
            r.signature
        );
        assert!(
            r.signature.ablated.contains(&consumer),
            "{read}: {:?}",
            r.signature
        );
        // The resident load is the cause: never ablated.
        assert!(
            r.signature
                .cause_decisions()
                .any(|d| *d == Decision::ResidentLoad)
        );
        sigs.push(r.signature);
    }
    let (run, view) = (&sigs[0], &sigs[1]);
    // The view is left out of the key; the run keeps its selector there ...
    assert!(!view.key().contains("ref-view"), "{}", view.key());
    assert!(run.key().contains("run=static"), "{}", run.key());
    // ... and the bucket that shows the cause with no run at all absorbs it.
    assert!(view.subsumes(run), "{} / {}", view.key(), run.key());
    let mut buckets = Buckets::default();
    buckets.record(view, CostRecord::default(), "0001");
    assert_eq!(buckets.converged(run), Some(view.key()));
}
