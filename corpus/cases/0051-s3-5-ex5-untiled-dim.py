# pallas-diff: source corpus entry 0051-s3-5-ex5-untiled-dim: spec §3.5 example 5 (`x_block[:, 0, :, :]` on a (4, 2, 2, 128) Ref: an untiled dim); chunk 0 holds 1.0, chunk 1 holds 2.0
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def untiled_dim(x: torch.Tensor):
    out = torch.empty([1, 2, 128], dtype=torch.bfloat16)
    for request in hl.grid(1):
        state = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :, :]
            state = state + x_block[:, 0, :, :].float().sum(dim=0)
        out[request, :, :] = state.to(torch.bfloat16)
    return out


x = torch.tensor([1.0, 2.0], dtype=torch.bfloat16).reshape(1, 2, 1, 1).expand(8, 2, 2, 128).contiguous()
untiled_dim(x)
