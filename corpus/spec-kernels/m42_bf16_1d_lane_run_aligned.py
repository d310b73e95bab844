# pallas-diff: source issue 42, mutant survivor view_ops.py:713 `itemsize / 8` (the bitwidth of a 1-D block's lane alignment): a 1-D bf16 block of 512 narrowed by an inner tile of 256, which Helion lowers (a 1-D 16-bit lane dim needs 256) and would refuse with a bitwidth of 0.25 (alignment 16384)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def lane_runs_1d_aligned(x: torch.Tensor):
    out = torch.empty([1, 256], dtype=torch.float32)
    for request in hl.grid(1):
        state = hl.zeros([256], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=512):
            x_block = x[outer]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=256):
                state = state + x_block[local.index].float()
        out[request, :] = state
    return out


x = torch.arange(1024, dtype=torch.float32).to(torch.bfloat16)
lane_runs_1d_aligned(x)
