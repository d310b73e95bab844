//! Helpers shared by the oracle's integration tests: build a case script from a kernel body.

#![allow(dead_code)]

use lang::ir::Case;
use pallas_diff_oracle::{EvalError, Outputs, evaluate};

/// Removes the common leading indentation of `s` (lines of only whitespace ignored).
pub fn dedent(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| {
            if l.len() >= indent {
                &l[indent..]
            } else {
                l.trim_start()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A case script: `def k(<params>)` with `body` (any indentation), configured with
/// `block_sizes`, inputs defined by `inputs` (module level), called with `args`.
pub fn script(block_sizes: &str, params: &str, body: &str, inputs: &str, args: &str) -> String {
    let body: String = dedent(body).lines().map(|l| format!("    {l}\n")).collect();
    format!(
        "import torch\nimport helion\nimport helion.language as hl\n\n\n\
         @helion.kernel(backend=\"pallas\", static_shapes=True, \
         config=helion.Config(block_sizes=[{block_sizes}], pallas_loop_type=\"fori_loop\"))\n\
         def k({params}):\n{body}\n\n{}\nk({args})\n",
        dedent(inputs)
    )
}

/// Parses a script (panicking on frontend errors: tests write valid scripts).
pub fn parse(src: &str) -> Case {
    lang::frontend::parse_case(src, "test.py").unwrap_or_else(|e| panic!("{e}\n{src}"))
}

/// Parses and evaluates.
pub fn eval(src: &str) -> Result<Outputs, EvalError> {
    evaluate(&parse(src))
}

/// Parses and evaluates, panicking on an evaluation error.
pub fn eval_ok(src: &str) -> Outputs {
    eval(src).unwrap_or_else(|e| panic!("{e}\n{src}"))
}

/// The values of output `name`.
pub fn values(o: &Outputs, name: &str) -> Vec<f64> {
    o.get(name)
        .unwrap_or_else(|| panic!("no output `{name}`"))
        .values
        .clone()
}

/// Rounds an f32 to bf16 (nearest even) with the `half` crate, independently of the oracle.
pub fn bf16(x: f32) -> f32 {
    f32::from(half::bf16::from_f32(x))
}
