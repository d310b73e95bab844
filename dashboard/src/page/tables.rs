//! The page's shaded tables: the coverage heat map and Helion's verdict agreement, each cell
//! shaded by what it says (a share as a colour), gaps flagged.

use super::share;
use fuzz::campaign::stats::{Agreement, HelionHealthCounts, Reach, ReachFlag, Stats};
use serde::Serialize;
use std::collections::BTreeSet;

/// A table whose cells are shaded by what they say.
#[derive(Debug, Default, Serialize)]
pub struct HeatMap {
    /// Column headings (after the row key).
    pub columns: Vec<String>,
    /// Rows.
    pub rows: Vec<HeatRow>,
}

/// One coverage cell's row.
#[derive(Debug, Serialize)]
pub struct HeatRow {
    /// `form/loop type/tail|no-tail`.
    pub key: String,
    /// One entry per column.
    pub cells: Vec<HeatCell>,
}

/// One shaded cell.
#[derive(Debug, Serialize)]
pub struct HeatCell {
    /// What it shows.
    pub text: String,
    /// Its CSS background and text colour.
    pub style: String,
    /// The tooltip: what the shade means.
    pub title: String,
    /// Whether it is a gap (nothing where something was expected).
    pub gap: bool,
}

/// Verdict agreement with Helion.
#[derive(Debug, Serialize)]
pub struct HelionView {
    /// Over every case.
    pub total: AgreementRow,
    /// By our verdict.
    pub by_verdict: Vec<AgreementRow>,
    /// By index form.
    pub by_form: Vec<AgreementRow>,
}

/// One row of an agreement table.
#[derive(Debug, Serialize)]
pub struct AgreementRow {
    /// Our verdict or the index form.
    pub key: String,
    /// Cases where Helion showed its verdict.
    pub cases: u64,
    /// Of those, agreeing.
    pub agree: u64,
    /// The agreeing share in percent.
    pub share: f64,
    /// Refused by both with one class.
    pub messages: u64,
    /// Of those, with our rule's message.
    pub messages_agree: u64,
    /// The shade of the share.
    pub style: String,
}

