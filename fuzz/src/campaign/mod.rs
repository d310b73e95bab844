//! The campaign driver: generate cases, check them in-process on every core, confirm the
//! lowered ones that agree in-process in real JAX (as fast as the worker pool allows), and hand
//! every finding to a [`FindingSink`].
//!
//! Case `i` of a campaign with seed `S` is `generate_from_seed(case_seed(S, i), cfg)`, or, when
//! the compiler refuses that kernel and the case is thinned, a later draw of the same seed
//! stream ([`draw`]; a finding records the seed its case came from): the same seed and config
//! give the same cases, byte for byte, whatever `--jobs` is (see
//! [`CampaignConfig::dump_cases`]). In-process checking never waits for JAX: each JAX engine has
//! a bounded queue ([`select::Selector`]) that keeps the cases confirming would add most to
//! (novelty first: a coverage cell the engine has not confirmed, then the rarest cells), and a
//! case it has no room for is counted as `jax_skipped` rather than slowing generation down (JAX's
//! TPU interpreter manages a few new kernels/s on this machine, the in-process engines
//! thousands) — unless the campaign is told to confirm every lowered case
//! ([`Confirmation::Every`]), when generation waits for JAX. A confirmer takes up to
//! [`JAX_BATCH`] cases of one engine and runs them as one batch on the cases as the in-process
//! check prepared them ([`crate::check::check_prepared`]: no second compile or reference run).
//!
//! The campaign keeps its own threads (`--jobs` producers, one confirmer per JAX worker, a
//! progress ticker) where the harness's other parallel work runs on rayon pools: it is not a
//! parallel map over a collection but roles that run side by side for the whole campaign and
//! wait on each other. Confirmers block on the selector's queues until producers fill them, and
//! under [`Confirmation::Every`] producers block until confirmers make room; tasks of one rayon
//! pool that block so would hold its threads, and with every thread a waiting producer no
//! confirmer would run to unblock them. Dedicated threads give each role its own count (two
//! independent sizes, `jobs` and `jax_threads`), the stop is a time budget or Ctrl-C rather than
//! the end of an iterator, and a panicking thread stops the campaign and closes the queues
//! (`StopOnPanic`), so the threads waiting on them return and the panic goes on up.

pub mod assembly;
pub mod digest;
pub mod draw;
pub mod record;
pub mod select;
pub mod sink;
pub mod stats;

use crate::check::{CaseReport, Depth, PreparedCase, check_prepared};
use crate::engines::Engine;
use crate::generators::GenConfig;
use crate::outcome::Outcome;
use compiler::compile::CodegenOptions;
use sink::{Filed, FindingSink};
use stats::Stats;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How a campaign runs.
pub struct CampaignConfig {
    /// Stop after this long.
    pub time: Option<Duration>,
    /// Stop after this many cases.
    pub cases: Option<u64>,
    /// Threads generating and checking in-process.
    pub jobs: usize,
    /// Campaign seed.
    pub seed: u64,
    /// In-process engines compared with the reference on every case (e.g. `pallas-sim`).
    pub in_process: Vec<Box<dyn Engine>>,
    /// JAX engines confirming lowered cases that agree in-process.
    pub jax: Vec<Box<dyn Engine>>,
    /// Threads feeding the JAX pool (one per worker).
    pub jax_threads: usize,
    /// Which lowered, in-process-agreeing cases the JAX engines confirm.
    pub confirmation: Confirmation,
    /// Generator configuration.
    pub generator: GenConfig,
    /// Codegen options (padding policy).
    pub codegen: CodegenOptions,
    /// Write every generated case as `case-<i>.json` here.
    pub dump_cases: Option<PathBuf>,
    /// Write the per-case digest ([`digest`]) here when the campaign ends.
    pub digest: Option<PathBuf>,
    /// Seed cases (`fuzz --seeds DIR`): [`GenConfig::seed_percent`] of the cases are their
    /// mutants (`generators::seeded`).
    pub seeds: Option<crate::generators::seeded::Seeds>,
}

