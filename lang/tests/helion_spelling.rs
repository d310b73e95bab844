//! Case-script version 2: kernels spelled as Helion's own tests spell them. Each construct is
//! desugared by the frontend into the IR of its canonical spelling, so a script in Helion's
//! spelling parses to the same IR as the same script written canonically, and renders back
//! canonically; what the frontend does not model is refused at file:line:col.

use pallas_diff_lang::frontend::{FrontendError, parse_case};
use pallas_diff_lang::ir::{Case, CmpOp, ExprKind, StmtKind, TensorOp};
use pallas_diff_lang::render::render_case;

const HEAD: &str = "import torch\nimport helion\nimport helion.language as hl\n\n\n";

/// A script with the kernel `body` (indented four spaces already) over `params`, config
/// `config`, and `inputs` (module-level lines) passed in the order of `args`.
fn script(params: &str, config: &str, body: &str, inputs: &str, args: &str) -> String {
    format!(
        "{HEAD}@helion.kernel(backend=\"pallas\", static_shapes=True, config=helion.Config({config}))\ndef k({params}):\n{body}\n\n{inputs}\nk({args})\n"
    )
}

fn parse(src: &str) -> Case {
    parse_case(src, "case.py").unwrap_or_else(|e| panic!("{e}\n{src}"))
}

fn refuse(src: &str) -> FrontendError {
    match parse_case(src, "case.py") {
        Ok(_) => panic!("parsed, expected a refusal:\n{src}"),
        Err(e) => e,
    }
}

/// `helion` parses to the same span-stripped IR as `canonical`, renders as `canonical`
/// renders, and the rendering parses back to the same IR.
fn same_as(helion: &str, canonical: &str) {
    let a = parse(helion).without_spans();
    let b = parse(canonical).without_spans();
    assert_eq!(
        a, b,
        "\n--- helion spelling:\n{helion}\n--- canonical:\n{canonical}"
    );
    let rendered = render_case(&a);
    assert_eq!(rendered, render_case(&b));
    assert_eq!(parse(&rendered).without_spans(), a, "{rendered}");
}

const X: &str = "x = torch.randn(16, 256, dtype=torch.bfloat16)";

#[test]
fn a_tensors_dtype_is_its_static_dtype() {
    let body = |d: &str, o: &str| {
        format!(
            "    out = torch.empty_like(x, dtype={o})\n    for t in hl.tile(x.size(0)):\n        acc = x[t, :].to({d})\n        out[t, :] = acc.to(out.dtype)\n    return out"
        )
    };
    same_as(
        &script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            &body("torch.float32", "x.dtype"),
            X,
            "x",
        ),
        &script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            &body("torch.float32", "torch.bfloat16").replace("out.dtype", "torch.bfloat16"),
            X,
            "x",
        ),
    );
    // A local's dtype: a load has its tensor's dtype, hl.zeros its own, a cast its target.
    let local = |acc: &str, blk: &str| {
        format!(
            "    out = torch.zeros([16, 256], dtype=torch.float32)\n    for t in hl.tile(x.size(0)):\n        blk = x[t, :]\n        acc = hl.zeros([t, 256], dtype=torch.float32)\n        acc = acc + blk.to({acc})\n        out[t, :] = acc.to({blk})\n    return out"
        )
    };
    same_as(
        &script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            &local("acc.dtype", "blk.dtype"),
            X,
            "x",
        ),
        &script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            &local("torch.float32", "torch.bfloat16"),
            X,
            "x",
        ),
    );
    // A parameter's dtype follows its input through the input's own chain (`.to`).
    let chained = "x = torch.randn(16, 256).to(torch.bfloat16)";
    same_as(
        &script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            &body("x.dtype", "x.dtype"),
            chained,
            "x",
        ),
        &script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            &body("torch.bfloat16", "torch.bfloat16").replace("out.dtype", "torch.bfloat16"),
            chained,
            "x",
        ),
    );
}

#[test]
fn an_unknown_dtype_is_refused_where_it_is_asked() {
    // Mixed arithmetic (bfloat16 + a float scalar) is not claimed: refused, not guessed.
    let src = script(
        "x: torch.Tensor",
        "block_sizes=[8]",
        "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        v = x[t, :] * 2.0\n        out[t, :] = v.to(v.dtype)\n    return out",
        X,
        "x",
    );
    let e = refuse(&src);
    assert_eq!(
        (e.span.line, e.span.col, e.construct.as_str()),
        (11, 26, ".dtype"),
        "{e}"
    );
    // An int has no dtype.
    let src = script(
        "x: torch.Tensor, n: int",
        "block_sizes=[8]",
        "    out = torch.empty_like(x, dtype=n.dtype)\n    for t in hl.tile(x.size(0)):\n        out[t, :] = x[t, :]\n    return out",
        X,
        "x, 3",
    );
    let e = refuse(&src);
    assert_eq!((e.span.line, e.span.col), (8, 37), "{e}");
    assert!(
        e.to_string()
            .starts_with("case.py:8:37: `n` is not a tensor"),
        "{e}"
    );
}

