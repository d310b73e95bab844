# pallas-diff: source corpus entry 0090-m42-bf16-1d-lane-run: issue 42, mutant survivor view_ops.py:713 (the bitwidth of a 1-D block's lane alignment; the generator makes no 1-D loads): a 1-D bf16 block of 256 narrowed by an inner tile of 128, which Helion refuses (a 1-D 16-bit lane dim needs 128 * 32 // 16 = 256) and `itemsize * 9` would accept
# pallas-diff: verdict rejected BackendUnsupported selector.unaligned
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def lane_runs_1d(x: torch.Tensor):
    out = torch.empty([1, 128], dtype=torch.float32)
    for request in hl.grid(1):
        state = hl.zeros([128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=256):
            x_block = x[outer]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=128):
                state = state + x_block[local.index].float()
        out[request, :] = state
    return out


x = torch.arange(512, dtype=torch.float32).to(torch.bfloat16)
lane_runs_1d(x)
