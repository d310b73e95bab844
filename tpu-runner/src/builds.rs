//! Helion under test is a choice: a [`HelionBuild`] is the pinned release of the Helion
//! environment, another release from PyPI, a wheel file, or a source tree (a Helion checkout).
//! Every build but the pinned one is an *overlay*: a directory put first on the Helion worker's
//! `PYTHONPATH`, over the one shared torch/JAX venv ([`crate::provision_helion`]), so an extra
//! build costs a few MB and seconds, not a second 6 GB environment. Releases and wheels are
//! installed by `pip install --no-deps --target` into `<helion venv>/builds/<id>/site`; a source
//! tree is used in place (a developer's edits are what runs) and only registered there.
//!
//! Each build directory holds `build.json` ([`BuildRecord`]); [`installed`] lists them in
//! release order. A build's [`BuildIdentity`] (version, wheel sha256, git commit) is what
//! findings, statistics and reports record, and [`range`] finds where a symptom appeared.

pub mod range;

use crate::provision::DEFAULT_HELION_VERSION;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A build as the user names it (`--helion-build SPEC`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildSpec {
    /// The release the Helion environment pins ([`DEFAULT_HELION_VERSION`]): no overlay.
    Pinned,
    /// A release from PyPI, e.g. `1.5.0`.
    Release(String),
    /// A wheel file.
    Wheel(PathBuf),
    /// A Helion source tree, used in place.
    Source(PathBuf),
}

impl BuildSpec {
    /// Reads a spec: `pinned`, a version (`1.5.0`), a path to a `.whl`, or a directory.
    pub fn parse(spec: &str) -> Result<BuildSpec, BuildError> {
        let spec = spec.trim();
        if spec.is_empty() || spec == "pinned" || spec == DEFAULT_HELION_VERSION {
            return Ok(BuildSpec::Pinned);
        }
        let path = Path::new(spec);
        if spec.ends_with(".whl") {
            return Ok(BuildSpec::Wheel(path.to_path_buf()));
        }
        if path.is_dir() || spec.contains('/') {
            return Ok(BuildSpec::Source(path.to_path_buf()));
        }
        if is_version(spec) {
            return Ok(BuildSpec::Release(spec.to_owned()));
        }
        Err(BuildError::BadSpec(spec.to_owned()))
    }
}

impl fmt::Display for BuildSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildSpec::Pinned => write!(f, "{DEFAULT_HELION_VERSION}"),
            BuildSpec::Release(v) => f.write_str(v),
            BuildSpec::Wheel(p) | BuildSpec::Source(p) => write!(f, "{}", p.display()),
        }
    }
}

/// `1.5.0`, `1.5.0rc1`, `2.0.0.dev3`: digits first, then digits, dots and letters.
fn is_version(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_digit())
        && s.contains('.')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')
}

/// Why a build could not be named, installed or read.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// Not a version, a wheel or a directory.
    #[error(
        "`{0}` names no Helion build: give a release (`1.5.0`), a wheel file (`.whl`) or a Helion source tree"
    )]
    BadSpec(String),
    /// pip found no such release.
    #[error("pip could not install helion=={version}: {reason}")]
    NoSuchRelease {
        /// The version asked for.
        version: String,
        /// pip's last lines.
        reason: String,
    },
    /// A wheel of another package, or a file that is not there.
    #[error("{path}: {reason}")]
    BadWheel {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A directory without `helion/__init__.py`.
    #[error("{0} is not a Helion source tree (no helion/__init__.py)")]
    NotHelionTree(PathBuf),
    /// `--helion-build` names a build that is not installed.
    #[error(
        "Helion build `{0}` is not installed: run `pallas-diff provision --helion-build {0}` (installed: {1})"
    )]
    NotInstalled(String, String),
    /// A file system error.
    #[error("{path}: {source}")]
    Io {
        /// Where.
        path: PathBuf,
        /// What.
        source: std::io::Error,
    },
    /// A malformed `build.json`.
    #[error("{path}: {reason}")]
    Record {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BuildError + '_ {
    move |source| BuildError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Where a build came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Origin {
    /// The Helion environment's own release.
    Pinned,
    /// A PyPI release.
    Release,
    /// A wheel file, by its sha256.
    Wheel {
        /// The file it was installed from.
        file: PathBuf,
        /// Its sha256.
        sha256: String,
    },
    /// A source tree, used in place.
    Source {
        /// The tree.
        path: PathBuf,
    },
}

/// `build.json`: what was installed, kept beside it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildRecord {
    /// The build's directory name under `builds/`.
    pub id: String,
    /// Helion's version as installed (a source tree's version is read when a worker starts).
    pub version: String,
    /// Where it came from.
    pub origin: Origin,
}

