//! The engines on real JAX: every CPU mode on hand-written Pallas modules, dtypes, the TPU
//! interpreter's bounds checks, Mosaic's lowering refusals, stage classification, caching.

mod common;

use common::*;
use lang::tensor::{DType, Tensor};
use pallas_diff_tpu_runner::{Mode, RunResult, Stage};

fn outputs(result: RunResult) -> Vec<Tensor> {
    match result.outcome {
        Ok(outputs) => outputs,
        Err(e) => panic!("kernel failed: {e}\n{}", e.traceback),
    }
}

#[test]
fn add_one_runs_in_every_cpu_mode() {
    let x = tensor(DType::Float32, &[8, 128], |i| i as f64 * 0.5 - 100.0);
    let want: Vec<f64> = x.values.iter().map(|v| v + 1.0).collect();
    for mode in [Mode::PallasInterpret, Mode::PallasTpuInterpret] {
        let out = outputs(
            pool()
                .run(&request(mode, ADD_ONE, vec![x.clone()]))
                .unwrap(),
        );
        assert_eq!(out.len(), 1, "{mode}");
        assert_eq!(
            (out[0].dtype, out[0].shape.as_slice()),
            (DType::Float32, &[8, 128][..])
        );
        assert_eq!(out[0].values, want, "{mode}");
    }
    let lowered = pool()
        .run(&request(Mode::PallasTpuLower, ADD_ONE, vec![x]))
        .unwrap();
    assert!(lowered.lowered);
    assert_eq!(lowered.outcome, Ok(vec![]));
}

#[test]
fn pallas_tpu_is_unavailable_without_a_tpu() {
    let x = tensor(DType::Float32, &[8, 128], |i| i as f64);
    let result = pool()
        .run(&request(Mode::PallasTpu, ADD_ONE, vec![x.clone()]))
        .unwrap();
    if pool().availability().tpu {
        let out = outputs(result);
        assert_eq!(out[0].values[5], 6.0);
        return;
    }
    let err = result.kernel_error().expect("no TPU here, so no outputs");
    assert!(err.is_engine_unavailable(), "{err}");
    assert_eq!(err.stage, Stage::Run);
    assert!(err.message.contains("no TPU device"), "{}", err.message);
}

#[test]
fn bf16_and_int32_round_trip_exactly() {
    // Values exactly representable in bf16, and int32 values that need all 32 bits.
    let x = tensor(DType::Bfloat16, &[8, 128], |i| (i % 64) as f64 * 0.25 - 8.0);
    let y = tensor(DType::Int32, &[8, 128], |i| {
        i as f64 * 1_000_003.0 - 500_000_000.0
    });
    for mode in [Mode::PallasInterpret, Mode::PallasTpuInterpret] {
        let out = outputs(
            pool()
                .run(&request(mode, MIXED_DTYPES, vec![x.clone(), y.clone()]))
                .unwrap(),
        );
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].dtype, DType::Bfloat16);
        assert_eq!(out[1].dtype, DType::Int32);
        let want_x: Vec<f64> = x
            .values
            .iter()
            .map(|v| DType::Bfloat16.round(v * 2.0 + 0.5))
            .collect();
        let want_y: Vec<f64> = y
            .values
            .iter()
            .map(|v| DType::Int32.round(v * 3.0 - 7.0))
            .collect();
        assert_eq!(out[0].values, want_x, "{mode}");
        // int32 wraps on overflow, as the device does.
        let wrap = |v: f64| f64::from((v as i64).wrapping_mul(3).wrapping_sub(7) as i32);
        assert_eq!(
            out[1].values,
            y.values.iter().map(|&v| wrap(v)).collect::<Vec<_>>(),
            "{mode}"
        );
        assert_eq!(want_y.len(), out[1].values.len());
    }
    let lowered = pool()
        .run(&request(Mode::PallasTpuLower, MIXED_DTYPES, vec![x, y]))
        .unwrap();
    assert!(lowered.lowered, "{:?}", lowered.kernel_error());
}

#[test]
fn emit_pipeline_runs_under_the_abstract_tpu_mesh() {
    let x = tensor(DType::Float32, &[16, 256], |i| i as f64);
    for mode in [Mode::PallasInterpret, Mode::PallasTpuInterpret] {
        let out = outputs(
            pool()
                .run(&request(mode, EMIT_PIPELINE, vec![x.clone()]))
                .unwrap(),
        );
        let want: Vec<f64> = x.values.iter().map(|v| v * 2.0).collect();
        assert_eq!(out[0].values, want, "{mode}");
    }
    let lowered = pool()
        .run(&request(Mode::PallasTpuLower, EMIT_PIPELINE, vec![x]))
        .unwrap();
    assert!(lowered.lowered, "{:?}", lowered.kernel_error());
}

