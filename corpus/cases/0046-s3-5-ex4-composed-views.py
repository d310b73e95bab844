# pallas-diff: source corpus entry 0046-s3-5-ex4-composed-views: spec §3.5 example 4 (composed views with hidden squeezed dims); chunk 0 holds 1.0, chunk 1 holds 2.0
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def composed(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :, :]
            grouped = x_block[:, None, :, :, :]
            for local in hl.tile(4, block_size=1):
                tok = grouped[local.begin, :, :, :, :]
                flat = tok.view(2, 2, 128)
                part = flat.unsqueeze(0)[:, 1:2, :, :]
                acc = acc + part.float().sum(dim=0).sum(dim=0)
        out[request, :, :] = acc
    return out


x = torch.tensor([1.0, 2.0]).reshape(1, 2, 1, 1).expand(8, 2, 2, 128).contiguous()
composed(x)
