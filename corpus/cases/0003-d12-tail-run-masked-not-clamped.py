# pallas-diff: source corpus entry 0003-d12-tail-run-masked-not-clamped: spec §4 D12 (tail run clamped backward before masking; rows [1, 2, 4] tiled by two; 761bbc4c gave 5.0, correct 7.0)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def tail_run(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[local.index, :, :].float().sum(dim=0)
        out[request, :, :] = acc
    return out


x = torch.tensor([1.0, 2.0, 4.0]).reshape(3, 1, 1).expand(3, 2, 128).contiguous()
tail_run(x)
