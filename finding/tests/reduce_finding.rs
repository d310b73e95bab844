//! The reduction driver on a real JAX finding: a 20-line kernel whose emitted module is run by
//! JAX's TPU interpreter with every tile-run read moved to offset 0 (the module is tampered
//! before JAX runs it: a "loop offset dropped" miscompile made by hand, since the compiler under
//! test has no such bug). The finding must reduce to a kernel body of at most 12 lines under a
//! budget of 5,000 attempts, deterministically, with its signature intact. The time budget is
//! only a cap far above the 34 s measured under a campaign's load (fixpoint after 174
//! attempts), so that a slow or loaded host reduces as far as a
//! quiet one (the wall-clock time is printed, never asserted).

use compiler::compile::CodegenOptions;
use fuzz::check::check_case;
use fuzz::engines::jax::Jax;
use fuzz::engines::{Engine, EngineRun, Job};
use lang::frontend::parse_case;
use lang::render::render_case;
use pallas_diff_finding::minimize::{kernel_body_lines, reduce_finding};
use pallas_diff_finding::signature::signature;
use reducer::Budget;
use std::sync::Arc;
use std::time::Duration;

/// JAX's TPU interpreter running the emitted module with every `pl.ds(offset_N, W)` read turned
/// into `pl.ds(0 * offset_N, W)`: each inner tile run reads the first run's rows.
struct OffsetDropped(Jax);

impl Engine for OffsetDropped {
    fn id(&self) -> fuzz::engines::EngineId {
        self.0.id()
    }

    fn run(&self, job: &Job<'_>) -> EngineRun {
        let tampered = job
            .emitted
            .map(|s| s.replace("pl.ds(offset_", "pl.ds(0 * offset_"));
        self.0.run(&Job {
            emitted: tampered.as_deref(),
            ..*job
        })
    }
}

#[test]
fn a_jax_finding_reduces_to_twelve_lines() {
    let python = tpu_runner::provision().expect("provision JAX");
    let pool = Arc::new(
        tpu_runner::Pool::new(tpu_runner::PoolConfig::new(python).with_workers(2))
            .expect("start JAX workers"),
    );
    let engine: Arc<dyn Engine> = Arc::new(OffsetDropped(Jax::new(
        tpu_runner::Mode::PallasTpuInterpret,
        pool,
    )));
    let src = include_str!("big_finding.py");
    let case = parse_case(src, "big_finding.py").unwrap();
    let options = CodegenOptions::default();
    let boxed: Vec<Box<dyn Engine>> = vec![Box::new(Shared(engine.clone()))];
    let report = check_case(&case, &boxed, &options);
    let sig = signature(&case, &report);
    assert_eq!(
        sig.outcome,
        fuzz::outcome::Outcome::Mismatch,
        "{:?}",
        report.engines
    );
    println!("finding: {}", sig.key());
    assert!(kernel_body_lines(&case) > 12);
    let budget = Budget {
        attempts: 5_000,
        time: Duration::from_secs(900),
    };
    let r = reduce_finding(
        &case,
        &sig,
        std::slice::from_ref(&engine),
        budget,
        2,
        &options,
    )
    .unwrap();
    println!(
        "reduced {} -> {} body lines in {:.1}s: {} attempts, {} steps, {} engine runs, {} memo hits, exhausted {}; {}",
        r.original_body_lines,
        r.body_lines,
        r.seconds,
        r.attempts,
        r.steps,
        r.engine_runs,
        r.memo_hits,
        r.exhausted,
        r.signature.key()
    );
    println!("{}", render_case(r.case()));
    assert!(sig.holds_for(&r.signature));
    assert!(r.body_lines <= 12, "{} lines", r.body_lines);
}

struct Shared(Arc<dyn Engine>);

impl Engine for Shared {
    fn id(&self) -> fuzz::engines::EngineId {
        self.0.id()
    }

    fn run(&self, job: &Job<'_>) -> EngineRun {
        self.0.run(job)
    }
}
