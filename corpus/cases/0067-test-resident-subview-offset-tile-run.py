# pallas-diff: source corpus entry 0067-test-resident-subview-offset-tile-run: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_offset_tile_run
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def ragged_tail(x: torch.Tensor):
    out = torch.empty([1, 2, 128], dtype=torch.float32)
    for _request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(3, block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=2):
                acc = acc + x_block[local.index + 0, :, :].float().sum(dim=0)
        out[0, :, :] = acc.float()
    return out


x = torch.tensor([1.0, 2.0, 4.0, 8.0]).reshape(4, 1, 1).expand(4, 2, 128).contiguous()
ragged_tail(x)
