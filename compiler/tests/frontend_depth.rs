//! Input safety of the frontend against deep nesting: no script makes it (or any pass after it)
//! overflow its stack. Expressions deeper than `MAX_EXPR_DEPTH` and blocks deeper than
//! `MAX_BLOCK_DEPTH` are refused with a `FrontendError` naming the line, column and construct;
//! sources far past them (10,000 chained operators, parentheses, calls, subscripts, nested
//! blocks) are refused by the pre-parse scan before the Python parser builds an AST too deep to
//! drop. Everything runs on a 2 MiB thread, the stack of a spawned std or rayon thread (where
//! campaigns run cases): an overflow aborts the test binary.

use lang::frontend::{FrontendError, MAX_BLOCK_DEPTH, MAX_EXPR_DEPTH, load_case_text, parse_case};
use lang::ir::{Case, Span};
use lang::render::render_case;
use pallas_diff_compiler::compile::{CodegenOptions, compile};
use pallas_diff_compiler::verdict::Verdict;
use sim::{SimOptions, simulate};

/// Runs `f` on a thread with a 2 MiB stack.
fn on_2_mib_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .name("2-MiB-stack".into())
        .stack_size(2 << 20)
        .spawn(f)
        .expect("spawn a 2 MiB thread")
        .join()
        .expect("no panic on the 2 MiB thread")
}

/// A case script whose grid loop body (line 10, column 9) is `body`.
fn script(body: &str) -> String {
    format!(
        "import torch\nimport helion\nimport helion.language as hl\n\n\n\
         @helion.kernel(backend=\"pallas\", static_shapes=True, config=helion.Config(block_sizes=[]))\n\
         def k(x: torch.Tensor) -> torch.Tensor:\n    out = torch.zeros([2], dtype=torch.float32)\n\
         \x20   for g in hl.grid(1):\n        {body}\n    return out\n\n\nx = torch.ones(2)\nk(x)\n"
    )
}

/// `depth` nested `if g >= 0:` blocks in the grid loop, `stmt` innermost.
fn nested_ifs(depth: usize, stmt: &str) -> String {
    let mut body = String::new();
    for i in 0..depth {
        let indent = if i == 0 { 0 } else { 8 + 4 * i };
        body.push_str(&format!("{}if g >= 0:\n", " ".repeat(indent)));
    }
    body.push_str(&format!("{}{stmt}", " ".repeat(8 + 4 * depth)));
    script(&body)
}

/// The worst chain measured for the passes after the frontend (the Pallas executor's frames
/// per view level are the largest): `x[0:2]` then `views` alternating views. Its depth is
/// `views + 2` (the load, and its slice bound one below it).
fn view_chain(views: usize) -> String {
    let mut e = "x[0:2]".to_string();
    for i in 0..views {
        e.push_str(if i % 2 == 0 {
            ".unsqueeze(0)"
        } else {
            ".squeeze(0)"
        });
    }
    e
}

/// Parses on a 2 MiB thread, through both entry points; they must agree.
fn parse_small(source: String) -> Result<Case, FrontendError> {
    on_2_mib_stack(move || {
        let a = parse_case(&source, "deep.py");
        let b = load_case_text(&source, "deep.py");
        assert_eq!(a, b, "parse_case and load_case_text disagree");
        a
    })
}

fn assert_refused(source: String, construct: &str, line: u32, col: u32) {
    let e = match parse_small(source) {
        Ok(_) => panic!("accepted, expected a refusal at {line}:{col}"),
        Err(e) => e,
    };
    assert_eq!(e.construct, construct, "{e}");
    assert_eq!(e.span, Span::new(line, col), "{e}");
    let limit = match construct {
        "expression nesting" => MAX_EXPR_DEPTH,
        _ => MAX_BLOCK_DEPTH,
    };
    assert!(
        e.message.contains(&format!("deeper than {limit} levels")),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with(&format!("deep.py:{line}:{col}: ")),
        "{e}"
    );
}

// ---- far past the limits: the pre-parse scan ------------------------------------------------
//
// The scan counts operators, keywords and brackets; it refuses at the token that takes the
// count past 256 (8 x MAX_EXPR_DEPTH). In `a = ---...1` the `=` counts one and the leaf one, so
// that is minus number 255, column 9 + 4 + 254.

