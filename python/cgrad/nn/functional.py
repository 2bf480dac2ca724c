"""cgrad.nn.functional: the functional forms of the layers, with torch.nn.functional's
names, arguments and defaults. Each function parses PyTorch's argument forms
(ints or tuples, 'same' / 'valid' padding, reduction strings) and calls one
engine op bound in cgrad._C."""
from __future__ import annotations

# ---------------------------------------------------------------- linear layers
from .. import _C as _C_linear

# linear(input, weight, bias=None) -> input @ weight^T + bias: the engine's
# one-GEMM op bound directly, so a call runs no Python frame.
linear = _C_linear._linear
# bilinear(input1, input2, weight, bias=None) -> x1^T A x2 + b (torch.bilinear).
bilinear = _C_linear.bilinear

# ---------------------------------------------------------------- convolution, pooling, normalization, dropout, embedding

# ---------------------------------------------------------------- activations, losses, distances, padding, resampling, attention
