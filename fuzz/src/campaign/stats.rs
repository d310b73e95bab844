//! Campaign statistics: outcome counts in a map (never per-engine hard-coded fields), coverage
//! by index form × loop type × tail/no-tail, and the final table.

use crate::check::HelionHealth;
use crate::engines::EngineId;
use crate::generators::{Feature, IndexForm};
use crate::outcome::Outcome;
use lang::ir::LoopType;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Coverage of one (index form, loop type, in-branch) cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Cell {
    /// Cases that exercise it.
    pub cases: u64,
    /// Of those, lowered by the compiler.
    pub lowered: u64,
    /// Of those, rejected by the compiler.
    pub rejected: u64,
    /// Of those, run by real Helion (campaigns with a Helion engine).
    pub helion_ran: u64,
    /// Of those, the ones that reached Helion's code generation.
    pub helion_reached: u64,
}

/// How many unconfirmed cells a summary names per engine.
pub const UNCONFIRMED_LISTED: usize = 10;

/// Running counts of a campaign.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Stats {
    /// Cases checked.
    pub cases: u64,
    /// Refused draws drawn again instead of checked ([`super::draw`]).
    pub thinned: u64,
    /// Outcome → count (in-process verdicts, upgraded by JAX confirmation).
    pub outcomes: BTreeMap<Outcome, u64>,
    /// Findings kept (after deduplication).
    pub findings: u64,
    /// Findings seen again in a known bucket (not written again).
    pub duplicates: u64,
    /// JAX confirmations: a lowered case that agreed in-process, run by one JAX engine.
    pub jax_confirmed: u64,
    /// Of those, per JAX engine.
    pub jax_confirmed_by: BTreeMap<EngineId, u64>,
    /// Lowered cases that agreed in-process but that a JAX engine did not confirm (its queue
    /// kept better-ranked cases, or the campaign ended first); one per case and engine.
    pub jax_skipped: u64,
    /// Confirmation cells (index form × loop type × tail × dtype × construct,
    /// [`super::select::ConfirmCell`]) with a lowered agreeing case.
    pub confirm_cells: u64,
    /// Of those, per JAX engine: the cells it confirmed at least one case of.
    pub confirm_cells_by: BTreeMap<EngineId, u64>,
    /// Per JAX engine: the first [`UNCONFIRMED_LISTED`] cells with a lowered agreeing case it
    /// confirmed none of, as `form/loop type/tail/dtype/construct`.
    pub confirm_cells_missing: BTreeMap<EngineId, Vec<String>>,
    /// Coverage cell key → JAX engine → cases of the cell it confirmed.
    pub coverage_confirmed: BTreeMap<String, BTreeMap<EngineId, u64>>,
    /// Known-issue ids → count.
    pub known_issues: BTreeMap<String, u64>,
    /// `unsupported` cases by the construct our model does not lower: each torch op of the
    /// case (`torch-op/<op>`, [`Feature::TorchOp`]), or `other` for a case with none.
    pub unsupported: BTreeMap<String, u64>,
    /// Coverage cells keyed `form/loop_type/tail|no-tail`.
    pub coverage: BTreeMap<String, Cell>,
    /// Verdict agreement with real Helion (campaigns with a Helion engine), keyed by our
    /// verdict: `lowered` or the rule id.
    pub helion_verdicts: BTreeMap<String, Agreement>,
    /// The same, keyed by index form (a case counts once per form it contains).
    pub helion_verdicts_by_form: BTreeMap<String, Agreement>,
    /// What real Helion made of the generated cases as rendered (the generator's health).
    pub helion_health: HelionHealthCounts,
    /// Per Helion engine, value agreement with our emitted module on the cases both lowered
    /// and ran ([`crate::check::CaseReport::helion_value_agreement`]).
    pub helion_values: BTreeMap<EngineId, ValueCounts>,
    /// Real Helion's reach per construct of the kernel-language surface (every feature but the
    /// index cells, which `coverage` counts: loop kinds and where they sit, tile attributes,
    /// argument kinds, config keys, IR forms), keyed by the feature's name.
    pub helion_reach: BTreeMap<String, Reach>,
}

