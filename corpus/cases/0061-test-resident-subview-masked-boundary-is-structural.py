# pallas-diff: source corpus entry 0061-test-resident-subview-masked-boundary-is-structural: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_masked_boundary_is_structural
# pallas-diff: verdict rejected BackendUnsupported chain.masked-feeds-narrowing
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def masked_then_narrow(x: torch.Tensor, sink: torch.Tensor):
    out = torch.empty([1, 2, 128], dtype=torch.float32)
    for _request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            for local in hl.tile(4, block_size=2):
                rows = x_block[local.index, :, :]
                incompatible = rows.reshape(-1, 4, 64)
                acc += rows[0, :, :].float()
                sink[:, :, :] = incompatible
        out[0, :, :] = acc.float()
    return out


x = torch.ones(8, 2, 128, dtype=torch.float32)
sink = torch.empty(2, 4, 64, dtype=torch.float32)
masked_then_narrow(x, sink)
