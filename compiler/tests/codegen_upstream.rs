//! The upstream tests of spec §5.1 that pin emitted-code features (test/test_pallas.py @ff265305,
//! spec §3.6), one test each, named after the upstream test, on the corpus kernel of the same
//! name. Values are checked by `codegen_jax.rs` (env-gated, real JAX).

mod codegen_support;

use codegen_support::{
    assert_in, assert_narrowing_is_resident, assert_regex, compile_spec, regex_search, source_of,
};
use lang::ir::LoopType;
use pallas_diff_compiler::compile::{CodegenOptions, Compiled, Lowered, NotModelled, compile};

fn code(name: &str) -> String {
    let (_, c) = compile_spec(name);
    let code = source_of(name, &c);
    assert_narrowing_is_resident(name, &code);
    code
}

#[test]
fn regex_dialect_matches_like_python_re_search() {
    assert!(regex_search(
        r"x_block = x\.at\[pl\.ds\(",
        "    x_block = x.at[pl.ds(pl.multiple_of("
    ));
    assert!(regex_search(
        r"\[pl\.ds\(offset_\d+, 1\), :, :\]",
        "a[pl.ds(offset_12, 1), :, :]"
    ));
    assert!(!regex_search(
        r"\[pl\.ds\(offset_\d+, 1\)",
        "a[pl.ds(offset_, 1)"
    ));
    assert!(regex_search(
        r"jnp\.clip\([^)]+, 0, 1\), 3\)",
        "jnp.clip(sub_0, 0, 1), 3)"
    ));
    assert!(!regex_search(
        r"jnp\.clip\([^)]+, 0, 1\), 3\)",
        "jnp.clip(f(x), 0, 1), 3)"
    ));
}

#[test]
fn test_resident_subview_scalar() {
    for name in [
        "test_resident_subview_scalar_fori_loop",
        "test_resident_subview_scalar_emit_pipeline",
    ] {
        let code = code(name);
        assert_regex(name, &code, r"x_block = x\.at\[pl\.ds\(");
        assert_regex(name, &code, r"\[pl\.ds\(offset_\d+, 1\), :, :\]\[0, :, :\]");
    }
    assert_in(
        "emit_pipeline",
        &code("test_resident_subview_scalar_emit_pipeline"),
        "pltpu.emit_pipeline(",
    );
    assert_in(
        "fori_loop",
        &code("test_resident_subview_scalar_fori_loop"),
        "jax.lax.fori_loop(",
    );
}

#[test]
fn test_resident_subview_static_unroll() {
    let name = "test_resident_subview_static_unroll";
    let code = code(name);
    assert_regex(name, &code, r"x_block = x\.at\[pl\.ds\(");
    assert_regex(name, &code, r"\[pl\.ds\(offset_\d+, 1\), :, :\]\[0, :, :\]");
    assert_in(name, &code, "in range(0, 4):");
    assert!(
        !code.contains("fori_loop"),
        "{name}: unroll emitted a fori_loop\n{code}"
    );
}

#[test]
fn test_resident_subview_keeps_dma_prefetch() {
    let name = "test_resident_subview_keeps_dma_prefetch";
    let code = code(name);
    assert_in(name, &code, "pltpu.make_async_copy(x.at[pl.ds(");
    assert_regex(name, &code, r"x_block = x_buf\.at\[_j % 2\]");
    // The rest of the schedule (spec §1.4, §3.5 example 3): x in HBM, two slots and two
    // semaphores, a primed copy, a guarded prefetch of the other slot, a wait on this one.
    // x's (4, 2, 128) tile is not DMA-aligned: it is staged as a float row slab under the
    // data-dependent `hl.tile(start, end)` (D-1.5.1-11).
    assert_in(name, &code, "pl.BlockSpec(memory_space=pl.ANY)");
    assert_in(name, &code, "pltpu.VMEM((2, 4, 2, 128), jnp.bfloat16)");
    assert_in(name, &code, "pltpu.SemaphoreType.DMA((2,))");
    assert_regex(
        name,
        &code,
        r"_num_iterations = \(end - start \+ _BLOCK_SIZE_\d+ - 1\) // _BLOCK_SIZE_\d+",
    );
    assert_in(name, &code, "@pl.when(_num_iterations > 0)");
    assert_in(name, &code, "x_buf.at[0], x_sem.at[0]).start()");
    assert_in(name, &code, "@pl.when(_j + 1 < _num_iterations)");
    assert_in(
        name,
        &code,
        "x_buf.at[(_j + 1) % 2], x_sem.at[(_j + 1) % 2]).start()",
    );
    assert_in(name, &code, "x_buf.at[_j % 2], x_sem.at[_j % 2]).wait()");
    assert_in(name, &code, "x_block = x_buf.at[_j % 2].at[:, :, :]");
    assert_regex(name, &code, r"\[pl\.ds\(offset_\d+, 1\), :, :\]\[0, :, :\]");
}

