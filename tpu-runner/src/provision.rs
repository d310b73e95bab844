//! The Python environment: finds or creates an interpreter with JAX ([`provision`]).
//!
//! `PALLAS_DIFF_PYTHON` names an existing interpreter and skips everything else. Otherwise a
//! venv at `<workspace>/.venv` (`PALLAS_DIFF_VENV`) is created on first use with
//! `python3 -m venv` and `pip install -r python/requirements.txt`, under a lock file so
//! concurrent processes do not race, and a marker file records the hash of the requirements
//! installed, so a changed pin (or `PALLAS_DIFF_JAX_VERSION`) reinstalls.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The requirements this crate was built with (`python/requirements.txt`).
pub const REQUIREMENTS: &str = include_str!("../python/requirements.txt");

/// Marker file inside the venv: the hash of the requirements last installed there.
const MARKER: &str = ".pallas-diff-requirements.hash";
/// Lock file inside the venv directory.
const LOCK: &str = ".pallas-diff.lock";
/// The effective requirements file written into the venv for pip.
const INSTALLED_REQUIREMENTS: &str = ".pallas-diff-requirements.txt";

/// Provisioning failed; `Display` is one line that says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    /// The base interpreter could not be run.
    #[error(
        "cannot provision JAX: `{program}` is not runnable ({source}); install Python 3 or set PALLAS_DIFF_PYTHON to a Python with jax"
    )]
    NoPython {
        /// The base interpreter.
        program: String,
        /// Why it could not be run.
        source: std::io::Error,
    },
    /// A provisioning command exited unsuccessfully (`venv` creation or `pip install`).
    #[error(
        "cannot provision JAX: `{command}` failed ({status}): {last_line}; set PALLAS_DIFF_PYTHON to a Python with jax to skip provisioning"
    )]
    CommandFailed {
        /// The command, for the message.
        command: String,
        /// Its exit status.
        status: String,
        /// The last non-empty line of its output (pip's reason, typically).
        last_line: String,
        /// Its whole stderr (and stdout), for logs.
        output: String,
    },
    /// `PALLAS_DIFF_JAX_VERSION` is not a version.
    #[error("cannot provision JAX: PALLAS_DIFF_JAX_VERSION={0:?} is not a version like 0.10.2")]
    BadJaxVersion(String),
    /// A file-system operation on the venv failed.
    #[error("cannot provision JAX: {what} {}: {source}", .path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// On which path.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
}

/// Where and what to provision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProvisionOptions {
    /// The venv directory.
    pub venv: PathBuf,
    /// The interpreter that creates the venv (`python3`).
    pub base_python: OsString,
    /// Replaces the `jax` and `jaxlib` pins of [`REQUIREMENTS`].
    pub jax_version: Option<String>,
    /// Print progress messages to stderr.
    pub verbose: bool,
}

impl ProvisionOptions {
    /// From the environment: `PALLAS_DIFF_VENV` (default `<workspace>/.venv`) and
    /// `PALLAS_DIFF_JAX_VERSION`.
    pub fn from_env() -> ProvisionOptions {
        let venv = non_empty_env("PALLAS_DIFF_VENV")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_root().join(".venv"));
        ProvisionOptions {
            venv,
            base_python: OsString::from("python3"),
            jax_version: non_empty_env("PALLAS_DIFF_JAX_VERSION")
                .map(|v| v.to_string_lossy().into_owned()),
            verbose: true,
        }
    }
}

/// The workspace root (this crate's parent directory).
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

