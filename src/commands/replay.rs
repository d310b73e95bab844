//! `pallas-diff replay [DIR] [--engines a,b] [--bless] [--junit FILE]`: replay the regression corpus, one trial
//! per entry × engine (`<engine>/<id>-<slug>`), or a findings directory, one trial per finding
//! (`<engine>/<dir>`: does its recorded signature still hold?), `--jobs` at a time on a rayon
//! pool of that many threads (a local pool, not the global one, so `--jobs` means what it says)
//! over a pool of JAX workers.
//!
//! Nothing passes silently: a missing or empty directory, a selection (`--filter`, `--engines`)
//! that leaves no trial, and a run whose every trial was ignored are invalid input (exit 2)
//! saying which; every ignored trial prints its reason. A corrupt corpus or finding file is
//! invalid input naming the file, line and column; a failing trial exits 3; `--bless` records
//! what happens now in the corpus entries and prints every change. `--junit` writes the trials
//! as JUnit XML ([`corpus::junit`]) for a CI system's test report.
//!
//! Fix verification: every trial of a Helion bug (a Helion finding, or a corpus entry expecting
//! a finding or known issue of a Helion engine) also says what the bug is on the Helion build
//! that ran (`--helion-build`, default the pinned release): still present, fixed (the reference's
//! values or a documented refusal now) or changed (another symptom), judged as `bisect` judges a
//! build ([`finding::regression::FixState`]); the summary counts them and `--junit` shows them.
//! The exit code stays the replay's: a fixed or changed Helion bug no longer reproduces as
//! recorded, so its trial fails (exit 3).

use super::check::start_pools;
use super::{CliError, Exit};
use anyhow::Context;
use corpus::entry::{Corpus, default_dir};
use corpus::replay::{
    LoadedFinding, Replayed, Source, TrialResult, Update, bless, check_reference, open_source,
    replay_engine_verified, replay_finding_verified, trials,
};
use finding::regression::FixState;
use fuzz::engines::{self, Engine, EngineId};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tpu_runner::Mode;

/// The engines a corpus replays when `--engines` is not given.
const CORPUS_ENGINES: [EngineId; 4] = [
    EngineId::Worker(Mode::PallasInterpret),
    EngineId::Worker(Mode::PallasTpuInterpret),
    EngineId::Worker(Mode::PallasTpuLower),
    EngineId::Worker(Mode::PallasTpu),
];

/// Arguments of `replay`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A corpus directory (default: this workspace's `corpus/cases`), a findings directory
    /// (`pallas-diff fuzz --out`), or one finding directory.
    dir: Option<PathBuf>,
    /// Engines to replay besides the reference trial (`oracle`, always run): any engine
    /// `check` takes, `pallas-sim` included. Default for a corpus: pallas-interpret,
    /// pallas-tpu-interpret, pallas-tpu-lower, pallas-tpu. For findings: each finding's own
    /// engine; given, only the findings those engines saw replay.
    #[arg(long, value_delimiter = ',')]
    engines: Option<Vec<EngineId>>,
    /// Rewrite the expectations of failing corpus trials to what happens now, and print the
    /// changes (a corpus only: a finding's expectation is what it recorded).
    #[arg(long)]
    bless: bool,
    /// Trials run at once; the JAX pool has this many workers (at most 2).
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Only trials whose name contains this.
    #[arg(long)]
    filter: Option<String>,
    /// Seconds before a JAX engine is declared hung.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
    /// Also write the results as JUnit XML to this file (one test case per trial; an ignored
    /// trial is skipped with its reason).
    #[arg(long)]
    junit: Option<PathBuf>,
}

/// An engine, or why it cannot run here.
type EngineOrReason = Result<Arc<dyn Engine>, String>;

fn input(e: impl Into<anyhow::Error>) -> CliError {
    CliError::Input(e.into())
}

/// The engines of a replay, and the Helion build its Helion engines run (when one does).
struct Built {
    engines: BTreeMap<EngineId, EngineOrReason>,
    helion_build: Option<tpu_runner::BuildIdentity>,
}

/// Builds every engine of `ids` (the reference excluded: its trials need none), or the reason
/// it cannot run here. JAX engines share one pool, started only when one is named.
fn build_engines(ids: &[EngineId], jobs: usize, timeout: u64) -> Result<Built, CliError> {
    let ids: Vec<EngineId> = ids
        .iter()
        .copied()
        .filter(|e| *e != EngineId::Reference)
        .collect();
    let pools = start_pools(&ids, jobs.clamp(1, 2), timeout)?;
    let mut out = BTreeMap::new();
    for id in ids {
        let engine = match engines::build_with(&[id], &pools) {
            Ok(mut built) => match (&pools.jax, id) {
                // Known before any trial: one reason per trial instead of a run each.
                (Some(p), EngineId::Worker(tpu_runner::Mode::PallasTpu))
                    if !p.availability().tpu =>
                {
                    Err(format!(
                        "no TPU here (jax.devices() = {:?})",
                        p.availability().devices
                    ))
                }
                (_, EngineId::Worker(mode))
                    if let Some(why) = pools
                        .helion
                        .as_ref()
                        .and_then(|p| p.availability().mode_unavailable(mode)) =>
                {
                    Err(why.to_owned())
                }
                _ => Ok(Arc::from(built.remove(0))),
            },
            Err(e) => Err(e.to_string()),
        };
        out.insert(id, engine);
    }
    Ok(Built {
        engines: out,
        helion_build: pools
            .helion
            .as_ref()
            .and_then(|p| p.availability().helion_build.clone()),
    })
}

