# pallas-diff: source corpus entry 0084-test-tile-count-inside-fori-loop-unroll: spec §5.1 upstream test/test_pallas.py::TestPallas::test_tile_count_inside_fori_loop, pallas_loop_type=unroll (also spec §4 D2)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="unroll"),
)
def count_tiles(x: torch.Tensor):
    out = torch.zeros([1, 128], dtype=torch.float32)
    for _request in hl.grid(1):
        acc = hl.zeros([1, 128], dtype=torch.float32)
        for outer in hl.tile(4, 12, block_size=4):
            acc = acc + outer.count
        out[0:1, :] = acc
    return out


x = torch.zeros(16, 128, dtype=torch.float32)
count_tiles(x)
