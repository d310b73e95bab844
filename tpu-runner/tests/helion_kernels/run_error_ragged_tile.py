# Helion 1.5.1 (with jax 0.10.2) compiles this but cannot run it in the Pallas interpreter when the
# row count is not a multiple of the block: for x float32 [9, 128], helion-pallas gives stage run,
# TypeError, first message line "Shapes must be 1D sequences of concrete values of integer type,
# got (JitTracer(~int32[]), 128).", line 17 (from the generated module's "# src[...]" comment),
# refusal false (the interpreter's discharge of the edge block's DMA). The same happens calling the
# kernel directly with HELION_PALLAS_INTERPRET=1. helion-eager returns 2 * x and helion-tpu-lower
# lowers it; with x [16, 128] helion-pallas returns 2 * x too.
import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True, config=helion.Config(block_sizes=[8]))
def double(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for t in hl.tile(x.size(0)):
        out[t, :] = x[t, :] * 2
    return out
