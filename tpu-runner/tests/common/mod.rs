//! Shared test helpers: a provisioned Python (real JAX), a shared pool, kernel sources.
#![allow(dead_code)]

use lang::tensor::{DType, Tensor};
use pallas_diff_tpu_runner::{Mode, Pool, PoolConfig, RunRequest, provision};
use std::path::PathBuf;
use std::sync::OnceLock;

pub const ADD_ONE: &str = include_str!("../kernels/add_one.py");
pub const OOB_READ: &str = include_str!("../kernels/oob_read.py");
pub const DYNAMIC_SLICE: &str = include_str!("../kernels/dynamic_slice.py");
pub const MIXED_DTYPES: &str = include_str!("../kernels/mixed_dtypes.py");
pub const EMIT_PIPELINE: &str = include_str!("../kernels/emit_pipeline.py");

/// The interpreter with JAX, provisioned once per test binary.
pub fn python() -> PathBuf {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON
        .get_or_init(|| provision().unwrap_or_else(|e| panic!("{e}")))
        .clone()
}

/// A two-worker pool shared by the tests of one binary.
pub fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        Pool::new(PoolConfig::new(python()).with_workers(2)).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// `shape`-shaped tensor of `f(i)` for the flat index `i`.
pub fn tensor(dtype: DType, shape: &[usize], f: impl Fn(usize) -> f64) -> Tensor {
    let n = shape.iter().product();
    Tensor::new(dtype, shape.to_vec(), (0..n).map(f).collect())
}

pub fn request(mode: Mode, source: &str, inputs: Vec<Tensor>) -> RunRequest {
    RunRequest {
        mode,
        source: source.to_owned(),
        inputs,
        call: None,
        input_sets: Vec::new(),
    }
}

/// A module whose `make` runs `body` (Python statements, indented by the caller's format) and
/// then builds the add-one kernel. `tag` makes the source distinct (defeats the worker cache).
pub fn add_one_after(body: &str, tag: &str) -> String {
    format!(
        "# {tag}\nimport os, signal, time\n{ADD_ONE}\n_make = make\n\ndef make(interpret):\n    {body}\n    return _make(interpret)\n"
    )
}

/// Kills process `pid` with SIGKILL (a worker's crash, as the fault tests simulate it).
pub fn kill_9(pid: u32) {
    let status = std::process::Command::new("kill")
        .arg("-9")
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success(), "kill -9 {pid}");
}
