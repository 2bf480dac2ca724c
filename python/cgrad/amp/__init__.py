"""Automatic mixed precision (torch.amp): autocast and GradScaler."""
from .autocast_mode import autocast, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "is_autocast_available"]
