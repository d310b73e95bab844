//! The regression corpus (`corpus/cases/`) replayed as tests: one trial per entry × engine,
//! named `<engine>/<id>-<slug>` (libtest-mimic, so `cargo test -p pallas-diff-corpus --test
//! replay -- d12` filters as usual).
//!
//! * `oracle/...` needs no Python: verdict, compile-level outcome, reference outputs, script.
//! * `pallas-interpret/...`, `pallas-tpu-interpret/...`, `pallas-tpu-lower/...`: the entry's
//!   module in real JAX (a pool of 2 workers, provisioned on first use), against the entry's
//!   expectation for that engine.
//! * `pallas-tpu/...`: only where `jax.devices()` has a TPU; ignored with the reason elsewhere.
//!
//! `PALLAS_DIFF_REPLAY_ENGINES=a,b` picks the JAX engines (default: all four; the others are
//! ignored with the reason). `PALLAS_DIFF_BLESS=1` records what happens now in the entries of
//! the failing trials (and prints every change) instead of failing. A file that is not a valid
//! entry is a failing trial `corpus/<file>` with the file, line and column.

use fuzz::engines::EngineId;
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use pallas_diff_corpus::entry::{Corpus, default_dir};
use pallas_diff_corpus::replay::{
    TrialResult, Update, bless, check_reference, replay_engine, trials,
};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

type Updates = Arc<Mutex<Vec<(PathBuf, Update)>>>;

/// JAX engines replayed by default.
const JAX_ENGINES: [&str; 4] = [
    "pallas-interpret",
    "pallas-tpu-interpret",
    "pallas-tpu-lower",
    "pallas-tpu",
];

static POOL: OnceLock<Result<Arc<tpu_runner::Pool>, String>> = OnceLock::new();

/// The shared pool of 2 workers, started by the first JAX trial.
fn pool() -> Result<Arc<tpu_runner::Pool>, String> {
    POOL.get_or_init(|| {
        let python = tpu_runner::provision().map_err(|e| e.to_string())?;
        let config = tpu_runner::PoolConfig::new(python).with_workers(2);
        tpu_runner::Pool::new(config)
            .map(Arc::new)
            .map_err(|e| format!("cannot start JAX workers: {e}"))
    })
    .clone()
}

fn finish(
    result: TrialResult,
    path: PathBuf,
    bless: bool,
    updates: &Updates,
) -> Result<Completion, Failed> {
    match result {
        TrialResult::Pass => Ok(Completion::Completed),
        TrialResult::Ignored(why) => Ok(Completion::ignored_with(why)),
        TrialResult::Fail {
            message,
            updates: u,
        } => {
            if bless && !u.is_empty() {
                let mut all = updates.lock().unwrap_or_else(|e| e.into_inner());
                all.extend(u.into_iter().map(|x| (path.clone(), x)));
                Ok(Completion::Completed)
            } else {
                Err(message.into())
            }
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let bless = std::env::var("PALLAS_DIFF_BLESS").is_ok_and(|v| v == "1");
    let selected: Vec<String> = match std::env::var("PALLAS_DIFF_REPLAY_ENGINES") {
        Ok(v) => v
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        Err(_) => JAX_ENGINES.map(String::from).to_vec(),
    };
    let (corpus, errors) = Corpus::load_lenient(&default_dir());
    let corpus = Arc::new(corpus);
    let updates: Updates = Arc::new(Mutex::new(Vec::new()));
    let mut out = Vec::new();
    for e in errors {
        let name = format!(
            "corpus/{}",
            e.path()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        );
        let message = e.to_string();
        out.push(Trial::test(name, move || Err(message.into())));
    }
    let all_engines: Vec<EngineId> = JAX_ENGINES
        .iter()
        .map(|n| n.parse().expect("a JAX engine"))
        .collect();
    for spec in trials(&corpus, &all_engines) {
        let corpus = corpus.clone();
        let updates = updates.clone();
        let engine = spec.engine;
        let chosen = engine == EngineId::Reference || selected.iter().any(|s| s == engine.name());
        out.push(Trial::ignorable_test(spec.name.clone(), move || {
            let loaded = &corpus.entries[spec.entry];
            let path = loaded.path.clone();
            if !chosen {
                return Ok(Completion::ignored_with(format!(
                    "{engine} is not in PALLAS_DIFF_REPLAY_ENGINES"
                )));
            }
            let mode = match engine {
                EngineId::Reference => {
                    return finish(check_reference(loaded), path, bless, &updates);
                }
                EngineId::Worker(mode) => mode,
                EngineId::PallasSim => {
                    return Err(Failed::from(format!("{engine} is not a JAX engine")));
                }
            };
            let pool = pool().map_err(|e| Failed::from(format!("JAX is not available: {e}")))?;
            if mode == tpu_runner::Mode::PallasTpu && !pool.availability().tpu {
                return Ok(Completion::ignored_with(format!(
                    "no TPU here (jax.devices() = {:?})",
                    pool.availability().devices
                )));
            }
            let jax: Arc<dyn fuzz::engines::Engine> =
                Arc::new(fuzz::engines::jax::Jax::new(mode, pool));
            finish(replay_engine(&loaded.entry, &jax), path, bless, &updates)
        }));
    }
    let conclusion = libtest_mimic::run(&args, out);
    if bless {
        let updates = updates.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match bless_and_print(&updates) {
            Ok(()) => {}
            Err(e) => {
                eprintln!("bless failed: {e}");
                std::process::exit(101);
            }
        }
    }
    conclusion.exit();
}

fn bless_and_print(
    updates: &[(PathBuf, Update)],
) -> Result<(), pallas_diff_corpus::entry::CorpusError> {
    let changes = bless(updates)?;
    if changes.is_empty() {
        println!("bless: nothing to change");
    } else {
        println!(
            "bless: {} change(s) in {}:",
            changes.len(),
            default_dir().display()
        );
        for c in changes {
            println!("  {c}");
        }
    }
    Ok(())
}
