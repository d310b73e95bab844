# pallas-diff: source corpus entry 0103-h39-dynamic-unroll-partial-outer-tile: issue 39: a dynamic unroll (`hl.tile(outer.begin, outer.end)` under `unroll`) reading the tensor itself inside a partial outer tile; our model's static unroll traced reads past the unpadded rows (generator knob absolute-loop-percent, campaign seed 93)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[1], pallas_loop_type="unroll"),
)
def kernel(x: torch.Tensor):
    out = torch.empty([4, 1, 128], dtype=torch.float32)
    for request in hl.grid(4):
        acc = hl.zeros([1, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=3):
            for inner in hl.tile(outer.begin, outer.end):
                acc = acc + x[inner, :, :].sum(dim=0)
        out[request, :, :] = acc
    return out


x = torch.ones(5, 1, 128, dtype=torch.float32)
kernel(x)
