"""Adds 1 to a (8, 128) float32 input; prints to stdout to check the protocol stream survives."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

print("add_one: imported (this must not reach the protocol stream)")


def make(interpret):
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0

    def f(x):
        print("add_one: tracing")
        out = pl.pallas_call(
            kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            interpret=interpret,
        )(x)
        return (out,)

    return f


def run(*inputs, mode="pallas-tpu-interpret"):
    from jax.experimental.pallas import tpu as pltpu

    interpret = {
        "pallas-interpret": True,
        "pallas-tpu-interpret": pltpu.InterpretParams(
            out_of_bounds_reads="raise", uninitialized_memory="nan"
        ),
    }.get(mode, False)
    return make(interpret)(*inputs)
