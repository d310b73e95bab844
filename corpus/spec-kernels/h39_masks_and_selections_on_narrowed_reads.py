# pallas-diff: source issue 39: the masks and selections our codegen lowers (a comparison as a mask, `&`, `|`, torch.where, torch.maximum, torch.minimum, torch.relu) on constant-index reads of a resident block, with a tail tile; expected sum from eager torch 2.15
# pallas-diff: verdict lowered
# pallas-diff: output out sum 1918252.0
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[8], pallas_loop_type="fori_loop"),
)
def kernel(x: torch.Tensor):
    out = torch.zeros([x.size(0), 128], dtype=torch.float32)
    for outer in hl.tile(x.size(0)):
        x_block = x[outer, :, :]
        a = x_block[:, 0, :] - 1280.0
        b = 1000.0 - x_block[:, 1, :]
        keep = ((a > 0.0) & (b < -300.0)) | (a == b - 1.0)
        picked = torch.where(keep, torch.maximum(a, b), torch.minimum(a, b))
        out[outer, :] = picked + torch.relu(a - b) * 2.0
    return out


x = torch.arange(2560, dtype=torch.float32).reshape(10, 2, 128)
kernel(x)
