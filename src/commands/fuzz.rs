//! `pallas-diff fuzz`: a campaign. With no arguments it runs the embedded default: two minutes,
//! the in-process engines on every core plus `pallas-tpu-interpret` and `pallas-tpu-lower`
//! confirming lowered cases, findings to `./findings`. The Helion engines, when named, run on
//! every case (at Helion's pace, ~0.2 s a case per worker).

use super::check::{PoolSizes, select_engines};
use super::{CliError, Exit};
use anyhow::Context;
use compiler::compile::CodegenOptions;
use fuzz::campaign::assembly;
use fuzz::campaign::{self, CampaignConfig};
use fuzz::engines::{self, EngineId};
use fuzz::generators::{GenConfig, GenConfigOverrides};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Arguments of `fuzz`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Stop after this long: seconds (`90`), or with a unit (`30s`, `2m`, `1h`). Default 2m
    /// unless --cases is given.
    #[arg(long, value_parser = parse_duration)]
    time: Option<Duration>,
    /// Stop after this many cases.
    #[arg(long)]
    cases: Option<u64>,
    /// In-process threads (default: the cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Engines: in-process ones (oracle, pallas-sim) and the real-Helion ones (helion-pallas,
    /// helion-eager, helion-tpu-lower) check every case; JAX ones (pallas-*) confirm lowered
    /// cases that agree on that check.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "oracle,pallas-sim,pallas-tpu-interpret,pallas-tpu-lower"
    )]
    engines: Vec<EngineId>,
    /// Which lowered cases that agree in-process the JAX engines confirm: `sample` (as many as
    /// the JAX workers keep up with, the rest counted as skipped) or `every` (generation waits
    /// for JAX; with --cases N, every lowered case among N is confirmed).
    #[arg(long, value_enum, default_value_t = campaign::Confirmation::Sample)]
    confirm: campaign::Confirmation,
    /// Campaign seed: a number, or `random` for a fresh one (printed either way, so any
    /// campaign can be repeated).
    #[arg(long, default_value = "0", value_parser = parse_seed)]
    seed: u64,
    /// Run without the engines that cannot run here (no JAX, no TPU, no Helion) instead of
    /// failing; the summary says which never ran.
    #[arg(long)]
    allow_unavailable: bool,
    /// Where findings go (one directory each).
    #[arg(long, default_value = "findings")]
    out: PathBuf,
    /// Print the final summary as one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Write every generated case as JSON into this directory (to check determinism).
    #[arg(long)]
    dump_cases: Option<PathBuf>,
    /// Write one line per case (index, seed, outcome, verdict, a hash of every engine's status
    /// and output bits; `fuzz/src/campaign/digest.rs`) into this file: two runs with the same
    /// seed and budget behave identically when their digests are equal.
    #[arg(long)]
    digest: Option<PathBuf>,
    /// Generator config file (JSON, kebab-case keys); flags below override it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Do not reduce findings.
    #[arg(long)]
    no_reduce: bool,
    /// Seconds of reduction per new finding.
    #[arg(long, default_value_t = 60)]
    reduce_time: u64,
    /// Do not compute the regression range of each new Helion finding. With more than one
    /// Helion build installed (`probe` lists them), the campaign runs each new Helion finding's
    /// case on every installed build after generation stops, as `bisect` does, and keeps the
    /// range in its `meta.json` (`regression`): one Helion worker start per build and one run
    /// per build and finding (measured on 2 cores at load ~21: 164 s for 3 findings on 5
    /// builds; 534 s when each run started its own worker).
    #[arg(long)]
    no_ranges: bool,
    /// Pad resident inputs with poison and mask with `jnp.where` (see compiler docs).
    #[arg(long)]
    poison_padding: bool,
    /// Inject named faults (historical defects, `all` for every one; see `pallas-diff hunt`).
    #[arg(long, value_parser = compiler::faults::FaultSet::parse, default_value = "")]
    inject: compiler::faults::FaultSet,
    /// Seed case scripts (a directory of `.py`/`.json` cases: the corpus's real-style kernels,
    /// `pallas-diff import`'s output): `--seed-percent` of the cases (50 unless given) are
    /// mutants of them that keep the kernel valid, the rest the grammar's; a finding names its
    /// seed kernel.
    #[arg(long)]
    seeds: Option<PathBuf>,
    /// Generator knobs.
    #[command(flatten)]
    generator: GenConfigOverrides,
}

/// Parses a seed: an unsigned integer, or `random` (from the clock and the process id).
pub fn parse_seed(s: &str) -> Result<u64, String> {
    if s == "random" {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        return Ok(fuzz::campaign::case_seed(
            nanos,
            u64::from(std::process::id()),
        ));
    }
    s.parse()
        .map_err(|_| format!("`{s}` is not a seed (an unsigned integer, or `random`)"))
}

