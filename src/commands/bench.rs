//! `pallas-diff bench`: where the in-process differential loop spends its time, in one run.
//!
//! Two measurements side by side: every stage of one case on a fixed seeded sample (the
//! generator's cases as drawn: case `i` is `generate_from_seed(case_seed(seed, i))`), as the
//! median and mean over cases of each case's fastest of `--rounds` runs; and the differential
//! loop itself (`campaign::run` on one thread with the in-process engines, findings counted and
//! dropped), as cases per wall-clock second and per CPU second of the process, all of them and
//! the lowered ones (issue 19's throughput target is lowered cases per CPU second), with the
//! campaign's thinning of refused draws (`campaign::draw`) and without it, alternately. The stage
//! table also splits each stage's cost into µs per lowered and per refused case. The machines this
//! runs on are shared, so the CPU-second figure and the ratios between rows are the ones to
//! compare; the load average is printed with them.
//!
//! Speed targets live here and in the criterion benches (`cargo bench`), never in timed tests.

use super::{CliError, Exit};
use compiler::compile::CodegenOptions;
use fuzz::campaign::sink::{Filed, FindingSink};
use fuzz::campaign::{self, CampaignConfig, case_seed};
use fuzz::check::{CaseReport, PreparedCase};
use fuzz::engines;
use fuzz::generators::{GenConfig, features_sized, generate_from_seed};
use lang::ir::Case;
use lang::tensor::Tensor;
use serde::Serialize;
use std::hint::black_box;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Arguments of `bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Cases in the per-stage sample.
    #[arg(long, default_value_t = 1000)]
    cases: u64,
    /// Rounds over the sample: each stage of each case counts its fastest round.
    #[arg(long, default_value_t = 3)]
    rounds: u32,
    /// Cases of the timed differential loop (one thread).
    #[arg(long, default_value_t = 20_000)]
    loop_cases: u64,
    /// Campaign seed of both measurements.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print the table as one JSON object.
    #[arg(long)]
    json: bool,
    /// Instead: the helion-pallas engine beside a plain Python loop through Helion on this many
    /// generated cases (needs the Helion environment).
    #[arg(long, value_name = "CASES")]
    helion: Option<u64>,
    /// Instead: the JAX interpreters on this many generated lowered kernels, one kernel per
    /// compile beside batches of `--batch` kernels per compile (needs the JAX environment).
    #[arg(long, value_name = "KERNELS")]
    jax: Option<u64>,
    /// With --jax: the batch sizes to measure.
    #[arg(long, value_delimiter = ',', default_value = "8")]
    batch: Vec<usize>,
    /// With --jax: also write the kernels here as JSON lines (`source`, `inputs`: a worker
    /// request's fields), for profiling the worker by hand.
    #[arg(long, value_name = "FILE")]
    dump_kernels: Option<std::path::PathBuf>,
}

/// The stages of one case, in the order a campaign runs them: the compile's (trace and
/// validation, dead-code removal with the live kernel's second trace, plan, lower), the coverage
/// features (with the compile's block sizes), then, on a kernel the compiler lowered only (a
/// campaign skips them on a refused one: `Depth::FindingsOnly`), the reference and pallas-sim.
/// `print` is the module's text, which a campaign makes only for a finding or a JAX engine.
const STAGES: [&str; STAGE_COUNT] = [
    "generate",
    "validate+infer",
    "dead code",
    "plan",
    "lower",
    "print",
    "features",
    "reference inputs",
    "reference run",
    "sim",
];

const STAGE_COUNT: usize = 10;
/// The index of `print` in [`STAGES`]: a case has a module iff it ran.
const PRINT: usize = 5;

/// One row of the stage table.
#[derive(Debug, Serialize)]
struct StageRow {
    stage: &'static str,
    /// Cases of the sample that reach the stage (plan needs a trace, sim a module, ...).
    ran_on: usize,
    median_us: f64,
    mean_us: f64,
    /// Total over the sample divided by the sample size: what the stage costs an average case.
    per_case_us: f64,
    /// The same over the sample's lowered cases only (those with a module) ...
    per_lowered_us: f64,
    /// ... and over the others (refused, or not modelled by the codegen): where a refused
    /// case's time goes, which no engine's verdict uses.
    per_refused_us: f64,
}

/// The differential loop's figures.
#[derive(Debug, Serialize)]
struct LoopRow {
    /// The generator's `refused_keep_percent` of this loop (100: cases as drawn).
    refused_keep_percent: u8,
    cases: u64,
    /// Of those, the lowered ones the engines ran and the reference judged ([`checked_lowered`]):
    /// what the loop is for; the issue-19 target is on them per CPU second.
    lowered: u64,
    wall_seconds: f64,
    cpu_seconds: Option<f64>,
    cases_per_second: f64,
    cases_per_cpu_second: Option<f64>,
    lowered_per_second: f64,
    lowered_per_cpu_second: Option<f64>,
}

/// Whether a case that ended so was lowered and its module checked against the reference by
/// the in-process engines (the outcomes reached only after an engine ran the module). A kernel
/// the compiler refused, did not model or crashed on, or whose case the reference refused, is
/// not: no engine ran it.
fn checked_lowered(outcome: fuzz::outcome::Outcome) -> bool {
    use fuzz::outcome::Outcome as O;
    match outcome {
        O::Agree
        | O::Mismatch
        | O::LoweringError
        | O::RuntimeError
        | O::Timeout
        | O::EngineCrash
        | O::KnownIssue => true,
        O::Rejected
        | O::InvalidCase
        | O::CompilerCrash
        | O::Unsupported
        | O::HelionCrash
        | O::HelionAcceptsInvalid
        | O::VerdictMismatch => false,
    }
}

/// Wall-clock microseconds of `f`, and its result.
fn timed<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t = Instant::now();
    let r = black_box(f());
    (t.elapsed().as_secs_f64() * 1e6, r)
}

/// Per-case, per-stage times of one round over the sample (`None`: the case does not reach
/// the stage).
fn round(
    seeds: &[u64],
    cfg: &GenConfig,
    options: &CodegenOptions,
) -> Vec<[Option<f64>; STAGE_COUNT]> {
    let sim = engines::sim::Sim::default();
    seeds
        .iter()
        .map(|&seed| {
            let mut t = [None; STAGE_COUNT];
            let (us, case) = timed(|| generate_from_seed(seed, cfg));
            t[0] = Some(us);
            let (us, (traced, rejection)) = timed(|| {
                let traced = lang::ir::types::infer_deferring(&case);
                let r = compiler::validate::validate_traced(
                    &case,
                    traced.as_ref().ok(),
                    options.faults,
                );
                (traced, r)
            });
            t[1] = Some(us);
            let module = match (&traced, rejection) {
                (Ok(types), None) => {
                    let (us, live) =
                        timed(|| compiler::compile::live_kernel(&case, &types.block_sizes));
                    t[2] = Some(us);
                    let (case, types) = match &live {
                        Some((live, t)) => (live, t),
                        None => (&case, types),
                    };
                    let (us, plan) =
                        timed(|| compiler::plan::plan_with_faults(case, types, options.faults));
                    t[3] = Some(us);
                    let lowered = plan.ok().map(|plan| {
                        let (us, m) = timed(|| compiler::lower::lower(case, types, &plan, options));
                        t[4] = Some(us);
                        m
                    });
                    match lowered {
                        Some(Ok(m)) => {
                            t[PRINT] = Some(timed(|| lang::pallas::print_module(&m)).0);
                            Some(m)
                        }
                        Some(Err(_)) | None => None,
                    }
                }
                (Ok(_) | Err(_), _) => None,
            };
            let effective = traced
                .as_ref()
                .ok()
                .map(|t| t.block_sizes.effective.as_slice());
            t[6] = Some(timed(|| features_sized(&case, effective)).0);
            if let Some(m) = &module {
                let (us, inputs) = timed(|| case.input_tensors());
                t[7] = Some(us);
                let (us, reference) = timed(|| oracle::evaluate_with_inputs(&case, &inputs));
                t[8] = Some(us);
                if let (Ok(all), Ok(_)) = (&inputs, &reference) {
                    let args = kernel_args(&case, all);
                    t[9] = Some(timed(|| sim.status(m, &args)).0);
                }
            }
            t
        })
        .collect()
}

fn kernel_args(case: &Case, all: &[Tensor]) -> Vec<Tensor> {
    case.kernel_arg_positions()
        .into_iter()
        .map(|p| all[p].clone())
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// CPU seconds (user + system) of this process so far, all threads, exited ones included
/// (`/proc/self/stat` fields 14 and 15, in clock ticks of 1/100 s: Linux's `USER_HZ`).
fn process_cpu_seconds() -> Option<f64> {
    super::bench_jax::cpu_seconds_of("self")
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Counts findings and keeps none (a finding here is reported by `fuzz`, not by `bench`).
struct CountingSink;

impl FindingSink for CountingSink {
    fn file(&self, _: &PreparedCase, _: &CaseReport, _: u64) -> std::io::Result<Filed> {
        Ok(Filed::New(std::path::PathBuf::new()))
    }
}

/// The differential loop on `args.loop_cases` cases drawn with `refused_keep_percent`.
fn differential_loop(args: &Args, refused_keep_percent: u8) -> Result<(LoopRow, u64), CliError> {
    let in_process =
        engines::build(&engines::IN_PROCESS, None).map_err(|e| CliError::Internal(e.into()))?;
    let cfg = CampaignConfig {
        time: None,
        cases: Some(args.loop_cases),
        jobs: 1,
        seed: args.seed,
        in_process,
        jax: Vec::new(),
        jax_threads: 0,
        confirmation: fuzz::campaign::Confirmation::Sample,
        generator: GenConfig {
            refused_keep_percent,
            ..GenConfig::default()
        }
        .normalized(),
        codegen: CodegenOptions::default(),
        dump_cases: None,
        digest: None,
        seeds: None,
    };
    let stop = AtomicBool::new(false);
    let cpu0 = process_cpu_seconds();
    let t = Instant::now();
    let summary = campaign::run(&cfg, &CountingSink, &stop, &|_, _| {})
        .map_err(|e| CliError::Internal(anyhow::anyhow!("campaign I/O failed: {e}")))?;
    let wall = t.elapsed().as_secs_f64();
    let cpu = process_cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
    let cases = summary.stats.cases;
    let lowered: u64 = summary
        .stats
        .outcomes
        .iter()
        .filter(|(o, _)| checked_lowered(**o))
        .map(|(_, n)| n)
        .sum();
    let cpu_rate = |n: u64| cpu.filter(|&c| c > 0.0).map(|c| n as f64 / c);
    Ok((
        LoopRow {
            refused_keep_percent,
            cases,
            lowered,
            wall_seconds: wall,
            cpu_seconds: cpu,
            cases_per_second: cases as f64 / wall.max(1e-9),
            cases_per_cpu_second: cpu_rate(cases),
            lowered_per_second: lowered as f64 / wall.max(1e-9),
            lowered_per_cpu_second: cpu_rate(lowered),
        },
        summary.stats.findings,
    ))
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    if let Some(n) = args.helion {
        return super::bench_helion::run(n, args.seed, args.json);
    }
    if let Some(n) = args.jax {
        return super::bench_jax::run(
            n,
            &args.batch,
            args.seed,
            args.json,
            args.dump_kernels.as_deref(),
        );
    }
    if args.cases == 0 || args.rounds == 0 {
        return Err(CliError::Input(anyhow::anyhow!(
            "--cases and --rounds must be at least 1"
        )));
    }
    // The generator config `pallas-diff fuzz` runs by default (normalized defaults).
    let cfg = GenConfig::default().normalized();
    let options = CodegenOptions::default();
    let seeds: Vec<u64> = (0..args.cases).map(|i| case_seed(args.seed, i)).collect();
    // Warm up allocator and caches once, then keep each stage's fastest round per case.
    black_box(round(&seeds[..seeds.len().min(100)], &cfg, &options));
    let mut best = round(&seeds, &cfg, &options);
    for _ in 1..args.rounds {
        for (b, r) in best.iter_mut().zip(round(&seeds, &cfg, &options)) {
            for (x, y) in b.iter_mut().zip(r) {
                *x = match (*x, y) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
        }
    }
    let n = seeds.len() as f64;
    // A case has a module iff its print stage ran.
    let has_module = |t: &[Option<f64>; STAGE_COUNT]| t[PRINT].is_some();
    let n_lowered = best.iter().filter(|t| has_module(t)).count();
    let n_refused = best.len() - n_lowered;
    let rows: Vec<StageRow> = STAGES
        .iter()
        .enumerate()
        .map(|(k, &stage)| {
            let ran: Vec<f64> = best.iter().filter_map(|t| t[k]).collect();
            let total: f64 = ran.iter().sum();
            // `+ 0.0`: an empty f64 sum is -0.0, which would print as `-0.0`.
            let total_where = |lowered: bool| -> f64 {
                best.iter()
                    .filter(|t| has_module(t) == lowered)
                    .filter_map(|t| t[k])
                    .sum::<f64>()
                    + 0.0
            };
            StageRow {
                stage,
                ran_on: ran.len(),
                mean_us: total / (ran.len().max(1) as f64),
                per_case_us: total / n,
                per_lowered_us: total_where(true) / n_lowered.max(1) as f64,
                per_refused_us: total_where(false) / n_refused.max(1) as f64,
                median_us: median(ran),
            }
        })
        .collect();
    let stages_us: f64 = rows.iter().map(|r| r.per_case_us).sum();
    let load_before = load_average();
    // The campaign's loop beside the same loop on the cases as drawn (no thinning), alternately
    // twice, so both see the same machine.
    let default_keep = GenConfig::default().refused_keep_percent;
    let mut loops = Vec::new();
    let mut findings = 0;
    for keep in [100, default_keep, 100, default_keep] {
        let (row, f) = differential_loop(&args, keep)?;
        findings += f;
        loops.push(row);
    }
    let load = load_average();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if args.json {
        let json = serde_json::json!({
            "seed": args.seed,
            "sample_cases": args.cases,
            "rounds": args.rounds,
            "stages": rows,
            "stages_per_case_us": stages_us,
            "loops": loops,
            "loop_findings": findings,
            "load_average": load,
            "cores": cores,
        });
        println!(
            "{}",
            serde_json::to_string(&json).map_err(anyhow::Error::from)?
        );
        return Ok(Exit::Ok);
    }
    println!(
        "pallas-diff bench: seed {}, {} generated cases, each stage the fastest of {} rounds",
        args.seed, args.cases, args.rounds
    );
    println!("load average {load_before} before the loop, {load} after ({cores} cores)\n");
    println!(
        "{:<18} {:>7} {:>10} {:>10} {:>10} {:>6} {:>10} {:>10}",
        "stage", "ran on", "median µs", "mean µs", "µs/case", "share", "µs/lowered", "µs/refused"
    );
    for r in &rows {
        println!(
            "{:<18} {:>7} {:>10.1} {:>10.1} {:>10.1} {:>5.1}% {:>10.1} {:>10.1}",
            r.stage,
            r.ran_on,
            r.median_us,
            r.mean_us,
            r.per_case_us,
            100.0 * r.per_case_us / stages_us.max(1e-9),
            r.per_lowered_us,
            r.per_refused_us,
        );
    }
    let sum_where = |f: fn(&StageRow) -> f64| rows.iter().map(f).sum::<f64>();
    println!(
        "{:<18} {:>7} {:>10} {:>10} {:>10.1} {:>6} {:>10.1} {:>10.1}",
        "sum of stages",
        "",
        "",
        "",
        stages_us,
        "",
        sum_where(|r| r.per_lowered_us),
        sum_where(|r| r.per_refused_us),
    );
    println!(
        "({n_lowered} of the {} sample cases have a module; µs/lowered and µs/refused are per case of each kind)",
        best.len()
    );
    println!(
        "\ndifferential loop, 1 thread, {} cases each, the campaign's draws (refused-keep-percent {default_keep}) \
         beside the cases as drawn (100), alternately:",
        args.loop_cases
    );
    println!(
        "{:>13} {:>9} {:>9} {:>11} {:>9} {:>11} {:>13}",
        "refused kept", "lowered", "cases/s", "cases/CPU-s", "µs CPU", "lowered/s", "lowered/CPU-s"
    );
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
    for lp in &loops {
        println!(
            "{:>12}% {:>8.1}% {:>9.0} {:>11} {:>9} {:>11.0} {:>13}",
            lp.refused_keep_percent,
            100.0 * lp.lowered as f64 / lp.cases.max(1) as f64,
            lp.cases_per_second,
            opt(lp.cases_per_cpu_second),
            opt(lp.cpu_seconds.map(|c| c * 1e6 / lp.cases.max(1) as f64)),
            lp.lowered_per_second,
            opt(lp.lowered_per_cpu_second),
        );
    }
    println!(
        "(lowered: checked against the reference by the engines; the stages sum to {stages_us:.1} µs a case, \
         the rest of a loop's CPU is the campaign's own work and cache effects)"
    );
    if findings > 0 {
        println!("  {findings} findings (run `pallas-diff fuzz` to keep them)");
    }
    Ok(Exit::Ok)
}
