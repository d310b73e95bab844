//! Every [`EvalErrorKind`] has a case that produces it, with the span of the failing construct,
//! and no invalid case panics.

mod common;

use common::{eval, parse, script};
use lang::ir::{Arg, Span};
use pallas_diff_oracle::{EvalError, EvalErrorKind as K, evaluate};

/// A kernel over one 8×2×128 f32 input `x` whose body is `body` (indented as a kernel body).
fn body_case(body: &str) -> String {
    script(
        "",
        "x: torch.Tensor",
        body,
        "x = torch.ones(8, 2, 128)",
        "x",
    )
}

fn expect(src: &str, kind: K) -> EvalError {
    match eval(src) {
        Ok(o) => panic!("expected {kind}, got outputs {:?}\n{src}", o.summary()),
        Err(e) => {
            assert_eq!(e.kind, kind, "{e}\n{src}");
            assert_ne!(e.span, Span::default(), "{e} has no span");
            e
        }
    }
}

/// The 1-based line of the first line of `src` containing `needle`.
fn line_of(src: &str, needle: &str) -> u32 {
    src.lines()
        .position(|l| l.contains(needle))
        .expect("needle in source") as u32
        + 1
}

fn read_uninitialized() -> String {
    body_case(
        r#"
        scratch = torch.empty([8, 2, 128], dtype=torch.float32)
        out = torch.zeros([8, 2, 128], dtype=torch.float32)
        for t in hl.tile(8, block_size=4):
            scratch[t, 0, :] = x[t, 0, :]
            out[t, :, :] = scratch[t, :, :] + 1.0
        return out
        "#,
    )
}

fn cases() -> Vec<(K, String, &'static str)> {
    vec![
        (
            K::ReadUninitialized,
            read_uninitialized(),
            "scratch[t, :, :] + 1.0",
        ),
        (
            K::ReadUninitialized,
            script(
                "",
                "x: torch.Tensor",
                "out = torch.zeros([4], dtype=torch.float32)\nfor g in hl.grid(1):\n    out[0:4] = x[0:4]\nreturn out",
                "x = torch.empty(4)",
                "x",
            ),
            "out[0:4] = x[0:4]",
        ),
        (
            K::UninitializedOutput,
            body_case(
                r#"
                out = torch.empty([8, 128], dtype=torch.float32)
                for t in hl.tile(6, block_size=2):
                    out[t, :] = x[t, 0, :]
                return out
                "#,
            ),
            "return out",
        ),
        (
            K::ShapeMismatch,
            body_case(
                r#"
                out = torch.zeros([1, 2, 128], dtype=torch.float32)
                for t in hl.tile(8, block_size=4):
                    out[0, :, :] = x[t, :, :]
                return out
                "#,
            ),
            "out[0, :, :] = x[t, :, :]",
        ),
        (
            K::ShapeMismatch,
            body_case(
                r#"
                out = torch.zeros([2, 128], dtype=torch.float32)
                for g in hl.grid(1):
                    acc = hl.zeros([3, 128], dtype=torch.float32)
                    out[:, :] = acc + x[0, :, :]
                return out
                "#,
            ),
            "acc + x[0, :, :]",
        ),
        (
            K::IndexOutOfRange,
            body_case(
                r#"
                out = torch.zeros([2, 128], dtype=torch.float32)
                for t in hl.tile(8, block_size=4):
                    blk = x[t, :, :]
                    out[:, :] = blk[7, :, :]
                return out
                "#,
            ),
            "blk[7, :, :]",
        ),
        (
            K::IndexOutOfRange,
            body_case(
                r#"
                out = torch.zeros([2, 128], dtype=torch.float32)
                for t in hl.tile(8, block_size=4):
                    blk = x[t, :, :]
                    out[:, :] = blk[hl.arange(2, 6), :, :].sum(dim=0)
                return out
                "#,
            ),
            "blk[hl.arange(2, 6), :, :]",
        ),
        (
            K::DivisionByZero,
            body_case(
                r#"
                out = torch.zeros([8], dtype=torch.int32)
                for t in hl.tile(8, block_size=4):
                    live = t.end - t.begin
                    out[t.begin] = live // (live - 4)
                return out
                "#,
            ),
            "live // (live - 4)",
        ),
        (
            K::UnboundName,
            body_case(
                r#"
                out = torch.zeros([2, 128], dtype=torch.float32)
                for t in hl.tile(8, block_size=4):
                    live = t.end - t.begin
                    if live > 4:
                        extra = x[t, 0, :]
                    out[0, :] = extra
                return out
                "#,
            ),
            "out[0, :] = extra",
        ),
        (
            K::NoReturn,
            body_case(
                r#"
                out = torch.zeros([2, 128], dtype=torch.float32)
                for t in hl.tile(8, block_size=4):
                    out[0, :] = x[t, 0, :].sum(dim=0)
                "#,
            ),
            "def k(",
        ),
        (
            K::NoReturn,
            body_case(
                r#"
                n = x.size(0)
                return n
                "#,
            ),
            "return n",
        ),
        (
            K::Budget,
            body_case(
                r#"
                out = torch.zeros([1], dtype=torch.float32)
                for i in hl.grid(10):
                    for j in hl.grid(2000000):
                        out[0] = 1.0
                return out
                "#,
            ),
            "for j in hl.grid(2000000)",
        ),
        (
            K::TypeError,
            body_case(
                r#"
                out = torch.zeros([2, 128], dtype=torch.float32)
                for g in hl.grid(1):
                    hl.atomic_or(out, [0, 0], 1)
                return out
                "#,
            ),
            "hl.atomic_or",
        ),
        (
            K::TypeError,
            body_case(
                r#"
                out = torch.zeros([2, 128], dtype=torch.float32)
                for t in hl.tile(8, block_size=4):
                    out[:, :] = x[t, :, :] + t
                return out
                "#,
            ),
            "x[t, :, :] + t",
        ),
        (
            K::InvalidArgument,
            body_case(
                r#"
                out = torch.zeros([2, 128], dtype=torch.float32)
                for t in hl.tile(8, block_size=4):
                    blk = x[t, :, :]
                    out[:, :] = blk[hl.arange(0, 4, 0), :, :].sum(dim=0)
                return out
                "#,
            ),
            "hl.arange(0, 4, 0)",
        ),
        (
            K::InvalidArgument,
            body_case(
                r#"
                out = torch.zeros([2, 128], dtype=torch.float32)
                for t in hl.tile(8, block_size=4):
                    out[:, :] = x[t, :, :].sum(dim=3)
                return out
                "#,
            ),
            ".sum(dim=3)",
        ),
        (
            K::Overflow,
            body_case(
                r#"
                out = torch.zeros([1], dtype=torch.int32)
                for g in hl.grid(1):
                    big = 9223372036854775807
                    out[0] = big + g + 1
                return out
                "#,
            ),
            "big + g + 1",
        ),
        (
            K::Overflow,
            body_case(
                r#"
                out = torch.zeros([2], dtype=torch.int32)
                for g in hl.grid(1):
                    v = x[0, 0, 0:2] / 0.0
                    out[0:2] = v.to(torch.int32)
                return out
                "#,
            ),
            "v.to(torch.int32)",
        ),
        (
            K::AliasedInPlace,
            body_case(
                r#"
                out = torch.zeros([2, 128], dtype=torch.float32)
                for g in hl.grid(1):
                    acc = hl.zeros([2, 128], dtype=torch.float32)
                    kept = acc
                    acc += x[0, :, :]
                    out[:, :] = kept
                return out
                "#,
            ),
            "acc += x[0, :, :]",
        ),
    ]
}

