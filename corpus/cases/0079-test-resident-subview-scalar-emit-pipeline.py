# pallas-diff: source corpus entry 0079-test-resident-subview-scalar-emit-pipeline: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_scalar, pallas_loop_type=emit_pipeline
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[4], pallas_loop_type="emit_pipeline"),
)
def running_sum(x: torch.Tensor, initial: torch.Tensor):
    out = torch.empty_like(x)
    for request in hl.grid(1):
        state = initial[request, :, :].float()
        for outer in hl.tile(x.size(0)):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=1):
                token = x_block[local.begin, :, :].float()
                state = state + token
                out[outer.begin + local.begin, :, :] = state.to(torch.bfloat16)
    return out


torch.manual_seed(0)
x = torch.randn(9, 2, 128, dtype=torch.bfloat16)
initial = torch.randn(1, 2, 128, dtype=torch.bfloat16)
running_sum(x, initial)