/// Of the cases one Helion engine and our emitted module both lowered and ran, how their values
/// compared (each against the reference).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ValueCounts {
    /// Cases both ran to outputs.
    pub cases: u64,
    /// Both matched the reference.
    pub agree: u64,
    /// Only Helion's values differed: Helion findings.
    pub helion_differs: u64,
    /// Only ours differed.
    pub ours_differ: u64,
    /// Both differed.
    pub both_differ: u64,
}

impl ValueCounts {
    /// Counts one case.
    pub fn add(&mut self, a: crate::check::ValueAgreement) {
        use crate::check::ValueAgreement;
        self.cases += 1;
        match a {
            ValueAgreement::Agree => self.agree += 1,
            ValueAgreement::HelionDiffers => self.helion_differs += 1,
            ValueAgreement::OursDiffers => self.ours_differ += 1,
            ValueAgreement::BothDiffer => self.both_differ += 1,
        }
    }
}

/// Of the cases real Helion ran that contain a construct, how many reached its code generation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Reach {
    /// Cases Helion ran.
    pub ran: u64,
    /// Of those, the ones that reached its code generation.
    pub reached: u64,
}

impl Reach {
    /// Whether the construct is a generator gap: Helion ran cases with it, and under 1% of
    /// them got to its code generation (the fidelity issue's threshold).
    pub fn is_gap(&self) -> bool {
        self.ran > 0 && self.reached * 100 < self.ran
    }
}

/// Of the cases real Helion ran as rendered: how many it lowered, refused cleanly (by error
/// class) or could not run at all (by cause, [`crate::exception::cause`]). The fidelity issue's
/// target is at most 2% that cannot run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HelionHealthCounts {
    /// Cases Helion ran.
    pub cases: u64,
    /// Of those, lowered.
    pub lowered: u64,
    /// Of those, refused with a documented class: class → count.
    pub refused: BTreeMap<String, u64>,
    /// Of those, ones Helion could not run: cause → count.
    pub cannot_run: BTreeMap<String, u64>,
}

impl HelionHealthCounts {
    /// Counts one case.
    pub fn add(&mut self, health: HelionHealth) {
        self.cases += 1;
        match health {
            HelionHealth::Lowered => self.lowered += 1,
            HelionHealth::Refused(class) => *self.refused.entry(class).or_default() += 1,
            HelionHealth::CannotRun(cause) => *self.cannot_run.entry(cause).or_default() += 1,
        }
    }

    /// Cases refused cleanly.
    pub fn refused_total(&self) -> u64 {
        self.refused.values().sum()
    }

    /// Cases Helion could not run.
    pub fn cannot_run_total(&self) -> u64 {
        self.cannot_run.values().sum()
    }

    fn share(&self, n: u64) -> f64 {
        100.0 * n as f64 / self.cases.max(1) as f64
    }

    /// The table's section: the three shares, then the refusal classes and the causes, most
    /// frequent first.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "\nHelion on the generated cases as rendered: {} ran; lowered {} ({:.1}%), refused cleanly {} ({:.1}%), cannot run {} ({:.1}%)",
            self.cases,
            self.lowered,
            self.share(self.lowered),
            self.refused_total(),
            self.share(self.refused_total()),
            self.cannot_run_total(),
            self.share(self.cannot_run_total()),
        );
        for (label, map) in [("refused", &self.refused), ("cannot run", &self.cannot_run)] {
            let mut rows: Vec<(&String, &u64)> = map.iter().collect();
            rows.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            for (k, n) in rows {
                let _ = writeln!(s, "  {label:<10} {n:>7} {:>5.1}%  {k}", self.share(*n));
            }
        }
        s
    }
}

/// How often our verdict equalled Helion's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Agreement {
    /// Cases where Helion's run showed its verdict.
    pub cases: u64,
    /// Of those, cases where ours was the same (lowered, or refused with the same class).
    pub agree: u64,
    /// Cases where both refused with the same class (their messages compared).
    pub messages: u64,
    /// Of those, cases where Helion's message is our rule's (`Rule::matches_message`).
    pub messages_agree: u64,
}

