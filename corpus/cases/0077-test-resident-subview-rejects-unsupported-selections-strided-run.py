# pallas-diff: source corpus entry 0077-test-resident-subview-rejects-unsupported-selections-strided-run: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_rejects_unsupported_selections (strided run)
# pallas-diff: verdict rejected BackendUnsupported selector.tail-outside-conditional
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def strided_run(x: torch.Tensor):
    out = torch.empty([1, 2, 128], dtype=torch.float32)
    for _request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            acc = acc + x_block[hl.arange(0, 4, 2), :, :].float().sum(dim=0)
        out[0, :, :] = acc.float()
    return out


x = torch.ones(8, 2, 128, dtype=torch.float32)
strided_run(x)
