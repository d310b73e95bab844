"""pallas-diff: Pallas module for kernel `lane_panel` (the lowering of Helion 1.5.1).

Config: block_sizes=[] (effective [1, 4]), pallas_loop_type="fori_loop"; padding: zeros, masks by multiplication (upstream).
"""
import functools  # noqa: F401
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _helion_lane_panel(x, out):
    _BLOCK_SIZE_1 = 4
    offset_0 = pl.program_id(0)
    state = jnp.full((4, 128), 0.0, jnp.float32)

    def _fori_body_1(_j, _carry):
        (state,) = _carry
        offset_1 = _j * _BLOCK_SIZE_1
        x_block = x.at[pl.ds(pl.multiple_of(offset_1, _BLOCK_SIZE_1), _BLOCK_SIZE_1), :, :]
        state = state + jnp.sum(x_block[:, :, pl.ds(128, 128)].astype(jnp.float32), axis=0)
        return (state,)

    (state,) = jax.lax.fori_loop(0, (8 + _BLOCK_SIZE_1 - 1) // _BLOCK_SIZE_1, _fori_body_1, (state,))
    out[offset_0, :, :] = state.astype(jnp.bfloat16)


def make(interpret):
    """Returns `f(*inputs) -> tuple` running `_helion_lane_panel` under `interpret` (True, `pltpu.InterpretParams(...)`, or False)."""

    def f(x):
        outs = pl.pallas_call(
            _helion_lane_panel,
            grid=(1,),
            in_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
            out_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
            out_shape=[jax.ShapeDtypeStruct((1, 4, 128), jnp.bfloat16)],
            interpret=interpret,
        )(x)
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
