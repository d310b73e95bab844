//! Mutants reviewed as equivalent: a survivor that no input can tell from unmutated Helion,
//! shown so by reading the code (the reason names the lines that prove it). Mutation analysis
//! scores killed / (covered − equivalent): an equivalent mutant is no blind spot of the
//! harness, and counting it as one hides the real ones among it. The heuristic "likely
//! equivalent" (every covering case generated the same module) is not proof, since a case may
//! simply never make the mutated code matter, so only reviewed entries leave the score.
//!
//! A review is a JSON file (`mutants/reviewed-equivalent.json` is the one of the pinned Helion
//! release, compiled in): each entry names a mutant by its id and repeats the text it replaces
//! and puts, so an entry of another Helion build, whose line and column name other code, never
//! matches by accident: it is reported stale instead. A reviewed mutant that some case kills
//! counts as killed and is reported: the review was wrong.

use crate::run::{MutantResult, Status};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The review of the pinned Helion release (`mutants/reviewed-equivalent.json`).
const PINNED: &str = include_str!("../reviewed-equivalent.json");

/// One mutant reviewed as equivalent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Equivalent {
    /// The mutant's id ([`crate::Mutant::id`]).
    pub id: String,
    /// The text it replaces.
    pub original: String,
    /// The text it puts there.
    pub replacement: String,
    /// Why no input tells it apart, with the lines that show it.
    pub reason: String,
}

/// A review: the Helion build it was made on and its entries.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Review {
    /// The Helion build whose source the entries were read in (`1.5.1`).
    pub helion: String,
    /// The entries.
    pub equivalent: Vec<Equivalent>,
}

/// A review that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// The file cannot be read.
    #[error("cannot read the review {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a review.
    #[error("{path}:{line}:{column}: not a review of equivalent mutants: {message}")]
    Parse {
        /// The file.
        path: String,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// Two entries name one mutant.
    #[error("{path}: the mutant {id} is reviewed twice")]
    Duplicate {
        /// The file.
        path: String,
        /// The id.
        id: String,
    },
}

/// How the review reads against one mutant's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict<'r> {
    /// Not reviewed.
    Unreviewed,
    /// A survivor reviewed as equivalent: left out of the score.
    Equivalent(&'r Equivalent),
    /// Reviewed as equivalent, yet some case killed it: the review is wrong (counted killed).
    KilledAnyway(&'r Equivalent),
    /// The entry's id names a mutant with other text: an entry of another build (ignored).
    Stale(&'r Equivalent),
}

/// How a review entry disagrees with a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conflict {
    /// Some case killed the mutant: the review is wrong.
    KilledAnyway,
    /// The id names a mutant with other text: an entry of another build.
    Stale,
}

impl Conflict {
    /// How the summary says it.
    pub fn describe(self) -> &'static str {
        match self {
            Conflict::KilledAnyway => "reviewed equivalent, yet killed",
            Conflict::Stale => "stale (the review names other text here)",
        }
    }
}

impl Review {
    /// The review of the pinned Helion release.
    pub fn pinned() -> Review {
        Review::parse(PINNED, "mutants/reviewed-equivalent.json")
            .expect("harness bug: the compiled-in review does not parse")
    }

    /// No entries: every survivor counts.
    pub fn none() -> Review {
        Review::default()
    }

    /// The review in `path`.
    pub fn load(path: &Path) -> Result<Review, ReviewError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ReviewError::Read {
            path: shown.clone(),
            source,
        })?;
        Review::parse(&text, &shown)
    }

    /// The review in `text`, read from `path` (for messages).
    pub fn parse(text: &str, path: &str) -> Result<Review, ReviewError> {
        let review: Review = serde_json::from_str(text).map_err(|e| ReviewError::Parse {
            path: path.to_owned(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        let mut seen = std::collections::BTreeSet::new();
        for e in &review.equivalent {
            if !seen.insert(e.id.as_str()) {
                return Err(ReviewError::Duplicate {
                    path: path.to_owned(),
                    id: e.id.clone(),
                });
            }
        }
        Ok(review)
    }

    /// How the review reads against `r`.
    pub fn verdict<'r>(&'r self, r: &MutantResult) -> Verdict<'r> {
        let Some(e) = self.equivalent.iter().find(|e| e.id == r.id) else {
            return Verdict::Unreviewed;
        };
        if e.original != r.mutant.original || e.replacement != r.mutant.replacement {
            return Verdict::Stale(e);
        }
        match r.status {
            Status::Killed => Verdict::KilledAnyway(e),
            Status::Survived | Status::NotCovered | Status::Invalid | Status::Error => {
                Verdict::Equivalent(e)
            }
        }
    }

    /// Whether `r` is a survivor the review leaves out of the score.
    pub fn excludes(&self, r: &MutantResult) -> bool {
        r.status == Status::Survived && matches!(self.verdict(r), Verdict::Equivalent(_))
    }

    /// The entries that disagree with `results`, by mutant id.
    pub fn conflicts(&self, results: &[MutantResult]) -> BTreeMap<String, Conflict> {
        results
            .iter()
            .filter_map(|r| {
                let conflict = match self.verdict(r) {
                    Verdict::KilledAnyway(_) => Conflict::KilledAnyway,
                    Verdict::Stale(_) => Conflict::Stale,
                    Verdict::Unreviewed | Verdict::Equivalent(_) => return None,
                };
                Some((r.id.clone(), conflict))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pinned_review_parses_and_names_each_mutant_once() {
        let r = Review::pinned();
        assert_eq!(r.helion, "1.5.1");
        assert!(!r.equivalent.is_empty());
        for e in &r.equivalent {
            assert!(e.id.starts_with("helion/"), "{}", e.id);
            assert!(e.reason.len() > 40, "a reason says why: {}", e.id);
        }
    }

    #[test]
    fn a_bad_review_names_file_and_line() {
        let err = Review::parse("{\n  \"helion\": 1\n}", "r.json").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("r.json:2:"), "{text}");
        let twice = r#"{"helion": "1.5.1", "equivalent": [
            {"id": "a", "original": "x", "replacement": "y", "reason": "r"},
            {"id": "a", "original": "x", "replacement": "y", "reason": "r"}]}"#;
        assert!(matches!(
            Review::parse(twice, "r.json"),
            Err(ReviewError::Duplicate { .. })
        ));
        assert!(matches!(
            Review::parse(r#"{"helion": "1", "equivalent": [], "extra": 1}"#, "r.json"),
            Err(ReviewError::Parse { .. })
        ));
    }
}
