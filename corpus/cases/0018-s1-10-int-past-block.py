# pallas-diff: source corpus entry 0018-s1-10-int-past-block: spec §1.10 row `blk[7]` on a 4-row block
# pallas-diff: verdict rejected BackendUnsupported selector.static-past-extent
# pallas-diff: invalid index-out-of-range
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def int_past_block(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            acc = acc + x_block[7, :, :].float()
        out[request, :, :] = acc
    return out


x = torch.tensor([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]).reshape(8, 1, 1).expand(8, 2, 128).contiguous()
int_past_block(x)
