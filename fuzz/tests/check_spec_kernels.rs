//! Every case script of the specification (`corpus/spec-kernels/*.py`) through the whole
//! pipeline (`check_case`) with every engine available here: the compiler's verdict must be the
//! one its header states (upstream's, at the merged state), the reference must produce the
//! correct values the header states (spec §4: the defect kernels' correct outputs), and no case
//! may end in a finding. Real JAX: the venv is provisioned on first use; `pallas-sim` runs
//! alongside. The DMA double-buffered kernels (spec §3.5 example 3, `pallas_load_buffer_count`
//! under `fori_loop`) must emit the manual DMA and run it on every engine, Mosaic lowering
//! included.

use compiler::compile::CodegenOptions;
use compiler::verdict::Verdict;
use corpus::expectations::{ExpectedVerdict, load_spec_kernels};
use pallas_diff_fuzz::check::{check_case, output_names};
use pallas_diff_fuzz::engines::{self, EngineStatus};
use pallas_diff_fuzz::outcome::Outcome;
use std::sync::{Arc, Mutex};

#[test]
fn spec_kernels_agree_or_are_rejected_as_upstream() {
    let python = tpu_runner::provision().expect("provision JAX (needs PyPI on first run)");
    let config = tpu_runner::PoolConfig::new(python).with_workers(2);
    let pool = Arc::new(tpu_runner::Pool::new(config).expect("start JAX workers"));
    let mut names: Vec<String> = [
        "pallas-sim",
        "pallas-interpret",
        "pallas-tpu-interpret",
        "pallas-tpu-lower",
    ]
    .map(String::from)
    .to_vec();
    if pool.availability().tpu {
        names.push("pallas-tpu".into());
    } else {
        println!(
            "pallas-tpu skipped: no TPU device here ({:?})",
            pool.availability().devices
        );
    }
    let ids: Vec<engines::EngineId> = names.iter().map(|n| n.parse().unwrap()).collect();
    let engines = engines::build(&ids, Some(pool)).unwrap();
    let kernels = load_spec_kernels().expect("spec kernels load");
    assert!(kernels.len() >= 60, "only {} spec kernels", kernels.len());
    let next = Mutex::new(0usize);
    let dma = Mutex::new(Vec::<String>::new());
    let failures = Mutex::new(Vec::<String>::new());
    let table = Mutex::new(Vec::<String>::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap();
                        *n += 1;
                        *n - 1
                    };
                    let Some(k) = kernels.get(i) else { break };
                    let name = k.name();
                    let report = check_case(&k.case, &engines, &CodegenOptions::default());
                    let fail = |m: String| failures.lock().unwrap().push(format!("{name}: {m}"));
                    if report.outcome.is_finding() {
                        fail(format!(
                            "finding {} by {:?}: {}",
                            report.outcome,
                            report.decided_by,
                            report
                                .mismatch
                                .as_ref()
                                .map(|m| m.to_string())
                                .or_else(|| report.engines.iter().find_map(|e| e.status.detail()))
                                .unwrap_or_default()
                        ));
                    }
                    match (&k.expectations.verdict, &report.verdict) {
                        (Some(ExpectedVerdict::Lowered), Some(Verdict::Lowered)) | (None, _) => {}
                        (
                            Some(ExpectedVerdict::Rejected { class, rule }),
                            Some(Verdict::Rejected(r)),
                        ) if r.rule.id() == rule.id() && r.class().name() == class.name() => {}
                        (want, got) => fail(format!("verdict {got:?}, header says {want:?}")),
                    }
                    if k.expectations.invalid.is_some() && report.outcome != Outcome::InvalidCase {
                        fail(format!("header says invalid, outcome {}", report.outcome));
                    }
                    if let EngineStatus::Outputs(outs) = &report.reference.status {
                        let names = output_names(&k.case);
                        for want in &k.expectations.outputs {
                            match names.iter().position(|n| n == &want.name) {
                                None => fail(format!("no output named `{}`", want.name)),
                                Some(p) => {
                                    if let Err(e) = want.check(&outs[p], k.expectations.tolerance) {
                                        fail(format!("reference: {e}"));
                                    }
                                }
                            }
                        }
                    } else if !k.expectations.outputs.is_empty() {
                        fail(format!(
                            "header states outputs but the reference said {:?}",
                            report.reference.status.detail()
                        ));
                    }
                    if report
                        .emitted
                        .as_deref()
                        .is_some_and(|src| src.contains("pltpu.make_async_copy("))
                    {
                        dma.lock().unwrap().push(name.to_string());
                        for e in &report.engines {
                            if !matches!(e.status, EngineStatus::Outputs(_) | EngineStatus::Lowered)
                                && !matches!(e.status, EngineStatus::Unavailable(_))
                            {
                                fail(format!(
                                    "DMA kernel: {} ended {}",
                                    e.engine,
                                    e.status.detail().unwrap_or_else(|| e.status.name().into())
                                ));
                            }
                        }
                    }
                    let engines: Vec<String> = report
                        .engines
                        .iter()
                        .map(|e| format!("{}={}", e.engine, e.status.name()))
                        .collect();
                    table.lock().unwrap().push(format!(
                        "{name:<70} {:<14} {}",
                        report.outcome.name(),
                        engines.join(" ")
                    ));
                }
            });
        }
    });
    let mut table = table.into_inner().unwrap();
    table.sort();
    println!("{}", table.join("\n"));
    let mut dma = dma.into_inner().unwrap();
    dma.sort();
    println!("DMA double-buffered: {dma:?}");
    for want in [
        "s3_5_ex3_dma_prefetch",
        "test_resident_subview_keeps_dma_prefetch",
    ] {
        if !dma.iter().any(|n| n == want) {
            failures
                .lock()
                .unwrap()
                .push(format!("{want}: no manual DMA emitted"));
        }
    }
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} spec kernel(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
