# pallas-diff: source corpus entry 0059-test-resident-subview-index-through-control-flow: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_index_through_control_flow
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def named_index(x: torch.Tensor):
    out = torch.empty([1, 2, 128], dtype=torch.float32)
    for _request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=2):
                rows = local.index
                if live >= 2:
                    acc = acc + x_block[rows, :, :].float().sum(dim=0)
        out[0, :, :] = acc.float()
    return out


torch.manual_seed(0)
x = torch.randn(8, 2, 128, dtype=torch.float32)
named_index(x)
