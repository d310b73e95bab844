# pallas-diff: source corpus entry 0108-h39-gather-rows-one-hot: issue 39: a gather out of a resident table as Helion's tests write it, values[indices[tile_m], tile_n]: one_hot(indices, 16) contracted with the whole table along dim 0 (Helion's emit_gather under pallas_indirect_access_mode one_hot)
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
indices = torch.tensor([3, 0, 14, 15, 7, 5, 2, 1, 9, 11], dtype=torch.int32)
gather_rows(values, indices)
