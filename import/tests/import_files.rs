//! The importer on small Python files written here in the style of Helion's tests and examples
//! (`tests/files/`): what imports, from which config and call, and why the rest does not.

use pallas_diff_import::{HelionDefaults, ImportOptions, import_source, import_source_with};

fn file(name: &str) -> (String, String) {
    let path = format!("{}/tests/files/{name}", env!("CARGO_MANIFEST_DIR"));
    (std::fs::read_to_string(&path).unwrap(), name.to_string())
}

#[test]
fn a_test_module_imports_its_called_kernels_with_the_calls_config_and_shapes() {
    let (src, path) = file("pallas_tests.py");
    let got = import_source(&src, &path, &ImportOptions::default()).unwrap();
    let names: Vec<_> = got.cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "pallas_tests__row_sums",
            "pallas_tests__test_window__window",
            "pallas_tests__never_called_by_name"
        ]
    );
    // A call's config without `block_sizes` on a kernel whose blocks are all fixed: `[]`.
    assert!(
        got.cases[2]
            .script
            .contains("config=helion.Config(block_sizes=[], pallas_loop_type=\"unroll\")")
    );
    let row_sums = &got.cases[0].script;
    // The call's keywords are the config; its tensor's shape (a module constant) the input.
    assert!(
        row_sums.contains("config=helion.Config(block_sizes=[4], pallas_loop_type=\"fori_loop\")")
    );
    assert!(row_sums.contains("x = torch.randn(9, 128, dtype=torch.float32)"));
    // A nested kernel: `m, n = 16, 128`, `.to(torch.bfloat16)`, an int64 randint narrowed.
    let window = &got.cases[1].script;
    assert!(
        window.contains("x = torch.randn(16, 128, dtype=torch.bfloat16)"),
        "{window}"
    );
    assert!(window.contains("idx = torch.tensor([3, 10, 1, 8], dtype=torch.int32)"));
    assert!(window.contains("int64 in the file, int32 here"));
    assert!(window.contains("config=helion.Config(block_sizes=[])"));
    // Every case parses with the frontend.
    for c in &got.cases {
        lang::frontend::parse_case(&c.script, &c.name).unwrap();
    }
    let skipped: Vec<_> = got
        .skipped
        .iter()
        .map(|s| (s.kernel.as_str(), s.line))
        .collect();
    // `uses_erf` is refused at its `torch.erf` line (an op the language lacks), `never_called` at its `def`.
    assert_eq!(skipped, [("uses_erf", 31), ("never_called", 36)]);
    assert!(got.skipped[0].reason.contains("torch.erf"));
    assert!(got.skipped[1].reason.contains("no call"));
}

#[test]
fn an_example_takes_shapes_through_its_check_function_and_needs_a_config_for_free_blocks() {
    let (src, path) = file("example.py");
    let got = import_source(&src, &path, &ImportOptions::default()).unwrap();
    assert_eq!(got.cases.len(), 1);
    let copy = &got.cases[0];
    assert_eq!(copy.kernel, "copy_fixed");
    // `check(m, n)` is called from `main()` with (24, 256).
    assert!(
        copy.script
            .contains("x = torch.randn(24, 256, dtype=torch.bfloat16)")
    );
    assert!(copy.config_from.contains("decorator"));
    assert_eq!(got.skipped.len(), 1);
    assert_eq!(got.skipped[0].kernel, "scale_rows");
    assert!(
        got.skipped[0].reason.contains("--config"),
        "{}",
        got.skipped[0].reason
    );

    // With a config from the command line it imports; the int argument is passed as written.
    let options = ImportOptions {
        config: Some("helion.Config(block_sizes=[8])".into()),
        ..Default::default()
    };
    let got = import_source(&src, &path, &options).unwrap();
    let scale = got.cases.iter().find(|c| c.kernel == "scale_rows").unwrap();
    assert!(
        scale.script.contains("scale_rows(x, 3)"),
        "{}",
        scale.script
    );
}

