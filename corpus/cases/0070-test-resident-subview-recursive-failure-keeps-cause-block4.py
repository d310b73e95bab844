# pallas-diff: source corpus entry 0070-test-resident-subview-recursive-failure-keeps-cause-block4: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_recursive_failure_keeps_cause, block_sizes=[4]
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[4], pallas_loop_type="fori_loop"),
)
def nested_narrowing(x: torch.Tensor):
    out = torch.empty([1, 128], dtype=torch.float32)
    for _request in hl.grid(1):
        acc = hl.zeros([128], dtype=torch.float32)
        for outer in hl.tile(x.size(0)):
            x_block = x[outer, :, :, :]
            group = x_block[:, 0, :, :]
            head = group[:, 0, :]
            acc += head.float().sum(dim=0)
        out[0, :] = acc.float()
    return out


torch.manual_seed(0)
x = torch.randn(6, 2, 2, 128, dtype=torch.float32)
nested_narrowing(x)
