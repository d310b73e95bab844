# pallas-diff: source corpus entry 0089-ragged-decode-tail-window: real-style (issue 41): ragged decode rows from a begin of 1, tiles of 4 over 9 live rows, a 2-row tail window under `if live >= 2`
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[2], pallas_loop_type="emit_pipeline"),
)
def ragged_decode_tail(x: torch.Tensor):
    out = torch.zeros([1, 2, 128], dtype=torch.float32)
    for request in hl.grid(1):
        acc = hl.zeros([2, 128], dtype=torch.float32)
        for seq in hl.tile(1, x.size(0), block_size=4):
            rows = x[seq, :, :]
            live = seq.end - seq.begin
            for pos in hl.tile(live):
                acc = acc + rows[pos.index, :, :].float().sum(dim=0)
            if live >= 2:
                acc = acc + rows[live - 2 : live, :, :].float().sum(dim=0) * 0.5
        out[request, :, :] = acc
    return out


torch.manual_seed(0)
x = torch.randn(10, 2, 128)
ragged_decode_tail(x)
