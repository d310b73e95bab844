//! Standalone reproducers: a `repro.py` that needs only JAX and NumPy.
//!
//! The file holds the emitted Pallas module verbatim, the kernel's inputs as literals, the
//! reference's (eager PyTorch semantics) outputs, and a `main` that runs the module the way the
//! finding's engine did (the JAX interpreter, the TPU interpreter with strict bounds and NaN
//! padding, the Mosaic lowering, or a TPU) and compares with `np.testing.assert_allclose` at
//! each output's tolerance (`fuzz::compare::Tolerance::for_output`). It exits non-zero while
//! the bug is there and prints `OK` once it is fixed, so a Helion or JAX engineer can run it
//! without pallas-diff.

use crate::tensor::NamedTensor;
use fuzz::compare::Tolerance;
use lang::ir::{Case, ParamKind};
use lang::tensor::{DType, Tensor};
use std::fmt::Write;
use tpu_runner::Mode;

/// Why no reproducer can be written.
#[derive(Debug, thiserror::Error)]
pub enum ReproError {
    /// The case's inputs cannot be built.
    #[error("the case's inputs cannot be built: {0}")]
    Inputs(String),
}

fn np_dtype(d: DType) -> &'static str {
    match d {
        DType::Float32 => "np.float32",
        DType::Bfloat16 => "jnp.bfloat16",
        DType::Int32 => "np.int32",
    }
}

fn py_number(d: DType, v: f64) -> String {
    if v.is_nan() {
        return "np.nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "np.inf" } else { "-np.inf" }.into();
    }
    match d {
        DType::Int32 => format!("{}", v as i64),
        // The shortest decimal that reads back as the same float32 (bf16 values are float32s).
        DType::Float32 | DType::Bfloat16 => {
            let s = format!("{}", v as f32);
            if s.contains(['.', 'e', 'E']) {
                s
            } else {
                format!("{s}.0")
            }
        }
    }
}

fn py_list(d: DType, values: &[f64]) -> String {
    let mut out = String::from("[");
    let mut line = 0;
    for (i, &v) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
            line += 2;
        }
        let s = py_number(d, v);
        if line + s.len() > 88 {
            out.push_str("\n    ");
            line = 4;
        }
        line += s.len();
        out.push_str(&s);
    }
    out.push(']');
    out
}

fn tuple(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A NumPy expression building exactly `t`: `np.full` when constant, `np.arange` when it is
/// `0..n`, a broadcast of the leading dims when the trailing ones are constant, else a literal.
pub fn numpy_literal(t: &Tensor) -> String {
    let dt = np_dtype(t.dtype);
    let shape = tuple(&t.shape);
    let vals = &t.values;
    let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    if vals.is_empty() {
        return format!("np.zeros({shape}, dtype={dt})");
    }
    if vals.iter().all(|&v| same(v, vals[0])) {
        return format!(
            "np.full({shape}, {}, dtype={dt})",
            py_number(t.dtype, vals[0])
        );
    }
    if vals.iter().enumerate().all(|(i, &v)| v == i as f64) {
        return format!("np.arange({}, dtype={dt}).reshape({shape})", vals.len());
    }
    for split in 1..t.shape.len() {
        let inner: usize = t.shape[split..].iter().product();
        if inner <= 1 {
            break;
        }
        let constant = vals.chunks(inner).all(|c| c.iter().all(|&v| same(v, c[0])));
        if constant {
            let lead: Vec<f64> = vals.chunks(inner).map(|c| c[0]).collect();
            let mut kept: Vec<usize> = t.shape[..split].to_vec();
            kept.extend(std::iter::repeat_n(1, t.shape.len() - split));
            return format!(
                "np.broadcast_to(np.array({}, dtype={dt}).reshape({}), {shape}).copy()",
                py_list(t.dtype, &lead),
                tuple(&kept)
            );
        }
    }
    format!(
        "np.array({}, dtype={dt}).reshape({shape})",
        py_list(t.dtype, vals)
    )
}

/// The names of the kernel's tensor parameters, in order (the module's inputs).
fn tensor_param_names(case: &Case) -> Vec<String> {
    case.kernel
        .params
        .iter()
        .filter(|p| p.kind == ParamKind::Tensor)
        .map(|p| p.name.clone())
        .collect()
}

/// The reference's outputs of a case and the largest float magnitude it computed on the way
/// (`oracle::Outputs::magnitude`): what each output's tolerance is derived from.
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    /// The outputs, in return order.
    pub outputs: Vec<NamedTensor>,
    /// The evaluation's magnitude watermark.
    pub magnitude: f64,
}

