# pallas-diff: source corpus entry 0007-d2-tile-count-nonzero-begin: spec §4 D2 (`tile.count` with a non-zero begin under emit_pipeline; the WIP gave 6.0, correct 4.0)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="emit_pipeline"),
)
def count_tiles(x: torch.Tensor):
    out = torch.zeros([1, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([1, 128], dtype=torch.float32)
        for outer in hl.tile(4, 12, block_size=4):
            acc = acc + outer.count
        out[0:1, :] = acc
    return out


x = torch.zeros(16, 128)
count_tiles(x)
