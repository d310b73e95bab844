# pallas-diff: source corpus entry 0096-m42-emit-pipeline-stores-two-outputs: issue 42, mutant survivors tracing_ops.py:4012 (an emit_pipeline inner loop that stores two outputs and carries no state: the pipeline's out_specs are joined into its call, which both mutants of that join break; the corpus's and the campaign's emit_pipeline loops accumulated and stored after the loop)
# pallas-diff: verdict lowered
import torch
import helion
import helion.language as hl


@helion.kernel(
    backend="pallas",
    static_shapes=True,
    config=helion.Config(block_sizes=[8, 128], pallas_loop_type="emit_pipeline"),
)
def kernel(x: torch.Tensor, y: torch.Tensor):
    out = torch.zeros_like(x)
    out2 = torch.zeros_like(x)
    for tm in hl.tile(x.size(0)):
        for tn in hl.tile(x.size(1)):
            out[tm, tn] = x[tm, tn] * 2.0
            out2[tm, tn] = y[tm, tn] + 1.0
    return out, out2


torch.manual_seed(0)
x = torch.randn(16, 256)
y = torch.randn(16, 256)
kernel(x, y)
