@helion.kernel(backend="pallas", static_shapes=True,
               config=helion.Config(block_sizes=[2, 2, 1], pallas_loop_type="fori_loop"))
def kernel(x: torch.Tensor):
    out = torch.zeros([1, 2, 64], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 64], dtype=torch.float32)
        for outer in hl.tile(1):
            for inner in hl.tile(outer.begin, outer.end):
                acc += x[inner, :, :].sum(dim=0)
            for inner_1 in hl.tile(outer.begin, outer.end):
                acc += x[inner_1, :, :].sum(dim=0)
        out[request, :, :] = acc
    return out

x = torch.ones(1, 2, 64, dtype=torch.float32)
kernel(x)
