//! The reference's torch ops (`lang::ir::ops`): values computed here independently, in the
//! order and rounding the oracle documents (`oracle/src/exec/ops.rs`).

mod common;

use common::{eval, eval_ok, script, values};

const X: &str = "x = torch.tensor([[1.0, -2.0, 3.0, -4.0], [0.5, 0.0, -0.25, 8.0]])";

fn run(body: &str, inputs: &str) -> Vec<f64> {
    values(
        &eval_ok(&script("", "x: torch.Tensor", body, inputs, "x")),
        "out",
    )
}

#[test]
fn elementwise_functions_round_once_to_float32() {
    let body = |f: &str| {
        format!("out = torch.empty_like(x)\nfor g in hl.grid(2):\n    out[g, :] = {f}\nreturn out")
    };
    let x = [1.0f32, -2.0, 3.0, -4.0, 0.5, 0.0, -0.25, 8.0];
    let exp = run(&body("torch.exp(x[g, :])"), X);
    for (v, &a) in exp.iter().zip(&x) {
        assert_eq!(*v, f64::from((f64::from(a).exp()) as f32));
    }
    let relu = run(&body("x[g, :].relu()"), X);
    assert_eq!(relu, vec![1.0, 0.0, 3.0, 0.0, 0.5, 0.0, 0.0, 8.0]);
    let mx = run(&body("torch.maximum(x[g, :], x[1 - g, :])"), X);
    assert_eq!(mx, vec![1.0, 0.0, 3.0, 8.0, 1.0, 0.0, 3.0, 8.0]);
    let mn = run(&body("torch.minimum(x[g, :], x[1 - g, :])"), X);
    assert_eq!(mn, vec![0.5, -2.0, -0.25, -4.0, 0.5, -2.0, -0.25, -4.0]);
    let rs = run(&body("torch.rsqrt(torch.relu(x[g, :]) + 1.0)"), X);
    for (v, &a) in rs.iter().zip(&x) {
        let want = f64::from((1.0 / (f64::from(a.max(0.0)) + 1.0).sqrt()) as f32);
        assert_eq!(*v, want);
    }
}

