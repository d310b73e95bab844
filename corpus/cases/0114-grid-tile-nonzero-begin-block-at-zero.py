# pallas-diff: source corpus entry 0114-grid-tile-nonzero-begin-block-at-zero: finding nb1-out (mismatch/helion-pallas/values/emit_pipeline/-)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[]),
)
def kernel(x: torch.Tensor):
    out = torch.zeros([4, 128], dtype=torch.float32)
    for outer in hl.tile(1, 4, block_size=4):
        out[outer, :] = x[outer, :] + 1.0
    return out


x = torch.arange(512, dtype=torch.float32).reshape(4, 128)
kernel(x)
