# pallas-diff: source issue 42, mutant survivor view_ops.py:633 (the alignment of a source load whose resident dim is its lane dim, not its first; the generator only tiles the first dim): a 2-D load narrowed on its lanes by an outer tile beginning at 64, which Helion refuses for direct VMEM addressing (dim_from_end 0 needs 128) and `value.ndim + physical_dim - 1` would accept
# pallas-diff: verdict rejected BackendUnsupported root.not-direct-addressing
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def lane_resident(x: torch.Tensor):
    out = torch.empty([1, 4, 128], dtype=torch.float32)
    for request in hl.grid(1):
        state = hl.zeros([4, 128], dtype=torch.float32)
        for outer in hl.tile(64, x.size(1), block_size=128):
            x_block = x[:, outer]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=128):
                state = state + x_block[:, local.index]
        out[request, :, :] = state
    return out


x = torch.arange(1280, dtype=torch.float32).reshape(4, 320)
lane_resident(x)