#[test]
fn user_shapes_and_inputs_replace_the_files_and_stand_in_for_a_missing_call() {
    let (src, path) = file("pallas_tests.py");
    let options = ImportOptions {
        shapes: vec![ImportOptions::parse_shape("x=17x128:bfloat16").unwrap()],
        ..Default::default()
    };
    let got = import_source(&src, &path, &options).unwrap();
    let never = got
        .cases
        .iter()
        .find(|c| c.kernel == "never_called")
        .unwrap();
    assert!(
        never
            .script
            .contains("x = torch.randn(17, 128, dtype=torch.bfloat16)")
    );
    assert_eq!(never.inputs_from, "the command line");
    let options = ImportOptions {
        inputs: vec![ImportOptions::parse_input("x=torch.ones(5, 128)").unwrap()],
        ..Default::default()
    };
    let got = import_source(&src, &path, &options).unwrap();
    let rows = got.cases.iter().find(|c| c.kernel == "row_sums").unwrap();
    assert!(rows.script.contains("x = torch.ones(5, 128)"));
    assert!(ImportOptions::parse_shape("x=3xq").is_err());
    assert!(ImportOptions::parse_input("noequals").is_err());
}

#[test]
fn files_that_are_not_python_or_too_deep_are_errors_not_panics() {
    let bad = "def f(:\n";
    let e = import_source(bad, "bad.py", &ImportOptions::default()).unwrap_err();
    assert!(e.to_string().starts_with("bad.py:1"), "{e}");
    let deep = format!("x = {}1{}\n", "(".repeat(100_000), ")".repeat(100_000));
    let e = import_source(&deep, "deep.py", &ImportOptions::default()).unwrap_err();
    assert!(e.to_string().contains("deep.py"), "{e}");
    // No kernel at all: nothing imported, nothing skipped.
    let got = import_source("x = 1\n", "plain.py", &ImportOptions::default()).unwrap();
    assert!(got.cases.is_empty() && got.skipped.is_empty());
}

#[test]
fn names_that_refer_to_each_other_end_in_a_reason() {
    let src = "import torch\nimport helion\nimport helion.language as hl\n\n\
@helion.kernel(config=helion.Config(block_sizes=[]))\n\
def k(x: torch.Tensor) -> torch.Tensor:\n    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0), block_size=2):\n        out[t, :] = x[t, :]\n    return out\n\n\
a = b\nb = a\nk(torch.randn(a, 128))\n";
    let got = import_source(src, "loop.py", &ImportOptions::default()).unwrap();
    assert!(got.cases.is_empty());
    assert!(
        got.skipped[0].reason.contains("too deeply"),
        "{}",
        got.skipped[0].reason
    );
}

/// Answers [`HelionDefaults`] with fixed sizes (or a refusal) and keeps the scripts it was
/// asked about: the seam between the static importer and real Helion, whose own answer the CLI
/// test `cli_import` checks.
struct Answer {
    sizes: Result<Vec<i64>, String>,
    asked: Vec<String>,
}

impl HelionDefaults for Answer {
    fn block_sizes(&mut self, script: &str) -> Result<(Vec<i64>, String), String> {
        self.asked.push(script.to_string());
        self.sizes.clone().map(|s| (s, "helion 9.9".to_string()))
    }
}

#[test]
fn blocks_left_to_helions_default_take_the_sizes_helion_gives() {
    let (src, path) = file("example.py");
    let mut answer = Answer {
        sizes: Ok(vec![16]),
        asked: Vec::new(),
    };
    let got =
        import_source_with(&src, &path, &ImportOptions::default(), Some(&mut answer)).unwrap();
    let scale = got.cases.iter().find(|c| c.kernel == "scale_rows").unwrap();
    assert!(
        scale
            .script
            .contains("config=helion.Config(block_sizes=[16])"),
        "{}",
        scale.script
    );
    assert!(
        scale.config_from.contains("helion 9.9's default config"),
        "{}",
        scale.config_from
    );
    // Helion was asked once, about a case script the frontend reads (placeholder sizes), and
    // never about the kernel whose config the file gives.
    assert_eq!(answer.asked.len(), 1);
    lang::frontend::parse_case(&answer.asked[0], "asked.py").unwrap();
    assert!(answer.asked[0].contains("def scale_rows"));
    assert!(got.skipped.is_empty(), "{:?}", got.skipped);

    // Helion's refusal is the kernel's reason.
    let mut refusal = Answer {
        sizes: Err("Helion did not bind the kernel: trace error RankMismatch".into()),
        asked: Vec::new(),
    };
    let got =
        import_source_with(&src, &path, &ImportOptions::default(), Some(&mut refusal)).unwrap();
    assert_eq!(got.skipped.len(), 1);
    assert!(
        got.skipped[0].reason.contains("RankMismatch"),
        "{}",
        got.skipped[0].reason
    );
}

