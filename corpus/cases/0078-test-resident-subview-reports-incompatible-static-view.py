# pallas-diff: source corpus entry 0078-test-resident-subview-reports-incompatible-static-view: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_reports_incompatible_static_view
# pallas-diff: verdict rejected BackendUnsupported view.minor-dims
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def reshape_then_narrow(x: torch.Tensor):
    out = torch.empty([1, 4, 64], dtype=torch.float32)
    for _request in hl.grid(1):
        acc = hl.zeros([4, 64], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            reshaped = x_block.reshape(-1, 4, 64)
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=1):
                acc += reshaped[local.begin, :, :].float()
        out[0, :, :] = acc.float()
    return out


x = torch.ones(8, 2, 128, dtype=torch.float32)
reshape_then_narrow(x)
