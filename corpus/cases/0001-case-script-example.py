# pallas-diff: source corpus entry 0001-case-script-example: shared/spec/case-script.md example (the shape of spec §3.5 example 2 with a config-driven inner block)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[4, 2], pallas_loop_type="fori_loop"),
)
def tail_runs(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0)):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live):
                acc = acc + x_block[local.index, :, :].float().sum(dim=0)
            if live >= 3:
                acc = acc + x_block[live - 3 : live, :, :].float().sum(dim=0)
        out[request, :, :] = acc
    return out


torch.manual_seed(0)
x = torch.randn(9, 2, 128, dtype=torch.bfloat16)
tail_runs(x)
