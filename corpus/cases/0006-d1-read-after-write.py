# pallas-diff: source corpus entry 0006-d1-read-after-write: spec §4 D1 (read-after-write through the lazy Ref; ae968125 printed 0.0, correct 8.0: every read predates the overwrite)
# pallas-diff: verdict rejected BackendUnsupported root.written-on-device
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def read_after_write(x: torch.Tensor, y: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            x_block = x[outer, :, :]
            x[outer, :, :] = y[outer, :, :]
            live = outer.end - outer.begin
            for local in hl.tile(live, block_size=1):
                acc = acc + x_block[local.begin, :, :].float()
        out[request, :, :] = acc
    return out


x = torch.ones(8, 2, 128)
y = torch.zeros(8, 2, 128)
read_after_write(x, y)
