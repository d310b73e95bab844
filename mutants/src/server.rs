//! The fork server and the overlays it applies.
//!
//! [`ForkServer`] runs `python/mutant_zygote.py`, which imports what a Helion worker imports
//! except Helion itself, once. A mutant is an [`Overlay`]: a directory holding the mutated file
//! at its package path and a `mutant.json` naming the server's socket, the module it replaces
//! and whether coverage is measured. [`Overlay::pool`] starts a one-worker Helion pool whose
//! worker script is `python/mutant_worker.py` with the overlay first on its `PYTHONPATH` (as
//! every Helion build's overlay is, `tpu_runner::builds`): the server forks a worker that
//! imports Helion fresh with the mutated module in place (~1-2 s instead of ~6 s). The
//! installed package is never written.

use crate::mutant::{Mutant, MutantError, SourceFile};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tpu_runner::builds::{BuildRecord, HelionBuild, Origin};
use tpu_runner::{Pool, PoolConfig, RunError, Runtime};

/// The Python files of this crate, by name in `python/` (embedded for a binary moved away from
/// its tree).
const PYTHON_FILES: [(&str, &str); 3] = [
    (
        "mutant_enumerate.py",
        include_str!("../python/mutant_enumerate.py"),
    ),
    (
        "mutant_zygote.py",
        include_str!("../python/mutant_zygote.py"),
    ),
    (
        "mutant_worker.py",
        include_str!("../python/mutant_worker.py"),
    ),
];

/// The path of one of this crate's Python files: the tree's own, else the embedded copy
/// written to a directory of the temporary directory named by the files' hash.
pub fn script(name: &str) -> PathBuf {
    let in_tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("python");
    if PYTHON_FILES.iter().all(|(f, _)| in_tree.join(f).is_file()) {
        return in_tree.join(name);
    }
    let all: String = PYTHON_FILES
        .iter()
        .flat_map(|(n, s)| [*n, "\0", *s])
        .collect();
    let dir = std::env::temp_dir().join(format!(
        "pallas-diff-mutants-python-{}",
        crate::observe::sha16(&all)
    ));
    for (n, source) in PYTHON_FILES {
        let path = dir.join(n);
        if !path.is_file() {
            let tmp = dir.join(format!("{n}.{}.tmp", std::process::id()));
            if std::fs::create_dir_all(&dir).is_ok() && std::fs::write(&tmp, source).is_ok() {
                let _ = std::fs::rename(&tmp, &path);
            }
        }
    }
    dir.join(name)
}

/// Failures of the fork server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// It could not be started.
    #[error("cannot start the mutant fork server with {python}: {source}")]
    Spawn {
        /// The interpreter.
        python: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It exited before saying it was ready.
    #[error("the mutant fork server exited before it was ready (its stderr went to {log})")]
    NotReady {
        /// Where its stderr went.
        log: PathBuf,
    },
    /// Helion's package directory could not be found.
    #[error("cannot find the helion package with {python}: {message}")]
    NoHelion {
        /// The interpreter.
        python: PathBuf,
        /// Why.
        message: String,
    },
    /// Writing an overlay.
    #[error(transparent)]
    Mutant(#[from] MutantError),
}

/// A running `mutant_zygote.py`; killed on drop.
pub struct ForkServer {
    child: Child,
    socket: PathBuf,
    python: PathBuf,
    _dir: tempfile::TempDir,
}

impl ForkServer {
    /// Starts the server with the Helion environment's `python` and waits until it listens
    /// (it imports torch, JAX and their dependencies once: ~10-20 s). Its stderr goes to
    /// `log`.
    pub fn start(python: &Path, log: &Path) -> Result<ForkServer, ServerError> {
        let spawn_err = |source| ServerError::Spawn {
            python: python.to_path_buf(),
            source,
        };
        let dir = tempfile::Builder::new()
            .prefix("pallas-diff-zygote-")
            .tempdir()
            .map_err(spawn_err)?;
        let socket = dir.path().join("sock");
        let stderr = std::fs::File::create(log).map_err(spawn_err)?;
        let worker_dir = tpu_runner::worker::helion_worker_script()
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let mut child = Command::new(python)
            .arg("-u")
            .arg(script("mutant_zygote.py"))
            .arg(&socket)
            .arg(&worker_dir)
            .env("XLA_FLAGS", tpu_runner::worker::worker_xla_flags())
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(spawn_err)?;
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout is piped");
        let _ = BufReader::new(stdout).read_line(&mut line);
        if !line.starts_with("ready") {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ServerError::NotReady {
                log: log.to_path_buf(),
            });
        }
        Ok(ForkServer {
            child,
            socket,
            python: python.to_path_buf(),
            _dir: dir,
        })
    }

    /// The socket the workers connect to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The interpreter.
    pub fn python(&self) -> &Path {
        &self.python
    }
}

