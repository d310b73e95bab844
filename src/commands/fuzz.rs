//! `pallas-diff fuzz`: a campaign. With no arguments it runs the embedded default: two minutes,
//! the in-process engines on every core plus `pallas-tpu-interpret` and `pallas-tpu-lower`
//! confirming lowered cases, findings to `./findings`.

use super::check::start_pool;
use super::{CliError, Exit};
use compiler::compile::CodegenOptions;
use fuzz::campaign::{self, CampaignConfig};
use fuzz::engines;
use fuzz::generators::{GenConfig, GenConfigOverrides};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Arguments of `fuzz`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Stop after this long (`90`, `30s`, `2m`, `1h`). Default 2m unless --cases is given.
    #[arg(long, value_parser = parse_duration)]
    time: Option<Duration>,
    /// Stop after this many cases.
    #[arg(long)]
    cases: Option<u64>,
    /// In-process threads (default: the cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Engines: in-process ones (oracle, pallas-sim) check every case; JAX ones confirm lowered
    /// cases that agree in-process.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "oracle,pallas-sim,pallas-tpu-interpret,pallas-tpu-lower"
    )]
    engines: Vec<String>,
    /// Which lowered cases that agree in-process the JAX engines confirm: `sample` (as many as
    /// the JAX workers keep up with, the rest counted as skipped) or `every` (generation waits
    /// for JAX; with --cases N, every lowered case among N is confirmed).
    #[arg(long, value_enum, default_value_t = campaign::Confirmation::Sample)]
    confirm: campaign::Confirmation,
    /// Campaign seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Where findings go (one directory each).
    #[arg(long, default_value = "findings")]
    out: PathBuf,
    /// Print the final summary as one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Write every generated case as JSON into this directory (to check determinism).
    #[arg(long)]
    dump_cases: Option<PathBuf>,
    /// Generator config file (JSON, kebab-case keys); flags below override it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Do not reduce findings.
    #[arg(long)]
    no_reduce: bool,
    /// Seconds of reduction per new finding.
    #[arg(long, default_value_t = 60)]
    reduce_time: u64,
    /// Pad resident inputs with poison and mask with `jnp.where` (see compiler docs).
    #[arg(long)]
    poison_padding: bool,
    /// Inject named faults (historical defects, `all` for every one; see `pallas-diff hunt`).
    #[arg(long, value_parser = compiler::faults::FaultSet::parse, default_value = "")]
    inject: compiler::faults::FaultSet,
    /// Generator knobs.
    #[command(flatten)]
    generator: GenConfigOverrides,
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
    let generator = args
        .generator
        .clone()
        .or(file_overrides)
        .apply(GenConfig::default());
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let (in_names, jax_names): (Vec<String>, Vec<String>) = args
        .engines
        .iter()
        .cloned()
        .partition(|n| engines::IN_PROCESS.contains(&n.as_str()));
    for n in &args.engines {
        if !engines::ENGINE_NAMES.contains(&n.as_str()) {
            return Err(CliError::Input(anyhow::anyhow!(
                "unknown engine `{n}` (known: {})",
                engines::ENGINE_NAMES.join(", ")
            )));
        }
    }
    let jax_workers = if jax_names.is_empty() {
        0
    } else {
        cores.min(2)
    };
    let pool = start_pool(&jax_names, jax_workers.max(1), 120)?;
    let in_process = engines::build(&in_names, None).map_err(|e| CliError::Input(e.into()))?;
    let jax = engines::build(&jax_names, pool.clone()).map_err(|e| CliError::Input(e.into()))?;
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
        },
        dump_cases: args.dump_cases.clone(),
    };
    let reduce = if args.no_reduce {
        None
    } else {
        // The reducer runs the engine a finding names: build a private set (sharing the pool).
        let names: Vec<String> = args.engines.clone();
        let engines =
            engines::build(&names, pool.clone()).map_err(|e| CliError::Input(e.into()))?;
        Some(corpus::sink::ReduceOptions {
            budget: corpus::reduce::Budget {
                attempts: 5_000,
                time: Duration::from_secs(args.reduce_time),
            },
            engines: corpus::minimize::shared(engines),
            jobs: jax_workers.max(1),
        })
    };
    let versions = corpus::finding::Versions::from(pool.as_ref().map(|p| p.availability()));
    // New in-process findings are re-run on the JAX engines before they are written, so a
    // pallas-sim bug is not filed as a miscompile (meta.json `cross_check`).
    // Only engines with outputs can reproduce a value mismatch (not `pallas-tpu-lower`).
    let output_engines: Vec<String> = jax_names
        .iter()
        .filter(|n| {
            n.parse::<tpu_runner::Mode>()
                .is_ok_and(|m| m.produces_outputs())
        })
        .cloned()
        .collect();
    let cross_check =
        engines::build(&output_engines, pool.clone()).map_err(|e| CliError::Input(e.into()))?;
    let sink = corpus::sink::CorpusSink::open(&args.out, cfg.codegen, reduce, versions)
        .map_err(|e| {
            CliError::Internal(anyhow::anyhow!(
                "cannot open findings directory '{}': {e}",
                args.out.display()
            ))
        })?
        .with_cross_check(corpus::minimize::shared(cross_check));
    let stop = STOP
        .get_or_init(|| Arc::new(AtomicBool::new(false)))
        .clone();
    {
        let stop = stop.clone();
        // Ctrl-C stops generation; findings already filed stay on disk (they are written
        // atomically), and the summary still prints.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::Relaxed));
    }
    let tty = std::io::stderr().is_terminal();
    let last = std::sync::Mutex::new(0u64);
    let progress = |st: &fuzz::campaign::stats::Stats, secs: f64| {
        let mut last = last.lock().expect("progress lock");
        let tick = (secs * 4.0) as u64;
        if tty {
            eprint!("\r{}", st.progress_line(secs));
        } else if tick / 40 != *last / 40 {
            eprintln!("{}", st.progress_line(secs));
        }
        *last = tick;
    };
    let summary = campaign::run(&cfg, &sink, &stop, &progress)
        .map_err(|e| CliError::Internal(anyhow::anyhow!("campaign I/O failed: {e}")))?;
    if tty {
        eprintln!();
    }
    if args.json {
        let json = serde_json::json!({
            "cases": summary.stats.cases,
            "seconds": summary.seconds,
            "outcomes": summary.stats.outcomes,
            "findings": summary.stats.findings,
            "duplicates": summary.stats.duplicates,
            "jax_not_reproduced": sink.not_reproduced(),
            "jax_confirmed": summary.stats.jax_confirmed,
            "jax_skipped": summary.stats.jax_skipped,
            "known_issues": summary.stats.known_issues,
            "coverage": summary.stats.coverage,
            "out": args.out,
        });
        println!(
            "{}",
            serde_json::to_string(&json).map_err(anyhow::Error::from)?
        );
    } else {
        print!("{}", summary.stats.table(summary.seconds));
        if sink.not_reproduced() > 0 {
            println!(
                "{} new in-process finding(s) NOT reproduced by the JAX engines (meta.json `cross_check`)",
                sink.not_reproduced()
            );
        }
        println!("findings in {}", args.out.display());
    }
    Ok(if summary.stats.findings + summary.stats.duplicates > 0 {
        Exit::Finding
    } else {
        Exit::Ok
    })
}
