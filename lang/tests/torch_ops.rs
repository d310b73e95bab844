//! The torch ops of a kernel body (`lang::ir::ops`): each spelling parses to one op node, the
//! renderer writes a script that parses back to the same IR (operator precedence kept), and
//! what the ops do not model (an unknown keyword) is refused at file:line:col.

use pallas_diff_lang::frontend::parse_case;
use pallas_diff_lang::ir::{Case, ExprKind, ReduceKind, StmtKind, TensorOp};
use pallas_diff_lang::render::render_case;

fn script(body: &str) -> String {
    let body: String = body.lines().map(|l| format!("        {l}\n")).collect();
    format!(
        "import torch\nimport helion\nimport helion.language as hl\n\n\n\
         @helion.kernel(backend=\"pallas\", static_shapes=True, config=helion.Config(block_sizes=[8]))\n\
         def k(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n    out = torch.zeros_like(x)\n    \
         for t in hl.tile(x.size(0)):\n{body}    return out\n\n\n\
         x = torch.randn(16, 16)\ny = torch.randn(16, 16)\nk(x, y)\n"
    )
}

fn parse(src: &str) -> Case {
    parse_case(src, "case.py").unwrap_or_else(|e| panic!("{e}\n{src}"))
}

/// The value of the first assignment in the loop body.
fn first_value(case: &Case) -> ExprKind {
    let StmtKind::For(lp) = &case.kernel.body[1].kind else {
        panic!("no loop")
    };
    let StmtKind::Assign { value, .. } = &lp.body[0].kind else {
        panic!("no assignment")
    };
    value.kind.clone()
}

/// `body` in the loop is refused by the frontend with `needle`, at its line (10).
fn refused_at_line_10(body: &str, needle: &str) {
    let e = parse_case(&script(body), "case.py").expect_err(body);
    let msg = e.to_string();
    assert!(msg.contains(needle), "{body}: {msg}");
    assert!(msg.starts_with("case.py:10:"), "{msg}");
}

fn round_trips(body: &str) -> Case {
    let case = parse(&script(body));
    let rendered = render_case(&case);
    assert_eq!(
        parse(&rendered).without_spans(),
        case.without_spans(),
        "{rendered}"
    );
    case
}

#[test]
fn every_op_spelling_round_trips() {
    for body in [
        "v = torch.exp(x[t, :])\nout[t, :] = v",
        "v = x[t, :].exp()\nout[t, :] = v",
        "v = torch.relu(x[t, :]) + x[t, :].rsqrt()\nout[t, :] = v",
        "v = torch.maximum(x[t, :], y[t, :]) - torch.minimum(x[t, :], y[t, :])\nout[t, :] = v",
        "v = torch.where((x[t, :] > 0) & (y[t, :] <= 1.5) | (x[t, :] == y[t, :]), x[t, :], 0.0)\nout[t, :] = v",
        "v = (x[t, :] < y[t, :]).float() * (t.index % 3)[:, None]\nout[t, :] = v",
        "v = x[t, :].sum(dim=[0, 1], keepdim=True)\nout[t, :] = v",
        "v = torch.amax(x[t, :], 1, True)\nout[t, :] = v",
        "v = x[t, :].amin()\nout[t, :] = v",
        "v = x[t, :].transpose(0, 1)\nout[t, :] = v",
        "v = torch.matmul(x[t, :], y[:, :])\nout[t, :] = v",
        "v = torch.addmm(x[t, :], x[t, :], y[:, :])\nout[t, :] = v",
        "v = hl.dot(x[t, :], y[:, :], acc=x[t, :])\nout[t, :] = v",
        "v = hl.dot(x[t, :], y[:, :], None)\nout[t, :] = v",
        "v = torch.bmm(x[t, :][None, :, :], y[None, :, :])\nout[t, :] = v[0, :, :]",
        "v = torch.baddbmm(x[t, :][None, :, :], x[t, :][None, :, :], y[None, :, :])\nout[t, :] = v[0, :, :]",
    ] {
        round_trips(body);
    }
}

