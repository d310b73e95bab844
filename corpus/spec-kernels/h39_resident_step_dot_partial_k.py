# pallas-diff: source issue 39: a narrowed read out of a resident block feeding hl.dot, its contracted dim a partial tile (40 = 16 + 16 + 8): the factor's lanes past the tile are masked before the product, as Helion's dot masks along K; the resident read itself is not
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[16], pallas_loop_type="fori_loop"),
)
def resident_step_dot_k(x: torch.Tensor, w: torch.Tensor):
    out = torch.zeros([1, 8, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([8, 128], dtype=torch.float32)
        for tile_k in hl.tile(x.size(2)):
            for chunk in hl.tile(x.size(0), block_size=4):
                x_chunk = x[chunk, :, tile_k]
                live = chunk.end - chunk.begin
                for step in hl.tile(live, block_size=1):
                    acc = hl.dot(x_chunk[step.begin, :, :], w[tile_k, :], acc=acc)
        out[request, :, :] = acc
    return out


torch.manual_seed(0)
x = torch.randn(9, 8, 40, dtype=torch.float32)
w = torch.randn(40, 128, dtype=torch.float32)
resident_step_dot_k(x, w)