/// The same kernel and `pallas_load_buffer_count` under the other loop types: the count only
/// means manual DMA under `fori_loop` (spec §1.1), so the load stays a whole-array VMEM Ref.
#[test]
fn load_buffer_count_is_ignored_outside_fori_loop() {
    let name = "test_resident_subview_keeps_dma_prefetch";
    let k = codegen_support::spec(name);
    for loop_type in [LoopType::EmitPipeline, LoopType::Unroll] {
        let mut case = k.case.clone();
        case.config.loop_type = Some(loop_type);
        let c = compile(&case, &CodegenOptions::default());
        let code = match &c {
            Compiled::Lowered(Lowered { module: s, .. }) => s.to_string(),
            // `unroll` refuses the data-dependent outer loop (spec §1.4): nothing to check.
            Compiled::Rejected(_) => continue,
            Compiled::Gap(NotModelled { gap: g, .. }) => panic!("{name} {loop_type:?}: {g}"),
        };
        assert!(
            !code.contains("make_async_copy"),
            "{name} {loop_type:?}:\n{code}"
        );
        assert!(!code.contains("pl.ANY"), "{name} {loop_type:?}:\n{code}");
        assert_regex(name, &code, r"x_block = x\.at\[pl\.ds\(");
    }
}

/// Buffer count 1, or no key, still stages x (D-1.5.1-11): its `(4, 2, 128)` bf16 tile is not
/// DMA-aligned, but it is a float row slab under `hl.tile(start, end)` whose bounds are loaded
/// from SMEM, so Helion 1.5.1 copies each block into one VMEM slot and waits for it.
#[test]
fn load_buffer_count_one_is_a_synchronous_copy() {
    let name = "test_resident_subview_keeps_dma_prefetch";
    let k = codegen_support::spec(name);
    // Entry 0 is x's, the first tensor parameter (D-1.5.1-11).
    let mut case = k.case.clone();
    for counts in [Some(vec![1, 2, 2, 2, 2]), None] {
        case.config.load_buffer_count = counts;
        let c = compile(&case, &CodegenOptions::default());
        let code = source_of(name, &c);
        assert_in(name, &code, "pl.BlockSpec(memory_space=pl.ANY)");
        assert_in(name, &code, "pltpu.VMEM((4, 2, 128), jnp.bfloat16)");
        assert_in(name, &code, "pltpu.SemaphoreType.DMA(())");
        for op in ["start", "wait"] {
            assert_regex(
                name,
                &code,
                &format!(
                    r"pltpu\.make_async_copy\(x\.at\[pl\.ds\(offset_\d+, _BLOCK_SIZE_\d+\), :, :\], x_buf, x_sem\)\.{op}\(\)"
                ),
            );
        }
        assert_in(name, &code, "x_block = x_buf.at[:, :, :]");
        assert!(!code.contains("_num_iterations"), "{code}");
        // The other tensors are read in the root graph: they stay in VMEM whatever their count.
        assert!(!code.contains("weight_buf"), "{code}");
    }
    // A list that is not one count per tensor parameter is refused, as 1.5.1 refuses it.
    case.config.load_buffer_count = Some(vec![]);
    let c = compile(&case, &CodegenOptions::default());
    assert!(
        matches!(&c.verdict(), pallas_diff_compiler::verdict::Verdict::Rejected(r) if r.rule == pallas_diff_compiler::verdict::Rule::ConfigLoadBufferCount),
        "{:?}",
        c.verdict()
    );
}

