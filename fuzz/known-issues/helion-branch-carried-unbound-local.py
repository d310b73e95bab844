@helion.kernel(backend="pallas", static_shapes=True,
               config=helion.Config(block_sizes=[1], pallas_loop_type="unroll"))
def kernel(x: torch.Tensor):
    n = x.size(0)
    out = torch.zeros([1, 1, 1], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([1, 1], dtype=torch.float32)
        for outer in hl.tile(0, n):
            live = outer.begin
            if live >= 1:
                acc = acc
        out[request, :, :] = acc
    return out

x = torch.ones(1, 1, 1, dtype=torch.bfloat16)
kernel(x)
