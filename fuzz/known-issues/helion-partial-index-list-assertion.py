@helion.kernel(backend="pallas", static_shapes=True,
               config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"))
def kernel(x: torch.Tensor, y: torch.Tensor):
    out = torch.zeros([1, 1, 0], dtype=torch.float32)
    x_alias = x.view_as(x)
    for outer in hl.tile(0, 0, block_size=1):
        hl.atomic_add(x_alias, [outer], y[outer, :, :])
    return out

x = torch.ones(1, 1, 128); y = torch.ones(1, 1, 128)
kernel(x, y)
