# pallas-diff: source issue 42, mutant survivor tracing_ops.py:170 (an inner tile loop bounded by the enclosing tile's end minus one: Helion 1.5.1 takes only `tile.end` and `min(host, tile.end)` as a dependent end, and the mutant also takes `tile.end - 1`, making it min(-1, tile.end) and the loop write garbage; the generator only bounds inner loops by `tile.end` itself)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(backend="pallas", static_shapes=True, config=helion.Config(block_sizes=[8, 1]))
def kernel(x: torch.Tensor):
    out = torch.zeros_like(x)
    for outer in hl.tile(x.size(0)):
        for inner in hl.tile(outer.begin, outer.end - 1):
            out[inner, :] = x[inner, :] * 2
    return out


torch.manual_seed(0)
x = torch.rand(16, 128)
kernel(x)
