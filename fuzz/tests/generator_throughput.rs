//! Generation speed: the campaign generates cases in its inner loop, so it must stay cheap.
//! Prints cases per second; the floor is loose enough for an unoptimized build on a loaded
//! machine (a release build generates ~10x faster).

use pallas_diff_fuzz::generators::{GenConfig, generate_from_seed};
use std::time::Instant;

#[test]
fn generation_is_fast() {
    let cfg = GenConfig::default();
    let n = 20_000u64;
    let start = Instant::now();
    let mut stmts = 0usize;
    for seed in 0..n {
        stmts += generate_from_seed(seed, &cfg).kernel.body.len();
    }
    let secs = start.elapsed().as_secs_f64();
    let rate = n as f64 / secs;
    eprintln!("{n} cases in {secs:.3}s: {rate:.0} cases/s ({stmts} top-level statements)");
    let floor = if cfg!(debug_assertions) {
        2_000.0
    } else {
        20_000.0
    };
    assert!(rate > floor, "{rate:.0} cases/s is below {floor}");
}
