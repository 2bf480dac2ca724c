"""cgrad.nn: neural-network layers (modules), their functional forms
(cgrad.nn.functional), parameter initialisation (cgrad.nn.init) and helpers
(cgrad.nn.utils), mirroring torch.nn."""
from . import functional  # noqa: F401
