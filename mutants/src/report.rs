//! What a mutants run writes: `mutants.json` (every mutant's result), the summary by file and
//! by operator family (score = killed / (covered − reviewed equivalent), per suite and for
//! their union; not covered, invalid, message/logging mutants, likely equivalent survivors and
//! those a [`Review`] shows equivalent counted apart), the survivors' diffs, JUnit, and the
//! merge of shards' output directories.

use crate::review::{Review, Verdict};
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
    /// Survivors the review shows equivalent: left out of the score's denominator.
    #[serde(default)]
    pub reviewed_equivalent: usize,
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
    fn add(&mut self, r: &MutantResult, review: &Review) {
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
                if review.excludes(r) {
                    self.reviewed_equivalent += 1;
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

    /// Covered mutants that could be killed: covered, less the reviewed equivalent ones.
    pub fn killable(&self) -> usize {
        self.covered - self.reviewed_equivalent
    }

    /// killed / (covered − reviewed equivalent), in percent (0 when nothing is left).
    pub fn score(&self, killed: usize) -> f64 {
        if self.killable() == 0 {
            0.0
        } else {
            100.0 * killed as f64 / self.killable() as f64
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
    /// Review entries that disagree with the results: `id: killed anyway` (the review is
    /// wrong) or `id: stale` (it names other code).
    #[serde(default)]
    pub review_conflicts: Vec<String>,
}

impl Summary {
    /// The summary of `results`, survivors reviewed equivalent by `review` left out of the
    /// scores.
    pub fn of(results: &[MutantResult], review: &Review) -> Summary {
        let mut s = Summary::default();
        for r in results {
            s.total.add(r, review);
            s.by_file
                .entry(r.mutant.file.clone())
                .or_default()
                .add(r, review);
            s.by_operator
                .entry(r.mutant.family().to_owned())
                .or_default()
                .add(r, review);
        }
        s.review_conflicts = review
            .conflicts(results)
            .into_iter()
            .map(|(id, c)| format!("{id}: {}", c.describe()))
            .collect();
        s
    }

    /// The summary as text tables.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let header = format!(
            "{:<44} {:>5} {:>5} {:>7} {:>7} {:>7} {:>5} {:>5} {:>5} {:>5} {:>4} {:>4} {:>6}\n",
            "",
            "all",
            "cov",
            "corpus",
            "campgn",
            "union",
            "surv",
            "equiv",
            "rev",
            "!cov",
            "inv",
            "msg",
            "s/mut"
        );
        let row = |name: &str, c: &Counts| {
            format!(
                "{:<44} {:>5} {:>5} {:>6.1}% {:>6.1}% {:>6.1}% {:>5} {:>5} {:>5} {:>5} {:>4} {:>4} {:>6.1}\n",
                name,
                c.mutants,
                c.covered,
                c.score(c.killed_corpus),
                c.score(c.killed_campaign),
                c.score(c.killed),
                c.survived,
                c.likely_equivalent,
                c.reviewed_equivalent,
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
        out.push_str(
            "by file (score = killed / (covered - rev); equiv: same module on every covering \
             case; rev: reviewed equivalent, mutants/reviewed-equivalent.json):\n",
        );
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
        if !self.review_conflicts.is_empty() {
            let _ = writeln!(out, "\nthe review disagrees with this run:");
            for c in &self.review_conflicts {
                let _ = writeln!(out, "  {c}");
            }
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

/// Where a survivor is listed in `survivors.md`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SurvivorKind {
    /// A blind spot, as far as anyone knows.
    Plain,
    /// Every covering case generated the same module.
    LikelyEquivalent,
    /// Reviewed equivalent.
    Reviewed,
}

/// The survivors' diffs (likely equivalent ones after the rest, reviewed equivalent ones last
/// with the review's reason), and the lines no case covers.
pub fn survivors(results: &[MutantResult], review: &Review) -> String {
    let mut out = String::new();
    let kind = |r: &MutantResult| {
        if review.excludes(r) {
            SurvivorKind::Reviewed
        } else if r.likely_equivalent() {
            SurvivorKind::LikelyEquivalent
        } else {
            SurvivorKind::Plain
        }
    };
    for (section, title) in [
        (SurvivorKind::Plain, "survivors"),
        (
            SurvivorKind::LikelyEquivalent,
            "survivors, likely equivalent (same generated module on every covering case)",
        ),
        (
            SurvivorKind::Reviewed,
            "survivors reviewed equivalent (left out of the score; the review's reason)",
        ),
    ] {
        let list: Vec<&MutantResult> = results
            .iter()
            .filter(|r| r.status == Status::Survived && !r.mutant.in_message && kind(r) == section)
            .collect();
        let _ = writeln!(out, "## {title} ({})\n", list.len());
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
            let reason = match review.verdict(r) {
                Verdict::Equivalent(e) => format!("equivalent: {}\n", e.reason),
                Verdict::Unreviewed | Verdict::KilledAnyway(_) | Verdict::Stale(_) => String::new(),
            };
            let _ = writeln!(
                out,
                "### {}\n{}\n{reason}```diff\n{}```\n",
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

/// JUnit: one test case per mutant (a survivor fails; not covered, invalid, message and
/// reviewed equivalent mutants are skipped with the reason).
pub fn junit(results: &[MutantResult], review: &Review) -> String {
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
            } else if let (Status::Survived, Verdict::Equivalent(e)) = (r.status, review.verdict(r))
            {
                let mut s = TestCaseStatus::skipped();
                s.set_message(format!("equivalent: {}", e.reason));
                s
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
/// `out`, survivors reviewed equivalent by `review` set apart.
pub fn write_all(
    out: &Path,
    results: &[MutantResult],
    review: &Review,
) -> std::io::Result<Summary> {
    let summary = Summary::of(results, review);
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
    write("survivors.md", &survivors(results, review))?;
    write("junit.xml", &junit(results, review))?;
    Ok(summary)
}

/// The results of several runs' output directories (shards), each mutant once (by id; a
/// shard that ran it wins over one that did not get to it).
pub fn merge(dirs: &[&Path]) -> std::io::Result<Vec<MutantResult>> {
    let mut by_id: BTreeMap<String, MutantResult> = BTreeMap::new();
    for dir in dirs {
        let path = dir.join("mutants.json");
        // A shard interrupted before it wrote mutants.json still has its results/.
        let text = match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && dir.join("results").is_dir() => {
                "[]".to_owned()
            }
            r => {
                r.map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?
            }
        };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutant::Mutant;
    use crate::run::{Kill, SuiteResult};

    fn result(
        line: u32,
        status: Status,
        killer: Option<SuiteId>,
        in_message: bool,
    ) -> MutantResult {
        let mutant = Mutant {
            file: "helion/_compiler/pallas/view_ops.py".into(),
            line,
            column: 0,
            end_line: line,
            operator: "swap_op:Add->Subtract".into(),
            occurrence: 0,
            start: 0,
            end: 1,
            original: "+".into(),
            replacement: "-".into(),
            in_message,
        };
        let covering = usize::from(status != Status::NotCovered);
        let suites = SuiteId::ALL
            .into_iter()
            .map(|s| {
                let kill = (killer == Some(s)).then(|| Kill {
                    case: "c".into(),
                    how: "outcome agree -> mismatch".into(),
                    observed: crate::observe::Observation {
                        outcome: "mismatch".into(),
                        status: "ok".into(),
                        class: None,
                        values_match: Some(false),
                        message_agrees: None,
                        generated: None,
                    },
                    seconds: 1.0,
                    cases_run: 1,
                });
                (
                    s,
                    SuiteResult {
                        covering,
                        run: covering,
                        kill,
                        seconds: 1.0,
                        timed_out: false,
                        same_generated: true,
                    },
                )
            })
            .collect();
        MutantResult {
            id: mutant.id(),
            mutant,
            diff: "-a + b\n+a - b\n".into(),
            status,
            suites,
            detail: None,
            start_seconds: 0.5,
            seconds: 2.0,
        }
    }

    #[test]
    fn scores_count_suites_apart_and_together_and_set_aside_the_rest() {
        let results = vec![
            result(1, Status::Killed, Some(SuiteId::Corpus), false),
            result(2, Status::Killed, Some(SuiteId::Campaign), false),
            result(3, Status::Survived, None, false),
            result(4, Status::NotCovered, None, false),
            result(5, Status::Invalid, None, false),
            result(6, Status::Survived, None, true),
        ];
        let s = Summary::of(&results, &Review::none());
        let t = &s.total;
        assert_eq!((t.mutants, t.covered, t.killed), (6, 3, 2));
        assert_eq!((t.killed_corpus, t.killed_campaign), (1, 1));
        assert_eq!((t.not_covered, t.invalid, t.in_message), (1, 1, 1));
        assert_eq!(t.likely_equivalent, 1);
        assert!((t.score(t.killed) - 200.0 / 3.0).abs() < 1e-9);
        let text = s.render();
        assert!(text.contains("pallas/view_ops.py"), "{text}");
        let surv = survivors(&results, &Review::none());
        assert!(
            surv.contains("view_ops.py:3:0:swap_op:Add->Subtract#0"),
            "{surv}"
        );
        assert!(
            surv.contains("- helion/_compiler/pallas/view_ops.py: 4"),
            "{surv}"
        );
        let xml = junit(&results, &Review::none());
        assert!(
            xml.contains("survived") && xml.contains("testcase"),
            "{xml}"
        );
    }

    /// A review naming `results[i]` (its id and text) as equivalent, and one naming line 9
    /// with other text.
    fn review_of(results: &[MutantResult], lines: &[u32]) -> Review {
        let mut equivalent: Vec<crate::review::Equivalent> = results
            .iter()
            .filter(|r| lines.contains(&r.mutant.line))
            .map(|r| crate::review::Equivalent {
                id: r.id.clone(),
                original: r.mutant.original.clone(),
                replacement: r.mutant.replacement.clone(),
                reason: "the line's value is never read".into(),
            })
            .collect();
        equivalent.push(crate::review::Equivalent {
            id: "helion/_compiler/pallas/view_ops.py:9:0:swap_op:Add->Subtract#0".into(),
            original: "*".into(),
            replacement: "/".into(),
            reason: "read in another build".into(),
        });
        Review {
            helion: "1.5.1".into(),
            equivalent,
        }
    }

    #[test]
    fn a_reviewed_equivalent_survivor_leaves_the_score_and_a_killed_one_is_a_conflict() {
        let results = vec![
            result(1, Status::Killed, Some(SuiteId::Corpus), false),
            result(2, Status::Survived, None, false),
            result(3, Status::Survived, None, false),
            result(7, Status::Killed, Some(SuiteId::Campaign), false),
            result(9, Status::Survived, None, false),
        ];
        let review = review_of(&results, &[3, 7]);
        let s = Summary::of(&results, &review);
        let t = &s.total;
        // 5 covered, 1 reviewed equivalent survivor (3); 7 is killed whatever the review says;
        // 9's entry names other text, so it is a plain survivor.
        assert_eq!((t.covered, t.killed, t.survived), (5, 2, 3));
        assert_eq!((t.reviewed_equivalent, t.killable()), (1, 4));
        assert!((t.score(t.killed) - 50.0).abs() < 1e-9);
        assert_eq!(s.review_conflicts.len(), 2, "{:?}", s.review_conflicts);
        assert!(
            s.review_conflicts[0].contains(":7:0:") && s.review_conflicts[0].contains("yet killed")
        );
        assert!(s.review_conflicts[1].contains(":9:0:") && s.review_conflicts[1].contains("stale"));
        let text = s.render();
        assert!(
            text.contains("the review disagrees with this run"),
            "{text}"
        );
        let surv = survivors(&results, &review);
        let reviewed = surv
            .split("## survivors reviewed equivalent")
            .nth(1)
            .expect("a reviewed section");
        assert!(
            reviewed.contains(":3:0:") && reviewed.contains("never read"),
            "{surv}"
        );
        assert!(
            !reviewed.contains(":2:0:") && !reviewed.contains(":9:0:"),
            "{surv}"
        );
        let xml = junit(&results, &review);
        assert!(xml.contains("equivalent: the line"), "{xml}");
        assert_eq!(xml.matches("<failure").count(), 2, "{xml}");
        // Without a review the same results score 2 of 5.
        let plain = Summary::of(&results, &Review::none());
        assert!((plain.total.score(plain.total.killed) - 40.0).abs() < 1e-9);
    }

    #[test]
    fn shards_merge_by_mutant_id() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let one = result(1, Status::Killed, Some(SuiteId::Corpus), false);
        let two = result(2, Status::Survived, None, false);
        write_all(a.path(), std::slice::from_ref(&one), &Review::none()).unwrap();
        write_all(b.path(), &[two.clone(), one.clone()], &Review::none()).unwrap();
        let merged = merge(&[a.path(), b.path()]).unwrap();
        assert_eq!(merged.len(), 2);
        assert!(merge(&[Path::new("/nonexistent-mutants-dir")]).is_err());
    }
}
