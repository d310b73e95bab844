# pallas-diff: source corpus entry 0071-test-resident-subview-rejects-negative-bounds-index: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_rejects_negative_bounds (index)
# pallas-diff: verdict rejected InvalidIndexingType trace.negative-index
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def negative_index(x: torch.Tensor):
    out = torch.empty([1, 2, 128], dtype=torch.float32)
    for _request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            acc = acc + x[outer, :, :][-1, :, :].float()
        out[0, :, :] = acc.float()
    return out


x = torch.ones(8, 2, 128, dtype=torch.float32)
negative_index(x)
