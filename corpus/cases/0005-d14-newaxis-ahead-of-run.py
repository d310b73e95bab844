# pallas-diff: source corpus entry 0005-d14-newaxis-ahead-of-run: spec §4 D14 (mask recorded on the input axis with a `None` ahead; rows [1, 2, 4, 8], 3 live; 761bbc4c failed on store, correct 7.0)
# pallas-diff: verdict rejected BackendUnsupported selector.adds-dimension
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def newaxis_ahead(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(3, block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[None, local.index, :, :].float().sum(dim=0).sum(dim=0)
        out[request, :, :] = acc
    return out


x = torch.tensor([1.0, 2.0, 4.0, 8.0]).reshape(4, 1, 1).expand(4, 2, 128).contiguous()
newaxis_ahead(x)
