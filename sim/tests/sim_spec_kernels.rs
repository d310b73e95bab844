//! Every spec kernel (`corpus/spec-kernels/*.py`) the compiler lowers, through `pallas-sim`
//! against the reference, with zero padding and with poison padding: the executor must
//! produce the reference's outputs (within the comparison's tolerance) and never refuse a
//! construct; the outputs the script headers state must come out exactly. No JAX needed.

use compiler::compile::{CodegenOptions, compile};
use corpus::expectations::load_spec_kernels;
use fuzz::check::output_names;
use fuzz::compare::compare;
use fuzz::engines::EngineStatus;
use fuzz::engines::sim::Sim;
use pallas_diff_sim::{Interpreter, SimOptions};

#[test]
fn spec_kernels_agree_with_the_reference() {
    let kernels = load_spec_kernels().expect("spec kernels load");
    let mut failures = Vec::new();
    let mut ran = 0;
    for k in &kernels {
        let Ok(inputs) = k.case.kernel_tensor_args() else {
            continue;
        };
        let Ok(reference) = oracle::evaluate(&k.case) else {
            continue;
        };
        let scale = fuzz::compare::RefScale::of(&reference);
        let want: Vec<_> = reference.outputs.into_iter().map(|o| o.tensor).collect();
        let names = output_names(&k.case);
        for poison_padding in [false, true] {
            let options = CodegenOptions {
                poison_padding,
                ..CodegenOptions::default()
            };
            let Some(module) = compile(&k.case, &options).into_module() else {
                continue;
            };
            for interpreter in [Interpreter::Tpu, Interpreter::Generic] {
                ran += 1;
                let sim = Sim {
                    options: SimOptions {
                        interpreter,
                        ..SimOptions::default()
                    },
                };
                let label = format!(
                    "{} ({interpreter:?}{})",
                    k.name(),
                    if poison_padding { ", poison" } else { "" }
                );
                match sim.status(&module, &inputs) {
                    EngineStatus::Outputs(got) => {
                        if let Err(m) = compare(
                            fuzz::engines::EngineId::PallasSim,
                            &names,
                            &got,
                            &want,
                            scale,
                        ) {
                            failures.push(format!("{label}: {m}"));
                        }
                        for w in &k.expectations.outputs {
                            let Some(p) = names.iter().position(|n| n == &w.name) else {
                                continue;
                            };
                            if let Err(e) = w.check(&got[p], k.expectations.tolerance) {
                                failures.push(format!("{label}: header output: {e}"));
                            }
                        }
                    }
                    other => failures.push(format!(
                        "{label}: {}",
                        other.detail().unwrap_or_else(|| other.name().to_string())
                    )),
                }
            }
        }
    }
    println!("{ran} spec-kernel runs through pallas-sim");
    assert!(ran >= 80, "only {ran} spec-kernel runs");
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