#[test]
fn spellings_map_to_one_node() {
    let case = round_trips("v = torch.sum(x[t, :], dim=(0, 1), keepdim=True)\nout[t, :] = v");
    assert!(matches!(
        first_value(&case),
        ExprKind::Op {
            op: TensorOp::Reduce {
                kind: ReduceKind::Sum,
                keepdim: true,
                ..
            },
            ..
        }
    ));
    // One int dim without keepdim is the version-1 `.sum` node.
    let case = round_trips("v = torch.sum(x[t, :], 1)\nout[t, 0] = v");
    assert!(matches!(first_value(&case), ExprKind::Sum { dim: 1, .. }));
    let case = round_trips("v = hl.dot(x[t, :], y[:, :], None)\nout[t, :] = v");
    assert!(
        matches!(first_value(&case), ExprKind::Op { op: TensorOp::Dot, ref args } if args.len() == 2)
    );
}

#[test]
fn unmodelled_keywords_and_arguments_are_refused_where_written() {
    for (body, needle) in [
        (
            "v = hl.dot(x[t, :], y[:, :], out_dtype=torch.float32)\nout[t, :] = v",
            "keyword `out_dtype` of hl.dot",
        ),
        (
            "v = torch.sum(x[t, :], dim=1, dtype=torch.float32)\nout[t, :] = v",
            "keyword `dtype` of torch.sum",
        ),
        (
            "v = torch.exp(x[t, :], y[t, :])\nout[t, :] = v",
            "torch.exp takes 1 operands, not 2",
        ),
        (
            "v = x[t, :].transpose(0)\nout[t, :] = v",
            ".transpose takes two int dims",
        ),
        (
            "v = hl.load(x, [t, 0], extra_mask=x[t, 0] > 0)\nout[t, 0] = v",
            "keyword `extra_mask` of hl.load",
        ),
    ] {
        refused_at_line_10(body, needle);
    }
    let host = "import torch\nimport helion\nimport helion.language as hl\n\n\n\
         @helion.kernel(backend=\"pallas\", static_shapes=True, config=helion.Config(block_sizes=[]))\n\
         def k(x: torch.Tensor) -> torch.Tensor:\n    m = x > 0\n    return x\n\n\nx = torch.randn(4)\nk(x)\n";
    let e = parse_case(host, "case.py").expect_err("host mask");
    assert!(e.to_string().contains("host code"), "{e}");
}

#[test]
fn float_functions_are_one_op_each_in_both_spellings() {
    use pallas_diff_lang::ir::UnaryFn;
    for f in UnaryFn::ALL {
        let name = f.name();
        let case = round_trips(&format!("v = torch.{name}(x[t, :])\nout[t, :] = v"));
        assert_eq!(
            first_value(&case),
            ExprKind::Op {
                op: TensorOp::Unary(f),
                args: match first_value(&case) {
                    ExprKind::Op { args, .. } => args,
                    other => panic!("{other:?}"),
                },
            }
        );
        let method = round_trips(&format!("v = x[t, :].{name}()\nout[t, :] = v"));
        assert_eq!(method.without_spans(), case.without_spans(), "{name}");
    }
    let e = parse_case(
        &script("v = torch.sigmoid(x[t, :], out=y)\nout[t, :] = v"),
        "case.py",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("case.py:") && e.contains("keyword `out`"), "{e}");
}

#[test]
fn torch_add_with_alpha_is_the_arithmetic_it_stands_for() {
    let a = parse(&script(
        "v = torch.add(x[t, :], y[t, :], alpha=2)\nout[t, :] = v",
    ));
    let b = parse(&script("v = x[t, :] + y[t, :] * 2\nout[t, :] = v"));
    assert_eq!(a.without_spans(), b.without_spans());
    let s = parse(&script("v = torch.sub(x[t, :], y[t, :])\nout[t, :] = v"));
    let d = parse(&script("v = x[t, :] - y[t, :]\nout[t, :] = v"));
    assert_eq!(s.without_spans(), d.without_spans());
    let e = parse_case(
        &script("v = torch.add(x[t, :], y[t, :], out=y)\nout[t, :] = v"),
        "case.py",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("keyword `out` of torch.add"), "{e}");
}

#[test]
fn dot_t_is_a_transpose_of_a_value_of_known_rank_two() {
    let a = parse(&script("v = x[t, :].T\nout[t, :] = v"));
    let b = parse(&script("v = x[t, :].transpose(0, 1)\nout[t, :] = v"));
    assert_eq!(a.without_spans(), b.without_spans());
    for (body, fragment) in [
        ("v = x[t, 0].T\nout[t, 0] = v", "rank-1"),
        ("v = (x[t, :] + 1.0).T\nout[t, :] = v", "known statically"),
    ] {
        let e = parse_case(&script(body), "case.py").unwrap_err();
        assert!(
            e.to_string().contains("case.py:") && e.to_string().contains(fragment),
            "{body}: {e}"
        );
    }
}

