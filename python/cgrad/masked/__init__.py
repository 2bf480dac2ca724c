"""cgrad.masked: torch.masked's reductions and normalizations over the
elements a boolean mask keeps (sum, prod, amax, amin, argmax, argmin, mean,
median, norm, var, std, logsumexp, cumsum, cumprod, softmax, log_softmax,
softmin, normalize, logaddexp), composed from cgrad ops."""
from __future__ import annotations

from typing import List

from ._ops import (amax, amin, argmax, argmin, cumprod, cumsum, log_softmax, logaddexp, logsumexp, mean, median,
                   norm, normalize, prod, softmax, softmin, std, sum, var)

__all__: List[str] = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp",
                      "logsumexp", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum",
                      "var"]