fn non_empty_env(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// Returns a Python interpreter with JAX: `PALLAS_DIFF_PYTHON` when set, else the venv of
/// [`ProvisionOptions::from_env`], created or updated first when needed (~30 s the first time).
///
/// `PALLAS_DIFF_PYTHON` is not checked here; a worker started on it reports
/// [`RunError::JaxUnavailable`](crate::RunError::JaxUnavailable) if it lacks JAX.
pub fn provision() -> Result<PathBuf, ProvisionError> {
    if let Some(python) = non_empty_env("PALLAS_DIFF_PYTHON") {
        return Ok(PathBuf::from(python));
    }
    provision_with(&ProvisionOptions::from_env())
}

/// The requirements `options` installs: [`REQUIREMENTS`] with the JAX pins replaced.
pub fn effective_requirements(options: &ProvisionOptions) -> Result<String, ProvisionError> {
    let Some(version) = &options.jax_version else {
        return Ok(REQUIREMENTS.to_owned());
    };
    let valid = !version.is_empty()
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-'));
    if !valid {
        return Err(ProvisionError::BadJaxVersion(version.clone()));
    }
    let mut out = String::new();
    for line in REQUIREMENTS.lines() {
        match line.split_once("==") {
            Some((name @ ("jax" | "jaxlib"), _)) => out.push_str(&format!("{name}=={version}")),
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    Ok(out)
}

/// Creates or updates the venv `options.venv` and returns its interpreter.
pub fn provision_with(options: &ProvisionOptions) -> Result<PathBuf, ProvisionError> {
    let requirements = effective_requirements(options)?;
    let hash = format!("{:016x}", fnv1a(&requirements));
    let venv = &options.venv;
    let python = venv_python(venv);
    let marker = venv.join(MARKER);
    let current = |python: &Path| {
        python.is_file() && fs::read_to_string(&marker).is_ok_and(|m| m.trim() == hash)
    };
    if current(&python) {
        return Ok(python);
    }

    let io = |what, path: &Path| {
        let path = path.to_path_buf();
        move |source| ProvisionError::Io { what, path, source }
    };
    fs::create_dir_all(venv).map_err(io("cannot create", venv))?;
    let lock_path = venv.join(LOCK);
    let lock = File::create(&lock_path).map_err(io("cannot create", &lock_path))?;
    lock.lock().map_err(io("cannot lock", &lock_path))?;
    // Another process may have finished while we waited for the lock.
    if current(&python) {
        return Ok(python);
    }

    if !python.is_file() {
        if options.verbose {
            eprintln!(
                "pallas-diff: creating Python venv at {} (first run, ~30 s)",
                venv.display()
            );
        }
        let mut cmd = Command::new(&options.base_python);
        cmd.arg("-m").arg("venv").arg(venv);
        run_checked(cmd, &options.base_python, "-m venv")?;
    } else if options.verbose {
        eprintln!(
            "pallas-diff: updating Python venv at {} (requirements changed)",
            venv.display()
        );
    }
    let req_path = venv.join(INSTALLED_REQUIREMENTS);
    fs::write(&req_path, &requirements).map_err(io("cannot write", &req_path))?;
    let mut cmd = Command::new(&python);
    cmd.args([
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "-q",
        "-r",
    ])
    .arg(&req_path);
    run_checked(cmd, python.as_os_str(), "-m pip install -r requirements")?;

    let tmp = venv.join(format!("{MARKER}.tmp"));
    let mut f = File::create(&tmp).map_err(io("cannot write", &tmp))?;
    writeln!(f, "{hash}").map_err(io("cannot write", &tmp))?;
    drop(f);
    fs::rename(&tmp, &marker).map_err(io("cannot write", &marker))?;
    if options.verbose {
        eprintln!("pallas-diff: Python venv at {} is ready", venv.display());
    }
    Ok(python)
    // `lock` is released when the file is closed here.
}

/// The interpreter inside a venv.
pub fn venv_python(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

fn run_checked(
    mut cmd: Command,
    program: &std::ffi::OsStr,
    what: &str,
) -> Result<(), ProvisionError> {
    let program_name = program.to_string_lossy().into_owned();
    let out = cmd.output().map_err(|source| ProvisionError::NoPython {
        program: program_name.clone(),
        source,
    })?;
    if out.status.success() {
        return Ok(());
    }
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let last_line = output
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("no output")
        .to_owned();
    Err(ProvisionError::CommandFailed {
        command: format!("{program_name} {what}"),
        status: out.status.to_string(),
        last_line,
        output,
    })
}

/// 64-bit FNV-1a: a stable content hash for the marker and the embedded worker's file name.
pub(crate) fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jax_version_override_replaces_both_pins() {
        let mut options = ProvisionOptions::from_env();
        options.jax_version = Some("0.11.1".into());
        let req = effective_requirements(&options).unwrap();
        assert!(
            req.contains("jax==0.11.1\n") && req.contains("jaxlib==0.11.1\n"),
            "{req}"
        );
        assert!(!req.contains("0.10.2\n"));
        options.jax_version = Some("0.11; rm -rf /".into());
        assert!(matches!(
            effective_requirements(&options),
            Err(ProvisionError::BadJaxVersion(_))
        ));
    }

    #[test]
    fn default_requirements_pin_jax() {
        assert!(REQUIREMENTS.lines().any(|l| l == "jax==0.10.2"));
        assert!(REQUIREMENTS.lines().any(|l| l == "jaxlib==0.10.2"));
    }
}
