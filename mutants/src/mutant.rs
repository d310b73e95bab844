//! Mutants: what `python/mutant_enumerate.py` (mutmut 3's operators on libcst) finds in a set of
//! files, their stable ids, a uniform seeded sample, and applying one (one splice) and showing
//! it (a unified diff of the lines it touches).

use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A Python source file mutated: its id (the path under the package root's parent, e.g.
/// `helion/_compiler/pallas/view_ops.py`) and where it is read from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFile {
    /// The file's id: its path relative to the directory that holds the top-level package.
    pub rel: String,
    /// The file on disk (never written).
    pub path: PathBuf,
}

impl SourceFile {
    /// The dotted module name the file is imported as (`helion._compiler.pallas.view_ops`).
    pub fn module(&self) -> String {
        let stem = self.rel.strip_suffix(".py").unwrap_or(&self.rel);
        let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
        stem.replace('/', ".")
    }
}

/// One single-site mutant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mutant {
    /// The file's id ([`SourceFile::rel`]).
    pub file: String,
    /// 1-based line of the mutated node's start.
    pub line: u32,
    /// 0-based column of the node's start.
    pub column: u32,
    /// The node's last line.
    pub end_line: u32,
    /// The mutmut operator (`swap_op:Add->Subtract`, `number`, `arg_removal`, ...).
    pub operator: String,
    /// Which of that operator's mutants at this position (an operator may yield several).
    pub occurrence: u32,
    /// Byte offsets of the replaced text in the file.
    pub start: usize,
    /// End of the replaced text (exclusive).
    pub end: usize,
    /// The text replaced.
    pub original: String,
    /// The text put there.
    pub replacement: String,
    /// Inside a string literal or a logging/message call's arguments: counted apart.
    pub in_message: bool,
}

impl Mutant {
    /// The stable id: `file:line:column:operator#occurrence`.
    pub fn id(&self) -> String {
        format!(
            "{}:{}:{}:{}#{}",
            self.file, self.line, self.column, self.operator, self.occurrence
        )
    }

    /// A short key of the id (16 hex digits of its sha256), for file names.
    pub fn key(&self) -> String {
        let digest = Sha256::digest(self.id().as_bytes());
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// The operator's family (`swap_op`, `keywords`, `name`, ...): the summary's rows.
    pub fn family(&self) -> &str {
        self.operator.split(':').next().unwrap_or(&self.operator)
    }

    /// The file's text with the mutant applied, or an error when the text is not the one the
    /// mutant was found in.
    pub fn apply(&self, text: &str) -> Result<String, MutantError> {
        match text.get(self.start..self.end) {
            Some(s) if s == self.original => Ok(format!(
                "{}{}{}",
                &text[..self.start],
                self.replacement,
                &text[self.end..]
            )),
            _ => Err(MutantError::Stale {
                id: self.id(),
                expected: self.original.clone(),
            }),
        }
    }

    /// A unified diff of the lines the mutant changes.
    pub fn diff(&self, text: &str) -> Result<String, MutantError> {
        let mutated = self.apply(text)?;
        let old: Vec<&str> = text.lines().collect();
        let new: Vec<&str> = mutated.lines().collect();
        let first = self.line.saturating_sub(1) as usize;
        let old_end = (self.end_line as usize).min(old.len());
        let grown = new.len() as isize - old.len() as isize;
        let new_end = ((old_end as isize) + grown).max(first as isize) as usize;
        let mut out = format!(
            "--- a/{f}\n+++ b/{f}\n@@ -{l},{n} +{l},{m} @@\n",
            f = self.file,
            l = self.line,
            n = old_end.saturating_sub(first),
            m = new_end.saturating_sub(first)
        );
        for l in &old[first..old_end] {
            out.push_str(&format!("-{l}\n"));
        }
        for l in &new[first..new_end.min(new.len())] {
            out.push_str(&format!("+{l}\n"));
        }
        Ok(out)
    }
}

/// What can go wrong enumerating or applying mutants.
#[derive(Debug, thiserror::Error)]
pub enum MutantError {
    /// The enumerator could not be run.
    #[error("cannot run the mutant enumerator {script} with {python}: {source}")]
    Spawn {
        /// The interpreter.
        python: PathBuf,
        /// The script.
        script: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The enumerator failed or answered something else than its JSON.
    #[error("the mutant enumerator failed: {0}")]
    Enumerator(String),
    /// A file could not be parsed.
    #[error("cannot enumerate mutants of {file}: {error}")]
    File {
        /// The file's id.
        file: String,
        /// The parser's error.
        error: String,
    },
    /// The file changed since the mutant was found.
    #[error(
        "mutant {id}: the file no longer holds `{expected}` there (it changed since enumeration)"
    )]
    Stale {
        /// The mutant's id.
        id: String,
        /// The text it replaces.
        expected: String,
    },
    /// Reading a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

#[derive(Deserialize)]
struct EnumeratorAnswer {
    mutants: Vec<Mutant>,
    errors: Vec<FileError>,
}

#[derive(Deserialize)]
struct FileError {
    file: String,
    error: String,
}

/// Every mutant of `files`, in file and source order, found by `script`
/// (`python/mutant_enumerate.py`) run with `python` (an interpreter with mutmut 3).
pub fn enumerate(
    python: &Path,
    script: &Path,
    files: &[SourceFile],
) -> Result<Vec<Mutant>, MutantError> {
    let request = serde_json::json!({ "files": files });
    let mut child = Command::new(python)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| MutantError::Spawn {
            python: python.to_path_buf(),
            script: script.to_path_buf(),
            source,
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(request.to_string().as_bytes())
            .map_err(|source| MutantError::Spawn {
                python: python.to_path_buf(),
                script: script.to_path_buf(),
                source,
            })?;
    }
    let out = child
        .wait_with_output()
        .map_err(|source| MutantError::Spawn {
            python: python.to_path_buf(),
            script: script.to_path_buf(),
            source,
        })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: String = stderr.lines().rev().take(8).collect::<Vec<_>>().join("\n");
        return Err(MutantError::Enumerator(format!("{}: {tail}", out.status)));
    }
    let answer: EnumeratorAnswer = serde_json::from_slice(&out.stdout)
        .map_err(|e| MutantError::Enumerator(format!("unreadable answer: {e}")))?;
    if let Some(e) = answer.errors.into_iter().next() {
        return Err(MutantError::File {
            file: e.file,
            error: e.error,
        });
    }
    Ok(answer.mutants)
}

