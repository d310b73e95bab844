# pallas-diff: source issue 42, mutant survivors view_ops.py:1254/1282 (a resident view past the root, unmasked, consumed whole and narrowed again: Helion refuses with the view-consumed-elsewhere message, which the two mutants of the masked-boundary test replace with another; the corpus and the campaign only had the root form of this refusal)
# pallas-diff: verdict rejected BackendUnsupported chain.view-consumed-elsewhere
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def view_consumed_whole(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            part = x_block[0:2, :, :]
            acc = acc + part.float().sum(dim=0)
            for local in hl.tile(2, block_size=1):
                acc = acc + part[local.index, :, :].float().sum(dim=0)
        out[request, :, :] = acc
    return out


x = torch.tensor([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]).reshape(8, 1, 1).expand(8, 2, 128).contiguous()
view_consumed_whole(x)