/// Runs the trials `names` on a pool of `jobs` threads, printing one line per trial as it ends
/// (an ignored trial with its reason); the results in trial order, each with how long it ran.
/// A panicking trial is a harness bug: the pool re-raises it here.
fn run_trials(
    names: &[String],
    jobs: usize,
    run: impl Fn(usize) -> Replayed + Sync,
) -> Result<Vec<(Replayed, Duration)>, CliError> {
    let pool = super::thread_pool(jobs, "replay")?;
    Ok(pool.install(|| {
        names
            .par_iter()
            .enumerate()
            // One task per trial: a trial blocks on a JAX worker for most of its time, so a
            // thread must not hold a run of trials while another one idles.
            .with_max_len(1)
            .map(|(i, name)| {
                let started = Instant::now();
                let result = run(i);
                let took = started.elapsed();
                let fix = result
                    .fix
                    .as_ref()
                    .map(|f| format!(" [{f}]"))
                    .unwrap_or_default();
                match &result.result {
                    TrialResult::Pass => println!("ok       {name}{fix}"),
                    TrialResult::Ignored(why) => println!("ignored  {name}: {why}"),
                    TrialResult::Fail { .. } => println!("FAILED   {name}{fix}"),
                }
                (result, took)
            })
            .collect()
    }))
}

/// Keeps the trials whose name contains `filter`; none left is an error naming the filter.
fn apply_filter<T>(
    items: &mut Vec<T>,
    name: impl Fn(&T) -> String,
    filter: Option<&str>,
    dir: &Path,
) -> Result<(), CliError> {
    let Some(f) = filter else { return Ok(()) };
    let before = items.len();
    let example = items.first().map(&name).unwrap_or_default();
    items.retain(|t| name(t).contains(f));
    if items.is_empty() {
        return Err(input(anyhow::anyhow!(
            "--filter `{f}` matches none of the {before} trial(s) of {} (names look like `{example}`)",
            dir.display()
        )));
    }
    Ok(())
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let dir = args.dir.clone().unwrap_or_else(default_dir);
    match open_source(&dir).map_err(input)? {
        Source::Corpus(corpus) => replay_corpus(&args, &dir, &corpus),
        Source::Findings(findings) => replay_findings(&args, &dir, findings),
    }
}

fn replay_corpus(args: &Args, dir: &Path, corpus: &Corpus) -> Result<Exit, CliError> {
    let ids: Vec<EngineId> = args
        .engines
        .clone()
        .unwrap_or_else(|| CORPUS_ENGINES.to_vec());
    let mut specs = trials(corpus, &ids);
    apply_filter(&mut specs, |t| t.name.clone(), args.filter.as_deref(), dir)?;
    // Only engines some selected trial needs: a filter on one engine starts no JAX for others.
    let needed: Vec<EngineId> = ids
        .iter()
        .copied()
        .filter(|e| specs.iter().any(|t| t.engine == *e))
        .collect();
    let built = build_engines(&needed, args.jobs, args.timeout)?;
    let engines = &built.engines;
    let start = Instant::now();
    let trial_names: Vec<String> = specs.iter().map(|t| t.name.clone()).collect();
    let results = run_trials(&trial_names, args.jobs, |i| {
        let spec = &specs[i];
        let loaded = &corpus.entries[spec.entry];
        if spec.engine == EngineId::Reference {
            return check_reference(loaded).into();
        }
        match engines.get(&spec.engine) {
            Some(Ok(e)) => replay_engine_verified(&loaded.entry, e),
            Some(Err(why)) => TrialResult::Ignored(why.clone()).into(),
            None => TrialResult::Ignored(format!("{} was not built", spec.engine)).into(),
        }
    })?;
    let mut updates: Vec<(PathBuf, Update)> = Vec::new();
    for (spec, (r, _)) in specs.iter().zip(&results) {
        if let TrialResult::Fail {
            message,
            updates: u,
        } = &r.result
        {
            if !args.bless {
                println!("\n---- {} ----\n{message}", spec.name);
            }
            let path = corpus.entries[spec.entry].path.clone();
            updates.extend(u.iter().cloned().map(|x| (path.clone(), x)));
        }
    }
    let exit = finish(
        args,
        dir,
        &trial_names,
        &results,
        start,
        built.helion_build.as_ref(),
    )?;
    if args.bless {
        let changes = bless(&updates).context("bless failed")?;
        if changes.is_empty() {
            println!("bless: nothing to change");
        } else {
            println!("bless: {} change(s):", changes.len());
            for c in changes {
                println!("  {c}");
            }
        }
    }
    Ok(exit)
}

