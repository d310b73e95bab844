# pallas-diff: source corpus entry 0101-real-style-causal-conv1d-state-update: real-style (issue 39): a decode-step causal conv1d that updates its state cache in place and returns nothing: each request tile reads its state window as a resident block, narrows it to the taps (window[:, 0:1, :], ...), shifts it (conv_state[tb, 0:2, :] = window[:, 1:3, :]) and appends the token, and writes the output over x
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def causal_conv1d_state_update(x: torch.Tensor, conv_state: torch.Tensor, weight: torch.Tensor):
    for tb in hl.tile(x.size(0), block_size=2):
        window = conv_state[tb, :, :]
        taps = weight[:, :, :]
        token = x[tb, :, :]
        acc = token.float() * taps[3:4, :, :].float()
        acc = acc + window[:, 0:1, :].float() * taps[0:1, :, :].float()
        acc = acc + window[:, 1:2, :].float() * taps[1:2, :, :].float()
        acc = acc + window[:, 2:3, :].float() * taps[2:3, :, :].float()
        conv_state[tb, 0:2, :] = window[:, 1:3, :]
        conv_state[tb, 2:3, :] = token
        x[tb, :, :] = acc.float()


torch.manual_seed(0)
x = torch.randn(4, 1, 128)
conv_state = torch.randn(4, 3, 128)
weight = torch.randn(4, 1, 128)
causal_conv1d_state_update(x, conv_state, weight)
