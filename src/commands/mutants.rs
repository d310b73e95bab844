//! `pallas-diff mutants`: mutation analysis of real Helion (the `mutants` crate): enumerate
//! single-site mutants of Helion files, learn which suite cases execute which lines, run each
//! covered mutant against its covering cases, and write `mutants.json`, the summary, the
//! survivors and JUnit into `--out`. `--merge DIR...` merges shards' output directories.

use super::{CliError, Exit};
use anyhow::{Context, anyhow};
use mutants::mutant::{self, Mutant, SourceFile};
use mutants::run::{self, RunOptions};
use mutants::server::{self, ForkServer};
use mutants::suite::{self, Baseline, BaselineOptions, SuiteId};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The Helion files mutated by default: the Pallas backend and the shared loop and index code
/// it uses (only those some case executes are kept).
const DEFAULT_DIRS: [&str; 1] = ["helion/_compiler/pallas"];
const DEFAULT_SHARED: [&str; 3] = [
    "helion/_compiler/tile_strategy.py",
    "helion/_compiler/indexing_strategy.py",
    "helion/_compiler/program_id.py",
];

/// Arguments of `mutants`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output directory (results are kept per mutant: a second run continues the first).
    #[arg(long, default_value = "target/pallas-diff-mutants")]
    out: PathBuf,
    /// Helion files to mutate, relative to the directory holding the `helion` package
    /// (`helion/_compiler/pallas/view_ops.py`); default: the Pallas backend files and
    /// tile_strategy.py, indexing_strategy.py, program_id.py that some case executes.
    #[arg(long, value_delimiter = ',')]
    files: Vec<String>,
    /// Only mutants on these lines (`120-180,300`).
    #[arg(long)]
    lines: Option<String>,
    /// A uniform sample of this many mutants (after --files and --lines).
    #[arg(long)]
    sample: Option<usize>,
    /// The sample's seed, and the campaign suite's.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Suites: corpus, campaign.
    #[arg(long, value_delimiter = ',', default_values_t = [SuiteId::Corpus, SuiteId::Campaign])]
    suites: Vec<SuiteId>,
    /// Cases of the campaign suite (the first of a campaign seeded --seed).
    #[arg(long, default_value_t = 48)]
    campaign_cases: usize,
    /// Time box of the campaign suite per mutant, in seconds.
    #[arg(long, default_value_t = 60.0)]
    campaign_seconds: f64,
    /// The regression corpus (default: corpus/cases).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Parallel Helion workers.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// This shard of the mutants (`i/n`, 0-based); merge the shards' --out with --merge.
    #[arg(long)]
    shard: Option<String>,
    /// Per-case timeout in seconds (a mutant that hangs a case is killed by `timeout`).
    #[arg(long, default_value_t = 60)]
    case_timeout: u64,
    /// The Helion engine the suites run.
    #[arg(long, default_value = "helion-pallas")]
    engine: tpu_runner::Mode,
    /// Also write JUnit XML here (it is always written to --out/junit.xml).
    #[arg(long)]
    junit: Option<PathBuf>,
    /// Only list the mutants (id and diff line) and stop.
    #[arg(long)]
    list: bool,
    /// Merge these output directories (shards) into --out instead of running.
    #[arg(long, num_args = 1..)]
    merge: Vec<PathBuf>,
    /// The review of equivalent mutants whose survivors leave the score (JSON; default: the
    /// review of the pinned Helion release, `mutants/reviewed-equivalent.json`, compiled in).
    /// An entry whose text differs from the mutant at its id is reported stale, one that some
    /// case kills is reported wrong.
    #[arg(long, conflicts_with = "no_review")]
    review: Option<PathBuf>,
    /// Score every survivor, reviewed or not.
    #[arg(long)]
    no_review: bool,
}

