//! The case-JSON reader (`load_case_text` on the IR's JSON form): a JSON case goes through the
//! same well-formedness rules as a case script, so a JSON file cannot carry a case no script
//! could (a call without its arguments, `block_sizes: [0]`, an unbound name, a wrong version,
//! an over-deep expression) into the compiler and the reference. Every refusal names the file,
//! the line and column in the JSON, and the construct; none panics or overflows a 2 MiB stack.

use lang::frontend::{
    CaseFormat, FrontendError, MAX_EXPR_DEPTH, case_format, load_case_text, parse_case,
};
use lang::ir::{BinOp, Case, Expr, ExprKind, Span, StmtKind};
use serde_json::{Value, json};
use std::path::PathBuf;

const SCRIPT: &str = r#"import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True, config=helion.Config(block_sizes=[4]))
def k(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros([8], dtype=torch.float32)
    for t in hl.tile(x.size(0)):
        a = x[t]
        out[t] = a
    return out


x = torch.ones(8)
k(x)
"#;

fn base_case() -> Case {
    parse_case(SCRIPT, "case.py").expect("the base script is a case")
}

fn base_json() -> Value {
    serde_json::to_value(base_case()).expect("serializes")
}

/// Runs `f` on a thread with a 2 MiB stack (a spawned std or rayon thread's).
fn on_2_mib_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("no panic")
}

/// Loads `text` as `path` on a 2 MiB thread.
fn load(text: &str, path: &str) -> Result<Case, FrontendError> {
    let (text, path) = (text.to_string(), path.to_string());
    on_2_mib_stack(move || load_case_text(&text, &path))
}

/// 1-based line and column (characters) of byte `offset`.
fn span_at(text: &str, offset: usize) -> Span {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |k| k + 1);
    Span::new(line as u32, before[start..].chars().count() as u32 + 1)
}

/// Where the first non-whitespace character after the first `marker` is.
fn after(text: &str, marker: &str) -> Span {
    let k = text
        .find(marker)
        .unwrap_or_else(|| panic!("{marker:?} not in\n{text}"))
        + marker.len();
    let ws = text[k..].len() - text[k..].trim_start().len();
    span_at(text, k + ws)
}

/// Where the first `marker` starts.
fn at(text: &str, marker: &str) -> Span {
    span_at(
        text,
        text.find(marker)
            .unwrap_or_else(|| panic!("{marker:?} not in\n{text}")),
    )
}

/// Where the first non-whitespace character after the first `marker` after `first` is.
fn after_in(text: &str, first: &str, marker: &str) -> Span {
    let k = text
        .find(first)
        .unwrap_or_else(|| panic!("{first:?} not in\n{text}"));
    let j = k + text[k..].find(marker).expect("marker") + marker.len();
    let ws = text[j..].len() - text[j..].trim_start().len();
    span_at(text, j + ws)
}

/// Pretty-prints `v`, loads it as `case.json`, and expects a refusal of `construct` whose
/// message contains `fragment`, at the position `locate` finds in the text.
fn assert_refused(
    v: &Value,
    construct: &str,
    fragment: &str,
    locate: impl Fn(&str) -> Span,
) -> FrontendError {
    let text = serde_json::to_string_pretty(v).expect("pretty");
    let e = load(&text, "case.json").expect_err("refused");
    assert_eq!(e.construct, construct, "{e}\n{text}");
    assert!(e.message.contains(fragment), "{e}");
    let at = locate(&text);
    assert_eq!(e.span, at, "{e}\n{text}");
    assert!(
        e.to_string()
            .starts_with(&format!("case.json:{}:{}: ", at.line, at.col)),
        "{e}"
    );
    e
}

#[test]
fn a_case_round_trips_through_json_and_is_detected_by_content() {
    let case = base_case();
    let pretty = serde_json::to_string_pretty(&case).unwrap();
    let compact = serde_json::to_string(&case).unwrap();
    for (text, path) in [
        (pretty.as_str(), "case.json"),
        (compact.as_str(), "case.json"),
        // No extension, another extension, leading whitespace: the content says JSON.
        (pretty.as_str(), "case"),
        (compact.as_str(), "finding/case.txt"),
        (&*format!("\n\t  {compact}"), "case"),
    ] {
        assert_eq!(case_format(text, path), CaseFormat::Json, "{path}");
        assert_eq!(load(text, path).expect("loads"), case, "{path}");
    }
    assert_eq!(case_format(SCRIPT, "case"), CaseFormat::Script);
    assert_eq!(load(SCRIPT, "case").expect("a script"), case);
}

#[test]
fn a_json_extension_makes_json_whatever_the_text() {
    let e = load(SCRIPT, "case.json").expect_err("a script is not JSON");
    assert_eq!(e.construct, "json", "{e}");
    assert_eq!(e.span, Span::new(1, 1), "{e}");
    assert!(e.message.starts_with("not a case JSON file: "), "{e}");
}