#[test]
fn sizes_unpack_index_and_list() {
    let helion = script(
        "x: torch.Tensor",
        "block_sizes=[8, 128, 8]",
        "    m, n = x.size()\n    rows, cols = x.shape\n    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)\n    acc = torch.zeros([x.shape[0], *x.shape[1:]], dtype=torch.float32, device=x.device)\n    for tm, tn in hl.tile(out.size()):\n        out[tm, tn] = x[tm, tn] + acc[tm, tn].to(out.dtype)\n    for tr in hl.tile(x.size()[0]):\n        out[tr, :] = x[tr, :]\n    return out",
        X,
        "x",
    );
    let canonical = script(
        "x: torch.Tensor",
        "block_sizes=[8, 128, 8]",
        "    m = x.size(0)\n    n = x.size(1)\n    rows = x.size(0)\n    cols = x.size(1)\n    out = torch.empty([x.size(0), x.size(1)], dtype=torch.bfloat16)\n    acc = torch.zeros([x.size(0), x.size(1)], dtype=torch.float32)\n    for tm, tn in hl.tile([out.size(0), out.size(1)]):\n        out[tm, tn] = x[tm, tn] + acc[tm, tn].to(torch.bfloat16)\n    for tr in hl.tile(x.size(0)):\n        out[tr, :] = x[tr, :]\n    return out",
        X,
        "x",
    );
    same_as(&helion, &canonical);
    // Tuple bounds are the list form; a tuple of values unpacks one name per value.
    same_as(
        &script(
            "x: torch.Tensor",
            "block_sizes=[8, 128]",
            "    m, n = x.size(0), x.size(1)\n    out = torch.empty_like(x)\n    for tm, tn in hl.tile((m, n)):\n        out[tm, tn] = x[tm, tn]\n    return out",
            X,
            "x",
        ),
        &script(
            "x: torch.Tensor",
            "block_sizes=[8, 128]",
            "    m = x.size(0)\n    n = x.size(1)\n    out = torch.empty_like(x)\n    for tm, tn in hl.tile([m, n]):\n        out[tm, tn] = x[tm, tn]\n    return out",
            X,
            "x",
        ),
    );
}

#[test]
fn size_constructs_that_do_not_fit_are_refused_at_their_position() {
    let with = |line: &str| {
        script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            &format!(
                "{line}\n    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        out[t, :] = x[t, :]\n    return out"
            ),
            X,
            "x",
        )
    };
    let cases: [(&str, u32, u32, &str); 6] = [
        // Python would raise ValueError: three names for two sizes.
        ("    a, b, c = x.size()", 8, 5, "tuple assignment"),
        // The right reads a name the left assigns: sequential assignment would differ.
        ("    a = 1\n    a, b = 2, a", 9, 15, "tuple assignment"),
        ("    s = x.shape", 8, 9, ".shape"),
        ("    s = x.size()", 8, 9, ".size"),
        ("    s = x.shape[0:1]", 8, 17, "size index"),
        ("    a, *b = x.shape", 8, 8, "tuple assignment"),
    ];
    for (line, l, c, construct) in cases {
        let e = refuse(&with(line));
        assert_eq!(
            (e.span.line, e.span.col, e.construct.as_str()),
            (l, c, construct),
            "{line}: {e}"
        );
    }
    // The rank of a load is not known to the frontend: its size list is refused.
    let src = script(
        "x: torch.Tensor",
        "block_sizes=[8]",
        "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        blk = x[t, :]\n        a, b = blk.size()\n        out[t, :] = blk\n    return out",
        X,
        "x",
    );
    let e = refuse(&src);
    assert_eq!(
        (e.span.line, e.span.col, e.construct.as_str()),
        (11, 16, "a list of sizes"),
        "{e}"
    );
}

#[test]
fn device_is_accepted_only_as_a_tensors_device() {
    let body = |dev: &str| {
        format!(
            "    out = torch.zeros([16, 256], dtype=torch.float32{dev})\n    for t in hl.tile(x.size(0)):\n        out[t, :] = x[t, :].float()\n    return out"
        )
    };
    same_as(
        &script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            &body(", device=x.device"),
            X,
            "x",
        ),
        &script("x: torch.Tensor", "block_sizes=[8]", &body(""), X, "x"),
    );
    for (dev, col) in [
        (", device=\"cpu\"", 62),
        (", device=DEVICE", 62),
        (", device=n.device", 62),
    ] {
        let src = script(
            "x: torch.Tensor, n: int",
            "block_sizes=[8]",
            &body(dev),
            X,
            "x, 2",
        );
        let e = refuse(&src);
        assert_eq!((e.span.line, e.span.col), (8, col), "{dev}: {e}");
        assert!(
            e.construct == "device" || e.construct == "name",
            "{dev}: {e}"
        );
    }
    // hl.zeros has no device.
    let src = script(
        "x: torch.Tensor",
        "block_sizes=[8]",
        "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        out[t, :] = hl.zeros([t, 256], dtype=torch.bfloat16, device=x.device)\n    return out",
        X,
        "x",
    );
    let e = refuse(&src);
    assert_eq!(
        (e.span.line, e.span.col, e.construct.as_str()),
        (10, 62, "device"),
        "{e}"
    );
}

#[test]
fn keywords_that_are_not_modelled_are_refused_not_dropped() {
    let with = |stmt: &str| {
        script(
            "x: torch.Tensor, m: torch.Tensor",
            "block_sizes=[8]",
            &format!(
                "    out = torch.zeros_like(x)\n    for t in hl.tile(x.size(0)):\n{stmt}\n    return out"
            ),
            "x = torch.randn(16, 256)\nm = torch.ones(16, 256)",
            "x, m",
        )
    };
    let cases = [
        (
            "        out[t, :] = hl.load(x, [t, slice(None)], extra_mask=m[t, :] > 0)",
            10,
            50,
            "extra_mask",
        ),
        (
            "        out[t, :] = hl.load(x, [t, slice(None)], eviction_policy=\"evict_last\")",
            10,
            50,
            "eviction_policy",
        ),
        (
            "        hl.store(out, [t, slice(None)], x[t, :], extra_mask=m[t, :] > 0)",
            10,
            50,
            "extra_mask",
        ),
        (
            "        hl.atomic_add(out, [t, slice(None)], x[t, :], sem=\"relaxed\")",
            10,
            55,
            "sem",
        ),
    ];
    for (stmt, l, c, construct) in cases {
        let e = refuse(&with(stmt));
        assert_eq!(
            (e.span.line, e.span.col, e.construct.as_str()),
            (l, c, construct),
            "{stmt}: {e}"
        );
    }
}

