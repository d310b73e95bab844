import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def kernel(x: torch.Tensor, y: torch.Tensor):
    out = torch.zeros([8, 128], dtype=torch.float32)
    for g in hl.grid(1):
        out[:, :] = hl.dot(x[:, :], y[:, :])
    return out


torch.manual_seed(0)
x = torch.randn(8, 128)
y = torch.randn(128, 128)
kernel(x, y)
