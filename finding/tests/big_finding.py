import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def big(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    out = torch.zeros([2, 2, 128], dtype=torch.float32)
    for request in hl.grid(2):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        extra = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            y_block = y[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[local.index, :, :].float().sum(dim=0)
                extra = extra + y_block[local.index, :, :].float().sum(dim=0) * 2
            acc = acc + x_block[1, :, :].float()
            if live >= 3:
                extra = extra + y_block[hl.arange(live - 3, live), :, :].float().sum(dim=0)
            extra = extra + x_block[0:2, :, :].float().sum(dim=0)
        for t2 in hl.tile(w.size(0), block_size=2):
            extra = extra + w[t2, :, :].sum(dim=0)
        out[request, :, :] = acc + extra
    return out


torch.manual_seed(3)
x = torch.randn(12, 2, 128)
y = torch.randn(12, 2, 128)
w = torch.randn(4, 2, 128)
big(x, y, w)
