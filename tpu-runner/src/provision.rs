//! The Python environments: finds or creates an interpreter with JAX ([`provision`]) and,
//! opt-in, one with real Helion ([`provision_helion`]).
//!
//! JAX: `PALLAS_DIFF_PYTHON` names an existing interpreter and skips everything else. Otherwise
//! a venv at `<workspace>/.venv` (`PALLAS_DIFF_VENV`) is created on first use with
//! `python3 -m venv` and `pip install -r python/requirements.txt`, under a lock file so
//! concurrent processes do not race, and a marker file records the hash of the requirements
//! installed, so a changed pin (or `PALLAS_DIFF_JAX_VERSION`) reinstalls.
//!
//! Helion (~6 GB, 2-3 minutes, so never made by the default commands or CI's test job): the
//! same, with `PALLAS_DIFF_HELION_PYTHON`, `PALLAS_DIFF_HELION_VENV` (default
//! `<workspace>/.venv-helion`), `python/requirements-helion.txt` and
//! `PALLAS_DIFF_HELION_VERSION` (default [`DEFAULT_HELION_VERSION`]); pip's progress is shown.
//! [`helion_python_if_present`] answers "is it here?" without installing anything.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::mode::Runtime;

/// The requirements this crate was built with (`python/requirements.txt`).
pub const REQUIREMENTS: &str = include_str!("../python/requirements.txt");

/// The Helion environment's requirements (`python/requirements-helion.txt`).
pub const HELION_REQUIREMENTS: &str = include_str!("../python/requirements-helion.txt");

/// The Helion release the Helion engines run unless `PALLAS_DIFF_HELION_VERSION` says
/// otherwise, and the one pallas-diff's model of the lowering targets.
pub const DEFAULT_HELION_VERSION: &str = "1.5.1";

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
        "cannot provision the {runtime} environment: `{program}` is not runnable ({source}); install Python 3 or set {} to a ready interpreter",
        python_variable(*.runtime)
    )]
    NoPython {
        /// The environment.
        runtime: Runtime,
        /// The base interpreter.
        program: String,
        /// Why it could not be run.
        source: std::io::Error,
    },
    /// A provisioning command exited unsuccessfully (`venv` creation or `pip install`).
    #[error(
        "cannot provision the {runtime} environment: `{command}` failed ({status}): {last_line}; set {} to a ready interpreter to skip provisioning",
        python_variable(*.runtime)
    )]
    CommandFailed {
        /// The environment.
        runtime: Runtime,
        /// The command, for the message.
        command: String,
        /// Its exit status.
        status: String,
        /// The last non-empty line of its output (pip's reason, typically).
        last_line: String,
        /// Its whole stderr (and stdout), for logs.
        output: String,
    },
    /// A version override (`PALLAS_DIFF_JAX_VERSION`, `PALLAS_DIFF_HELION_VERSION`) is not a
    /// version.
    #[error("cannot provision {runtime}: {variable}={value:?} is not a version like 1.5.1")]
    BadVersion {
        /// The environment.
        runtime: Runtime,
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
    },
    /// A file-system operation on the venv failed.
    #[error("cannot provision the {runtime} environment: {what} {}: {source}", .path.display())]
    Io {
        /// The environment.
        runtime: Runtime,
        /// What was being done.
        what: &'static str,
        /// On which path.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
}

/// The variable naming a ready interpreter for `runtime` (skips provisioning).
pub fn python_variable(runtime: Runtime) -> &'static str {
    match runtime {
        Runtime::Jax => "PALLAS_DIFF_PYTHON",
        Runtime::Helion => "PALLAS_DIFF_HELION_PYTHON",
    }
}