#[test]
fn out_of_range_dynamic_read_raises_only_in_the_tpu_interpreter() {
    let x = tensor(DType::Float32, &[8, 128], |i| i as f64);
    // The generic interpreter clamps the start into range: rows 0..8, i.e. x itself.
    let clamped = outputs(
        pool()
            .run(&request(Mode::PallasInterpret, OOB_READ, vec![x.clone()]))
            .unwrap(),
    );
    assert_eq!(clamped[0].values, x.values);

    let strict = pool()
        .run(&request(
            Mode::PallasTpuInterpret,
            OOB_READ,
            vec![x.clone()],
        ))
        .unwrap();
    let err = strict
        .kernel_error()
        .expect("the TPU interpreter must raise");
    assert_eq!(err.stage, Stage::Run, "{err}");
    assert!(err.is("IndexError"), "{err:?}");
    assert!(
        err.message.contains("Out-of-bounds read"),
        "{}",
        err.message
    );

    // The interpreter state was reset: the same worker runs the next kernel normally.
    for _ in 0..2 {
        let out = outputs(
            pool()
                .run(&request(Mode::PallasTpuInterpret, ADD_ONE, vec![x.clone()]))
                .unwrap(),
        );
        assert_eq!(out[0].values[3], 4.0);
    }
    // A dynamic Ref slice is legal Mosaic: the lowering check accepts the kernel.
    let lowered = pool()
        .run(&request(Mode::PallasTpuLower, OOB_READ, vec![x]))
        .unwrap();
    assert!(lowered.lowered, "{:?}", lowered.kernel_error());
}

#[test]
fn dynamic_slice_on_a_value_fails_tpu_lowering() {
    let x = tensor(DType::Float32, &[16, 128], |i| i as f64);
    let out = outputs(
        pool()
            .run(&request(
                Mode::PallasInterpret,
                DYNAMIC_SLICE,
                vec![x.clone()],
            ))
            .unwrap(),
    );
    assert_eq!(out[0].values, x.values[..8 * 128]);

    let result = pool()
        .run(&request(Mode::PallasTpuLower, DYNAMIC_SLICE, vec![x]))
        .unwrap();
    let err = result
        .kernel_error()
        .expect("Mosaic has no dynamic_slice on values");
    assert_eq!(err.stage, Stage::Lower, "{err}");
    assert_eq!(err.kind, "NotImplementedError");
    assert!(err.message.contains("dynamic_slice"), "{}", err.message);
    assert!(!result.lowered);
}

#[test]
fn failures_are_classified_by_stage() {
    let x = tensor(DType::Float32, &[8, 128], |_| 1.0);
    let cases = [
        (
            "def make(interpret)\n    pass\n",
            Stage::Import,
            "SyntaxError",
        ),
        (
            "import not_a_module_pallas_diff\n",
            Stage::Import,
            "ModuleNotFoundError",
        ),
        ("x = 1\n", Stage::Import, "AttributeError"),
        (
            "def make(interpret):\n    raise RuntimeError('boom')\n",
            Stage::Trace,
            "RuntimeError",
        ),
        (
            // A static out-of-range slice is rejected while tracing, in every mode.
            "import jax\nfrom jax.experimental import pallas as pl\n\
             def make(interpret):\n\
             \x20   def kernel(x_ref, o_ref):\n\
             \x20       o_ref[...] = x_ref[pl.ds(4, 8), :]\n\
             \x20   def f(x):\n\
             \x20       return (pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), interpret=interpret)(x),)\n\
             \x20   return f\n",
            Stage::Trace,
            "ValueError",
        ),
    ];
    for (source, stage, kind) in cases {
        for mode in Mode::CPU {
            let result = pool().run(&request(mode, source, vec![x.clone()])).unwrap();
            let err = result
                .kernel_error()
                .unwrap_or_else(|| panic!("{mode} {source}: no error"));
            assert_eq!(
                (err.stage, err.kind.as_str()),
                (stage, kind),
                "{mode}: {err}\n{source}"
            );
        }
    }
}

#[test]
fn rerunning_a_compiled_kernel_hits_the_cache() {
    let source = format!("# cache test\n{ADD_ONE}");
    for mode in [Mode::PallasInterpret, Mode::PallasTpuInterpret] {
        // The pool has two workers; each compiles once, after that both hit their caches.
        let mut cached = 0;
        for k in 0..6 {
            let x = tensor(DType::Float32, &[8, 128], |i| (i + k) as f64);
            let result = pool().run(&request(mode, &source, vec![x])).unwrap();
            cached += usize::from(result.cached);
            assert_eq!(outputs(result)[0].values[0], k as f64 + 1.0);
        }
        assert!(cached >= 4, "{mode}: only {cached} of 6 runs were cached");
    }
}

#[test]
fn pool_serves_many_threads_at_once() {
    std::thread::scope(|s| {
        for t in 0..4 {
            s.spawn(move || {
                for k in 0..3 {
                    let x = tensor(DType::Float32, &[8, 128], |i| (i * t + k) as f64);
                    let out = outputs(
                        pool()
                            .run(&request(Mode::PallasInterpret, ADD_ONE, vec![x.clone()]))
                            .unwrap(),
                    );
                    assert_eq!(
                        out[0].values,
                        x.values.iter().map(|v| v + 1.0).collect::<Vec<_>>()
                    );
                }
            });
        }
    });
}

