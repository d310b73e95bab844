# Helion 1.5.1 refuses this while tracing: helion-pallas and helion-tpu-lower give stage trace,
# InvalidIndexingType, first message line "Expected tile/int/None/tensor/etc in tensor[...], got -1.",
# line 21 (`acc = acc + x_block[-1]`), refusal true. helion-eager runs it: for x float32
# [8, 2, 128] with row r = 2^r it returns [1, 2, 128] all 136.0 (rows 3 and 7).
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def last_row(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            acc = acc + x_block[-1]
        out[request, :, :] = acc
    return out
