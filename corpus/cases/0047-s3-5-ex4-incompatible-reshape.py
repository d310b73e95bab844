# pallas-diff: source corpus entry 0047-s3-5-ex4-incompatible-reshape: spec §3.5 example 4 (a reshape that changes the two minor dims makes the token a value boundary)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def reshape_boundary(x: torch.Tensor):
    out = torch.zeros([1, 2, 64], dtype=torch.float32)
    for request in hl.grid(1):
        state = hl.zeros([2, 64], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=1):
                token = x_block[local.begin, :, :]
                state = state + token.reshape(2, 2, 64).float().sum(dim=0)
        out[request, :, :] = state
    return out


x = torch.ones(8, 2, 128)
reshape_boundary(x)
