//! Exact values of kernels whose eager result is computed here independently (f32 arithmetic in
//! the stated order, bf16 rounding by the `half` crate), and the semantics the reference fixes:
//! effective block sizes, tile attributes, torch promotion, int32 wrapping, atomics, stores
//! visible to later loads, aliases, poison tracking.

mod common;

use common::{bf16, eval_ok, parse, script, values};
use lang::tensor::DType;
use pallas_diff_oracle::Plan;

const TAIL_RUNS: &str = r#"
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0)):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live):
                acc = acc + x_block[local.index, :, :].float().sum(dim=0)
            if live >= 3:
                acc = acc + x_block[live - 3 : live, :, :].float().sum(dim=0)
        out[request, :, :] = acc
    return out
"#;

/// Sum of rows `rows` of `x` (rows of 256 values) in f32, sequentially from 0 (the order of
/// `.sum(dim=0)` over a non-innermost dim).
fn row_sum(x: &[f64], rows: std::ops::Range<usize>) -> Vec<f32> {
    let mut s = vec![0f32; 256];
    for r in rows {
        for (i, v) in s.iter_mut().enumerate() {
            *v += x[r * 256 + i] as f32;
        }
    }
    s
}

fn add(acc: &mut [f32], v: &[f32]) {
    acc.iter_mut().zip(v).for_each(|(a, b)| *a += b);
}

#[test]
fn tail_runs_example_is_bit_exact() {
    let src = script(
        "4, 2",
        "x: torch.Tensor",
        TAIL_RUNS,
        "torch.manual_seed(0)\nx = torch.randn(9, 2, 128, dtype=torch.bfloat16)",
        "x",
    );
    let case = parse(&src);
    let x = case.kernel_tensor_args().unwrap().remove(0).values;
    let mut acc = vec![0f32; 256];
    for start in (0..9).step_by(4) {
        let live = (9 - start).min(4);
        for ls in (0..live).step_by(2) {
            add(
                &mut acc,
                &row_sum(&x, start + ls..start + (ls + 2).min(live)),
            );
        }
        if live >= 3 {
            add(&mut acc, &row_sum(&x, start + live - 3..start + live));
        }
    }
    let got = values(&eval_ok(&src), "out");
    let want: Vec<f64> = acc.iter().map(|&v| f64::from(v)).collect();
    assert_eq!(got, want);
}

#[test]
fn running_sum_rounds_each_store_to_bf16() {
    let src = script(
        "4",
        "x: torch.Tensor, initial: torch.Tensor",
        r#"
        out = torch.empty_like(x)
        for request in hl.grid(1):
            state = initial[request, :, :].to(torch.float32)
            for outer in hl.tile(x.size(0)):
                x_block = x[outer, :, :]
                live = outer.end - outer.begin
                for local in hl.tile(live, block_size=1):
                    token = x_block[local.begin, :, :].to(torch.float32)
                    state = state + token
                    out[outer.begin + local.begin, :, :] = state.to(torch.bfloat16)
        return out
        "#,
        "torch.manual_seed(3)\nx = torch.randn(9, 2, 128, dtype=torch.bfloat16)\n\
         initial = torch.randn(1, 2, 128, dtype=torch.bfloat16)",
        "x, initial",
    );
    let case = parse(&src);
    let args = case.kernel_tensor_args().unwrap();
    let (x, init) = (&args[0].values, &args[1].values);
    let mut state: Vec<f32> = init.iter().map(|&v| v as f32).collect();
    let mut want = Vec::new();
    for t in 0..9 {
        for (i, s) in state.iter_mut().enumerate() {
            *s += x[t * 256 + i] as f32;
        }
        want.extend(state.iter().map(|&s| f64::from(bf16(s))));
    }
    let o = eval_ok(&src);
    assert_eq!(o.get("out").unwrap().dtype, DType::Bfloat16);
    assert_eq!(values(&o, "out"), want);
}