/// Which lowered cases that agree in-process the JAX engines run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Confirmation {
    /// As many as the JAX pool keeps up with; the rest are counted as `jax_skipped`. In-process
    /// checking runs at full speed (the fuzzing mode).
    #[default]
    Sample,
    /// Every one: generation waits for a free JAX worker, so the campaign runs at JAX's pace
    /// (for a JAX-confirmed no-false-finding run of N cases).
    Every,
}

/// What a campaign did.
#[derive(Debug, serde::Serialize)]
pub struct Summary {
    /// Counts.
    pub stats: Stats,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// The generator seed of case `index` of a campaign seeded `seed` (SplitMix64 of both).
pub fn case_seed(seed: u64, index: u64) -> u64 {
    let mut z = seed
        ^ index
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Cases a confirmer sends to one JAX engine at once: the interpreters compile them as one
/// function. `pallas-diff bench --jax 40 --batch 8,16` (2026-12-03, 2-core machine, load ~2),
/// distinct kernels per CPU second against one compile each with XLA's defaults: with the CLI's
/// `--xla-compile fast`, `pallas-interpret` 2.04x at 8 and 2.15x at 16, `pallas-tpu-interpret`
/// 2.52x and 2.46x (XLA's defaults: 1.34x / 1.28x and 1.52x / 1.51x). 16 gains little or
/// nothing more, and a batch still running when a timed campaign ends delays its end by the
/// whole batch, and a split batch costs twice as much.
pub const JAX_BATCH: usize = 8;

/// Past the time budget, the most cases an engine still confirms, each adding a cell it has
/// not confirmed (`Selector::close_keeping_new`): up to four more batches. The default
/// campaign's runs with one batch ended with 1 of ~1,237 cells unconfirmed per engine
/// (`--seed 82`, 2026-12-04).
const LAST_CASES: usize = 4 * JAX_BATCH;

/// Cases waiting per JAX engine: enough to choose from, few enough that a campaign with a
/// case budget drains them in seconds.
const JAX_QUEUE: usize = 64;

/// Stops the campaign when the thread that holds it unwinds from a panic: marks the campaign
/// as panicked (every producer's budget check then ends it) and closes the JAX queues, which the
/// last producer would otherwise close, so no confirmer waits for cases that never come.
struct StopOnPanic<'a> {
    panicked: &'a AtomicBool,
    selector: &'a select::Selector,
}

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.panicked.store(true, Ordering::Relaxed);
            self.selector.close(true);
        }
    }
}