/// The review `args` asks for.
fn review(args: &Args) -> Result<mutants::Review, CliError> {
    if args.no_review {
        return Ok(mutants::Review::none());
    }
    match &args.review {
        Some(path) => mutants::Review::load(path).map_err(|e| CliError::Input(e.into())),
        None => Ok(mutants::Review::pinned()),
    }
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let review = review(&args)?;
    if !args.merge.is_empty() {
        return merge(&args, &review);
    }
    if !matches!(args.engine.runtime(), tpu_runner::Runtime::Helion) {
        return Err(CliError::Input(anyhow!(
            "--engine {} is not a Helion engine",
            args.engine
        )));
    }
    let shard = args
        .shard
        .as_deref()
        .map(run::parse_shard)
        .transpose()
        .map_err(|e| CliError::Input(anyhow!(e)))?;
    let ranges = args
        .lines
        .as_deref()
        .map(mutant::parse_line_ranges)
        .transpose()
        .map_err(|e| CliError::Input(anyhow!("--lines: {e}")))?
        .unwrap_or_default();
    let python = tpu_runner::helion_python_if_present().map_err(|e| {
        CliError::Input(anyhow!(
            "mutants runs real Helion, and the Helion environment is not here: {e} (`pallas-diff provision --helion`)"
        ))
    })?;
    let internal = |e: anyhow::Error| CliError::Internal(e);
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))
        .map_err(internal)?;
    let root = server::helion_root(&python).map_err(|e| CliError::Input(e.into()))?;

    // Files first (a --list needs no worker).
    let files = source_files(&root, &args.files).map_err(CliError::Input)?;
    let enumerated = enumerate_cached(&python, &files, &args.out).map_err(internal)?;
    if args.list {
        for m in mutant::within_lines(enumerated, &ranges) {
            println!("{}\t{} -> {}", m.id(), m.original, m.replacement);
        }
        return Ok(Exit::Ok);
    }

    eprintln!("pallas-diff mutants: starting the fork server (imports torch and JAX once)");
    let server = ForkServer::start(&python, &args.out.join("zygote.log"))
        .map_err(|e| CliError::Internal(e.into()))?;
    let baseline = baseline_cached(&server, &args, &root).map_err(internal)?;

    // Default files: those some case executes.
    let executed = baseline.executed_files();
    let chosen: Vec<Mutant> = enumerated
        .into_iter()
        .filter(|m| !args.files.is_empty() || executed.contains(&m.file))
        .collect();
    let chosen = mutant::within_lines(chosen, &ranges);
    let chosen = match args.sample {
        Some(n) => mutant::sample(&chosen, n, args.seed),
        None => chosen,
    };
    let chosen = match shard {
        Some((i, n)) => run::shard(chosen, i, n),
        None => chosen,
    };
    eprintln!(
        "pallas-diff mutants: {} mutants to run ({} suite cases, {} flaky left out), --jobs {}",
        chosen.len(),
        baseline.cases.len(),
        baseline.flaky.len(),
        args.jobs
    );
    let by_id: BTreeMap<String, SourceFile> =
        files.iter().map(|f| (f.rel.clone(), f.clone())).collect();
    let progress = |r: &run::MutantResult, done: usize, total: usize| {
        let how = r
            .suites
            .iter()
            .find_map(|(s, x)| {
                x.kill
                    .as_ref()
                    .map(|k| format!("{} {}: {}", s.name(), k.case, k.how))
            })
            .or_else(|| r.detail.clone())
            .unwrap_or_default();
        eprintln!(
            "[{done}/{total}] {} {} ({:.1} s) {how}",
            r.status.name(),
            r.id,
            r.seconds
        );
    };
    let options = RunOptions {
        mode: args.engine,
        suites: args.suites.clone(),
        case_timeout: Duration::from_secs(args.case_timeout),
        campaign_seconds: args.campaign_seconds,
        jobs: args.jobs,
        out: &args.out,
        files: &by_id,
        progress: &progress,
    };
    let results = run::run_all(&server, &baseline, &chosen, &options)
        .context("cannot write a mutant's result")
        .map_err(internal)?;
    drop(server);
    finish(&args.out, &results, args.junit.as_deref(), &review)
}

fn finish(
    out: &Path,
    results: &[run::MutantResult],
    junit: Option<&Path>,
    review: &mutants::Review,
) -> Result<Exit, CliError> {
    let summary = mutants::report::write_all(out, results, review)
        .with_context(|| format!("cannot write into {}", out.display()))
        .map_err(CliError::Internal)?;
    if let Some(path) = junit {
        std::fs::write(path, mutants::report::junit(results, review))
            .with_context(|| format!("cannot write {}", path.display()))
            .map_err(CliError::Internal)?;
    }
    print!("{}", summary.render());
    println!(
        "\nmutants.json, summary.txt, survivors.md and junit.xml are in {}",
        out.display()
    );
    Ok(Exit::Ok)
}

fn merge(args: &Args, review: &mutants::Review) -> Result<Exit, CliError> {
    merge_dirs(&args.merge, &args.out, args.junit.as_deref(), review)
}

/// Whether `dir` is the output directory of a `mutants` run (its enumeration, or its results),
/// not a campaign's findings: `pallas-diff merge` takes both.
pub fn is_output_dir(dir: &Path) -> bool {
    dir.join("enumerated.json").is_file() || dir.join("mutants.json").is_file()
}

/// The shards' output directories `dirs` merged into `out` (each mutant's first result, by
/// id), scored with `review`; the summary, survivors and JUnit written as a run writes them.
pub fn merge_dirs(
    dirs: &[PathBuf],
    out: &Path,
    junit: Option<&Path>,
    review: &mutants::Review,
) -> Result<Exit, CliError> {
    let dirs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    let results = mutants::report::merge(&dirs)
        .context("cannot merge the mutants directories")
        .map_err(CliError::Input)?;
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create {}", out.display()))
        .map_err(CliError::Internal)?;
    finish(out, &results, junit, review)
}