#[test]
fn ten_thousand_unary_minus_are_refused() {
    let src = script(&format!("a = {}1", "-".repeat(10_000)));
    assert_refused(src, "expression nesting", 10, 267);
}

#[test]
fn ten_thousand_nested_parentheses_are_refused() {
    // `out[g] = ` then the parentheses from column 18; each opens a level.
    let src = script(&format!(
        "out[g] = {}x[g]{}",
        "(".repeat(10_000),
        ")".repeat(10_000)
    ));
    assert_refused(src, "expression nesting", 10, 271);
}

#[test]
fn ten_thousand_chained_plus_are_refused() {
    let src = script(&format!("out[g] = x[g]{}", " + x[g]".repeat(10_000)));
    assert_refused(src, "expression nesting", 10, 905);
}

#[test]
fn ten_thousand_nested_subscripts_are_refused() {
    let src = script(&format!(
        "a = {}g{}",
        "x[".repeat(10_000),
        "]".repeat(10_000)
    ));
    assert_refused(src, "expression nesting", 10, 522);
}

#[test]
fn ten_thousand_chained_and_nested_calls_are_refused() {
    let src = script(&format!("a = x[g]{}", ".float()".repeat(10_000)));
    assert_refused(src, "expression nesting", 10, 1031);
    let src = script(&format!(
        "a = {}2{}",
        "hl.arange(".repeat(10_000),
        ")".repeat(10_000)
    ));
    assert_refused(src, "expression nesting", 10, 1285);
}

#[test]
fn deeply_nested_blocks_are_refused() {
    // The grid loop's body is block level 2 (the def is 1): the 32nd nested `if` is level 33.
    assert_refused(
        nested_ifs(200, "out[g] = x[g]"),
        "statement nesting",
        41,
        133,
    );
    let mut body = String::new();
    for i in 0..40 {
        let indent = if i == 0 { 0 } else { 8 + 4 * i };
        body.push_str(&format!("{}for g{i} in hl.grid(1):\n", " ".repeat(indent)));
    }
    body.push_str(&format!("{}out[g] = x[g]", " ".repeat(8 + 160)));
    assert_refused(script(&body), "statement nesting", 41, 133);
}

#[test]
fn ten_thousand_elifs_are_refused() {
    // `elif` nests without indenting: the body of the 30th is level 2 + 30 + 1.
    let src = script(&format!(
        "if g >= 0:\n            out[g] = x[g]\n{}",
        "        elif g >= 1:\n            out[g] = x[g]\n".repeat(10_000)
    ));
    assert_refused(src, "statement nesting", 71, 13);
}

#[test]
fn a_deep_input_literal_is_refused() {
    let src = script("out[g] = x[g]").replace(
        "x = torch.ones(2)",
        &format!(
            "x = torch.tensor({}1.0{})",
            "[".repeat(10_000),
            "]".repeat(10_000)
        ),
    );
    let e = parse_small(src).expect_err("refused");
    assert_eq!(e.construct, "expression nesting", "{e}");
    assert_eq!(e.span.line, 14, "{e}");
    // Deep enough to need MAX_EXPR_DEPTH levels, shallow enough for the scan: refused by the
    // rule on the IR, at the input.
    let src = script("out[g] = x[g]").replace(
        "x = torch.ones(2)",
        &format!("x = torch.tensor({}1.0{})", "[".repeat(40), "]".repeat(40)),
    );
    let e = parse_small(src).expect_err("refused");
    assert_eq!(e.construct, "expression nesting", "{e}");
    assert_eq!(e.span, Span::new(14, 1), "{e}");
}

#[test]
fn long_but_shallow_sources_are_accepted() {
    let values = vec!["-1.5"; 5000].join(", ");
    let src = script("out[g] = x[g]").replace(
        "x = torch.ones(2)",
        &format!("x = torch.tensor([{values}])"),
    );
    parse_small(src).expect("a long flat literal is a case");
    let body = "a = x[g] + x[g] * 2.0 - x[g]\n        ".repeat(2000) + "out[g] = a";
    parse_small(script(&body)).expect("many short statements are a case");
    // Parentheses, operators and brackets in strings and comments count nothing.
    let src = script(&format!("out[g] = x[g]  # {}", "((((+".repeat(1000))).replace(
        "import torch\n",
        &format!("import torch\n\"\"\"{}\"\"\"\n", "[[[[-".repeat(1000)),
    );
    parse_small(src).expect("strings and comments are not nesting");
}

