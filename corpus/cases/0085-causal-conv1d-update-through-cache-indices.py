# pallas-diff: source corpus entry 0085-causal-conv1d-update-through-cache-indices: real-style (issue 41): a decode-time causal conv1d reading its state cache through an index tensor (cache_indices[tb]); the model refuses the narrowed read of the gathered window (indirect.narrowed-needs-dma); Helion 1.5.1 refuses it earlier, while tracing (ControlFlowTensorMismatch: the tap tile of block_size=1 is a symbolic size to Helion, 1 to our model), a model gap
# pallas-diff: verdict rejected BackendUnsupported indirect.narrowed-needs-dma
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def causal_conv1d_update(x: torch.Tensor, conv_state: torch.Tensor, weight: torch.Tensor, cache_indices: torch.Tensor):
    out = torch.zeros([x.size(0), 1, 128], dtype=torch.float32)
    for tb in hl.tile(x.size(0), block_size=1):
        slot = cache_indices[tb]
        window = conv_state[slot, :, :]
        taps = weight[:, :, :]
        acc = x[tb, :, :].float() * taps[3:4, :, :].float()
        for tap in hl.tile(3, block_size=1):
            acc = acc + window[:, tap.index, :].float() * taps[tap.index, :, :].float()
        out[tb, :, :] = acc
    return out


torch.manual_seed(0)
x = torch.randn(5, 1, 128)
conv_state = torch.randn(8, 3, 128)
weight = torch.randn(4, 1, 128)
cache_indices = torch.tensor([6, 0, 3, 7, 1], dtype=torch.int32)
causal_conv1d_update(x, conv_state, weight, cache_indices)
