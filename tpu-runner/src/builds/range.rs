//! Regression ranges: where, along an ordered list of builds (releases in release order, or a
//! source tree's commits oldest first), a case started (and stopped) showing a symptom. The
//! caller says what a case does on one build ([`Behaviour`]); this module only decides which
//! builds to try and what their answers mean, so it is tested on synthetic build lists.
//!
//! Two searches, as ClusterFuzz and `git bisect run` do them:
//! - [`scan`] tries every build (installed releases are few, each one Helion worker start)
//!   and reports both the regression range and, when the symptom went away again, the fixed
//!   range;
//! - [`bisect`] assumes the first build good and the last bad and halves the commits between,
//!   skipping builds that cannot answer (`git bisect skip`, exit 125) by trying the untested
//!   build nearest the middle instead.

use serde::Serialize;

/// What a case does on one build.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "behaves", content = "detail", rename_all = "kebab-case")]
pub enum Behaviour {
    /// As the reference says: its values, or a documented refusal where the case is refused.
    Good,
    /// The finding's symptom (its signature).
    Bad,
    /// Something else: refused, cannot run, another symptom; the detail says what.
    Other(String),
}

/// The answer of [`scan`]: indices into the build list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Scan {
    /// Every build's behaviour, in order.
    pub behaviours: Vec<Behaviour>,
    /// The last good build before the first bad one (`None`: bad from the start, or never
    /// good before it).
    pub last_good: Option<usize>,
    /// The first bad build (`None`: the symptom shows on no build).
    pub first_bad: Option<usize>,
    /// The last bad build and the first good one after it, when the symptom went away.
    pub fixed: Option<(usize, usize)>,
}

/// Tries every one of `n` builds in order.
pub fn scan(n: usize, mut behaviour: impl FnMut(usize) -> Behaviour) -> Scan {
    let behaviours: Vec<Behaviour> = (0..n).map(&mut behaviour).collect();
    let first_bad = behaviours.iter().position(|b| *b == Behaviour::Bad);
    let last_good =
        first_bad.and_then(|f| behaviours[..f].iter().rposition(|b| *b == Behaviour::Good));
    let last_bad = behaviours.iter().rposition(|b| *b == Behaviour::Bad);
    let fixed = last_bad.and_then(|l| {
        behaviours[l + 1..]
            .iter()
            .position(|b| *b == Behaviour::Good)
            .map(|g| (l, l + 1 + g))
    });
    Scan {
        behaviours,
        last_good,
        first_bad,
        fixed,
    }
}

/// The answer of [`bisect`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Bisection {
    /// The last build known good.
    pub last_good: usize,
    /// The first build known bad: the culprit when `last_good + 1 == first_bad` or every build
    /// between was skipped.
    pub first_bad: usize,
    /// Builds between them that could not answer.
    pub skipped: Vec<usize>,
    /// Every build tried and what it did, in the order tried.
    pub tried: Vec<(usize, Behaviour)>,
}

/// Why [`bisect`] could not start.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BisectError {
    /// Fewer than two builds.
    #[error("bisecting needs at least two builds, a good one first and a bad one last")]
    TooFew,
    /// An end does not behave as it must.
    #[error("build {index} (the {end} end) is not {expected}: it behaves {got:?}")]
    Ends {
        /// Which build.
        index: usize,
        /// `first` or `last`.
        end: &'static str,
        /// What it must be.
        expected: &'static str,
        /// What it did.
        got: Behaviour,
    },
}

/// Finds the first bad build of `n`, oldest first, where build 0 must be good and build
/// `n - 1` bad (both are tried first, the bad end first). `O(log n)` tries when no build is skipped.
pub fn bisect(
    n: usize,
    mut behaviour: impl FnMut(usize) -> Behaviour,
) -> Result<Bisection, BisectError> {
    if n < 2 {
        return Err(BisectError::TooFew);
    }
    let mut tried = Vec::new();
    let mut try_one = |i: usize, tried: &mut Vec<(usize, Behaviour)>| {
        let b = behaviour(i);
        tried.push((i, b.clone()));
        b
    };
    // The bad end first: a caller that learns the symptom from it (a case script) judges
    // every later build by it.
    for (index, end, expected, want) in [
        (n - 1, "last", "bad", Behaviour::Bad),
        (0, "first", "good", Behaviour::Good),
    ] {
        let got = try_one(index, &mut tried);
        if got != want {
            return Err(BisectError::Ends {
                index,
                end,
                expected,
                got,
            });
        }
    }
    let (mut good, mut bad) = (0, n - 1);
    let mut skipped: Vec<usize> = Vec::new();
    loop {
        // Untested builds strictly between, nearest the middle first.
        let mid = good + (bad - good) / 2;
        let next = (good + 1..bad)
            .filter(|i| !skipped.contains(i))
            .min_by_key(|i| i.abs_diff(mid));
        let Some(i) = next else { break };
        match try_one(i, &mut tried) {
            Behaviour::Good => good = i,
            Behaviour::Bad => bad = i,
            Behaviour::Other(_) => skipped.push(i),
        }
    }
    skipped.retain(|i| (good..bad).contains(i));
    skipped.sort_unstable();
    Ok(Bisection {
        last_good: good,
        first_bad: bad,
        skipped,
        tried,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(s: &str) -> impl Fn(usize) -> Behaviour + '_ {
        move |i| match s.as_bytes()[i] {
            b'g' => Behaviour::Good,
            b'b' => Behaviour::Bad,
            _ => Behaviour::Other("refused".into()),
        }
    }

    #[test]
    fn scan_finds_introduction_and_fix() {
        // 1.2.0 refuses, 1.4.0 good, 1.5.0 and 1.5.1 bad, main good.
        let s = scan(5, from("rgbbg"));
        assert_eq!(s.last_good, Some(1));
        assert_eq!(s.first_bad, Some(2));
        assert_eq!(s.fixed, Some((3, 4)));
    }

    #[test]
    fn scan_of_a_symptom_present_from_the_start_or_never() {
        let s = scan(3, from("bbb"));
        assert_eq!((s.last_good, s.first_bad, s.fixed), (None, Some(0), None));
        let s = scan(3, from("grg"));
        assert_eq!((s.last_good, s.first_bad, s.fixed), (None, None, None));
    }

    #[test]
    fn bisect_finds_the_first_bad_build_in_log_tries() {
        for culprit in 1..64 {
            let bits: String = (0..64)
                .map(|i| if i < culprit { 'g' } else { 'b' })
                .collect();
            let b = bisect(64, from(&bits)).unwrap();
            assert_eq!((b.last_good, b.first_bad), (culprit - 1, culprit));
            assert!(b.tried.len() <= 2 + 6, "{culprit}: {} tries", b.tried.len());
        }
    }

    #[test]
    fn skipped_builds_widen_the_range_and_are_listed() {
        // Builds 3 and 4 cannot run; the culprit is 4 or 5: the range is 2..5 with both listed.
        let b = bisect(8, from("gggrrbbb")).unwrap();
        assert_eq!((b.last_good, b.first_bad), (2, 5));
        assert_eq!(b.skipped, vec![3, 4]);
    }

    #[test]
    fn ends_that_do_not_behave_are_refused() {
        assert_eq!(bisect(1, from("g")), Err(BisectError::TooFew));
        assert!(matches!(
            bisect(4, from("bbbb")),
            Err(BisectError::Ends { index: 0, .. })
        ));
        assert!(matches!(
            bisect(4, from("gggg")),
            Err(BisectError::Ends { index: 3, .. })
        ));
    }
}
