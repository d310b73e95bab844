# pallas-diff: source corpus entry 0062-test-resident-subview-materializes-before-incompatible-reshape: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_materializes_before_incompatible_reshape
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def reshape_fallback(x: torch.Tensor, initial: torch.Tensor):
    out = torch.empty_like(initial)
    for request in hl.grid(1):
        state = initial[request, :, :].float()
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=1):
                token = x_block[local.begin, :, :]
                state += token.reshape(2, 2, 64).float().sum(dim=0)
        out[request, :, :] = state.to(torch.bfloat16)
    return out


torch.manual_seed(0)
x = torch.randn(8, 2, 128, dtype=torch.bfloat16)
initial = torch.zeros(1, 2, 64, dtype=torch.bfloat16)
reshape_fallback(x, initial)