#[test]
fn short_conv_recurrence_is_bit_exact() {
    let src = script(
        "4",
        "x: torch.Tensor, weight: torch.Tensor, initial: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor",
        r#"
        out = torch.empty_like(x)
        final = torch.empty_like(initial)
        for request in hl.grid(1):
            start = hl.load(starts, [request])
            end = hl.load(ends, [request])
            state_0 = initial[request, 0, :, :].float()
            state_1 = initial[request, 1, :, :].float()
            state_2 = initial[request, 2, :, :].float()
            weight_0 = weight[0, :, :].float()
            weight_1 = weight[1, :, :].float()
            weight_2 = weight[2, :, :].float()
            weight_3 = weight[3, :, :].float()
            for outer in hl.tile(start, end):
                x_block = x[outer, :, :]
                live = outer.end - outer.begin
                for local in hl.tile(live, block_size=1):
                    token = x_block[local.begin, :, :].float()
                    acc = state_0 * weight_0 + state_1 * weight_1
                    acc += state_2 * weight_2 + token * weight_3
                    out[outer.begin + local.begin, :, :] = acc.to(torch.bfloat16)
                    state_0 = state_1
                    state_1 = state_2
                    state_2 = token
            final[request, 0, :, :] = state_0.to(torch.bfloat16)
            final[request, 1, :, :] = state_1.to(torch.bfloat16)
            final[request, 2, :, :] = state_2.to(torch.bfloat16)
        return out, final
        "#,
        "torch.manual_seed(7)\n\
         x = torch.randn(9, 2, 128, dtype=torch.bfloat16)\n\
         weight = torch.randn(4, 2, 128, dtype=torch.bfloat16)\n\
         initial = torch.randn(1, 3, 2, 128, dtype=torch.bfloat16)\n\
         starts = torch.tensor([0], dtype=torch.int32)\n\
         ends = torch.tensor([9], dtype=torch.int32)",
        "x, weight, initial, starts, ends",
    );
    let case = parse(&src);
    let a = case.kernel_tensor_args().unwrap();
    let f = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
    let (x, w, init) = (f(&a[0].values), f(&a[1].values), f(&a[2].values));
    let mut s: Vec<Vec<f32>> = (0..3)
        .map(|k| init[k * 256..(k + 1) * 256].to_vec())
        .collect();
    let mut want = Vec::new();
    for t in 0..9 {
        let tok = &x[t * 256..(t + 1) * 256];
        for i in 0..256 {
            let wk = |k: usize| w[k * 256 + i];
            let first = s[0][i] * wk(0) + s[1][i] * wk(1);
            let second = s[2][i] * wk(2) + tok[i] * wk(3);
            want.push(f64::from(bf16(first + second)));
        }
        s = vec![s[1].clone(), s[2].clone(), tok.to_vec()];
    }
    let o = eval_ok(&src);
    assert_eq!(values(&o, "out"), want);
    let last3: Vec<f64> = a[0].values[6 * 256..].to_vec();
    assert_eq!(values(&o, "final"), last3);
}

#[test]
fn block_sizes_are_raised_to_the_tpu_minimum() {
    // 8-element 1-D f32: the minimum block is next_power_of_2(8) = 8, so `block_sizes=[4]` runs
    // one 8-row tile (spec §1.1a): one tile with count 1, not two with count 2.
    let src = script(
        "4",
        "x: torch.Tensor",
        r#"
        out = torch.zeros([1], dtype=torch.float32)
        for g in hl.grid(1):
            acc = hl.zeros([1], dtype=torch.float32)
            for t in hl.tile(x.size(0)):
                rows = x[t]
                acc = acc + t.count * rows.size(0)
            out[0:1] = acc
        return out
        "#,
        "x = torch.ones(8)",
        "x",
    );
    let case = parse(&src);
    let plan = Plan::compile(&case).unwrap();
    assert_eq!(plan.configured_block_sizes(), &[1, 4]);
    assert_eq!(plan.effective_block_sizes(), &[1, 8]);
    assert_eq!(values(&plan.run().unwrap(), "out"), vec![8.0]);
}

#[test]
fn multi_dim_tiles_use_effective_blocks_and_clip_the_last_tile() {
    let src = script(
        "4, 64",
        "x: torch.Tensor",
        r#"
        out = torch.empty_like(x)
        for ti, tj in hl.tile([x.size(0), x.size(1)]):
            out[ti, tj] = x[ti, tj] * 2.0
        return out
        "#,
        "torch.manual_seed(1)\nx = torch.randn(5, 130)",
        "x",
    );
    let case = parse(&src);
    let plan = Plan::compile(&case).unwrap();
    assert_eq!(plan.effective_block_sizes(), &[8, 128]);
    let x = case.kernel_tensor_args().unwrap().remove(0).values;
    let want: Vec<f64> = x.iter().map(|v| v * 2.0).collect();
    assert_eq!(values(&plan.run().unwrap(), "out"), want);
}

#[test]
fn tile_attributes_of_a_loop_with_a_nonzero_begin() {
    let src = script(
        "",
        "x: torch.Tensor",
        r#"
        out = torch.zeros([3, 7], dtype=torch.int32)
        for t in hl.tile(1, 10, block_size=4):
            out[t.id, 0] = t.begin
            out[t.id, 1] = t.end
            out[t.id, 2] = t.count
            out[t.id, 3] = t.id
            out[t.id, 4] = t.block_size
            out[t.id, 5] = t.index.sum(dim=0)
            out[t.id, 6] = x[t, :, :].size(0)
        return out
        "#,
        "x = torch.zeros(10, 2, 128)",
        "x",
    );
    let want = [
        [1.0, 5.0, 3.0, 0.0, 4.0, 10.0, 4.0],
        [5.0, 9.0, 3.0, 1.0, 4.0, 26.0, 4.0],
        [9.0, 10.0, 3.0, 2.0, 4.0, 9.0, 1.0],
    ];
    assert_eq!(values(&eval_ok(&src), "out"), want.concat());
}

