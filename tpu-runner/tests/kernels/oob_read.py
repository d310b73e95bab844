"""Reads 8 rows starting at a dynamic row index past the end of an (8, 128) block."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def make(interpret):
    def kernel(x_ref, o_ref):
        start = pl.program_id(0) + 8  # dynamic, and out of range: rows 8..15 of an 8-row block
        o_ref[...] = x_ref[pl.ds(start, 8), :]

    def f(x):
        out = pl.pallas_call(
            kernel,
            grid=(1,),
            in_specs=[pl.BlockSpec((8, 128), lambda i: (0, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (0, 0)),
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            interpret=interpret,
        )(x)
        return (out,)

    return f