/// Where and what to provision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProvisionOptions {
    /// Which environment.
    pub runtime: Runtime,
    /// The venv directory.
    pub venv: PathBuf,
    /// The interpreter that creates the venv (`python3`).
    pub base_python: OsString,
    /// Replaces the `jax` and `jaxlib` pins.
    pub jax_version: Option<String>,
    /// Replaces the `helion` pin (Helion environment only).
    pub helion_version: Option<String>,
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
            runtime: Runtime::Jax,
            venv,
            base_python: OsString::from("python3"),
            jax_version: env_string("PALLAS_DIFF_JAX_VERSION"),
            helion_version: None,
            verbose: true,
        }
    }

    /// The Helion environment from the environment: `PALLAS_DIFF_HELION_VENV` (default
    /// `<workspace>/.venv-helion`), `PALLAS_DIFF_HELION_VERSION`, `PALLAS_DIFF_JAX_VERSION`.
    pub fn helion_from_env() -> ProvisionOptions {
        let venv = non_empty_env("PALLAS_DIFF_HELION_VENV")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_root().join(".venv-helion"));
        ProvisionOptions {
            runtime: Runtime::Helion,
            venv,
            base_python: OsString::from("python3"),
            jax_version: env_string("PALLAS_DIFF_JAX_VERSION"),
            helion_version: env_string("PALLAS_DIFF_HELION_VERSION"),
            verbose: true,
        }
    }

    /// The Helion version these options install.
    pub fn helion_version(&self) -> &str {
        self.helion_version
            .as_deref()
            .unwrap_or(DEFAULT_HELION_VERSION)
    }
}

