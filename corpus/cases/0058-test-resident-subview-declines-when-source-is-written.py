# pallas-diff: source corpus entry 0058-test-resident-subview-declines-when-source-is-written: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_declines_when_source_is_written
# pallas-diff: verdict rejected BackendUnsupported root.written-on-device
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def read_then_write(x: torch.Tensor, y: torch.Tensor):
    x_alias = x.view_as(x)
    out = torch.empty([1, 2, 128], dtype=torch.float32)
    for _request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            x_alias[outer, :, :] = y[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=1):
                acc = acc + x_block[local.begin, :, :].float()
        out[0, :, :] = acc.float()
    return out


x = torch.ones(8, 2, 128, dtype=torch.float32)
y = torch.zeros(8, 2, 128, dtype=torch.float32)
read_then_write(x, y)
