@helion.kernel(backend="pallas", static_shapes=True,
               config=helion.Config(block_sizes=[1], pallas_loop_type="fori_loop"))
def k(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=3):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live):
                acc = acc + x_block[local.begin, :, :] + x_block[-1, :, :]
        out[request, :, :] = acc
    return out

x = torch.ones(9, 2, 128, dtype=torch.float32)
k(x)
