//! The frontend's two readers and the renderer agree. On generated cases ([`run`]): a case
//! renders to a script that parses back to the same (span-stripped) case, rendering that gives
//! the same text, and the case's JSON reads back to the same case. On any text ([`check_text`],
//! what the `frontend` cargo-fuzz target feeds raw inputs to): whatever `load_case_text`
//! accepts — a case script, or a case JSON when the text starts with `{` — renders to a script
//! that parses back to it and reads back from its own JSON. A JSON case that renders to a
//! script the script frontend refuses is a rule the shared well-formedness check lacks; a
//! script case whose JSON is refused is a rule the check has and the script frontend lacks.

use crate::generators::{GenConfig, generate};
use arbitrary::Unstructured;
use compiler::frontend::{load_case_text, parse_case};
use compiler::ir::Case;
use compiler::render::render_case;
use serde_json::Value;

/// Checks one generated case; panics on a violation.
pub fn run(u: &mut Unstructured<'_>) -> arbitrary::Result<()> {
    let config: GenConfig = u.arbitrary()?;
    let case = generate(u, &config.normalized())?;
    let text = render_case(&case);
    let back = parse_case(&text, "generated.py")
        .unwrap_or_else(|e| panic!("finding: a rendered case does not parse: {e}\n{text}"));
    assert_eq!(
        back.without_spans(),
        case.without_spans(),
        "finding: parse(render(case)) != case\n{text}"
    );
    assert_eq!(
        render_case(&back),
        text,
        "finding: render is not stable under parse\n{text}"
    );
    let json = serde_json::to_string(&case).expect("a case serializes");
    // No extension: the reader tells JSON by its content.
    let from_json = load_case_text(&json, "generated")
        .unwrap_or_else(|e| panic!("finding: a generated case's JSON is refused: {e}\n{json}"));
    assert!(
        same_up_to_float_rounding(&from_json, &case),
        "finding: the JSON of a case reads back to another case\n{json}"
    );
    assert!(
        check_text(&text),
        "finding: load_case_text refuses a rendered case\n{text}"
    );
    assert!(
        check_text(&json),
        "finding: load_case_text refuses a case JSON\n{json}"
    );
    Ok(())
}

/// Checks one input text, script or JSON; panics on a violation (a finding). Whether the text
/// was a case.
pub fn check_text(text: &str) -> bool {
    let Ok(case) = load_case_text(text, "fuzz") else {
        return false;
    };
    let rendered = render_case(&case);
    match parse_case(&rendered, "rendered.py") {
        Ok(back) => assert!(
            back.without_spans() == case.without_spans(),
            "finding: render changed the case:\n{rendered}"
        ),
        Err(e) => panic!(
            "finding: an accepted case renders to a script that does not parse: {e}\n{rendered}"
        ),
    }
    let json = serde_json::to_string(&case).expect("a case serializes");
    match load_case_text(&json, "case.json") {
        Ok(again) => assert!(
            same_up_to_float_rounding(&again, &case),
            "finding: the case's JSON reads back to another case\n{json}"
        ),
        // A script case whose JSON nests past serde_json's recursion limit (128 levels: about
        // 20 expression levels in a few blocks) has no JSON this build reads: the documented
        // limit of the JSON form, not a finding.
        Err(e) if e.construct == "json nesting" => {}
        Err(e) => panic!("finding: an accepted case's JSON is refused: {e}\n{json}"),
    }
    true
}

/// Whether `a` and `b` are the same case but for floats a JSON round trip moved by an ulp:
/// serde_json's default (not `float_roundtrip`) parser is not correctly rounded (measured: 30%
/// of random finite f64 come back one ulp off).
fn same_up_to_float_rounding(a: &Case, b: &Case) -> bool {
    if a == b {
        return true;
    }
    match (serde_json::to_value(a), serde_json::to_value(b)) {
        (Ok(x), Ok(y)) => same_json(&x, &y),
        (Err(_), _) | (_, Err(_)) => false,
    }
}

/// Structural equality of two JSON values, floats within two ulps. Recursive: both come from a
/// case that read back from its JSON, so within serde_json's 128 levels.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            match (x.as_f64(), y.as_f64()) {
                (Some(p), Some(q)) => {
                    p == q
                        || (p.is_sign_negative() == q.is_sign_negative()
                            && p.to_bits().abs_diff(q.to_bits()) <= 2)
                }
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_json(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| same_json(p, q)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn smoke() {
        super::super::test_n_times(200, super::run);
    }

    #[test]
    fn raw_texts_of_both_formats() {
        let script = "import torch\nimport helion\nimport helion.language as hl\n\n\n\
            @helion.kernel(backend=\"pallas\", static_shapes=True, config=helion.Config(block_sizes=[]))\n\
            def k(x: torch.Tensor) -> torch.Tensor:\n    out = torch.zeros([2], dtype=torch.float32)\n\
            \x20   for g in hl.grid(1):\n        out[g] = x[g] * 0.1\n    return out\n\n\n\
            x = torch.tensor([0.30000000000000004, 1e-300])\nk(x)\n";
        assert!(super::check_text(script));
        let case = compiler::frontend::parse_case(script, "k.py").unwrap();
        assert!(super::check_text(&serde_json::to_string(&case).unwrap()));
        for not_a_case in ["", "{", "{}", "[1]", "x = 1", "{\"version\": 1}"] {
            assert!(!super::check_text(not_a_case), "{not_a_case:?}");
        }
    }
}

