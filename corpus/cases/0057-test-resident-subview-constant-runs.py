# pallas-diff: source corpus entry 0057-test-resident-subview-constant-runs: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_constant_runs (also spec §3.5 example 5)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def constants(x: torch.Tensor):
    out = torch.empty([1, 2, 128], dtype=torch.float32)
    for _request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            acc = acc + x_block[1, :, :].float()
            acc = acc + x_block[1:3, :, :].float().sum(dim=0)
        out[0, :, :] = acc.float()
    return out


x = torch.tensor([1.0, 2.0, 4.0, 8.0]).reshape(4, 1, 1).expand(4, 2, 128).contiguous()
constants(x)
