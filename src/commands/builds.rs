//! The Helion build under test (`--helion-build SPEC`, global): which build every Helion
//! engine a command starts runs ([`tpu_runner::builds`]), chosen once per process. The model
//! of the lowering stays the 1.5.1 model whatever the build: a verdict disagreement with
//! another build is drift between our model and that build.

use std::path::PathBuf;
use std::sync::OnceLock;
use tpu_runner::builds::{self, BuildError, BuildSpec, HelionBuild};

static SPEC: OnceLock<BuildSpec> = OnceLock::new();

/// Records `--helion-build` (the first call wins: one command line per process).
pub fn set(spec: Option<BuildSpec>) {
    SPEC.get_or_init(|| spec.unwrap_or(BuildSpec::Pinned));
}

/// The chosen spec (the pinned release unless `--helion-build` named another).
pub fn spec() -> BuildSpec {
    SPEC.get().cloned().unwrap_or(BuildSpec::Pinned)
}

/// Where the Helion environment keeps its builds.
pub fn dir() -> PathBuf {
    builds::builds_dir(&tpu_runner::ProvisionOptions::helion_from_env().venv)
}

/// The installed build the command line chose; `Err` when it is not installed (exit 2).
pub fn selected() -> Result<HelionBuild, BuildError> {
    builds::find(&dir(), &spec())
}
