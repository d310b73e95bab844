//! The campaign record, `stats.json` in a findings directory: the summary ([`Stats`] and what
//! the run was: seed, engines, seconds) and its time series, a [`Sample`] of the running counts
//! every few seconds, so that nightly runs can be plotted over time (outcome shares, cases/s,
//! coverage reached, JAX confirmations, findings). `pallas-diff fuzz` writes it; `pallas-diff
//! merge` merges the shards' records into one ([`CampaignRecord::merged`]) and `pallas-diff
//! dashboard` plots it.
//!
//! Layout ([`CampaignRecord`]): every [`Stats`] field at the top level, next to the run's fields;
//! Helion's verdict agreement also under `helion_verdict_agreement` (with its totals); `series`.
//! A merged record adds `shards` (each source shard's own record, by shard id, its series kept
//! exactly) and `stats_missing` (the shards that had no record); its `series` is the shards'
//! series merged by time (see [`merge_series`]) and its summary the sum of theirs
//! ([`Stats::merge`]).

use super::stats::{Agreement, Cell, HelionHealthCounts, Reach, Stats, ValueCounts};
use crate::engines::EngineId;
use crate::outcome::Outcome;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

/// The file name of the campaign record in a findings directory.
pub const STATS_FILE: &str = "stats.json";

/// The version of the `stats.json` layout.
pub const STATS_FORMAT: u32 = 1;

/// Seconds between samples: a 2-minute default campaign gives 24, a 1 h nightly shard 720
/// (~150 KB of JSON).
pub const SAMPLE_EVERY_S: f64 = 5.0;

/// The running counts at one moment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sample {
    /// Since the campaign started.
    pub seconds: f64,
    /// Cases checked.
    pub cases: u64,
    /// Cases per second since the previous sample (since the start for the first).
    pub cases_per_s: f64,
    /// Outcome → count.
    pub outcomes: BTreeMap<Outcome, u64>,
    /// Coverage cells with at least one case.
    pub coverage_cells: usize,
    /// Coverage cells with at least one lowered case.
    pub lowered_cells: usize,
    /// JAX confirmations (one case through one engine).
    pub jax_confirmed: u64,
    /// Findings kept.
    pub findings: u64,
}

/// Samples taken so far (module docs); `observe` is called by the progress callback.
#[derive(Debug, Default)]
pub struct Series {
    samples: Mutex<Vec<Sample>>,
}

impl Series {
    /// Records `stats` after `seconds` when [`SAMPLE_EVERY_S`] passed since the last sample
    /// (always for the first).
    pub fn observe(&self, stats: &Stats, seconds: f64) {
        let mut samples = self.samples.lock().expect("series lock");
        if samples
            .last()
            .is_some_and(|s| seconds - s.seconds < SAMPLE_EVERY_S)
        {
            return;
        }
        let next = sample(samples.last(), stats, seconds);
        samples.push(next);
    }

    /// Every sample, with a last one of the final counts.
    pub fn finish(&self, stats: &Stats, seconds: f64) -> Vec<Sample> {
        let mut samples = self.samples.lock().expect("series lock");
        if samples.last().is_none_or(|s| s.seconds < seconds) {
            let last = sample(samples.last(), stats, seconds);
            samples.push(last);
        }
        samples.clone()
    }
}

fn sample(previous: Option<&Sample>, stats: &Stats, seconds: f64) -> Sample {
    let (s0, c0) = previous.map_or((0.0, 0), |p| (p.seconds, p.cases));
    let dt = seconds - s0;
    Sample {
        seconds,
        cases: stats.cases,
        cases_per_s: if dt > 0.0 {
            stats.cases.saturating_sub(c0) as f64 / dt
        } else {
            0.0
        },
        outcomes: stats.outcomes.clone(),
        coverage_cells: stats.coverage.values().filter(|c| c.cases > 0).count(),
        lowered_cells: stats.coverage.values().filter(|c| c.lowered > 0).count(),
        jax_confirmed: stats.jax_confirmed,
        findings: stats.findings,
    }
}

/// A finding a campaign filed into a new directory (what its findings sink reports).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewFinding {
    /// The directory.
    pub dir: PathBuf,
    /// The outcome.
    pub outcome: Outcome,
    /// The engine that decided it, if any.
    pub engine: Option<EngineId>,
    /// Its signature key.
    pub signature: String,
    /// `None` when it was reduced; otherwise why not.
    pub not_reduced: Option<String>,
}