impl Drop for ForkServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The directory that holds the `helion` package of `python`'s environment (found without
/// importing Helion).
pub fn helion_root(python: &Path) -> Result<PathBuf, ServerError> {
    let out = Command::new(python)
        .arg("-c")
        .arg("import importlib.util, os; print(os.path.dirname(os.path.dirname(importlib.util.find_spec('helion').origin)))")
        .output()
        .map_err(|e| ServerError::NoHelion {
            python: python.to_path_buf(),
            message: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(ServerError::NoHelion {
            python: python.to_path_buf(),
            message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// One worker's view of Helion: unmutated (optionally measuring coverage) or one mutant.
pub struct Overlay {
    dir: tempfile::TempDir,
}

/// Coverage measurement in an overlay's worker.
pub struct CoverageSpec {
    /// The files measured (coverage.py `include` patterns).
    pub include: Vec<String>,
}

impl Overlay {
    /// An overlay with nothing replaced (the baseline), measuring coverage when asked.
    pub fn baseline(
        server: &ForkServer,
        coverage: Option<&CoverageSpec>,
        parent: &Path,
    ) -> Result<Overlay, ServerError> {
        Overlay::write(server, None, coverage, parent)
    }

    /// An overlay replacing `file`'s module with `mutant` applied to it.
    pub fn of_mutant(
        server: &ForkServer,
        file: &SourceFile,
        mutant: &Mutant,
        parent: &Path,
    ) -> Result<Overlay, ServerError> {
        Overlay::write(server, Some((file, mutant)), None, parent)
    }

    fn write(
        server: &ForkServer,
        mutant: Option<(&SourceFile, &Mutant)>,
        coverage: Option<&CoverageSpec>,
        parent: &Path,
    ) -> Result<Overlay, ServerError> {
        let io = |path: &Path, source| {
            ServerError::Mutant(MutantError::Io {
                path: path.to_path_buf(),
                source,
            })
        };
        std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        let dir = tempfile::Builder::new()
            .prefix("overlay-")
            .tempdir_in(parent)
            .map_err(|e| io(parent, e))?;
        let mut modules = serde_json::Map::new();
        if let Some((file, mutant)) = mutant {
            let text = std::fs::read_to_string(&file.path).map_err(|e| io(&file.path, e))?;
            let mutated = mutant.apply(&text)?;
            let target = dir.path().join(&file.rel);
            if let Some(p) = target.parent() {
                std::fs::create_dir_all(p).map_err(|e| io(p, e))?;
            }
            std::fs::write(&target, mutated).map_err(|e| io(&target, e))?;
            modules.insert(
                file.module(),
                serde_json::Value::String(target.display().to_string()),
            );
        }
        let cov_out = dir.path().join("coverage");
        let coverage = match coverage {
            Some(c) => {
                std::fs::create_dir_all(&cov_out).map_err(|e| io(&cov_out, e))?;
                serde_json::json!({ "include": c.include, "out": cov_out })
            }
            None => serde_json::Value::Null,
        };
        let manifest = serde_json::json!({
            "zygote": server.socket(),
            "modules": modules,
            "coverage": coverage,
        });
        let path = dir.path().join("mutant.json");
        std::fs::write(&path, manifest.to_string()).map_err(|e| io(&path, e))?;
        Ok(Overlay { dir })
    }

    /// Where coverage is written (`import.json`, `last.json`).
    pub fn coverage_dir(&self) -> PathBuf {
        self.dir.path().join("coverage")
    }

    /// A one-worker Helion pool running this overlay, `timeout` per request. A mutant that
    /// breaks Helion's import fails here ([`RunError::JaxUnavailable`], the worker's failed
    /// hello).
    pub fn pool(&self, server: &ForkServer, timeout: Duration) -> Result<Pool, RunError> {
        let build = HelionBuild {
            record: BuildRecord {
                id: "mutant".to_owned(),
                version: String::new(),
                // The environment's pinned release, one module replaced by the overlay's
                // finder: Helion is still imported from the environment, which a `Source`
                // build refuses (it must import Helion from its own tree).
                origin: Origin::Pinned,
            },
            overlay: Some(self.dir.path().to_path_buf()),
        };
        let mut config = PoolConfig::for_runtime(Runtime::Helion, server.python())
            .with_workers(1)
            .with_timeout(timeout)
            .with_worker_script(script("mutant_worker.py"))
            .with_helion_build(Some(build))
            .with_xla_compile(tpu_runner::worker::XlaCompile::Fast);
        config.startup_timeout = Duration::from_secs(120);
        Pool::new(config)
    }
}
