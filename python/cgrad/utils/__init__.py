"""cgrad.utils: utilities outside the tensor core (data loading: cgrad.utils.data)."""
from . import data

__all__ = ["data"]
