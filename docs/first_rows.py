import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[2], pallas_loop_type="fori_loop"),
)
def first_rows(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live):
                acc = acc + x_block[local.index, :, :].float().sum(dim=0)
            if live >= 3:
                acc = acc + x_block[live - 3 : live, :, :].float().sum(dim=0)
        out[request, :, :] = acc
    return out


x = torch.arange(9, dtype=torch.float32).reshape(9, 1, 1).expand(9, 2, 128).contiguous()
first_rows(x)
