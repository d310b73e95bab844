# pallas-diff: source corpus entry 0109-h39-one-hot-gather-negative-index: finding negf (mismatch/helion-pallas/values/emit_pipeline/-)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[8, 128]),
)
def gather_rows(values: torch.Tensor, indices: torch.Tensor):
    out = torch.empty([indices.size(0), values.size(1)], dtype=torch.float32)
    for tile_m, tile_n in hl.tile([indices.size(0), values.size(1)]):
        out[tile_m, tile_n] = values[indices[tile_m], tile_n]
    return out


values = torch.randn(16, 128)
indices = torch.tensor([3, 0, -1, 15, 7, -16, 2, 1], dtype=torch.int32)
gather_rows(values, indices)