/// A share in 0..=1 as a background of hue `hue` (pale at 0, saturated at 1) with a legible
/// text colour.
pub fn shade(share: f64, hue: u16) -> String {
    let share = if share.is_finite() {
        share.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let lightness = 97.0 - 52.0 * share;
    let text = if lightness < 62.0 { "#fff" } else { "#111" };
    format!("background:hsl({hue},65%,{lightness:.0}%);color:{text}")
}

/// The shade of a gap: nothing where the row shows something was expected.
const GAP: &str = "background:hsl(0,75%,88%);color:#700";

pub(crate) const HUE_CASES: u16 = 215;
pub(crate) const HUE_LOWERED: u16 = 140;
pub(crate) const HUE_REJECTED: u16 = 30;
pub(crate) const HUE_CONFIRMED: u16 = 275;
pub(crate) const HUE_HELION: u16 = 190;

/// The coverage heat map of a summary: cases (shaded by the largest cell), lowered and rejected
/// (by their share of the cell's cases), each JAX engine's confirmations (by their share of the
/// lowered cases; none of a lowered cell is a gap) and, when Helion ran, its reach (cases that
/// got to its code generation of those it ran; under 1% is a gap, as in the campaign's table).
pub fn coverage_map(stats: &Stats) -> HeatMap {
    let engines: BTreeSet<&fuzz::engines::EngineId> = stats
        .coverage_confirmed
        .values()
        .flat_map(|m| m.keys())
        .chain(stats.jax_confirmed_by.keys())
        .collect();
    let helion = stats.coverage.values().any(|c| c.helion_ran > 0);
    let mut columns: Vec<String> = ["cases", "lowered", "rejected"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    columns.extend(engines.iter().map(|e| format!("{e} confirmed")));
    if helion {
        columns.push("helion codegen reached / ran".into());
    }
    let most = stats.coverage.values().map(|c| c.cases).max().unwrap_or(0);
    let rows = stats
        .coverage
        .iter()
        .map(|(key, c)| {
            let mut cells = vec![
                HeatCell {
                    text: c.cases.to_string(),
                    style: shade(share(c.cases, most), HUE_CASES),
                    title: format!("{} cases; the most in one cell: {most}", c.cases),
                    gap: false,
                },
                HeatCell {
                    text: c.lowered.to_string(),
                    style: shade(share(c.lowered, c.cases), HUE_LOWERED),
                    title: format!(
                        "{:.0}% of the cell's cases lowered",
                        100.0 * share(c.lowered, c.cases)
                    ),
                    gap: false,
                },
                HeatCell {
                    text: c.rejected.to_string(),
                    style: shade(share(c.rejected, c.cases), HUE_REJECTED),
                    title: format!(
                        "{:.0}% of the cell's cases rejected",
                        100.0 * share(c.rejected, c.cases)
                    ),
                    gap: false,
                },
            ];
            for e in &engines {
                let n = stats
                    .coverage_confirmed
                    .get(key)
                    .and_then(|m| m.get(*e))
                    .copied()
                    .unwrap_or(0);
                let gap = n == 0 && c.lowered > 0;
                cells.push(HeatCell {
                    text: n.to_string(),
                    style: if gap {
                        GAP.to_string()
                    } else {
                        shade(share(n, c.lowered), HUE_CONFIRMED)
                    },
                    title: if gap {
                        format!("{e} confirmed none of the {} lowered cases", c.lowered)
                    } else {
                        format!("{e} confirmed {n} of {} lowered cases", c.lowered)
                    },
                    gap,
                });
            }
            if helion {
                let reach = Reach {
                    ran: c.helion_ran,
                    reached: c.helion_reached,
                };
                let flag = ReachFlag::of_cell(key, reach);
                let gap = flag == ReachFlag::Gap;
                let refusal_test = flag == ReachFlag::RefusalTest;
                cells.push(HeatCell {
                    text: format!("{}/{}", c.helion_reached, c.helion_ran),
                    style: if gap {
                        GAP.to_string()
                    } else {
                        shade(share(c.helion_reached, c.helion_ran), HUE_HELION)
                    },
                    title: if gap {
                        "under 1% reached Helion's code generation: a generator gap".into()
                    } else if refusal_test {
                        "under 1% reached Helion's code generation: an index form drawn to test \
                         a refusal"
                            .into()
                    } else {
                        format!(
                            "{} of {} cases Helion ran reached its code generation",
                            c.helion_reached, c.helion_ran
                        )
                    },
                    gap,
                });
            }
            HeatRow {
                key: key.clone(),
                cells,
            }
        })
        .collect();
    HeatMap { columns, rows }
}

pub(crate) fn agreement_row(key: &str, a: &Agreement) -> AgreementRow {
    AgreementRow {
        key: key.to_string(),
        cases: a.cases,
        agree: a.agree,
        share: a.percent(),
        messages: a.messages,
        messages_agree: a.messages_agree,
        style: shade(share(a.agree, a.cases), HUE_LOWERED),
    }
}

/// Verdict agreement with Helion, when it showed any verdict.
pub fn helion_view(stats: &Stats) -> Option<HelionView> {
    let total = stats.helion_agreement();
    (total.cases > 0).then(|| HelionView {
        total: agreement_row("all cases", &total),
        by_verdict: stats
            .helion_verdicts
            .iter()
            .map(|(k, a)| agreement_row(k, a))
            .collect(),
        by_form: stats
            .helion_verdicts_by_form
            .iter()
            .map(|(k, a)| agreement_row(k, a))
            .collect(),
    })
}

/// What real Helion made of the generated cases as rendered (the generator's health).
#[derive(Debug, Serialize)]
pub struct HealthView {
    /// Cases Helion ran.
    pub cases: u64,
    /// (label, cases, share in percent): lowered, refused cleanly, cannot run.
    pub shares: Vec<(String, u64, f64)>,
    /// Refusals by error class, most frequent first.
    pub refused: Vec<(String, u64)>,
    /// Cases Helion could not run, by cause, most frequent first.
    pub cannot_run: Vec<(String, u64)>,
    /// Whether more than the fidelity target (2%) could not run.
    pub over_target: bool,
}

fn most_frequent_first(counts: &std::collections::BTreeMap<String, u64>) -> Vec<(String, u64)> {
    let mut rows: Vec<(String, u64)> = counts.iter().map(|(k, n)| (k.clone(), *n)).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    rows
}

/// The generator's health under real Helion, when Helion ran any case.
pub fn health_view(stats: &Stats) -> Option<HealthView> {
    let h: &HelionHealthCounts = &stats.helion_health;
    (h.cases > 0).then(|| {
        let pct = |n: u64| 100.0 * share(n, h.cases);
        HealthView {
            cases: h.cases,
            shares: vec![
                ("lowered".into(), h.lowered, pct(h.lowered)),
                (
                    "refused cleanly".into(),
                    h.refused_total(),
                    pct(h.refused_total()),
                ),
                (
                    "cannot run".into(),
                    h.cannot_run_total(),
                    pct(h.cannot_run_total()),
                ),
            ],
            refused: most_frequent_first(&h.refused),
            cannot_run: most_frequent_first(&h.cannot_run),
            over_target: pct(h.cannot_run_total()) > 2.0,
        }
    })
}