/// An engine the campaign was asked for that never ran, and why.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Unavailable {
    /// The engine.
    pub engine: EngineId,
    /// Why it did not run.
    #[serde(default)]
    pub reason: String,
}

/// The Helion environment of a campaign with a Helion engine.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HelionVersions {
    /// `helion.__version__`.
    pub helion: Option<String>,
    /// `torch.__version__`.
    pub torch: Option<String>,
    /// The Helion environment's JAX.
    pub jax: Option<String>,
}

/// Verdict agreement with real Helion as `stats.json` spells it: the totals
/// ([`Stats::helion_agreement`]) and both tables.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HelionAgreementRecord {
    /// Cases where Helion's run showed its verdict.
    pub cases: u64,
    /// Of those, cases where ours was the same.
    pub agree: u64,
    /// Cases refused by both with one class.
    pub messages: u64,
    /// Of those, cases with our rule's message.
    pub messages_agree: u64,
    /// [`Stats::helion_verdicts`].
    pub by_verdict: BTreeMap<String, Agreement>,
    /// [`Stats::helion_verdicts_by_form`].
    pub by_index_form: BTreeMap<String, Agreement>,
}

impl HelionAgreementRecord {
    /// The record of `stats`' tables; `None` when Helion showed no verdict.
    pub fn of(stats: &Stats) -> Option<HelionAgreementRecord> {
        let all = stats.helion_agreement();
        (all.cases > 0).then(|| HelionAgreementRecord {
            cases: all.cases,
            agree: all.agree,
            messages: all.messages,
            messages_agree: all.messages_agree,
            by_verdict: stats.helion_verdicts.clone(),
            by_index_form: stats.helion_verdicts_by_form.clone(),
        })
    }
}

/// One source shard's own record in a merged one.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardStats {
    /// The shard's id (`finding::merge::ShardSource::id`, from its seeds).
    pub id: String,
    /// The findings directory it was merged from.
    pub origin: String,
    /// Its `stats.json`.
    pub record: CampaignRecord,
}

/// `stats.json` (module docs). Fields a record may lack (older ones, merged ones) read as
/// empty; the summary's fields are [`Stats`]'s, at the top level.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CampaignRecord {
    /// [`STATS_FORMAT`].
    pub format: u32,
    /// The campaign's seed (none in a merged record).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Whether it was stopped by Ctrl-C (in a merged record: any shard was).
    #[serde(default)]
    pub interrupted: bool,
    /// The engines it ran.
    #[serde(default)]
    pub engines: Vec<EngineId>,
    /// The engines it was asked for that never ran.
    #[serde(default)]
    pub engines_unavailable: Vec<Unavailable>,
    /// The Helion environment, when a Helion engine ran.
    #[serde(default)]
    pub helion: Option<HelionVersions>,
    /// Wall-clock seconds (in a merged record: the longest shard's, as shards run side by
    /// side).
    #[serde(default)]
    pub seconds: f64,
    /// New in-process findings the JAX engines did not reproduce.
    #[serde(default)]
    pub jax_not_reproduced: u64,
    /// The findings this run filed into new directories (none in a merged record, whose
    /// directories are renumbered).
    #[serde(default)]
    pub new_findings: Vec<NewFinding>,
    /// The findings directory as the campaign was given it.
    #[serde(default)]
    pub out: Option<PathBuf>,
    /// The summary.
    #[serde(flatten)]
    pub stats: Stats,
    /// Verdict agreement with Helion, when it showed verdicts.
    #[serde(default)]
    pub helion_verdict_agreement: Option<HelionAgreementRecord>,
    /// The time series.
    #[serde(default)]
    pub series: Vec<Sample>,
    /// A merged record's source shards, by id, each with its own record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardStats>,
    /// A merged record's source shards that had no `stats.json` (their counts are not in the
    /// summary).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stats_missing: Vec<String>,
}