/// The standalone reproducer of `case` for the emitted module `emitted`, run as engine `mode`
/// does, against the reference outputs `expected` (unused for `pallas-tpu-lower`, which only
/// lowers).
pub fn repro_py(
    case: &Case,
    emitted: &str,
    mode: Mode,
    expected: &Expected,
    title: &str,
) -> Result<String, ReproError> {
    let inputs = case
        .kernel_tensor_args()
        .map_err(|e| ReproError::Inputs(e.to_string()))?;
    let mut names = tensor_param_names(case);
    while names.len() < inputs.len() {
        names.push(format!("input_{}", names.len()));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Standalone reproducer written by pallas-diff {}: {}\n\
         #\n\
         # Needs only JAX and NumPy. `python repro.py` runs the Pallas module below as `{mode}`\n\
         # does and compares its outputs with the eager reference (np.testing.assert_allclose at\n\
         # pallas-diff's tolerance of each output): it fails while the bug is present and prints OK once fixed.\n\
         # The kernel: {} (Helion case script in the report).\n",
        env!("CARGO_PKG_VERSION"),
        title.replace('\n', " "),
        case.kernel.name
    );
    out.push_str("# ---- the emitted Pallas module, verbatim ----------------------------------\n");
    out.push_str(emitted);
    if !emitted.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(
        "\n\n# ---- the reproducer ---------------------------------------------------------\n",
    );
    out.push_str("import sys\n\nimport numpy as np\nimport jax\nimport jax.numpy as jnp\n");
    out.push_str("from jax.experimental.pallas import tpu as pltpu\n\n");
    let _ = writeln!(out, "MODE = {:?}\n", mode.name());
    out.push_str("\ndef repro_inputs():\n    return [\n");
    for (name, t) in names.iter().zip(&inputs) {
        let _ = writeln!(out, "        # {name}\n        {},", numpy_literal(t));
    }
    out.push_str("    ]\n\n\ndef repro_expected():\n");
    out.push_str(
        "    \"\"\"(name, reference value, rtol, atol) per output, in return order.\"\"\"\n",
    );
    out.push_str("    return [\n");
    for t in &expected.outputs {
        let tol = Tolerance::for_output(&t.tensor(), expected.magnitude);
        let _ = writeln!(
            out,
            "        ({:?}, {}, {:e}, {:e}),",
            t.name,
            numpy_literal(&t.tensor()),
            tol.rtol,
            tol.atol
        );
    }
    out.push_str("    ]\n");
    out.push_str(REPRO_MAIN);
    Ok(out)
}

/// The driver: the same `interpret` values and abstract TPU mesh as pallas-diff's JAX worker.
const REPRO_MAIN: &str = r#"

def repro_run(inputs):
    if MODE == "pallas-tpu":
        return jax.jit(make(False))(*inputs)
    from jax._src.mesh import AbstractDevice

    device = AbstractDevice(device_kind="TPU v5e", num_cores=1, platform="tpu")
    mesh = jax.sharding.AbstractMesh((1,), ("x",), abstract_device=device)
    with jax.sharding.use_abstract_mesh(mesh):
        if MODE == "pallas-tpu-lower":
            specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in inputs]
            jax.export.export(jax.jit(make(False)), platforms=["tpu"])(*specs)
            return None
        interpret = {
            "pallas-interpret": True,
            "pallas-tpu-interpret": pltpu.InterpretParams(
                out_of_bounds_reads="raise", uninitialized_memory="nan"
            ),
        }[MODE]
        return jax.jit(make(interpret))(*inputs)


def repro_main():
    outs = repro_run(repro_inputs())
    if MODE == "pallas-tpu-lower":
        print("OK: the module lowers for TPU")
        return 0
    outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
    expected = repro_expected()
    assert len(outs) == len(expected), f"{len(outs)} outputs, the reference has {len(expected)}"
    for got, (name, want, rtol, atol) in zip(outs, expected):
        got = np.asarray(got)
        assert got.shape == want.shape, f"output {name}: shape {got.shape}, reference {want.shape}"
        assert got.dtype == want.dtype, f"output {name}: dtype {got.dtype}, reference {want.dtype}"
        np.testing.assert_allclose(
            got.astype(np.float64),
            want.astype(np.float64),
            rtol=rtol,
            atol=atol,
            equal_nan=True,
            err_msg=f"output {name}: {MODE} disagrees with the eager reference",
        )
    print(f"OK: every output matches the reference under {MODE}")
    return 0


if __name__ == "__main__":
    sys.exit(repro_main())
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_compact_and_exact() {
        let t = |shape: Vec<usize>, values: Vec<f64>| Tensor::new(DType::Float32, shape, values);
        assert_eq!(
            numpy_literal(&t(vec![2, 2], vec![1.5; 4])),
            "np.full((2, 2), 1.5, dtype=np.float32)"
        );
        assert_eq!(
            numpy_literal(&t(vec![2, 2], vec![0.0, 1.0, 2.0, 3.0])),
            "np.arange(4, dtype=np.float32).reshape((2, 2))"
        );
        assert_eq!(
            numpy_literal(&t(vec![3, 2], vec![1.0, 1.0, 2.0, 2.0, 4.0, 4.0])),
            "np.broadcast_to(np.array([1.0, 2.0, 4.0], dtype=np.float32).reshape((3, 1)), (3, 2)).copy()"
        );
        assert_eq!(
            numpy_literal(&t(vec![3], vec![0.1, f64::NAN, 2.0])),
            format!(
                "np.array([{}, np.nan, 2.0], dtype=np.float32).reshape((3,))",
                0.1f32
            )
        );
    }
}