#[test]
fn int32_wraps_and_mixed_arithmetic_promotes_like_torch() {
    let src = script(
        "",
        "x: torch.Tensor",
        r#"
        out = torch.zeros([4, 4], dtype=torch.int32)
        fout = torch.zeros([2, 4], dtype=torch.float32)
        for g in hl.grid(1):
            v = x[0:4]
            out[0, :] = v + 1
            out[1, :] = v // 2
            out[2, :] = v * 2
            out[3, :] = v - v.sum(dim=0)
            fout[0, :] = v / 2
            fout[1, :] = v + 0.5
        return out, fout
        "#,
        "x = torch.tensor([2147483647, -7, 7, -8], dtype=torch.int32)",
        "x",
    );
    let o = eval_ok(&src);
    let m = 2147483648.0;
    assert_eq!(
        values(&o, "out"),
        vec![
            -m,
            -6.0,
            8.0,
            -7.0, //
            1073741823.0,
            -4.0,
            3.0,
            -4.0, //
            -2.0,
            -14.0,
            14.0,
            -16.0, //
            8.0,
            -2147483646.0,
            -2147483632.0,
            -2147483647.0,
        ]
    );
    assert_eq!(
        values(&o, "fout"),
        vec![1073741824.0, -3.5, 3.5, -4.0, m, -6.5, 7.5, -7.5]
    );
}

#[test]
fn returned_device_values_keep_their_promoted_dtype() {
    let src = script(
        "",
        "x: torch.Tensor",
        r#"
        for g in hl.grid(1):
            v = x[0:2]
            scaled = v * 0.1
            wide = v + v.float()
            zero_dim = v + hl.zeros([2], dtype=torch.float32).sum(dim=0)
            ints = hl.arange(0, 2) + 0.5
        return scaled, wide, zero_dim, ints
        "#,
        "x = torch.tensor([1.0, 3.0], dtype=torch.bfloat16)",
        "x",
    );
    let o = eval_ok(&src);
    let dt = |n: &str| o.get(n).unwrap().dtype;
    assert_eq!(dt("scaled"), DType::Bfloat16);
    assert_eq!(dt("wide"), DType::Float32);
    assert_eq!(
        dt("zero_dim"),
        DType::Bfloat16,
        "a 0-dim f32 does not promote a bf16 tensor"
    );
    assert_eq!(dt("ints"), DType::Float32);
    // bf16 * python float: computed in f32 with f32(0.1), rounded to bf16 once.
    let want: Vec<f64> = [1.0f32, 3.0]
        .iter()
        .map(|&v| f64::from(bf16(v * 0.1f32)))
        .collect();
    assert_eq!(values(&o, "scaled"), want);
    assert_eq!(values(&o, "ints"), vec![0.5, 1.5]);
}

