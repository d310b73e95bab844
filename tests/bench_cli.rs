//! `pallas-diff bench --json` on a small sample: the stage table names the campaign's stages in
//! order and runs the reference and pallas-sim on lowered cases only (as a campaign does), and
//! the loop rows alternate the cases as drawn with the campaign's thinning. Counts only: no
//! figure of time is asserted (these machines are shared).

mod common;

#[test]
fn bench_json_has_the_campaigns_stages_and_both_loops() {
    let dir = common::scratch("bench-cli", "json");
    let r = common::run_in(
        &dir,
        &[
            "bench",
            "--cases",
            "60",
            "--rounds",
            "1",
            "--loop-cases",
            "400",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let json: serde_json::Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("bench --json: {e}\n{r:?}"));
    let stages = json["stages"].as_array().expect("stages");
    let names: Vec<&str> = stages
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "generate",
            "validate+infer",
            "dead code",
            "plan",
            "lower",
            "print",
            "features",
            "reference inputs",
            "reference run",
            "sim",
        ]
    );
    let ran = |name: &str| {
        stages.iter().find(|s| s["stage"] == name).unwrap()["ran_on"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(ran("generate"), 60);
    assert_eq!(ran("features"), 60);
    let lowered = ran("print");
    assert!(lowered > 0 && lowered < 60, "{lowered} of 60 lowered");
    // The reference runs on lowered kernels only; pallas-sim on those the reference accepts.
    assert_eq!(ran("reference inputs"), lowered);
    assert_eq!(ran("reference run"), lowered);
    assert!(ran("sim") <= lowered);
    let loops = json["loops"].as_array().expect("loops");
    let keep: Vec<u64> = loops
        .iter()
        .map(|l| l["refused_keep_percent"].as_u64().unwrap())
        .collect();
    assert_eq!(keep, [100, 20, 100, 20]);
    for l in loops {
        assert_eq!(l["cases"], 400);
        assert!(l["lowered"].as_u64().unwrap() <= 400);
    }
    // Same seed, same draws: the repeated rows agree, and thinning lowers more of them.
    assert_eq!(loops[0]["lowered"], loops[2]["lowered"]);
    assert_eq!(loops[1]["lowered"], loops[3]["lowered"]);
    assert!(loops[1]["lowered"].as_u64() > loops[0]["lowered"].as_u64());
    assert_eq!(json["loop_findings"], 0);
}
