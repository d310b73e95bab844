# pallas-diff: source corpus entry 0087-causal-conv1d-update-one-request: real-style (issue 41): the causal conv1d update with one request (a one-row batch in a block of 2)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def causal_conv1d_update_one_row(x: torch.Tensor, conv_state: torch.Tensor, weight: torch.Tensor):
    out = torch.zeros([x.size(0), 2, 128], dtype=torch.float32)
    for tb in hl.tile(x.size(0), block_size=2):
        window = conv_state[tb, :, :]
        acc = x[tb, :, :].float()
        w = weight[0:4, :, :]
        acc = acc + window[:, 1:3, :].float() * w[2:3, :, :].float()
        acc = acc + window[:, 0:2, :].float() * w[1:2, :, :].float()
        out[tb, :, :] = acc
    return out


torch.manual_seed(0)
x = torch.randn(1, 2, 128)
conv_state = torch.randn(1, 4, 128)
weight = torch.randn(4, 2, 128)
causal_conv1d_update_one_row(x, conv_state, weight)