#[test]
fn every_error_kind_has_a_case_with_its_span() {
    let cases = cases();
    for kind in K::ALL {
        if matches!(kind, K::InvalidInput | K::InvalidBlockSize) {
            continue; // built from IR below: the frontend refuses such scripts itself
        }
        assert!(
            cases.iter().any(|(k, _, _)| *k == kind),
            "no case for {kind}"
        );
    }
    for (kind, src, needle) in &cases {
        let e = expect(src, *kind);
        assert_eq!(e.span.line, line_of(src, needle), "{e}: wrong line\n{src}");
        assert!(!e.message.is_empty());
        assert_eq!(e.to_json()["kind"], kind.id());
    }
}

#[test]
fn an_argument_of_the_wrong_kind_is_invalid_input() {
    let src = script("", "x: torch.Tensor", "return x", "x = torch.ones(4)", "x");
    let mut case = parse(&src);
    case.call.args = vec![Arg::Int(3)];
    let e = evaluate(&case).unwrap_err();
    assert_eq!(e.kind, K::InvalidInput);
    case.call.args = vec![];
    assert_eq!(evaluate(&case).unwrap_err().kind, K::InvalidInput);
}

#[test]
fn a_missing_or_non_positive_block_size_is_refused() {
    let src = script(
        "4",
        "x: torch.Tensor",
        "out = torch.zeros([8], dtype=torch.float32)\nfor t in hl.tile(8):\n    out[t] = 1.0\nreturn out",
        "x = torch.ones(8, 2, 128)",
        "x",
    );
    let mut case = parse(&src);
    assert!(evaluate(&case).is_ok());
    for sizes in [vec![], vec![0], vec![-2]] {
        case.config.block_sizes = sizes;
        let e = evaluate(&case).unwrap_err();
        assert_eq!(e.kind, K::InvalidBlockSize, "{e}");
        assert_eq!(e.span.line, line_of(&src, "for t in hl.tile(8)"));
    }
}

#[test]
fn the_same_kernel_is_valid_once_the_cause_is_removed() {
    // Guards against errors that fire for the wrong reason: each fix makes the case evaluate.
    let fixed = read_uninitialized().replace(
        "scratch[t, 0, :] = x[t, 0, :]",
        "scratch[t, :, :] = x[t, :, :]",
    );
    let o = eval(&fixed).unwrap();
    assert!(o.outputs[0].tensor.values.iter().all(|&v| v == 2.0));
}

