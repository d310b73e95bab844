# pallas-diff: source corpus entry 0022-s1-10-newaxis-with-tile-index: spec §1.10 row `blk[None, t.index]`
# pallas-diff: verdict rejected BackendUnsupported selector.adds-dimension
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def newaxis_with_tile_index(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[None, local.index, :, :].float().sum(dim=0).sum(dim=0)
        out[request, :, :] = acc
    return out


x = torch.tensor([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]).reshape(8, 1, 1).expand(8, 2, 128).contiguous()
newaxis_with_tile_index(x)