#[test]
fn constant_pad_and_non_finite_floats_round_trip() {
    for body in [
        "v = torch.nn.functional.pad(x[t, :], (0, 8), value=float(\"-inf\"))\nout[t, :] = v[:, 0:16]",
        "v = torch.nn.functional.pad(x[t, :], [1, 2, 0, 3])\nout[t, :] = v[0:8, 1:17]",
        "v = torch.nn.functional.pad(x[t, :], (2,), \"constant\", 1.5)\nout[t, :] = v[:, 0:16]",
        "v = hl.full([t, 16], float(\"inf\"), dtype=torch.float32)\nout[t, :] = torch.minimum(v, -float('inf') + x[t, :])",
    ] {
        let case = round_trips(body);
        let json = serde_json::to_string(&case).unwrap();
        let back: Case = serde_json::from_str(&json).unwrap();
        // NaN != NaN: compare the JSON forms.
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
    }
    // NaN is not equal to itself: its case is compared as rendered text and JSON.
    let nan = parse(&script(
        "v = hl.full([t, 16], float(\"nan\"), dtype=torch.float32)\nout[t, :] = v",
    ));
    let rendered = render_case(&nan);
    assert!(rendered.contains("float(\"nan\")"), "{rendered}");
    assert_eq!(
        serde_json::to_string(&parse(&rendered).without_spans()).unwrap(),
        serde_json::to_string(&nan.without_spans()).unwrap()
    );
    let case = round_trips(
        "v = torch.nn.functional.pad(x[t, :], (0, 8), mode=\"constant\", value=None)\nout[t, :] = v[:, 0:16]",
    );
    let ExprKind::Op { op, args } = first_value(&case) else {
        panic!("not an op")
    };
    assert_eq!(op, TensorOp::Pad(vec![0, 8]));
    assert_eq!(args[1].kind, ExprKind::Int(0));
    let rendered = render_case(&case);
    assert!(
        rendered.contains("torch.nn.functional.pad(x[t, :], (0, 8), value=0)"),
        "{rendered}"
    );
}

#[test]
fn pads_a_case_does_not_model_are_refused_where_written() {
    for (body, needle) in [
        (
            "v = torch.nn.functional.pad(x[t, :], (0, 8), mode=\"reflect\")\nout[t, :] = v[:, 0:16]",
            "only mode=\"constant\"",
        ),
        (
            "v = torch.nn.functional.pad(x[t, :], (0, t.begin))\nout[t, :] = v[:, 0:16]",
            "a tuple of int literals",
        ),
        (
            "v = torch.nn.functional.pad(x[t, :], (0, -1))\nout[t, :] = v[:, 0:15]",
            "negative pad",
        ),
        (
            "v = hl.full([t, 16], float(x.size(0)), dtype=torch.float32)\nout[t, :] = v",
            "one string literal",
        ),
        (
            "v = hl.full([t, 16], float(\"big\"), dtype=torch.float32)\nout[t, :] = v",
            "not a float Python reads",
        ),
        (
            "v = hl.full([t, 16], 1e999, dtype=torch.float32)\nout[t, :] = v",
            "overflows to inf",
        ),
    ] {
        refused_at_line_10(body, needle);
    }
    // What torch itself refuses when Helion traces the kernel is a type error (a `rejected`
    // verdict), at the call.
    for (body, needle) in [
        (
            "v = torch.nn.functional.pad(x[t, :], (0, 1, 0, 1, 0, 1))\nout[t, :] = v[0:8, 0:16]",
            "6 pads for a tensor of rank 2",
        ),
        (
            "v = torch.nn.functional.pad(x[t, :], (0, 8), value=x[t, 0])\nout[t, :] = v[:, 0:16]",
            "the fill value is a Python number",
        ),
    ] {
        let e = pallas_diff_lang::ir::types::infer(&parse(&script(body))).expect_err(body);
        assert!(e.to_string().contains(needle), "{body}: {e}");
        assert!(e.to_string().contains("10:13"), "{e}");
    }
}
