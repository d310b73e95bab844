"""Uses jax.lax.dynamic_slice on a loaded value: fine in the interpreters, refused by Mosaic."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def make(interpret):
    def kernel(x_ref, o_ref):
        v = x_ref[...]
        start = pl.program_id(0)
        o_ref[...] = jax.lax.dynamic_slice(v, (start, 0), (8, 128))

    def f(x):
        out = pl.pallas_call(
            kernel,
            grid=(1,),
            in_specs=[pl.BlockSpec((16, 128), lambda i: (0, 0))],
            out_specs=pl.BlockSpec((8, 128), lambda i: (0, 0)),
            out_shape=jax.ShapeDtypeStruct((8, 128), x.dtype),
            interpret=interpret,
        )(x)
        return (out,)

    return f