/// Parses `90`, `30s`, `2m`, `1h`, `500ms`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = s.split_at(
        s.find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(s.len()),
    );
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (e.g. 30s, 2m, 1h)"))?;
    let secs = match unit {
        "" | "s" => v,
        "ms" => v / 1000.0,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        _ => return Err(format!("`{s}`: unknown unit `{unit}` (ms, s, m, h)")),
    };
    Ok(Duration::from_secs_f64(secs))
}

static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

pub fn run(args: Args) -> Result<Exit, CliError> {
    let file_overrides: GenConfigOverrides = match &args.config {
        None => GenConfigOverrides::default(),
        Some(p) => {
            let text = super::read_file(p)?;
            serde_json::from_str(&text).map_err(|e| {
                CliError::Input(anyhow::anyhow!(
                    "{}:{}:{}: not a generator config: {e}",
                    p.display(),
                    e.line(),
                    e.column()
                ))
            })?
        }
    };
    let mut overrides = args.generator.clone().or(file_overrides);
    let seeds = match &args.seeds {
        None => None,
        Some(dir) => {
            let (seeds, refused) = fuzz::generators::seeded::Seeds::load_dir(dir)
                .map_err(|e| CliError::Input(e.into()))?;
            for r in &refused {
                eprintln!(
                    "pallas-diff: seed not used: {}: {}",
                    r.path.display(),
                    r.reason
                );
            }
            if seeds.is_empty() {
                return Err(CliError::Input(anyhow::anyhow!(
                    "--seeds {}: no seed case parses and is admissible ({} refused)",
                    dir.display(),
                    refused.len()
                )));
            }
            eprintln!(
                "pallas-diff: {} seed(s) from {} ({} not used)",
                seeds.seeds.len(),
                dir.display(),
                refused.len()
            );
            overrides.seed_percent.get_or_insert(50);
            Some(seeds)
        }
    };
    let generator = overrides.apply(GenConfig::default());
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let workers = assembly::workers(cores);
    let selected = select_engines(
        &args.engines,
        PoolSizes {
            jax: workers,
            helion: workers,
            timeout: assembly::WORKER_TIMEOUT_S,
        },
        args.allow_unavailable,
    )?;
    let pool = selected.pools.jax.clone();
    let roles = assembly::Roles::of(&selected.ids);
    let jax_workers = roles.confirm_threads(cores);
    let in_process = engines::build_with(&roles.every_case, &selected.pools)
        .map_err(|e| CliError::Input(e.into()))?;
    let jax = engines::build_with(&roles.confirm, &selected.pools)
        .map_err(|e| CliError::Input(e.into()))?;
    eprintln!(
        "pallas-diff: campaign seed {} (repeat it with --seed {})",
        args.seed, args.seed
    );
    let time = args.time.or(if args.cases.is_some() {
        None
    } else {
        Some(Duration::from_secs(120))
    });
    let cfg = CampaignConfig {
        time,
        cases: args.cases,
        jobs: args.jobs.unwrap_or(cores),
        seed: args.seed,
        in_process,
        jax,
        jax_threads: jax_workers,
        confirmation: args.confirm,
        generator,
        codegen: CodegenOptions {
            poison_padding: args.poison_padding,
            faults: args.inject,
            plain: compiler::decisions::PlainSet::NONE,
        },
        dump_cases: args.dump_cases.clone(),
        digest: args.digest.clone(),
        seeds,
    };
    let reduce = if args.no_reduce {
        None
    } else {
        // The reducer runs the engine a finding names: build a private set (sharing the pools).
        let engines = engines::build_with(&selected.ids, &selected.pools)
            .map_err(|e| CliError::Input(e.into()))?;
        Some(finding::sink::ReduceOptions {
            budget: reducer::Budget {
                attempts: 5_000,
                time: Duration::from_secs(args.reduce_time),
            },
            engines: finding::minimize::shared(engines),
            jobs: jax_workers.max(1),
        })
    };
    let helion_versions = selected
        .pools
        .helion
        .as_ref()
        .map(|p| p.availability().clone());
    // Findings and the shard contract name the Helion build that ran, whether or not a JAX
    // engine ran beside it (a Helion-only campaign's reports printed `helion -` before).
    let versions = finding::finding::Versions::from(pool.as_ref().map(|p| p.availability()))
        .with_helion(helion_versions.as_ref());
    let contract_versions = versions.clone();
    // New in-process findings are re-run on the JAX engines before they are written, so a
    // pallas-sim bug is not filed as a miscompile (meta.json `cross_check`).
    let cross_check =
        engines::build(&roles.cross_check, pool.clone()).map_err(|e| CliError::Input(e.into()))?;
    let sink = finding::sink::CorpusSink::open(&args.out, cfg.codegen, reduce, versions)
        .map_err(|e| {
            CliError::Internal(anyhow::anyhow!("cannot open the findings directory: {e}"))
        })?
        .with_cross_check(finding::minimize::shared(cross_check));
    // The shard contract, for `pallas-diff merge`: recorded before the first case, finished
    // with the case count at the end.
    let contract = finding::shard::Contract::new(
        &cfg.generator,
        &selected.ids,
        &cfg.codegen,
        contract_versions,
    );
    let shard = finding::shard::ShardRun::begin(&args.out, contract, args.seed)
        .context("cannot record the shard contract")?;
    let stop = STOP
        .get_or_init(|| Arc::new(AtomicBool::new(false)))
        .clone();
    {
        let stop = stop.clone();
        // Ctrl-C stops generation; findings already filed stay on disk (they are written
        // atomically), and the summary still prints.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::Relaxed));
    }
    let display = super::progress::Progress::new(
        super::progress::Budget {
            time: cfg.time,
            cases: cfg.cases,
        },
        std::io::stderr().is_terminal(),
    );
    let series = fuzz::campaign::record::Series::default();
    let progress = |st: &fuzz::campaign::stats::Stats, secs: f64| {
        display.update(st, secs);
        series.observe(st, secs);
    };
    let summary = campaign::run(&cfg, &sink, &stop, &progress)
        .map_err(|e| CliError::Internal(anyhow::anyhow!("campaign I/O failed: {e}")))?;
    display.finish();
    // The findings are on disk already: a record that cannot be finished must not lose the
    // summary; `merge` treats the run's range as open.
    if let Err(e) = shard.finish(summary.stats.cases) {
        eprintln!("pallas-diff: cannot record the shard's case count: {e}");
    }
    let interrupted = stop.load(Ordering::Relaxed);
    let new_findings = sink.new_findings();
    let ranges = if args.no_ranges || interrupted {
        Vec::new()
    } else {
        regression_ranges(&new_findings)
    };
    let samples = series.finish(&summary.stats, summary.seconds);
    {
        use fuzz::campaign::record::{
            CampaignRecord, HelionAgreementRecord, HelionVersions, STATS_FILE, STATS_FORMAT,
            Unavailable,
        };
        // One layout for `--json` and `stats.json` (which adds the series), the one `merge`
        // and `dashboard` read.
        let mut record = CampaignRecord {
            format: STATS_FORMAT,
            seed: Some(args.seed),
            interrupted,
            engines: selected.ids.clone(),
            engines_unavailable: selected
                .unavailable
                .iter()
                .map(|(engine, reason)| Unavailable {
                    engine: *engine,
                    reason: reason.clone(),
                })
                .collect(),
            helion: helion_versions.as_ref().map(|a| HelionVersions {
                helion: a.helion.clone(),
                torch: a.torch.clone(),
                jax: Some(a.jax_version.clone()),
            }),
            seconds: summary.seconds,
            jax_not_reproduced: sink.not_reproduced(),
            new_findings: new_findings.clone(),
            out: Some(args.out.clone()),
            helion_verdict_agreement: HelionAgreementRecord::of(&summary.stats),
            stats: summary.stats.clone(),
            series: Vec::new(),
            shards: Vec::new(),
            stats_missing: Vec::new(),
        };
        if args.json {
            let text = serde_json::to_string(&record).map_err(anyhow::Error::from)?;
            println!("{text}");
        }
        record.series = samples;
        let path = args.out.join(STATS_FILE);
        let text = serde_json::to_string(&record).map_err(anyhow::Error::from)?;
        if let Err(e) = finding::fsio::write_atomic(&path, text.as_bytes()) {
            eprintln!("pallas-diff: cannot write the campaign record: {e}");
        }
    }
    if !args.json {
        println!("seed {}", args.seed);
        if interrupted {
            println!("interrupted after {} cases", summary.stats.cases);
        }
        for (n, why) in &selected.unavailable {
            println!("engine {n} never ran: {why}");
        }
        if let Some(a) = &helion_versions {
            println!(
                "helion {} torch {} jax {}{}",
                a.helion.as_deref().unwrap_or("?"),
                a.torch.as_deref().unwrap_or("?"),
                a.jax_version,
                a.helion_build
                    .as_ref()
                    .map(|b| format!(
                        " (build {b}; verdict agreement below is our {} model vs this build)",
                        compiler::HELION_VERSION
                    ))
                    .unwrap_or_default()
            );
        }
        print!("{}", summary.stats.table(summary.seconds));
        if sink.not_reproduced() > 0 {
            println!(
                "{} new in-process finding(s) NOT reproduced by the JAX engines (meta.json `cross_check`)",
                sink.not_reproduced()
            );
        }
        if !new_findings.is_empty() {
            println!("\nnew findings ({}):", new_findings.len());
            for f in &new_findings {
                println!(
                    "  {}  {} {}  {}  {}",
                    f.dir.display(),
                    f.outcome,
                    f.engine.map_or("-", |e| e.name()),
                    f.signature,
                    match &f.not_reduced {
                        None => "reduced".to_string(),
                        Some(why) => format!("not reduced: {why}"),
                    }
                );
                if let Some((_, range)) = ranges.iter().find(|(d, _)| *d == f.dir) {
                    println!("      regression range: {range}");
                }
            }
        }
        println!("findings in {}", args.out.display());
        if !selected.ids.iter().any(|e| e.is_helion()) {
            println!(
                "real Helion never ran: `pallas-diff provision --helion` (~6 GB, once), then --engines oracle,pallas-sim,helion-pallas,helion-eager,helion-tpu-lower checks every case against Helion {} too (--helion-build SPEC for another build)",
                tpu_runner::DEFAULT_HELION_VERSION
            );
        }
    }
    // A CI job's summary page (GitHub Actions); losing it must not change the campaign's exit.
    if let Err(e) = finding::step_summary::append_if_set(&finding::step_summary::Campaign {
        seed: args.seed,
        engines: &selected.ids,
        unavailable: &selected.unavailable,
        summary: &summary,
        new_findings: &new_findings,
        not_reproduced: sink.not_reproduced(),
        interrupted,
        out: &args.out,
    }) {
        eprintln!("pallas-diff: cannot write the job summary: {e}");
    }
    if interrupted {
        eprintln!(
            "pallas-diff: interrupted after {} cases",
            summary.stats.cases
        );
        return Ok(Exit::Interrupted);
    }
    Ok(if summary.stats.findings + summary.stats.duplicates > 0 {
        Exit::Finding
    } else {
        Exit::Ok
    })
}

