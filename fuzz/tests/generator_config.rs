//! `GenConfig`: defaults, its JSON form (kebab-case, unknown keys refused), overrides where flags
//! win over the JSON file, and swarm configs that always normalize to a usable config.

use arbitrary::{Arbitrary, Unstructured};
use clap::Parser;
use pallas_diff_fuzz::generators::{GenConfig, GenConfigOverrides};
use rand::{RngCore, SeedableRng, rngs::SmallRng};

#[derive(Parser, Debug)]
struct Cli {
    #[command(flatten)]
    overrides: GenConfigOverrides,
}

#[test]
fn json_is_kebab_case_and_round_trips() {
    let cfg = GenConfig::default();
    let json = serde_json::to_value(&cfg).unwrap();
    assert_eq!(json["max-rows"], 16);
    assert_eq!(json["tile-index-offset"], true);
    let back: GenConfig = serde_json::from_value(json).unwrap();
    assert_eq!(back, cfg);
    // Missing keys take their defaults.
    let partial: GenConfig = serde_json::from_str(r#"{"max-rows": 8}"#).unwrap();
    assert_eq!(
        partial,
        GenConfig {
            max_rows: 8,
            ..GenConfig::default()
        }
    );
}

/// The generator configs the CI jobs pass with `--config` (`ci/*.json` that are not shard
/// contracts) read as overrides: a renamed knob would otherwise stop a nightly job at its first
/// line.
#[test]
fn the_ci_generator_configs_read() {
    let ci = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ci");
    let mut read = Vec::new();
    for entry in std::fs::read_dir(&ci).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.starts_with("gen-") || name == "campaign-nightly.json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let o: GenConfigOverrides =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("ci/{name}: {e}"));
        let _ = o.apply(GenConfig::default());
        read.push(name);
    }
    read.sort();
    assert_eq!(
        read,
        [
            "campaign-nightly.json",
            "gen-helion-language.json",
            "gen-torch-ops.json"
        ]
    );
    let language: GenConfigOverrides = serde_json::from_str(
        &std::fs::read_to_string(ci.join("gen-helion-language.json")).unwrap(),
    )
    .unwrap();
    let cfg = language.apply(GenConfig::default());
    assert!(cfg.torch_ops && cfg.input_ctors && cfg.boundary_shape_percent > 0);
}

#[test]
fn unknown_keys_are_refused() {
    let err = serde_json::from_str::<GenConfig>(r#"{"max-rowz": 8}"#).unwrap_err();
    assert!(err.to_string().contains("max-rowz"), "{err}");
    let err = serde_json::from_str::<GenConfigOverrides>(r#"{"max_rows": 8}"#).unwrap_err();
    assert!(err.to_string().contains("max_rows"), "{err}");
}

#[test]
fn flags_win_over_the_json_file() {
    let json: GenConfigOverrides =
        serde_json::from_str(r#"{"max-rows": 8, "tail": false, "wild-percent": 0}"#).unwrap();
    let cli = Cli::try_parse_from(["gen", "--max-rows", "4", "--int32", "false"]).unwrap();
    let cfg = cli.overrides.or(json).apply(GenConfig::default());
    assert_eq!(cfg.max_rows, 4, "the flag wins");
    assert!(!cfg.tail, "the JSON file wins over the default");
    assert_eq!(cfg.wild_percent, 0);
    assert!(!cfg.int32);
    assert!(cfg.float32, "untouched knobs keep their defaults");
}

#[test]
fn apply_normalizes() {
    let o = GenConfigOverrides {
        unroll: Some(false),
        fori_loop: Some(false),
        emit_pipeline: Some(false),
        min_rows: Some(12),
        max_rows: Some(3),
        wild_percent: Some(250),
        ..GenConfigOverrides::default()
    };
    let cfg = o.apply(GenConfig::default());
    assert!(cfg.fori_loop, "some loop type stays enabled");
    assert!(cfg.min_rows <= cfg.max_rows);
    assert_eq!(cfg.wild_percent, 100);
}

#[test]
fn swarm_configs_are_normalized_and_varied() {
    let mut seen_without_tail = false;
    let mut seen_only_int32 = false;
    for seed in 0..500 {
        let mut bytes = vec![0u8; 256];
        SmallRng::seed_from_u64(seed).fill_bytes(&mut bytes);
        let cfg = GenConfig::arbitrary(&mut Unstructured::new(&bytes)).unwrap();
        assert_eq!(cfg, cfg.normalized(), "seed {seed}");
        assert!(cfg.unroll || cfg.fori_loop || cfg.emit_pipeline);
        assert!(cfg.float32 || cfg.bfloat16 || cfg.int32);
        assert!((1..=3).contains(&cfg.max_depth));
        seen_without_tail |= !cfg.tail;
        seen_only_int32 |= cfg.int32 && !cfg.float32 && !cfg.bfloat16;
    }
    assert!(
        seen_without_tail && seen_only_int32,
        "swarm configs should toggle features"
    );
}

#[test]
fn flags_document_their_defaults() {
    use clap::CommandFactory;
    let help = Cli::command().render_long_help().to_string();
    assert!(help.contains("--max-depth"), "{help}");
    assert!(help.contains("Default: 3"), "{help}");
    assert!(help.contains("Default: true"), "{help}");
}
