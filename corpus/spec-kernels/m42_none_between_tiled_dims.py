# pallas-diff: source issue 42, mutant survivor codegen.py:690 (a `None` between two tiled dims of a load, `x[tm, None, tn]`: Helion places the new unit dim by counting the output dims before it, and the mutant that counts backwards puts it last; the corpus and the campaign only had `None` first or last)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True, config=helion.Config(block_sizes=[8, 128]))
def kernel(x: torch.Tensor, y: torch.Tensor):
    out = torch.zeros([x.size(0), y.size(0), x.size(1)], dtype=torch.float32)
    for tm, tn in hl.tile([x.size(0), x.size(1)]):
        out[tm, :, tn] = x[tm, None, tn] + y[None, :, None]
    return out


torch.manual_seed(0)
x = torch.rand(16, 256)
y = torch.rand(4)
kernel(x, y)
