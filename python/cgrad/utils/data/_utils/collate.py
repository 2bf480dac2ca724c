"""torch.utils.data._utils.collate's import path for default_collate and
default_convert (defined in cgrad.utils.data._collate)."""
from .._collate import default_collate, default_convert

__all__ = ["default_collate", "default_convert"]