#[test]
fn an_input_a_device_loop_assigns_is_refused_and_renamed_by_the_renderer() {
    // `acc` is an input (a module global); the kernel assigns `acc` first inside a device loop:
    // Helion 1.5.1 raises CannotModifyHostVariableOnDevice running this file.
    let body = "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        acc = x[t, :] + 1.0\n        out[t, :] = acc\n    return out";
    let src = script(
        "x: torch.Tensor, y: torch.Tensor",
        "block_sizes=[8]",
        body,
        "x = torch.randn(16, 256)\nacc = torch.randn(16, 256)",
        "x, acc",
    );
    let e = refuse(&src);
    assert_eq!(
        (e.span.line, e.span.col, e.construct.as_str()),
        (10, 9, "assignment"),
        "{e}"
    );
    assert!(
        e.message.contains("CannotModifyHostVariableOnDevice"),
        "{e}"
    );
    // The same case with the input named apart parses; renamed back to `acc` in the IR (as a
    // JSON case or a generated one may name it), the renderer names it apart again.
    let ok = src
        .replace("acc = torch.randn", "acc_in = torch.randn")
        .replace("k(x, acc)", "k(x, acc_in)");
    let mut case = parse(&ok);
    case.inputs[1].name = "acc".into();
    case.call.args[1] = pallas_diff_lang::ir::Arg::Input("acc".into());
    let rendered = render_case(&case);
    assert!(
        rendered.contains("acc_input = torch.randn(16, 256)\nk(x, acc_input)\n"),
        "{rendered}"
    );
    let back = parse(&rendered);
    assert_eq!(back.without_spans().kernel, case.without_spans().kernel);
    // A parameter of that name shadows the global: no refusal, no renaming.
    let shadowed = script(
        "x: torch.Tensor, acc: torch.Tensor",
        "block_sizes=[8]",
        "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        out[t, :] = x[t, :] + acc[t, :]\n    return out",
        "x = torch.randn(16, 256)\nacc = torch.randn(16, 256)",
        "x, acc",
    );
    assert_eq!(
        render_case(&parse(&shadowed)),
        render_case(&parse(&render_case(&parse(&shadowed))))
    );
    assert!(render_case(&parse(&shadowed)).contains("\nacc = torch.randn"));
}

#[test]
fn specialize_is_the_value_under_static_shapes() {
    let body = |n: &str| {
        format!(
            "    n = {n}\n    out = torch.empty_like(x)\n    for t in hl.tile(n):\n        out[t, :] = x[t, :]\n    return out"
        )
    };
    same_as(
        &script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            &body("hl.specialize(x.size(0))"),
            X,
            "x",
        ),
        &script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            &body("x.size(0)"),
            X,
            "x",
        ),
    );
    // Of a tensor, or inside a device loop: refused.
    let e = refuse(&script(
        "x: torch.Tensor",
        "block_sizes=[8]",
        &body("hl.specialize(x)"),
        X,
        "x",
    ));
    assert_eq!(
        (e.span.line, e.span.col, e.construct.as_str()),
        (8, 23, "hl.specialize"),
        "{e}"
    );
    let e = refuse(&script(
        "x: torch.Tensor",
        "block_sizes=[8]",
        "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        n = hl.specialize(x.size(1))\n        out[t, :] = x[t, :]\n    return out",
        X,
        "x",
    ));
    assert_eq!(
        (e.span.line, e.span.col, e.construct.as_str()),
        (10, 13, "hl.specialize"),
        "{e}"
    );
}

#[test]
fn host_asserts_are_decided_on_the_inputs() {
    let body = |cond: &str| {
        format!(
            "    m, n = x.size()\n    assert {cond}\n    out = torch.empty_like(x)\n    for t in hl.tile(m):\n        out[t, :] = x[t, :]\n    return out"
        )
    };
    let without = script(
        "x: torch.Tensor",
        "block_sizes=[8]",
        "    m, n = x.size()\n    out = torch.empty_like(x)\n    for t in hl.tile(m):\n        out[t, :] = x[t, :]\n    return out",
        X,
        "x",
    );
    // Holds: does nothing, so it is not in the IR.
    for holds in ["m == 16 and n == 256", "m * 16 == n == x.size(1)", "m < n"] {
        same_as(
            &script("x: torch.Tensor", "block_sizes=[8]", &body(holds), X, "x"),
            &without,
        );
    }
    // Fails on these inputs, or is not a comparison of host ints: refused at the assert.
    for (cond, fragment) in [
        ("m == n", "fails on the inputs (16 == 256 is false)"),
        (
            "m == 16 and n == 255",
            "fails on the inputs (256 == 255 is false)",
        ),
        ("m", "a comparison of host ints"),
        ("x.size(0) == x", "compares host ints"),
    ] {
        let e = refuse(&script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            &body(cond),
            X,
            "x",
        ));
        assert_eq!(
            (e.span.line, e.span.col),
            (9, if cond == "m" { 12 } else { 5 }),
            "{cond}: {e}"
        );
        assert!(e.message.contains(fragment), "{cond}: {e}");
    }
}

