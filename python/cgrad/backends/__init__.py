"""cgrad.backends: settings and queries of the backends cgrad runs on (as
torch.backends). `cpu.get_cpu_capability()` names the CPU level in use; cuda,
cudnn and mps are not built in and answer as PyTorch's CPU build does; mkldnn
and openmp report that cgrad uses neither."""
from . import cpu, cuda, cudnn, mkldnn, mps, openmp

__all__ = ["cpu", "cuda", "cudnn", "mkldnn", "mps", "openmp"]