#[test]
fn float_and_bool_arguments_import_as_literals() {
    let src = r#"import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True)
def scaled(x: torch.Tensor, scale: float, flag: bool) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0), block_size=8):
        v = x[tile, :] * scale
        if flag:
            v = v * 2.0
        out[tile, :] = v
    return out


def test_scaled():
    x = torch.randn(16, 128)
    scaled(x, 0.5, True)
"#;
    let got = import_source(src, "scaled_tests.py", &ImportOptions::default()).unwrap();
    assert_eq!(got.cases.len(), 1, "{:?}", got.skipped);
    let script = &got.cases[0].script;
    assert!(script.contains("scaled(x, 0.5, True)"), "{script}");
    let case = lang::frontend::parse_case(script, "scaled.py").unwrap();
    assert_eq!(
        case.call.args[1..],
        [lang::ir::Arg::Float(0.5), lang::ir::Arg::Bool(true)]
    );
}

#[test]
fn a_kernel_allocating_on_device_imports_device_as_the_tests_do() {
    let src = r#"import torch
import helion
import helion.language as hl
from helion._testing import DEVICE


class TestHalves:
    def test_first_half(self):
        @helion.kernel(backend="pallas", static_shapes=True, config=helion.Config())
        def first_half(x: torch.Tensor) -> torch.Tensor:
            (n,) = x.size()
            out = torch.empty(n // 2, device=DEVICE, dtype=torch.float32)
            for i in hl.grid(n // 2):
                out[i] = x[i] + 1.0
            return out

        x = torch.randn(64, device=DEVICE, dtype=torch.float32)
        first_half(x)

    def test_copy(self):
        @helion.kernel(backend="pallas", static_shapes=True, config=helion.Config())
        def copy(x: torch.Tensor) -> torch.Tensor:
            out = torch.zeros_like(x)
            for t in hl.tile(x.size(0), block_size=8):
                out[t] = x[t]
            return out

        copy(torch.randn(16, device=DEVICE))
"#;
    let got = import_source(src, "device_tests.py", &ImportOptions::default()).unwrap();
    assert_eq!(got.cases.len(), 2, "{:?}", got.skipped);
    // The kernel that names `DEVICE` gets its import (the frontend refuses `device=DEVICE`
    // without it); the one that does not, none.
    let half = &got.cases[0].script;
    assert!(
        half.contains("import helion.language as hl\nfrom helion._testing import DEVICE\n"),
        "{half}"
    );
    assert!(
        half.contains("x = torch.randn(64, dtype=torch.float32)"),
        "{half}"
    );
    assert!(!got.cases[1].script.contains("DEVICE"));
    for c in &got.cases {
        lang::frontend::parse_case(&c.script, &c.name).unwrap();
    }
}

#[test]
fn arange_with_start_end_and_a_negative_step_imports_as_torch_counts() {
    let src = r#"import torch
import helion
import helion.language as hl
from helion._testing import DEVICE


@helion.kernel(backend="pallas", static_shapes=True)
def shift(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile] = x[tile] + idx[tile].to(torch.float32)
    return out


def test_reversed():
    x = torch.randn(16, device=DEVICE, dtype=torch.float32)
    idx = torch.arange(15, -1, -1, device=DEVICE, dtype=torch.int32)
    code_and_output(shift, (x, idx), block_sizes=[8])


def test_offset():
    x = torch.randn(4, device=DEVICE)
    code_and_output(shift, (x, torch.arange(2, 6)), block_sizes=[4])


def test_zero_step():
    x = torch.randn(4, device=DEVICE)
    shift(x, torch.arange(0, 4, 0))
"#;
    let got = import_source(src, "arange_tests.py", &ImportOptions::default()).unwrap();
    assert_eq!(got.cases.len(), 2, "{:?}", got.skipped);
    let reversed = &got.cases[0].script;
    assert!(
        reversed.contains("idx = torch.arange(15, -1, -1, dtype=torch.int32)"),
        "{reversed}"
    );
    // The frontend reads it as torch counts: 15 down to 0.
    let case = lang::frontend::parse_case(reversed, "reversed.py").unwrap();
    let idx = case.input_tensors().unwrap().remove(1);
    assert_eq!(idx.shape, vec![16]);
    assert_eq!(idx.values, (0..16).rev().map(f64::from).collect::<Vec<_>>());
    // No step is step 1; int64 (torch's default) is narrowed and said so.
    let offset = &got.cases[1].script;
    assert!(
        offset.contains("idx = torch.arange(2, 6, dtype=torch.int32)"),
        "{offset}"
    );
    assert!(offset.contains("int64 in the file, int32 here"));
    lang::frontend::parse_case(offset, "offset.py").unwrap();
    // A zero step makes torch raise: the third call gives no case, the kernel still imports.
    assert!(got.skipped.is_empty(), "{:?}", got.skipped);
    // Alone, that call is the kernel's reason.
    let only_zero = src
        .split("\n\ndef test_reversed")
        .next()
        .unwrap()
        .to_string()
        + "\n\nshift(torch.randn(4), torch.arange(0, 4, 0))\n";
    let got = import_source(&only_zero, "zero.py", &ImportOptions::default()).unwrap();
    assert!(got.cases.is_empty());
    assert!(
        got.skipped[0].reason.contains("step 0 (torch raises)"),
        "{}",
        got.skipped[0].reason
    );
}

#[test]
fn parametrized_tests_and_loops_take_their_first_value_and_say_so() {
    let src = r#"import torch
import helion
import helion.language as hl
from helion._testing import DEVICE, TestCase, code_and_output
from torch.testing._internal.common_utils import parametrize


@helion.kernel(backend="pallas", static_shapes=True)
def add_one(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile] = x[tile] + 1.0
    return out


class TestAddOne(TestCase):
    @parametrize("dtype", [torch.bfloat16, torch.float32])
    def test_dtypes(self, dtype: torch.dtype) -> None:
        @helion.kernel(backend="pallas", static_shapes=True)
        def scale(x: torch.Tensor) -> torch.Tensor:
            out = torch.empty_like(x)
            for tile in hl.tile(x.size(0)):
                out[tile] = x[tile] * 2.0
            return out

        code_and_output(scale, (torch.randn(32, dtype=dtype, device=DEVICE),), block_sizes=[16])

    @parametrize("rows, block", [(24, 8), (64, 32)])
    def test_rows(self, rows: int, block: int) -> None:
        code_and_output(add_one, (torch.randn(rows, device=DEVICE),), block_sizes=[block])

    def _check(self, loop_type: str) -> None:
        cases = (("fori_loop", 40), ("emit_pipeline", 8))
        for lt, n in cases:
            code_and_output(
                add_one,
                (torch.randn(n, device=DEVICE),),
                block_sizes=[8],
                pallas_loop_type=loop_type,
            )

    def test_fori(self) -> None:
        self._check("fori_loop")
"#;
    let got = import_source(src, "param_tests.py", &ImportOptions::default()).unwrap();
    assert!(got.skipped.is_empty(), "{:?}", got.skipped);
    let script = |kernel: &str, i: usize| {
        &got.cases
            .iter()
            .filter(|c| c.kernel == kernel)
            .nth(i)
            .unwrap_or_else(|| panic!("{kernel} #{i}: {:?}", got.cases))
            .script
    };
    // `@parametrize("dtype", ...)`: the first dtype, said in the header.
    let scale = script("scale", 0);
    assert!(
        scale.contains("x = torch.randn(32, dtype=torch.bfloat16)"),
        "{scale}"
    );
    assert!(
        scale.contains("# `dtype` of `test_dtypes`: the first of its @parametrize values (line 17"),
        "{scale}"
    );
    // Several names: the first entry's elements, each by its position.
    let rows = script("add_one", 0);
    assert!(
        rows.contains("x = torch.randn(24, dtype=torch.float32)"),
        "{rows}"
    );
    assert!(rows.contains("block_sizes=[8]"), "{rows}");
    assert!(rows.contains("`rows` of `test_rows`") && rows.contains("`block` of `test_rows`"));
    // A method's parameter through `self._check(...)`; a loop over a tuple bound to a name
    // takes its first entry.
    let looped = script("add_one", 1);
    assert!(
        looped.contains("x = torch.randn(40, dtype=torch.float32)"),
        "{looped}"
    );
    assert!(
        looped.contains("pallas_loop_type=\"fori_loop\""),
        "{looped}"
    );
    assert!(
        looped.contains("# `n`: the first value of the loop at line 34"),
        "{looped}"
    );
    for c in &got.cases {
        lang::frontend::parse_case(&c.script, &c.name).unwrap();
    }
}

#[test]
fn host_arithmetic_on_fixed_values_broadcast_views_and_conditional_configs_import() {
    let src = r#"import torch
import helion
import helion.language as hl
from helion._testing import DEVICE, code_and_output


@helion.kernel(backend="pallas", static_shapes=True)
def plus(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0), block_size=2):
        out[tile, :] = x[tile, :] + y[tile, :]
    return out


def test_mod():
    x = (torch.arange(2 * 4) % 3).reshape(2, 4).to(torch.float32)
    y = (torch.arange(-3, 5) // 2).reshape(2, 4).to(DEVICE)
    plus(x, y)


def test_broadcast():
    rows = torch.tensor([1.0, 2.0], device=DEVICE)
    x = rows[:, None].expand(2, 3).contiguous()
    y = torch.ones(2, 1).expand(-1, 3)
    plus(x, y)


def test_conditional_config():
    x = torch.randn(4, 4, device=DEVICE)
    for loop_type in ("fori_loop", "emit_pipeline"):
        counts = [2] if loop_type == "fori_loop" else None
        code_and_output(
            plus, (x, x), pallas_loop_type=loop_type, pallas_load_buffer_count=counts
        )


def test_random_is_not_computed():
    x = torch.rand(4, 4) + 0.1
    plus(x, x)
"#;
    let got = import_source(src, "arith_tests.py", &ImportOptions::default()).unwrap();
    let scripts: Vec<&str> = got.cases.iter().map(|c| c.script.as_str()).collect();
    assert_eq!(scripts.len(), 3, "{:?}", got.skipped);
    // `% 3` and `// 2` as torch computes them on ints (floor: the remainder takes the
    // divisor's sign), then the file's reshape and dtype.
    assert!(
        scripts[0].contains(
            "x = torch.tensor([0.0, 1.0, 2.0, 0.0, 1.0, 2.0, 0.0, 1.0], dtype=torch.float32).reshape(2, 4)"
        ),
        "{}",
        scripts[0]
    );
    assert!(
        scripts[0].contains(
            "y = torch.tensor([-2, -1, -1, 0, 0, 1, 1, 2], dtype=torch.int32).reshape(2, 4)"
        ),
        "{}",
        scripts[0]
    );
    // `[:, None]` adds a unit dim; `.expand` broadcasts the values (a constant stays one).
    assert!(
        scripts[1].contains(
            "x = torch.tensor([1.0, 1.0, 1.0, 2.0, 2.0, 2.0], dtype=torch.float32).reshape(2, 3)"
        ),
        "{}",
        scripts[1]
    );
    assert!(scripts[1].contains("y = torch.ones(2, 3, dtype=torch.float32)"));
    // `a if loop_type == "fori_loop" else b` under the loop's first value.
    assert!(
        scripts[2].contains("pallas_loop_type=\"fori_loop\", pallas_load_buffer_count=[2]"),
        "{}",
        scripts[2]
    );
    for c in &got.cases {
        lang::frontend::parse_case(&c.script, &c.name).unwrap();
    }
    // Arithmetic on random values is not computed (a case cannot spell it): the call is
    // refused, naming why, while the kernel imports from the other calls.
    let random = src.split("\n\ndef test_mod").next().unwrap().to_string()
        + "\n\nx = torch.rand(4, 4) + 0.1\nplus(x, x)\n";
    let got = import_source(&random, "random.py", &ImportOptions::default()).unwrap();
    assert!(
        got.skipped[0]
            .reason
            .contains("host arithmetic on a tensor the importer does not read"),
        "{:?}",
        got.skipped
    );
}

#[test]
fn an_input_changed_in_place_after_its_binding_is_a_reason_not_a_silent_other_value() {
    let src = r#"import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True)
def plus_one(idx: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(idx)
    for tile in hl.tile(idx.size(0), block_size=4):
        out[tile] = idx[tile] + 1
    return out


def test_edited():
    idx = torch.arange(8, dtype=torch.int32)
    idx[0] = 7
    plus_one(idx)


def test_added():
    idx = torch.arange(8, dtype=torch.int32)
    idx += 1
    plus_one(idx)


def test_filled():
    idx = torch.arange(8, dtype=torch.int32)
    idx.fill_(3)
    plus_one(idx)


def test_changed_after_the_call():
    idx = torch.arange(4, dtype=torch.int32)
    plus_one(idx)
    idx[0] = 7
"#;
    let got = import_source(src, "inplace_tests.py", &ImportOptions::default()).unwrap();
    // Only the call before any change imports.
    assert_eq!(got.cases.len(), 1, "{:?}", got.skipped);
    assert!(
        got.cases[0]
            .script
            .contains("idx = torch.arange(4, dtype=torch.int32)")
    );
    // Each change alone, on the line after the binding (line 14), refuses the call.
    for edit in ["idx[0] = 7", "idx += 1", "idx.fill_(3)"] {
        let alone = src.split("\n\ndef test_").next().unwrap().to_string()
            + &format!("\n\nidx = torch.arange(8, dtype=torch.int32)\n{edit}\nplus_one(idx)\n");
        let got = import_source(&alone, "alone.py", &ImportOptions::default()).unwrap();
        assert!(got.cases.is_empty(), "{edit}");
        assert!(
            got.skipped[0]
                .reason
                .contains("`idx` is changed in place at line 15 after its binding"),
            "{edit}: {}",
            got.skipped[0].reason
        );
    }
}

#[test]
fn a_size_read_off_fixed_offsets_with_item_imports() {
    let src = r#"import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True, config=helion.Config(block_sizes=[8]))
def ragged_copy(x: torch.Tensor, cu: torch.Tensor) -> torch.Tensor:
    out = torch.zeros_like(x)
    for s in hl.grid(cu.size(0) - 1):
        for tile in hl.tile(cu[s], cu[s + 1]):
            out[tile, :] = x[tile, :]
    return out


def test_ragged():
    cu = torch.tensor([0, 3, 11], dtype=torch.int32)
    total = int(cu[-1].item())
    ragged_copy(torch.randn(total, 128), cu)


def test_random_item():
    n = torch.randint(1, 9, (1,))
    ragged_copy(torch.randn(int(n[0].item()), 128), torch.tensor([0, 4], dtype=torch.int32))
"#;
    let got = import_source(src, "item_tests.py", &ImportOptions::default()).unwrap();
    // `cu[-1]` is the last offset, `.item()` its value: 11 rows.
    assert_eq!(got.cases.len(), 1, "{:?}", got.skipped);
    let script = &got.cases[0].script;
    assert!(
        script.contains("= torch.randn(11, 128, dtype=torch.float32)"),
        "{script}"
    );
    lang::frontend::parse_case(script, "ragged.py").unwrap();
    // A size read off a `torch.randint` draw would be pallas-diff's draw, not the file's:
    // refused (alone, that call is the kernel's reason).
    let alone = src.split("\n\ndef test_ragged").next().unwrap().to_string()
        + "\n\nn = torch.randint(1, 9, (1,))\nragged_copy(torch.randn(int(n[0].item()), 128), torch.tensor([0, 4], dtype=torch.int32))\n";
    let got = import_source(&alone, "drawn.py", &ImportOptions::default()).unwrap();
    assert!(got.cases.is_empty());
    assert!(
        got.skipped[0]
            .reason
            .contains("values the importer does not know"),
        "{}",
        got.skipped[0].reason
    );
}
