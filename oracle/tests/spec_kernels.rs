//! Every spec kernel of `corpus/spec-kernels/` that states the correct eager value of an output
//! (`# pallas-diff: output ...`) evaluates to it; every one marked `invalid` is refused; and
//! every other one evaluates or is refused without a panic.

use corpus::expectations::load_spec_kernels;
use pallas_diff_oracle::evaluate;

#[test]
fn spec_kernels_evaluate_to_their_stated_outputs() {
    let kernels = load_spec_kernels().expect("the spec-kernel corpus loads");
    assert!(!kernels.is_empty(), "no spec kernels found");
    let mut failures = Vec::new();
    let mut checked = 0;
    for k in &kernels {
        let name = k.name();
        let ex = &k.expectations;
        let result = evaluate(&k.case);
        if let Some(reason) = &ex.invalid {
            match &result {
                Err(_) => checked += 1,
                Ok(_) => failures.push(format!(
                    "{name}: evaluated, but is marked invalid ({reason})"
                )),
            }
            continue;
        }
        if ex.outputs.is_empty() {
            continue;
        }
        let outputs = match result {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        for expected in &ex.outputs {
            match outputs.get(&expected.name) {
                None => failures.push(format!("{name}: no output named `{}`", expected.name)),
                Some(t) => match expected.check(t, ex.tolerance) {
                    Ok(()) => checked += 1,
                    Err(msg) => failures.push(format!("{name}: {msg}")),
                },
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= 10, "only {checked} expectations were checked");
}
