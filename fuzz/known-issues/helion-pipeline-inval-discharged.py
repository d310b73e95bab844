@helion.kernel(backend="pallas", static_shapes=True,
               config=helion.Config(block_sizes=[], pallas_loop_type="emit_pipeline"))
def kernel(k: torch.Tensor, g: torch.Tensor):
    out = torch.zeros([2, 32], dtype=torch.float32)
    for request in hl.grid(2):
        state = hl.zeros([1, 32], dtype=torch.float32)
        for chunk in hl.tile(k.size(1), block_size=8):
            k_chunk = k[request, chunk, :, :]
            g_chunk = g[request, chunk, :]
            for step in hl.tile(8, block_size=1):
                state = state + k_chunk[step.begin, :, :] * g_chunk[step.begin, :]
        out[request, :] = state[0, :]
    return out

k = torch.ones(2, 8, 1, 32, dtype=torch.float32)
g = torch.ones(2, 8, 32, dtype=torch.float32)
kernel(k, g)
