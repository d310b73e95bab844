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

/// Asserts that `kernel` was not imported for a reason that says `fragment`.
#[track_caller]
fn assert_reason(got: &Imported, kernel: &str, fragment: &str) {
    let r = reason(got, kernel);
    assert!(r.contains(fragment), "{kernel}: {r}");
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

const OFFSETS: &str = r#"

def _offsets(lengths):
    """Row offsets of sequences of the given lengths."""
    lengths = torch.tensor(lengths, dtype=torch.int32)
    return torch.cat(
        [torch.zeros(1, dtype=torch.int32), torch.cumsum(lengths, 0).to(torch.int32)]
    )
"#;

#[test]
fn two_calls_of_one_helper_read_each_its_own_arguments() {
    let tail = format!(
        "{OFFSETS}

def test_two():
    cu = _offsets([10, 23])
    total = int(cu[-1])
    ragged_copy(torch.randn(total, 128), cu)


def test_one():
    cu = _offsets([20])
    ragged_copy(torch.randn(int(cu[-1].item()), 128), cu)
"
    );
    let got = import(&tail);
    assert!(
        got.skipped.iter().all(|s| s.reason.starts_with("no call")),
        "{:?}",
        got.skipped
    );
    assert_eq!(got.cases.len(), 2);
    assert_eq!(
        inputs(&got.cases[0].script),
        [
            "x = torch.randn(33, 128, dtype=torch.float32)",
            "cu = torch.tensor([0, 10, 33], dtype=torch.int32)",
            "ragged_copy(x, cu)",
        ]
    );
    assert_eq!(
        inputs(&got.cases[1].script),
        [
            "x = torch.randn(20, 128, dtype=torch.float32)",
            "cu = torch.tensor([0, 20], dtype=torch.int32)",
            "ragged_copy(x, cu)",
        ]
    );
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
    assert_reason(&got, "scaled", "too deeply");
    // A name that is not a `def` of the file is no helper.
    let got = import("\n\nscaled(torch.randn(make(8), 128), 2.0)\n");
    assert_reason(
        &got,
        "scaled",
        "a call of `make`, which the importer does not evaluate",
    );
}

#[test]
fn cat_and_cumsum_compute_the_values_torch_does() {
    // Along dim 1 of 2-D tensors, int32 and int64 promoted to int64; a cumsum's int64.
    let tail = r#"

def test_cat():
    left = torch.arange(4, dtype=torch.int32).reshape(2, 2)
    right = torch.tensor([[7], [9]])
    plus_one(torch.cat([left, right], dim=1))


def test_cat_dim_positional():
    a = torch.full((1, 3), 5, dtype=torch.int32)
    b = torch.ones(2, 3, dtype=torch.int32)
    plus_one(torch.cat((a, b, a), 0))


def test_cumsum():
    c = torch.tensor([1, 2, 3, -4], dtype=torch.int32).cumsum(dim=0)
    plus_one(c[:, None])
"#;
    let got = import(tail);
    assert!(
        got.skipped.iter().all(|s| s.reason.starts_with("no call")),
        "{:?}",
        got.skipped
    );
    let first = inputs(&got.cases[0].script);
    assert_eq!(
        first[0],
        "idx = torch.tensor([0, 1, 7, 2, 3, 9], dtype=torch.int32).reshape(2, 3)"
    );
    assert!(got.cases[0].script.contains("int64 in the file"));
    assert_eq!(
        inputs(&got.cases[1].script)[0],
        "idx = torch.tensor([5, 5, 5, 1, 1, 1, 1, 1, 1, 5, 5, 5], dtype=torch.int32).reshape(4, 3)"
    );
    // The int32 input's sums are int64, as torch gives.
    let third = &got.cases[2].script;
    assert_eq!(
        inputs(third)[0],
        "idx = torch.tensor([1, 3, 6, 2], dtype=torch.int32).reshape(4, 1)"
    );
    assert!(third.contains("int64 in the file"), "{third}");
    // Shapes that differ off the dim, and a float cumsum, are reasons.
    let got = import(
        "\n\nplus_one(torch.cat([torch.zeros(2, 3, dtype=torch.int32), torch.zeros(2, 4, dtype=torch.int32)]))\n",
    );
    assert_reason(&got, "plus_one", "which differ off dim 0");
    let got = import("\n\nscaled(torch.ones(4, 2).cumsum(0), 1.0)\n");
    assert_reason(&got, "scaled", "`cumsum` of a tensor of shape [4, 2]");
    let got = import("\n\nplus_one(torch.cumsum(torch.ones(4), 0)[:, None])\n");
    assert_reason(&got, "plus_one", "`cumsum` of a float tensor");
}

#[test]
fn offsets_summed_from_a_random_draw_are_the_cases_own_and_say_so() {
    // `torch.randint` is drawn by pallas-diff (`lo + (7i + 3) mod (hi - lo)`: 4, 11, 18); the
    // offsets and the size read off them follow that draw.
    let tail = r#"

def test_drawn():
    lengths = torch.randint(1, 65, (3,), dtype=torch.int32)
    cu = torch.cat([torch.zeros(1, dtype=torch.int32), torch.cumsum(lengths, dim=0).to(torch.int32)])
    n = int(cu[-1])
    ragged_copy(torch.randn(n, 128), cu)
"#;
    let got = import(tail);
    assert!(
        got.skipped.iter().all(|s| s.reason.starts_with("no call")),
        "{:?}",
        got.skipped
    );
    let script = &got.cases[0].script;
    assert_eq!(
        inputs(script)[..2],
        [
            "x = torch.randn(33, 128, dtype=torch.float32)",
            "cu = torch.tensor([0, 4, 15, 33], dtype=torch.int32)",
        ]
    );
    assert!(
        script.contains(&format!(
            "# line {}: `cumsum` computes with pallas-diff's own draw",
            line_of(tail, "cu = torch.cat")
        )),
        "{script}"
    );
}

#[test]
fn a_config_a_helper_builds_is_the_calls_config_through_double_star() {
    let tail = r#"
from helion._testing import code_and_output


@helion.kernel(backend="pallas", static_shapes=True)
def copy_rows(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile, :] = x[tile, :]
    return out


def _config(block_sizes, *, loop_type="unroll", grouping=1):
    return helion.Config(
        block_sizes=block_sizes,
        pallas_loop_type=loop_type,
        pallas_worklist_grouping=grouping,
    )


def test_config():
    code_and_output(copy_rows, (torch.randn(24, 128),), **_config([16], loop_type="fori_loop"))


def test_dict():
    x = torch.randn(8, 128)
    code_and_output(scaled, (x, 1.0), **dict(pallas_loop_type="emit_pipeline"))
"#;
    let got = import(tail);
    assert!(
        got.skipped.iter().all(|s| s.reason.starts_with("no call")),
        "{:?}",
        got.skipped
    );
    let copy = got.cases.iter().find(|c| c.kernel == "copy_rows").unwrap();
    assert!(
        copy.script.contains(
            "config=helion.Config(block_sizes=[16], pallas_loop_type=\"fori_loop\", pallas_worklist_grouping=1)"
        ),
        "{}",
        copy.script
    );
    let scaled = got.cases.iter().find(|c| c.kernel == "scaled").unwrap();
    assert!(
        scaled
            .script
            .contains("config=helion.Config(block_sizes=[], pallas_loop_type=\"emit_pipeline\")"),
        "{}",
        scaled.script
    );
    // A `**` of something else is the call's reason, not a config silently dropped.
    let got = import(
        "\n\nfrom helion._testing import code_and_output\ncode_and_output(scaled, (torch.randn(8, 128), 1.0), **CONFIGS[0])\n",
    );
    assert_reason(&got, "scaled", "`CONFIGS` is not bound");
}