/// What a finding, a statistics record or a report says of the build that ran.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildIdentity {
    /// The build's id (`1.5.1`, `1.5.0`, `wheel-3f2a…`, `src-…`).
    pub id: String,
    /// `helion.__version__` as installed.
    pub version: String,
    /// A wheel's sha256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wheel_sha256: Option<String>,
    /// A source tree's `git rev-parse HEAD`, with `-dirty` when it has uncommitted changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

impl fmt::Display for BuildIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "helion {}", self.version)?;
        if self.id != self.version {
            write!(f, " ({})", self.id)?;
        }
        if let Some(c) = &self.commit {
            write!(f, " at {c}")?;
        }
        Ok(())
    }
}

/// One Helion build, installed or pinned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HelionBuild {
    /// Its record.
    pub record: BuildRecord,
    /// The directory put first on the worker's `PYTHONPATH`; `None` for the pinned release.
    pub overlay: Option<PathBuf>,
}

impl HelionBuild {
    /// The pinned release of the Helion environment.
    pub fn pinned() -> HelionBuild {
        HelionBuild {
            record: BuildRecord {
                id: DEFAULT_HELION_VERSION.to_owned(),
                version: DEFAULT_HELION_VERSION.to_owned(),
                origin: Origin::Pinned,
            },
            overlay: None,
        }
    }

    /// The build's id.
    pub fn id(&self) -> &str {
        &self.record.id
    }

    /// What runs records of it; a source tree's commit is read now (it changes under us).
    pub fn identity(&self) -> BuildIdentity {
        let (wheel_sha256, commit) = match &self.record.origin {
            Origin::Pinned | Origin::Release => (None, None),
            Origin::Wheel { sha256, .. } => (Some(sha256.clone()), None),
            Origin::Source { path } => (None, git_commit(path)),
        };
        // A source tree's version moves with its checkout: read now, as its commit is.
        let version = match &self.record.origin {
            Origin::Source { path } => source_version(path),
            Origin::Pinned | Origin::Release | Origin::Wheel { .. } => None,
        };
        BuildIdentity {
            id: self.record.id.clone(),
            version: version.unwrap_or_else(|| self.record.version.clone()),
            wheel_sha256,
            commit,
        }
    }
}

/// The builds directory of a Helion venv.
pub fn builds_dir(helion_venv: &Path) -> PathBuf {
    helion_venv.join("builds")
}

/// Every build: the pinned release, then those installed under `dir`, in release order
/// ([`version_key`]; source trees last).
pub fn installed(dir: &Path) -> Result<Vec<HelionBuild>, BuildError> {
    let mut builds = vec![HelionBuild::pinned()];
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(builds),
        Err(e) => return Err(io(dir)(e)),
    };
    for entry in entries {
        let entry = entry.map_err(io(dir))?;
        let record_path = entry.path().join("build.json");
        if !record_path.is_file() {
            continue; // an install that did not finish
        }
        builds.push(read_build(&entry.path())?);
    }
    builds.sort_by_key(order_key);
    Ok(builds)
}

fn order_key(b: &HelionBuild) -> (bool, Vec<u64>, String) {
    (
        matches!(b.record.origin, Origin::Source { .. }),
        version_key(&b.record.version),
        b.record.id.clone(),
    )
}

/// A version's numeric components for ordering releases (`1.10.0` after `1.9.2`); a
/// component's trailing letters (`0rc1`) are ignored.
pub fn version_key(version: &str) -> Vec<u64> {
    version
        .split('.')
        .map(|part| {
            let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().unwrap_or(0)
        })
        .collect()
}