/// `n` mutants drawn uniformly without replacement with `seed` (all of them when there are no
/// more), kept in their original order.
pub fn sample(mutants: &[Mutant], n: usize, seed: u64) -> Vec<Mutant> {
    if n >= mutants.len() {
        return mutants.to_vec();
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut picked = rand::seq::index::sample(&mut rng, mutants.len(), n).into_vec();
    picked.sort_unstable();
    picked.into_iter().map(|i| mutants[i].clone()).collect()
}

/// Keeps the mutants whose line is in one of `ranges` (inclusive), for `--lines`.
pub fn within_lines(mutants: Vec<Mutant>, ranges: &[(u32, u32)]) -> Vec<Mutant> {
    if ranges.is_empty() {
        return mutants;
    }
    mutants
        .into_iter()
        .filter(|m| ranges.iter().any(|&(a, b)| (a..=b).contains(&m.line)))
        .collect()
}

/// Parses `--lines` (`120-180,300`).
pub fn parse_line_ranges(spec: &str) -> Result<Vec<(u32, u32)>, String> {
    spec.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|part| {
            let part = part.trim();
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let a: u32 = a
                .trim()
                .parse()
                .map_err(|_| format!("`{part}` is not a line or a range of lines (120-180)"))?;
            let b: u32 = b
                .trim()
                .parse()
                .map_err(|_| format!("`{part}` is not a line or a range of lines (120-180)"))?;
            if a > b {
                return Err(format!("`{part}`: the range runs backwards"));
            }
            Ok((a, b))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(line: u32, start: usize, end: usize, original: &str, replacement: &str) -> Mutant {
        Mutant {
            file: "pkg/mod.py".into(),
            line,
            column: 4,
            end_line: line,
            operator: "swap_op:Add->Subtract".into(),
            occurrence: 0,
            start,
            end,
            original: original.into(),
            replacement: replacement.into(),
            in_message: false,
        }
    }

    #[test]
    fn apply_and_diff_splice_one_site() {
        let text = "def f(a, b):\n    return a + b\n";
        let start = text.find("a + b").unwrap();
        let mutant = m(2, start, start + 5, "a + b", "a - b");
        assert_eq!(
            mutant.apply(text).unwrap(),
            "def f(a, b):\n    return a - b\n"
        );
        let diff = mutant.diff(text).unwrap();
        assert!(
            diff.contains("-    return a + b\n+    return a - b\n"),
            "{diff}"
        );
        assert_eq!(mutant.id(), "pkg/mod.py:2:4:swap_op:Add->Subtract#0");
        assert_eq!(mutant.family(), "swap_op");
        assert!(matches!(
            mutant.apply("def f(a, b):\n    return b + a\n"),
            Err(MutantError::Stale { .. })
        ));
    }

    #[test]
    fn sample_is_uniform_seeded_and_ordered() {
        let all: Vec<Mutant> = (0..100).map(|i| m(i + 1, 0, 0, "", "x")).collect();
        let a = sample(&all, 10, 7);
        assert_eq!(a, sample(&all, 10, 7));
        assert_eq!(a.len(), 10);
        assert!(a.windows(2).all(|w| w[0].line < w[1].line));
        assert_ne!(a, sample(&all, 10, 8));
        assert_eq!(sample(&all, 1000, 7).len(), 100);
    }

    #[test]
    fn line_ranges_parse_and_filter() {
        let r = parse_line_ranges("3-5, 9").unwrap();
        assert_eq!(r, vec![(3, 5), (9, 9)]);
        assert!(parse_line_ranges("5-3").is_err());
        assert!(parse_line_ranges("x").is_err());
        let all: Vec<Mutant> = (1..12).map(|i| m(i, 0, 0, "", "x")).collect();
        let kept: Vec<u32> = within_lines(all, &r).iter().map(|m| m.line).collect();
        assert_eq!(kept, vec![3, 4, 5, 9]);
        let f = SourceFile {
            rel: "helion/_compiler/pallas/view_ops.py".into(),
            path: "/x".into(),
        };
        assert_eq!(f.module(), "helion._compiler.pallas.view_ops");
    }
}
