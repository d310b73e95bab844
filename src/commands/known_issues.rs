//! `pallas-diff known-issues [--json]`: re-checks every row of the known-issue table
//! (`fuzz/src/known_issues.rs`) that has a reproducer on the Helion build under test
//! (`--helion-build`, default the pinned release): each row is *still matching* (its reproducer
//! is still classified as that known issue), *stale* (it runs as the reference says now, or
//! shows something else: the row should go, or be narrowed), or *unchecked* (no reproducer, or
//! none of its engines can run on this build). A row runs on those of its engines the build
//! can run (an older release has no `helion-tpu-lower`: its rows run on `helion-pallas`, and
//! the run says which engine it left out). What the table's doc used to ask by hand after an
//! upgrade. Exit 0 whatever the rows say (the table is read, not judged); 2 when Helion is
//! absent.

use super::check::{PoolSizes, select_engines};
use super::{CliError, Exit};
use compiler::compile::CodegenOptions;
use fuzz::engines::{self, EngineId};
use fuzz::known_issues::KNOWN_ISSUES;
use fuzz::outcome::Outcome;

/// Arguments of `known-issues`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Seconds before a worker is declared hung.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
}

/// One row's state.
#[derive(serde::Serialize)]
struct Row {
    id: &'static str,
    state: &'static str,
    /// What the reproducer does now, when not the row itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    now: Option<String>,
}

pub fn run(args: Args) -> Result<Exit, CliError> {
    // One pool per runtime for every row: the Helion engines all rows name.
    let mut wanted: Vec<EngineId> = vec![EngineId::Reference];
    for k in KNOWN_ISSUES.iter().filter(|k| k.reproducer.is_some()) {
        for e in k.engines {
            if !wanted.contains(e) {
                wanted.push(*e);
            }
        }
    }
    let selected = select_engines(
        &wanted,
        PoolSizes {
            jax: 1,
            helion: 1,
            timeout: args.timeout,
        },
        // A build that cannot run one mode still checks each row on the others; with Helion
        // absent nothing is left to compare and this is an error (exit 2).
        true,
    )?;
    let build = selected
        .pools
        .helion
        .as_ref()
        .and_then(|p| p.availability().helion_build.clone());
    let mut rows = Vec::new();
    for k in KNOWN_ISSUES {
        let Some(script) = k.reproducer else {
            rows.push(Row {
                id: k.id,
                state: "unchecked",
                now: Some("no reproducer".into()),
            });
            continue;
        };
        let case = lang::frontend::load_case_text(script, &format!("{}.py", k.id))
            .map_err(|e| CliError::Internal(anyhow::anyhow!("reproducer of {}: {e}", k.id)))?;
        let runnable: Vec<EngineId> = k
            .engines
            .iter()
            .copied()
            .filter(|e| selected.ids.contains(e))
            .collect();
        if runnable.is_empty() {
            let why: Vec<String> = selected
                .unavailable
                .iter()
                .filter(|(e, _)| k.engines.contains(e))
                .map(|(e, why)| format!("{e}: {why}"))
                .collect();
            rows.push(Row {
                id: k.id,
                state: "unchecked",
                now: Some(format!("none of its engines can run: {}", why.join("; "))),
            });
            continue;
        }
        let engines = engines::build_with(&runnable, &selected.pools)
            .map_err(|e| CliError::Internal(e.into()))?;
        let report = fuzz::check::check_case(&case, &engines, &CodegenOptions::default());
        let row = if report.outcome == Outcome::KnownIssue && report.known_issue == Some(k.id) {
            Row {
                id: k.id,
                state: "still-matching",
                now: None,
            }
        } else {
            let sig = finding::signature::signature(&case, &report);
            Row {
                id: k.id,
                state: "stale",
                now: Some(sig.key()),
            }
        };
        rows.push(row);
    }
    if args.json {
        println!(
            "{}",
            serde_json::json!({ "helion_build": build, "rows": rows })
        );
    } else {
        if let Some(b) = &build {
            println!("known issues on {b}:");
        }
        for r in &rows {
            println!(
                "  {:<42} {}{}",
                r.id,
                r.state,
                r.now
                    .as_ref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            );
        }
        let stale = rows.iter().filter(|r| r.state == "stale").count();
        if stale > 0 {
            println!(
                "{stale} stale row(s): delete or narrow them in fuzz/src/known_issues.rs (and docs/helion-findings.md)"
            );
        }
    }
    Ok(Exit::Ok)
}