#[test]
fn probe_reports_the_pinned_jax_and_no_tpu() {
    let a = pool().probe().unwrap();
    let want = std::env::var("PALLAS_DIFF_JAX_VERSION").unwrap_or_else(|_| "0.10.2".into());
    if std::env::var_os("PALLAS_DIFF_PYTHON").is_none() {
        assert_eq!(a.jax_version, want);
        assert_eq!(a.jaxlib_version, want);
    }
    assert!(!a.devices.is_empty());
    assert_eq!(
        a.tpu,
        a.devices.iter().any(|d| d.to_lowercase().contains("tpu"))
    );
    let kind = std::env::var("PALLAS_DIFF_TPU_KIND").unwrap_or_else(|_| "TPU v5e".into());
    assert_eq!(a.tpu_kind, kind);
    assert_eq!(&a, pool().availability());
    assert_eq!(
        pallas_diff_tpu_runner::probe(&python())
            .unwrap()
            .jax_version,
        a.jax_version
    );
}

#[test]
fn module_output_and_input_never_touch_the_protocol() {
    let body = "print('{\"v\":1,\"id\":1,\"ok\":true}'); os.write(1, b'raw fd 1 write\\n'); \
                assert sys.stdin.read() == ''";
    let source = format!("import sys\n{}", add_one_after(body, "stdio"));
    let x = tensor(DType::Float32, &[8, 128], |i| i as f64);
    for mode in [Mode::PallasInterpret, Mode::PallasTpuInterpret] {
        let out = outputs(
            pool()
                .run(&request(mode, &source, vec![x.clone()]))
                .unwrap(),
        );
        assert_eq!(out[0].values[1], 2.0);
    }
}

#[test]
fn a_batch_gives_each_kernel_the_bits_it_gets_alone() {
    let x = tensor(DType::Float32, &[8, 128], |i| (i % 17) as f64 * 0.37 - 3.0);
    let mixed_inputs = vec![
        tensor(DType::Bfloat16, &[8, 128], |i| (i % 7) as f64 - 3.0),
        tensor(DType::Int32, &[8, 128], |i| i as f64 * 3.0),
    ];
    for mode in [Mode::PallasInterpret, Mode::PallasTpuInterpret] {
        let requests = vec![
            request(
                mode,
                &format!("# batch a {mode}\n{ADD_ONE}"),
                vec![x.clone()],
            ),
            request(
                mode,
                &format!("# batch b {mode}\n{MIXED_DTYPES}"),
                mixed_inputs.clone(),
            ),
            request(
                mode,
                &format!("# batch c {mode}\n{ADD_ONE}"),
                vec![x.clone()],
            ),
        ];
        let batch = pool().run_batch(mode, &requests);
        assert!(!batch.split, "{mode}");
        assert_eq!(batch.results.len(), 3);
        for (request, result) in requests.iter().zip(batch.results) {
            let result = result.unwrap();
            assert!(result.batched, "{mode}");
            let alone = pool()
                .run(&request.clone())
                .unwrap()
                .outcome
                .expect("runs alone");
            let got = outputs(result);
            assert_eq!(got.len(), alone.len());
            for (g, a) in got.iter().zip(&alone) {
                assert_eq!(g.to_le_bytes(), a.to_le_bytes(), "{mode}");
            }
        }
        assert!(batch.stages.compile > 0.0 && batch.stages.lower > 0.0);
    }
}

#[test]
fn a_failing_kernel_splits_its_batch_and_is_named_alone() {
    let x = tensor(DType::Float32, &[8, 128], |i| i as f64);
    let mode = Mode::PallasTpuInterpret;
    let requests = vec![
        request(mode, &format!("# split a\n{ADD_ONE}"), vec![x.clone()]),
        request(mode, &format!("# split b\n{OOB_READ}"), vec![x.clone()]),
        request(
            mode,
            "def make(interpret):\n    raise RuntimeError('boom')\n",
            vec![x.clone()],
        ),
        request(mode, &format!("# split c\n{ADD_ONE}"), vec![x.clone()]),
    ];
    let batch = pool().run_batch(mode, &requests);
    assert!(batch.split, "the out-of-range read fails the combined run");
    let results: Vec<RunResult> = batch.results.into_iter().map(Result::unwrap).collect();
    let want: Vec<f64> = x.values.iter().map(|v| v + 1.0).collect();
    for i in [0, 3] {
        assert!(!results[i].batched);
        assert_eq!(outputs(results[i].clone())[0].values, want);
    }
    let oob = results[1]
        .kernel_error()
        .expect("the out-of-range read raises");
    assert_eq!(
        (oob.stage, oob.cause.as_deref()),
        (Stage::Run, Some("IndexError"))
    );
    let boom = results[2].kernel_error().expect("make raises");
    assert_eq!(
        (boom.stage, boom.kind.as_str()),
        (Stage::Trace, "RuntimeError")
    );
}
