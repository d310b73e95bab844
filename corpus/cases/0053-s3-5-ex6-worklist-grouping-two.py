# pallas-diff: source corpus entry 0053-s3-5-ex6-worklist-grouping-two: spec §3.5 example 6 and §5.2 test_pallas_resident_ref_jax.py::test_flatten_worklist_grouping_two_variants (real TPU only upstream)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[4], pallas_loop_type="fori_loop", pallas_worklist_grouping=2),
)
def grouped_worklist(q: torch.Tensor, offsets: torch.Tensor):
    out = torch.empty_like(q)
    for sequence in hl.grid(offsets.size(0) - 1):
        begin = offsets[sequence]
        end = offsets[sequence + 1]
        for tile_q in hl.tile(begin, end):
            q_block = q[tile_q, :, :]
            live = tile_q.end - tile_q.begin
            seed = hl.zeros([1, q.size(1), q.size(2)], dtype=torch.float32)
            if live >= 1:
                seed = q_block[live - 1 : live, :, :].float()
            state = hl.zeros([tile_q, q.size(1), q.size(2)], dtype=torch.float32)
            state += seed
            out[tile_q, :, :] = state.float()
    return out


q = torch.arange(6144, dtype=torch.float32).reshape(24, 2, 128)
offsets = torch.tensor([0, 4, 12, 24], dtype=torch.int32)
grouped_worklist(q, offsets)
