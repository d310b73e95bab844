//! Lowering features beyond the spec's examples, on small inline case scripts: the launch grid
//! in two dims, partial-tile stores, atomics, dynamic `unroll`, `emit_pipeline` carries,
//! alignment hints, aliased outputs, poison padding. Each module must also byte-compile.

mod codegen_support;

use codegen_support::{py_compile_all, python3};
use lang::frontend::parse_case;
use pallas_diff_compiler::compile::{
    CodegenOptions, Compiled, Lowered, NotModelled, Refused, compile,
};

fn script(config: &str, params: &str, body: &str, inputs: &str, call: &str) -> String {
    format!(
        "import torch\nimport helion\nimport helion.language as hl\n\n\n\
         @helion.kernel(backend=\"pallas\", static_shapes=True, config=helion.Config({config}))\n\
         def k({params}):\n{body}\n\n{inputs}\nk({call})\n"
    )
}

fn emit(name: &str, src: &str, poison: bool) -> String {
    let case = parse_case(src, name).unwrap_or_else(|e| panic!("{name}: {e}\n{src}"));
    let c = compile(
        &case,
        &CodegenOptions {
            poison_padding: poison,
            ..Default::default()
        },
    );
    let code = match &c {
        Compiled::Lowered(Lowered { module: s, .. }) => s.to_string(),
        Compiled::Rejected(Refused { rejection: r, .. }) => panic!("{name}: rejected {r}"),
        Compiled::Gap(NotModelled { gap: g, .. }) => panic!("{name}: {g}"),
    };
    if let Some(py) = python3() {
        let failures = py_compile_all(&py, &[(name.to_string(), code.clone())]);
        assert!(failures.is_empty(), "{failures:?}");
    }
    code
}

fn has(name: &str, code: &str, needle: &str) {
    assert!(code.contains(needle), "{name}: `{needle}` not in\n{code}");
}

#[test]
fn two_dim_launch_grid_with_partial_tiles() {
    let src = script(
        "block_sizes=[8, 128]",
        "x: torch.Tensor",
        "    out = torch.empty([12, 256], dtype=torch.float32)\n\
         \x20   for tm, tn in hl.tile([x.size(0), x.size(1)]):\n\
         \x20       out[tm, tn] = x[tm, tn] * 2.0\n\
         \x20   return out",
        "x = torch.randn(12, 256)",
        "x",
    );
    let code = emit("grid2d", &src, false);
    has("grid2d", &code, "grid=(2, 2),");
    has(
        "grid2d",
        &code,
        "offset_0 = pl.program_id(0) * _BLOCK_SIZE_0",
    );
    has(
        "grid2d",
        &code,
        "offset_1 = pl.program_id(1) * _BLOCK_SIZE_1",
    );
    has(
        "grid2d",
        &code,
        "mask_0 = offset_0 + jnp.arange(0, _BLOCK_SIZE_0, dtype=jnp.int32) < 12",
    );
    // The input is a BlockSpec block (D-1.5.1-19) with Helion's clamped index map; its partial
    // last block holds poison, so the load is masked by `jnp.where`, and the partial-tile store
    // keeps the old contents.
    has(
        "grid2d",
        &code,
        "pl.BlockSpec((8, 128), lambda *g: (jnp.minimum(jnp.int32(g[0]), 1), jnp.minimum(jnp.int32(g[1]), 1))",
    );
    has("grid2d", &code, "jnp.where(mask_0[:, None], x[:, :], 0.0)");
    assert!(
        !code.contains("jnp.pad(x"),
        "grid2d: x is blocked, not padded\n{code}"
    );
    // The output stays whole (1.5.1's output blocks are not modelled): padded on rows only,
    // sliced back.
    has(
        "grid2d",
        &code,
        "jax.ShapeDtypeStruct((16, 256), jnp.float32)",
    );
    has("grid2d", &code, "return (outs[0][:12, :],)");
    let poisoned = emit("grid2d_poison", &src, true);
    has("grid2d_poison", &poisoned, "jnp.where(mask_0[:, None], x[");
}