impl Agreement {
    fn add(&mut self, agree: bool, message: Option<bool>) {
        self.cases += 1;
        self.agree += u64::from(agree);
        if let Some(m) = message {
            self.messages += 1;
            self.messages_agree += u64::from(m);
        }
    }

    /// The agreeing share in percent.
    pub fn percent(&self) -> f64 {
        100.0 * self.agree as f64 / self.cases.max(1) as f64
    }
}

fn cell_key(form: IndexForm, loop_type: LoopType, in_branch: bool) -> String {
    let form = serde_json::to_value(form)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    format!(
        "{form}/{}/{}",
        loop_type.name(),
        if in_branch { "tail" } else { "no-tail" }
    )
}

/// The coverage cells a case's features fall in (its index features; the others have none).
/// How a coverage cell's Helion reach reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReachFlag {
    /// 1% or more of its cases reached Helion's code generation (or Helion ran none).
    Reached,
    /// Under 1%: a generator gap to close.
    Gap,
    /// Under 1%, for an index form drawn to test a refusal ([`IndexForm::refusal_test`]).
    RefusalTest,
}

impl ReachFlag {
    /// The flag of the cell keyed `key` (`form/loop type/tail`) with `reach`.
    pub fn of_cell(key: &str, reach: Reach) -> ReachFlag {
        match (reach.is_gap(), cell_is_refusal_test(key)) {
            (false, _) => ReachFlag::Reached,
            (true, true) => ReachFlag::RefusalTest,
            (true, false) => ReachFlag::Gap,
        }
    }

    /// Its mark in the table: blank, `!` or `r`.
    pub fn mark(self) -> &'static str {
        match self {
            ReachFlag::Reached => " ",
            ReachFlag::Gap => "!",
            ReachFlag::RefusalTest => "r",
        }
    }
}

/// Whether a coverage cell's key (`form/loop type/tail`) names an index form the generator
/// draws to test a refusal ([`IndexForm::refusal_test`]).
fn cell_is_refusal_test(key: &str) -> bool {
    let form = key.split('/').next().unwrap_or_default();
    serde_json::from_value::<IndexForm>(serde_json::Value::String(form.to_string()))
        .is_ok_and(IndexForm::refusal_test)
}

fn cell_keys(features: &std::collections::BTreeSet<Feature>) -> Vec<String> {
    features
        .iter()
        .filter_map(|f| match f {
            Feature::Index {
                form,
                loop_type,
                in_branch,
            } => Some(cell_key(*form, *loop_type, *in_branch)),
            _ => None,
        })
        .collect()
}

impl Stats {
    /// Records one case's outcome and the features it exercised; `lowered` is whether our
    /// compiler lowered it (it decides the coverage column of the Helion findings, which come
    /// from either verdict).
    pub fn record(
        &mut self,
        outcome: Outcome,
        lowered: bool,
        features: &std::collections::BTreeSet<Feature>,
    ) {
        self.cases += 1;
        *self.outcomes.entry(outcome).or_default() += 1;
        if outcome == Outcome::Unsupported {
            let mut any = false;
            for f in features {
                if let Feature::TorchOp(_) = f {
                    *self.unsupported.entry(f.to_string()).or_default() += 1;
                    any = true;
                }
            }
            if !any {
                *self.unsupported.entry("other".into()).or_default() += 1;
            }
        }
        for key in cell_keys(features) {
            let c = self.coverage.entry(key).or_default();
            c.cases += 1;
            match outcome {
                Outcome::Rejected => c.rejected += 1,
                Outcome::InvalidCase => {}
                Outcome::Agree
                | Outcome::Mismatch
                | Outcome::LoweringError
                | Outcome::RuntimeError
                | Outcome::Timeout
                | Outcome::EngineCrash
                | Outcome::KnownIssue
                | Outcome::Unsupported
                | Outcome::CompilerCrash => c.lowered += 1,
                Outcome::HelionCrash | Outcome::HelionAcceptsInvalid | Outcome::VerdictMismatch => {
                    if lowered {
                        c.lowered += 1
                    } else {
                        c.rejected += 1
                    }
                }
            }
        }
    }

