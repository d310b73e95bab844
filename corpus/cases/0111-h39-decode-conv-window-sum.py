# pallas-diff: source corpus entry 0111-h39-decode-conv-window-sum: issue 39: a decode-step causal convolution over a state cache read through an index tensor, as the generator's production shapes draw it: the window gathered by one-hot (conv_state[idx[tb], :, td]) and summed against a static slice of the resident weight block (w[0:3, :]), the current token against a constant-index read of it (w[3, :]); 5 requests under a block of 2 raised to 8 (the sublane alignment), a partial tile
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[2, 128], pallas_loop_type="fori_loop"),
)
def decode_conv(x: torch.Tensor, conv_state: torch.Tensor, weight: torch.Tensor, idx: torch.Tensor):
    batch = x.size(0)
    dim = x.size(1)
    out = torch.empty_like(x)
    for tb, td in hl.tile([batch, dim]):
        state = conv_state[idx[tb], :, td]
        w = weight[:, td]
        acc = (state.float() * w[0:3, :].float()[None, :, :]).sum(dim=1)
        acc = acc + x[tb, td].float() * w[3, :].float()[None, :]
        out[tb, td] = acc.float()
    return out


torch.manual_seed(0)
x = torch.randint(-4, 5, (5, 256), dtype=torch.int32).to(torch.float32)
conv_state = torch.randint(-4, 5, (7, 3, 256), dtype=torch.int32).to(torch.float32)
weight = torch.randint(-4, 5, (4, 256), dtype=torch.int32).to(torch.float32)
idx = torch.randint(0, 7, (5,), dtype=torch.int32)
decode_conv(x, conv_state, weight, idx)
