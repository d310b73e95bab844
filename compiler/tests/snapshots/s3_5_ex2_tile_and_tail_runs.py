"""pallas-diff: Pallas module for kernel `windows` (the lowering of Helion 1.5.1).

Config: block_sizes=[4] (effective [1, 4, 2]), pallas_loop_type="fori_loop"; padding: zeros, masks by multiplication (upstream).
"""
import functools  # noqa: F401
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _helion_windows(x, initial, out):
    _BLOCK_SIZE_1 = 4
    _BLOCK_SIZE_2 = 2
    offset_0 = pl.program_id(0)
    state = initial[offset_0, :, :].astype(jnp.float32)

    def _fori_body_1(_j, _carry):
        (state,) = _carry
        offset_1 = _j * _BLOCK_SIZE_1
        mask_1 = _j * _BLOCK_SIZE_1 + jnp.arange(0, _BLOCK_SIZE_1, dtype=jnp.int32) < 9
        x_block = x.at[pl.ds(pl.multiple_of(offset_1, _BLOCK_SIZE_1), _BLOCK_SIZE_1), :, :]
        live = jnp.minimum(offset_1 + _BLOCK_SIZE_1, 9) - offset_1

        def _fori_body_2(_j_1, _carry):
            (state,) = _carry
            offset_2 = _j_1 * _BLOCK_SIZE_2
            mask_2 = _j_1 * _BLOCK_SIZE_2 + jnp.arange(0, _BLOCK_SIZE_2, dtype=jnp.int32) < live
            state = state + jnp.sum((x_block[pl.ds(offset_2, 2), :, :] * mask_2.astype(jnp.bfloat16)[:, None, None]).astype(jnp.float32), axis=0)
            return (state,)

        (state,) = jax.lax.fori_loop(0, (live + _BLOCK_SIZE_2 - 1) // _BLOCK_SIZE_2, _fori_body_2, (state,))

        def _if_branch_0(state):
            sub_0 = jnp.minimum(offset_1 + _BLOCK_SIZE_1, 9) - offset_1 - 3
            state = state + jnp.sum(x_block[pl.ds(jnp.clip(sub_0, 0, 1), 3), :, :].astype(jnp.float32), axis=0)
            return state

        def _else_branch_0(state):
            return state

        state = jax.lax.cond(live >= 3, _if_branch_0, _else_branch_0, state)
        return (state,)

    (state,) = jax.lax.fori_loop(0, (9 + _BLOCK_SIZE_1 - 1) // _BLOCK_SIZE_1, _fori_body_1, (state,))
    out[offset_0, :, :] = state.astype(jnp.bfloat16)


def make(interpret):
    """Returns `f(*inputs) -> tuple` running `_helion_windows` under `interpret` (True, `pltpu.InterpretParams(...)`, or False)."""

    def f(x, initial):
        _operand_0 = jnp.pad(x, ((0, 3), (0, 0), (0, 0)), constant_values=0)
        outs = pl.pallas_call(
            _helion_windows,
            grid=(1,),
            in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM), pl.BlockSpec(memory_space=pltpu.VMEM)],
            out_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
            out_shape=[jax.ShapeDtypeStruct((1, 2, 128), jnp.bfloat16)],
            interpret=interpret,
        )(_operand_0, initial)
        return (outs[0],)

    return f


def run(*inputs, mode="pallas-tpu-interpret"):
    """Runs the kernel on `inputs` in a worker mode (a convenience for by-hand use)."""
    if mode == "pallas-tpu":
        return jax.jit(make(False))(*inputs)
    from jax._src.mesh import AbstractDevice

    interpret = {
        "pallas-interpret": True,
        "pallas-tpu-interpret": pltpu.InterpretParams(
            out_of_bounds_reads="raise", uninitialized_memory="nan"
        ),
    }[mode]
    device = AbstractDevice(device_kind="TPU v5e", num_cores=1, platform="tpu")
    mesh = jax.sharding.AbstractMesh((1,), ("x",), abstract_device=device)
    with jax.sharding.use_abstract_mesh(mesh):
        return jax.jit(make(interpret))(*inputs)
