# pallas-diff: source issue 42, mutant survivor view_ops.py:238 (a literal slice of a computed value whose dim is a tile sized by the config's block_sizes: Helion checks the slice against the block size read from the config, and the mutant that drops the config crashes; the corpus's static value slices were over tiles with a literal block_size)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[8], pallas_loop_type="fori_loop"),
)
def kernel(x: torch.Tensor):
    out = torch.zeros([16, 128], dtype=torch.float32)
    for tile in hl.tile(x.size(0)):
        v = x[tile, :] * 2.0
        out[tile, :] = v + v[1:2, :]
    return out


torch.manual_seed(0)
x = torch.randn(16, 128)
kernel(x)
