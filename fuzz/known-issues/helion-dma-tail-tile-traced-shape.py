@helion.kernel(backend="pallas", static_shapes=True,
               config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"))
def kernel(x: torch.Tensor):
    out = torch.zeros_like(x, dtype=torch.float32)
    for outer in hl.tile(0, x.size(0), block_size=2):
        acc = hl.zeros([1, 128], dtype=torch.float32)
        out[outer.begin, :, :] = acc
    return out

x = torch.ones(13, 1, 128, dtype=torch.bfloat16)
kernel(x)
