# pallas-diff: source corpus entry 0066-test-resident-subview-of-untiled-dimension: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_of_untiled_dimension
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def select_head(x: torch.Tensor):
    out = torch.empty([1, 2, 128], dtype=torch.bfloat16)
    for _request in hl.grid(1):
        state = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :, :]
            state += x_block[:, 0, :, :].float().sum(dim=0)
        out[0, :, :] = state.to(torch.bfloat16)
    return out


x = torch.ones(8, 2, 2, 128, dtype=torch.bfloat16)
select_head(x)