#[test]
fn error_display_names_the_position_and_kind() {
    let e = expect(&read_uninitialized(), K::ReadUninitialized);
    let text = e.to_string();
    assert!(text.starts_with(&format!("{}:", e.span)), "{text}");
    assert!(text.contains("read-uninitialized"), "{text}");
    assert!(text.contains("never written"), "{text}");
}

#[test]
fn extreme_values_are_errors_or_values_never_panics() {
    let bodies = [
        // a huge slice step selects one row
        "out = torch.zeros([2, 128], dtype=torch.float32)\nfor t in hl.tile(8, block_size=4):\n    out[:, :] = x[t, :, :][0:4:9223372036854775807].sum(dim=0)\nreturn out",
        // a loop bound at the top of the i64 range
        "out = torch.zeros([1], dtype=torch.float32)\nfor t in hl.tile(9223372036854775807, block_size=4):\n    out[0] = 1.0\nreturn out",
        "out = torch.zeros([1], dtype=torch.float32)\nfor t in hl.tile(-9223372036854775807, 9223372036854775807, block_size=9223372036854775807):\n    out[0] = t.count\nreturn out",
        // arange at the extremes
        "out = torch.zeros([1], dtype=torch.float32)\nfor g in hl.grid(1):\n    out[0:1] = hl.arange(-9223372036854775807, 9223372036854775807, 9223372036854775807).sum(dim=0)\nreturn out",
        "out = torch.zeros([1], dtype=torch.float32)\nfor g in hl.grid(1):\n    out[0:1] = hl.arange(0, 10, -9223372036854775807).sum(dim=0)\nreturn out",
        // int index at the extremes
        "out = torch.zeros([2, 128], dtype=torch.float32)\nfor g in hl.grid(1):\n    out[:, :] = x[-9223372036854775807, :, :]\nreturn out",
        // a huge allocation
        "out = torch.zeros([1000000, 1000000], dtype=torch.float32)\nreturn out",
        "out = torch.zeros([1], dtype=torch.float32)\nfor g in hl.grid(1):\n    z = hl.zeros([65536, 65536], dtype=torch.float32)\n    out[0] = 1.0\nreturn out",
    ];
    for body in bodies {
        let src = body_case(body);
        let case = parse(&src);
        let r = std::panic::catch_unwind(|| evaluate(&case));
        assert!(r.is_ok(), "panicked on\n{src}");
    }
    // and the first one is well-defined: one row of ones (each tile overwrites `out`)
    let o = eval(&body_case(bodies[0])).unwrap();
    assert!(o.outputs[0].tensor.values.iter().all(|&v| v == 1.0));
}

#[test]
fn the_work_budget_stops_a_long_evaluation_quickly() {
    // 1e5 iterations of a 2^14-element product: 1.6e9 elements of work, far over the budget.
    let src = body_case(
        r#"
        out = torch.zeros([1], dtype=torch.float32)
        for i in hl.grid(100000):
            big = hl.zeros([128, 128], dtype=torch.float32) * 2.0
            out[0] = 1.0
        return out
        "#,
    );
    let start = std::time::Instant::now();
    let e = expect(&src, K::Budget);
    assert!(e.message.contains("tensor elements"), "{e}");
    assert!(
        start.elapsed().as_secs() < 60,
        "the budget took {:?}",
        start.elapsed()
    );
}

#[test]
fn an_in_place_update_of_a_loaded_subscript_leaves_the_host_tensor_as_it_was() {
    // Helion 1.5.1 loads `x[0, :, :]` as a copy in its eager mode and its Pallas backend alike
    // (measured: `out` is 3 and `x` stays 1 under both), where eager torch would write
    // through the view and give 4.
    let src = body_case(
        r#"
        out = torch.zeros([2, 128], dtype=torch.float32)
        for g in hl.grid(1):
            state = x[0, :, :]
            state += 1.0
            out[:, :] = state + x[0, :, :]
        return out
        "#,
    );
    let o = eval(&src).unwrap();
    assert!(o.outputs[0].tensor.values.iter().all(|&v| v == 3.0));
}

#[test]
fn a_tile_into_a_dim_of_one_reads_row_zero_as_helion_does() {
    // `bias[tile_m, tile_n]` of a `[1, N]` bias: torch's slice `bias[64:128]` is empty and the
    // sum would raise; Helion 1.5.1 (eager mode and Pallas backend alike, measured) adds
    // `bias[0]` to every row.
    let src = script(
        "64, 128",
        "x: torch.Tensor, bias: torch.Tensor",
        r#"
        out = torch.empty_like(x)
        for tile_m, tile_n in hl.tile(x.size()):
            out[tile_m, tile_n] = x[tile_m, tile_n] + bias[tile_m, tile_n]
        return out
        "#,
        "x = torch.zeros(128, 256)\nbias = torch.arange(256, dtype=torch.float32).reshape(1, 256)",
        "x, bias",
    );
    let o = eval(&src).unwrap();
    let v = &o.outputs[0].tensor.values;
    assert_eq!(v.len(), 128 * 256);
    for row in [0, 64, 127] {
        assert_eq!(&v[row * 256..row * 256 + 3], &[0.0, 1.0, 2.0], "row {row}");
    }
}
