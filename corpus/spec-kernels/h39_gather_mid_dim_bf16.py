# pallas-diff: source issue 39: a gather along a middle dim of a bfloat16 table, table[tile_a, indices[tile_b], tile_c] with grid tiles (BlockSpec blocks on dims 0 and 2): the one-hot product's leading dims moved back in front
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True, config=helion.Config(block_sizes=[2, 8, 128]))
def gather_mid_dim(table: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    out = torch.empty([table.size(0), indices.size(0), table.size(2)], dtype=table.dtype, device=table.device)
    for tile_a, tile_b, tile_c in hl.tile([table.size(0), indices.size(0), table.size(2)]):
        out[tile_a, tile_b, tile_c] = table[tile_a, indices[tile_b], tile_c]
    return out


torch.manual_seed(0)
table = torch.randn(3, 16, 128, dtype=torch.bfloat16)
indices = torch.tensor([3, 0, 15, 7, 2, 9, 9, 1, 4, 12, 5], dtype=torch.int32)
gather_mid_dim(table, indices)