fn read_build(dir: &Path) -> Result<HelionBuild, BuildError> {
    let path = dir.join("build.json");
    let text = std::fs::read_to_string(&path).map_err(io(&path))?;
    let record: BuildRecord = serde_json::from_str(&text).map_err(|e| BuildError::Record {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    let overlay = match &record.origin {
        Origin::Pinned => None,
        Origin::Release | Origin::Wheel { .. } => Some(dir.join("site")),
        Origin::Source { path } => Some(path.clone()),
    };
    Ok(HelionBuild { record, overlay })
}

/// The installed build `spec` names (the pinned release needs no install).
pub fn find(dir: &Path, spec: &BuildSpec) -> Result<HelionBuild, BuildError> {
    let builds = installed(dir)?;
    let wanted = match spec {
        BuildSpec::Pinned => return Ok(HelionBuild::pinned()),
        BuildSpec::Release(v) => builds
            .iter()
            .find(|b| b.record.origin == Origin::Release && &b.record.version == v),
        BuildSpec::Wheel(file) => {
            let sha = sha256_file(file)?;
            builds.iter().find(
                |b| matches!(&b.record.origin, Origin::Wheel { sha256, .. } if *sha256 == sha),
            )
        }
        BuildSpec::Source(path) => {
            let path = canonical_tree(path)?;
            builds
                .iter()
                .find(|b| matches!(&b.record.origin, Origin::Source { path: p } if *p == path))
        }
    };
    wanted.cloned().ok_or_else(|| {
        BuildError::NotInstalled(
            spec.to_string(),
            builds
                .iter()
                .map(|b| b.id().to_owned())
                .collect::<Vec<_>>()
                .join(", "),
        )
    })
}

/// Installs the build `spec` names under `dir` with the Helion environment's `python` (pip),
/// or returns it when it is there already. A release or a wheel goes into a temporary
/// directory first and is renamed into place only when pip succeeded and the result is Helion:
/// an interrupted install leaves nothing [`installed`] lists.
pub fn install(
    dir: &Path,
    spec: &BuildSpec,
    python: &Path,
    verbose: bool,
) -> Result<HelionBuild, BuildError> {
    if let Ok(found) = find(dir, spec) {
        return Ok(found);
    }
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let (id, origin, requirement) = match spec {
        BuildSpec::Pinned => return Ok(HelionBuild::pinned()),
        BuildSpec::Release(v) => (v.clone(), Origin::Release, format!("helion=={v}")),
        BuildSpec::Wheel(file) => {
            check_wheel_name(file)?;
            let sha256 = sha256_file(file)?;
            (
                format!("wheel-{}", &sha256[..12]),
                Origin::Wheel {
                    file: std::fs::canonicalize(file).map_err(io(file))?,
                    sha256,
                },
                file.display().to_string(),
            )
        }
        BuildSpec::Source(path) => {
            let path = canonical_tree(path)?;
            let id = format!("src-{}", short_hash(path.to_string_lossy().as_bytes()));
            let version = source_version(&path).unwrap_or_else(|| "source".to_owned());
            let record = BuildRecord {
                id: id.clone(),
                version,
                origin: Origin::Source { path },
            };
            return register(dir, record);
        }
    };
    let staging = tempfile::Builder::new()
        .prefix(".installing-")
        .tempdir_in(dir)
        .map_err(io(dir))?;
    let site = staging.path().join("site");
    if verbose {
        eprintln!(
            "pallas-diff: installing Helion build {spec} into {}",
            dir.display()
        );
    }
    let out = Command::new(python)
        .args([
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--disable-pip-version-check",
            "--quiet",
        ])
        .arg("--target")
        .arg(&site)
        .arg(&requirement)
        .output()
        .map_err(io(python))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let reason = stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .rev()
            .take(2)
            .collect::<Vec<_>>()
            .join(" / ");
        return Err(match spec {
            BuildSpec::Release(v) => BuildError::NoSuchRelease {
                version: v.clone(),
                reason,
            },
            BuildSpec::Pinned | BuildSpec::Wheel(_) | BuildSpec::Source(_) => {
                BuildError::BadWheel {
                    path: PathBuf::from(&requirement),
                    reason,
                }
            }
        });
    }
    if !site.join("helion").join("__init__.py").is_file() {
        return Err(BuildError::BadWheel {
            path: PathBuf::from(&requirement),
            reason: "installs no `helion` package".into(),
        });
    }
    let version = installed_version(&site).unwrap_or_else(|| id.clone());
    let record = BuildRecord {
        id: id.clone(),
        version,
        origin,
    };
    write_record(staging.path(), &record)?;
    let target = dir.join(&id);
    let staged = staging.keep();
    std::fs::rename(&staged, &target).map_err(io(&target))?;
    read_build(&target)
}

fn register(dir: &Path, record: BuildRecord) -> Result<HelionBuild, BuildError> {
    let target = dir.join(&record.id);
    std::fs::create_dir_all(&target).map_err(io(&target))?;
    write_record(&target, &record)?;
    read_build(&target)
}

fn write_record(dir: &Path, record: &BuildRecord) -> Result<(), BuildError> {
    let path = dir.join("build.json");
    let tmp = dir.join("build.json.partial");
    let text = serde_json::to_string_pretty(record).expect("a build record serializes");
    std::fs::write(&tmp, text).map_err(io(&tmp))?;
    std::fs::rename(&tmp, &path).map_err(io(&path))
}

/// A wheel's file name is `{distribution}-{version}-…whl`: only `helion` wheels are builds.
fn check_wheel_name(file: &Path) -> Result<(), BuildError> {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
    match name {
        Some(n) if n.to_ascii_lowercase().starts_with("helion-") => Ok(()),
        Some(n) => Err(BuildError::BadWheel {
            path: file.to_path_buf(),
            reason: format!("`{n}` is not a wheel of the `helion` distribution"),
        }),
        None => Err(BuildError::BadWheel {
            path: file.to_path_buf(),
            reason: "not a file".into(),
        }),
    }
}

fn canonical_tree(path: &Path) -> Result<PathBuf, BuildError> {
    let path = std::fs::canonicalize(path).map_err(|_| BuildError::NotHelionTree(path.into()))?;
    if path.join("helion").join("__init__.py").is_file() {
        Ok(path)
    } else {
        Err(BuildError::NotHelionTree(path))
    }
}

/// The `Version:` of the `helion-*.dist-info/METADATA` pip wrote into `site`.
fn installed_version(site: &Path) -> Option<String> {
    let entries = std::fs::read_dir(site).ok()?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("helion-") && name.ends_with(".dist-info") {
            let meta = std::fs::read_to_string(entry.path().join("METADATA")).ok()?;
            return meta
                .lines()
                .find_map(|l| l.strip_prefix("Version:"))
                .map(|v| v.trim().to_owned());
        }
    }
    None
}

