# Known issue helion-mask-by-multiplication-nan: rows 6 and 7 of x are past the tile loop's end (hl.tile(0, 6, block_size=4)), so torch never reads them; Helion loads the second tile whole and multiplies it by its mask, so an inf or NaN there (the extra input sets of flavor specials put some) becomes NaN in the sum. Its finite twin agrees.
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def masked_tail_sum(x: torch.Tensor):
    out = torch.empty([1, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([128], dtype=torch.float32)
        for outer in hl.tile(0, 6, block_size=4):
            x_block = x[outer, :]
            acc = acc + x_block.sum(dim=0)
        out[request, :] = acc
    return out


torch.manual_seed(0)
x = torch.randn(8, 128)
masked_tail_sum(x)
