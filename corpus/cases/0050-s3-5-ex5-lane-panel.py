# pallas-diff: source corpus entry 0050-s3-5-ex5-lane-panel: spec §3.5 example 5 (bf16 aligned lane panel `x_block[:, :, 128:256]`, ff265305); lanes 0-127 hold 1.0, lanes 128-255 hold 2.0
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def lane_panel(x: torch.Tensor):
    out = torch.empty([1, 4, 128], dtype=torch.bfloat16)
    for request in hl.grid(1):
        state = hl.zeros([4, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            state = state + x_block[:, :, 128:256].float().sum(dim=0)
        out[request, :, :] = state.to(torch.bfloat16)
    return out


x = torch.tensor([1.0, 2.0], dtype=torch.bfloat16).reshape(1, 1, 2, 1).expand(8, 4, 2, 128).contiguous().reshape(8, 4, 256)
lane_panel(x)
