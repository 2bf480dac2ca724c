"""cgrad.datasets: ready-made datasets read from local files (no network access)."""
from .fashion_mnist import FashionMNIST, read_idx

__all__ = ["FashionMNIST", "read_idx"]
