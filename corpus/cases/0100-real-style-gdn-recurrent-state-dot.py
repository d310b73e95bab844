# pallas-diff: source corpus entry 0100-real-style-gdn-recurrent-state-dot: real-style (issue 39): a gated-delta-net-like recurrent state update with hl.dot: a sigmoid decay of the state and the outer product k^T v of each step read from resident chunk blocks (k_chunk[step.begin, :, :]), the output hl.dot(q, state) summed; 9 steps in chunks of 4 (a ragged last chunk)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def gdn_recurrent_state_dot(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor):
    out = torch.zeros([1, 8, 128], dtype=torch.float32)
    for request in hl.grid(1):
        state = hl.zeros([128, 128], dtype=torch.float32)
        acc = hl.zeros([8, 128], dtype=torch.float32)
        for chunk in hl.tile(k.size(0), block_size=4):
            q_chunk = q[chunk, :, :]
            k_chunk = k[chunk, :, :]
            v_chunk = v[chunk, :, :]
            g_chunk = g[chunk, :]
            live = chunk.end - chunk.begin
            for step in hl.tile(live, block_size=1):
                k_t = k_chunk[step.begin, :, :]
                v_t = v_chunk[step.begin, :, :]
                decay = torch.sigmoid(g_chunk[step.begin, :])
                state = state * decay[:, None] + hl.dot(k_t.transpose(0, 1), v_t)
                acc = acc + hl.dot(q_chunk[step.begin, :, :], state)
        out[request, :, :] = acc
    return out


torch.manual_seed(0)
q = torch.rand(9, 8, 128)
k = torch.rand(9, 8, 128)
v = torch.randn(9, 8, 128)
g = torch.randn(9, 128)
gdn_recurrent_state_dot(q, k, v, g)
