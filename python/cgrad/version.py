"""cgrad.version (as torch.version): what this build of cgrad is, in the
fields torch.version has on PyTorch's CPU build. __version__ is cgrad's own
release; torch_api is the PyTorch release whose API cgrad follows, which is
what torch.__version__ and torch.version.__version__ report when cgrad stands
in for torch (cgrad.compat). There is no GPU toolkit: cuda, hip, rocm and xpu
are None."""
from __future__ import annotations

from typing import Optional

from . import _build_config
from .torch_version import TorchVersion

__all__ = ["__version__", "torch_api", "git_version", "debug", "cuda", "hip", "rocm", "xpu"]

__version__: str = "0.1.0"
torch_api: TorchVersion = TorchVersion("2.13.0")
# the commit the build was configured from ("Unknown" outside a git checkout)
git_version: str = _build_config.GIT_VERSION
debug: bool = _build_config.DEBUG
cuda: Optional[str] = None
hip: Optional[str] = None
rocm: Optional[str] = None
xpu: Optional[str] = None
