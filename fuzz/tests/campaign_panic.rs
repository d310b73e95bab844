//! A harness panic inside a campaign stops it: the campaign's other threads stop, and the panic
//! comes out of `campaign::run` instead of a campaign that goes on with fewer threads and ends
//! as if nothing happened.

use compiler::compile::CodegenOptions;
use compiler::faults::FaultSet;
use pallas_diff_fuzz::campaign::sink::{Filed, FindingSink};
use pallas_diff_fuzz::campaign::{self, CampaignConfig, Confirmation};
use pallas_diff_fuzz::check::{CaseReport, PreparedCase};
use pallas_diff_fuzz::engines;
use pallas_diff_fuzz::generators::GenConfig;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Panics on the first finding it is given (a harness bug in the sink) and counts the later
/// ones, which a campaign that stopped no longer sends.
struct PanickingSink {
    panicked: AtomicBool,
    after: AtomicU64,
}

impl FindingSink for PanickingSink {
    fn file(&self, _: &PreparedCase, _: &CaseReport, _: u64) -> std::io::Result<Filed> {
        if !self.panicked.swap(true, Ordering::SeqCst) {
            panic!("the sink broke");
        }
        self.after.fetch_add(1, Ordering::SeqCst);
        Ok(Filed::Duplicate)
    }
}

#[test]
fn a_panicking_thread_stops_the_campaign_and_its_panic_comes_out() {
    let cfg = CampaignConfig {
        time: None,
        // About 1.4% of cases are findings under this fault (the hunt's bucket runs), so a
        // campaign that went on would file thousands more.
        cases: Some(200_000),
        jobs: 2,
        seed: 0,
        in_process: engines::build(&engines::IN_PROCESS, None).expect("in-process engines"),
        jax: Vec::new(),
        jax_threads: 0,
        confirmation: Confirmation::Sample,
        generator: GenConfig::default().normalized(),
        codegen: CodegenOptions {
            faults: FaultSet::parse("d12-tail-clamped-before-mask").expect("a fault"),
            ..CodegenOptions::default()
        },
        dump_cases: None,
        digest: None,
        seeds: None,
    };
    let sink = PanickingSink {
        panicked: AtomicBool::new(false),
        after: AtomicU64::new(0),
    };
    let stop = AtomicBool::new(false);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        campaign::run(&cfg, &sink, &stop, &|_, _| {})
    }));
    let payload = result.expect_err("the sink's panic comes out of the campaign");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"the sink broke"));
    // The other producer stops at its next case: at most the finding it was checking.
    let after = sink.after.load(Ordering::SeqCst);
    assert!(after < 50, "{after} findings filed after the panic");
}