/// A source tree's own version: as its packaging declares it literally (`version = "…"` in
/// `pyproject.toml`), else as a version-from-git build backend (hatch-vcs, setuptools-scm:
/// Helion's `[tool.hatch.version] source = "vcs"`) computes it from `git describe`, i.e. what
/// `pip install` of the tree would make `helion.__version__` ([`describe_version`]); `None`
/// when neither says. Not the version the worker's `importlib.metadata` finds: a tree on
/// `PYTHONPATH` has no metadata, and that read the venv's 1.5.1 (measured on Helion's main).
pub fn source_version(tree: &Path) -> Option<String> {
    let text = std::fs::read_to_string(tree.join("pyproject.toml")).ok();
    let literal = text.as_deref().and_then(|t| {
        t.lines().find_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("version")?.trim_start().strip_prefix('=')?;
            Some(rest.trim().trim_matches('"').to_owned())
        })
    });
    literal.or_else(|| {
        let out = Command::new("git")
            .arg("-C")
            .arg(tree)
            .args(["describe", "--tags", "--long", "--match", "v[0-9]*"])
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        describe_version(String::from_utf8_lossy(&out.stdout).trim())
    })
}

/// The version `git describe --tags --long` output stands for, as setuptools-scm's default
/// scheme writes it: at a tag, the tag (`v1.4.0-0-gef091f4` → `1.4.0`); N commits after it,
/// the next patch release's N-th dev release with the commit (`v1.4.0-150-gef091f41` →
/// `1.4.1.dev150+gef091f41`).
pub fn describe_version(describe: &str) -> Option<String> {
    let mut parts = describe.rsplitn(3, '-');
    let (hash, distance, tag) = (parts.next()?, parts.next()?, parts.next()?);
    let distance: u64 = distance.parse().ok()?;
    let tag = tag.strip_prefix('v').unwrap_or(tag);
    if distance == 0 {
        return Some(tag.to_owned());
    }
    let (head, last) = tag.rsplit_once('.')?;
    let next: u64 = last.parse::<u64>().ok()? + 1;
    Some(format!("{head}.{next}.dev{distance}+{hash}"))
}