#[test]
fn malformed_json_names_line_and_column() {
    let text = "{\n  \"version\": 1,\n  \"kernel\": [}\n";
    let e = load(text, "bad.json").expect_err("malformed");
    assert_eq!(e.construct, "json", "{e}");
    assert_eq!(e.span, Span::new(3, 14), "{e}");
    assert!(!e.message.contains(" at line "), "the span says where: {e}");
    // Missing fields and wrong types are serde errors with positions too.
    let e = load("{\"version\": 1}", "case").expect_err("fields missing");
    assert_eq!(e.construct, "json", "{e}");
    assert!(e.message.contains("missing field"), "{e}");
}

#[test]
fn block_size_zero_is_refused_as_in_a_script() {
    let mut v = base_json();
    v["config"]["block_sizes"] = json!([0]);
    assert_refused(
        &v,
        "block_sizes",
        "block size 0 is not a positive int",
        |t| after(t, "\"block_sizes\": ["),
    );
    // The script spelling of the same case is refused by the same rule.
    let e = parse_case(
        &SCRIPT.replace("block_sizes=[4]", "block_sizes=[0]"),
        "case.py",
    )
    .expect_err("refused");
    assert_eq!(e.construct, "block_sizes");
    assert!(e.message.contains("block size 0 is not a positive int"));
}

#[test]
fn block_sizes_of_the_wrong_length_are_refused() {
    let mut v = base_json();
    v["config"]["block_sizes"] = json!([4, 4]);
    assert_refused(
        &v,
        "block_sizes",
        "block_sizes has 2 entries but the kernel registers 1",
        |t| after(t, "\"block_sizes\":"),
    );
}

#[test]
fn a_call_without_its_arguments_is_refused() {
    let mut v = base_json();
    v["call"]["args"] = json!([]);
    assert_refused(
        &v,
        "call",
        "`k` takes 1 arguments but the call passes 0",
        |t| after(t, "\"args\":"),
    );
}

#[test]
fn call_arguments_of_the_wrong_kind_or_unknown_are_refused() {
    for arg in [json!({"int": 3}), json!({"input": "y"})] {
        let mut v = base_json();
        v["call"]["args"] = json!([arg]);
        assert_refused(
            &v,
            "call",
            "argument for parameter `x` must be a module-level input tensor",
            |t| after(t, "\"args\": ["),
        );
    }
}

#[test]
fn another_version_is_refused() {
    let mut v = base_json();
    v["version"] = json!(2);
    assert_refused(
        &v,
        "version",
        "case format version 2 is not supported (this build reads 1)",
        |t| after(t, "\"version\":"),
    );
}

#[test]
fn an_unbound_name_is_refused_with_both_positions() {
    let mut v = base_json();
    // `out[t] = a` becomes `out[t] = nope`.
    let value = &mut v["kernel"]["body"][1]["kind"]["for"]["body"][1]["kind"]["store"]["value"];
    value["kind"] = json!({"name": "nope"});
    let e = assert_refused(&v, "name", "name `nope` is not defined", |t| {
        at(t, "\"nope\"")
    });
    assert!(e.message.contains("(recorded span 11:18)"), "{e}");
}

#[test]
fn constructs_no_script_can_spell_are_refused() {
    // A device subscript of a host tensor (a script spells that as a load).
    let mut v = base_json();
    let a = &mut v["kernel"]["body"][1]["kind"]["for"]["body"][0]["kind"]["assign"]["value"];
    a["kind"] = json!({"subscript": {
        "value": {"kind": {"name": "x"}, "span": {"line": 10, "col": 13}},
        "indices": ["full"],
    }});
    assert_refused(&v, "subscript", "is a load, not a device subscript", |t| {
        after_in(t, "\"subscript\":", "\"value\":")
    });
    // A store outside the device loops.
    let mut v = base_json();
    let store = v["kernel"]["body"][1]["kind"]["for"]["body"][1].clone();
    v["kernel"]["body"]
        .as_array_mut()
        .unwrap()
        .insert(1, store.clone());
    assert_refused(
        &v,
        "subscript store",
        "outside any hl.tile/hl.grid loop",
        // The inserted store is the first in text order.
        |t| after(t, "\"store\":"),
    );
    // An int no literal spells (`-9223372036854775808` is a minus on an int64 overflow).
    let mut v = base_json();
    let a = &mut v["kernel"]["body"][1]["kind"]["for"]["body"][0]["kind"]["assign"]["value"];
    a["kind"] = json!({"int": i64::MIN});
    assert_refused(&v, "int", "int literal out of range", |t| {
        at(t, "-9223372036854775808")
    });
    // A name that is not an identifier.
    let mut v = base_json();
    v["kernel"]["body"][1]["kind"]["for"]["body"][0]["kind"]["assign"]["target"] = json!("a b");
    assert_refused(
        &v,
        "assignment",
        "\"a b\" is not a Python identifier",
        |t| at(t, "\"a b\""),
    );
}

