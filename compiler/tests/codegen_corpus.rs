//! Every spec kernel of `corpus/spec-kernels` through `compile`: no panics, codegen-time
//! verdicts as expected, and every emitted module byte-compiles as Python.

mod codegen_support;

use codegen_support::{py_compile_all, python3};
use pallas_diff_compiler::compile::{CodegenOptions, Outcome, compile};
use pallas_diff_compiler::expectations::load_spec_kernels;

#[test]
fn every_spec_kernel_compiles_and_every_module_is_python() {
    let kernels = load_spec_kernels().expect("spec kernels load");
    let mut sources = Vec::new();
    let dump = std::env::var_os("PALLAS_DIFF_DUMP").map(std::path::PathBuf::from);
    let mut summary = Vec::new();
    for k in &kernels {
        for poison in [false, true] {
            let c = compile(
                &k.case,
                &CodegenOptions {
                    poison_padding: poison,
                },
            );
            let tag = if poison { "_poison" } else { "" };
            match c.outcome() {
                Outcome::Lowered(src) => {
                    if let Some(d) = &dump {
                        std::fs::create_dir_all(d).unwrap();
                        std::fs::write(d.join(format!("{}{tag}.py", k.name())), src).unwrap();
                    }
                    sources.push((format!("{}{tag}", k.name()), src.to_string()));
                    summary.push(format!("{}{tag}: lowered", k.name()));
                }
                Outcome::Rejected(r) => summary.push(format!("{}{tag}: rejected {r}", k.name())),
                Outcome::Gap(g) => summary.push(format!("{}{tag}: {g}", k.name())),
            }
        }
    }
    println!("{}", summary.join("\n"));
    let Some(py) = python3() else {
        println!("skipped py_compile: python3 is not on PATH");
        return;
    };
    let failures = py_compile_all(&py, &sources);
    assert!(
        failures.is_empty(),
        "modules that are not Python:\n{}",
        failures.join("\n")
    );
}
