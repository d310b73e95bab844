//! What a mutants run writes: `mutants.json` (every mutant's result), the summary by file and
//! by operator family (score = killed / covered, per suite and for their union; not covered,
//! invalid, message/logging mutants and likely equivalent survivors counted apart), the
//! survivors' diffs, JUnit, and the merge of shards' output directories.

use crate::run::{MutantResult, Status, stored};
use crate::suite::SuiteId;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// Counts of one row of the summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Mutants.
    pub mutants: usize,
    /// Covered by some case (message/logging mutants excluded).
    pub covered: usize,
    /// Killed by the corpus.
    pub killed_corpus: usize,
    /// Killed by the campaign.
    pub killed_campaign: usize,
    /// Killed by either.
    pub killed: usize,
    /// Covered and not killed.
    pub survived: usize,
    /// Survivors whose covering cases all generated the same module: likely equivalent.
    pub likely_equivalent: usize,
    /// No case executes the line.
    pub not_covered: usize,
    /// Helion does not import.
    pub invalid: usize,
    /// Harness errors.
    pub errors: usize,
    /// In message strings or logging calls (counted here only).
    pub in_message: usize,
    /// Seconds spent on covered mutants.
    pub seconds: f64,
}

impl Counts {
    fn add(&mut self, r: &MutantResult) {
        self.mutants += 1;
        if r.mutant.in_message {
            self.in_message += 1;
            return;
        }
        match r.status {
            Status::Killed => {
                self.covered += 1;
                self.killed += 1;
                self.seconds += r.seconds;
            }
            Status::Survived => {
                self.covered += 1;
                self.survived += 1;
                self.seconds += r.seconds;
                if r.likely_equivalent() {
                    self.likely_equivalent += 1;
                }
            }
            Status::NotCovered => self.not_covered += 1,
            Status::Invalid => self.invalid += 1,
            Status::Error => self.errors += 1,
        }
        let killed_by = |s: SuiteId| r.suites.get(&s).is_some_and(|x| x.kill.is_some());
        if killed_by(SuiteId::Corpus) {
            self.killed_corpus += 1;
        }
        if killed_by(SuiteId::Campaign) {
            self.killed_campaign += 1;
        }
    }

    /// killed / covered, in percent (0 when nothing is covered).
    pub fn score(&self, killed: usize) -> f64 {
        if self.covered == 0 {
            0.0
        } else {
            100.0 * killed as f64 / self.covered as f64
        }
    }
}

/// The summary of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// All mutants.
    pub total: Counts,
    /// By file id.
    pub by_file: BTreeMap<String, Counts>,
    /// By operator family.
    pub by_operator: BTreeMap<String, Counts>,
}

impl Summary {
    /// The summary of `results`.
    pub fn of(results: &[MutantResult]) -> Summary {
        let mut s = Summary::default();
        for r in results {
            s.total.add(r);
            s.by_file.entry(r.mutant.file.clone()).or_default().add(r);
            s.by_operator
                .entry(r.mutant.family().to_owned())
                .or_default()
                .add(r);
        }
        s
    }

    /// The summary as text tables.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let header = format!(
            "{:<44} {:>5} {:>5} {:>7} {:>7} {:>7} {:>5} {:>5} {:>5} {:>4} {:>4} {:>6}\n",
            "",
            "all",
            "cov",
            "corpus",
            "campgn",
            "union",
            "surv",
            "equiv",
            "!cov",
            "inv",
            "msg",
            "s/mut"
        );
        let row = |name: &str, c: &Counts| {
            format!(
                "{:<44} {:>5} {:>5} {:>6.1}% {:>6.1}% {:>6.1}% {:>5} {:>5} {:>5} {:>4} {:>4} {:>6.1}\n",
                name,
                c.mutants,
                c.covered,
                c.score(c.killed_corpus),
                c.score(c.killed_campaign),
                c.score(c.killed),
                c.survived,
                c.likely_equivalent,
                c.not_covered,
                c.invalid,
                c.in_message,
                if c.covered == 0 {
                    0.0
                } else {
                    c.seconds / c.covered as f64
                }
            )
        };
        out.push_str("by file (score = killed / covered):\n");
        out.push_str(&header);
        for (f, c) in &self.by_file {
            out.push_str(&row(f.strip_prefix("helion/_compiler/").unwrap_or(f), c));
        }
        out.push_str(&row("all", &self.total));
        out.push_str("\nby operator:\n");
        out.push_str(&header);
        for (f, c) in &self.by_operator {
            out.push_str(&row(f, c));
        }
        if self.total.errors > 0 {
            let _ = writeln!(
                out,
                "\n{} mutants could not be run (harness errors, see mutants.json)",
                self.total.errors
            );
        }
        out
    }
}