/// `git rev-parse HEAD` of a tree, `-dirty` appended when `git status` lists changes; `None`
/// when it is not a git checkout.
pub fn git_commit(tree: &Path) -> Option<String> {
    let head = Command::new("git")
        .arg("-C")
        .arg(tree)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let mut commit = String::from_utf8_lossy(&head.stdout).trim().to_owned();
    let dirty = Command::new("git")
        .arg("-C")
        .arg(tree)
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .is_some_and(|o| o.status.success() && !o.stdout.is_empty());
    if dirty {
        commit.push_str("-dirty");
    }
    Some(commit)
}

fn sha256_file(file: &Path) -> Result<String, BuildError> {
    use sha2::Digest;
    let bytes = std::fs::read(file).map_err(|e| BuildError::BadWheel {
        path: file.to_path_buf(),
        reason: e.to_string(),
    })?;
    Ok(sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

fn short_hash(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_git_describe_reads_as_the_version_a_vcs_build_backend_writes() {
        assert_eq!(
            describe_version("v1.4.0-150-gef091f41").as_deref(),
            Some("1.4.1.dev150+gef091f41")
        );
        assert_eq!(
            describe_version("v1.5.1-0-g0123abc").as_deref(),
            Some("1.5.1")
        );
        assert_eq!(describe_version("ef091f41"), None);
        assert_eq!(describe_version("v1.x-3-gabc"), None);
    }

    #[test]
    fn specs_parse_by_their_shape() {
        assert_eq!(BuildSpec::parse("pinned").unwrap(), BuildSpec::Pinned);
        assert_eq!(
            BuildSpec::parse(DEFAULT_HELION_VERSION).unwrap(),
            BuildSpec::Pinned
        );
        assert_eq!(
            BuildSpec::parse("1.5.0").unwrap(),
            BuildSpec::Release("1.5.0".into())
        );
        assert_eq!(
            BuildSpec::parse("dist/helion-1.6.0-py3-none-any.whl").unwrap(),
            BuildSpec::Wheel("dist/helion-1.6.0-py3-none-any.whl".into())
        );
        assert!(matches!(
            BuildSpec::parse("./helion").unwrap(),
            BuildSpec::Source(_)
        ));
        assert!(matches!(
            BuildSpec::parse("latest"),
            Err(BuildError::BadSpec(_))
        ));
    }

    #[test]
    fn releases_sort_numerically() {
        let mut v = vec!["1.10.0", "1.2.0", "1.5.0rc1", "1.4.0", "1.9.2"];
        v.sort_by_key(|s| version_key(s));
        assert_eq!(v, ["1.2.0", "1.4.0", "1.5.0rc1", "1.9.2", "1.10.0"]);
    }

    #[test]
    fn a_wheel_of_another_package_is_refused() {
        let err = check_wheel_name(Path::new("numpy-2.0.0-cp311-none-any.whl")).unwrap_err();
        assert!(
            err.to_string().contains("not a wheel of the `helion`"),
            "{err}"
        );
    }

    #[test]
    fn a_directory_without_helion_is_not_a_tree() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            install(
                dir.path(),
                &BuildSpec::Source(dir.path().into()),
                Path::new("python3"),
                false
            ),
            Err(BuildError::NotHelionTree(_))
        ));
    }

    #[test]
    fn a_source_tree_registers_in_place_and_lists_after_releases() {
        let builds = tempfile::tempdir().unwrap();
        let tree = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tree.path().join("helion")).unwrap();
        std::fs::write(tree.path().join("helion/__init__.py"), "").unwrap();
        std::fs::write(
            tree.path().join("pyproject.toml"),
            "[project]\nname = \"helion\"\nversion = \"9.9.0\"\n",
        )
        .unwrap();
        let spec = BuildSpec::Source(tree.path().into());
        let b = install(builds.path(), &spec, Path::new("python3"), false).unwrap();
        assert_eq!(b.record.version, "9.9.0");
        assert_eq!(
            b.overlay.as_deref(),
            Some(std::fs::canonicalize(tree.path()).unwrap().as_path())
        );
        // Releases (the pinned one here) come first; the same tree is found, not registered twice.
        let all = installed(builds.path()).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0], HelionBuild::pinned());
        assert_eq!(find(builds.path(), &spec).unwrap(), b);
        // Not a git checkout: no commit.
        assert_eq!(b.identity().commit, None);
    }
}
