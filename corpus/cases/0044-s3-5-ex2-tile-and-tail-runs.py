# pallas-diff: source corpus entry 0044-s3-5-ex2-tile-and-tail-runs: spec §3.5 example 2 (masked tile run and a data-dependent tail; 9 tokens, block 4); ones: 9 + 3 + 3
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[4], pallas_loop_type="fori_loop"),
)
def windows(x: torch.Tensor, initial: torch.Tensor):
    out = torch.empty_like(initial)
    for request in hl.grid(1):
        state = initial[request, :, :].float()
        for outer in hl.tile(x.size(0)):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=2):
                state = state + x_block[local.index, :, :].float().sum(dim=0)
            if live >= 3:
                state = state + x_block[live - 3 : live, :, :].float().sum(dim=0)
        out[request, :, :] = state.to(torch.bfloat16)
    return out


x = torch.ones(9, 2, 128, dtype=torch.bfloat16)
initial = torch.zeros(1, 2, 128, dtype=torch.bfloat16)
windows(x, initial)
