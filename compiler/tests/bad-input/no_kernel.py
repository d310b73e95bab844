# bad input: no @helion.kernel function
import torch
import helion
import helion.language as hl

x = torch.ones(8, 2, 128)