#[test]
fn masks_select_and_cast() {
    let body = "out = torch.empty_like(x)\nfor g in hl.grid(2):\n    row = x[g, :]\n    m = (row > 0.0) & (row < 5.0)\n    out[g, :] = torch.where(m, row, 0.0 - row) + (row == 0.0).float()\nreturn out";
    assert_eq!(run(body, X), vec![1.0, 2.0, 3.0, 4.0, 0.5, 1.0, 0.25, -8.0]);
    let or = "out = torch.empty_like(x)\nfor g in hl.grid(2):\n    row = x[g, :]\n    out[g, :] = ((row < -3.0) | (row > 2.0)).to(torch.float32)\nreturn out";
    assert_eq!(run(or, X), vec![0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
}

#[test]
fn modulo_takes_the_sign_of_the_divisor() {
    let body =
        "out = torch.empty_like(x)\nfor g in hl.grid(2):\n    out[g, :] = x[g, :] % 3\nreturn out";
    let x = "x = torch.tensor([[7, -7, 0, 5], [-1, 1, 3, -3]], dtype=torch.int32)";
    assert_eq!(run(body, x), vec![1.0, 2.0, 0.0, 2.0, 2.0, 1.0, 0.0, 0.0]);
    let neg =
        "out = torch.empty_like(x)\nfor g in hl.grid(2):\n    out[g, :] = x[g, :] % -3\nreturn out";
    assert_eq!(
        run(neg, x),
        vec![-2.0, -1.0, 0.0, -1.0, -1.0, -2.0, 0.0, 0.0]
    );
    let idx = "out = torch.empty_like(x)\nfor t in hl.tile(2, block_size=1):\n    out[t.begin, :] = x[(t.begin - 1) % 2, :]\nreturn out";
    assert_eq!(run(idx, x), vec![-1.0, 1.0, 3.0, -3.0, 7.0, -7.0, 0.0, 5.0]);
    let zero =
        "out = torch.empty_like(x)\nfor g in hl.grid(2):\n    out[g, :] = x[g, :] % 0\nreturn out";
    let e = eval(&script("", "x: torch.Tensor", zero, x, "x")).unwrap_err();
    assert!(e.to_string().contains("modulo by zero"), "{e}");
}

#[test]
fn reductions_over_several_dims_keepdim_and_all() {
    let x = "x = torch.tensor([[[1.0, 2.0], [3.0, 4.0]], [[5.0, -6.0], [7.0, 8.0]]])";
    let body = |r: &str, shape: &str| {
        format!(
            "out = torch.zeros({shape}, dtype=torch.float32)\nfor g in hl.grid(1):\n    out[:] = {r}\nreturn out"
        )
    };
    assert_eq!(
        run(&body("torch.sum(x[:, :, :], dim=[0, 2])", "[2]"), x),
        vec![2.0, 22.0]
    );
    assert_eq!(
        run(&body("x[:, :, :].amax(dim=(1, 2))", "[2]"), x),
        vec![4.0, 8.0]
    );
    assert_eq!(
        run(
            &body("torch.amin(x[:, :, :], -1, keepdim=True).reshape(4)", "[4]"),
            x
        ),
        vec![1.0, 3.0, -6.0, 7.0]
    );
    assert_eq!(
        run(&body("torch.sum(x[:, :, :]).reshape(1)", "[1]"), x),
        vec![24.0]
    );
}

#[test]
fn transpose_and_matrix_products() {
    let x = "x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])";
    let body = |r: &str| {
        format!(
            "out = torch.zeros([2, 2], dtype=torch.float32)\nfor g in hl.grid(1):\n    a = x[:, :]\n    out[:, :] = {r}\nreturn out"
        )
    };
    assert_eq!(run(&body("a.transpose(0, 1)"), x), vec![1.0, 3.0, 2.0, 4.0]);
    assert_eq!(
        run(&body("torch.matmul(a, a)"), x),
        vec![7.0, 10.0, 15.0, 22.0]
    );
    assert_eq!(
        run(&body("torch.addmm(a, a, a.transpose(0, 1))"), x),
        vec![6.0, 13.0, 14.0, 29.0]
    );
    assert_eq!(run(&body("hl.dot(a, a)"), x), vec![7.0, 10.0, 15.0, 22.0]);
    assert_eq!(
        run(&body("hl.dot(a, a, acc=a)"), x),
        vec![8.0, 12.0, 18.0, 26.0]
    );
    let bmm = "out = torch.zeros([1, 2, 2], dtype=torch.float32)\nfor g in hl.grid(1):\n    a = x[:, :][None, :, :]\n    out[:, :, :] = torch.baddbmm(a, a, a)\nreturn out";
    assert_eq!(run(bmm, x), vec![8.0, 12.0, 18.0, 26.0]);
}

#[test]
fn a_where_on_a_non_mask_and_mismatched_products_are_invalid() {
    let x = "x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])";
    let w = "out = torch.zeros([2, 2], dtype=torch.float32)\nfor g in hl.grid(1):\n    a = x[:, :]\n    out[:, :] = torch.where(a, a, a)\nreturn out";
    let e = eval(&script("", "x: torch.Tensor", w, x, "x")).unwrap_err();
    assert!(e.to_string().contains("mask"), "{e}");
    let m = "out = torch.zeros([2, 2], dtype=torch.float32)\nfor g in hl.grid(1):\n    a = x[:, :]\n    out[:, :] = torch.matmul(a, a[0:1, :])\nreturn out";
    assert!(eval(&script("", "x: torch.Tensor", m, x, "x")).is_err());
}

#[test]
fn float_functions_and_float_parameters() {
    let body = |f: &str| {
        format!("out = torch.empty_like(x)\nfor g in hl.grid(2):\n    out[g, :] = {f}\nreturn out")
    };
    let x = [1.0f32, -2.0, 3.0, -4.0, 0.5, 0.0, -0.25, 8.0];
    type Case = (&'static str, fn(f64) -> f64);
    let cases: [Case; 7] = [
        ("torch.sigmoid(x[g, :])", |v| 1.0 / (1.0 + (-v).exp())),
        ("torch.sin(x[g, :])", f64::sin),
        ("x[g, :].cos()", f64::cos),
        ("torch.tanh(x[g, :])", f64::tanh),
        ("torch.exp2(x[g, :])", f64::exp2),
        ("torch.log(torch.relu(x[g, :]) + 1.0)", |v| {
            (v.max(0.0) + 1.0).ln()
        }),
        ("torch.sqrt(torch.relu(x[g, :]))", |v| v.max(0.0).sqrt()),
    ];
    for (f, want) in cases {
        let got = run(&body(f), X);
        for (v, &a) in got.iter().zip(&x) {
            assert_eq!(*v, f64::from(want(f64::from(a)) as f32), "{f} of {a}");
        }
    }
    // A float parameter is a Python float in device arithmetic, like a float literal.
    let affine = "out = torch.empty_like(x)\nfor g in hl.grid(2):\n    out[g, :] = x[g, :] * s + b\nreturn out";
    let got = values(
        &eval_ok(&script(
            "",
            "x: torch.Tensor, s: int, b: float",
            affine,
            X,
            "x, 3, 1.25",
        )),
        "out",
    );
    let want: Vec<f64> = x.iter().map(|&a| f64::from(a) * 3.0 + 1.25).collect();
    assert_eq!(got, want);
    // ... and in a branch condition.
    let branch = "out = torch.empty_like(x)\nfor g in hl.grid(2):\n    if b == 1.0:\n        out[g, :] = x[g, :]\n    else:\n        out[g, :] = x[g, :] * 2.0\nreturn out";
    for (arg, scale) in [("1.0", 1.0), ("0.5", 2.0)] {
        let got = values(
            &eval_ok(&script(
                "",
                "x: torch.Tensor, b: float",
                branch,
                X,
                &format!("x, {arg}"),
            )),
            "out",
        );
        let want: Vec<f64> = x.iter().map(|&a| f64::from(a) * scale).collect();
        assert_eq!(got, want, "b = {arg}");
    }
}

#[test]
fn a_bool_parameter_selects_the_branch() {
    let x = [1.0f32, -2.0, 3.0, -4.0, 0.5, 0.0, -0.25, 8.0];
    let branch = "out = torch.empty_like(x)\nfor g in hl.grid(2):\n    v = x[g, :]\n    if flag:\n        v = v * 2.0\n    else:\n        v = v - 1.0\n    out[g, :] = v\nreturn out";
    for (arg, f) in [
        ("True", (|a| a * 2.0) as fn(f64) -> f64),
        ("False", |a| a - 1.0),
    ] {
        let got = values(
            &eval_ok(&script(
                "",
                "x: torch.Tensor, flag: bool",
                branch,
                X,
                &format!("x, {arg}"),
            )),
            "out",
        );
        let want: Vec<f64> = x.iter().map(|&a| f(f64::from(a))).collect();
        assert_eq!(got, want, "flag = {arg}");
    }
}

#[test]
fn addmm_accumulates_factors_into_a_bias_of_another_dtype() {
    // Helion reads `acc = torch.addmm(acc, a, b)` with a float32 `acc` and bf16 factors as
    // `hl.dot(a, b, acc=acc)`: float32 result (eager torch refuses the mixed dtypes).
    let x = "x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.bfloat16)";
    let body = "out = torch.zeros([2, 2], dtype=torch.float32)\nfor g in hl.grid(1):\n    acc = hl.zeros([2, 2], dtype=torch.float32)\n    a = x[:, :]\n    acc = torch.addmm(acc, a, a)\n    out[:, :] = acc\nreturn out";
    assert_eq!(run(body, x), vec![7.0, 10.0, 15.0, 22.0]);
    let bmm = "out = torch.zeros([1, 2, 2], dtype=torch.float32)\nfor g in hl.grid(1):\n    acc = hl.zeros([1, 2, 2], dtype=torch.float32)\n    a = x[:, :][None, :, :]\n    acc = torch.baddbmm(acc, a, a)\n    out[:, :, :] = acc\nreturn out";
    assert_eq!(run(bmm, x), vec![7.0, 10.0, 15.0, 22.0]);
    // Factors of two dtypes stay invalid.
    let mixed = "out = torch.zeros([2, 2], dtype=torch.float32)\nfor g in hl.grid(1):\n    acc = hl.zeros([2, 2], dtype=torch.float32)\n    acc = torch.addmm(acc, x[:, :], acc)\n    out[:, :] = acc\nreturn out";
    let e = eval(&script("", "x: torch.Tensor", mixed, x, "x")).unwrap_err();
    assert!(e.to_string().contains("different dtypes"), "{e}");
}

#[test]
fn min_and_max_of_ints_bound_loops_by_value() {
    // Row r sums columns 0..=r of a 4 x 4 block (a causal prefix sum, Helion's
    // `hl.tile(0, min(x.size(1), tile_q.end))`), then `max` keeps the loop from starting below
    // one: column 0 is never added.
    let x = "x = torch.tensor([[1.0, 2.0, 4.0, 8.0], [16.0, 32.0, 64.0, 128.0], [1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0]])";
    let body = |lo: &str| {
        format!(
            "out = torch.zeros([4], dtype=torch.float32)\nfor tq in hl.tile(4, block_size=1):\n    acc = hl.zeros([1], dtype=torch.float32)\n    for tk in hl.tile({lo}, min(x.size(1), tq.end), block_size=1):\n        acc = acc + x[tq, tk].sum(dim=1)\n    out[tq] = acc\nreturn out"
        )
    };
    assert_eq!(run(&body("0"), x), vec![1.0, 48.0, 3.0, 8.0]);
    assert_eq!(
        run(&body("max(1, tq.begin - 1)"), x),
        vec![0.0, 32.0, 2.0, 4.0]
    );
}

#[test]
fn argmin_and_argmax_take_the_first_extreme_and_a_nan_wins() {
    // Row 1 holds NaN where its square root is taken of -1.
    let x = "x = torch.tensor([[3.0, 1.0, 1.0, 2.0], [5.0, -1.0, 9.0, -1.0]])";
    let body = |f: &str| {
        format!(
            "out = torch.zeros([2], dtype=torch.int32)\nfor g in hl.grid(2):\n    out[g] = {f}.to(torch.int32)\nreturn out"
        )
    };
    let out = |body: String| {
        values(
            &eval_ok(&script("", "x: torch.Tensor", &body, x, "x")),
            "out",
        )
    };
    assert_eq!(
        out(body("torch.argmin(torch.sqrt(x[g, :]), dim=-1)")),
        vec![1.0, 1.0]
    );
    assert_eq!(out(body("torch.sqrt(x[g, :]).argmax(0)")), vec![0.0, 1.0]);
    assert_eq!(out(body("x[g, :].argmax(0)")), vec![0.0, 2.0]);
    // No dim: the index into the flattened block (2 of [3, 1, 5, -1]); keepdim keeps a unit
    // dim (argmin of row 0 is 1).
    let flat = "out = torch.zeros([2], dtype=torch.int32)\nfor g in hl.grid(2):\n    out[g] = torch.argmax(x[:, 0:2]).to(torch.int32) + torch.argmin(x[0:1, :], dim=1, keepdim=True).sum()\nreturn out";
    assert_eq!(out(flat.to_string()), vec![3.0, 3.0]);
}

#[test]
fn matrix_products_carry_a_float32_rounding_budget() {
    let x = "x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])";
    let with = |r: &str| {
        let body = format!(
            "out = torch.zeros([2, 2], dtype=torch.float32)\nfor g in hl.grid(1):\n    a = x[:, :]\n    out[:, :] = {r}\nreturn out"
        );
        eval_ok(&script("", "x: torch.Tensor", &body, x, "x"))
    };
    // No product, no budget.
    assert_eq!(with("a + a").dot_atol, 0.0);
    // One product of 2 terms whose largest term sum is 4*2 + 4*4 = 22 (no cancellation):
    // 2 * 2^-24 * 22.
    let one = with("hl.dot(a, a)").dot_atol;
    assert_eq!(one, 2.0 * f64::powi(2.0, -24) * 22.0);
    // A product of a product adds its own rounding and what its factors carry.
    let two = with("hl.dot(hl.dot(a, a), a)").dot_atol;
    assert!(two > 2.0 * one, "{one} {two}");
}
