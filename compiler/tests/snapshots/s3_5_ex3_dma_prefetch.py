"""pallas-diff: Pallas module for kernel `short_conv` (the lowering of Helion 1.5.1).

Config: block_sizes=[] (effective [1, 4, 1]), pallas_loop_type="fori_loop"; padding: zeros, masks by multiplication (upstream).
"""
import functools  # noqa: F401
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _helion_short_conv(x, weight, initial, starts, ends, out, final, x_buf, x_sem):
    _BLOCK_SIZE_1 = 4
    _BLOCK_SIZE_2 = 1
    offset_0 = pl.program_id(0)
    start = starts[offset_0]
    end = ends[offset_0]
    state_0 = initial[offset_0, 0, :, :].astype(jnp.float32)
    state_1 = initial[offset_0, 1, :, :].astype(jnp.float32)
    state_2 = initial[offset_0, 2, :, :].astype(jnp.float32)
    weight_0 = weight[0, :, :].astype(jnp.float32)
    weight_1 = weight[1, :, :].astype(jnp.float32)
    weight_2 = weight[2, :, :].astype(jnp.float32)
    weight_3 = weight[3, :, :].astype(jnp.float32)
    _num_iterations = (end - start + _BLOCK_SIZE_1 - 1) // _BLOCK_SIZE_1

    @pl.when(_num_iterations > 0)
    def _dma_prime_1():
        pltpu.make_async_copy(x.at[pl.ds(start, _BLOCK_SIZE_1), :, :], x_buf.at[0], x_sem.at[0]).start()

    def _fori_body_1(_j, _carry):
        (state_0, state_1, state_2) = _carry
        offset_1 = start + _j * _BLOCK_SIZE_1
        mask_1 = _j * _BLOCK_SIZE_1 + jnp.arange(0, _BLOCK_SIZE_1, dtype=jnp.int32) < end - start

        @pl.when(_j + 1 < _num_iterations)
        def _dma_prefetch_1():
            pltpu.make_async_copy(x.at[pl.ds(start + (_j + 1) * _BLOCK_SIZE_1, _BLOCK_SIZE_1), :, :], x_buf.at[(_j + 1) % 2], x_sem.at[(_j + 1) % 2]).start()

        pltpu.make_async_copy(x.at[pl.ds(offset_1, _BLOCK_SIZE_1), :, :], x_buf.at[_j % 2], x_sem.at[_j % 2]).wait()
        x_block = x_buf.at[_j % 2].at[:, :, :]
        live = jnp.minimum(offset_1 + _BLOCK_SIZE_1, end) - offset_1

        def _fori_body_2(_j_1, _carry):
            (state_0, state_1, state_2) = _carry
            offset_2 = _j_1 * _BLOCK_SIZE_2
            token = x_block[pl.ds(offset_2, 1), :, :][0, :, :].astype(jnp.float32)
            acc = state_0 * weight_0 + state_1 * weight_1
            acc = acc + (state_2 * weight_2 + token * weight_3)
            out[offset_1 + offset_2, :, :] = acc.astype(jnp.bfloat16)
            state_0 = state_1
            state_1 = state_2
            state_2 = token
            return (state_0, state_1, state_2)

        (state_0, state_1, state_2) = jax.lax.fori_loop(0, (live + _BLOCK_SIZE_2 - 1) // _BLOCK_SIZE_2, _fori_body_2, (state_0, state_1, state_2))
        return (state_0, state_1, state_2)

    (state_0, state_1, state_2) = jax.lax.fori_loop(0, _num_iterations, _fori_body_1, (state_0, state_1, state_2))
    final[offset_0, 0, :, :] = state_0.astype(jnp.bfloat16)
    final[offset_0, 1, :, :] = state_1.astype(jnp.bfloat16)
    final[offset_0, 2, :, :] = state_2.astype(jnp.bfloat16)


def make(interpret):
    """Returns `f(*inputs) -> tuple` running `_helion_short_conv` under `interpret` (True, `pltpu.InterpretParams(...)`, or False)."""

    def f(x, weight, initial, starts, ends):
        _operand_0 = jnp.pad(x, ((0, 3), (0, 0), (0, 0)), constant_values=0)
        outs = pl.pallas_call(
            _helion_short_conv,
            grid=(1,),
            in_specs=[pl.BlockSpec(memory_space=pl.ANY), pl.BlockSpec(memory_space=pltpu.VMEM), pl.BlockSpec(memory_space=pltpu.VMEM), pl.BlockSpec(memory_space=pltpu.VMEM), pl.BlockSpec(memory_space=pltpu.VMEM)],
            out_specs=[pl.BlockSpec(memory_space=pltpu.VMEM), pl.BlockSpec(memory_space=pltpu.VMEM)],
            out_shape=[jax.ShapeDtypeStruct((9, 2, 128), jnp.bfloat16), jax.ShapeDtypeStruct((1, 3, 2, 128), jnp.bfloat16)],
            scratch_shapes=[pltpu.VMEM((2, 4, 2, 128), jnp.bfloat16), pltpu.SemaphoreType.DMA((2,))],
            interpret=interpret,
        )(_operand_0, weight, initial, starts, ends)
        return (outs[0], outs[1])

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
