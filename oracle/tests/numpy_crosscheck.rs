//! Cross-check against NumPy: `numpy_fixtures/fixtures.json` holds 100 randomized
//! indexing/reduction programs with NumPy's results (written by `numpy_fixtures/generate.py`,
//! which documents the program form). Each is translated to a case script and evaluated.
//!
//! Required: float32 and int32 results equal NumPy's bit for bit; bfloat16 results within one
//! bfloat16 ulp of NumPy's float32-then-round result (the documented bound: the reference uses
//! the same order, so in practice they are equal, and the test also reports how many are);
//! programs NumPy refuses with an IndexError are `index-out-of-range`.

mod common;

use common::{eval, script};
use lang::tensor::DType;
use pallas_diff_oracle::EvalErrorKind;
use serde_json::Value;

fn fixtures() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/numpy_fixtures/fixtures.json"
    );
    let text = std::fs::read_to_string(path).expect("fixtures.json (run generate.py)");
    serde_json::from_str(&text).expect("fixtures.json parses")
}

fn bound(v: &Value) -> String {
    if v.is_null() {
        String::new()
    } else {
        v.to_string()
    }
}

fn index_text(entries: &[Value]) -> String {
    if entries.is_empty() {
        return ":".into();
    }
    entries
        .iter()
        .map(|e| match e["kind"].as_str().expect("kind") {
            "full" => ":".to_string(),
            "none" => "None".to_string(),
            "int" => e["v"].to_string(),
            "slice" => {
                let step = bound(&e["step"]);
                let base = format!("{}:{}", bound(&e["start"]), bound(&e["stop"]));
                if step.is_empty() {
                    base
                } else {
                    format!("{base}:{step}")
                }
            }
            "arange" => format!("hl.arange({}, {}, {})", e["start"], e["stop"], e["step"]),
            other => panic!("unknown index kind {other}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The case script of one fixture program.
fn program_script(p: &Value) -> String {
    let dtype = p["dtype"].as_str().expect("dtype");
    let shape: Vec<u64> = p["shape"]
        .as_array()
        .expect("shape")
        .iter()
        .map(|v| v.as_u64().expect("dim"))
        .collect();
    let values: Vec<String> = p["input"]
        .as_array()
        .expect("input")
        .iter()
        .map(|v| match v.as_i64() {
            Some(i) if dtype == "int32" => i.to_string(),
            _ => format!("{:?}", v.as_f64().expect("number")),
        })
        .collect();
    let index = index_text(p["index"].as_array().expect("index"));
    let mut body = String::from("for g in hl.grid(1):\n");
    if p["via_block"].as_bool().expect("via_block") {
        body += &format!("    blk = x[0:{}, :, :]\n    v = blk[{index}]\n", shape[0]);
    } else {
        body += &format!("    v = x[{index}]\n");
    }
    match p["sum_dim"].as_i64() {
        None => body += "    r = v\n",
        Some(d) => {
            let src = if p["float_first"].as_bool().expect("float_first") {
                "v.float()"
            } else {
                "v"
            };
            body += &format!("    r = {src}.sum(dim={d})\n");
            if dtype == "int32" {
                body += "    r = r.to(torch.int32)\n";
            }
        }
    }
    body += "return r\n";
    let inputs = format!(
        "x = torch.tensor([{}], dtype=torch.{dtype}).reshape({}, {}, {})",
        values.join(", "),
        shape[0],
        shape[1],
        shape[2]
    );
    script("", "x: torch.Tensor", &body, &inputs, "x")
}

/// One bfloat16 ulp at `v` (the spacing of bf16 values around it).
fn bf16_ulp(v: f64) -> f64 {
    if v == 0.0 {
        return f64::from(f32::from_bits(0x0001_0000)); // smallest bf16 subnormal
    }
    let e = (v.abs() as f32).to_bits() >> 23 & 0xff;
    2f64.powi(e.max(1) as i32 - 127 - 7)
}

#[test]
fn oracle_matches_numpy_on_randomized_indexing_and_reductions() {
    let f = fixtures();
    let programs = f["programs"].as_array().expect("programs");
    assert_eq!(programs.len(), 100);
    let mut failures = Vec::new();
    let (mut bf16_exact, mut bf16_total, mut errors) = (0, 0, 0);
    for p in programs {
        let id = p["id"].as_i64().expect("id");
        let src = program_script(p);
        let exp = &p["expected"];
        let result = eval(&src);
        if exp.get("error").is_some() {
            match result {
                Err(e) if e.kind == EvalErrorKind::IndexOutOfRange => errors += 1,
                other => failures.push(format!("#{id}: expected IndexError, got {other:?}")),
            }
            continue;
        }
        let out = match result {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("#{id}: {e}\n{src}"));
                continue;
            }
        };
        let got = out.get("r").expect("output r");
        let want_dtype =
            DType::from_name(exp["dtype"].as_str().expect("dtype")).expect("known dtype");
        let want_shape: Vec<usize> = exp["shape"]
            .as_array()
            .expect("shape")
            .iter()
            .map(|v| v.as_u64().expect("dim") as usize)
            .collect();
        if got.dtype != want_dtype || got.shape != want_shape {
            failures.push(format!(
                "#{id}: got {}{:?}, NumPy {want_dtype}{want_shape:?}",
                got.dtype, got.shape
            ));
            continue;
        }
        let want: Vec<f64> = exp["values"]
            .as_array()
            .expect("values")
            .iter()
            .map(|v| v.as_f64().expect("num"))
            .collect();
        for (k, (&g, &w)) in got.values.iter().zip(&want).enumerate() {
            let ok = match want_dtype {
                DType::Float32 => (g as f32).to_bits() == (w as f32).to_bits(),
                DType::Int32 => g == w,
                DType::Bfloat16 => {
                    bf16_total += 1;
                    // Compared as f32: JSON numbers parse to the nearest f64 only within an ulp.
                    let w = f64::from(w as f32);
                    if (g as f32).to_bits() == (w as f32).to_bits() {
                        bf16_exact += 1;
                    }
                    (g - w).abs() <= bf16_ulp(w)
                }
            };
            if !ok {
                failures.push(format!("#{id}[{k}]: oracle {g:e}, NumPy {w:e}\n{src}"));
                break;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatch(es):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(errors >= 5, "too few IndexError programs ({errors})");
    eprintln!("bf16: {bf16_exact} of {bf16_total} elements equal NumPy's exactly");
    assert!(bf16_total > 0);
}
