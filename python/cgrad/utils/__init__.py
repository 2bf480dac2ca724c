"""cgrad.utils: utilities outside the tensor core (data loading: cgrad.utils.data; the
safetensors format: cgrad.utils.safetensors)."""
from . import data, safetensors

__all__ = ["data", "safetensors"]