impl CampaignRecord {
    /// Parses `stats.json`, with the Helion tables of a record `pallas-diff fuzz` wrote (which
    /// keeps them only under `helion_verdict_agreement`) moved into [`Self::stats`]. A field
    /// written as `null` reads as absent (`pallas-diff fuzz` writes `"helion_health": null`
    /// when Helion ran nothing, and the summary's fields are not options).
    pub fn parse(text: &str) -> Result<CampaignRecord, serde_json::Error> {
        let mut record: CampaignRecord = match serde_json::from_str(text) {
            Ok(r) => r,
            Err(first) => {
                let mut value: serde_json::Value = serde_json::from_str(text)?;
                if let Some(fields) = value.as_object_mut() {
                    fields.retain(|_, v| !v.is_null());
                }
                // The first error has the line and column; the second would have neither.
                serde_json::from_value(value).map_err(|_| first)?
            }
        };
        if let Some(a) = &record.helion_verdict_agreement
            && record.stats.helion_verdicts.is_empty()
            && record.stats.helion_verdicts_by_form.is_empty()
        {
            record.stats.helion_verdicts = a.by_verdict.clone();
            record.stats.helion_verdicts_by_form = a.by_index_form.clone();
        }
        Ok(record)
    }

    /// The record of a merged campaign: the shards' summaries summed ([`Stats::merge`]), their
    /// series merged by time ([`merge_series`]), and each shard's own record kept. `shards` are
    /// single campaigns' records (a merged record's shards, not the merged record itself).
    pub fn merged(shards: Vec<ShardStats>, stats_missing: Vec<String>) -> CampaignRecord {
        let mut stats = Stats::default();
        let mut unavailable = std::collections::BTreeSet::new();
        for s in &shards {
            stats.merge(&s.record.stats);
            unavailable.extend(s.record.engines_unavailable.iter().cloned());
        }
        let records = || shards.iter().map(|s| &s.record);
        CampaignRecord {
            format: STATS_FORMAT,
            seed: None,
            interrupted: records().any(|r| r.interrupted),
            // One contract: every shard ran the same engines.
            engines: records()
                .map(|r| r.engines.clone())
                .next()
                .unwrap_or_default(),
            engines_unavailable: unavailable.into_iter().collect(),
            helion: records().find_map(|r| r.helion.clone()),
            seconds: records().map(|r| r.seconds).fold(0.0, f64::max),
            jax_not_reproduced: records().map(|r| r.jax_not_reproduced).sum(),
            new_findings: Vec::new(),
            out: None,
            helion_verdict_agreement: HelionAgreementRecord::of(&stats),
            stats,
            series: merge_series(records().map(|r| r.series.as_slice())),
            shards,
            stats_missing,
        }
    }
}

fn add_counts<K: Ord + Clone>(into: &mut BTreeMap<K, u64>, from: &BTreeMap<K, u64>) {
    for (k, n) in from {
        *into.entry(k.clone()).or_default() += n;
    }
}

impl Stats {
    /// Adds the counts of another shard of the same campaign to these. Every field is named
    /// (no `..`): a field added to [`Stats`] does not compile here until it is merged.
    pub fn merge(&mut self, other: &Stats) {
        let Stats {
            cases,
            thinned,
            outcomes,
            findings,
            duplicates,
            jax_confirmed,
            jax_confirmed_by,
            jax_skipped,
            confirm_cells,
            confirm_cells_by,
            confirm_cells_missing,
            coverage_confirmed,
            known_issues,
            unsupported,
            coverage,
            helion_verdicts,
            helion_verdicts_by_form,
            helion_health,
            helion_values,
            helion_reach,
        } = other;
        self.cases += cases;
        self.thinned += thinned;
        add_counts(&mut self.outcomes, outcomes);
        // Each shard's kept findings: the merged buckets.json has the deduplicated count.
        self.findings += findings;
        self.duplicates += duplicates;
        self.jax_confirmed += jax_confirmed;
        add_counts(&mut self.jax_confirmed_by, jax_confirmed_by);
        self.jax_skipped += jax_skipped;
        // These count distinct confirmation cells, which the record does not list: two shards'
        // cells may be the same ones, so a sum could count a cell twice; the larger count is
        // what is known to be reached.
        self.confirm_cells = self.confirm_cells.max(*confirm_cells);
        for (engine, n) in confirm_cells_by {
            let known = self.confirm_cells_by.entry(*engine).or_default();
            *known = (*known).max(*n);
        }
        // A cell one shard did not confirm may be confirmed in another; the record does not
        // list confirmed cells, so the merged list is what the shards reported, not rechecked.
        for (engine, cells) in confirm_cells_missing {
            let known = self.confirm_cells_missing.entry(*engine).or_default();
            known.extend(cells.iter().cloned());
            known.sort();
            known.dedup();
            known.truncate(super::stats::UNCONFIRMED_LISTED);
        }
        for (cell, by_engine) in coverage_confirmed {
            add_counts(
                self.coverage_confirmed.entry(cell.clone()).or_default(),
                by_engine,
            );
        }
        add_counts(&mut self.known_issues, known_issues);
        add_counts(&mut self.unsupported, unsupported);
        for (key, c) in coverage {
            self.coverage.entry(key.clone()).or_default().merge(c);
        }
        for (key, a) in helion_verdicts {
            self.helion_verdicts
                .entry(key.clone())
                .or_default()
                .merge(a);
        }
        for (key, a) in helion_verdicts_by_form {
            self.helion_verdicts_by_form
                .entry(key.clone())
                .or_default()
                .merge(a);
        }
        self.helion_health.merge(helion_health);
        for (engine, v) in helion_values {
            self.helion_values.entry(*engine).or_default().merge(v);
        }
        for (key, r) in helion_reach {
            self.helion_reach.entry(key.clone()).or_default().merge(r);
        }
    }
}

