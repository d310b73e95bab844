//! A per-case digest of the reference on generated cases, under both tilings: one line per
//! case (`index seed effective-hash eager-hash divergences`), each hash over the status (the refusal's
//! kind, span and message, or every output's dtype, shape and value bits, and the magnitude
//! watermark). Two builds that print the same lines evaluate the same; `fuzz --digest` proves
//! the same for the campaign's reference, this for the Helion-tiled one (`helion-eager`'s),
//! which a campaign without Helion never runs, and for cases a campaign thins away. The last
//! column lists the departures of Helion's eager mode from torch the Helion-tiled evaluation
//! reported (`oracle::Divergence` ids, `-` for none): where eager mode's values may differ.
//!
//! `cargo run --release -p pallas-diff-oracle --example digest -- [CASES] [SEED] > FILE`

use pallas_diff_oracle::{Tiling, evaluate_tiled, fnv1a64};

fn status_hash(r: &Result<pallas_diff_oracle::Outputs, pallas_diff_oracle::EvalError>) -> u64 {
    let mut bytes: Vec<u8> = Vec::new();
    match r {
        Ok(o) => {
            bytes.extend_from_slice(b"ok");
            bytes.extend_from_slice(&o.magnitude.to_bits().to_le_bytes());
            for out in &o.outputs {
                bytes.extend_from_slice(out.name.as_bytes());
                bytes.extend_from_slice(out.tensor.dtype.name().as_bytes());
                for d in &out.tensor.shape {
                    bytes.extend_from_slice(&d.to_le_bytes());
                }
                for v in &out.tensor.values {
                    bytes.extend_from_slice(&v.to_bits().to_le_bytes());
                }
            }
        }
        Err(e) => bytes.extend_from_slice(e.to_string().as_bytes()),
    }
    fnv1a64(&bytes)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let cases: u64 = args
        .next()
        .map_or(20_000, |a| a.parse().expect("CASES is a number"));
    let seed: u64 = args
        .next()
        .map_or(7, |a| a.parse().expect("SEED is a number"));
    let cfg = fuzz::generators::GenConfig::default();
    for i in 0..cases {
        let s = fuzz::campaign::case_seed(seed, i);
        let case = fuzz::generators::generate_from_seed(s, &cfg);
        let inputs = case.input_tensors();
        let effective = status_hash(&evaluate_tiled(&case, &inputs, Tiling::Effective));
        let eager = evaluate_tiled(&case, &inputs, Tiling::HelionEager);
        let divergences = match &eager {
            Ok(o) if !o.divergences.is_empty() => {
                let ids: Vec<&str> = o.divergences.iter().map(|d| d.id()).collect();
                ids.join(",")
            }
            Ok(_) | Err(_) => "-".to_string(),
        };
        let eager = status_hash(&eager);
        println!("{i} {s} {effective:016x} {eager:016x} {divergences}");
    }
}
