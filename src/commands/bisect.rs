//! `pallas-diff bisect TARGET [--builds B,...] [--engine E] [--json]`: the regression range of a
//! Helion finding (or of a case script's symptom) across Helion builds. The case runs on every
//! build in release order (the installed ones, or `--builds`), each in its own Helion worker,
//! and each run is judged against the finding's signature (`finding::regression::behaviour`):
//! the last build where it behaves as the reference says, the first where it shows the
//! symptom, and the builds where the symptom went away again (fixed), or where the case is
//! refused or cannot run. A finding directory keeps the range in its `meta.json`
//! (`regression`), which its report shows.

use super::{CliError, Exit, load_case};
use anyhow::Context;
use compiler::compile::CodegenOptions;
use finding::regression::{Behaviour, RegressionRecord, behaviour, run_on_build};
use finding::signature::Signature;
use fuzz::engines::EngineId;
use std::path::PathBuf;
use tpu_runner::builds::{self, BuildSpec, HelionBuild, range};

/// Arguments of `bisect`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A finding directory, or a case script (its symptom is what it does on the newest build).
    target: PathBuf,
    /// The builds to try, oldest first (default: every installed build, in release order).
    #[arg(long, value_delimiter = ',', value_parser = BuildSpec::parse)]
    builds: Vec<BuildSpec>,
    /// The Helion engine to run (default: the finding's, else `helion-pallas`).
    #[arg(long)]
    engine: Option<EngineId>,
    /// Seconds before a worker is declared hung.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Bisect the commits of this Helion git checkout instead of the installed builds (with
    /// `--range`): each commit tried is checked out into a temporary worktree and run in place,
    /// as `git bisect run` would, skipping commits that cannot run the case.
    #[arg(long, requires = "range")]
    source: Option<PathBuf>,
    /// `GOOD..BAD`: the last commit known to behave and the first known to show the symptom.
    #[arg(long, requires = "source")]
    range: Option<String>,
}

type Run = (tpu_runner::BuildIdentity, Signature, Option<String>);

/// Runs the case on one build in its own one-worker Helion pool
/// ([`finding::regression::run_on_build`]).
fn run_on(
    build: &HelionBuild,
    python: &std::path::Path,
    engine: EngineId,
    case: &lang::ir::Case,
    codegen: &CodegenOptions,
    timeout: u64,
) -> Result<Run, CliError> {
    let run = run_on_build(
        build,
        python,
        engine,
        case,
        codegen,
        std::time::Duration::from_secs(timeout),
    )
    .map_err(|e| CliError::Input(e.into()))?;
    Ok((run.build, run.signature, run.exception))
}

