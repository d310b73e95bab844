"""pallas-diff: Pallas module for kernel `loaded_static_slice` (the lowering of Helion 1.5.1).

Config: block_sizes=[128] (effective [128]), pallas_loop_type="emit_pipeline"; padding: zeros, masks by multiplication (upstream).
"""
import functools  # noqa: F401
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _helion_loaded_static_slice(x, out):
    _BLOCK_SIZE_0 = 128
    offset_0 = pl.program_id(0) * _BLOCK_SIZE_0
    loaded = x[:, :]
    out[pl.ds(pl.multiple_of(offset_0, _BLOCK_SIZE_0), _BLOCK_SIZE_0), :] = loaded[:, 64:192]


def make(interpret):
    """Returns `f(*inputs) -> tuple` running `_helion_loaded_static_slice` under `interpret` (True, `pltpu.InterpretParams(...)`, or False)."""

    def f(x):
        outs = pl.pallas_call(
            _helion_loaded_static_slice,
            grid=(1,),
            in_specs=[pl.BlockSpec((128, 256), lambda *g: (jnp.int32(0), jnp.int32(0)), memory_space=pltpu.VMEM)],
            out_specs=[pl.BlockSpec(memory_space=pltpu.VMEM)],
            out_shape=[jax.ShapeDtypeStruct((128, 128), jnp.float32)],
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
