"""cgrad.nn.functional: the functional forms of the layers, with torch.nn.functional's
names, arguments and defaults. Each function parses PyTorch's argument forms
(ints or tuples, 'same' / 'valid' padding, reduction strings) and calls one
engine op bound in cgrad._C."""
from __future__ import annotations

# ---------------------------------------------------------------- linear layers

# ---------------------------------------------------------------- convolution, pooling, normalization, dropout, embedding

# ---------------------------------------------------------------- activations, losses, distances, padding, resampling, attention