/// `git -C tree ARGS`, its stdout; an error names the command.
fn git(tree: &std::path::Path, args: &[&str]) -> Result<String, CliError> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(tree)
        .args(args)
        .output()
        .with_context(|| format!("cannot run git in {}", tree.display()))?;
    if !out.status.success() {
        return Err(CliError::Input(anyhow::anyhow!(
            "git -C {} {}: {}",
            tree.display(),
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Bisects the first-parent commits of `GOOD..BAD` in `tree` (`git bisect run` with skips):
/// each commit tried is a temporary worktree registered as a source build, removed after.
fn bisect_commits(
    tree: &std::path::Path,
    range_spec: &str,
    mut judge: impl FnMut(&HelionBuild) -> Result<Behaviour, CliError>,
) -> Result<(Vec<String>, range::Bisection), CliError> {
    let (good, bad) = range_spec.split_once("..").ok_or_else(|| {
        CliError::Input(anyhow::anyhow!("--range {range_spec}: expected GOOD..BAD"))
    })?;
    let good = git(
        tree,
        &["rev-parse", "--verify", &format!("{good}^{{commit}}")],
    )?;
    let listed = git(
        tree,
        &[
            "rev-list",
            "--reverse",
            "--first-parent",
            &format!("{good}..{bad}"),
        ],
    )?;
    let mut commits = vec![good];
    commits.extend(listed.lines().map(str::to_owned));
    let scratch = tempfile::Builder::new()
        .prefix("pallas-diff-bisect-")
        .tempdir()
        .context("cannot make a scratch directory")?;
    let registry = scratch.path().join("builds");
    let mut failure: Option<CliError> = None;
    let result = range::bisect(commits.len(), |i| {
        let commit = &commits[i];
        let worktree = scratch.path().join(&commit[..12]);
        let step = (|| {
            git(
                tree,
                &[
                    "worktree",
                    "add",
                    "--detach",
                    worktree.to_str().unwrap_or(""),
                    commit,
                ],
            )?;
            let build = builds::install(
                &registry,
                &BuildSpec::Source(worktree.clone()),
                std::path::Path::new("python3"),
                false,
            )
            .map_err(|e| CliError::Input(e.into()))?;
            eprintln!(
                "pallas-diff: commit {} ({} of {})",
                &commit[..12],
                i + 1,
                commits.len()
            );
            judge(&build)
        })();
        let _ = git(
            tree,
            &[
                "worktree",
                "remove",
                "--force",
                worktree.to_str().unwrap_or(""),
            ],
        );
        match step {
            Ok(b) => b,
            // A commit that is not a Helion tree or whose worker does not start is skipped, as
            // `git bisect run` skips on exit 125; a harness error stops the bisection.
            Err(CliError::Input(e)) => Behaviour::Other(format!("cannot run: {e:#}")),
            Err(e) => {
                failure.get_or_insert(e);
                Behaviour::Other("harness error".into())
            }
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    let bisection =
        result.map_err(|e| CliError::Input(anyhow::anyhow!("--range {range_spec}: {e}")))?;
    Ok((commits, bisection))
}

/// One build's row.
#[derive(serde::Serialize)]
struct Row {
    build: tpu_runner::BuildIdentity,
    #[serde(flatten)]
    behaviour: Behaviour,
    key: String,
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    let (case, codegen, symptom) = load_target(&args.target)?;
    let engine: EngineId = match (&args.engine, &symptom) {
        (Some(engine), _) => *engine,
        (None, Some(sig)) => sig
            .engine
            .unwrap_or(EngineId::Worker(tpu_runner::Mode::HelionPallas)),
        (None, None) => EngineId::Worker(tpu_runner::Mode::HelionPallas),
    };
    if !engine.is_helion() {
        return Err(CliError::Input(anyhow::anyhow!(
            "{}: bisect runs Helion builds, and engine {engine} is not a Helion engine",
            args.target.display()
        )));
    }
    let python = tpu_runner::helion_python_if_present()
        .map_err(|why| CliError::Input(anyhow::anyhow!("bisect needs Helion: {why}")))?;
    if let (Some(tree), Some(range_spec)) = (&args.source, &args.range) {
        // The symptom of a case script is what it does on the bad end, run first.
        // The bad end is tried first (`range::bisect`); a case script's symptom is what it
        // does there, and must be a finding or a known issue.
        let mut symptom = symptom;
        let mut symptom_exception: Option<String> = None;
        let result = bisect_commits(tree, range_spec, |build| {
            let (_, run, exception) =
                run_on(build, &python, engine, &case, &codegen, args.timeout)?;
            if symptom.is_none() {
                symptom_exception.clone_from(&exception);
                symptom = Some(run.clone());
            }
            let symptom = symptom.as_ref().expect("set above");
            Ok(behaviour(
                symptom,
                symptom_exception.as_deref(),
                &run,
                exception.as_deref(),
            ))
        });
        if let Some(s) = &symptom
            && !s.is_finding()
            && s.outcome != fuzz::outcome::Outcome::KnownIssue
        {
            return Err(CliError::Input(anyhow::anyhow!(
                "{}: no symptom to bisect: at the bad end of {range_spec} the case is `{}`",
                args.target.display(),
                s.outcome
            )));
        }
        let (commits, bisection) = result?;
        let (good, bad) = (&commits[bisection.last_good], &commits[bisection.first_bad]);
        let skipped: Vec<&str> = bisection
            .skipped
            .iter()
            .map(|&i| commits[i].as_str())
            .collect();
        if args.json {
            println!(
                "{}",
                serde_json::json!({
                    "target": args.target,
                    "last_good": good,
                    "first_bad": bad,
                    "skipped": skipped,
                    "tried": bisection.tried.iter().map(|(i, b)| serde_json::json!({"commit": commits[*i], "behaviour": b})).collect::<Vec<_>>(),
                })
            );
        } else {
            println!("last good {good}\nfirst bad {bad}");
            if !skipped.is_empty() {
                println!(
                    "between them, commits that could not run the case: {}",
                    skipped.join(" ")
                );
            }
        }
        return Ok(Exit::Ok);
    }
    let dir = super::builds::dir();
    let list: Vec<HelionBuild> = if args.builds.is_empty() {
        builds::installed(&dir).map_err(|e| CliError::Input(e.into()))?
    } else {
        args.builds
            .iter()
            .map(|s| builds::find(&dir, s))
            .collect::<Result<_, _>>()
            .map_err(|e| CliError::Input(e.into()))?
    };
    // Each build's run, newest last; the symptom of a case script is its newest run's.
    let mut runs: Vec<Run> = Vec::new();
    for build in &list {
        eprintln!(
            "pallas-diff: running {} on helion build {}",
            args.target.display(),
            build.id()
        );
        runs.push(run_on(
            build,
            &python,
            engine,
            &case,
            &codegen,
            args.timeout,
        )?);
    }
    let symptom = match symptom {
        Some(s) => s,
        None => match runs.last() {
            // A known issue is a Helion bug too: its range is as much worth knowing.
            Some((_, s, _))
                if s.is_finding() || s.outcome == fuzz::outcome::Outcome::KnownIssue =>
            {
                s.clone()
            }
            Some((b, s, _)) => {
                return Err(CliError::Input(anyhow::anyhow!(
                    "{}: no symptom to bisect: on the newest build ({b}) the case is `{}`",
                    args.target.display(),
                    s.outcome
                )));
            }
            None => {
                return Err(CliError::Input(anyhow::anyhow!("no Helion build to run")));
            }
        },
    };
    // The symptom's exception: that of the newest run showing the symptom by its signature.
    let symptom_exception = runs
        .iter()
        .rev()
        .find(|(_, run, _)| symptom.holds_for(run))
        .and_then(|(_, _, e)| e.clone());
    let rows: Vec<Row> = runs
        .into_iter()
        .map(|(build, run, exception)| Row {
            build,
            behaviour: behaviour(
                &symptom,
                symptom_exception.as_deref(),
                &run,
                exception.as_deref(),
            ),
            key: run.key(),
        })
        .collect();
    let record = RegressionRecord::of(
        rows.iter()
            .map(|r| (r.build.clone(), r.behaviour.clone()))
            .collect(),
    );
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "target": args.target,
                "symptom": symptom.key(),
                "builds": rows,
                "last_good": record.last_good,
                "first_bad": record.first_bad,
                "fixed": record.fixed,
            })
        );
    } else {
        println!("symptom: {}", symptom.key());
        for r in &rows {
            let what = match &r.behaviour {
                Behaviour::Good => "good".to_owned(),
                Behaviour::Bad => "BAD (the symptom)".to_owned(),
                Behaviour::Other(k) => format!("other: {k}"),
            };
            println!("  {:<28} {what}", r.build.to_string());
        }
        println!("{}", record.summary());
    }
    // A finding keeps its range (meta.json `regression`), for its report and the dashboard.
    if args.target.is_dir() {
        let mut finding = super::report::load_finding(&args.target)?;
        keep_range(&args.target, &mut finding, record)?;
    }
    Ok(Exit::Ok)
}

/// Records `record` as the regression range of the finding in `dir` (its `meta.json`,
/// rewritten atomically): what `bisect` and a campaign's ranges keep.
pub fn keep_range(
    dir: &std::path::Path,
    finding: &mut finding::finding::Finding,
    record: RegressionRecord,
) -> Result<(), CliError> {
    finding.meta.regression = Some(record);
    let meta = serde_json::to_string_pretty(&finding.meta).context("meta.json serializes")?;
    finding::fsio::write_atomic(&dir.join("meta.json"), meta.as_bytes())
        .with_context(|| format!("cannot write {}/meta.json", dir.display()))?;
    Ok(())
}

/// The case, its codegen options and, for a finding, its signature.
fn load_target(
    target: &std::path::Path,
) -> Result<(lang::ir::Case, CodegenOptions, Option<Signature>), CliError> {
    if target.is_dir() {
        let finding = super::report::load_finding(target)?;
        let codegen = finding
            .meta
            .codegen
            .options()
            .with_context(|| format!("{}: meta.json codegen", target.display()))
            .map_err(CliError::Input)?;
        let sig = finding.meta.signature.clone();
        return Ok((finding.case, codegen, Some(sig)));
    }
    Ok((load_case(target)?, CodegenOptions::default(), None))
}
