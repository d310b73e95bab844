//! Lowering features beyond the spec's examples, on small inline case scripts: the launch grid
//! in two dims, partial-tile stores, atomics, dynamic `unroll`, `emit_pipeline` carries,
//! alignment hints, aliased outputs, poison padding. Each module must also byte-compile.

mod codegen_support;

use codegen_support::{py_compile_all, python3};
use pallas_diff_compiler::compile::{CodegenOptions, Outcome, compile};
use pallas_diff_compiler::frontend::parse_case;

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
    let code = match c.outcome() {
        Outcome::Lowered(s) => s.to_string(),
        Outcome::Rejected(r) => panic!("{name}: rejected {r}"),
        Outcome::Gap(g) => panic!("{name}: {g}"),
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
    // The load is masked by multiplication, the partial-tile store keeps the old contents.
    has("grid2d", &code, "* mask_0.astype(jnp.float32)[:, None]");
    has("grid2d", &code, "jnp.where(mask_0[:, None], ");
    // Padded on rows only, sliced back.
    has(
        "grid2d",
        &code,
        "jnp.pad(x, ((0, 4), (0, 0)), constant_values=0)",
    );
    has("grid2d", &code, "return (outs[0][:12, :],)");
    let poisoned = emit("grid2d_poison", &src, true);
    has("grid2d_poison", &poisoned, "constant_values=jnp.nan");
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