#[test]
fn a_tensor_literal_whose_values_do_not_fill_its_shape_is_refused() {
    // Rendering or running it would index past its values.
    let mut v = base_json();
    v["inputs"][0]["ctor"] = json!({"tensor": {
        "shape": [8], "values": [1.0, 2.0], "float_literals": true,
    }});
    assert_refused(
        &v,
        "torch.tensor",
        "torch.tensor of shape [8] holds 2 values",
        |t| after(t, "\"values\":"),
    );
}

/// A chain of `depth` `+` nodes over int literals.
fn plus_chain(depth: usize) -> Expr {
    let span = Span::new(10, 13);
    let mut e = Expr::int(1, span);
    for _ in 0..depth {
        e = Expr::new(
            ExprKind::Binary {
                op: BinOp::Add,
                lhs: Box::new(e),
                rhs: Box::new(Expr::int(1, span)),
            },
            span,
        );
    }
    e
}

/// The base case with `a = <value>` in the loop.
fn with_loop_value(value: Expr) -> Case {
    let mut case = base_case();
    let StmtKind::For(lp) = &mut case.kernel.body[1].kind else {
        panic!("no loop")
    };
    let StmtKind::Assign { value: v, .. } = &mut lp.body[0].kind else {
        panic!("no assignment")
    };
    *v = value;
    case
}

#[test]
fn an_over_deep_expression_in_json_is_refused_at_its_level() {
    // MAX_EXPR_DEPTH + 1 levels fit serde_json's recursion limit (3 JSON levels each); the
    // rule on the IR refuses the first node past the limit.
    let text = serde_json::to_string(&with_loop_value(plus_chain(MAX_EXPR_DEPTH))).unwrap();
    let e = load(&text, "deep.json").expect_err("refused");
    assert_eq!(e.construct, "expression nesting", "{e}");
    assert!(e.message.contains("deeper than 32 levels"), "{e}");
    // The node at level MAX_EXPR_DEPTH + 1 is the innermost binary's left operand: the chain's
    // first int in text order, which serializes outer nodes and left operands first.
    let chain = text.find("{\"kind\":{\"binary\"").expect("the chain");
    let k = chain + text[chain..].find("{\"kind\":{\"int\"").expect("a leaf");
    assert_eq!(e.span, span_at(&text, k), "{e}");
    // One level shallower is a case.
    let text = serde_json::to_string(&with_loop_value(plus_chain(MAX_EXPR_DEPTH - 1))).unwrap();
    load(&text, "deep.json").expect("at the limit");
}

#[test]
fn json_deeper_than_serde_json_reads_is_a_clean_error() {
    // Far past serde_json's recursion limit of 128: refused before anything recurses over it.
    let text = serde_json::to_string(&with_loop_value(plus_chain(100))).unwrap();
    let e = load(&text, "deep.json").expect_err("too deep");
    assert_eq!(e.construct, "json nesting", "{e}");
    assert!(e.message.contains("128"), "{e}");
    assert_eq!(e.span.line, 1, "{e}");
    // 100,000 levels, spliced in as text.
    let mark = "{\"kind\":{\"name\":\"MARK\"},\"span\":{\"line\":10,\"col\":13}}";
    let text =
        serde_json::to_string(&with_loop_value(Expr::name("MARK", Span::new(10, 13)))).unwrap();
    assert!(text.contains(mark), "{text}");
    let leaf = "{\"kind\":{\"int\":1},\"span\":{\"line\":0,\"col\":0}}";
    let n = 100_000;
    let deep = format!(
        "{}{leaf}{}",
        "{\"kind\":{\"binary\":{\"op\":\"add\",\"lhs\":".repeat(n),
        format!(",\"rhs\":{leaf}}}}},\"span\":{{\"line\":0,\"col\":0}}}}").repeat(n)
    );
    let e = load(&text.replace(mark, &deep), "deep.json").expect_err("too deep");
    assert_eq!(e.construct, "json nesting", "{e}");
    // Deep JSON where the case has no field for it is skipped without recursing (or refused);
    // either way a clean error.
    for junk in [
        format!("{{\"junk\": {}1{}}}", "[".repeat(n), "]".repeat(n)),
        format!("{}{}", "{\"a\":".repeat(n), "}".repeat(n)),
        // Not `{`: JSON only by its extension.
        "[".repeat(n),
    ] {
        let e = load(&junk, "junk.json").expect_err("not a case");
        assert!(e.construct.starts_with("json"), "{e}");
    }
}

#[test]
fn every_corpus_case_round_trips_through_json() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let mut n = 0;
    for sub in ["cases", "spec-kernels"] {
        for entry in std::fs::read_dir(dir.join(sub)).expect("corpus") {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "py") {
                continue;
            }
            let source = std::fs::read_to_string(&path).unwrap();
            let case = parse_case(&source, "case.py")
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let text = serde_json::to_string_pretty(&case).unwrap();
            let back = load_case_text(&text, "case")
                .unwrap_or_else(|e| panic!("{}: its JSON is refused: {e}", path.display()));
            assert_eq!(back, case, "{}", path.display());
            n += 1;
        }
    }
    assert!(n > 10, "only {n} corpus scripts");
}
