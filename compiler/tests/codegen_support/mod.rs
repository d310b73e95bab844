//! Shared helpers of the codegen tests: compiling spec kernels, checking that emitted modules
//! compile as Python, and (when a JAX interpreter is configured) running them.

#![allow(dead_code)]

use pallas_diff_compiler::compile::{CodegenOptions, Compiled, Outcome, compile};
use pallas_diff_compiler::expectations::{SpecKernel, load_spec_kernel, spec_kernels_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Loads `corpus/spec-kernels/<name>.py`.
pub fn spec(name: &str) -> SpecKernel {
    let path = spec_kernels_dir().join(format!("{name}.py"));
    load_spec_kernel(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Compiles spec kernel `name` with default options.
pub fn compile_spec(name: &str) -> (SpecKernel, Compiled) {
    let k = spec(name);
    let c = compile(&k.case, &CodegenOptions::default());
    (k, c)
}

/// The emitted source, or a panic naming why there is none.
pub fn source_of(name: &str, c: &Compiled) -> String {
    match c.outcome() {
        Outcome::Lowered(s) => s.to_string(),
        Outcome::Rejected(r) => panic!("{name}: rejected: {r}"),
        Outcome::Gap(g) => panic!("{name}: {g}"),
    }
}

/// `python3`, if present.
pub fn python3() -> Option<PathBuf> {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then(|| PathBuf::from("python3"))
}

/// A Python with JAX 0.10.x for running emitted modules: `$PALLAS_DIFF_JAX_PYTHON`, else the
/// workspace venv `.venv/bin/python` when it imports jax.
pub fn jax_python() -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = std::env::var_os("PALLAS_DIFF_JAX_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python")])
        .collect();
    candidates.into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import jax, jax.experimental.pallas"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Byte-compiles each `(name, source)` with `python3 -m py_compile`; returns the failures.
pub fn py_compile_all(python: &Path, sources: &[(String, String)]) -> Vec<String> {
    let dir = scratch_dir("py_compile");
    let mut failures = Vec::new();
    for (name, src) in sources {
        let file = dir.join(format!("{name}.py"));
        std::fs::write(&file, src).expect("write module");
        let out = Command::new(python)
            .args(["-m", "py_compile"])
            .arg(&file)
            .output()
            .expect("run python3");
        if !out.status.success() {
            failures.push(format!("{name}: {}", String::from_utf8_lossy(&out.stderr)));
        }
    }
    failures
}

/// A fresh directory under the system temp dir, unique to this process and `tag`.
pub fn scratch_dir(tag: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("pallas-diff-codegen-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}