#[test]
fn an_unannotated_parameter_takes_its_kind_from_the_call() {
    let body = "    out = torch.empty_like(x)\n    for t in hl.tile(n):\n        out[t, :] = x[t, :]\n    return out";
    same_as(
        &script("x, n", "block_sizes=[8]", body, X, "x, 16"),
        &script(
            "x: torch.Tensor, n: int",
            "block_sizes=[8]",
            body,
            X,
            "x, 16",
        ),
    );
    // Other annotations stay refused (`float` is a float parameter, which takes a float
    // literal: `float_parameters_take_float_literals_and_render_annotated`).
    let e = refuse(&script(
        "x: torch.Tensor, n: str",
        "block_sizes=[8]",
        body,
        X,
        "x, 16",
    ));
    assert_eq!(
        (e.span.line, e.span.col, e.construct.as_str()),
        (7, 24, "parameter"),
        "{e}"
    );
}

#[test]
fn module_level_keywords_are_refused_not_dropped() {
    let body = "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        out[t, :] = x[t, :]\n    return out";
    for (inputs, line, col, construct) in [
        (
            "torch.manual_seed(0, generator=None)\nx = torch.randn(16, 256)",
            13,
            22,
            "generator",
        ),
        (
            "x = torch.randn(16, 256).to(torch.bfloat16, non_blocking=True)",
            13,
            45,
            "non_blocking",
        ),
        (
            "x = torch.randn(4096).reshape(16, 256, out=None)",
            13,
            40,
            "out",
        ),
    ] {
        let e = refuse(&script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            body,
            inputs,
            "x",
        ));
        assert_eq!(
            (e.span.line, e.span.col, e.construct.as_str()),
            (line, col, construct),
            "{inputs}: {e}"
        );
    }
}

#[test]
fn a_comparison_as_a_value_is_a_mask() {
    // `x < y` of tensors is a boolean mask in torch: the op node `Cmp` (`lang::ir::ops`), not
    // the IR's `if` comparison; outside the device loops it is host code, refused.
    let src = script(
        "x: torch.Tensor",
        "block_sizes=[8]",
        "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        out[t, :] = (x[t, :] < 0.0).to(torch.bfloat16)\n    return out",
        X,
        "x",
    );
    let case = parse(&src);
    let StmtKind::For(lp) = &case.kernel.body[1].kind else {
        panic!("no loop")
    };
    let StmtKind::Store { value, .. } = &lp.body[0].kind else {
        panic!("no store")
    };
    let ExprKind::Cast { value, .. } = &value.kind else {
        panic!("no cast")
    };
    assert!(matches!(
        value.kind,
        ExprKind::Op {
            op: TensorOp::Cmp(CmpOp::Lt),
            ..
        }
    ));
    let host = script(
        "x: torch.Tensor",
        "block_sizes=[]",
        "    m = x < 0.0\n    return x",
        X,
        "x",
    );
    let e = refuse(&host);
    assert_eq!((e.span.line, e.span.col), (8, 9), "{e}");
    // As an `if` condition it stays what it was.
    parse(&script(
        "x: torch.Tensor",
        "block_sizes=[8]",
        "    out = torch.zeros_like(x)\n    for t in hl.tile(x.size(0)):\n        live = t.end - t.begin\n        if live >= 3:\n            out[t, :] = x[t, :]\n    return out",
        X,
        "x",
    ));
}

/// A script with decorator keywords `deco` (a whole `@helion.kernel(...)` argument list).
fn script_deco(deco: &str, body: &str) -> String {
    format!("{HEAD}@helion.kernel({deco})\ndef k(x: torch.Tensor):\n{body}\n\n\n{X}\nk(x)\n")
}

const COPY: &str = "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        out[t, :] = x[t, :]\n    return out";

#[test]
fn defaults_of_the_decorator_and_the_config_read_as_absent() {
    let canonical = script_deco(
        "backend=\"pallas\", static_shapes=True, config=helion.Config(block_sizes=[])",
        &COPY.replace("hl.tile(x.size(0))", "hl.tile(x.size(0), block_size=8)"),
    );
    for deco in [
        // backend from HELION_BACKEND, static_shapes=True Helion 1.5.1's default, no block sizes
        // when every tile has block_size=, pallas_load_buffer_count=None its default.
        "config=helion.Config()",
        "backend=\"pallas\", config=helion.Config(block_sizes=[], pallas_load_buffer_count=None)",
    ] {
        same_as(
            &script_deco(
                deco,
                &COPY.replace("hl.tile(x.size(0))", "hl.tile(x.size(0), block_size=8)"),
            ),
            &canonical,
        );
    }
    // Without block_sizes, a tile that needs one is refused (Helion would pick a default).
    let e = refuse(&script_deco("config=helion.Config()", COPY));
    assert_eq!(e.construct, "block_sizes", "{e}");
}

