"""Takes a bfloat16 and an int32 input: returns (x * 2 + 0.5 as bf16, y * 3 - 7 as int32)."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def make(interpret):
    def kernel(x_ref, y_ref, xo_ref, yo_ref):
        xo_ref[...] = x_ref[...] * 2 + jnp.asarray(0.5, jnp.bfloat16)
        yo_ref[...] = y_ref[...] * 3 - 7

    def f(x, y):
        return pl.pallas_call(
            kernel,
            out_shape=(
                jax.ShapeDtypeStruct(x.shape, x.dtype),
                jax.ShapeDtypeStruct(y.shape, y.dtype),
            ),
            interpret=interpret,
        )(x, y)

    return f