impl Reach {
    /// Adds another shard's counts of the same construct (every field named).
    pub fn merge(&mut self, other: &Reach) {
        let Reach { ran, reached } = other;
        self.ran += ran;
        self.reached += reached;
    }
}

impl HelionHealthCounts {
    /// Adds another shard's counts (every field named, as in [`Stats::merge`]).
    pub fn merge(&mut self, other: &HelionHealthCounts) {
        let HelionHealthCounts {
            cases,
            lowered,
            refused,
            cannot_run,
        } = other;
        self.cases += cases;
        self.lowered += lowered;
        add_counts(&mut self.refused, refused);
        add_counts(&mut self.cannot_run, cannot_run);
    }
}

impl ValueCounts {
    /// Adds another shard's counts of the same engine (every field named).
    pub fn merge(&mut self, other: &ValueCounts) {
        let ValueCounts {
            cases,
            agree,
            helion_differs,
            ours_differ,
            both_differ,
        } = other;
        self.cases += cases;
        self.agree += agree;
        self.helion_differs += helion_differs;
        self.ours_differ += ours_differ;
        self.both_differ += both_differ;
    }
}

impl Cell {
    /// Adds another shard's counts of the same cell (every field named, as in [`Stats::merge`]).
    pub fn merge(&mut self, other: &Cell) {
        let Cell {
            cases,
            lowered,
            rejected,
            helion_ran,
            helion_reached,
        } = other;
        self.cases += cases;
        self.lowered += lowered;
        self.rejected += rejected;
        self.helion_ran += helion_ran;
        self.helion_reached += helion_reached;
    }
}

impl Agreement {
    /// Adds another shard's counts of the same verdict (every field named).
    pub fn merge(&mut self, other: &Agreement) {
        let Agreement {
            cases,
            agree,
            messages,
            messages_agree,
        } = other;
        self.cases += cases;
        self.agree += agree;
        self.messages += messages;
        self.messages_agree += messages_agree;
    }
}

