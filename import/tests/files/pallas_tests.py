"""A test module in the style of Helion's Pallas tests (written here for the importer's tests)."""

import unittest

import torch

import helion
from helion._testing import DEVICE
from helion._testing import code_and_output
import helion.language as hl

ROWS = 9


@helion.kernel(backend="pallas", static_shapes=True)
def row_sums(x: torch.Tensor) -> torch.Tensor:
    """Sums each block of rows."""
    out = torch.zeros([1, x.size(1)], dtype=torch.float32, device=x.device)
    for g in hl.grid(1):
        acc = hl.zeros([x.size(1)], dtype=torch.float32)
        for tile in hl.tile(x.size(0)):
            acc = acc + x[tile, :].float().sum(dim=0)
        out[g, :] = acc
    return out


@helion.kernel(backend="pallas", static_shapes=True)
def uses_erf(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0), block_size=8):
        out[tile, :] = torch.erf(x[tile, :])
    return out


@helion.kernel(backend="pallas", static_shapes=True)
def never_called(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0), block_size=8):
        out[tile, :] = x[tile, :]
    return out


class TestPallas(unittest.TestCase):
    def test_row_sums(self):
        x = torch.randn(ROWS, 128, device=DEVICE, dtype=torch.float32)
        _, result = code_and_output(row_sums, (x,), block_sizes=[4], pallas_loop_type="fori_loop")
        torch.testing.assert_close(result, x.sum(0, keepdim=True))

    def test_window(self):
        @helion.kernel(backend="pallas", static_shapes=True)
        def window(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
            out = torch.zeros([4, 128], dtype=x.dtype, device=x.device)
            for tile in hl.tile(4, block_size=2):
                out[tile, :] = x[tile, :]
            return out

        m, n = 16, 128
        x = torch.randn([m, n], device=DEVICE).to(torch.bfloat16)
        idx = torch.randint(0, m, (4,), device=DEVICE, dtype=torch.int64)
        window(x, idx)

    def test_uses_erf(self):
        x = torch.randn(16, 128, device=DEVICE)
        code_and_output(uses_erf, (x,))

    def test_fixed_blocks_config_without_block_sizes(self):
        x = torch.randn(16, 128, device=DEVICE)
        code_and_output(never_called_by_name, (x,), pallas_loop_type="unroll")


@helion.kernel(backend="pallas", static_shapes=True)
def never_called_by_name(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0), block_size=8):
        out[tile, :] = x[tile, :] + x[tile, :]
    return out
