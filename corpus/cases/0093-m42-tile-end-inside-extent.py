# pallas-diff: source corpus entry 0093-m42-tile-end-inside-extent: issue 42, mutant survivors codegen.py:322/333/335 (the load mask of a tile whose end lies inside the tensor, not on a block multiple: rows 7 and 8 of the second block [5, 9) are data, not padding, so only the mask keeps them out of the sum; the generator draws tile ends at the extent)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def kernel(x: torch.Tensor):
    out = torch.zeros([1, 1, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([1, 128], dtype=torch.float32)
        for outer in hl.tile(1, 7, block_size=4):
            x_block = x[outer, :, :]
            acc = acc + x_block.sum(dim=0)
        out[request, :, :] = acc
    return out


torch.manual_seed(0)
x = torch.rand(12, 1, 128)
kernel(x)