// ---- at the limits: the precise rule ----------------------------------------------------------

#[test]
fn an_expression_at_the_limit_is_accepted_one_deeper_is_refused() {
    let at_limit = view_chain(MAX_EXPR_DEPTH - 2);
    parse_small(script(&format!("out[0:2] = {at_limit}"))).expect("at the limit");
    // One more view: the slice bound `0` of `x[0:2]` (column 9 + 11 + 2) is level 33.
    let deeper = view_chain(MAX_EXPR_DEPTH - 1);
    assert_refused(
        script(&format!("out[0:2] = {deeper}")),
        "expression nesting",
        10,
        22,
    );
    // A `+` chain of n operands: its first `+` is level n - 1, the leftmost `x[g]` level n and
    // its index `g` level n + 1. With 32 operands that `g` (column 9 + 9 + 2) is level 33.
    let chain = |n: usize| format!("out[g] = x[g]{}", " + x[g]".repeat(n - 1));
    parse_small(script(&chain(MAX_EXPR_DEPTH - 1))).expect("at the limit");
    assert_refused(script(&chain(MAX_EXPR_DEPTH)), "expression nesting", 10, 20);
}

#[test]
fn blocks_at_the_limit_are_accepted_one_deeper_is_refused() {
    // The grid loop is block 1, so MAX_BLOCK_DEPTH - 1 nested ifs fill the limit.
    parse_small(nested_ifs(MAX_BLOCK_DEPTH - 1, "out[g] = x[g]")).expect("at the limit");
    // The next `if` (line 10 + 7, column 9 + 4 * 7) is block 9.
    assert_refused(
        nested_ifs(MAX_BLOCK_DEPTH, "out[g] = x[g]"),
        "statement nesting",
        17,
        37,
    );
    // An elif chain: `if` is block 2, elif number k block 2 + k.
    let elifs = |n: usize| {
        script(&format!(
            "if g >= 0:\n            out[g] = x[g]\n{}",
            "        elif g >= 1:\n            out[g] = x[g]\n".repeat(n)
        ))
    };
    parse_small(elifs(MAX_BLOCK_DEPTH - 2)).expect("at the limit");
    assert_refused(elifs(MAX_BLOCK_DEPTH - 1), "statement nesting", 24, 9);
}

/// Every pass after the frontend — validation, tracing, planning, lowering, printing, the
/// Pallas executor, rendering, serde, clone and drop — on a case at both limits at once, with
/// the chain those passes pay most for, on a 2 MiB thread. This is the margin
/// `MAX_EXPR_DEPTH`'s documentation states; a pass whose frames grow past it fails here.
#[test]
fn every_pass_runs_at_both_limits_on_a_2_mib_thread() {
    for stmt in [
        format!("out[0:2] = {}", view_chain(MAX_EXPR_DEPTH - 2)),
        // n `+ x[g].float()` terms: the rhs index `g` of the first `+` is level n + 3.
        format!(
            "out[g] = x[g]{}",
            " + x[g].float()".repeat(MAX_EXPR_DEPTH - 3)
        ),
    ] {
        let src = nested_ifs(MAX_BLOCK_DEPTH - 1, &stmt);
        on_2_mib_stack(move || {
            let case = parse_case(&src, "limits.py").expect("a case at both limits");
            let compiled = compile(&case, &CodegenOptions::default());
            assert_eq!(compiled.verdict(), Verdict::Lowered, "{stmt}");
            let module = compiled.module().expect("a module");
            assert!(compiled.source().is_some());
            let inputs = case.input_tensors().expect("inputs");
            let outputs = simulate(module, &inputs, &SimOptions::default()).expect("it runs");
            assert_eq!(outputs.len(), 1);
            let rendered = render_case(&case);
            let back = parse_case(&rendered, "rendered.py").expect("the rendering parses");
            assert_eq!(back.without_spans(), case.without_spans());
            let json = serde_json::to_string(&case).expect("serializes");
            // The JSON of this case nests past serde_json's recursion limit of 128 (3 JSON
            // levels per expression level, 4 per block): reading it back is a clean refusal.
            let e = load_case_text(&json, "limits.json").expect_err("too deep for serde_json");
            assert_eq!(e.construct, "json nesting", "{e}");
            let copy = case.clone();
            assert_eq!(copy, case);
            drop(copy);
            drop(compiled);
        });
    }
}
