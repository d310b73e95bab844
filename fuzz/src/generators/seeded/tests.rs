use super::*;
use crate::generators::GenConfig;

fn seed_case() -> Case {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/first_rows.py"
    ))
    .unwrap();
    let mut case = lang::frontend::parse_case(&text, "first_rows.py").unwrap();
    case.strip_spans();
    case
}

fn bytes(seed: u64) -> Vec<u8> {
    use rand::{RngCore, SeedableRng, rngs::SmallRng};
    let mut b = vec![0u8; 256];
    SmallRng::seed_from_u64(seed).fill_bytes(&mut b);
    b
}

#[test]
fn mutants_are_admissible_deterministic_and_mostly_new() {
    let seed = seed_case();
    validate_admissible(&seed).unwrap();
    let cfg = GenConfig::default();
    let mut changed = 0;
    for s in 0..200 {
        let b = bytes(s);
        let a = mutate(&seed, &mut Unstructured::new(&b), &cfg);
        let again = mutate(&seed, &mut Unstructured::new(&b), &cfg);
        assert_eq!(a, again, "seed {s}: not deterministic");
        validate_admissible(&a).unwrap();
        changed += usize::from(a != seed);
    }
    assert!(
        changed > 150,
        "only {changed} of 200 mutants differ from the seed"
    );
}

#[test]
fn shapes_reach_block_boundaries_and_the_config_moves() {
    let seed = seed_case();
    let cfg = GenConfig::default();
    let (mut rows, mut loop_types, mut begins) = (
        std::collections::BTreeSet::new(),
        std::collections::BTreeSet::new(),
        0,
    );
    for s in 0..400 {
        let b = bytes(s);
        let m = mutate(&seed, &mut Unstructured::new(&b), &cfg);
        if let Ctor::Arange { n } = &m.inputs[0].ctor {
            rows.insert(*n);
        }
        if let Some(shape) = ctor_shape(&mut m.inputs[0].ctor.clone()) {
            rows.insert(shape[0]);
        }
        loop_types.insert(format!("{:?}", m.config.loop_type));
        let mut m = m;
        visit_tile_dims(&mut m, &mut |d| begins += usize::from(d.begin.is_some()));
    }
    // The seed's input is an arange reshaped: its shape does not move, but the config,
    // the tile begins and the loop types do.
    assert!(loop_types.len() >= 3, "{loop_types:?}");
    assert!(begins > 0);
}

#[test]
fn a_made_up_input_moves_to_one_below_at_and_one_above_a_block() {
    let text = "import torch\nimport helion\nimport helion.language as hl\n\n\n\
@helion.kernel(backend=\"pallas\", static_shapes=True, config=helion.Config(block_sizes=[], pallas_loop_type=\"fori_loop\"))\n\
def copy(x: torch.Tensor) -> torch.Tensor:\n    out = torch.zeros_like(x)\n    for t in hl.tile(x.size(0), block_size=4):\n        out[t, :] = x[t, :]\n    return out\n\n\n\
x = torch.randn(8, 128)\ncopy(x)\n";
    let mut seed = lang::frontend::parse_case(text, "copy.py").unwrap();
    seed.strip_spans();
    validate_admissible(&seed).unwrap();
    let cfg = GenConfig::default();
    let mut rows = std::collections::BTreeSet::new();
    for s in 0..600 {
        let b = bytes(s);
        let mut m = mutate(&seed, &mut Unstructured::new(&b), &cfg);
        if let Some(shape) = ctor_shape(&mut m.inputs[0].ctor) {
            rows.insert(shape[0]);
        }
    }
    for r in [1usize, 3, 4, 5, 7, 8, 9] {
        assert!(rows.contains(&r), "rows {r} never drawn: {rows:?}");
    }
}

#[test]
fn a_seed_directory_keeps_admissible_cases_and_names_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/first_rows.py"),
        dir.path().join("first_rows.py"),
    )
    .unwrap();
    std::fs::write(dir.path().join("bad.py"), "import numpy\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
    let (seeds, refused) = Seeds::load_dir(dir.path()).unwrap();
    assert_eq!(seeds.seeds.len(), 1);
    assert_eq!(seeds.seeds[0].name, "first_rows");
    assert_eq!(refused.len(), 1);
    assert!(
        refused[0].reason.contains("bad.py:1"),
        "{}",
        refused[0].reason
    );
    let b = bytes(1);
    let (i, _) = draw_seeded(&seeds, &b, &GenConfig::default()).unwrap();
    assert_eq!(i, 0);
    assert!(draw_seeded(&Seeds::default(), &b, &GenConfig::default()).is_none());
}