#[test]
fn atomics_apply_in_order_and_accumulate_duplicates() {
    let src = script(
        "",
        "x: torch.Tensor, n: torch.Tensor",
        r#"
        out = torch.zeros([2], dtype=torch.float32)
        hi = torch.zeros([2], dtype=torch.float32)
        bits = torch.zeros([3], dtype=torch.int32)
        for g in hl.grid(1):
            hl.atomic_add(out, [hl.arange(0, 4) // 2], x[0:4])
            hl.atomic_max(hi, [hl.arange(0, 4) // 2], x[0:4])
            hl.atomic_min(hi, [1], 5.0)
            hl.atomic_or(bits, [0], n[0])
            hl.atomic_xor(bits, [1], n[1])
            hl.atomic_xchg(bits, [2], 9)
            hl.atomic_cas(bits, [2], 9, 11)
            hl.atomic_cas(bits, [2], 9, 13)
            hl.atomic_and(bits, [0], 6)
        return out, hi, bits
        "#,
        "x = torch.tensor([1.0, 2.0, 4.0, 8.0])\nn = torch.tensor([5, 3], dtype=torch.int32)",
        "x, n",
    );
    let o = eval_ok(&src);
    assert_eq!(values(&o, "out"), vec![3.0, 12.0]);
    assert_eq!(values(&o, "hi"), vec![2.0, 5.0]);
    assert_eq!(values(&o, "bits"), vec![4.0, 3.0, 11.0]);
}

#[test]
fn stores_are_visible_to_later_loads_and_through_aliases() {
    let src = script(
        "",
        "x: torch.Tensor",
        r#"
        alias = x.view_as(x)
        out = torch.zeros([2, 4], dtype=torch.float32)
        for g in hl.grid(1):
            before = x[0:4]
            alias[0:2] = before[2:4] * 10.0
            after = x[0:4]
            out[0, :] = before
            out[1, :] = after
        return out, x
        "#,
        "x = torch.tensor([1.0, 2.0, 3.0, 4.0])",
        "x",
    );
    let o = eval_ok(&src);
    assert_eq!(
        values(&o, "out"),
        vec![1.0, 2.0, 3.0, 4.0, 30.0, 40.0, 3.0, 4.0]
    );
    assert_eq!(values(&o, "x"), vec![30.0, 40.0, 3.0, 4.0]);
}

#[test]
fn empty_memory_may_be_read_once_written() {
    let src = script(
        "",
        "x: torch.Tensor",
        r#"
        scratch = torch.empty([4], dtype=torch.float32)
        out = torch.empty([4], dtype=torch.float32)
        for t in hl.tile(4, block_size=2):
            scratch[t] = x[t] + 1.0
            out[t] = scratch[t] * 2.0
        return out
        "#,
        "x = torch.tensor([1.0, 2.0, 3.0, 4.0])",
        "x",
    );
    assert_eq!(values(&eval_ok(&src), "out"), vec![4.0, 6.0, 8.0, 10.0]);
}

#[test]
fn in_place_update_keeps_the_target_dtype() {
    let src = script(
        "",
        "x: torch.Tensor",
        r#"
        for g in hl.grid(1):
            acc = hl.zeros([2], dtype=torch.bfloat16)
            acc += x[0:2]
            plain = hl.zeros([2], dtype=torch.bfloat16)
            plain = plain + x[0:2]
        return acc, plain
        "#,
        "x = torch.tensor([1.00390625, 3.0])",
        "x",
    );
    let o = eval_ok(&src);
    assert_eq!(o.get("acc").unwrap().dtype, DType::Bfloat16);
    assert_eq!(values(&o, "acc"), vec![1.0, 3.0]);
    assert_eq!(o.get("plain").unwrap().dtype, DType::Float32);
    assert_eq!(values(&o, "plain"), vec![1.00390625, 3.0]);
}

#[test]
fn evaluation_is_repeatable_and_does_not_leak_state_between_runs() {
    let src = script(
        "",
        "x: torch.Tensor",
        r#"
        for t in hl.tile(4, block_size=2):
            x[t] = x[t] + 1.0
        return x
        "#,
        "x = torch.zeros(4)",
        "x",
    );
    let plan = Plan::compile(&parse(&src)).unwrap();
    for _ in 0..3 {
        assert_eq!(values(&plan.run().unwrap(), "x"), vec![1.0; 4]);
    }
}

#[test]
fn explicit_load_store_full_and_views() {
    let src = script(
        "",
        "x: torch.Tensor",
        r#"
        out = torch.zeros([2, 3], dtype=torch.bfloat16)
        ints = torch.zeros([4], dtype=torch.int32)
        for g in hl.grid(1):
            tenth = hl.full([3], 0.1, dtype=torch.bfloat16)
            cols = hl.arange(0, 3)
            row = hl.load(x, [0, cols])
            hl.store(out, [0, None, cols], tenth.unsqueeze(0))
            hl.store(out, [1, cols], (row * 1.0).view(1, 3).squeeze(0))
            hl.store(ints, [hl.arange(4)], hl.full([2, 2], 7, dtype=torch.int32).reshape(4) // 2)
        return out, ints
        "#,
        "x = torch.tensor([[1.5, 2.5, 3.5], [0.0, 0.0, 0.0]])",
        "x",
    );
    let o = eval_ok(&src);
    let tenth = f64::from(bf16(0.1f32));
    assert_eq!(values(&o, "out"), vec![tenth, tenth, tenth, 1.5, 2.5, 3.5]);
    assert_eq!(values(&o, "ints"), vec![3.0; 4]);
}

/// A kernel that returns nothing outputs what it wrote: its written tensor parameters after the
/// call, in parameter order (a bare `return` too); the parameters it only reads are not outputs.
#[test]
fn a_kernel_that_returns_nothing_outputs_its_written_parameters() {
    for tail in ["", "return"] {
        let src = script(
            "",
            "y: torch.Tensor, x: torch.Tensor",
            &format!(
                r#"
                for t in hl.tile(x.size(0), block_size=4):
                    x[t] = x[t] + y[t]
                {tail}
                "#
            ),
            "x = torch.arange(8, dtype=torch.float32)\ny = torch.full([8], 2.0)",
            "y, x",
        );
        let out = eval_ok(&src);
        assert_eq!(out.outputs.len(), 1, "{tail:?}");
        assert_eq!(out.outputs[0].name, "x");
        assert_eq!(
            values(&out, "x"),
            (0..8).map(|i| f64::from(i) + 2.0).collect::<Vec<_>>()
        );
    }
}
