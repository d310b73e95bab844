# pallas-diff: source corpus entry 0004-d13-strided-iota: spec §4 D13 (strided iota treated as contiguous; rows [1, 2, 4, 8]; 761bbc4c gave 3.0, correct 5.0)
# pallas-diff: verdict rejected BackendUnsupported selector.tail-outside-conditional
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def strided_iota(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            acc = acc + x_block[hl.arange(0, 4, 2), :, :].float().sum(dim=0)
        out[request, :, :] = acc
    return out


x = torch.tensor([1.0, 2.0, 4.0, 8.0]).reshape(4, 1, 1).expand(4, 2, 128).contiguous()
strided_iota(x)
