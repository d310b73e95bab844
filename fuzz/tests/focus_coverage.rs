//! `fuzz/cargo-fuzz/focus-coverage.sh`, the RUSTC_WRAPPER that keeps libFuzzer's coverage
//! instrumentation on the compiler crate only: it drops exactly the sancov flags, exactly for
//! the crates outside its list, in both spellings cargo passes RUSTFLAGS in. `echo` stands in for
//! rustc, so the test sees the command line the wrapper would run.

use std::path::PathBuf;
use std::process::Command;

/// What cargo-fuzz 0.13.2 puts in RUSTFLAGS for `-O --no-trace-compares --sanitizer none`,
/// less `--cfg fuzzing`.
const SANCOV: &[&str] = &[
    "-Cpasses=sancov-module",
    "-Cllvm-args=-sanitizer-coverage-level=4",
    "-Cllvm-args=-sanitizer-coverage-inline-8bit-counters",
    "-Cllvm-args=-sanitizer-coverage-pc-table",
    "-Cllvm-args=-simplifycfg-branch-fold-threshold=0",
];

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cargo-fuzz/focus-coverage.sh")
}

/// The arguments the wrapper passes on to "rustc" for `args`.
fn wrapped(args: &[&str], crates: Option<&str>) -> Vec<String> {
    let mut cmd = Command::new("bash");
    cmd.arg(script()).arg("echo").args(args);
    match crates {
        Some(c) => cmd.env("PALLAS_DIFF_COVERAGE_CRATES", c),
        None => cmd.env_remove("PALLAS_DIFF_COVERAGE_CRATES"),
    };
    let out = cmd.output().expect("bash runs the wrapper");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

fn rustc_args(crate_name: &str) -> Vec<&str> {
    let mut v = vec!["--crate-name", crate_name, "--edition=2024"];
    v.extend_from_slice(SANCOV);
    v.extend_from_slice(&["-Copt-level=3", "--cfg", "fuzzing", "src/lib.rs"]);
    v
}

#[test]
fn the_compiler_and_the_targets_keep_every_flag() {
    for name in ["pallas_diff_compiler", "differential", "planner_total"] {
        let args = rustc_args(name);
        assert_eq!(wrapped(&args, None), args, "{name}");
    }
}

#[test]
fn other_crates_lose_only_the_coverage_flags() {
    for name in [
        "pallas_diff_oracle",
        "pallas_diff_fuzz",
        "arbitrary",
        "half",
    ] {
        let got = wrapped(&rustc_args(name), None);
        let want = [
            "--crate-name",
            name,
            "--edition=2024",
            "-Copt-level=3",
            "--cfg",
            "fuzzing",
            "src/lib.rs",
        ];
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn the_two_argument_spelling_is_stripped_too() {
    let got = wrapped(
        &[
            "--crate-name",
            "ndarray",
            "-C",
            "passes=sancov-module",
            "-C",
            "llvm-args=-sanitizer-coverage-trace-compares",
            "-C",
            "llvm-args=-inline-threshold=100",
        ],
        None,
    );
    assert_eq!(
        got,
        [
            "--crate-name",
            "ndarray",
            "-C",
            "llvm-args=-inline-threshold=100"
        ]
    );
}

#[test]
fn the_crate_list_is_a_setting_and_matches_whole_names() {
    let args = rustc_args("pallas_diff_oracle");
    assert_eq!(wrapped(&args, Some("pallas_diff_.*")), args);
    // `pallas_diff_compiler` alone does not match `pallas_diff_compiler_extra`.
    let longer = wrapped(&rustc_args("pallas_diff_compiler_extra"), None);
    assert!(!longer.iter().any(|a| a.contains("sancov")), "{longer:?}");
}

#[test]
fn a_crate_with_nothing_but_coverage_flags_gets_an_empty_command_line() {
    assert!(wrapped(&SANCOV[..2], None).is_empty());
}

#[test]
fn a_call_without_a_crate_name_passes_through() {
    assert_eq!(wrapped(&["-vV"], None), ["-vV"]);
}
