# pallas-diff: source corpus entry 0113-one-hot-scatter-partial-tile-slot-zero: finding scat-out (mismatch/helion-pallas/values/fori_loop/-)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def scatter_rows(x: torch.Tensor, cache: torch.Tensor, idx: torch.Tensor):
    for tb in hl.tile(x.size(0), block_size=2):
        cache[idx[tb], :] = x[tb, :]


x = torch.full([3, 128], 7.0)
cache = torch.full([4, 128], 5.0)
idx = torch.tensor([3, 2, 1], dtype=torch.int32)
scatter_rows(x, cache, idx)
