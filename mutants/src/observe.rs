//! What a case's run through a Helion engine shows, as far as a kill is concerned: the one
//! classified outcome, the Helion engine's status (its kind and error class), whether its
//! values matched the reference under the one tolerance policy ([`fuzz::compare`], via
//! [`CaseReport::values_match`]), and whether its refusal message is our rule's
//! ([`CaseReport::helion_message_agreement`], what a campaign's summary counts). A mutant kills
//! a case when any of these differs from the case's baseline on unmutated Helion; the
//! generated module's hash is kept to tell likely equivalent mutants (Helion emitted the very
//! same module for every covering case).

use fuzz::check::CaseReport;
use fuzz::engines::{EngineId, EngineStatus};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The version of what an [`Observation`] holds: part of a baseline's cache key, so a baseline
/// observed before a field was added is observed again rather than read with it missing.
pub const OBSERVATION_VERSION: u32 = 2;

/// One case's observation through one Helion engine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    /// The classified outcome (`agree`, `mismatch`, `verdict-mismatch`, ...).
    pub outcome: String,
    /// The Helion engine's status kind (`ok`, `refused`, `error`, `timeout`, `crash`, ...).
    pub status: String,
    /// Its error class, with the stage for an exception (`trace InternalError`), when it
    /// raised or refused.
    pub class: Option<String>,
    /// Whether its values matched the reference, when it produced values.
    pub values_match: Option<bool>,
    /// Whether its refusal message is the one our rule's template gives, when it refused with
    /// our rule's error class. A mutant that keeps Helion's error class and changes the cause
    /// it reports (a planner failure recorded for the wrong node, the generic "requires a
    /// resident Ref" in place of the blocking consumer) shows here, as it does in a campaign's
    /// message agreement. Absent from results written before it was observed (a kill recorded
    /// then stays a kill).
    #[serde(default)]
    pub message_agrees: Option<bool>,
    /// 16 hex digits of the sha256 of the module Helion generated, when it generated one.
    pub generated: Option<String>,
}

impl Observation {
    /// The observation of `engine` in `report`.
    pub fn of(report: &CaseReport, engine: EngineId) -> Observation {
        let run = report.engines.iter().find(|r| r.engine == engine);
        let (status, class) = match run.map(|r| &r.status) {
            None => ("not-run".to_owned(), None),
            Some(s) => (s.kind().name().to_owned(), class_of(s)),
        };
        Observation {
            outcome: report.outcome.name().to_owned(),
            status,
            class,
            values_match: report
                .values_match
                .iter()
                .find(|(e, _)| *e == engine)
                .map(|(_, ok)| *ok),
            message_agrees: report.helion_message_agreement(),
            generated: run.and_then(|r| r.generated.as_deref()).map(sha16),
        }
    }

    /// How `self` (under a mutant) differs from `baseline`, or `None` when it does not (the
    /// generated module's text is not part of the verdict: a mutant may reword the code and
    /// still compute the same).
    pub fn kill_against(&self, baseline: &Observation) -> Option<String> {
        if self.outcome != baseline.outcome {
            return Some(format!("outcome {} -> {}", baseline.outcome, self.outcome));
        }
        if self.status != baseline.status || self.class != baseline.class {
            return Some(format!(
                "helion {} -> {}",
                show(&baseline.status, &baseline.class),
                show(&self.status, &self.class)
            ));
        }
        if self.values_match != baseline.values_match {
            return Some(format!(
                "values {} -> {}",
                show_values(baseline.values_match),
                show_values(self.values_match)
            ));
        }
        if self.message_agrees != baseline.message_agrees {
            return Some(format!(
                "refusal message {} -> {}",
                show_message(baseline.message_agrees),
                show_message(self.message_agrees)
            ));
        }
        None
    }
}

fn show(status: &str, class: &Option<String>) -> String {
    match class {
        Some(c) => format!("{status} ({c})"),
        None => status.to_owned(),
    }
}

fn show_values(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "match",
        Some(false) => "differ",
        None => "none",
    }
}

fn show_message(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "our rule's",
        Some(false) => "another",
        None => "none",
    }
}

fn class_of(s: &EngineStatus) -> Option<String> {
    match s {
        EngineStatus::Refused { class, .. } => Some(class.clone()),
        EngineStatus::KernelError { stage, kind, .. } => Some(format!("{stage} {kind}")),
        EngineStatus::Outputs(_)
        | EngineStatus::Lowered
        | EngineStatus::Unavailable(_)
        | EngineStatus::NotRun(_)
        | EngineStatus::Invalid { .. }
        | EngineStatus::Timeout(_)
        | EngineStatus::Crash(_) => None,
    }
}

/// 16 hex digits of the sha256 of `text`.
pub fn sha16(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(outcome: &str, status: &str, class: Option<&str>, v: Option<bool>) -> Observation {
        Observation {
            outcome: outcome.into(),
            status: status.into(),
            class: class.map(Into::into),
            values_match: v,
            message_agrees: None,
            generated: Some("0".into()),
        }
    }

    #[test]
    fn a_kill_is_any_difference_but_the_generated_text() {
        let base = obs("agree", "ok", None, Some(true));
        let mut same = base.clone();
        same.generated = Some("1".into());
        assert_eq!(same.kill_against(&base), None);
        assert!(
            obs("mismatch", "ok", None, Some(false))
                .kill_against(&base)
                .unwrap()
                .starts_with("outcome agree -> mismatch")
        );
        let err = obs("agree", "error", Some("trace InternalError"), None);
        assert_eq!(
            err.kill_against(&base).unwrap(),
            "helion ok -> error (trace InternalError)"
        );
        assert_eq!(
            obs("agree", "ok", None, Some(false))
                .kill_against(&base)
                .unwrap(),
            "values match -> differ"
        );
        let refused = Observation {
            message_agrees: Some(true),
            ..obs("rejected", "refused", Some("BackendUnsupported"), None)
        };
        let reworded = Observation {
            message_agrees: Some(false),
            ..refused.clone()
        };
        assert_eq!(
            reworded.kill_against(&refused).unwrap(),
            "refusal message our rule's -> another"
        );
    }
}
