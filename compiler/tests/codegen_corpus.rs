//! Every spec kernel of `corpus/spec-kernels` through `compile`: no panics, the verdict its
//! header states (validation, planner and codegen together), no codegen gap where it expects a
//! lowering, and every emitted module byte-compiles as Python.

mod codegen_support;

use codegen_support::{py_compile_all, python3};
use corpus::expectations::{ExpectedVerdict, load_spec_kernels};
use pallas_diff_compiler::compile::{CodegenOptions, Compiled, NotModelled, Refused, compile};
use pallas_diff_compiler::verdict::Verdict;

#[test]
fn every_spec_kernel_compiles_and_every_module_is_python() {
    let kernels = load_spec_kernels().expect("spec kernels load");
    let mut sources = Vec::new();
    let dump = std::env::var_os("PALLAS_DIFF_DUMP").map(std::path::PathBuf::from);
    let mut summary = Vec::new();
    let mut wrong = Vec::new();
    for k in &kernels {
        for poison in [false, true] {
            let c = compile(
                &k.case,
                &CodegenOptions {
                    poison_padding: poison,
                    ..Default::default()
                },
            );
            let tag = if poison { "_poison" } else { "" };
            let agrees = match (k.expectations.verdict, &c.verdict()) {
                (None, _) => true,
                // The documented codegen gap (grouping-2 variants) stands in for "lowered".
                (Some(ExpectedVerdict::Lowered), Verdict::Lowered) => {
                    c.gap().is_none() || k.case.config.worklist_grouping == Some(2)
                }
                (Some(ExpectedVerdict::Rejected { class, rule }), Verdict::Rejected(r)) => {
                    r.rule == rule && r.class() == class
                }
                (Some(_), _) => false,
            };
            if !agrees {
                wrong.push(format!(
                    "{}: expected {:?}, compiled to {}",
                    k.name(),
                    k.expectations.verdict,
                    pallas_diff_compiler::compile::verdict_line(&c)
                ));
            }
            match &c {
                Compiled::Lowered(_) => {
                    let src = c.source().expect("a lowered compile has a module");
                    if let Some(d) = &dump {
                        std::fs::create_dir_all(d).unwrap();
                        std::fs::write(d.join(format!("{}{tag}.py", k.name())), src).unwrap();
                    }
                    sources.push((format!("{}{tag}", k.name()), src.to_string()));
                    summary.push(format!("{}{tag}: lowered", k.name()));
                }
                Compiled::Rejected(Refused { rejection: r, .. }) => {
                    summary.push(format!("{}{tag}: rejected {r}", k.name()))
                }
                Compiled::Gap(NotModelled { gap: g, .. }) => {
                    summary.push(format!("{}{tag}: {g}", k.name()))
                }
            }
        }
    }
    println!("{}", summary.join("\n"));
    assert!(
        wrong.is_empty(),
        "verdicts differ from the headers:\n{}",
        wrong.join("\n")
    );
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

#[test]
fn py_compile_check_reports_a_syntax_error() {
    let Some(py) = python3() else {
        println!("skipped: python3 is not on PATH");
        return;
    };
    let bad = vec![
        ("ok".to_string(), "x = 1\n".to_string()),
        ("bad".to_string(), "def f(:\n".to_string()),
    ];
    let failures = py_compile_all(&py, &bad);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].contains("bad.py"), "{failures:?}");
}
