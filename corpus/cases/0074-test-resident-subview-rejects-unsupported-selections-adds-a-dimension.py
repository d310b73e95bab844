# pallas-diff: source corpus entry 0074-test-resident-subview-rejects-unsupported-selections-adds-a-dimension: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_rejects_unsupported_selections (adds a dim; upstream `.sum(dim=(0, 1))` written as `.sum(dim=0).sum(dim=0)`)
# pallas-diff: verdict rejected BackendUnsupported selector.adds-dimension
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def adds_a_dimension(x: torch.Tensor):
    out = torch.empty([1, 2, 128], dtype=torch.float32)
    for _request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[None, local.index, :, :].float().sum(dim=0).sum(dim=0)
        out[0, :, :] = acc.float()
    return out


x = torch.ones(8, 2, 128, dtype=torch.float32)
adds_a_dimension(x)
