"""cgrad.nn.parallel (as torch.nn.parallel on PyTorch's CPU build):
DataParallel, which with no GPUs runs the wrapped module directly, the
functional data_parallel, and DistributedDataParallel, whose construction
needs a process group that cgrad cannot make yet (no distributed backend)."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
