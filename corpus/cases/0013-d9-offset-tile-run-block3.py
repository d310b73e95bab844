# pallas-diff: source corpus entry 0013-d9-offset-tile-run-block3: spec §4 D9 (`tile.index + 0` dropped the tail mask; 69b44459 gave NaN, correct 3.0). Verdict derived from §2.7 rule 6: a 2-row run does not divide the 3-row block
# pallas-diff: verdict rejected BackendUnsupported selector.width-not-dividing
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def offset_run(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(3, block_size=3):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[local.index + 0, :, :].float().sum(dim=0)
        out[request, :, :] = acc
    return out


x = torch.ones(8, 2, 128)
offset_run(x)