/// The regression range of each new Helion finding across the installed Helion builds, when
/// more than one is installed ([`finding::regression::range_of_finding`]), kept in its
/// `meta.json`; each finding's directory and its range's one line. A finding whose range
/// cannot be computed keeps none, with the reason on stderr (the campaign's findings stand).
fn regression_ranges(new: &[finding::sink::NewFinding]) -> Vec<(PathBuf, String)> {
    let helion: Vec<&finding::sink::NewFinding> = new
        .iter()
        .filter(|f| f.engine.is_some_and(|e| e.is_helion()))
        .collect();
    if helion.is_empty() {
        return Vec::new();
    }
    let builds = match tpu_runner::builds::installed(&super::builds::dir()) {
        Ok(b) if b.len() > 1 => b,
        Ok(_) => return Vec::new(),
        Err(e) => {
            eprintln!("pallas-diff: no regression ranges: {e}");
            return Vec::new();
        }
    };
    let Ok(python) = tpu_runner::helion_python_if_present() else {
        return Vec::new();
    };
    let started = std::time::Instant::now();
    eprintln!(
        "pallas-diff: regression ranges of {} new Helion finding(s) across {} builds ({}; --no-ranges skips)",
        helion.len(),
        builds.len(),
        builds
            .iter()
            .map(|b| b.id().to_owned())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut loaded = Vec::new();
    for f in helion {
        match super::report::load_finding(&f.dir) {
            Ok(x) => loaded.push((f.dir.clone(), x)),
            Err(e) => eprintln!(
                "pallas-diff: no regression range for {}: {e}",
                f.dir.display()
            ),
        }
    }
    let findings: Vec<&finding::finding::Finding> = loaded.iter().map(|(_, f)| f).collect();
    let timeout = Duration::from_secs(120);
    let ranges = finding::regression::ranges_of_findings(&findings, &builds, &python, timeout);
    let mut out = Vec::new();
    for ((dir, mut finding), range) in loaded.into_iter().zip(ranges) {
        match range {
            Some(Ok(record)) => {
                let line = record.summary();
                match super::bisect::keep_range(&dir, &mut finding, record) {
                    Ok(()) => out.push((dir, line)),
                    Err(e) => eprintln!("pallas-diff: {}: {e}", dir.display()),
                }
            }
            Some(Err(e)) => eprintln!(
                "pallas-diff: no regression range for {}: {e}",
                dir.display()
            ),
            None => {}
        }
    }
    eprintln!(
        "pallas-diff: regression ranges took {:.1}s",
        started.elapsed().as_secs_f64()
    );
    out
}
