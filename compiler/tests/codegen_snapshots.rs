//! Snapshot tests: the whole emitted module of each spec §3.5 example (corpus kernels
//! `s3_5_*`), against golden files in `compiler/tests/snapshots/`. Bless with
//! `PALLAS_DIFF_BLESS=1 cargo test -p pallas-diff-compiler --test codegen_snapshots`; a mismatch
//! prints a line diff.

mod codegen_support;

use codegen_support::{compile_spec, py_compile_all, python3, source_of, spec};
use pallas_diff_compiler::compile::{CodegenOptions, compile};
use std::path::PathBuf;

fn snapshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("snapshots")
}

/// A line diff (longest common subsequence), `-` golden, `+` emitted.
fn diff(golden: &str, actual: &str) -> String {
    let a: Vec<&str> = golden.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push_str(&format!("{:>4} + {}\n", j + 1, b[j]));
            j += 1;
        } else {
            out.push_str(&format!("{:>4} - {}\n", i + 1, a[i]));
            i += 1;
        }
    }
    out
}

fn check(snapshot: &str, actual: &str) {
    let path = snapshot_dir().join(format!("{snapshot}.py"));
    if std::env::var_os("PALLAS_DIFF_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(snapshot_dir()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (bless with PALLAS_DIFF_BLESS=1)", path.display()));
    if golden != actual {
        panic!(
            "{snapshot}: the emitted module differs from {} (bless with PALLAS_DIFF_BLESS=1):\n{}",
            path.display(),
            diff(&golden, actual)
        );
    }
}

fn snapshot(name: &str) {
    let (_, c) = compile_spec(name);
    let src = source_of(name, &c);
    if let Some(py) = python3() {
        let failures = py_compile_all(&py, &[(name.to_string(), src.clone())]);
        assert!(failures.is_empty(), "{failures:?}");
    }
    check(name, &src);
}

#[test]
fn example_1_scalar_run() {
    snapshot("s3_5_ex1_scalar_run");
}

#[test]
fn example_2_tile_and_tail_runs() {
    snapshot("s3_5_ex2_tile_and_tail_runs");
}

#[test]
fn example_2_tile_and_tail_runs_with_poison_padding() {
    let name = "s3_5_ex2_tile_and_tail_runs";
    let k = spec(name);
    let c = compile(
        &k.case,
        &CodegenOptions {
            poison_padding: true,
            ..Default::default()
        },
    );
    let src = source_of(name, &c);
    assert!(src.contains("constant_values=jnp.nan"), "{src}");
    assert!(
        src.contains("jnp.where(mask_2[:, None, None], x_block[pl.ds(offset_2, 2), :, :], 0.0)"),
        "{src}"
    );
    check("s3_5_ex2_tile_and_tail_runs_poison", &src);
}

#[test]
fn example_3_dma_prefetch() {
    snapshot("s3_5_ex3_dma_prefetch");
}

#[test]
fn example_4_composed_views() {
    snapshot("s3_5_ex4_composed_views");
}

#[test]
fn example_4_incompatible_reshape() {
    snapshot("s3_5_ex4_incompatible_reshape");
}

#[test]
fn example_4_nested_static_selections() {
    snapshot("s3_5_ex4_nested_static_selections");
}

#[test]
fn example_5_constant_runs() {
    snapshot("s3_5_ex5_constant_runs");
}

#[test]
fn example_5_untiled_dim() {
    snapshot("s3_5_ex5_untiled_dim");
}

#[test]
fn example_5_lane_panel() {
    snapshot("s3_5_ex5_lane_panel");
}

#[test]
fn example_5_value_fallback() {
    snapshot("s3_5_ex5_value_fallback");
}
