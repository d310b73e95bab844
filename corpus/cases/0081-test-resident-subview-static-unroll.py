# pallas-diff: source corpus entry 0081-test-resident-subview-static-unroll: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_static_unroll
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="unroll"),
)
def static_unroll(x: torch.Tensor, initial: torch.Tensor):
    out = torch.empty_like(initial)
    for _request in hl.grid(1):
        state = initial[0, :, :].float()
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            for local in hl.tile(4, block_size=1):
                state += x_block[local.begin, :, :].float()
        out[0, :, :] = state.to(torch.bfloat16)
    return out


torch.manual_seed(0)
x = torch.randn(8, 2, 128, dtype=torch.bfloat16)
initial = torch.randn(1, 2, 128, dtype=torch.bfloat16)
static_unroll(x, initial)
