# pallas-diff: source issue 42, mutant survivor backend.py:616 (a min reduction of a narrowed resident read: Helion lowers jnp.min only while 'min' is among the reductions its Pallas backend names, and no case of the corpus or the campaign reduced with min)
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def block_min(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            acc = acc + torch.amin(x_block[1:3, :, :].float(), dim=0)
        out[request, :, :] = acc
    return out


x = torch.tensor([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]).reshape(8, 1, 1).expand(8, 2, 128).contiguous()
block_min(x)
