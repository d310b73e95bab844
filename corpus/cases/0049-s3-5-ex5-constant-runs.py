# pallas-diff: source corpus entry 0049-s3-5-ex5-constant-runs: spec §3.5 example 5 (constants: `x_block[1, :, :]` and `x_block[1:3, :, :]`); rows 1, 2, ..., 128: (2 + 32) + (2 + 4 + 32 + 64)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def constants(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            acc = acc + x_block[1, :, :].float()
            acc = acc + x_block[1:3, :, :].float().sum(dim=0)
        out[request, :, :] = acc
    return out


x = torch.tensor([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]).reshape(8, 1, 1).expand(8, 2, 128).contiguous()
constants(x)
