# pallas-diff: source corpus entry 0088-gdn-recurrent-state-update: real-style (issue 41): a gated-delta-net-like recurrent state update over 9 time steps in chunks of 4 (a ragged last chunk), elementwise products and sums in place of hl.dot (outside the language)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[2], pallas_loop_type="fori_loop"),
)
def gdn_recurrent_state(k: torch.Tensor, v: torch.Tensor, g: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        state = hl.zeros([2, 128], dtype=torch.float32)
        for chunk in hl.tile(k.size(0), block_size=4):
            k_chunk = k[chunk, :, :]
            v_chunk = v[chunk, :, :]
            g_chunk = g[chunk, :, :]
            live = chunk.end - chunk.begin
            for step in hl.tile(live):
                decay = g_chunk[step.index, :, :].float().sum(dim=0)
                update = (k_chunk[step.index, :, :].float() * v_chunk[step.index, :, :].float()).sum(dim=0)
                state = state * 0.5 + decay * 0.25 + update
        out[request, :, :] = state
    return out


torch.manual_seed(0)
k = torch.randn(9, 2, 128)
v = torch.randn(9, 2, 128)
g = torch.rand(9, 2, 128)
gdn_recurrent_state(k, v, g)
