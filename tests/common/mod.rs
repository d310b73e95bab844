//! What the tests of the built binary share: running `pallas-diff` without Python and off any
//! GitHub job's step summary, and a fresh scratch directory per test. Each test binary uses a
//! part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// What one run of the binary did.
pub struct Run {
    /// The exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Runs `pallas-diff args` in `cwd` (see [`run_with`]).
pub fn run_in(cwd: &Path, args: &[&str]) -> Run {
    run_with(cwd, args, &[])
}

/// Runs `pallas-diff args` in `cwd` with `env` set, with no Python to provision JAX with and no
/// step summary unless `env` names one (the test may itself run inside a GitHub job).
pub fn run_with(cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pallas-diff"));
    cmd.args(args)
        .current_dir(cwd)
        .env("PALLAS_DIFF_PYTHON", "/nonexistent/python-for-tests")
        .env_remove("GITHUB_STEP_SUMMARY");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run pallas-diff");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A fresh, empty scratch directory `<prefix>-<name>` under the target dir.
pub fn scratch(prefix: &str, name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{prefix}-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
