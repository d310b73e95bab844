# pallas-diff: source corpus entry 0002-d10-named-arange-before-if: spec §4 D10 and D6 (dynamic run bound to a name before a branch; 69b44459 raised ValueError in jnp.clip, correct 6.0)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def named_arange(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            picked = hl.arange(live - 3, live)
            if live >= 3:
                acc = acc + x_block[picked, :, :].float().sum(dim=0)
        out[request, :, :] = acc
    return out


x = torch.ones(8, 2, 128)
named_arange(x)