#[test]
fn kept_keys_render_back_and_the_model_names_the_ones_it_cannot_honour() {
    let src = script_deco(
        "backend=\"pallas\", static_shapes=False, print_output_code=True, ignore_warnings=[helion.exc.TensorOperationInWrapper], config=helion.Config(block_sizes=[8], pallas_pre_broadcast=True)",
        COPY,
    );
    let case = parse(&src);
    let keys = |l: &[pallas_diff_lang::ir::settings::Setting]| {
        l.iter().map(|s| s.key.clone()).collect::<Vec<_>>()
    };
    assert_eq!(keys(&case.config.extra), ["pallas_pre_broadcast"]);
    assert_eq!(
        keys(&case.config.settings),
        ["static_shapes", "print_output_code", "ignore_warnings"]
    );
    let rendered = render_case(&case);
    assert!(
        rendered.contains("    static_shapes=False,\n"),
        "{rendered}"
    );
    assert!(!rendered.contains("static_shapes=True"), "{rendered}");
    assert!(
        rendered.contains("ignore_warnings=[helion.exc.TensorOperationInWrapper],"),
        "{rendered}"
    );
    assert!(
        rendered.contains("pallas_pre_broadcast=True)"),
        "{rendered}"
    );
    assert_eq!(parse(&rendered).without_spans(), case.without_spans());
    assert!(
        case.config
            .unmodelled()
            .is_some_and(|w| w.starts_with("static_shapes=False"))
    );
    // The JSON form keeps them; a case without them has the JSON it always had.
    let json = serde_json::to_string(&case).unwrap();
    assert!(json.contains("pallas_pre_broadcast"), "{json}");
    let plain = parse(&script_deco(
        "backend=\"pallas\", static_shapes=True, config=helion.Config(block_sizes=[8])",
        COPY,
    ));
    let plain_json = serde_json::to_string(&plain).unwrap();
    assert!(!plain_json.contains("extra") && !plain_json.contains("settings"));
    // Keys neither modelled nor kept, and kept keys with values of the wrong kind, are refused
    // at their position.
    for (deco, line, col, construct) in [
        (
            "dot_precision=\"ieee\", config=helion.Config(block_sizes=[8])",
            6,
            16,
            "dot_precision",
        ),
        (
            "config=helion.Config(block_sizes=[8], num_warps=4)",
            6,
            54,
            "num_warps",
        ),
        (
            "config=helion.Config(block_sizes=[8], pallas_pre_broadcast=1)",
            6,
            54,
            "pallas_pre_broadcast",
        ),
        (
            "ignore_warnings=[os.system], config=helion.Config(block_sizes=[8])",
            6,
            16,
            "ignore_warnings",
        ),
    ] {
        let e = refuse(&script_deco(deco, COPY));
        assert_eq!(
            (e.span.line, e.span.col, e.construct.as_str()),
            (line, col, construct),
            "{deco}: {e}"
        );
    }
}

#[test]
fn register_block_size_reads_as_its_config_entry() {
    // The registered id is the second config-driven one (after `t`'s): its entry (32) leaves
    // block_sizes and the call reads as that int.
    let helion = script(
        "x: torch.Tensor",
        "block_sizes=[8, 32]",
        "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        out[t, 0] = x[t, 0]\n    bn = hl.register_block_size(x.size(1))\n    for u in hl.tile(x.size(1), block_size=bn):\n        out[0, u] = x[0, u]\n    return out",
        X,
        "x",
    );
    let canonical = script(
        "x: torch.Tensor",
        "block_sizes=[8]",
        "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        out[t, 0] = x[t, 0]\n    bn = 32\n    for u in hl.tile(x.size(1), block_size=bn):\n        out[0, u] = x[0, u]\n    return out",
        X,
        "x",
    );
    same_as(&helion, &canonical);
    // More registrations than block_sizes entries: refused at the call.
    let e = refuse(&helion.replace("block_sizes=[8, 32]", "block_sizes=[8]"));
    assert_eq!(
        (e.span.line, e.construct.as_str()),
        (11, "hl.register_block_size"),
        "{e}"
    );
}

#[test]
fn one_variable_over_a_multi_dim_tile_is_the_tuple_of_its_tiles() {
    let helion = script(
        "x: torch.Tensor",
        "block_sizes=[8, 128]",
        "    out = torch.empty_like(x)\n    for tile in hl.tile(x.size()):\n        out[tile] = x[tile] + x[tile[0], tile[1]]\n    return out",
        X,
        "x",
    );
    let canonical = script(
        "x: torch.Tensor",
        "block_sizes=[8, 128]",
        "    out = torch.empty_like(x)\n    for tile_0, tile_1 in hl.tile([x.size(0), x.size(1)]):\n        out[tile_0, tile_1] = x[tile_0, tile_1] + x[tile_0, tile_1]\n    return out",
        X,
        "x",
    );
    same_as(&helion, &canonical);
    let e = refuse(&helion.replace("x[tile[0], tile[1]]", "tile.begin"));
    assert_eq!(e.construct, ".begin", "{e}");
}

#[test]
fn new_empty_and_new_zeros_take_the_tensors_dtype() {
    let helion = script(
        "x: torch.Tensor",
        "block_sizes=[8]",
        "    out = x.new_empty([16, 256])\n    for t in hl.tile(x.size(0)):\n        acc = x.new_zeros([t, 256], dtype=torch.float32)\n        out[t, :] = (acc + x[t, :]).to(torch.bfloat16)\n    return out",
        X,
        "x",
    );
    let canonical = script(
        "x: torch.Tensor",
        "block_sizes=[8]",
        "    out = torch.empty([16, 256], dtype=torch.bfloat16)\n    for t in hl.tile(x.size(0)):\n        acc = hl.zeros([t, 256], dtype=torch.float32)\n        out[t, :] = (acc + x[t, :]).to(torch.bfloat16)\n    return out",
        X,
        "x",
    );
    same_as(&helion, &canonical);
}

