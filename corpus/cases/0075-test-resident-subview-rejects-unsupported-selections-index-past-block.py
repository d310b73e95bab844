# pallas-diff: source corpus entry 0075-test-resident-subview-rejects-unsupported-selections-index-past-block: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_rejects_unsupported_selections (index past block)
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
def past_the_end(x: torch.Tensor):
    out = torch.empty([1, 2, 128], dtype=torch.float32)
    for _request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            acc = acc + x[outer, :, :][7, :, :].float()
        out[0, :, :] = acc.float()
    return out


x = torch.ones(8, 2, 128, dtype=torch.float32)
past_the_end(x)
