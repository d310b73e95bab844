# pallas-diff: source issue 39: Helion's matmul test style: torch.addmm accumulating bfloat16 factors into a float32 acc over partial M and K tiles (12 x 40 x 128, blocks 8, 128, 16), lowered as acc + lax.dot_general(..., preferred_element_type=jnp.float32)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[8, 128, 16], pallas_loop_type="fori_loop"),
)
def matmul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    m, k = x.size()
    _, n = y.size()
    out = torch.empty([m, n], dtype=torch.promote_types(x.dtype, y.dtype), device=x.device)
    for tile_m, tile_n in hl.tile([m, n]):
        acc = hl.zeros([tile_m, tile_n], dtype=torch.float32)
        for tile_k in hl.tile(k):
            acc = torch.addmm(acc, x[tile_m, tile_k], y[tile_k, tile_n])
        out[tile_m, tile_n] = acc.to(out.dtype)
    return out


x = torch.randn(12, 40, dtype=torch.bfloat16)
y = torch.randn(40, 128, dtype=torch.bfloat16)
matmul(x, y)