#[test]
fn device_from_helions_testing_module_is_dropped_like_a_tensors_device() {
    let helion = script(
        "x: torch.Tensor",
        "block_sizes=[8]",
        "    out = torch.empty([16, 256], dtype=torch.bfloat16, device=DEVICE)\n    for t in hl.tile(x.size(0)):\n        out[t, :] = x[t, :]\n    return out",
        X,
        "x",
    )
    .replace(
        "import helion.language as hl\n",
        "import helion.language as hl\nfrom helion._testing import DEVICE\n",
    );
    let canonical = script(
        "x: torch.Tensor",
        "block_sizes=[8]",
        "    out = torch.empty([16, 256], dtype=torch.bfloat16)\n    for t in hl.tile(x.size(0)):\n        out[t, :] = x[t, :]\n    return out",
        X,
        "x",
    );
    same_as(&helion, &canonical);
    // Without the import, DEVICE is not defined when the script runs.
    let e = refuse(&helion.replace("from helion._testing import DEVICE\n", ""));
    assert_eq!(e.construct, "device", "{e}");
}

#[test]
fn an_inputs_device_is_dropped_in_the_forms_helions_tests_write() {
    let params = "x: torch.Tensor, y: torch.Tensor";
    let body = "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        out[t, :] = x[t, :] + y[t, :]\n    return out";
    let inputs = |dx: &str, dy: &str| {
        format!(
            "x = torch.randn(16, 256, dtype=torch.bfloat16{dx})\ny = torch.ones(16, 256{dy}, dtype=torch.bfloat16)"
        )
    };
    let imported = |src: String| {
        src.replace(
            "import helion.language as hl\n",
            "import helion.language as hl\nfrom helion._testing import DEVICE\n",
        )
    };
    let canonical = script(params, "block_sizes=[8]", body, &inputs("", ""), "x, y");
    for (dx, dy) in [
        (", device=DEVICE", ", device=DEVICE"),
        (", device=\"cuda\"", ", device=x.device"),
        (", device=\"cpu\"", ", device=\"cuda:0\""),
        ("", ", device=\"tpu\""),
    ] {
        let helion = imported(script(
            params,
            "block_sizes=[8]",
            body,
            &inputs(dx, dy),
            "x, y",
        ));
        same_as(&helion, &canonical);
    }
    // Each is refused at the keyword's value, naming the forms it takes: DEVICE never
    // imported, a later input's device, a string that is no device.
    for (src, line, col) in [
        (
            script(
                params,
                "block_sizes=[8]",
                body,
                &inputs(", device=DEVICE", ""),
                "x, y",
            ),
            13,
            55,
        ),
        (
            imported(script(
                params,
                "block_sizes=[8]",
                body,
                &inputs(", device=y.device", ""),
                "x, y",
            )),
            14,
            55,
        ),
        (
            imported(script(
                params,
                "block_sizes=[8]",
                body,
                &inputs("", ", device=\"gpu\""),
                "x, y",
            )),
            15,
            32,
        ),
    ] {
        let e = refuse(&src);
        assert_eq!(e.construct, "device", "{e}");
        assert_eq!((e.span.line, e.span.col), (line, col), "{e}\n{src}");
        assert!(
            e.message.contains("from helion._testing import DEVICE"),
            "{e}"
        );
    }
}

#[test]
fn a_kernel_that_returns_nothing_outputs_what_it_wrote() {
    let case = parse(&script(
        "x: torch.Tensor, y: torch.Tensor, n: int",
        "block_sizes=[8]",
        "    for t in hl.tile(x.size(0)):\n        y[t, :] = x[t, :] + n",
        &format!("{X}\ny = torch.zeros(16, 256, dtype=torch.bfloat16)"),
        "x, y, 3",
    ));
    assert!(!case.kernel.returns_values());
    assert_eq!(case.kernel.written_params(), [1]);
    // A kernel that returns values outputs those.
    let case = parse(&script("x: torch.Tensor", "block_sizes=[8]", COPY, X, "x"));
    assert!(case.kernel.written_params().is_empty());
}

#[test]
fn promote_types_of_two_dtypes_is_torchs_promotion() {
    let body = |d: &str| {
        format!(
            "    out = torch.empty([x.size(0)], dtype={d}, device=x.device)\n    for t in hl.tile(x.size(0)):\n        out[t] = x[t, 0]\n    return out"
        )
    };
    let inputs =
        "x = torch.randn(16, 256, dtype=torch.bfloat16)\ny = torch.randn(4, dtype=torch.float32)";
    same_as(
        &script(
            "x: torch.Tensor, y: torch.Tensor",
            "block_sizes=[8]",
            &body("torch.promote_types(x.dtype, y.dtype)"),
            inputs,
            "x, y",
        ),
        &script(
            "x: torch.Tensor, y: torch.Tensor",
            "block_sizes=[8]",
            &body("torch.float32"),
            inputs,
            "x, y",
        ),
    );
    let e = refuse(&script(
        "x: torch.Tensor",
        "block_sizes=[8]",
        &body("torch.promote_types(x.dtype)"),
        X,
        "x",
    ));
    assert!(e.to_string().contains("takes two dtypes"), "{e}");
}

