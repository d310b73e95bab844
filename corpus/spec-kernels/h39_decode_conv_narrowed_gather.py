# pallas-diff: source issue 39: the same convolution with one tap read straight out of the gathered float32 window (window[:, 0, :]): Helion 1.5.1 serves a narrowed read of a gathered value from a resident Ref that only an indirect DMA fills, and interpret mode admits none (measured)
# pallas-diff: verdict rejected BackendUnsupported indirect.narrowed-needs-dma
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[2, 128], pallas_loop_type="fori_loop"),
)
def decode_conv(x: torch.Tensor, conv_state: torch.Tensor, weight: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    batch, dim = x.size()
    out = torch.empty_like(x)
    for tb, td in hl.tile([batch, dim]):
        window = conv_state[idx[tb], :, td]
        w = weight[:, td].float()
        acc = x[tb, td].float() * w[3, :][None, :]
        acc = acc + window[:, 0, :].float() * w[0, :][None, :]
        acc = acc + window[:, 1, :].float() * w[1, :][None, :]
        out[tb, td] = acc.to(out.dtype)
    return out


torch.manual_seed(0)
x = torch.randint(-4, 5, (5, 256), dtype=torch.int32).to(torch.float32)
conv_state = torch.randint(-4, 5, (7, 3, 256), dtype=torch.int32).to(torch.float32)
weight = torch.randint(-4, 5, (4, 256), dtype=torch.int32).to(torch.float32)
idx = torch.randint(0, 7, (5,), dtype=torch.int32)
decode_conv(x, conv_state, weight, idx)