fn env_string(name: &str) -> Option<String> {
    non_empty_env(name).map(|v| v.to_string_lossy().into_owned())
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

/// Returns an interpreter with real Helion: `PALLAS_DIFF_HELION_PYTHON` when set, else the venv
/// of [`ProvisionOptions::helion_from_env`], created or updated first when needed (~6 GB and
/// 2-3 minutes the first time, with pip's progress on stderr).
pub fn provision_helion() -> Result<PathBuf, ProvisionError> {
    if let Some(python) = non_empty_env("PALLAS_DIFF_HELION_PYTHON") {
        return Ok(PathBuf::from(python));
    }
    provision_with(&ProvisionOptions::helion_from_env())
}

/// The Helion interpreter when it is already here (`PALLAS_DIFF_HELION_PYTHON`, or a venv whose
/// marker matches today's requirements); installs nothing. `Err` says why not, for a skip
/// message.
pub fn helion_python_if_present() -> Result<PathBuf, String> {
    if let Some(python) = non_empty_env("PALLAS_DIFF_HELION_PYTHON") {
        return Ok(PathBuf::from(python));
    }
    let options = ProvisionOptions::helion_from_env();
    let requirements = effective_requirements(&options).map_err(|e| e.to_string())?;
    let python = venv_python(&options.venv);
    let marker = options.venv.join(MARKER);
    let hash = format!("{:016x}", fnv1a(&requirements));
    if python.is_file() && fs::read_to_string(&marker).is_ok_and(|m| m.trim() == hash) {
        return Ok(python);
    }
    Err(format!(
        "the Helion environment (helion=={}, ~6 GB) is not installed at {}: run `pallas-diff provision --helion`, or set PALLAS_DIFF_HELION_PYTHON",
        options.helion_version(),
        options.venv.display()
    ))
}

/// The requirements `options` installs: [`REQUIREMENTS`] or [`HELION_REQUIREMENTS`] with the
/// overridden pins replaced.
pub fn effective_requirements(options: &ProvisionOptions) -> Result<String, ProvisionError> {
    let base = match options.runtime {
        Runtime::Jax => REQUIREMENTS,
        Runtime::Helion => HELION_REQUIREMENTS,
    };
    let check = |variable: &'static str, version: &String| {
        let valid = !version.is_empty()
            && version
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-'));
        if valid {
            Ok(())
        } else {
            Err(ProvisionError::BadVersion {
                runtime: options.runtime,
                variable,
                value: version.clone(),
            })
        }
    };
    if let Some(v) = &options.jax_version {
        check("PALLAS_DIFF_JAX_VERSION", v)?;
    }
    if let Some(v) = &options.helion_version {
        check("PALLAS_DIFF_HELION_VERSION", v)?;
    }
    let mut out = String::new();
    for line in base.lines() {
        match line.split_once("==") {
            Some((name @ ("jax" | "jaxlib"), _)) if options.jax_version.is_some() => {
                out.push_str(&format!(
                    "{name}=={}",
                    options.jax_version.as_deref().unwrap_or_default()
                ));
            }
            Some(("helion", _)) if options.helion_version.is_some() => {
                out.push_str(&format!("helion=={}", options.helion_version()));
            }
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

    let runtime = options.runtime;
    let io = |what, path: &Path| {
        let path = path.to_path_buf();
        move |source| ProvisionError::Io {
            runtime,
            what,
            path,
            source,
        }
    };
    let first_run = match runtime {
        Runtime::Jax => "first run, ~30 s",
        Runtime::Helion => "first use: ~3 GB download, ~6 GB on disk, 2-3 minutes",
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
                "pallas-diff: creating the {runtime} Python venv at {} ({first_run})",
                venv.display()
            );
        }
        let mut cmd = Command::new(&options.base_python);
        cmd.arg("-m").arg("venv").arg(venv);
        run_checked(runtime, cmd, &options.base_python, "-m venv", false)?;
    } else if options.verbose {
        eprintln!(
            "pallas-diff: updating Python venv at {} (requirements changed)",
            venv.display()
        );
    }
    let req_path = venv.join(INSTALLED_REQUIREMENTS);
    fs::write(&req_path, &requirements).map_err(io("cannot write", &req_path))?;
    // The Helion environment is large enough that a silent pip looks hung: its progress is
    // shown (on stderr) when verbose; the JAX one takes ~11 s and stays quiet.
    let show_progress = options.verbose && runtime == Runtime::Helion;
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "pip", "install", "--disable-pip-version-check"]);
    if !show_progress {
        cmd.arg("-q");
    }
    cmd.arg("-r").arg(&req_path);
    run_checked(
        runtime,
        cmd,
        python.as_os_str(),
        "-m pip install -r requirements",
        show_progress,
    )?;

    let tmp = venv.join(format!("{MARKER}.tmp"));
    let mut f = File::create(&tmp).map_err(io("cannot write", &tmp))?;
    writeln!(f, "{hash}").map_err(io("cannot write", &tmp))?;
    drop(f);
    fs::rename(&tmp, &marker).map_err(io("cannot write", &marker))?;
    if options.verbose {
        eprintln!(
            "pallas-diff: the {runtime} Python venv at {} is ready",
            venv.display()
        );
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

/// Runs a provisioning command; with `stream`, its output goes to our stderr as it comes
/// (pip's progress) and the error names only its status.
fn run_checked(
    runtime: Runtime,
    mut cmd: Command,
    program: &std::ffi::OsStr,
    what: &str,
    stream: bool,
) -> Result<(), ProvisionError> {
    let program_name = program.to_string_lossy().into_owned();
    let no_python = |source| ProvisionError::NoPython {
        runtime,
        program: program_name.clone(),
        source,
    };
    if stream {
        let status = cmd
            .stdout(std::process::Stdio::from(std::io::stderr()))
            .status()
            .map_err(no_python)?;
        if status.success() {
            return Ok(());
        }
        return Err(ProvisionError::CommandFailed {
            runtime,
            command: format!("{program_name} {what}"),
            status: status.to_string(),
            last_line: "pip's output is above".into(),
            output: String::new(),
        });
    }
    let out = cmd.output().map_err(no_python)?;
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
        runtime,
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
            Err(ProvisionError::BadVersion { .. })
        ));
    }

    #[test]
    fn helion_requirements_pin_helion_torch_jax_and_the_undeclared_dependencies() {
        for pin in [
            "helion==1.5.1",
            "torch==",
            "jax==0.10.2",
            "packaging==",
            "absl-py==",
            "mutmut==3.",
            "libcst==",
            "coverage==",
        ] {
            assert!(
                HELION_REQUIREMENTS.lines().any(|l| l.starts_with(pin)),
                "{pin} missing"
            );
        }
        assert!(
            HELION_REQUIREMENTS
                .lines()
                .any(|l| l == format!("helion=={DEFAULT_HELION_VERSION}"))
        );
        let mut options = ProvisionOptions::helion_from_env();
        options.helion_version = Some("1.6.0".into());
        options.jax_version = None;
        let req = effective_requirements(&options).unwrap();
        assert!(
            req.contains("helion==1.6.0\n") && !req.contains("helion==1.5.1"),
            "{req}"
        );
        assert!(req.contains("jax==0.10.2\n"));
    }

    #[test]
    fn default_requirements_pin_jax() {
        assert!(REQUIREMENTS.lines().any(|l| l == "jax==0.10.2"));
        assert!(REQUIREMENTS.lines().any(|l| l == "jaxlib==0.10.2"));
    }
}
