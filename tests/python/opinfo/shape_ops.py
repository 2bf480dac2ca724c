"""Op table: shape ops."""
from .core import OpInfo  # noqa: F401

OPS: list = []
