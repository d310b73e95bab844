//! Input constructors as Helion's own tests write them: `torch.arange(start, end[, step])`,
//! `torch.eye(n[, m])` and `torch.randint([low,] high, size)`. Each parses to its own
//! constructor, renders back to a script that parses to the same case, gives torch's values
//! (random ones from pallas-diff's seeded stream), and what torch would refuse or a case cannot
//! hold is refused at the input's line.

use pallas_diff_lang::frontend::parse_case;
use pallas_diff_lang::ir::{Case, Ctor};
use pallas_diff_lang::render::render_case;

/// A one-tile kernel over `x`, with `x` made by `ctor`.
fn script(ctor: &str) -> String {
    format!(
        "import torch\nimport helion\nimport helion.language as hl\n\n\n\
         @helion.kernel(backend=\"pallas\", static_shapes=True, config=helion.Config(block_sizes=[4]))\n\
         def k(x: torch.Tensor) -> torch.Tensor:\n    out = torch.zeros_like(x)\n    \
         for t in hl.tile(x.size(0)):\n        out[t] = x[t] + x[t]\n    return out\n\n\n\
         x = {ctor}\nk(x)\n"
    )
}

fn parse(ctor: &str) -> Case {
    let src = script(ctor);
    parse_case(&src, "case.py").unwrap_or_else(|e| panic!("{e}\n{src}"))
}

/// The case of `ctor`, after checking that its rendering parses back to the same case.
fn round_trips(ctor: &str) -> Case {
    let case = parse(ctor);
    let rendered = render_case(&case);
    let again = parse_case(&rendered, "rendered.py").unwrap_or_else(|e| panic!("{e}\n{rendered}"));
    assert_eq!(again.inputs[0].ctor, case.inputs[0].ctor, "{rendered}");
    assert_eq!(again.inputs[0].dtype, case.inputs[0].dtype, "{rendered}");
    case
}

fn values(case: &Case) -> (Vec<usize>, Vec<f64>) {
    let t = case.input_tensors().expect("input values").remove(0);
    (t.shape, t.values)
}

/// `ctor` is refused at the input's line (14) with `needle` in the message.
fn refused(ctor: &str, needle: &str) {
    let e = parse_case(&script(ctor), "case.py").expect_err(ctor);
    let msg = e.to_string();
    assert!(msg.contains(needle), "{ctor}: {msg}");
    assert!(msg.starts_with("case.py:14:"), "{ctor}: {msg}");
}

#[test]
fn arange_with_a_start_counts_from_it() {
    let c = round_trips("torch.arange(3, 9, dtype=torch.int32)");
    assert!(matches!(
        c.inputs[0].ctor,
        Ctor::Range {
            start: 3,
            end: 9,
            step: 1
        }
    ));
    assert_eq!(values(&c), (vec![6], vec![3.0, 4.0, 5.0, 6.0, 7.0, 8.0]));
    let c = round_trips("torch.arange(-4, 5, 3, dtype=torch.float32)");
    assert_eq!(values(&c), (vec![3], vec![-4.0, -1.0, 2.0]));
    // A negative step counts down, strictly before `end`, as torch: Helion's tests reverse an
    // index with `torch.arange(n - 1, -1, -1)`.
    let c = round_trips("torch.arange(7, -1, -1, dtype=torch.int32)");
    assert_eq!(
        values(&c),
        (vec![8], vec![7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0])
    );
    let c = round_trips("torch.arange(5, -4, -3, dtype=torch.float32)");
    assert_eq!(values(&c), (vec![3], vec![5.0, 2.0, -1.0]));
    // `end == start` is empty for either sign.
    let c = round_trips("torch.arange(3, 3, -2, dtype=torch.int32)");
    assert_eq!(values(&c), (vec![0], vec![]));
    // torch.arange(n) stays the one-length constructor.
    let c = round_trips("torch.arange(4, dtype=torch.int32)");
    assert!(matches!(c.inputs[0].ctor, Ctor::Arange { n: 4 }));
}

#[test]
fn eye_is_the_identity_and_rectangular_with_two_sizes() {
    let c = round_trips("torch.eye(3)");
    assert_eq!(
        values(&c),
        (
            vec![3, 3],
            vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
        )
    );
    let c = round_trips("torch.eye(2, 3, dtype=torch.bfloat16)");
    assert_eq!(values(&c), (vec![2, 3], vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0]));
}

#[test]
fn randint_draws_every_value_of_its_range_and_only_those() {
    let c = round_trips("torch.randint(-3, 4, (64, 16), dtype=torch.int32)");
    let (shape, v) = values(&c);
    assert_eq!(shape, vec![64, 16]);
    assert!(
        v.iter()
            .all(|&x| (-3.0..4.0).contains(&x) && x.fract() == 0.0)
    );
    for want in -3..4 {
        assert!(v.contains(&f64::from(want)), "{want} never drawn");
    }
    // The same case gives the same values; `torch.randint(high, size)` starts at 0.
    assert_eq!(
        values(&c),
        values(&parse("torch.randint(-3, 4, (64, 16), dtype=torch.int32)"))
    );
    let c = round_trips("torch.randint(5, (8,), dtype=torch.int32)");
    assert!(matches!(
        c.inputs[0].ctor,
        Ctor::Randint {
            low: 0,
            high: 5,
            ..
        }
    ));
    assert!(values(&c).1.iter().all(|&x| (0.0..5.0).contains(&x)));
}

#[test]
fn what_torch_refuses_or_a_case_cannot_hold_is_refused_at_the_input() {
    // torch's own refusals: a step leading away from `end`, a zero step.
    refused(
        "torch.arange(5, 2, dtype=torch.int32)",
        "inconsistent with step sign",
    );
    refused(
        "torch.arange(2, 5, -1, dtype=torch.int32)",
        "inconsistent with step sign",
    );
    refused(
        "torch.arange(0, 4, 0, dtype=torch.int32)",
        "step must be nonzero",
    );
    refused(
        "torch.arange(4, 4, 0, dtype=torch.int32)",
        "step must be nonzero",
    );
    refused(
        "torch.arange(0, 4, 1, 2, dtype=torch.int32)",
        "torch.arange",
    );
    refused("torch.arange(0, 3000000000, dtype=torch.int32)", "int32");
    refused("torch.randint(4, 4, (2,), dtype=torch.int32)", "empty");
    refused(
        "torch.randint(0, 4, 2, dtype=torch.int32)",
        "size is a tuple",
    );
    refused("torch.eye(2, 3, 4)", "torch.eye");
    // torch makes int64 without a dtype, which a case does not have.
    refused("torch.randint(0, 4, (2,))", "int64");
    refused("torch.arange(1, 4)", "int64");
}
