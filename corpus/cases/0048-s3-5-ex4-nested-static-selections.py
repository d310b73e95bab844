# pallas-diff: source corpus entry 0048-s3-5-ex4-nested-static-selections: spec §3.5 example 4 (nested static selections keep physical dims until the boundary); x[:, c, h, :] holds [[1, 2], [4, 8]][c][h]
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def nested_static(x: torch.Tensor):
    out = torch.zeros([1, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :, :]
            group = x_block[:, 0, :, :]
            head = group[:, 0, :]
            acc = acc + head.float().sum(dim=0)
        out[request, :] = acc
    return out


x = torch.tensor([[1.0, 2.0], [4.0, 8.0]]).reshape(1, 2, 2, 1).expand(8, 2, 2, 128).contiguous()
nested_static(x)
