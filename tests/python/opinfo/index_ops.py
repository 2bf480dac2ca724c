"""Op table: index ops."""
from .core import OpInfo  # noqa: F401

OPS: list = []
