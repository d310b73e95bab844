# pallas-diff: source corpus entry 0064-test-resident-subview-names-unsupported-transform: spec §5.1 upstream test/test_pallas.py::TestPallas::test_resident_subview_names_unsupported_transform
# pallas-diff: verdict rejected BackendUnsupported view.not-address-preserving
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def permute_then_narrow(x: torch.Tensor):
    out = torch.empty([1, 2, 128], dtype=torch.float32)
    for _request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            transposed = x_block.permute(1, 0, 2)
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=1):
                acc += transposed[:, local.begin, :].float()
        out[0, :, :] = acc.float()
    return out


x = torch.ones(8, 2, 128, dtype=torch.float32)
permute_then_narrow(x)
