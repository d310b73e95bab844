//! Inputs built by small helper functions of the file (`_offsets([...])`), `torch.cat`,
//! `torch.cumsum` and `int(t[i])`: on Python snippets written here, each case's inputs checked
//! value by value.

use pallas_diff_import::{Imported, import_source};

const HEAD: &str = r#"import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True, config=helion.Config(block_sizes=[8]))
def ragged_copy(x: torch.Tensor, cu: torch.Tensor) -> torch.Tensor:
    out = torch.zeros_like(x)
    for s in hl.grid(cu.size(0) - 1):
        for tile in hl.tile(cu[s], cu[s + 1]):
            out[tile, :] = x[tile, :]
    return out


@helion.kernel(backend="pallas", static_shapes=True)
def scaled(x: torch.Tensor, scale: float) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0), block_size=4):
        out[tile, :] = x[tile, :] * scale
    return out


@helion.kernel(backend="pallas", static_shapes=True)
def plus_one(idx: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(idx)
    for tile in hl.tile(idx.size(0), block_size=2):
        out[tile, :] = idx[tile, :] + 1
    return out
"#;

/// The file `HEAD` + `tail`, imported; every case parsed by the frontend.
fn import(tail: &str) -> Imported {
    let src = format!("{HEAD}{tail}");
    let got = import_source(&src, "helper_tests.py", &Default::default()).unwrap();
    for c in &got.cases {
        lang::frontend::parse_case(&c.script, &c.name).unwrap();
    }
    got
}

/// Why `kernel` was not imported.
fn reason<'a>(got: &'a Imported, kernel: &str) -> &'a str {
    let s = got.skipped.iter().find(|s| s.kernel == kernel);
    &s.unwrap_or_else(|| panic!("{kernel} imported")).reason
}

/// The line of `needle` in `HEAD` + `tail` (1-based).
fn line_of(tail: &str, needle: &str) -> usize {
    let src = format!("{HEAD}{tail}");
    src.lines().position(|l| l.contains(needle)).unwrap() + 1
}

/// The script's lines that bind inputs (`name = torch...`) and call the kernel.
fn inputs(script: &str) -> Vec<&str> {
    let tail = script.split("torch.manual_seed(0)\n").nth(1).unwrap();
    tail.lines().collect()
}

#[test]
fn a_helper_takes_defaults_keywords_and_returns_a_tuple() {
    let tail = r#"

SCALE = 0.25


def _make(rows, cols=128, *, dtype=torch.float32, scale=SCALE):
    n = rows * 2
    x: torch.Tensor = torch.randn(n, cols, dtype=dtype)
    return x, float(torch.tensor([scale])[0])


def test_defaults():
    x, s = _make(3)
    scaled(x, s)


def test_keywords():
    x, s = _make(cols=64, rows=4, scale=1.5, dtype=torch.bfloat16)
    scaled(x, s)
"#;
    let got = import(tail);
    assert!(
        got.skipped.iter().all(|s| s.reason.starts_with("no call")),
        "{:?}",
        got.skipped
    );
    assert_eq!(got.cases.len(), 2);
    assert_eq!(
        inputs(&got.cases[0].script),
        [
            "x = torch.randn(6, 128, dtype=torch.float32)",
            "scaled(x, 0.25)"
        ]
    );
    assert_eq!(
        inputs(&got.cases[1].script),
        [
            "x = torch.randn(8, 64, dtype=torch.bfloat16)",
            "scaled(x, 1.5)"
        ]
    );
}

#[test]
fn a_helper_that_changes_a_value_in_place_or_branches_is_a_reason_naming_it() {
    let in_place = r#"

def _inputs(n):
    q = torch.ones(n, 128)
    k = torch.zeros_like(q)
    k[0, 0] = 1.0
    return q, k


def test_inputs():
    q, k = _inputs(8)
    scaled(k, 2.0)
"#;
    let got = import(in_place);
    assert!(got.cases.is_empty());
    assert_eq!(
        reason(&got, "scaled"),
        format!(
            "line {}: helper `_inputs` changes `k` in place, which the importer does not follow",
            line_of(in_place, "k[0, 0] = 1.0")
        )
    );
    // The reason's line is the call's.
    assert_eq!(
        got.skipped
            .iter()
            .find(|s| s.kernel == "scaled")
            .unwrap()
            .line as usize,
        line_of(in_place, "scaled(k, 2.0)")
    );
    for (body, what) in [
        ("    x += 1\n", "changes `x` in place"),
        ("    x.fill_(1.0)\n", "changes `x` in place"),
        ("    for i in range(2):\n        pass\n", "has a `for` loop"),
        ("    if n > 2:\n        x = x\n", "has a branch"),
        ("    print(x)\n", "has a call statement"),
    ] {
        let tail = format!(
            "\n\ndef _make(n):\n    x = torch.randn(n, 128)\n{body}    return x\n\n\nscaled(_make(8), 2.0)\n"
        );
        let got = import(&tail);
        assert!(got.cases.is_empty(), "{body}");
        let reason = reason(&got, "scaled");
        assert!(
            reason.starts_with(&format!(
                "line {}: helper `_make` {what}",
                line_of(&tail, body.lines().next().unwrap())
            )),
            "{body}: {reason}"
        );
    }
    // A helper that calls itself ends at the evaluator's depth bound.
    let got =
        import("\n\ndef _n(k):\n    return _n(k)\n\n\nscaled(torch.randn(_n(1), 128), 2.0)\n");
    assert!(
        reason(&got, "scaled").contains("too deeply"),
        "{}",
        reason(&got, "scaled")
    );
    // A name that is not a `def` of the file is no helper.
    let got = import("\n\nscaled(torch.randn(make(8), 128), 2.0)\n");
    assert!(
        reason(&got, "scaled").contains("a call of `make`, which the importer does not evaluate"),
        "{}",
        reason(&got, "scaled")
    );
}
