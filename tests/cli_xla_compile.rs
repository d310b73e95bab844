//! The built `pallas-diff` binary's `--xla-compile` with real JAX (the venv provisioned on
//! first use, as CI's test job does): the workers the CLI starts compile with XLA:CPU's fast
//! options unless `--xla-compile default` says otherwise, `probe` shows which flags the workers
//! got, and a bad value is refused before anything starts.

mod common;

use std::path::Path;

/// `probe --json` with `extra` flags, through the provisioned JAX and with no `XLA_FLAGS` of
/// the caller's (so the flags the workers get are exactly the CLI's).
fn probe(dir: &Path, python: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["probe", "--json"];
    args.extend_from_slice(extra);
    let r = common::run_with(
        dir,
        &args,
        &[("PALLAS_DIFF_PYTHON", python), ("XLA_FLAGS", Path::new(""))],
    );
    assert_eq!(r.code, 0, "{r:?}");
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("probe --json: {e}\n{r:?}"))
}

#[test]
fn the_cli_workers_compile_fast_unless_told_otherwise() {
    let python = tpu_runner::provision().expect("provision JAX (needs PyPI on first run)");
    let dir = common::scratch("cli-xla", "probe");
    let fast = probe(&dir, &python, &[]);
    assert_eq!(fast["xla_compile"], "fast", "{fast}");
    let flags = fast["jax"]["xla_flags"].as_str().unwrap();
    for f in tpu_runner::FAST_COMPILE_XLA_FLAGS {
        assert!(flags.contains(f), "{f} missing from {flags:?}");
    }
    let default = probe(&dir, &python, &["--xla-compile", "default"]);
    assert_eq!(default["xla_compile"], "default", "{default}");
    let flags = default["jax"]["xla_flags"].as_str().unwrap();
    for f in tpu_runner::FAST_COMPILE_XLA_FLAGS {
        let name = f.split('=').next().unwrap();
        assert!(!flags.contains(name), "{name} in {flags:?}");
    }
    // Both keep the ISA pin of x86-64 hosts.
    if cfg!(target_arch = "x86_64") {
        for v in [&fast, &default] {
            let flags = v["jax"]["xla_flags"].as_str().unwrap();
            assert!(flags.contains("--xla_cpu_max_isa=AVX2"), "{flags:?}");
        }
    }
}

#[test]
fn an_unknown_xla_compile_option_is_refused_with_the_known_ones() {
    let dir = common::scratch("cli-xla", "bad");
    let r = common::run_in(&dir, &["--xla-compile", "quick", "probe"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("`quick`") && r.stderr.contains("fast, default"),
        "{r:?}"
    );
}
