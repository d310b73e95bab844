//! The launch grid's blocks of the top-level tile family: a partial last block of `x`'s rows
//! (which Helion 1.5.1's launcher cannot run, known issue `helion-dma-tail-tile-traced-shape`)
//! appears at about `partial-grid-block-percent` of those cases, and the knob turns it off and
//! up. The block is the *effective* one (after D-1.5.1-07/08 raising), as Helion sees it.

use lang::ir::scope::HostEnv;
use lang::ir::{Case, ExprKind, LoopKind, StmtKind};
use pallas_diff_fuzz::generators::{GenConfig, generate_from_seed};

/// `x`'s rows and the effective block of the launch-grid tile, for a case whose top-level
/// device loop is an `hl.tile`; `None` for the `hl.grid` family.
fn grid_tile_rows_and_block(case: &Case) -> Option<(i64, i64)> {
    let top = case.kernel.body.iter().find_map(|s| match &s.kind {
        StmtKind::For(lp) => Some(lp),
        _ => None,
    })?;
    if top.kind != LoopKind::Tile {
        return None;
    }
    let blocks = case.block_sizes(|e| match e.kind {
        ExprKind::Int(v) => Some(v),
        _ => None,
    });
    let rows = HostEnv::of(case).tensors.get("x")?.shape[0];
    // The top-level loop registers block id 0 (pre-order).
    Some((rows as i64, blocks.effective[0]))
}

/// Of `n` generated cases under `cfg`: (top-level tile cases, those with a partial last block).
fn partial_share(cfg: &GenConfig, n: u64) -> (usize, usize) {
    let (mut top, mut partial) = (0, 0);
    for seed in 0..n {
        let case = generate_from_seed(seed, cfg);
        if let Some((rows, block)) = grid_tile_rows_and_block(&case) {
            top += 1;
            if rows % block != 0 {
                partial += 1;
            }
        }
    }
    (top, partial)
}

#[test]
fn partial_grid_blocks_follow_their_knob() {
    let n = 6_000;
    let default = GenConfig::default();
    let (top, partial) = partial_share(&default, n);
    assert!(
        top > 500,
        "the top-level tile family is ~15% of cases: {top} of {n}"
    );
    let share = partial as f64 / top as f64;
    eprintln!("default: {partial} of {top} top-level tile cases have a partial grid block");
    // The knob's 5% drawn; a partial draw may still divide the rows by chance.
    assert!(
        (0.01..0.08).contains(&share),
        "default: {partial} of {top} top-level cases have a partial grid block"
    );

    let off = GenConfig {
        partial_grid_block_percent: 0,
        ..GenConfig::default()
    };
    let (top_off, partial_off) = partial_share(&off, n);
    assert!(
        (partial_off as f64) < 0.08 * top_off as f64,
        "off: {partial_off} of {top_off} still partial"
    );
    assert!(
        partial_off < partial,
        "off {partial_off} vs default {partial}"
    );

    let always = GenConfig {
        partial_grid_block_percent: 100,
        ..GenConfig::default()
    };
    let (top_on, partial_on) = partial_share(&always, n);
    assert!(
        partial_on as f64 > 0.3 * top_on as f64,
        "always: only {partial_on} of {top_on} partial"
    );
}
