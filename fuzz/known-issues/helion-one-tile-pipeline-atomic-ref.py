@helion.kernel(backend="pallas", static_shapes=True,
               config=helion.Config(block_sizes=[], pallas_loop_type="emit_pipeline"))
def kernel(x: torch.Tensor, y: torch.Tensor):
    out = torch.zeros([1, 64], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([64], dtype=torch.float32)
        for outer in hl.tile(8, block_size=8):
            hl.atomic_add(x, [outer, slice(None)], y[outer, :])
            acc = acc
        out[request, :] = acc
    return out

x = torch.ones(8, 64, dtype=torch.float32)
y = torch.randn(8, 64, dtype=torch.float32)
kernel(x, y)
