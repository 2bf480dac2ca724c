"""cgrad.backends: settings and queries of the backends cgrad runs on (as
torch.backends). `cpu.get_cpu_capability()` names the CPU level in use."""
from . import cpu

__all__ = ["cpu"]
