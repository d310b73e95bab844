"""An example in the style of Helion's examples (written here for the importer's tests)."""

from __future__ import annotations

import torch

import helion
from helion._testing import DEVICE
from helion._testing import run_example
import helion.language as hl


@helion.kernel()
def scale_rows(x: torch.Tensor, k: int) -> torch.Tensor:
    m, n = x.size()
    out = torch.empty([m, n], dtype=x.dtype, device=x.device)
    for tile in hl.tile(m):
        out[tile, :] = x[tile, :] * k
    return out


@helion.kernel(config=helion.Config(block_sizes=[], pallas_loop_type="unroll"))
def copy_fixed(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0), block_size=8):
        out[tile, :] = x[tile, :]
    return out


def check(m: int, n: int) -> None:
    x = torch.randn([m, n], device=DEVICE, dtype=torch.bfloat16)
    run_example(lambda a: scale_rows(a, 3), lambda a: a * 3, (x,))
    run_example(copy_fixed, lambda a: a.clone(), (x,))
    scale_rows(x, 3)


def main() -> None:
    check(24, 256)


if __name__ == "__main__":
    main()