/// Runs a campaign until its time or case budget is spent or `stop` is set; calls `progress`
/// about once a second. A panic of any of its threads (a harness bug) stops the others and is
/// raised again from here.
pub fn run(
    cfg: &CampaignConfig,
    sink: &dyn FindingSink,
    stop: &AtomicBool,
    progress: &(dyn Fn(&Stats, f64) + Sync),
) -> std::io::Result<Summary> {
    if let Some(dir) = &cfg.dump_cases {
        std::fs::create_dir_all(dir)?;
    }
    let start = Instant::now();
    let next = AtomicU64::new(0);
    let mut initial = Stats::default();
    for engine in &cfg.jax {
        initial.jax_confirmed_by.insert(engine.id(), 0);
    }
    let stats = Mutex::new(initial);
    let digest = cfg.digest.as_ref().map(|_| digest::Digest::new());
    let io_error: Mutex<Option<std::io::Error>> = Mutex::new(None);
    // Dropped when the workers are done: the progress thread wakes at once instead of
    // finishing its sleep (a quarter second added to every campaign, however short).
    let (done, finished) = std::sync::mpsc::channel::<()>();
    // Set when a campaign thread panics (a harness bug): every other thread stops, and the
    // panic is raised again once they have (see `StopOnPanic`).
    let panicked = AtomicBool::new(false);
    let stopped = || {
        stop.load(Ordering::Relaxed)
            || panicked.load(Ordering::Relaxed)
            || io_error.lock().map(|e| e.is_some()).unwrap_or(true)
    };
    let timed_out = || cfg.time.is_some_and(|t| start.elapsed() >= t);
    let out_of_budget = || stopped() || timed_out();
    let file =
        |prepared: &PreparedCase, report: &CaseReport, seed: u64, origin: Option<&str>| match sink
            .file_from(prepared, report, seed, origin)
        {
            Ok(Filed::New(_)) => stats.lock().expect("stats lock").findings += 1,
            Ok(Filed::Duplicate) => stats.lock().expect("stats lock").duplicates += 1,
            Err(e) => {
                let mut slot = io_error.lock().expect("error lock");
                slot.get_or_insert(e);
            }
        };
    let selector = select::Selector::new(
        cfg.jax.len(),
        JAX_QUEUE,
        match cfg.confirmation {
            Confirmation::Sample => select::WhenFull::Drop,
            Confirmation::Every => select::WhenFull::Wait,
        },
    );
    let producers_left = AtomicU64::new(cfg.jobs.max(1) as u64);
    std::thread::scope(|s| {
        // In-process producers.
        let mut producers = Vec::new();
        for _ in 0..cfg.jobs.max(1) {
            producers.push(s.spawn(|| {
                let _stop = StopOnPanic {
                    panicked: &panicked,
                    selector: &selector,
                };
                loop {
                    if out_of_budget() {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if cfg.cases.is_some_and(|n| i >= n) {
                        break;
                    }
                    // `FindingsOnly`: no reference on a refused kernel unless a Helion engine
                    // runs, the module's text printed only for a finding or a JAX engine.
                    let draw::Drawn {
                        seed,
                        prepared,
                        thinned,
                        origin,
                    } = draw::draw(
                        cfg.seed,
                        i,
                        &cfg.generator,
                        &cfg.codegen,
                        Depth::FindingsOnly,
                        cfg.seeds.as_ref(),
                    );
                    if let Some(dir) = &cfg.dump_cases {
                        let json =
                            serde_json::to_string(prepared.case()).expect("a case serializes");
                        if let Err(e) = std::fs::write(dir.join(format!("case-{i:08}.json")), json)
                        {
                            io_error.lock().expect("error lock").get_or_insert(e);
                        }
                    }
                    let report = prepared.check(&cfg.in_process);
                    if let Some(d) = &digest {
                        d.record(i, seed, &report);
                    }
                    let feats = prepared.features();
                    {
                        let mut st = stats.lock().expect("stats lock");
                        st.thinned += thinned;
                        st.record(report.outcome, report.lowered(), &feats);
                        if let Some((ours, agree)) = report.helion_agreement() {
                            let message = report.helion_message_agreement();
                            st.record_helion_verdict(&ours, agree, message, &feats);
                        }
                        if let Some(reached) = report.helion_reached_codegen() {
                            st.record_helion_reach(reached, &feats);
                        }
                        if let Some(health) = report.helion_health() {
                            st.helion_health.add(health);
                        }
                        for (engine, a) in report.helion_value_agreement() {
                            st.helion_values.entry(engine).or_default().add(a);
                        }
                        if let Some(k) = report.known_issue {
                            *st.known_issues.entry(k.to_string()).or_default() += 1;
                        }
                    }
                    if report.outcome.is_finding() {
                        file(&prepared, &report, seed, origin.as_deref());
                    } else if report.outcome == Outcome::Agree
                        && prepared.compiled().is_ok_and(|c| c.module().is_some())
                        && !cfg.jax.is_empty()
                        && !selector.offer_from(prepared, seed, origin, select::cells(&feats))
                    {
                        break;
                    }
                }
                // The last producer out closes the queues: on a stop what still waits is left,
                // counted as skipped; past the time budget up to `LAST_CASES` more per engine
                // confirm cells nothing confirmed yet; with a case budget everything is
                // confirmed.
                if producers_left.fetch_sub(1, Ordering::AcqRel) == 1 {
                    if stopped() {
                        selector.close(true);
                    } else if timed_out() {
                        selector.close_keeping_new(None, LAST_CASES);
                    } else {
                        selector.close(false);
                    }
                }
            }));
        }
        // JAX confirmers: each takes a batch of one engine's best-ranked cases.
        let mut confirmers = Vec::new();
        for _ in 0..if cfg.jax.is_empty() {
            0
        } else {
            cfg.jax_threads.max(1)
        } {
            confirmers.push(s.spawn(|| {
                let _stop = StopOnPanic {
                    panicked: &panicked,
                    selector: &selector,
                };
                while let Some((e, batch)) = selector.take(JAX_BATCH) {
                    if stopped() {
                        selector.give_back(e, &batch);
                        selector.close(true);
                        break;
                    }
                    if cfg.confirmation == Confirmation::Sample
                        && timed_out()
                        && !selector.close_keeping_new(Some((e, &batch)), LAST_CASES)
                    {
                        // The batch went back; what the close kept is taken next.
                        continue;
                    }
                    let engine = std::slice::from_ref(&cfg.jax[e]);
                    let prepared: Vec<&PreparedCase<'_>> =
                        batch.iter().map(|p| &p.prepared).collect();
                    let reports = check_prepared(&prepared, engine);
                    for (p, report) in batch.iter().zip(&reports) {
                        // A case two engines both disagree on moves out of `agree` once.
                        let moves = report.outcome != Outcome::Agree
                            && !p.reclassified.swap(true, Ordering::AcqRel);
                        {
                            let mut st = stats.lock().expect("stats lock");
                            st.record_confirmation(
                                cfg.jax[e].id(),
                                moves.then_some(report.outcome),
                                &p.prepared.features(),
                            );
                            if let Some(k) = report.known_issue {
                                *st.known_issues.entry(k.to_string()).or_default() += 1;
                            }
                        }
                        if report.outcome.is_finding() {
                            file(&p.prepared, report, p.seed, p.origin.as_deref());
                        }
                    }
                }
            }));
        }
        // Progress.
        let stats_ref = &stats;
        s.spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                finished.recv_timeout(Duration::from_millis(250))
            {
                let st = stats_ref.lock().expect("stats lock").clone();
                progress(&st, start.elapsed().as_secs_f64());
            }
        });
        // Producers stop first; confirmers then drain the queue and exit when it closes. A
        // thread that panicked has stopped the others; its panic goes on up, so the campaign
        // ends with it (exit 1 and the panic's message) instead of going on with fewer threads.
        let mut panic = None;
        for p in producers.into_iter().chain(confirmers) {
            if let Err(payload) = p.join() {
                panic.get_or_insert(payload);
            }
        }
        drop(done);
        if let Some(payload) = panic {
            std::panic::resume_unwind(payload);
        }
    });
    if let Some(e) = io_error.into_inner().expect("error lock") {
        return Err(e);
    }
    if let (Some(d), Some(path)) = (&digest, &cfg.digest) {
        d.write(path)?;
    }
    let mut stats = stats.into_inner().expect("stats lock");
    stats.confirm_cells = selector.cells_lowered() as u64;
    for (engine, sel) in cfg.jax.iter().zip(selector.selections()) {
        stats.jax_skipped += sel.skipped;
        stats
            .confirm_cells_by
            .insert(engine.id(), sel.cells_confirmed as u64);
        stats.confirm_cells_missing.insert(
            engine.id(),
            sel.cells_missing
                .iter()
                .take(stats::UNCONFIRMED_LISTED)
                .map(ToString::to_string)
                .collect(),
        );
    }
    Ok(Summary {
        stats,
        seconds: start.elapsed().as_secs_f64(),
    })
}
