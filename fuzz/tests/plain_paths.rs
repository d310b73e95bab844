//! The codegen's plain paths ([`compiler::decisions::PlainSet`]) compute what the planned
//! lowering computes: on generated cases whose module changes under `PlainSet::ALL`, the
//! plain module gives the planned module's outputs bit for bit in `pallas-sim`, or the same
//! error. This is what lets an ablation read "the finding went away" as "the finding needs
//! that decision". No JAX needed (`sim_vs_jax` checks the plain modules against JAX).

use compiler::compile::{CodegenOptions, compile};
use compiler::decisions::PlainSet;
use pallas_diff_fuzz::generators::{GenConfig, generate_from_seed};
use sim::{SimOptions, simulate};

#[test]
fn plain_paths_keep_the_planned_values_on_generated_cases() {
    let cfg = GenConfig::default();
    let plain = CodegenOptions {
        plain: PlainSet::ALL,
        ..CodegenOptions::default()
    };
    let options = SimOptions::default();
    let (mut changed, mut failures) = (0, Vec::new());
    for seed in 0..3000u64 {
        let case = generate_from_seed(seed, &cfg);
        let planned = compile(&case, &CodegenOptions::default());
        let ablated = compile(&case, &plain);
        let (Some(a), Some(b)) = (&planned.module(), &ablated.module()) else {
            assert_eq!(
                planned.module().is_some(),
                ablated.module().is_some(),
                "seed {seed}: a plain path changed the verdict"
            );
            continue;
        };
        if planned.source() == ablated.source() {
            continue;
        }
        let Ok(inputs) = case.kernel_tensor_args() else {
            continue;
        };
        changed += 1;
        let (want, got) = (
            simulate(a, &inputs, &options),
            simulate(b, &inputs, &options),
        );
        let same = match (&want, &got) {
            (Ok(w), Ok(g)) => {
                w.len() == g.len()
                    && w.iter().zip(g).all(|(w, g)| {
                        w.shape == g.shape
                            && w.values.len() == g.values.len()
                            && w.values
                                .iter()
                                .zip(&g.values)
                                .all(|(x, y)| x.to_bits() == y.to_bits())
                    })
            }
            (Err(w), Err(g)) => w.kind == g.kind,
            (Ok(_), Err(_)) | (Err(_), Ok(_)) => false,
        };
        if !same {
            failures.push(format!("seed {seed}: planned {want:?}, plain {got:?}"));
        }
    }
    println!("{changed} generated modules changed by PlainSet::ALL");
    assert!(
        changed >= 100,
        "only {changed} modules exercise a plain path"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
