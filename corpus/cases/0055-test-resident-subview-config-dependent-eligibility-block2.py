# pallas-diff: source corpus entry 0055-test-resident-subview-config-dependent-eligibility-block2: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_config_dependent_eligibility, block_sizes=[2]
# pallas-diff: verdict rejected BackendUnsupported selector.wider-than-block
# pallas-diff: invalid index-out-of-range
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[2], pallas_loop_type="fori_loop"),
)
def divisible(x: torch.Tensor):
    out = torch.empty([1, 2, 128], dtype=torch.float32)
    for _request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0)):
            x_block = x[outer, :, :]
            for local in hl.tile(4, block_size=4):
                acc = acc + x_block[local.index, :, :].float().sum(dim=0)
        out[0, :, :] = acc.float()
    return out


x = torch.ones(8, 2, 128, dtype=torch.float32)
divisible(x)