#[cfg(test)]
mod tmp_mutate {
    use rand::{Rng, SeedableRng, rngs::SmallRng};
    use serde_json::Value;

    fn nodes<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
        out.push(v);
        match v {
            Value::Array(a) => a.iter().for_each(|x| nodes(x, out)),
            Value::Object(o) => o.values().for_each(|x| nodes(x, out)),
            _ => {}
        }
    }
    fn count(v: &Value) -> usize {
        1 + match v {
            Value::Array(a) => a.iter().map(count).sum(),
            Value::Object(o) => o.values().map(count).sum(),
            _ => 0,
        }
    }
    fn nth_mut<'a>(v: &'a mut Value, n: &mut usize) -> Option<&'a mut Value> {
        if *n == 0 {
            return Some(v);
        }
        *n -= 1;
        match v {
            Value::Array(a) => {
                for x in a {
                    if let Some(r) = nth_mut(x, n) {
                        return Some(r);
                    }
                }
                None
            }
            Value::Object(o) => {
                for x in o.values_mut() {
                    if let Some(r) = nth_mut(x, n) {
                        return Some(r);
                    }
                }
                None
            }
            _ => None,
        }
    }

    #[test]
    fn tmp_mutate_json() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/spec-kernels");
        let mut seeds = Vec::new();
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "py") {
                let c =
                    compiler::frontend::parse_case(&std::fs::read_to_string(&p).unwrap(), "x.py")
                        .unwrap();
                seeds.push(serde_json::to_value(&c).unwrap());
            }
        }
        let mut rng = SmallRng::seed_from_u64(7);
        let mut accepted = 0;
        let n: usize = std::env::var("TMP_N")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(20000);
        for it in 0..n {
            let mut v = seeds[rng.gen_range(0..seeds.len())].clone();
            for _ in 0..rng.gen_range(1..4) {
                let donor = seeds[rng.gen_range(0..seeds.len())].clone();
                let mut pool = Vec::new();
                nodes(&donor, &mut pool);
                let total = count(&v);
                let mut k = rng.gen_range(0..total);
                let Some(t) = nth_mut(&mut v, &mut k) else {
                    continue;
                };
                match rng.gen_range(0..6) {
                    0 => {
                        // replace with a same-type node from the donor
                        let same: Vec<&Value> = pool
                            .iter()
                            .copied()
                            .filter(|x| std::mem::discriminant(*x) == std::mem::discriminant(t))
                            .collect();
                        if !same.is_empty() {
                            *t = same[rng.gen_range(0..same.len())].clone();
                        }
                    }
                    1 => {
                        if let Value::Array(a) = t {
                            if !a.is_empty() {
                                let i = rng.gen_range(0..a.len());
                                a.remove(i);
                            }
                        }
                    }
                    2 => {
                        if let Value::Array(a) = t {
                            if !a.is_empty() {
                                let i = rng.gen_range(0..a.len());
                                let x = a[i].clone();
                                a.insert(i, x);
                            }
                        }
                    }
                    3 => {
                        if let Value::Number(_) = t {
                            *t = serde_json::json!(
                                [0, 1, -1, 2, 3, 7, 8, 16, -5, 1000000, i64::MAX]
                                    [rng.gen_range(0..11)]
                            );
                        }
                    }
                    4 => {
                        if let Value::Bool(b) = t {
                            *b = !*b
                        }
                    }
                    _ => {
                        if let Value::String(_) = t {
                            let strs: Vec<&Value> =
                                pool.iter().copied().filter(|x| x.is_string()).collect();
                            if !strs.is_empty() {
                                *t = strs[rng.gen_range(0..strs.len())].clone();
                            }
                        }
                    }
                }
            }
            let text = serde_json::to_string(&v).unwrap();
            let r = std::panic::catch_unwind(|| super::check_text(&text));
            if let Err(p) = &r {
                let msg = p.downcast_ref::<String>().cloned().unwrap_or_default();
                let known = msg.contains("does not parse")
                    && msg.as_bytes().windows(3).any(|w| {
                        (w[0].is_ascii_digit() && w[1] == b'.' && w[2].is_ascii_alphabetic())
                            || ((w[0].is_ascii_alphanumeric()
                                || w[0] == b'_'
                                || w[0] == b')'
                                || w[0] == b']')
                                && w[1] == b'['
                                && w[2] == b']')
                    });
                if known {
                    continue;
                }
            }
            match r {
                Ok(true) => accepted += 1,
                Ok(false) => {}
                Err(_) => {
                    std::fs::write(format!("/tmp/mut_fail_{it}.json"), &text).unwrap();
                    panic!("iteration {it}: see /tmp/mut_fail_{it}.json");
                }
            }
        }
        eprintln!("accepted {accepted} of {n}");
    }
}
