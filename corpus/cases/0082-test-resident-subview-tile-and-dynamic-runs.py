# pallas-diff: source corpus entry 0082-test-resident-subview-tile-and-dynamic-runs: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_tile_and_dynamic_runs
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[4], pallas_loop_type="fori_loop"),
)
def windows(x: torch.Tensor, initial: torch.Tensor):
    out = torch.empty_like(initial)
    for request in hl.grid(1):
        state = initial[request, :, :].float()
        for outer in hl.tile(x.size(0)):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=2):
                state = state + x_block[local.index, :, :].float().sum(dim=0)
            if live >= 3:
                state = state + x_block[live - 3 : live, :, :].float().sum(dim=0)
        out[request, :, :] = state.to(torch.bfloat16)
    return out


torch.manual_seed(0)
x = torch.randn(9, 2, 128, dtype=torch.bfloat16)
initial = torch.randn(1, 2, 128, dtype=torch.bfloat16)
windows(x, initial)
