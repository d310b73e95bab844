# pallas-diff: source corpus entry 0068-test-resident-subview-plain-subscripts-unchanged: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_plain_subscripts_unchanged
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[16, 32]),
)
def broadcast(x: torch.Tensor, y: torch.Tensor):
    out = torch.empty([x.size(0), y.size(0)], dtype=torch.float32)
    for tile_i, tile_j in hl.tile([x.size(0), y.size(0)]):
        out[tile_i, tile_j] = x[tile_i][:, None] * y[tile_j][None, :]
    return out


torch.manual_seed(0)
x = torch.randn(64, dtype=torch.float32)
y = torch.randn(128, dtype=torch.float32)
broadcast(x, y)
