# pallas-diff: source corpus entry 0011-d6-offset-zero-through-if: spec §4 D6 (index provenance across a scope boundary: `rows = local.index + 0` bound before an `if`)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def offset_zero_through_if(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=2):
                rows = local.index + 0
                if live >= 2:
                    acc = acc + x_block[rows, :, :].float().sum(dim=0)
        out[request, :, :] = acc
    return out


x = torch.ones(8, 2, 128)
offset_zero_through_if(x)
