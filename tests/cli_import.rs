//! `pallas-diff import` end to end on a file written here in the style of Helion's tests: a
//! kernel that leaves its block sizes to Helion's default config imports with the sizes real
//! Helion chooses (skipped with the reason when the Helion environment is absent), and is not
//! imported, with that reason, when Helion is not asked.

mod common;

const FILE: &str = "\
import torch
import helion
import helion.language as hl


@helion.kernel(backend=\"pallas\", static_shapes=True)
def scale(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile, :] = x[tile, :] * 2.0
    return out


def test_scale():
    x = torch.randn(64, 128)
    scale(x)
";

#[test]
fn a_kernel_without_a_config_takes_helions_default_block_sizes() {
    let dir = common::scratch("cli-import", "default");
    std::fs::write(dir.join("test_scale.py"), FILE).unwrap();

    let r = common::run_in(&dir, &["import", "test_scale.py", "--no-helion"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stdout
            .contains("not imported test_scale.py:7 scale: no config in the file"),
        "{r:?}"
    );
    assert!(r.stdout.contains("--config"), "{r:?}");

    if let Err(why) = tpu_runner::helion_python_if_present() {
        eprintln!("skipped: the Helion part needs the Helion environment: {why}");
        return;
    }
    let r = common::run_in(&dir, &["import", "test_scale.py", "--out", "cases"]);
    assert_eq!(r.code, 0, "{r:?}");
    let script = std::fs::read_to_string(dir.join("cases/test_scale__scale.py")).unwrap();
    // Helion 1.5.1's Pallas default for one block over 64 rows (the comment names the build).
    assert!(script.contains("default config"), "{script}");
    let sizes = script
        .split("block_sizes=[")
        .nth(1)
        .and_then(|r| r.split(']').next())
        .unwrap();
    let size: i64 = sizes
        .parse()
        .unwrap_or_else(|_| panic!("one size: {script}"));
    assert!(size >= 1, "{script}");
    // The case runs on real Helion with that config and agrees with the reference.
    let r = common::run_in(
        &dir,
        &[
            "check",
            "cases/test_scale__scale.py",
            "--engines",
            "oracle,helion-pallas",
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("outcome: agree"), "{r:?}");
}
