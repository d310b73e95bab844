# pallas-diff: source corpus entry 0112-h39-recurrent-dot-state-cache: issue 39: a recurrent state update with hl.dot as the generator's production shapes draw it (Helion's gdn_decode): per request the state gathered out of a cache by idx[request], tokens read out of each chunk's resident blocks by step.begin over the ragged chunk's live rows (5 tokens in chunks of 4), decayed and grown by hl.dot(k_t.transpose(0, 1), v_t), read by hl.dot(q_t, state)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def gdn(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, h0: torch.Tensor, idx: torch.Tensor):
    r = q.size(0)
    t = q.size(1)
    h = q.size(2)
    d = q.size(3)
    out = torch.zeros([r, h, v.size(3)], dtype=torch.float32)
    for request in hl.grid(r):
        state = h0[idx[request], :, :]
        acc = hl.zeros([h, v.size(3)], dtype=torch.float32)
        for chunk in hl.tile(t, block_size=4):
            q_chunk = q[request, chunk, :, :]
            k_chunk = k[request, chunk, :, :]
            v_chunk = v[request, chunk, :, :]
            g_chunk = g[request, chunk, :]
            live = chunk.end - chunk.begin
            for step in hl.tile(live, block_size=1):
                k_t = k_chunk[step.begin, :, :]
                v_t = v_chunk[step.begin, :, :]
                decay = g_chunk[step.begin, :]
                state = state * decay[:, None] + hl.dot(k_t.transpose(0, 1), v_t)
                acc = acc + hl.dot(q_chunk[step.begin, :, :], state)
        out[request, :, :] = acc
    return out


torch.manual_seed(0)
q = torch.randint(-2, 3, (2, 5, 8, 128), dtype=torch.int32).to(torch.float32)
k = torch.randint(-2, 3, (2, 5, 8, 128), dtype=torch.int32).to(torch.float32)
v = torch.randint(-2, 3, (2, 5, 8, 128), dtype=torch.int32).to(torch.float32)
g = torch.full([2, 5, 128], 0.5)
h0 = torch.randint(-2, 3, (3, 128, 128), dtype=torch.int32).to(torch.float32)
idx = torch.tensor([2, 0], dtype=torch.int32)
gdn(q, k, v, g, h0, idx)