#[test]
fn atomics_are_read_modify_writes() {
    let src = script(
        "block_sizes=[], pallas_loop_type=\"fori_loop\"",
        "x: torch.Tensor",
        "    out = torch.zeros([1, 128], dtype=torch.int32)\n\
         \x20   for g in hl.grid(1):\n\
         \x20       for t in hl.tile(x.size(0), block_size=4):\n\
         \x20           hl.atomic_add(out, [g, slice(None)], x[t, 0, :].sum(dim=0))\n\
         \x20           hl.atomic_max(out, [g, slice(None)], x[t, 1, :].sum(dim=0))\n\
         \x20   return out",
        "x = torch.arange(2560, dtype=torch.int32).reshape(10, 2, 128)",
        "x",
    );
    let code = emit("atomics", &src, false);
    has(
        "atomics",
        &code,
        "out[offset_0, :] = out[offset_0, :] + jnp.sum(",
    );
    has(
        "atomics",
        &code,
        "out[offset_0, :] = jnp.maximum(out[offset_0, :], jnp.sum(",
    );
    // The zero-initialized output is aliased and copied in at the first grid step.
    has("atomics", &code, "input_output_aliases={1: 0},");
    has("atomics", &code, "out[...] = _out_in[...]");
}

#[test]
fn unroll_over_an_enclosing_tile_end_is_guarded() {
    let src = script(
        "block_sizes=[8, 2], pallas_loop_type=\"unroll\"",
        "x: torch.Tensor",
        "    out = torch.zeros([1, 2, 128], dtype=torch.float32)\n\
         \x20   for g in hl.grid(1):\n\
         \x20       acc = hl.zeros([2, 128], dtype=torch.float32)\n\
         \x20       for t in hl.tile(x.size(0)):\n\
         \x20           for u in hl.tile(t.begin, t.end):\n\
         \x20               acc = acc + x[u, :, :].sum(dim=0)\n\
         \x20       out[g, :, :] = acc\n\
         \x20   return out",
        "x = torch.ones(11, 2, 128)",
        "x",
    );
    let code = emit("dynamic_unroll", &src, false);
    has(
        "dynamic_unroll",
        &code,
        "for offset_1 in range(0, 11, _BLOCK_SIZE_1):",
    );
    has("dynamic_unroll", &code, "for _u0 in range(0, 4):");
    has(
        "dynamic_unroll",
        &code,
        "offset_2 = offset_1 + _u0 * _BLOCK_SIZE_2",
    );
    has(
        "dynamic_unroll",
        &code,
        "jax.lax.cond(offset_2 < end_2, _if_branch_0, _else_branch_0, acc)",
    );
    // A dynamic begin is not claimed aligned.
    has(
        "dynamic_unroll",
        &code,
        "x[pl.ds(offset_2, _BLOCK_SIZE_2), :, :]",
    );
}

#[test]
fn emit_pipeline_carries_through_scratch_refs() {
    let src = script(
        "block_sizes=[4], pallas_loop_type=\"emit_pipeline\"",
        "x: torch.Tensor",
        "    out = torch.zeros([1, 128], dtype=torch.float32)\n\
         \x20   for g in hl.grid(1):\n\
         \x20       acc = hl.zeros([128], dtype=torch.float32)\n\
         \x20       n = 0\n\
         \x20       for t in hl.tile(3, x.size(0)):\n\
         \x20           acc = acc + x[t, 0, :].sum(dim=0)\n\
         \x20           n = n + t.count\n\
         \x20       out[g, :] = acc * n\n\
         \x20   return out",
        "x = torch.ones(13, 2, 128)",
        "x",
    );
    let code = emit("pipeline", &src, false);
    has(
        "pipeline",
        &code,
        "scratch_shapes=[pltpu.VMEM((128,), jnp.float32), pltpu.SMEM((1,), jnp.int32)],",
    );
    has("pipeline", &code, "_carry_0[...] = acc");
    has("pipeline", &code, "_carry_1[0] = 0");
    has(
        "pipeline",
        &code,
        "n = n + (13 - 3 + _BLOCK_SIZE_1 - 1) // _BLOCK_SIZE_1",
    );
    has(
        "pipeline",
        &code,
        "pltpu.emit_pipeline(_pipeline_body_1, grid=((13 - 3 + _BLOCK_SIZE_1 - 1) // _BLOCK_SIZE_1,), _explicit_indices=True)()",
    );
    // Begin 3 is not a multiple of 4: no alignment hint.
    has("pipeline", &code, "x[pl.ds(offset_1, _BLOCK_SIZE_1), 0, :]");
}

