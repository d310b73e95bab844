# pallas-diff: source corpus entry 0060-test-resident-subview-keeps-dma-prefetch: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_keeps_dma_prefetch
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[4], pallas_loop_type="fori_loop", pallas_load_buffer_count=[2, 1, 1, 1, 1]),
)
def short_conv(x: torch.Tensor, weight: torch.Tensor, initial: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor):
    out = torch.empty_like(x)
    final = torch.empty_like(initial)
    for request in hl.grid(1):
        start = hl.load(starts, [request])
        end = hl.load(ends, [request])
        state_0 = initial[request, 0, :, :].float()
        state_1 = initial[request, 1, :, :].float()
        state_2 = initial[request, 2, :, :].float()
        weight_0 = weight[0, :, :].float()
        weight_1 = weight[1, :, :].float()
        weight_2 = weight[2, :, :].float()
        weight_3 = weight[3, :, :].float()
        for outer in hl.tile(start, end):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=1):
                token = x_block[local.begin, :, :].float()
                acc = state_0 * weight_0 + state_1 * weight_1
                acc += state_2 * weight_2 + token * weight_3
                out[outer.begin + local.begin, :, :] = acc.to(torch.bfloat16)
                state_0 = state_1
                state_1 = state_2
                state_2 = token
        final[request, 0, :, :] = state_0.to(torch.bfloat16)
        final[request, 1, :, :] = state_1.to(torch.bfloat16)
        final[request, 2, :, :] = state_2.to(torch.bfloat16)
    return out, final


torch.manual_seed(0)
x = torch.randn(9, 2, 128, dtype=torch.bfloat16)
weight = torch.randn(4, 2, 128, dtype=torch.bfloat16)
initial = torch.randn(1, 3, 2, 128, dtype=torch.bfloat16)
starts = torch.tensor([0], dtype=torch.int32)
ends = torch.tensor([9], dtype=torch.int32)
short_conv(x, weight, initial, starts, ends)
