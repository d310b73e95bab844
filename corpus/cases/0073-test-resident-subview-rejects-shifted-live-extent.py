# pallas-diff: source corpus entry 0073-test-resident-subview-rejects-shifted-live-extent: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_rejects_shifted_live_extent
# pallas-diff: verdict rejected BackendUnsupported selector.live-extent-mismatch
# pallas-diff: invalid index-out-of-range
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def shifted_extent(x: torch.Tensor):
    out = torch.empty([1, 2, 128], dtype=torch.float32)
    for _request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live + 4, block_size=1):
                acc = acc + x_block[local.begin, :, :].float()
        out[0, :, :] = acc.float()
    return out


x = torch.ones(8, 2, 128, dtype=torch.float32)
shifted_extent(x)