#[test]
fn names_that_could_clash_are_renamed() {
    let src = script(
        "block_sizes=[4], pallas_loop_type=\"fori_loop\"",
        "x: torch.Tensor",
        "    out = torch.zeros([1, 128], dtype=torch.float32)\n\
         \x20   for g in hl.grid(1):\n\
         \x20       offset_1 = hl.zeros([128], dtype=torch.float32)\n\
         \x20       for t in hl.tile(x.size(0)):\n\
         \x20           jnp = x[t, :].sum(dim=0)\n\
         \x20           offset_1 = offset_1 + jnp\n\
         \x20       out[g, :] = offset_1\n\
         \x20   return out",
        "x = torch.ones(8, 128)",
        "x",
    );
    let code = emit("rename", &src, false);
    has("rename", &code, "v_offset_1 = v_offset_1 + v_jnp");
}

/// The DMA staging rule (`src/lower/dma.rs`, D-1.5.1-11) on small kernels: which loads are
/// staged, how an ordinary (non-resident) load reads its slot, and what stays in VMEM. The
/// tensors are `(9, rows, 128)` f32: `rows = 8` makes the `(4, 8, 128)` tile DMA-aligned,
/// `rows = 2` does not (`(4, 2, 128)`: 2 % 8 != 0), and the loop's bounds are static.
#[test]
fn dma_double_buffering_rule() {
    let kernel_of = |rows: usize, counts: &str, extra_load: &str, store_x: &str| {
        script(
            &format!("block_sizes=[4], pallas_loop_type=\"fori_loop\"{counts}"),
            "x: torch.Tensor, y: torch.Tensor",
            &format!(
                "    out = torch.zeros([{rows}, 128], dtype=torch.float32)\n\
                 \x20   for g in hl.grid(1):\n\
                 \x20       acc = hl.zeros([{rows}, 128], dtype=torch.float32)\n\
                 \x20       for t in hl.tile(x.size(0)):\n\
                 \x20           x_buf = x[t, :, :]\n\
                 \x20           acc = acc + x_buf.float().sum(dim=0){extra_load}\n\
                 {store_x}\
                 \x20       out[:, :] = acc\n\
                 \x20   return out"
            ),
            &format!("x = torch.randn(9, {rows}, 128)\ny = torch.randn(9, {rows}, 128)"),
            "x, y",
        )
    };
    let kernel = |extra_load: &str, store_x: &str| {
        kernel_of(8, ", pallas_load_buffer_count=[2, 2]", extra_load, store_x)
    };
    // A whole-block consumer: not resident, so the slot is read as a masked value; the user's
    // `x_buf` keeps its name and the scratch takes another.
    let code = emit("dma_value", &kernel("", ""), false);
    has("dma_value", &code, "pl.BlockSpec(memory_space=pl.ANY)");
    has(
        "dma_value",
        &code,
        "pltpu.VMEM((2, 4, 8, 128), jnp.float32), pltpu.SemaphoreType.DMA((2,))",
    );
    has(
        "dma_value",
        &code,
        "x_buf = x_buf_dma.at[_j % 2][:, :, :] * mask_1.astype(jnp.float32)[:, None, None]",
    );
    has(
        "dma_value",
        &code,
        "_operand_0 = jnp.pad(x, ((0, 3), (0, 0), (0, 0))",
    );
    // Count 1, or no key at all: one slot of the tile's shape, one semaphore, and a copy
    // started and waited for in each iteration (D-1.5.1-11).
    for counts in [", pallas_load_buffer_count=[1, 1]", ""] {
        let code = emit("dma_sync", &kernel_of(8, counts, "", ""), false);
        has("dma_sync", &code, "pl.BlockSpec(memory_space=pl.ANY)");
        has(
            "dma_sync",
            &code,
            "pltpu.VMEM((4, 8, 128), jnp.float32), pltpu.SemaphoreType.DMA(())",
        );
        for op in ["start", "wait"] {
            has(
                "dma_sync",
                &code,
                &format!(
                    "pltpu.make_async_copy(x.at[pl.ds(offset_1, _BLOCK_SIZE_1), :, :], x_buf_dma, x_sem).{op}()"
                ),
            );
        }
        has(
            "dma_sync",
            &code,
            "x_buf = x_buf_dma[:, :, :] * mask_1.astype(jnp.float32)[:, None, None]",
        );
        assert!(!code.contains("_num_iterations"), "dma_sync:\n{code}");
    }
    // A tile that is not DMA-aligned stays whole in VMEM whatever the count.
    for counts in [", pallas_load_buffer_count=[2, 2]", ""] {
        let code = emit("dma_unaligned", &kernel_of(2, counts, "", ""), false);
        assert!(!code.contains("make_async_copy"), "dma_unaligned:\n{code}");
        assert!(!code.contains("pl.ANY"), "dma_unaligned:\n{code}");
    }
    // Poison padding masks the slot with `where`.
    let code = emit("dma_poison", &kernel("", ""), true);
    has(
        "dma_poison",
        &code,
        "jnp.where(mask_1[:, None, None], x_buf_dma.at[_j % 2][:, :, :], 0.0)",
    );
    // Two buffered loads in one loop: both staged, with their own slots and semaphores.
    let code = emit(
        "dma_two",
        &kernel(" + y[t, :, :].float().sum(dim=0)", ""),
        false,
    );
    has(
        "dma_two",
        &code,
        "y_buf.at[_j % 2], y_sem.at[_j % 2]).wait()",
    );
    has(
        "dma_two",
        &code,
        "x_buf_dma.at[_j % 2], x_sem.at[_j % 2]).wait()",
    );
    // A tensor read twice, or written: stays in VMEM.
    let code = emit(
        "dma_twice",
        &kernel(" + x[t, 0, :].float().sum(dim=0)", ""),
        false,
    );
    assert!(!code.contains("x_sem"), "dma_twice:\n{code}");
    let code = emit(
        "dma_written",
        &kernel(
            " + y[t, :, :].float().sum(dim=0)",
            "\x20           x[t, :, :] = y[t, :, :]\n",
        ),
        false,
    );
    assert!(!code.contains("x_sem"), "dma_written:\n{code}");
}

