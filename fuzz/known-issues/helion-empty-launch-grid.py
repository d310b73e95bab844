@helion.kernel(backend="pallas", static_shapes=True,
               config=helion.Config(block_sizes=[8], pallas_loop_type="fori_loop"))
def kernel(x: torch.Tensor):
    out = torch.zeros_like(x)
    for t in hl.tile(x.size(0)):
        x_block = x[t, :]
        out[t, :] = x_block[:, 0:128] + 1.0
    return out

x = torch.randn(0, 128)
kernel(x)
