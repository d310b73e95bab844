//! Helion builds on real Helion (`tpu_runner::builds`): a release installed as an overlay runs
//! in place of the pinned one, a source tree runs in place, and an overlay that does not shadow
//! the environment's Helion is refused rather than mislabelled; a source tree reports its own
//! version (from git), and a build without the launcher helpers `helion-tpu-lower` calls says
//! so at start instead of failing each run with a `TypeError`. They need the Helion
//! environment (`pallas-diff provision --helion`) and PyPI, and skip, saying why, without them.

use lang::tensor::{DType, Tensor};
use pallas_diff_tpu_runner::builds::{self, BuildSpec, HelionBuild};
use pallas_diff_tpu_runner::{
    CallArg, KernelCall, Mode, Pool, PoolConfig, RunError, RunRequest, Runtime,
    helion_python_if_present,
};
use std::path::Path;

/// `2 * x` in Helion 1.2.0 to 1.5.1.
const TWICE: &str = r#"import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def twice(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros_like(x)
    for tile in hl.tile(x.size(0), block_size=8):
        out[tile, :] = x[tile, :] * 2.0
    return out
"#;

fn python_or_skip() -> Option<std::path::PathBuf> {
    match helion_python_if_present() {
        Ok(p) => Some(p),
        Err(why) => {
            eprintln!("skip helion_builds: {why}");
            None
        }
    }
}

fn pool_on(python: &Path, build: &HelionBuild) -> Result<Pool, RunError> {
    Pool::new(
        PoolConfig::for_runtime(Runtime::Helion, python)
            .with_workers(1)
            .with_helion_build(Some(build.clone())),
    )
}

fn twice_runs(pool: &Pool) {
    let x = Tensor::new(
        DType::Float32,
        vec![16, 128],
        (0..2048).map(f64::from).collect(),
    );
    let result = pool
        .run(&RunRequest {
            mode: Mode::HelionPallas,
            source: TWICE.into(),
            inputs: vec![x],
            call: Some(KernelCall {
                kernel: "twice".into(),
                args: vec![CallArg::Input(0)],
            }),
            input_sets: Vec::new(),
        })
        .expect("the worker answers");
    let out = result.outcome.expect("Helion lowers and runs twice");
    assert_eq!(out[0].values[7], 14.0);
}

#[test]
fn a_release_overlay_and_a_source_tree_run_in_place_of_the_pinned_helion() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let build = match builds::install(
        dir.path(),
        &BuildSpec::Release("1.5.0".into()),
        &python,
        false,
    ) {
        Ok(b) => b,
        Err(e) => {
            // Only PyPI being out of reach skips; anything else is a failure.
            let text = e.to_string();
            assert!(
                text.contains("pip could not install"),
                "installing helion 1.5.0 failed: {text}"
            );
            eprintln!("skip helion_builds: PyPI out of reach: {text}");
            return;
        }
    };
    assert_eq!(build.record.version, "1.5.0");
    let pool = pool_on(&python, &build).expect("a worker starts on helion 1.5.0");
    assert_eq!(pool.availability().helion.as_deref(), Some("1.5.0"));
    assert_eq!(
        pool.availability()
            .helion_build
            .as_ref()
            .map(|b| b.id.as_str()),
        Some("1.5.0")
    );
    twice_runs(&pool);
    drop(pool);

    // The installed site directory is a Helion tree too: registered, it runs in place, and its
    // version is what the worker imported.
    let tree = build.overlay.clone().expect("a release has an overlay");
    let source = builds::install(dir.path(), &BuildSpec::Source(tree), &python, false).unwrap();
    let pool = pool_on(&python, &source).expect("a worker starts on the source tree");
    let identity = pool.availability().helion_build.clone().unwrap();
    assert_eq!(
        (identity.version.as_str(), identity.commit),
        ("1.5.0", None)
    );
    twice_runs(&pool);
    drop(pool);

    // Listed in release order, the pinned release among them.
    let listed: Vec<String> = builds::installed(dir.path())
        .unwrap()
        .iter()
        .map(|b| b.id().to_owned())
        .collect();
    assert_eq!(
        listed[..2],
        ["1.5.0".to_owned(), HelionBuild::pinned().id().to_owned()]
    );

    // A record that claims a version the overlay does not hold is refused at start-up.
    let mut lying = build.clone();
    lying.record.version = "1.4.0".into();
    match pool_on(&python, &lying) {
        Err(RunError::WrongBuild { reported, .. }) => assert_eq!(reported, "1.5.0"),
        Err(e) => panic!("expected WrongBuild, got {e}"),
        Ok(_) => panic!("expected WrongBuild, the pool started"),
    }
}

/// Runs `git -C dir ARGS`, failing the test when git does.
fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

#[test]
fn a_build_says_whether_it_can_lower_for_tpu_and_a_source_tree_its_own_version() {
    let Some(python) = python_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let old = match builds::install(
        dir.path(),
        &BuildSpec::Release("1.4.0".into()),
        &python,
        false,
    ) {
        Ok(b) => b,
        Err(e) => {
            let text = e.to_string();
            assert!(
                text.contains("pip could not install"),
                "installing helion 1.4.0 failed: {text}"
            );
            eprintln!("skip helion_builds: PyPI out of reach: {text}");
            return;
        }
    };
    // 1.4.0's launcher has no `_pallas_torch_placeholder`: helion-tpu-lower cannot run there.
    let pool = pool_on(&python, &old).expect("a worker starts on helion 1.4.0");
    let why = pool
        .availability()
        .mode_unavailable(Mode::HelionTpuLower)
        .expect("1.4.0 cannot run helion-tpu-lower")
        .to_owned();
    assert!(why.contains("_pallas_torch_placeholder"), "{why}");
    assert_eq!(
        pool.availability().mode_unavailable(Mode::HelionPallas),
        None
    );
    drop(pool);
    let pinned = pool_on(&python, &HelionBuild::pinned()).expect("the pinned release starts");
    assert_eq!(
        pinned.availability().mode_unavailable(Mode::HelionTpuLower),
        None
    );
    drop(pinned);

    // A git checkout of a Helion tree, one commit after its tag: the version a VCS build backend
    // gives it, with the commit, not the venv's metadata.
    let tree = dir.path().join("checkout");
    std::fs::create_dir(&tree).unwrap();
    let site = old.overlay.clone().expect("a release has an overlay");
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(site.join("helion"))
        .arg(&tree)
        .status()
        .expect("cp runs");
    assert!(copied.success());
    git(&tree, &["init", "-q"]);
    git(&tree, &["add", "."]);
    git(&tree, &["commit", "-q", "-m", "release"]);
    git(&tree, &["tag", "v1.4.0"]);
    std::fs::write(tree.join("NOTES"), "a developer's change\n").unwrap();
    git(&tree, &["add", "NOTES"]);
    git(&tree, &["commit", "-q", "-m", "change"]);
    let source = builds::install(dir.path(), &BuildSpec::Source(tree), &python, false).unwrap();
    let pool = pool_on(&python, &source).expect("a worker starts on the checkout");
    let identity = pool.availability().helion_build.clone().unwrap();
    assert!(
        identity.version.starts_with("1.4.1.dev1+g"),
        "{}",
        identity.version
    );
    assert!(identity.commit.is_some_and(|c| c.len() >= 40));
    twice_runs(&pool);
}