#[test]
fn float_parameters_take_float_literals_and_render_annotated() {
    let body = "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        out[t, :] = x[t, :] * s\n    return out";
    let annotated = script(
        "x: torch.Tensor, s: float",
        "block_sizes=[8]",
        body,
        X,
        "x, 1.25",
    );
    same_as(
        &script("x, s", "block_sizes=[8]", body, X, "x, 1.25"),
        &annotated,
    );
    let case = parse(&annotated);
    assert_eq!(
        case.kernel.params[1].kind,
        pallas_diff_lang::ir::ParamKind::Float
    );
    assert!(render_case(&case).contains("s: float") && render_case(&case).contains("k(x, 1.25)"));
    // An int literal for a float parameter, a float for an int one, and a non-literal are
    // refused with their position.
    let e = refuse(&script(
        "x: torch.Tensor, s: float",
        "block_sizes=[8]",
        body,
        X,
        "x, 2",
    ));
    assert!(e.to_string().contains("a finite float literal"), "{e}");
    let e = refuse(&script(
        "x: torch.Tensor, s: int",
        "block_sizes=[8]",
        body,
        X,
        "x, 2.5",
    ));
    assert!(e.to_string().contains("an int literal"), "{e}");
    let e = refuse(&script(
        "x: torch.Tensor, s: float",
        "block_sizes=[8]",
        body,
        X,
        "x, float(\"inf\")",
    ));
    assert!(e.to_string().contains("case.py:"), "{e}");
}

#[test]
fn bool_parameters_are_if_conditions_and_render_annotated() {
    let body = |cond: &str| {
        format!(
            "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        v = x[t, :]\n        if {cond}:\n            v = v * 2.0\n        out[t, :] = v\n    return out"
        )
    };
    let annotated = script(
        "x: torch.Tensor, flag: bool",
        "block_sizes=[8]",
        &body("flag"),
        X,
        "x, True",
    );
    // Unannotated, the parameter takes its kind from the `True` the call passes.
    same_as(
        &script("x, flag", "block_sizes=[8]", &body("flag"), X, "x, True"),
        &annotated,
    );
    let case = parse(&annotated);
    assert_eq!(
        case.kernel.params[1].kind,
        pallas_diff_lang::ir::ParamKind::Bool
    );
    assert_eq!(case.call.args[1], pallas_diff_lang::ir::Arg::Bool(true));
    let rendered = render_case(&case);
    assert!(
        rendered.contains("flag: bool") && rendered.contains("k(x, True)"),
        "{rendered}"
    );
    let off = parse(&script(
        "x: torch.Tensor, flag: bool",
        "block_sizes=[8]",
        &body("flag"),
        X,
        "x, False",
    ));
    assert!(render_case(&off).contains("k(x, False)"));
    // `if not flag:` is `if flag:` with the branches swapped; so is `not` of a comparison.
    let swapped = |cond: &str| {
        format!(
            "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        v = x[t, :]\n        if {cond}:\n            pass\n        else:\n            v = v * 2.0\n        out[t, :] = v\n    return out"
        )
    };
    for (negated, plain) in [("not flag", "flag"), ("not (t.begin >= 8)", "t.begin >= 8")] {
        same_as(
            &script(
                "x: torch.Tensor, flag: bool",
                "block_sizes=[8]",
                &body(negated),
                X,
                "x, True",
            ),
            &script(
                "x: torch.Tensor, flag: bool",
                "block_sizes=[8]",
                &swapped(plain),
                X,
                "x, True",
            ),
        );
    }
    // Anywhere but a whole condition (or one `not` of it) it is refused at its position, as
    // is an int for it and a bool for an int parameter.
    for cond in ["flag == 1", "not not flag", "not flag == 1"] {
        let e = refuse(&script(
            "x: torch.Tensor, flag: bool",
            "block_sizes=[8]",
            &body(cond),
            X,
            "x, True",
        ));
        assert!(e.to_string().contains("case.py:"), "{cond}: {e}");
    }
    let arith = "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        out[t, :] = x[t, :] + flag\n    return out";
    let e = refuse(&script(
        "x: torch.Tensor, flag: bool",
        "block_sizes=[8]",
        arith,
        X,
        "x, True",
    ));
    assert!(e.to_string().contains("whole `if` condition"), "{e}");
    let e = refuse(&script(
        "x: torch.Tensor, flag: bool",
        "block_sizes=[8]",
        &body("flag"),
        X,
        "x, 1",
    ));
    assert!(e.to_string().contains("`True` or `False`"), "{e}");
    let e = refuse(&script(
        "x: torch.Tensor, n: int",
        "block_sizes=[8]",
        &body("n >= 1"),
        X,
        "x, True",
    ));
    assert!(e.to_string().contains("an int literal"), "{e}");
}

#[test]
fn zeros_like_of_a_subscript_in_a_device_loop_is_hl_zeros_of_its_shape() {
    let body = |z: &str| {
        format!(
            "    out = torch.empty([x.size(0)], dtype=torch.float32, device=x.device)\n    for t in hl.tile(x.size(0)):\n        acc = {z}\n        out[t] = acc + x[t, 0]\n    return out"
        )
    };
    same_as(
        &script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            &body("torch.zeros_like(x[t, 0], dtype=torch.float32)"),
            X,
            "x",
        ),
        &script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            &body("hl.zeros([t], dtype=torch.float32)"),
            X,
            "x",
        ),
    );
    // The operand's dtype when none is given; `:` is the tensor's size.
    let full = |z: &str| {
        format!(
            "    out = torch.empty_like(x)\n    for t in hl.tile(x.size(0)):\n        out[t, :] = {z} + x[t, :]\n    return out"
        )
    };
    same_as(
        &script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            &full("torch.zeros_like(x[t, :])"),
            X,
            "x",
        ),
        &script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            &full("hl.zeros([t, x.size(1)], dtype=torch.bfloat16)"),
            X,
            "x",
        ),
    );
    // A value whose shape is not read off a subscript stays refused at its position.
    let e = refuse(&script(
        "x: torch.Tensor",
        "block_sizes=[8]",
        &full("torch.zeros_like(x[t, :] + 1.0)"),
        X,
        "x",
    ));
    assert!(
        e.to_string().contains("case.py:") && e.to_string().contains("hl.zeros"),
        "{e}"
    );
}

