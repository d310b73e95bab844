# Helion 1.5.1 fails inside its own tracing: helion-pallas and helion-tpu-lower give stage trace,
# InternalError, first message line "AssertionError: invalid subscript" (cause AssertionError),
# line 21 (the partial-index `hl.store`), refusal false. helion-eager runs it: for x float32
# [8, 2, 128] with row r = 2^r it returns [1, 2, 128] all 255.0.
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[], pallas_loop_type="fori_loop"),
)
def partial_store(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for outer in hl.tile(x.size(0), block_size=4):
            acc = acc + x[outer, :, :].sum(dim=0)
        hl.store(out, [request], acc)
    return out
