//! The page's charts as data: series over a shared x axis (seconds since the campaign started),
//! drawn in the browser by uPlot from the JSON the page carries.

use super::share;
use fuzz::campaign::record::{CampaignRecord, Sample};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One chart: series over a shared x axis (seconds), drawn by the page's script.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Chart {
    /// The HTML id of its container.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The y axis' label.
    pub y_label: String,
    /// Seconds since the campaign started.
    pub x: Vec<f64>,
    /// Named series, one value (or gap) per x.
    pub series: Vec<ChartSeries>,
}

/// One line of a chart.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChartSeries {
    /// Its legend.
    pub label: String,
    /// One value per x of the chart; `None` where it has no sample.
    pub values: Vec<Option<f64>>,
}

/// The charts of a record: outcome shares, cases/s (the whole and, for a merge, each shard) and
/// coverage, confirmations and findings, over time. None without samples.
pub fn charts(id: &str, record: &CampaignRecord) -> Vec<Chart> {
    let series = &record.series;
    if series.is_empty() {
        return Vec::new();
    }
    let x: Vec<f64> = series.iter().map(|s| s.seconds).collect();
    let outcomes: BTreeSet<&fuzz::outcome::Outcome> =
        series.iter().flat_map(|s| s.outcomes.keys()).collect();
    let shares = Chart {
        id: format!("{id}-outcomes"),
        title: "outcome shares over time".into(),
        y_label: "% of cases".into(),
        x: x.clone(),
        series: outcomes
            .iter()
            .map(|o| ChartSeries {
                label: o.to_string(),
                values: series
                    .iter()
                    .map(|s| {
                        // No case yet: no share (a gap), not 0%.
                        let n = s.outcomes.get(*o).copied().unwrap_or(0);
                        (s.cases > 0).then(|| 100.0 * share(n, s.cases))
                    })
                    .collect(),
            })
            .collect(),
    };
    let rate = rate_chart(id, record);
    let line = |label: &str, f: &dyn Fn(&Sample) -> f64| ChartSeries {
        label: label.into(),
        values: series.iter().map(|s| Some(f(s))).collect(),
    };
    let reach = Chart {
        id: format!("{id}-reach"),
        title: "coverage, JAX confirmations and findings over time".into(),
        y_label: "count".into(),
        x,
        series: vec![
            line("coverage cells reached", &|s| s.coverage_cells as f64),
            line("cells with a lowered case", &|s| s.lowered_cells as f64),
            line("JAX-confirmed", &|s| s.jax_confirmed as f64),
            line("findings", &|s| s.findings as f64),
        ],
    };
    vec![shares, rate, reach]
}

/// Cases/s over time: the record's series, and each shard's own when it is a merge (on the
/// union of their sample times, gaps where a series has no sample).
fn rate_chart(id: &str, record: &CampaignRecord) -> Chart {
    let mut lines: Vec<(String, &[Sample])> = vec![(
        if record.shards.is_empty() {
            "cases/s".into()
        } else {
            "all shards".into()
        },
        &record.series,
    )];
    for s in &record.shards {
        lines.push((s.id.clone(), &s.record.series));
    }
    // f64 seconds as exact bit patterns: the union of sample times, in order.
    let times: BTreeSet<u64> = lines
        .iter()
        .flat_map(|(_, ss)| ss.iter().map(|s| s.seconds.to_bits()))
        .collect();
    let mut x: Vec<f64> = times.into_iter().map(f64::from_bits).collect();
    x.sort_by(f64::total_cmp);
    let series = lines
        .into_iter()
        .map(|(label, ss)| {
            let at: BTreeMap<u64, f64> = ss
                .iter()
                .map(|s| (s.seconds.to_bits(), s.cases_per_s))
                .collect();
            ChartSeries {
                label,
                values: x.iter().map(|t| at.get(&t.to_bits()).copied()).collect(),
            }
        })
        .collect();
    Chart {
        id: format!("{id}-rate"),
        title: "cases/s over time".into(),
        y_label: "cases/s".into(),
        x,
        series,
    }
}
