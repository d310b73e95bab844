# pallas-diff: source corpus entry 0052-s3-5-ex5-value-fallback: spec §3.5 example 5 (grid-level `loaded[:, 64 + hl.arange(128)]`: static value fallback, db0613ca test_loaded_static_slice); column c holds c, so out sums 128 * (64 + ... + 191)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[128]),
)
def loaded_static_slice(x: torch.Tensor):
    out = torch.empty([x.size(0), 128], dtype=torch.float32)
    for tile_rows in hl.tile(x.size(0)):
        loaded = x[tile_rows, :]
        out[tile_rows, :] = loaded[:, 64 + hl.arange(128)]
    return out


x = torch.arange(256, dtype=torch.float32).reshape(1, 256).expand(128, 256).contiguous()
loaded_static_slice(x)
