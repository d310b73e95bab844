# pallas-diff: source corpus entry 0008-d5-bounded-slice-past-extent: spec §4 D5 (bounded slice past the extent; a652fcf9 gave 0.667, correct 2.0)
# pallas-diff: verdict rejected BackendUnsupported selector.wider-than-block
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def bounded_slice(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            part = x_block[1:10, :, :]
            acc = acc + part.float().sum(dim=0) / part.size(0)
        out[request, :, :] = acc
    return out


x = torch.ones(8, 2, 128)
bounded_slice(x)
