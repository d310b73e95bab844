# Helion 1.5.1 lowers and runs this (the case-script.md example with power-of-two blocks; both
# tiles name block_size=, so the config's block_sizes is []: the example's [4, 2] is refused with
# InvalidConfig "Too many values for config['block_sizes'], expected 0, got 2", line null).
# Call tail_runs(x), x float32 [9, 2, 128] with row r = 2^r (rows 0..8; bfloat16 gives the same):
# helion-pallas and helion-eager return [1, 2, 128] all 749.0 (511 + tail rows 1..3 of tile 0 (14)
# and 5..7 of tile 1 (224)); helion-tpu-lower lowers it (lowered: true, one Mosaic custom call).
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def tail_runs(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[local.index, :, :].float().sum(dim=0)
            if live >= 3:
                acc = acc + x_block[live - 3 : live, :, :].float().sum(dim=0)
        out[request, :, :] = acc
    return out
