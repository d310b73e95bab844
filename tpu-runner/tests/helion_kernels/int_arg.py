# Helion 1.5.1 lowers and runs this kernel with an `n: int` argument (passed to the launcher as a
# one-element int32 tensor, not specialized). Call first_rows(x, 6), x float32 [8, 2, 128] with
# row r = 2^r: helion-pallas and helion-eager return [1, 2, 128] all 63.0 (rows 0..5, the second
# tile masked); helion-tpu-lower lowers it.
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def first_rows(x: torch.Tensor, n: int) -> torch.Tensor:
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(n, block_size=4):
            acc = acc + x[outer, :, :].sum(dim=0)
        out[request, :, :] = acc
    return out