/// The survivors' diffs, likely equivalent ones last, and the lines no case covers.
pub fn survivors(results: &[MutantResult]) -> String {
    let mut out = String::new();
    for equivalent in [false, true] {
        let list: Vec<&MutantResult> = results
            .iter()
            .filter(|r| {
                r.status == Status::Survived
                    && !r.mutant.in_message
                    && r.likely_equivalent() == equivalent
            })
            .collect();
        let _ = writeln!(
            out,
            "## {} ({})\n",
            if equivalent {
                "survivors, likely equivalent (same generated module on every covering case)"
            } else {
                "survivors"
            },
            list.len()
        );
        for r in list {
            let cases: Vec<String> = r
                .suites
                .iter()
                .map(|(s, x)| {
                    format!(
                        "{}: {} of {} covering cases{}",
                        s.name(),
                        x.run,
                        x.covering,
                        if x.timed_out { ", time box hit" } else { "" }
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "### {}\n{}\n```diff\n{}```\n",
                r.id,
                cases.join("; "),
                r.diff
            );
        }
    }
    let mut uncovered: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for r in results
        .iter()
        .filter(|r| r.status == Status::NotCovered && !r.mutant.in_message)
    {
        uncovered
            .entry(&r.mutant.file)
            .or_default()
            .push(r.mutant.line);
    }
    let _ = writeln!(out, "## not covered (lines no case executes)\n");
    for (f, mut lines) in uncovered {
        lines.dedup();
        let shown: Vec<String> = lines.iter().map(u32::to_string).collect();
        let _ = writeln!(out, "- {f}: {}", shown.join(", "));
    }
    out
}

/// JUnit: one test case per mutant (a survivor fails; not covered, invalid and message
/// mutants are skipped with the reason).
pub fn junit(results: &[MutantResult]) -> String {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut report = Report::new("pallas-diff-mutants");
    let mut by_file: BTreeMap<&str, Vec<&MutantResult>> = BTreeMap::new();
    for r in results {
        by_file.entry(&r.mutant.file).or_default().push(r);
    }
    for (file, rs) in by_file {
        let mut suite = TestSuite::new(file);
        for r in rs {
            let status = if r.mutant.in_message {
                TestCaseStatus::skipped()
            } else {
                match r.status {
                    Status::Killed => TestCaseStatus::success(),
                    Status::Survived => {
                        let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                        s.set_message("survived");
                        s.set_description(r.diff.clone());
                        s
                    }
                    Status::Error => {
                        let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                        s.set_message(r.detail.clone().unwrap_or_default());
                        s
                    }
                    Status::NotCovered | Status::Invalid => {
                        let mut s = TestCaseStatus::skipped();
                        s.set_message(r.status.name());
                        s
                    }
                }
            };
            let mut case = TestCase::new(r.id.clone(), status);
            case.set_time(std::time::Duration::from_secs_f64(r.seconds.max(0.0)));
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    report.to_string().unwrap_or_default()
}

/// Writes `mutants.json`, `summary.txt`/`summary.json`, `survivors.md` and `junit.xml` into
/// `out`.
pub fn write_all(out: &Path, results: &[MutantResult]) -> std::io::Result<Summary> {
    let summary = Summary::of(results);
    let write = |name: &str, text: &str| crate::run::write_atomic(&out.join(name), text);
    write(
        "mutants.json",
        &serde_json::to_string_pretty(results).unwrap_or_default(),
    )?;
    write("summary.txt", &summary.render())?;
    write(
        "summary.json",
        &serde_json::to_string_pretty(&summary).unwrap_or_default(),
    )?;
    write("survivors.md", &survivors(results))?;
    write("junit.xml", &junit(results))?;
    Ok(summary)
}

/// The results of several runs' output directories (shards), each mutant once (by id; a
/// shard that ran it wins over one that did not get to it).
pub fn merge(dirs: &[&Path]) -> std::io::Result<Vec<MutantResult>> {
    let mut by_id: BTreeMap<String, MutantResult> = BTreeMap::new();
    for dir in dirs {
        let path = dir.join("mutants.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let results: Vec<MutantResult> = serde_json::from_str(&text).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        })?;
        for r in results {
            by_id.entry(r.id.clone()).or_insert(r);
        }
        // Results of a shard interrupted before it wrote mutants.json.
        if let Ok(read) = std::fs::read_dir(dir.join("results")) {
            for item in read.flatten() {
                if let Some(r) = std::fs::read_to_string(item.path())
                    .ok()
                    .and_then(|t| serde_json::from_str::<MutantResult>(&t).ok())
                    .filter(|r| stored(dir, &r.mutant).is_some())
                {
                    by_id.entry(r.id.clone()).or_insert(r);
                }
            }
        }
    }
    Ok(by_id.into_values().collect())
}