/// The files to mutate: `--files`, or the default set.
fn source_files(root: &Path, files: &[String]) -> anyhow::Result<Vec<SourceFile>> {
    let mut rels: Vec<String> = files.to_vec();
    if rels.is_empty() {
        for dir in DEFAULT_DIRS {
            let mut found: Vec<String> = std::fs::read_dir(root.join(dir))
                .with_context(|| format!("cannot list {}", root.join(dir).display()))?
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    (name.ends_with(".py") && name != "__init__.py")
                        .then(|| format!("{dir}/{name}"))
                })
                .collect();
            found.sort();
            rels.extend(found);
        }
        rels.extend(DEFAULT_SHARED.iter().map(|s| (*s).to_owned()));
    }
    rels.into_iter()
        .map(|rel| {
            let path = root.join(&rel);
            if path.is_file() {
                Ok(SourceFile { rel, path })
            } else {
                Err(anyhow!(
                    "--files: {} is not a file of the installed Helion ({})",
                    rel,
                    path.display()
                ))
            }
        })
        .collect()
}

/// The mutants of `files`, cached in `out/enumerated.json` (keyed by the files' contents and
/// the enumerator's).
fn enumerate_cached(
    python: &Path,
    files: &[SourceFile],
    out: &Path,
) -> anyhow::Result<Vec<Mutant>> {
    let mut key = String::new();
    for f in files {
        let text = std::fs::read_to_string(&f.path)
            .with_context(|| format!("cannot read {}", f.path.display()))?;
        key.push_str(&f.rel);
        key.push_str(&mutants::observe::sha16(&text));
    }
    // The enumerator's own text too: a changed operator or message rule enumerates again.
    let script = server::script("mutant_enumerate.py");
    key.push_str(&mutants::observe::sha16(
        &std::fs::read_to_string(&script).unwrap_or_default(),
    ));
    let key = mutants::observe::sha16(&key);
    let cache = out.join("enumerated.json");
    if let Ok(text) = std::fs::read_to_string(&cache)
        && let Ok((k, m)) = serde_json::from_str::<(String, Vec<Mutant>)>(&text)
        && k == key
    {
        return Ok(m);
    }
    eprintln!(
        "pallas-diff mutants: enumerating the mutants of {} files (mutmut 3's operators)",
        files.len()
    );
    // One enumerator per file, on the cores: a large file takes tens of seconds.
    let per_file: Vec<anyhow::Result<Vec<Mutant>>> = std::thread::scope(|s| {
        let chunks: Vec<_> = files
            .chunks(files.len().div_ceil(super::cores().max(1)).max(1))
            .map(|chunk| {
                let script = &script;
                s.spawn(move || -> anyhow::Result<Vec<Mutant>> {
                    let mut out = Vec::new();
                    for f in chunk {
                        out.extend(mutant::enumerate(python, script, std::slice::from_ref(f))?);
                    }
                    Ok(out)
                })
            })
            .collect();
        chunks
            .into_iter()
            .map(|h| h.join().expect("an enumerator thread panicked"))
            .collect()
    });
    let mut all = Vec::new();
    for r in per_file {
        all.extend(r?);
    }
    run::write_atomic(&cache, &serde_json::to_string(&(key, &all))?)?;
    Ok(all)
}

/// The suites' baseline, cached in `out/baseline.json` (keyed by the suites, the campaign's
/// seed and size, the engine and the corpus's cases).
fn baseline_cached(server: &ForkServer, args: &Args, root: &Path) -> anyhow::Result<Baseline> {
    let corpus_dir = args
        .corpus
        .clone()
        .unwrap_or_else(corpus::entry::default_dir);
    let mut planned = Vec::new();
    if args.suites.contains(&SuiteId::Corpus) {
        planned.extend(
            suite::corpus_cases(&corpus_dir)
                .with_context(|| format!("cannot load the corpus {}", corpus_dir.display()))?,
        );
    }
    if args.suites.contains(&SuiteId::Campaign) {
        planned.extend(suite::campaign_cases(args.seed, args.campaign_cases));
    }
    let key_text = serde_json::to_string(&(
        mutants::observe::OBSERVATION_VERSION,
        args.engine,
        planned
            .iter()
            .map(|p| (&p.name, &p.case))
            .collect::<Vec<_>>(),
    ))?;
    let key = mutants::observe::sha16(&key_text);
    let cache = args.out.join("baseline.json");
    if let Ok(text) = std::fs::read_to_string(&cache)
        && let Ok((k, b)) = serde_json::from_str::<(String, Baseline)>(&text)
        && k == key
    {
        return Ok(b);
    }
    eprintln!(
        "pallas-diff mutants: baseline of {} cases on unmutated Helion (twice: with coverage, then without)",
        planned.len()
    );
    let progress = |done: usize, total: usize| {
        if done.is_multiple_of(10) || done == total {
            eprintln!("  baseline {done}/{total}");
        }
    };
    let options = BaselineOptions {
        mode: args.engine,
        jobs: args.jobs,
        timeout: Duration::from_secs(args.case_timeout),
        helion_root: root,
        scratch: &args.out.join("overlays"),
        progress: &progress,
    };
    let baseline = suite::baseline(server, &planned, &options)?;
    run::write_atomic(&cache, &serde_json::to_string(&(key, &baseline))?)?;
    Ok(baseline)
}
