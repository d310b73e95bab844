//! `pallas-diff replay [DIR] [--engines a,b] [--bless]`: replay the regression corpus, one trial
//! per entry × engine (`<engine>/<id>-<slug>`), in parallel threads over a pool of JAX workers.
//! A corrupt corpus file is invalid input (exit 2) naming the file, line and column; a failing
//! trial exits 3; `--bless` records what happens now in the entries and prints every change.

use super::check::start_pool;
use super::{CliError, Exit};
use anyhow::Context;
use corpus::entry::{Corpus, default_dir};
use corpus::replay::{ORACLE, TrialResult, Update, bless, check_reference, replay_engine, trials};
use fuzz::engines::Engine;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Arguments of `replay`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The corpus directory (default: this workspace's `corpus/cases`).
    dir: Option<PathBuf>,
    /// JAX engines to replay besides the reference trial (`oracle`, always run).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "pallas-interpret,pallas-tpu-interpret,pallas-tpu-lower,pallas-tpu"
    )]
    engines: Vec<String>,
    /// Rewrite the expectations of failing trials to what happens now, and print the changes.
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
}

/// An engine, or why it cannot run here.
type EngineOrReason = Result<Arc<dyn Engine>, String>;

pub fn run(args: Args) -> Result<Exit, CliError> {
    let dir = args.dir.clone().unwrap_or_else(default_dir);
    let corpus = Corpus::load(&dir).map_err(|e| CliError::Input(e.into()))?;
    for n in &args.engines {
        if n != ORACLE && n.parse::<tpu_runner::Mode>().is_err() {
            return Err(CliError::Input(anyhow::anyhow!(
                "unknown engine `{n}` (known: {})",
                fuzz::engines::ENGINE_NAMES.join(", ")
            )));
        }
    }
    let mut specs = trials(&corpus, &args.engines);
    if let Some(f) = &args.filter {
        specs.retain(|t| t.name.contains(f.as_str()));
    }
    let jax_needed: Vec<String> = specs
        .iter()
        .filter(|t| t.engine != ORACLE)
        .map(|t| t.engine.clone())
        .collect();
    let pool = start_pool(&jax_needed, args.jobs.clamp(1, 2), args.timeout)?;
    let mut engines: Vec<(String, EngineOrReason)> = Vec::new();
    for name in args.engines.iter().filter(|n| *n != ORACLE) {
        let mode: tpu_runner::Mode = name
            .parse()
            .map_err(|e| CliError::Input(anyhow::anyhow!("{e}")))?;
        let engine = match &pool {
            None => Err("no JAX pool".to_string()),
            Some(p) if mode == tpu_runner::Mode::PallasTpu && !p.availability().tpu => {
                Err(format!(
                    "no TPU here (jax.devices() = {:?})",
                    p.availability().devices
                ))
            }
            Some(p) => {
                Ok(Arc::new(fuzz::engines::jax::Jax::new(mode, p.clone())) as Arc<dyn Engine>)
            }
        };
        engines.push((name.clone(), engine));
    }
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<(usize, String, TrialResult)>> = Mutex::new(Vec::new());
    let start = std::time::Instant::now();
    std::thread::scope(|s| {
        for _ in 0..args.jobs.max(1) {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().expect("queue lock");
                        *n += 1;
                        *n - 1
                    };
                    let Some(spec) = specs.get(i) else { break };
                    let loaded = &corpus.entries[spec.entry];
                    let result = if spec.engine == ORACLE {
                        check_reference(loaded)
                    } else {
                        match engines.iter().find(|(n, _)| *n == spec.engine) {
                            Some((_, Ok(e))) => replay_engine(&loaded.entry, e),
                            Some((_, Err(why))) => TrialResult::Ignored(why.clone()),
                            None => TrialResult::Ignored("engine not selected".into()),
                        }
                    };
                    let line = match &result {
                        TrialResult::Pass => "ok",
                        TrialResult::Ignored(_) => "ignored",
                        TrialResult::Fail { .. } => "FAILED",
                    };
                    println!("{line:<8} {}", spec.name);
                    results
                        .lock()
                        .expect("results lock")
                        .push((i, spec.name.clone(), result));
                }
            });
        }
    });
    let mut results = results.into_inner().expect("results lock");
    results.sort_by_key(|(i, _, _)| *i);
    let named: Vec<(String, TrialResult)> = results
        .iter()
        .map(|(_, n, r)| (n.clone(), r.clone()))
        .collect();
    let mut updates: Vec<(PathBuf, Update)> = Vec::new();
    let mut failed = 0;
    for (i, name, r) in &results {
        let spec = &specs[*i];
        if let TrialResult::Fail {
            message,
            updates: u,
        } = r
        {
            failed += 1;
            if !args.bless {
                println!("\n---- {name} ----\n{message}");
            }
            let path = corpus.entries[spec.entry].path.clone();
            updates.extend(u.iter().cloned().map(|x| (path.clone(), x)));
        }
    }
    println!(
        "\nreplay of {}: {} in {:.1}s",
        dir.display(),
        corpus::replay::summary(&named),
        start.elapsed().as_secs_f64()
    );
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
        return Ok(Exit::Ok);
    }
    Ok(if failed > 0 { Exit::Finding } else { Exit::Ok })
}