#[test]
fn test_resident_subview_tile_and_dynamic_runs() {
    let name = "test_resident_subview_tile_and_dynamic_runs";
    let code = code(name);
    assert_regex(name, &code, r"\[pl\.ds\(offset_\d+, 2\), :, :\]");
    assert_regex(
        name,
        &code,
        r"\[pl\.ds\(jnp\.clip\([^)]+, 0, 1\), 3\), :, :\]",
    );
    assert_in(name, &code, ".astype(jnp.bfloat16)[:, None, None]");
}

#[test]
fn test_resident_subview_nonuniform_tail_is_masked() {
    let name = "test_resident_subview_nonuniform_tail_is_masked";
    let code = code(name);
    assert_regex(name, &code, r"x_block = x\.at\[pl\.ds\(");
    assert_regex(
        name,
        &code,
        r"\[pl\.ds\(offset_\d+, 2\), :, :\] \* mask_\d+\.astype\(",
    );
}

#[test]
fn test_resident_subview_offset_tile_run() {
    let name = "test_resident_subview_offset_tile_run";
    let code = code(name);
    assert_regex(
        name,
        &code,
        r"\[pl\.ds\(offset_\d+, 2\), :, :\] \* mask_\d+\.astype\(",
    );
}

#[test]
fn test_resident_subview_constant_runs() {
    let name = "test_resident_subview_constant_runs";
    let code = code(name);
    assert_in(name, &code, "[pl.ds(1, 1), :, :]");
    assert_in(name, &code, "[pl.ds(1, 2), :, :]");
}

#[test]
fn test_resident_subview_of_untiled_dimension() {
    let name = "test_resident_subview_of_untiled_dimension";
    assert_in(name, &code(name), "[:, pl.ds(0, 1), :, :][:, 0, :, :]");
}

#[test]
fn test_resident_subview_composed_views() {
    let name = "test_resident_subview_composed_views";
    let code = code(name);
    assert_regex(name, &code, r"\.at\[pl\.ds\(offset_\d+, 1\), :, :, :\]");
    assert_in(name, &code, ".reshape((2, 2, 2, 128))");
    assert_in(name, &code, "[pl.ds(0, 1), :, :, :]");
}

#[test]
fn test_resident_subview_materializes_before_incompatible_reshape() {
    let name = "test_resident_subview_materializes_before_incompatible_reshape";
    let code = code(name);
    assert_in(name, &code, "jnp.reshape(");
    assert!(
        !code.contains(".reshape((2, 2, 64))"),
        "{name}: Ref reshape to (2, 2, 64)\n{code}"
    );
}

#[test]
fn test_resident_subview_index_through_control_flow() {
    let name = "test_resident_subview_index_through_control_flow";
    let code = code(name);
    assert_regex(name, &code, r"x_block = x\.at\[pl\.ds\(");
    assert_in(name, &code, "jax.lax.cond(");
}

#[test]
fn test_resident_subview_config_dependent_eligibility() {
    let name = "test_resident_subview_config_dependent_eligibility_block4";
    let code = code(name);
    assert_regex(name, &code, r"x_block = x\.at\[pl\.ds\(");
}

#[test]
fn test_resident_subview_plain_subscripts_unchanged() {
    let name = "test_resident_subview_plain_subscripts_unchanged";
    let code = code(name);
    assert!(
        !code.contains(".at["),
        "{name}: plain subscripts became Ref transforms\n{code}"
    );
    assert_in(name, &code, "[:, None]");
    assert_in(name, &code, "[None, :]");
}

#[test]
fn test_tile_count_inside_fori_loop() {
    for name in [
        "test_tile_count_inside_fori_loop_fori_loop",
        "test_tile_count_inside_fori_loop_unroll",
    ] {
        let code = code(name);
        // tile.count from the loop's own begin (4) and end (12) (spec §4 D2).
        assert_in(name, &code, "(12 - 4 + _BLOCK_SIZE_");
    }
}