fn replay_findings(
    args: &Args,
    dir: &Path,
    mut findings: Vec<LoadedFinding>,
) -> Result<Exit, CliError> {
    if args.bless {
        return Err(input(anyhow::anyhow!(
            "{}: --bless rewrites corpus entries; a finding's expectation is what its meta.json recorded (promote one with `pallas-diff corpus add FINDING`)",
            dir.display()
        )));
    }
    if let Some(selected) = &args.engines {
        let selected_names = selected
            .iter()
            .map(|e| e.name())
            .collect::<Vec<_>>()
            .join(",");
        let before = findings.len();
        let mut seen: Vec<String> = findings
            .iter()
            .map(|f| f.engine().unwrap_or(EngineId::Reference).to_string())
            .collect();
        seen.sort();
        seen.dedup();
        // A finding no engine decided (a compiler crash) replays whatever the selection.
        findings.retain(|f| f.engine().is_none_or(|e| selected.contains(&e)));
        if findings.is_empty() {
            return Err(input(anyhow::anyhow!(
                "none of the {before} finding(s) in {} was seen by --engines {} (they were seen by {})",
                dir.display(),
                selected_names,
                seen.join(", ")
            )));
        }
        if findings.len() < before {
            println!(
                "not replayed: {} finding(s) of engines not in --engines {}",
                before - findings.len(),
                selected_names
            );
        }
    }
    apply_filter(
        &mut findings,
        LoadedFinding::trial_name,
        args.filter.as_deref(),
        dir,
    )?;
    let mut needed: Vec<EngineId> = findings.iter().filter_map(|f| f.engine()).collect();
    needed.sort();
    needed.dedup();
    // A finding naming an engine this build does not have failed to load (its `meta.json`).
    let built = build_engines(&needed, args.jobs, args.timeout)?;
    let engines = &built.engines;
    let start = Instant::now();
    let trial_names: Vec<String> = findings.iter().map(LoadedFinding::trial_name).collect();
    let results = run_trials(&trial_names, args.jobs, |i| {
        let f = &findings[i];
        match f.engine() {
            None => replay_finding_verified(f, None),
            Some(id) => match engines.get(&id) {
                Some(Ok(e)) => replay_finding_verified(f, Some(e)),
                Some(Err(why)) => TrialResult::Ignored(why.clone()).into(),
                None => TrialResult::Ignored(format!("{id} was not built")).into(),
            },
        }
    })?;
    for (name, (r, _)) in trial_names.iter().zip(&results) {
        if let TrialResult::Fail { message, .. } = &r.result {
            println!("\n---- {name} ----\n{message}");
        }
    }
    finish(
        args,
        dir,
        &trial_names,
        &results,
        start,
        built.helion_build.as_ref(),
    )
}

/// Prints the summary line and writes `--junit`; the exit code: 3 when a trial failed (0 under
/// bless, which records it); an error when every trial was ignored, since then nothing was
/// checked.
fn finish(
    args: &Args,
    dir: &Path,
    names: &[String],
    timed: &[(Replayed, Duration)],
    start: Instant,
    helion_build: Option<&tpu_runner::BuildIdentity>,
) -> Result<Exit, CliError> {
    let build = helion_build.map(ToString::to_string);
    if let Some(path) = &args.junit {
        let trials: Vec<corpus::junit::Trial> = names
            .iter()
            .zip(timed)
            .map(|(name, (r, time))| corpus::junit::Trial {
                name,
                result: &r.result,
                time: *time,
                fix: r.fix.as_ref(),
            })
            .collect();
        let report = corpus::junit::replay_report(dir, &trials, start.elapsed(), build.as_deref());
        corpus::junit::write(&report, path).context("cannot write the JUnit report")?;
    }
    let bless = args.bless;
    let results: Vec<TrialResult> = timed.iter().map(|(r, _)| r.result.clone()).collect();
    let named: Vec<(String, TrialResult)> = names.iter().cloned().zip(results.clone()).collect();
    println!(
        "\nreplay of {}: {} in {:.1}s",
        dir.display(),
        corpus::replay::summary(&named),
        start.elapsed().as_secs_f64()
    );
    let fixes: Vec<&FixState> = timed.iter().filter_map(|(r, _)| r.fix.as_ref()).collect();
    if !fixes.is_empty() {
        println!(
            "helion bugs on {}: {}",
            build.as_deref().unwrap_or("the Helion build"),
            fix_counts(&fixes)
        );
    }
    if results.iter().all(|r| matches!(r, TrialResult::Ignored(_))) {
        return Err(input(anyhow::anyhow!(
            "every one of the {} trial(s) was ignored (reasons above): nothing was checked",
            results.len()
        )));
    }
    let failed = results
        .iter()
        .any(|r| matches!(r, TrialResult::Fail { .. }));
    Ok(if failed && !bless {
        Exit::Finding
    } else {
        Exit::Ok
    })
}

/// `N still-present, M fixed, K changed`.
fn fix_counts(fixes: &[&FixState]) -> String {
    let count = |name: &str| fixes.iter().filter(|f| f.name() == name).count();
    format!(
        "{} still-present, {} fixed, {} changed",
        count("still-present"),
        count("fixed"),
        count("changed")
    )
}