    /// Counts a case real Helion ran in its coverage cells, and whether it reached Helion's
    /// code generation ([`crate::check::CaseReport::helion_reached_codegen`]).
    pub fn record_helion_reach(
        &mut self,
        reached: bool,
        features: &std::collections::BTreeSet<Feature>,
    ) {
        for key in cell_keys(features) {
            let c = self.coverage.entry(key).or_default();
            c.helion_ran += 1;
            c.helion_reached += u64::from(reached);
        }
        for f in features {
            if matches!(f, Feature::Index { .. }) {
                continue;
            }
            let r = self.helion_reach.entry(f.to_string()).or_default();
            r.ran += 1;
            r.reached += u64::from(reached);
        }
    }

    /// Records whether our verdict (`ours`: `lowered` or a rule id) equalled Helion's on a
    /// case with these features.
    pub fn record_helion_verdict(
        &mut self,
        ours: &str,
        agree: bool,
        message: Option<bool>,
        features: &std::collections::BTreeSet<Feature>,
    ) {
        self.helion_verdicts
            .entry(ours.to_string())
            .or_default()
            .add(agree, message);
        let forms: std::collections::BTreeSet<String> = features
            .iter()
            .filter_map(|f| match f {
                Feature::Index { form, .. } => serde_json::to_value(form)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from)),
                _ => None,
            })
            .collect();
        for form in forms {
            self.helion_verdicts_by_form
                .entry(form)
                .or_default()
                .add(agree, message);
        }
    }

    /// Verdict agreement with Helion over every case that showed Helion's verdict.
    pub fn helion_agreement(&self) -> Agreement {
        let mut all = Agreement::default();
        for a in self.helion_verdicts.values() {
            all.cases += a.cases;
            all.agree += a.agree;
            all.messages += a.messages;
            all.messages_agree += a.messages_agree;
        }
        all
    }

    /// Records that JAX engine `engine` confirmed a case with these features; `moved` is the
    /// outcome it moves the case to from `agree`, when it does (once per case).
    pub fn record_confirmation(
        &mut self,
        engine: EngineId,
        moved: Option<Outcome>,
        features: &std::collections::BTreeSet<Feature>,
    ) {
        self.jax_confirmed += 1;
        *self.jax_confirmed_by.entry(engine).or_default() += 1;
        if let Some(to) = moved {
            self.reclassify(Outcome::Agree, to);
        }
        let keys: std::collections::BTreeSet<String> = cell_keys(features).into_iter().collect();
        for k in keys {
            *self
                .coverage_confirmed
                .entry(k)
                .or_default()
                .entry(engine)
                .or_default() += 1;
        }
    }

    /// Moves one case from one outcome to another (a JAX confirmation that changed the verdict).
    pub fn reclassify(&mut self, from: Outcome, to: Outcome) {
        if from == to {
            return;
        }
        if let Some(n) = self.outcomes.get_mut(&from) {
            *n = n.saturating_sub(1);
        }
        *self.outcomes.entry(to).or_default() += 1;
    }

    /// Count of one outcome.
    pub fn count(&self, o: Outcome) -> u64 {
        self.outcomes.get(&o).copied().unwrap_or(0)
    }

    /// One progress line.
    pub fn progress_line(&self, seconds: f64) -> String {
        let mut s = format!(
            "{:>8} cases {:>8.0}/s",
            self.cases,
            self.cases as f64 / seconds.max(1e-9)
        );
        for o in Outcome::ALL {
            let n = self.count(o);
            if n > 0 {
                let _ = write!(s, "  {}={n}", o.name());
            }
        }
        let _ = write!(
            s,
            "  findings={} jax-confirmed={}",
            self.findings, self.jax_confirmed
        );
        s
    }

    /// The final table: rates, outcome counts, coverage.
    pub fn table(&self, seconds: f64) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "cases {}  seconds {:.1}  cases/s {:.0}",
            self.cases,
            seconds,
            self.cases as f64 / seconds.max(1e-9)
        );
        let _ = writeln!(
            s,
            "findings {} (duplicates {})  jax confirmations {}  jax skipped {}",
            self.findings, self.duplicates, self.jax_confirmed, self.jax_skipped
        );
        if self.thinned > 0 {
            let _ = writeln!(
                s,
                "thinned {} refused draws (drawn again; --refused-keep-percent sets how many refusals stay)",
                self.thinned
            );
        }
        for (engine, n) in &self.jax_confirmed_by {
            let _ = writeln!(
                s,
                "  {engine}: {n} confirmed, {} of {} confirmation cells (form × loop × tail × dtype × construct)",
                self.confirm_cells_by.get(engine).copied().unwrap_or(0),
                self.confirm_cells
            );
            if let Some(missing) = self
                .confirm_cells_missing
                .get(engine)
                .filter(|m| !m.is_empty())
            {
                let _ = writeln!(s, "    not confirmed: {}", missing.join(", "));
            }
        }
        let _ = writeln!(s, "\n{:<16} {:>10} {:>7}", "outcome", "cases", "share");
        for o in Outcome::ALL {
            let n = self.count(o);
            let _ = writeln!(
                s,
                "{:<16} {:>10} {:>6.1}%",
                o.name(),
                n,
                100.0 * n as f64 / self.cases.max(1) as f64
            );
        }
        for (k, n) in &self.known_issues {
            let _ = writeln!(s, "  known issue {k}: {n}");
        }
        for (k, n) in &self.unsupported {
            let _ = writeln!(s, "  unsupported {k}: {n}");
        }
        // One "confirmed" column per JAX engine (headed by the engine's name, without its
        // `pallas-` prefix to keep the table narrow).
        let engines: Vec<EngineId> = self.jax_confirmed_by.keys().copied().collect();
        let mut header = format!(
            "\n{:<44} {:>8} {:>8} {:>8}",
            "coverage (index form / loop type / tail)", "cases", "lowered", "rejected"
        );
        for e in &engines {
            let _ = write!(header, " {:>14}", e.name().trim_start_matches("pallas-"));
        }
        // Real Helion's reach: of the cases it ran, those that got to its code generation; a
        // cell under 1% is a generator gap (`!`), or a refusal test when its index form is one
        // Helion refuses by design (`r`, [`IndexForm::refusal_test`]).
        let helion = self.coverage.values().any(|c| c.helion_ran > 0);
        if helion {
            let _ = write!(header, " {:>16}", "helion codegen");
        }
        let _ = writeln!(s, "{header}");
        for (k, c) in &self.coverage {
            let mut row = format!(
                "{:<44} {:>8} {:>8} {:>8}",
                k, c.cases, c.lowered, c.rejected
            );
            for e in &engines {
                let n = self
                    .coverage_confirmed
                    .get(k)
                    .and_then(|m| m.get(e))
                    .copied()
                    .unwrap_or(0);
                let _ = write!(row, " {n:>14}");
            }
            if helion {
                let (ran, reached) = (c.helion_ran, c.helion_reached);
                let gap = ReachFlag::of_cell(k, Reach { ran, reached }).mark();
                let _ = write!(row, " {:>15}{gap}", format!("{reached}/{ran}"));
            }
            let _ = writeln!(s, "{row}");
        }
        if helion {
            let _ = writeln!(
                s,
                "(helion codegen: of the cases Helion ran, those that reached its code generation; \
                 ! under 1%, a generator gap; r under 1% for an index form drawn to test a refusal)"
            );
        }
        if !self.helion_reach.is_empty() {
            let _ = writeln!(
                s,
                "\n{:<44} {:>16}",
                "helion reach by construct", "helion codegen"
            );
            for (k, r) in &self.helion_reach {
                let gap = if r.is_gap() { "!" } else { " " };
                let _ = writeln!(s, "{k:<44} {:>15}{gap}", format!("{}/{}", r.reached, r.ran));
            }
        }
        if self.helion_health.cases > 0 {
            s.push_str(&self.helion_health.table());
        }
        if !self.helion_values.is_empty() {
            let _ = writeln!(
                s,
                "\n{:<44} {:>8} {:>8} {:>7} {:>14} {:>12} {:>12}",
                "values, both lowered and ran",
                "cases",
                "agree",
                "share",
                "helion differs",
                "ours differ",
                "both differ"
            );
            for (engine, v) in &self.helion_values {
                let _ = writeln!(
                    s,
                    "{:<44} {:>8} {:>8} {:>6.1}% {:>14} {:>12} {:>12}",
                    engine,
                    v.cases,
                    v.agree,
                    100.0 * v.agree as f64 / v.cases.max(1) as f64,
                    v.helion_differs,
                    v.ours_differ,
                    v.both_differ
                );
            }
        }
        if !self.helion_verdicts.is_empty() {
            let all = self.helion_agreement();
            let _ = writeln!(
                s,
                "\nverdict agreement with Helion: {} of {} cases ({:.1}%); of {} refused by both with one class, {} with our rule's message",
                all.agree,
                all.cases,
                all.percent(),
                all.messages,
                all.messages_agree
            );
            // Per rule, the message columns: of the cases both refused with this rule's class,
            // how many carry this rule's message in Helion's text.
            let _ = writeln!(
                s,
                "{:<44} {:>8} {:>8} {:>7} {:>12}",
                "our verdict", "cases", "agree", "share", "message"
            );
            for (k, a) in &self.helion_verdicts {
                let message = if a.messages > 0 {
                    format!("{}/{}", a.messages_agree, a.messages)
                } else {
                    "-".to_string()
                };
                let _ = writeln!(
                    s,
                    "{:<44} {:>8} {:>8} {:>6.1}% {:>12}",
                    k,
                    a.cases,
                    a.agree,
                    a.percent(),
                    message
                );
            }
            let _ = writeln!(
                s,
                "{:<44} {:>8} {:>8} {:>7}",
                "index form", "cases", "agree", "share"
            );
            for (k, a) in &self.helion_verdicts_by_form {
                let _ = writeln!(
                    s,
                    "{:<44} {:>8} {:>8} {:>6.1}%",
                    k,
                    a.cases,
                    a.agree,
                    a.percent()
                );
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helion_health_counts_each_case_once_and_ranks_causes() {
        let mut h = HelionHealthCounts::default();
        h.add(HelionHealth::Lowered);
        h.add(HelionHealth::Refused("InvalidIndexingType".into()));
        for _ in 0..2 {
            h.add(HelionHealth::CannotRun(
                "trace:AssertionError: x @ a.py:f".into(),
            ));
        }
        h.add(HelionHealth::CannotRun("timeout".into()));
        assert_eq!(
            (h.cases, h.lowered, h.refused_total(), h.cannot_run_total()),
            (5, 1, 1, 3)
        );
        let t = h.table();
        assert!(
            t.contains("5 ran; lowered 1 (20.0%), refused cleanly 1 (20.0%), cannot run 3 (60.0%)"),
            "{t}"
        );
        let first = t.find("AssertionError").expect("cause listed");
        assert!(
            first < t.find("timeout").expect("timeout listed"),
            "most frequent first: {t}"
        );
    }

    #[test]
    fn value_agreement_with_helion_is_tabled_per_engine() {
        use crate::check::ValueAgreement;
        let mut st = Stats::default();
        assert!(!st.table(1.0).contains("both lowered and ran"));
        let v = st
            .helion_values
            .entry(EngineId::Worker(tpu_runner::Mode::HelionPallas))
            .or_default();
        for a in [
            ValueAgreement::Agree,
            ValueAgreement::Agree,
            ValueAgreement::Agree,
            ValueAgreement::HelionDiffers,
        ] {
            v.add(a);
        }
        assert_eq!(
            (v.cases, v.agree, v.helion_differs, v.ours_differ),
            (4, 3, 1, 0)
        );
        let table = st.table(1.0);
        let row = table
            .lines()
            .find(|l| l.starts_with("helion-pallas"))
            .unwrap_or_else(|| panic!("{table}"));
        assert!(row.contains(" 75.0%"), "{row}");
    }

    #[test]
    fn the_table_shows_how_often_helion_reached_codegen_per_cell() {
        let feats: std::collections::BTreeSet<Feature> = [Feature::Index {
            form: IndexForm::TileIndex,
            loop_type: LoopType::ForiLoop,
            in_branch: false,
        }]
        .into_iter()
        .collect();
        let mut st = Stats::default();
        st.record(Outcome::Agree, true, &feats);
        let table = st.table(1.0);
        assert!(
            !table.contains("helion codegen"),
            "no Helion engine: {table}"
        );
        for reached in [true, false] {
            st.record_helion_reach(reached, &feats);
        }
        let table = st.table(1.0);
        assert!(
            table.contains("helion codegen") && table.contains("1/2 "),
            "{table}"
        );
        // A cell Helion never gets to codegen is flagged as a generator gap.
        let mut st = Stats::default();
        st.record(Outcome::Rejected, false, &feats);
        st.record_helion_reach(false, &feats);
        assert!(st.table(1.0).contains("0/1!"), "{}", st.table(1.0));
        // ... unless its form is drawn to test a refusal.
        let strided: std::collections::BTreeSet<Feature> = [Feature::Index {
            form: IndexForm::StridedArange,
            loop_type: LoopType::ForiLoop,
            in_branch: false,
        }]
        .into_iter()
        .collect();
        st.record(Outcome::Rejected, false, &strided);
        st.record_helion_reach(false, &strided);
        let table = st.table(1.0);
        assert!(table.contains("0/1!") && table.contains("0/1r"), "{table}");
    }

    #[test]
    fn helion_agreement_is_tabled_per_rule_with_its_message_share() {
        let feats: std::collections::BTreeSet<Feature> = [Feature::Index {
            form: IndexForm::TileBegin,
            loop_type: LoopType::ForiLoop,
            in_branch: false,
        }]
        .into_iter()
        .collect();
        let mut st = Stats::default();
        st.record_helion_verdict("chain.consumed-whole", true, Some(true), &feats);
        st.record_helion_verdict("chain.consumed-whole", true, Some(false), &feats);
        st.record_helion_verdict("chain.consumed-whole", false, None, &feats);
        st.record_helion_verdict("lowered", true, None, &feats);
        let all = st.helion_agreement();
        assert_eq!(
            (all.cases, all.agree, all.messages, all.messages_agree),
            (4, 3, 2, 1)
        );
        let table = st.table(1.0);
        let row = |key: &str| {
            table
                .lines()
                .find(|l| l.starts_with(key))
                .unwrap_or_else(|| panic!("no {key} row: {table}"))
                .split_whitespace()
                .skip(1)
                .collect::<Vec<_>>()
        };
        assert_eq!(row("chain.consumed-whole"), ["3", "2", "66.7%", "1/2"]);
        assert_eq!(row("lowered"), ["1", "1", "100.0%", "-"]);
        assert_eq!(row("tile-begin"), ["4", "3", "75.0%"]);
    }

    #[test]
    fn helion_reach_is_counted_per_construct_besides_the_index_cells() {
        use crate::generators::{AttrTag, Surface};
        let feats: std::collections::BTreeSet<Feature> = [
            Feature::Index {
                form: IndexForm::TileIndex,
                loop_type: LoopType::ForiLoop,
                in_branch: false,
            },
            Feature::TileAttrValue(AttrTag::Count),
            Feature::Surface(Surface::ParamInt),
        ]
        .into_iter()
        .collect();
        let mut st = Stats::default();
        st.record_helion_reach(true, &feats);
        for _ in 0..200 {
            st.record_helion_reach(false, &feats);
        }
        let keys: Vec<&String> = st.helion_reach.keys().collect();
        assert_eq!(keys, ["surface/param-int", "tile-attr-value/count"]);
        let r = st.helion_reach["surface/param-int"];
        assert_eq!((r.ran, r.reached), (201, 1));
        assert!(r.is_gap(), "1 of 201 is under 1%");
        let table = st.table(1.0);
        assert!(table.contains("helion reach by construct"), "{table}");
        assert!(table.contains("1/201!"), "{table}");
    }
}