#[test]
fn min_and_max_of_two_ints_bound_a_data_dependent_loop() {
    // Helion's causal kernels: `hl.tile(0, min(n, tile.end))`, `hl.tile(max(s, t.begin - 4), e)`.
    let src = script(
        "x: torch.Tensor",
        "block_sizes=[8, 8]",
        "    out = torch.zeros_like(x)\n    for t in hl.tile(x.size(0)):\n        for u in hl.tile(max(0, t.begin - 4), min(x.size(0) - 1, t.end)):\n            out[u, :] = x[u, :]\n    return out",
        X,
        "x",
    );
    let case = parse(&src);
    let StmtKind::For(outer) = &case.kernel.body[1].kind else {
        panic!("{:?}", case.kernel.body[1])
    };
    let StmtKind::For(inner) = &outer.body[0].kind else {
        panic!("{:?}", outer.body[0])
    };
    let op_of = |e: &pallas_diff_lang::ir::Expr| match &e.kind {
        ExprKind::Op { op, args } => (op.clone(), args.len()),
        other => panic!("{other:?}"),
    };
    let dim = &inner.dims[0];
    assert_eq!(op_of(dim.begin.as_ref().unwrap()), (TensorOp::IntMax, 2));
    assert_eq!(op_of(&dim.end), (TensorOp::IntMin, 2));
    let rendered = render_case(&case);
    assert!(
        rendered.contains("hl.tile(max(0, t.begin - 4), min(x.size(0) - 1, t.end))"),
        "{rendered}"
    );
    assert_eq!(parse(&rendered).without_spans(), case.without_spans());
    // Of more than two operands, with a keyword, or of an iterable it is another function.
    for bad in [
        "min(x.size(0) - 1, t.end, 64)",
        "min(x.size(0) - 1, t.end, default=0)",
        "min([x.size(0) - 1, t.end])",
    ] {
        let e = refuse(&src.replace("min(x.size(0) - 1, t.end)", bad));
        assert_eq!(e.span.line, 10, "{bad}: {e}");
        assert!(e.span.col >= 47, "{bad}: {e}");
        assert!(
            e.to_string().contains("of min") || e.construct.starts_with("min"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn broadcast_tensors_of_one_shape_rebinds_each_tensor_to_itself() {
    let body = |first: &str| {
        format!(
            "    {first}\n    out = torch.empty_like(x)\n    for t in hl.tile(out.size()):\n        out[t] = x[t] + y[t]\n    return out"
        )
    };
    let two = |y: &str| format!("{X}\n{y}");
    let same = "y = torch.randn(16, 256, dtype=torch.bfloat16)";
    let helion = script(
        "x: torch.Tensor, y: torch.Tensor",
        "block_sizes=[8, 128]",
        &body("x, y = torch.broadcast_tensors(x, y)"),
        &two(same),
        "x, y",
    );
    let canonical = script(
        "x: torch.Tensor, y: torch.Tensor",
        "block_sizes=[8, 128]",
        &body("pass").replace("    pass\n", ""),
        &two(same),
        "x, y",
    );
    same_as(&helion, &canonical);
    // Of other shapes torch makes broadcast views of the inputs: refused at the statement,
    // naming both shapes.
    let e = refuse(&helion.replace(same, "y = torch.randn(1, 256, dtype=torch.bfloat16)"));
    assert_eq!(
        (e.span.line, e.construct.as_str()),
        (8, "torch.broadcast_tensors"),
        "{e}"
    );
    assert!(
        e.message.contains("[16, 256]") && e.message.contains("[1, 256]"),
        "{e}"
    );
    // Other targets than its operands, or a keyword: refused at the call.
    for bad in [
        "a, b = torch.broadcast_tensors(x, y)",
        "y, x = torch.broadcast_tensors(x, y)",
    ] {
        let e = refuse(&helion.replace("x, y = torch.broadcast_tensors(x, y)", bad));
        assert_eq!(
            (e.span.line, e.construct.as_str()),
            (8, "torch.broadcast_tensors"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn argmin_and_argmax_take_one_dim_and_give_an_int() {
    let src = |f: &str| {
        script(
            "x: torch.Tensor",
            "block_sizes=[8]",
            &format!(
                "    out = torch.empty([x.size(0)], dtype=torch.int32)\n    for t in hl.tile(x.size(0)):\n        out[t] = {f}.to(torch.int32)\n    return out"
            ),
            X,
            "x",
        )
    };
    same_as(
        &src("x[t, :].argmin(dim=-1)"),
        &src("torch.argmin(x[t, :], dim=-1)"),
    );
    let rendered = render_case(&parse(&src("x[t, :].argmax(1, keepdim=True)[:, 0]")));
    assert!(
        rendered.contains("torch.argmax(x[t, :], dim=1, keepdim=True)"),
        "{rendered}"
    );
    let e = refuse(&src("torch.argmin(x[t, :], dim=[0, 1])"));
    assert_eq!(
        (e.span.line, e.construct.as_str()),
        (10, "torch.argmin"),
        "{e}"
    );
    assert!(e.message.contains("one int dim"), "{e}");
}