/// D-1.5.1-11's second route: a row slab (`x[t, :, :]`) whose `(4, 2, 128)` tile is not
/// DMA-aligned is still staged when it is float and the loop's bounds are data-dependent
/// (loaded from a tensor, as spec §3.5 example 3); an int32 slab, or the same float slab
/// under static bounds, stays in VMEM.
#[test]
fn dma_row_slab_under_data_dependent_bounds() {
    let kernel = |dtype: &str, begin: &str, end: &str| {
        script(
            "block_sizes=[], pallas_loop_type=\"fori_loop\"",
            "x: torch.Tensor, bounds: torch.Tensor",
            &format!(
                "    out = torch.zeros([2, 128], dtype=torch.float32)\n\
                 \x20   for g in hl.grid(1):\n\
                 \x20       start = hl.load(bounds, [0])\n\
                 \x20       stop = hl.load(bounds, [1])\n\
                 \x20       acc = hl.zeros([2, 128], dtype=torch.float32)\n\
                 \x20       for t in hl.tile({begin}, {end}, block_size=4):\n\
                 \x20           acc = acc + x[t, :, :].float().sum(dim=0)\n\
                 \x20       out[:, :] = acc\n\
                 \x20   return out"
            ),
            &format!(
                "x = torch.ones(9, 2, 128, dtype=torch.{dtype})\n\
                 bounds = torch.tensor([0, 9], dtype=torch.int32)"
            ),
            "x, bounds",
        )
    };
    let staged = |code: &str| code.contains("x_buf, x_sem).wait()");
    let code = emit("slab_f32", &kernel("float32", "start", "stop"), false);
    assert!(staged(&code), "slab_f32:\n{code}");
    has("slab_f32", &code, "pltpu.VMEM((4, 2, 128), jnp.float32)");
    let code = emit("slab_bf16_begin", &kernel("bfloat16", "start", "9"), false);
    assert!(staged(&code), "slab_bf16_begin:\n{code}");
    let code = emit("slab_int32", &kernel("int32", "start", "stop"), false);
    assert!(!code.contains("make_async_copy"), "slab_int32:\n{code}");
    let code = emit("slab_static", &kernel("float32", "0", "x.size(0)"), false);
    assert!(!code.contains("make_async_copy"), "slab_static:\n{code}");
}

