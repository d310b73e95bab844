@helion.kernel(backend="pallas", static_shapes=True,
               config=helion.Config(block_sizes=[8], pallas_loop_type="fori_loop"))
def kernel(x: torch.Tensor):
    out = torch.zeros([1, 128], dtype=torch.float32)
    for g in hl.grid(1):
        acc = hl.zeros([128], dtype=torch.float32)
        for t in hl.tile(x.size(0)):
            acc = acc + x[t, :].sum(dim=0)
        out[g, :] = acc
    return out

x = torch.randn(0, 128)
kernel(x)