/// Shards' series merged by time: one sample every [`SAMPLE_EVERY_S`] from the first grid time
/// to the longest shard's end, and one at that end. At each time every shard counts with its
/// last sample at or before it (its final one once it ended), so the last merged sample sums the
/// shards' final counts. Counts are summed; coverage cells are the largest of any shard's (cells
/// of two shards may be the same ones, so a sum could count one twice); cases/s is the sum of
/// the shards' rates over the sample interval that covers the time (a shard that ended adds
/// nothing), not a difference of the stepped counts, which would jump where one shard's sample
/// falls just after a grid time. Shards of a CI matrix run side by side, so their elapsed
/// seconds line up; a shard's sample taken just after a grid time counts from the next one (a
/// lag under [`SAMPLE_EVERY_S`]).
pub fn merge_series<'a>(series: impl IntoIterator<Item = &'a [Sample]>) -> Vec<Sample> {
    let series: Vec<&[Sample]> = series.into_iter().filter(|s| !s.is_empty()).collect();
    let end = series
        .iter()
        .filter_map(|s| s.last())
        .map(|s| s.seconds)
        .fold(0.0, f64::max);
    if series.is_empty() {
        return Vec::new();
    }
    let mut times: Vec<f64> = (1..)
        .map(|k| k as f64 * SAMPLE_EVERY_S)
        .take_while(|t| *t < end)
        .collect();
    times.push(end);
    let mut out: Vec<Sample> = Vec::with_capacity(times.len());
    for t in times {
        let mut at = Sample {
            seconds: t,
            ..Sample::default()
        };
        for s in &series {
            // The shard's rate over the interval that covers t: its first sample at or after t.
            if let Some(covering) = s.iter().find(|x| x.seconds >= t) {
                at.cases_per_s += covering.cases_per_s;
            }
            // The last sample at or before t (the series is in time order).
            let Some(last) = s.iter().take_while(|x| x.seconds <= t).last() else {
                continue;
            };
            at.cases += last.cases;
            add_counts(&mut at.outcomes, &last.outcomes);
            at.coverage_cells = at.coverage_cells.max(last.coverage_cells);
            at.lowered_cells = at.lowered_cells.max(last.lowered_cells);
            at.jax_confirmed += last.jax_confirmed;
            at.findings += last.findings;
        }
        out.push(at);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_spaced_and_end_with_the_final_counts() {
        let series = Series::default();
        let mut st = Stats::default();
        for (t, cases) in [(0.25, 10), (2.0, 80), (5.5, 200), (6.0, 210), (11.0, 400)] {
            st.cases = cases;
            series.observe(&st, t);
        }
        st.cases = 450;
        let samples = series.finish(&st, 12.0);
        let at: Vec<f64> = samples.iter().map(|s| s.seconds).collect();
        assert_eq!(at, vec![0.25, 5.5, 11.0, 12.0]);
        // 200 - 10 cases in 5.25 s.
        assert!((samples[1].cases_per_s - 190.0 / 5.25).abs() < 1e-9);
        assert_eq!(samples[3].cases, 450);
    }

    /// Counts keyed by what `k` parses to (an outcome, an engine, a name).
    fn outcomes<K: std::str::FromStr + Ord>(pairs: &[(&str, u64)]) -> BTreeMap<K, u64>
    where
        K::Err: std::fmt::Debug,
    {
        pairs
            .iter()
            .map(|(k, n)| (k.parse().expect("a key"), *n))
            .collect()
    }

    fn shard_stats(cases: u64, agree: u64, mismatch: u64) -> Stats {
        let mut st = Stats {
            cases,
            outcomes: outcomes(&[("agree", agree), ("mismatch", mismatch)]),
            findings: 1,
            duplicates: mismatch - 1,
            jax_confirmed: 4,
            jax_confirmed_by: outcomes(&[("pallas-tpu-interpret", 4)]),
            jax_skipped: 2,
            confirm_cells: 3,
            confirm_cells_by: outcomes(&[("pallas-tpu-interpret", 3)]),
            known_issues: outcomes(&[("reshape-ref", 1)]),
            helion_health: HelionHealthCounts {
                cases: 5,
                lowered: 3,
                refused: outcomes(&[("InvalidConfig", 1)]),
                cannot_run: outcomes(&[("TypeError", 1)]),
            },
            ..Stats::default()
        };
        st.coverage.insert(
            "slice/unroll/tail".into(),
            Cell {
                cases,
                lowered: cases - 2,
                rejected: 2,
                helion_ran: 1,
                helion_reached: 1,
            },
        );
        st.coverage_confirmed.insert(
            "slice/unroll/tail".into(),
            outcomes(&[("pallas-tpu-interpret", 4)]),
        );
        st.helion_verdicts.insert(
            "lowered".into(),
            Agreement {
                cases: 5,
                agree: 4,
                messages: 0,
                messages_agree: 0,
            },
        );
        st.helion_reach
            .insert("surface/attr-count".into(), Reach { ran: 5, reached: 2 });
        st
    }

    #[test]
    fn merged_stats_sum_every_count_and_keep_distinct_cells_at_the_larger() {
        let mut st = shard_stats(100, 90, 10);
        st.merge(&shard_stats(50, 45, 5));
        assert_eq!(st.cases, 150);
        assert_eq!(st.outcomes, outcomes(&[("agree", 135), ("mismatch", 15)]));
        assert_eq!((st.findings, st.duplicates), (2, 13));
        assert_eq!((st.jax_confirmed, st.jax_skipped), (8, 4));
        assert_eq!(
            st.jax_confirmed_by[&"pallas-tpu-interpret"
                .parse::<crate::engines::EngineId>()
                .unwrap()],
            8
        );
        assert_eq!(st.confirm_cells, 3, "distinct cells are not summed");
        assert_eq!(
            st.confirm_cells_by[&"pallas-tpu-interpret"
                .parse::<crate::engines::EngineId>()
                .unwrap()],
            3
        );
        assert_eq!(st.known_issues["reshape-ref"], 2);
        let c = st.coverage["slice/unroll/tail"];
        assert_eq!(
            (
                c.cases,
                c.lowered,
                c.rejected,
                c.helion_ran,
                c.helion_reached
            ),
            (150, 146, 4, 2, 2)
        );
        assert_eq!(
            st.coverage_confirmed["slice/unroll/tail"][&"pallas-tpu-interpret"
                .parse::<crate::engines::EngineId>()
                .unwrap()],
            8
        );
        let a = st.helion_verdicts["lowered"];
        assert_eq!((a.cases, a.agree), (10, 8));
        let r = st.helion_reach["surface/attr-count"];
        assert_eq!((r.ran, r.reached), (10, 4));
        let h = &st.helion_health;
        assert_eq!((h.cases, h.lowered), (10, 6));
        assert_eq!(
            (h.refused["InvalidConfig"], h.cannot_run["TypeError"]),
            (2, 2)
        );
        // Merging into nothing gives the shard.
        let mut empty = Stats::default();
        empty.merge(&shard_stats(100, 90, 10));
        assert_eq!(
            serde_json::to_value(&empty).unwrap(),
            serde_json::to_value(shard_stats(100, 90, 10)).unwrap()
        );
    }

    /// A record as `pallas-diff fuzz` writes it (its field set, trimmed).
    const FUZZ_RECORD: &str = r#"{"format":1,"seed":4,"interrupted":false,
        "engines":["oracle","pallas-sim"],
        "engines_unavailable":[{"engine":"helion-pallas","reason":"no venv"}],
        "helion":null,
        "helion_verdict_agreement":{"cases":3,"agree":2,"messages":1,"messages_agree":1,
            "by_verdict":{"lowered":{"cases":3,"agree":2,"messages":1,"messages_agree":1}},
            "by_index_form":{"slice":{"cases":3,"agree":2,"messages":1,"messages_agree":1}}},
        "new_findings":[{"dir":"f/0001-x","outcome":"mismatch","engine":"pallas-sim",
            "signature":"k","not_reduced":null}],
        "cases":150,"seconds":2.5,"outcomes":{"agree":140,"mismatch":10},
        "findings":2,"duplicates":8,"jax_not_reproduced":0,"jax_confirmed":0,"jax_skipped":0,
        "known_issues":{},
        "coverage":{"slice/unroll/tail":{"cases":20,"lowered":18,"rejected":2}},
        "coverage_confirmed":{},"out":"f","helion_health":null,
        "series":[{"seconds":0.5,"cases":40,"cases_per_s":80.0,"outcomes":{"agree":40},
            "coverage_cells":3,"lowered_cells":2,"jax_confirmed":0,"findings":0}]}"#;

    #[test]
    fn a_fuzz_record_parses_with_its_helion_tables_in_the_summary() {
        let r = CampaignRecord::parse(FUZZ_RECORD).unwrap();
        assert_eq!((r.seed, r.seconds, r.stats.cases), (Some(4), 2.5, 150));
        assert_eq!(r.stats.outcomes[&Outcome::Mismatch], 10);
        assert_eq!(r.stats.coverage["slice/unroll/tail"].helion_ran, 0);
        assert_eq!(r.stats.helion_verdicts["lowered"].agree, 2);
        assert_eq!(r.stats.helion_verdicts_by_form["slice"].cases, 3);
        assert_eq!(
            r.engines_unavailable[0].engine,
            EngineId::Worker(tpu_runner::Mode::HelionPallas)
        );
        assert_eq!(r.series[0].cases, 40);
        assert!(r.shards.is_empty());
        assert_eq!(r.stats.helion_health.cases, 0, "null reads as none");
        let with_health = FUZZ_RECORD.replace(
            "\"helion_health\":null",
            "\"helion_health\":{\"cases\":4,\"lowered\":3,\"refused\":{},\"cannot_run\":{\"TypeError\":1}}",
        );
        let h = CampaignRecord::parse(&with_health)
            .unwrap()
            .stats
            .helion_health;
        assert_eq!((h.cases, h.cannot_run["TypeError"]), (4, 1));
        let e = CampaignRecord::parse("{\"format\":1,\n\"cases\":\"many\"}").unwrap_err();
        assert_eq!(e.line(), 2, "a shape error keeps its position: {e}");
        // A merged record reads back as written.
        let shard = |id: &str| ShardStats {
            id: id.into(),
            origin: format!("shards/{id}"),
            record: r.clone(),
        };
        let merged = CampaignRecord::merged(vec![shard("seed-4"), shard("seed-5")], vec![]);
        let text = serde_json::to_string(&merged).unwrap();
        let back = CampaignRecord::parse(&text).unwrap();
        assert_eq!(back.stats.cases, 300);
        assert_eq!(back.stats.helion_verdicts["lowered"].agree, 4);
        assert_eq!(back.helion_verdict_agreement.as_ref().unwrap().agree, 4);
        assert_eq!(back.shards.len(), 2);
        assert_eq!(back.shards[1].record.seed, Some(4));
        assert!(
            back.new_findings.is_empty(),
            "shard paths are not the merge's"
        );
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            serde_json::to_value(&merged).unwrap()
        );
    }

    fn at(seconds: f64, cases: u64, coverage_cells: usize) -> Sample {
        Sample {
            seconds,
            cases,
            // Whole rates, so that sums compare exactly.
            cases_per_s: (cases as f64 / seconds).round(),
            outcomes: outcomes(&[("agree", cases)]),
            coverage_cells,
            findings: cases / 100,
            ..Sample::default()
        }
    }

    #[test]
    fn series_merge_by_time_and_end_with_the_summed_final_counts() {
        let long = [
            at(0.5, 10, 2),
            at(5.5, 110, 4),
            at(10.5, 210, 5),
            at(12.0, 240, 5),
        ];
        let short = [at(0.2, 5, 3), at(4.0, 60, 6)];
        let merged = merge_series([&long[..], &short[..]]);
        let times: Vec<f64> = merged.iter().map(|s| s.seconds).collect();
        assert_eq!(times, vec![5.0, 10.0, 12.0]);
        // At 5 s: long's 0.5 s sample, short's final one.
        assert_eq!(merged[0].cases, 10 + 60);
        assert_eq!(merged[0].coverage_cells, 6, "the larger, not the sum");
        assert_eq!(merged[1].cases, 110 + 60);
        assert_eq!(merged[2].cases, 240 + 60);
        assert_eq!(merged[2].outcomes[&Outcome::Agree], 300);
        assert_eq!(merged[2].findings, 2);
        // At 5 s: long's interval ending at 5.5 s; short ended before.
        assert_eq!(merged[0].cases_per_s, (110.0f64 / 5.5).round());
        // At 12 s: long's last sample, and short nothing.
        assert_eq!(merged[2].cases_per_s, 20.0);
        assert!(merge_series(std::iter::empty::<&[Sample]>()).is_empty());
        // A campaign shorter than one grid step is its final counts.
        let tiny = merge_series([&short[..]]);
        assert_eq!(tiny.len(), 1);
        assert_eq!((tiny[0].seconds, tiny[0].cases), (4.0, 60));
    }

    #[test]
    fn a_merged_record_names_its_shards_and_those_without_a_record() {
        let mut one = CampaignRecord::parse(FUZZ_RECORD).unwrap();
        one.seconds = 9.0;
        one.interrupted = true;
        let two = CampaignRecord::parse(FUZZ_RECORD).unwrap();
        let m = CampaignRecord::merged(
            vec![
                ShardStats {
                    id: "seed-1".into(),
                    origin: "a".into(),
                    record: one,
                },
                ShardStats {
                    id: "seed-2".into(),
                    origin: "b".into(),
                    record: two,
                },
            ],
            vec!["seed-3".into()],
        );
        assert_eq!((m.seed, m.seconds, m.interrupted), (None, 9.0, true));
        assert_eq!(m.engines, [EngineId::Reference, EngineId::PallasSim]);
        assert_eq!(m.engines_unavailable.len(), 1, "one engine, named once");
        assert_eq!(m.stats_missing, ["seed-3"]);
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["shards"][0]["id"], "seed-1");
        assert_eq!(json["stats_missing"][0], "seed-3");
        assert_eq!(json["cases"], 300);
    }
}