#[test]
fn float_functions_and_float_parameters_are_gaps_named_by_construct() {
    let x = "x = torch.randn(16, 128)";
    for (params, body, call, construct) in [
        (
            "x: torch.Tensor",
            "    out = torch.empty_like(x)\n    for t in hl.tile(16):\n        out[t, :] = torch.sigmoid(x[t, :])\n    return out",
            "x",
            "torch.sigmoid",
        ),
        (
            "x: torch.Tensor, s: float",
            "    out = torch.empty_like(x)\n    for t in hl.tile(16):\n        out[t, :] = x[t, :] * s\n    return out",
            "x, 1.5",
            "a float parameter",
        ),
    ] {
        let src = script("block_sizes=[8]", params, body, x, call);
        let case = parse_case(&src, "case.py").unwrap_or_else(|e| panic!("{e}\n{src}"));
        match compile(&case, &CodegenOptions::default()) {
            Compiled::Gap(NotModelled { gap: g, .. }) => {
                assert_eq!(g.construct, construct, "{src}")
            }
            Compiled::Lowered(_) | Compiled::Rejected(_) => panic!("not a gap:\n{src}"),
        }
    }
}

#[test]
fn a_gather_is_a_one_hot_product_and_a_tile_index_is_not_a_gather() {
    // `values[indices[tm], tn]`: Helion's `emit_gather` under the default one-hot mode.
    let src = script(
        "block_sizes=[8, 128]",
        "values: torch.Tensor, indices: torch.Tensor",
        "    out = torch.empty([indices.size(0), values.size(1)], dtype=values.dtype)\n\
         \x20   for tm, tn in hl.tile([indices.size(0), values.size(1)]):\n\
         \x20       out[tm, tn] = values[indices[tm], tn]\n\
         \x20   return out",
        "values = torch.randn(16, 128)\nindices = torch.tensor([3, 0, 14, 15, 7, 5, 2, 1, 9, 11], dtype=torch.int32)",
        "values, indices",
    );
    let code = emit("gather", &src, false);
    has("gather", &code, "jax.lax.dot_general(jax.nn.one_hot(");
    // The one-hot rows of the partial tile's lanes past its end are zeroed (10 of 16 rows).
    has(
        "gather",
        &code,
        ", 16, dtype=jnp.float32) * mask_0.astype(jnp.float32)[:, None], values[:, ",
    );
    has("gather", &code, "precision=jax.lax.Precision.HIGHEST");
    // `x[t.index]` reads the tile's own rows: a `pl.ds` window, no one-hot.
    let src = script(
        "block_sizes=[128]",
        "x: torch.Tensor",
        "    out = torch.empty_like(x)\n\
         \x20   for t in hl.tile(x.size(0)):\n\
         \x20       out[t.index] = x[t.index] + 1.0\n\
         \x20   return out",
        "x = torch.arange(1024, dtype=torch.float32)",
        "x",
    );
    let code = emit("tile_index", &src, false);
    assert!(!code.contains("one_hot"), "{code}");
}
