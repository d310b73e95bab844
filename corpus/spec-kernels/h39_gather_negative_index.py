# pallas-diff: source issue 39: Helion 1.5.1 bug: a one-hot gather reads a negative index (-1, -16) as a row of zeros where torch wraps it to a row from the end (docs/helion-findings.md); our model reproduces the lowering, so pallas-sim mismatches too
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True, config=helion.Config(block_sizes=[8, 128]))
def gather_rows(values: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    out = torch.empty([indices.size(0), values.size(1)], dtype=values.dtype, device=values.device)
    for tile_m, tile_n in hl.tile([indices.size(0), values.size(1)]):
        out[tile_m, tile_n] = values[indices[tile_m], tile_n]
    return out


values = torch.randn(16, 128)
indices = torch.tensor([3, 0, -1, 15, 7, -16, 2, 1], dtype=torch.int32)
gather_rows(values, indices)
